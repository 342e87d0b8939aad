"""Rules of the 'info' family (see shared/diagnoses.md): the deprecated `python -m
sglang.launch_server` entrypoint warning, and the running-request cap SGLang sets on its own. One
module per rule; importing the package registers them."""

from __future__ import annotations

from logparse.rules.info import entrypoint, max_running  # noqa: F401
