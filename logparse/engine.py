"""Run the rules over a parsed log's views → Analysis (findings, outcome, root cause).

The rule catalog lives in `logparse/rules/`; this module only orchestrates: run every rule,
attach evidence text, decide the outcome and the root cause, nest consequences under causes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logparse.findings import Evidence, Finding
from logparse.parse import ParsedLog, fetch_lines, parse_file
from logparse.views import Views


@dataclass
class Analysis:
    """The result for one log file."""

    log: ParsedLog
    views: Views
    findings: list[Finding] = field(default_factory=list)
    outcome: str | None = None
    root_cause: Finding | None = None

    @property
    def path(self) -> str:
        return self.log.path


def analyze_log(log: ParsedLog) -> Analysis:
    views = Views(log)
    analysis = Analysis(log=log, views=views)
    try:
        from logparse.rules import run_rules  # the catalog (issue: diagnosis rules)
    except ImportError:
        return analysis
    run_rules(analysis)
    _fill_evidence(analysis)
    return analysis


def _fill_evidence(analysis: Analysis) -> None:
    """Rules name evidence by line numbers; fetch their text once for all findings."""
    wanted: set[int] = set()
    every = list(_walk(analysis.findings))
    for f in every:
        for ev in f.evidence:
            if not ev.lines:
                wanted.update(range(ev.line, ev.end_line + 1))
    if not wanted:
        return
    texts = fetch_lines(analysis.log, wanted)
    for f in every:
        for ev in f.evidence:
            if not ev.lines:
                ev.lines = [(n, texts[n]) for n in range(ev.line, ev.end_line + 1) if n in texts]


def _walk(findings: list[Finding]) -> Any:
    for f in findings:
        yield f
        yield from _walk(f.consequences)


def analyze(path: str, *, jobs: int = 1) -> Analysis:
    """Parse and analyze one log file ('-' for stdin)."""
    return analyze_log(parse_file(path, jobs=jobs))
