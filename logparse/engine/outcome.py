"""The outcome of one launch attempt, from its findings and its lifecycle (run model).

outcome ∈ ready, serving, stopped, crashed-at-startup, crashed-while-serving, hung, incomplete, or
None when the text cannot tell (a crash in the request loop with no sign of serving before it may
have been the warmup request; an attempt with only consequences may have crashed or stopped).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING

from logparse.engine.roles import declared_stage, role_of
from logparse.engine.rootcause import pick_root
from logparse.model.events import ExceptionLine, KnownMessage, ServerReady, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.linesets import LineSet
from logparse.run.launches import within
from logparse.run.native_exit import native_exits
from logparse.run.readiness import user_interrupt, warmup_answered_line
from logparse.run.spacing import holds_text
from logparse.run.stage import main_top_level, thread_exception, traceback_phase
from logparse.run.verdicts import startup_verdicts
from logparse.run.vocab import FATAL_EVENTS, STARTUP_EVENTS
from logparse.run.warmup import is_warmup_request

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.model import Lifecycle


def attempt_outcome(lc: Lifecycle, every: list[Finding], root: Finding | None) -> str | None:
    """The outcome of the attempt `lc`, given all its findings (consequences included) and its root."""
    log = lc.log
    start, end = lc.launch.first_line, lc.launch.last_line
    top = [f for f in every if not f.consequence]
    errors = [f for f in top if f.severity == Severity.ERROR]
    if not any(f is root for f in errors):
        root = pick_root(errors)
    if root is not None and role_of(root).hang:
        return "hung"
    verdict = lc.startup_verdict
    if verdict is not None and verdict.died and not _served_before(lc, verdict.line):
        # A wrapper saw the server process die while it waited for it to come up (its cause may be
        # above, on another rank or not in the excerpt): whatever the findings, it died starting.
        lc.failed_starting = True  # the run model's readiness must agree with this outcome
        return "crashed-at-startup"
    failing = [f for f in every if f.severity == Severity.ERROR or f.consequence]
    crash = crash_line(log, failing, start, end, up=lc.up_line)
    if crash is not None:
        return _crash_outcome(lc, root, failing, crash)
    if failing:
        # An error or a consequence with no visible crash (a sizing warning, a peer's reset): the
        # excerpt does not show whether the run went on, crashed or stopped.
        return None
    ended = [f for f in every if role_of(f).crash and f.severity == Severity.WARNING]
    if ended:
        # A warning of a rule that stands for a process ending (`crash`): it ended, but what ended
        # it is not shown (argparse's usage with its `error:` line cut). The run did not stall
        # mid-start-up, and whether it failed or stopped (`--help`) the excerpt cannot tell.
        # (A crash rule's info notices — custom all-reduce disabled — say nothing of an end.)
        top = _main_top_level_traceback(log, ended)
        if top is not None and not lc.up_before(top.line) and not _served_before(lc, top.line):
            # Except a traceback that reached the launching program's top level (cut before its
            # exception, not an interrupt): the main program died on an exception, and before the
            # server was up nothing else runs at that level — it died starting.
            lc.failed_starting = True  # the run model's readiness must agree with this outcome
            return "crashed-at-startup"
        return None
    if lc.up_line is not None:
        if lc.shutdown_line is not None:
            return "stopped"
        return "serving" if lc.serving else "ready"
    if any(user_interrupt(log, tb) for tb in within(log.shared(Traceback), start, end)):
        # Ctrl-C (or sys.exit) before the server was up, with no error: someone stopped it while it
        # was starting or before the excerpt shows it up — stopped on purpose, not stalled.
        return "stopped"
    if _warmup_batches_only(lc):
        # Prefill lines that may be SGLang's own warmup (one per DP rank), no ready marker: still
        # starting (warmup in flight) or already serving — the excerpt cannot tell.
        return None
    return "incomplete" if lc.startup_seen else None


def _main_top_level_traceback(log: ParsedLog, found: list[Finding]) -> Traceback | None:
    """The first traceback a finding claims that is the main program's, raised to its top level."""
    claimed = LineSet().union(*(f.claims for f in found))
    return next((tb for tb in log.of(Traceback) if tb.line in claimed and main_top_level(tb)
                 and not user_interrupt(log, tb)), None)


