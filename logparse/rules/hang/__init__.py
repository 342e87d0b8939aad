"""Rules of the 'hang' family (see shared/diagnoses.md): SGLang's watchdog, startups that stop
without an error, and JIT compilation stalls. One module per rule; importing the package registers them."""

from __future__ import annotations

from logparse.rules.hang import jit, startup_stalled, watchdog  # noqa: F401
