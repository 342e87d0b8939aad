"""logdiag: read SGLang server logs and say what happened.

The public API (everything is imported on first use, so `import logparse` stays cheap):

* `parse(path, *, jobs=1) -> ParsedLog` — events, stats columns and coverage of one log
  ('-' for stdin, `.gz` files);
* `analyze(path, *, jobs=1, config=None) -> Analysis` — findings, root cause, outcome and
  launch attempts (`Analysis.attempts`, `Analysis.run`) of one log;
* `Analysis`, `Finding`, `Severity` — the result types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logparse._version import __version__

if TYPE_CHECKING:
    from logparse.engine.analysis import Analysis
    from logparse.model.events import Severity
    from logparse.model.findings import Finding
    from logparse.parsing.pipeline import ParsedLog

__all__ = ["Analysis", "Finding", "Severity", "__version__", "analyze", "parse"]

# Public name → the module that defines it (imported when the name is first used).
_LAZY = {
    "Analysis": "logparse.engine.analysis",
    "Finding": "logparse.model.findings",
    "Severity": "logparse.model.events",
}


def parse(path: str, *, jobs: int = 1) -> ParsedLog:
    """Parse one log file ('-' for stdin); jobs > 1 splits a large plain file across processes."""
    from logparse.parsing.pipeline import parse_file

    return parse_file(path, jobs=jobs)


def analyze(path: str, *, jobs: int = 1, config: Any = None) -> Analysis:
    """Parse and analyse one log file: findings, root cause, outcome, launch attempts."""
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