def _warmup_batches_only(lc: Lifecycle) -> bool:
    """The attempt printed prefill stats (not counted as traffic: they may be the warmup's) and no
    start-up phase line before them. After SGLang's own start-up lines, such a prefill is its warmup
    and the start-up is unfinished; without them it may as well be a user's request."""
    start, end = lc.launch.first_line, lc.launch.last_line
    first = next((int(n) for n in lc.log.prefill.line if start <= n <= end), None)
    if first is None:
        return False
    if any(is_warmup_request(e) for e in within(lc.log.of(KnownMessage), start, first)):
        return False  # the request is shown arriving, and it is SGLang's warmup: still starting
    return not within(lc.log.of(*STARTUP_EVENTS), start, first)


def crash_line(log: ParsedLog, failing: list[Finding], start: int, end: int, *, up: int | None = None) -> int | None:
    """The first line that shows a process died: a fatal line, an exception that an
    error/consequence finding explains, or a wrapper saying the server process died (after `up`,
    the first line showing the server up, when there is one: before it, a retry came up)."""
    lines = [e.line for e in within(log.shared(*FATAL_EVENTS), start, end)]
    claimed = LineSet().union(*(f.claims for f in failing))
    # A thread died (0.2.x's warmup thread on a bad answer): its process goes on. A rule that stands
    # for a process ending (`crash`) still counts through its finding below.
    threads = [(tb.line, tb.end_line or tb.line) for tb in within(log.shared(Traceback), start, end)
               if thread_exception(tb)]
    for e in within(log.shared(Traceback, ExceptionLine), start, end):
        if isinstance(e, Traceback) and user_interrupt(log, e):
            continue  # Ctrl-C / sys.exit: stopped on purpose (the run model reads it as a shutdown)
        if any(a <= e.line <= b for a, b in threads):
            continue
        if e.line in claimed or (isinstance(e, Traceback) and _fatal_traceback(e)):
            lines.append(e.line)
    lines.extend(f.first_line for f in failing if role_of(f).crash)
    # Native code that ended its process on a failed CUDA call (no exception follows it).
    lines.extend(native_exits(log, start, end))
    # A wrapper that saw the server process die (its own traceback is no server crash).
    lines.extend(v.line for v in startup_verdicts(log, start, end) if v.died and (up is None or v.line > up))
    rotated = _rotated_paste(log, start, end)
    if rotated is not None:
        # The traceback's tail was pasted first: the process died where its head is.
        tail, head = rotated
        lines = [head.line if tail.line <= n <= (tail.end_line or tail.line) else n for n in lines]
    return min(lines) if lines else None


def _rotated_paste(log: ParsedLog, start: int, end: int) -> tuple[Traceback, Traceback] | None:
    """(tail, head) when the attempt's excerpt is one traceback pasted rotated: it opens inside a
    traceback (the tail: its exception, no header, nothing of the attempt before it) and ends inside
    one (the head: a header and frames, cut before any exception), with no other traceback between
    and no rank telling them apart. An excerpt cut at both ends holds one traceback's two halves in
    the wrong order: the lines pasted between them came before the failure, not after it."""
    tbs = within(log.shared(Traceback), start, end)
    if len(tbs) != 2:
        return None
    tail, head = tbs
    if not (tail.headless and tail.exc_type and head.cut and head.exc_type is None and not head.headless):
        return None
    if tail.rank and head.rank and tail.rank != head.rank:
        return None
    if within(log.events, start, tail.line - 1) or holds_text(log, (head.end_line or head.line) + 1, end):
        # Something precedes the tail (its own cut frame's source lines are no event), or follows
        # the head (blank lines do not: a double-spaced paste ends with one): the excerpt is not
        # cut there.
        return None
    return tail, head


