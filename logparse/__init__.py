"""logdiag: read SGLang server logs and say what happened.

The public API (everything is imported on first use, so `import logparse` stays cheap), documented
with executed examples in docs/python.md:

* `analyze(path, *, jobs=1, config=None) -> Analysis` — one log's `outcome`, `root_cause`,
  `findings`, `launches` (each attempt's verdict), `facts`, and its tables as pandas DataFrames
  (`tables`, `table(kind)`: every event kind, `findings`, `runs`; columns in docs/export.md);
* `parse(path, *, jobs=1) -> ParsedLog` — events, stats columns and coverage of one log
  ('-' for stdin, `.gz` files), without the rules;
* `Analysis`, `Attempt`, `Tables`, `Finding`, `Severity`, `ParsedLog` — the result types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logparse._version import __version__

if TYPE_CHECKING:
    from logparse.engine.analysis import Analysis, Attempt, Tables
    from logparse.model.events import Severity
    from logparse.model.findings import Finding
    from logparse.parsing.pipeline import ParsedLog

__all__ = [
    "Analysis",
    "Attempt",
    "Finding",
    "ParsedLog",
    "Severity",
    "Tables",
    "__version__",
    "analyze",
    "parse",
]

# Public name → the module that defines it (imported when the name is first used).
_LAZY = {
    "Analysis": "logparse.engine.analysis",
    "Attempt": "logparse.engine.analysis",
    "Tables": "logparse.engine.analysis",
    "ParsedLog": "logparse.parsing.pipeline",
    "Finding": "logparse.model.findings",
    "Severity": "logparse.model.events",
}


def parse(path: str, *, jobs: int = 1) -> ParsedLog:
    """Parse one log file ('-' for stdin); jobs > 1 splits a large plain file across processes."""
    from logparse.parsing.pipeline import parse_file

    return parse_file(path, jobs=jobs)


def analyze(path: str, *, jobs: int = 1, config: Any = None) -> Analysis:
    """Parse and analyse one log file ('-' for stdin): findings, root cause, outcome, launch
    attempts, facts and tables. Raises `logparse.io.reader.InputError` for an unreadable input."""
    from logparse.engine.core import analyze as run

    return run(path, jobs=jobs, config=config)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'logparse' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
