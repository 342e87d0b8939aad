"""Root cause and consequences within one launch attempt.

The root cause of an attempt is its earliest error-severity finding that is not a consequence;
later errors that are the teardown of the same failure (declared follow-on rules, the same failure
on other ranks) and SGLang's reaction lines (sigquit, scheduler dead, exit code, `Killed`) are
nested under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from logparse.engine.roles import role_of
from logparse.model.events import Severity, Traceback
from logparse.model.findings import Evidence, Finding
from logparse.model.linesets import LineSet
from logparse.run.launches import within
from logparse.run.verdicts import echoes_failure_elsewhere, is_wrapper_verdict
from logparse.run.vocab import CONSEQUENCE_EVENTS

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


def pick_root(findings: Sequence[Finding]) -> Finding | None:
    """The earliest error-severity finding that is not a consequence."""
    errors = [f for f in findings if f.severity == Severity.ERROR and not f.consequence]
    return min(errors, key=lambda f: (f.first_line, f.code)) if errors else None


def is_consequence_of(f: Finding, root: Finding, start: int, end: int) -> bool:
    """Whether f (a finding of the attempt start..end) is an effect of the attempt's root cause."""
    if not start <= f.first_line <= end:
        return False  # another launch attempt: its own story
    if f.consequence:
        return True
    if f.severity != Severity.ERROR or f.first_line <= root.first_line:
        return False
    if role_of(f).follow_on:
        return True
    # The same failure seen on another rank after the first fatal event (a follow-on traceback).
    return bool(f.ranks and root.ranks and not set(f.ranks) & set(root.ranks))


def nest_consequences(findings: list[Finding], start: int, end: int) -> tuple[Finding | None, list[Finding]]:
    """The attempt's root cause (consequences nested under it) and its other top-level findings."""
    root = pick_root(findings)
    if root is None:
        return None, list(findings)
    top: list[Finding] = []
    for f in findings:
        if f is root:
            continue
        if is_consequence_of(f, root, start, end):
            f.consequence = True
            root.consequences.append(f)
        else:
            top.append(f)
    root.consequences.sort(key=lambda f: f.first_line)
    return root, top


def attach_consequence_lines(
    log: ParsedLog, findings: list[Finding], root: Finding, start: int, end: int
) -> None:
    """SGLang's reaction to the root failure (sigquit, scheduler dead, exit code, the self-kill's
    `Killed`) is listed under the root cause: as evidence, with the lines in data. Lines another
    finding explains (e.g. a bare `Killed` that host-oom claims) are not SGLang's reaction."""
    explained = LineSet().union(*(f.claims for f in findings), *(f.claims for f in root.consequences))
    lines = [e.line for e in within(log.shared(*CONSEQUENCE_EVENTS), start, end) if e.line not in explained]
    # A parent's echo of the failure (`Initialization failed. Please see the error messages above.`)
    # and a wrapper's verdict on the start-up (`Server process terminated unexpectedly.`) are the
    # failure's consequences, with their tracebacks.
    for tb in within(log.shared(Traceback), start, end):
        if tb.line not in explained and (echoes_failure_elsewhere(log, tb) or is_wrapper_verdict(tb)):
            lines.extend(range(tb.line, (tb.end_line or tb.line) + 1))
    if not lines:
        return
    root.data["consequence_lines"] = sorted(set(lines))
    have = {(e.line, e.end_line) for e in root.evidence}
    for n in sorted(set(lines)):
        if (n, n) not in have:
            root.evidence.append(Evidence(log.path, n, n))
