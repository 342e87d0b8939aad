"""Rules of the 'server' family (see shared/diagnoses.md): ports, model loading, the warmup request,
argument validation, the health check, and the fallback for scheduler/tokenizer exceptions that no
specific rule explains. One module per rule; importing the package registers them."""

from __future__ import annotations

from logparse.rules.server import args, crash, health, launcher, model_load, port, warmup  # noqa: F401