def _fatal_traceback(tb: Traceback) -> bool:
    """A traceback that ends a process even when no rule explains it: printed by a process's crash
    handler (`Scheduler hit an exception`, `Process SpawnProcess-1:`) or raised during startup."""
    return bool(tb.process) or traceback_phase(tb) == "startup"


def _crash_traceback(log: ParsedLog, f: Finding | None, crash: int) -> Traceback | None:
    """The first traceback (file order) on one of the finding's claimed lines, or without a
    finding the first that spans the crash line. Asked once per attempt: a scan of every
    traceback of the log each time was attempts x tracebacks, so both are bisected."""
    tbs: list[Traceback] = log.shared(Traceback)  # in (line, end_line) order
    if not tbs:
        return None
    if f is not None:
        if not f.claims:
            return None
        claims = f.claims
        first, last = claims.span() if isinstance(claims, LineSet) else (min(claims), max(claims))
        lo = bisect_left(tbs, first, key=lambda tb: tb.line)
        hi = bisect_right(tbs, last, lo=lo, key=lambda tb: tb.line)
        return next((tb for tb in tbs[lo:hi] if tb.line in f.claims), None)
    # The first traceback with line <= crash <= end: the running maximum of the ends is sorted,
    # and its first index at or past the crash is the first traceback whose own end is.
    cached = log.derived.get("traceback_end_max")
    if cached is None or cached[0] is not tbs:
        ends = list(accumulate((tb.end_line or tb.line for tb in tbs), max))
        cached = log.derived["traceback_end_max"] = (tbs, ends)
    k = bisect_left(cached[1], crash)
    return tbs[k] if k < len(tbs) and tbs[k].line <= crash else None


def crash_stage(tb: Traceback | None) -> str:
    """startup / serving / unknown from a traceback's frames (see run.stage.traceback_phase)."""
    return "unknown" if tb is None else traceback_phase(tb)


def _served_before(lc: Lifecycle, crash: int) -> bool:
    """Whether the attempt had finished its warmup or served someone before line `crash`: SGLang's
    ready marker (printed after the warmup returns), an answered warmup, or user traffic."""
    marker = lc.ready_event
    if isinstance(marker, ServerReady) and marker.line <= crash:
        return True
    answered = warmup_answered_line(lc.log, lc.launch.first_line, lc.launch.last_line)
    traffic = lc.traffic_line
    return any(x is not None and x <= crash for x in (answered, traffic)) or lc.served_per_findings


def _crash_outcome(lc: Lifecycle, root: Finding | None, failing: list[Finding], crash: int) -> str | None:
    cause = root or (min(failing, key=lambda f: f.first_line) if failing else None)
    stage = crash_stage(_crash_traceback(lc.log, cause, crash))
    hint = declared_stage(cause)
    if hint != "startup" and _served_before(lc, crash):
        # The ready marker, an answered warmup or traffic came first: whatever the (often cut)
        # frames suggest — an exception right in the process's entry function — it was serving.
        return "crashed-while-serving"
    if stage == "startup" or (stage == "unknown" and hint == "startup"):
        lc.failed_starting = True  # the run model's readiness must agree with this outcome
        return "crashed-at-startup"
    if hint == "served":
        lc.served_per_findings = True  # the run model's readiness must agree with this outcome
        return "crashed-while-serving"
    if lc.up_before(crash):
        if _served_before(lc, crash):
            return "crashed-while-serving"
        # Up only by uvicorn's own lines: SGLang sends its warmup request after uvicorn starts and
        # says it is ready when that returns, so a crash here may be the warmup batch.
        return None
    if stage == "serving":
        return None  # the request loop's first batch may have been the warmup request
    return "crashed-at-startup" if lc.startup_seen else None
