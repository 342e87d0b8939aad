"""Analyse a log: parse → run model → rules → per-attempt root cause and outcome → evidence text.

The engine's parts, one job each: `execute` (run the rules, decide per launch attempt),
`grouping` (repeats → one finding), `rootcause` (root cause and consequences), `outcome`,
`remedies` (never propose what the attempt already set), `evidence` (fetch evidence text),
`roles` (what a rule declares). Run facts (launch attempts, readiness, traffic, phases) come from
`logparse.run`; this module is the entry point and re-exports the engine names tests use.

Conventions (shared/diagnoses.md "Consequences", shared/corpus/README.md "Conventions"): the root
cause is the earliest error-severity finding that is not a consequence, of the last launch attempt;
the outcome is the last attempt's.
"""

from __future__ import annotations

from typing import Any

from logparse.engine.analysis import Analysis, Attempt
from logparse.engine.evidence import fill_evidence
from logparse.engine.execute import execute, finalize, thresholds_of
from logparse.engine.gcpace import fewer_collections
from logparse.engine.grouping import group_findings
from logparse.engine.outcome import crash_stage
from logparse.engine.rootcause import pick_root
from logparse.parsing.pipeline import ParsedLog, parse_file
from logparse.parsing.candidates import release_candidates
from logparse.run.ranks import rank_range
from logparse.run.views import Views
from logparse.run.vocab import OUTCOMES, SEVERITY_ORDER

__all__ = [
    "OUTCOMES",
    "SEVERITY_ORDER",
    "Analysis",
    "Attempt",
    "analyze",
    "analyze_log",
    "crash_stage",
    "execute",
    "finalize",
    "group_findings",
    "pick_root",
    "rank_range",
    "thresholds_of",
]


def analyze_log(log: ParsedLog, *, config: Any = None) -> Analysis:
    """Run every registered rule over a parsed log and decide its outcome and root cause."""
    views = Views(log)
    analysis = Analysis(log=log, views=views)
    from logparse.rules import all_rules  # importing the catalog registers its rules (and plugins')

    with fewer_collections():
        execute(analysis, all_rules(), config)
        fill_evidence(analysis)
    release_candidates(log)
    return analysis


def analyze(path: str, *, jobs: int = 1, config: Any = None, window: Any = None) -> Analysis:
    """Parse and analyze one log file ('-' for stdin); `window` (a `model.window.TimeWindow`)
    keeps only the lines between --since and --until."""
    with fewer_collections():
        return analyze_log(parse_file(path, jobs=jobs, window=window), config=config)
