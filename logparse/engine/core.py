"""Run the rules over a parsed log's views → Analysis (findings, outcome, root cause).

The rule catalog lives in `logparse/rules/`; this module orchestrates: run every rule (specific
rules first, then the fallbacks on what no specific rule explained), group repeated findings
(the same problem on several ranks or for several requests → one finding), decide the root cause
and nest its consequences under it, decide the run's outcome, attach evidence text.

Conventions (shared/diagnoses.md "Consequences", shared/corpus/README.md "Conventions"):

* root cause = the earliest error-severity finding that is not a consequence; None when only
  warnings/info or only consequences fired;
* outcome ∈ ready, serving, stopped, crashed-at-startup, crashed-while-serving, hung, incomplete,
  or None when the text cannot tell (a crash in the request loop with no sign of serving before it
  may have been the warmup request; a log with only consequences may have crashed or stopped).
"""

from __future__ import annotations

import math
import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    CppTerminate,
    Event,
    ExceptionHeader,
    ExceptionLine,
    ExitCode,
    Killed,
    KnownMessage,
    LaunchCommand,
    Retraction,
    SchedulerDead,
    ServerArgs,
    ServerReady,
    Severity,
    ShellSignal,
    SigquitReceived,
    SubprocessCrashed,
    Traceback,
    UvicornLifecycle,
)
from logparse.model.findings import Evidence, Finding
from logparse.parsing.pipeline import ParsedLog, fetch_lines, parse_file
from logparse.run.views import STARTUP_CODES, STARTUP_EVENTS, Views, rank_key, traceback_phase

if TYPE_CHECKING:
    from logparse.rules.context import RuleContext

OUTCOMES = (
    "ready",
    "serving",
    "stopped",
    "crashed-at-startup",
    "crashed-while-serving",
    "hung",
    "incomplete",
)
SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}

# Lines that mean a process died (whatever explains them).
FATAL_EVENTS: tuple[type[Event], ...] = (
    ExceptionHeader,
    CppTerminate,
    SchedulerDead,
    SubprocessCrashed,
    ShellSignal,
    Killed,
    SigquitReceived,
)
# Lines SGLang prints after a child failed: grouped under the root cause as its consequences.
CONSEQUENCE_EVENTS: tuple[type[Event], ...] = (
    SigquitReceived,
    SchedulerDead,
    ExitCode,
    SubprocessCrashed,
    Killed,
)
SHUTDOWN_STAGES = frozenset({"shutting-down", "waiting-shutdown", "shutdown-complete", "finished"})
SHUTDOWN_CODES = frozenset({"sigterm-received", "graceful-exit", "sigterm-node-rank"})
# HTTP paths that are health checks, metadata or SGLang's own warmup — not user traffic.
INFRA_PATHS = frozenset(
    {
        "/health",
        "/health_generate",
        "/model_info",
        "/get_model_info",
        "/server_info",
        "/get_server_info",
        "/v1/models",
        "/metrics",
        "/flush_cache",
        "/get_load",
        "/v1/loads",
        "/ping",
        "/start_profile",
        "/stop_profile",
    }
)
WARMUP_PROMPT = "The capital city of France is"
MAX_GROUPED_EVIDENCE = 64
# A rule may put this placeholder in a message: the engine puts " on TP0–TP7 (8 times)" there.
WHERE = "{where}"  # evidence ranges kept for a grouped finding (the first occurrence in full)


@dataclass
class Analysis:
    """The result for one log file."""

    log: ParsedLog
    views: Views
    findings: list[Finding] = field(default_factory=list)
    outcome: str | None = None
    root_cause: Finding | None = None
    # Rules that raised (a bug in logdiag): "CODE name: ExceptionType: message". Empty normally.
    rule_errors: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.log.path

    def all_findings(self) -> list[Finding]:
        """Every finding, consequences included (depth first)."""
        return list(_walk(self.findings))

    def fired(self) -> set[str]:
        """Names of every diagnosis that fired, nested consequences included."""
        return {f.name for f in self.all_findings()}


def analyze_log(log: ParsedLog, *, config: Any = None) -> Analysis:
    views = Views(log)
    analysis = Analysis(log=log, views=views)
    from logparse.rules import all_rules  # importing the catalog registers its rules (and plugins')

    execute(analysis, all_rules(), config)
    _fill_evidence(analysis)
    return analysis


def analyze(path: str, *, jobs: int = 1, config: Any = None) -> Analysis:
    """Parse and analyze one log file ('-' for stdin)."""
    return analyze_log(parse_file(path, jobs=jobs), config=config)


# --------------------------------------------------------------------------- running the rules


def thresholds_of(config: Any) -> dict[str, Any]:
    """Per-rule thresholds from a `Config` (its `.thresholds`) or a plain {rule: {key: value}} dict."""
    if config is None:
        return {}
    th = getattr(config, "thresholds", config)
    return dict(th) if isinstance(th, dict) else {}


def execute(analysis: Analysis, rules: Sequence[Any], config: Any = None) -> None:
    """Run the given rules (specific ones, then fallbacks), then group, decide root cause and
    outcome. `analyze_log` calls this with the whole registry."""
    from logparse.rules.context import RuleContext

    ctx = RuleContext(analysis.log, analysis.views, config=thresholds_of(config))
    raw: list[Finding] = []
    # Specific rules, then fallbacks (on what no specific rule claimed), then the rules that read
    # the other rules' findings (`needs=("findings", …)`: e.g. startup-stalled, which only speaks
    # when nothing else explains the end of the log).
    last = sorted((r for r in rules if "findings" in r.needs), key=lambda r: r.code)
    rest = [r for r in rules if "findings" not in r.needs]
    specific = sorted((r for r in rest if not r.fallback), key=lambda r: r.code)
    fallbacks = sorted((r for r in rest if r.fallback), key=lambda r: r.code)
    for group in (specific, fallbacks, last):
        for r in group:
            raw.extend(_run_one(r, ctx, analysis))
            ctx.findings = list(raw)
    finalize(analysis, raw, ctx)


def _run_one(r: Any, ctx: RuleContext, analysis: Analysis) -> list[Finding]:
    try:
        return list(r(ctx) or ())
    except Exception as err:
        if os.environ.get("LOGDIAG_DEBUG"):
            raise
        analysis.rule_errors.append(f"{r.code} {r.name}: {type(err).__name__}: {err}")
        return []


def finalize(analysis: Analysis, raw: list[Finding], ctx: RuleContext | None = None) -> None:
    """Group repeats, pick the root cause, nest consequences, order, decide the outcome."""
    log = analysis.log
    findings = group_findings(raw)
    segments = run_segments(log)
    root = pick_root(findings)
    top: list[Finding] = []
    if root is not None:
        start, end = segment_of(segments, root.first_line)
        for f in findings:
            if f is root:
                continue
            if _is_consequence_of(f, root, start, end):
                f.consequence = True
                root.consequences.append(f)
            else:
                top.append(f)
        root.consequences.sort(key=lambda f: f.first_line)
        _attach_consequence_lines(analysis, findings, root, start, end)
    else:
        top = list(findings)
    top.sort(key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), f.first_line, f.code))
    analysis.findings = ([root] if root is not None else []) + top
    analysis.root_cause = root
    analysis.outcome = decide_outcome(analysis, segments)


# --------------------------------------------------------------------------- grouping


def rank_range(ranks: Iterable[str]) -> str:
    """'TP0–TP7' for consecutive rank tags, 'DP0 TP0–DP7 TP7', else a comma list of runs."""
    tags = sorted(set(ranks), key=rank_key)
    if not tags:
        return ""
    runs: list[list[str]] = [[tags[0]]]
    for tag in tags[1:]:
        prev = runs[-1][-1]
        if _successor(prev, tag):
            runs[-1].append(tag)
        else:
            runs.append([tag])
    parts = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{run[0]}–{run[-1]}")
        else:
            parts.extend(run)
    return ", ".join(parts)


def _successor(a: str, b: str) -> bool:
    """Whether every number of tag b is the same number of tag a plus one ('DP1 TP1' → 'DP2 TP2')."""
    if re.sub(r"\d+", "#", a) != re.sub(r"\d+", "#", b):
        return False
    na = [int(x) for x in re.findall(r"\d+", a)]
    nb = [int(x) for x in re.findall(r"\d+", b)]
    return bool(na) and all(y == x + 1 for x, y in zip(na, nb, strict=True))


def _group_key(f: Finding) -> tuple[str, str, bool]:
    from logparse.model.text import mask_numbers

    return (f.name, f.fingerprint or mask_numbers(f.message), f.consequence)


def group_findings(findings: list[Finding]) -> list[Finding]:
    """Merge findings with the same name and fingerprint (the same traceback on TP0–TP7, the same
    warning per request) into one: ranks merged, occurrences counted, the message says where —
    at the `{where}` placeholder if the rule's message has one, else at the end."""
    groups: dict[tuple[str, str, bool], list[Finding]] = {}
    for f in findings:
        groups.setdefault(_group_key(f), []).append(f)
    out: list[Finding] = []
    for members in groups.values():
        if len(members) == 1:
            f = members[0]
            if WHERE in f.message:
                f.message = f.message.replace(
                    WHERE, f" on {rank_range(f.ranks)}" if f.ranks else ""
                )
            out.append(f)
            continue
        members.sort(key=lambda f: f.first_line)
        first = members[0]
        ranks = sorted({r for f in members for r in f.ranks}, key=rank_key)
        count = sum(f.count for f in members)
        evidence = list(first.evidence)
        seen = {(e.line, e.end_line) for e in evidence}
        for f in members[1:]:
            if len(evidence) >= MAX_GROUPED_EVIDENCE:
                break
            # Later occurrences show the first line of their own problem only (not context lines
            # they share with the first occurrence): the first occurrence shows the rest.
            key = (f.first_line, f.first_line)
            if f.first_line and key not in seen:
                seen.add(key)
                evidence.append(Evidence(first.evidence[0].file if first.evidence else "", *key))
        evidence.sort(key=lambda e: (e.line, e.end_line))
        if WHERE in first.message:
            place = f" on {rank_range(ranks)} ({count} times)" if ranks else f" ({count} times)"
            message = first.message.replace(WHERE, place)
        else:
            where = f"on {rank_range(ranks)}, " if ranks else ""
            message = f"{first.message} ({where}{count} times)"
        merged = Finding(
            code=first.code,
            name=first.name,
            severity=min((f.severity for f in members), key=lambda s: SEVERITY_ORDER.get(s, 3)),
            message=message,
            remedy=first.remedy,
            family=first.family,
            evidence=evidence,
            ranks=ranks,
            data={**first.data, "occurrences": count},
            consequences=[c for f in members for c in f.consequences],
            first_line=first.first_line,
            consequence=first.consequence,
            fingerprint=first.fingerprint,
            claims=set().union(*(f.claims for f in members)),
            count=count,
        )
        out.append(merged)
    out.sort(key=lambda f: f.first_line)
    return out


# --------------------------------------------------------------------------- root cause and consequences


def pick_root(findings: Sequence[Finding]) -> Finding | None:
    """The earliest error-severity finding that is not a consequence."""
    errors = [f for f in findings if f.severity == Severity.ERROR and not f.consequence]
    return min(errors, key=lambda f: (f.first_line, f.code)) if errors else None


def run_segments(log: ParsedLog) -> list[tuple[int, int]]:
    """(first line, last line) of each server launch in the log (logs that hold several launches
    of the same server one after the other). A pasted server command starts a launch; so does a
    `server_args=` line when the current launch already printed one. Launches that fail during
    argument checks print no `server_args=`, so the command lines matter."""
    starts: list[int] = []
    has_args = False
    marks = sorted(
        [(e.line, "cmd") for e in log.of(LaunchCommand) if _is_server_command(e)]
        + [(e.line, "args") for e in log.of(ServerArgs)]
    )
    for line, kind in marks:
        if kind == "cmd":
            starts.append(line)
            has_args = False
        elif has_args or not starts:
            starts.append(line)
            has_args = True
        else:
            has_args = True
    starts = sorted(set(starts))
    if len(starts) <= 1:
        return [(0, 1 << 62)]
    bounds = [0, *starts[1:]]
    return [(a, b - 1) for a, b in pairwise(bounds)] + [(bounds[-1], 1 << 62)]


def _is_server_command(e: LaunchCommand) -> bool:
    program = e.program or ""
    return bool(program) and "bench" not in program and ("launch_server" in program or "serve" in program)


def segment_of(segments: list[tuple[int, int]], line: int) -> tuple[int, int]:
    for a, b in segments:
        if a <= line <= b:
            return a, b
    return segments[-1]


def _is_consequence_of(f: Finding, root: Finding, start: int, end: int) -> bool:
    if not start <= f.first_line <= end:
        return False  # another launch attempt: its own story
    if f.consequence:
        return True
    if f.severity != Severity.ERROR or f.first_line <= root.first_line:
        return False
    if _role(f).follow_on:
        return True
    # The same failure seen on another rank after the first fatal event (a follow-on traceback).
    return bool(f.ranks and root.ranks and not set(f.ranks) & set(root.ranks))


def _attach_consequence_lines(
    analysis: Analysis, findings: list[Finding], root: Finding, start: int, end: int
) -> None:
    """SGLang's reaction to the root failure (sigquit, scheduler dead, exit code, the self-kill's
    `Killed`) is listed under the root cause: as evidence, with the lines in data. Lines another
    finding explains (e.g. a bare `Killed` that host-oom claims) are not SGLang's reaction."""
    explained = {n for f in findings for n in f.claims} | {n for f in root.consequences for n in f.claims}
    lines = []
    for e in analysis.log.events:
        if isinstance(e, CONSEQUENCE_EVENTS) and start <= e.line <= end and e.line not in explained:
            lines.append(e.line)
    # Initialization failed. Please see the error messages above → the main process's echo of the failure.
    for tb in analysis.log.of(Traceback):
        if (
            start <= tb.line <= end
            and tb.line not in explained
            and "Please see the error messages above" in (tb.message or "")
        ):
            lines.extend(range(tb.line, (tb.end_line or tb.line) + 1))
    if not lines:
        return
    root.data["consequence_lines"] = sorted(set(lines))
    have = {(e.line, e.end_line) for e in root.evidence}
    for n in sorted(set(lines)):
        if (n, n) not in have:
            root.evidence.append(Evidence(analysis.log.path, n, n))


# --------------------------------------------------------------------------- outcome


def decide_outcome(analysis: Analysis, segments: list[tuple[int, int]] | None = None) -> str | None:
    """The run's outcome (of the last launch attempt when the log holds several)."""
    log = analysis.log
    segments = segments or run_segments(log)
    start, end = segments[-1]
    every = [f for f in analysis.all_findings() if start <= f.first_line <= end]
    top = [f for f in every if not f.consequence]
    errors = [f for f in top if f.severity == Severity.ERROR]
    root = (
        analysis.root_cause if any(f is analysis.root_cause for f in errors) else pick_root(errors)
    )
    if root is not None and _role(root).hang:
        return "hung"
    failing = [f for f in every if f.severity == Severity.ERROR or f.consequence]
    crash = _crash_line(log, failing, root, start, end)
    if crash is not None:
        return _crash_outcome(analysis, root, failing, crash, start, end)
    if failing:
        # An error or a consequence with no visible crash (a sizing warning, a peer's reset): the
        # excerpt does not show whether the run went on, crashed or stopped.
        return None
    ready = ready_line(log, start, end)
    traffic = traffic_line(log, start, end)
    if ready is not None or traffic is not None:
        after = min(x for x in (ready, traffic) if x is not None)
        if _shutdown_after(log, after, end):
            return "stopped"
        return "serving" if traffic is not None else "ready"
    if startup_evidence(log, start, end):
        return "incomplete"
    return None


def _in(e: Event, start: int, end: int) -> bool:
    return start <= e.line <= end


def _crash_line(
    log: ParsedLog, failing: list[Finding], root: Finding | None, start: int, end: int
) -> int | None:
    """The first line that shows a process died: a fatal line, or an exception that an
    error/consequence finding explains."""
    lines = [e.line for e in log.events if isinstance(e, FATAL_EVENTS) and _in(e, start, end)]
    claimed = {n for f in failing for n in f.claims}
    for e in log.events:
        if (
            isinstance(e, (Traceback, ExceptionLine))
            and _in(e, start, end)
            and e.line in claimed
            or isinstance(e, Traceback)
            and _in(e, start, end)
            and _fatal_traceback(e)
        ):
            lines.append(e.line)
    for f in failing:
        if _role(f).crash:
            lines.append(f.first_line)
    return min(lines) if lines else None


def _fatal_traceback(tb: Traceback) -> bool:
    """A traceback that ends a process even when no rule explains it: printed by a process's crash
    handler (`Scheduler hit an exception`, `Process SpawnProcess-1:`) or raised during startup."""
    return bool(tb.process) or traceback_phase(tb) == "startup"


def _crash_traceback(log: ParsedLog, f: Finding | None, crash: int) -> Traceback | None:
    for tb in log.of(Traceback):
        if (
            (tb.line in f.claims)
            if f is not None
            else (tb.line <= crash <= (tb.end_line or tb.line))
        ):
            return tb
    return None


def crash_stage(tb: Traceback | None) -> str:
    """startup / serving / unknown from a traceback's frames (see views.traceback_phase)."""
    return "unknown" if tb is None else traceback_phase(tb)


class _NoRole:
    """The roles of a finding whose rule is not registered (a test's ad-hoc finding): none."""

    stage: str | None = None
    hang = follow_on = crash = False


def _role(f: Finding) -> Any:
    """The declared roles of the rule that made a finding (rules/registry.py)."""
    from logparse.rules.registry import lookup

    return lookup(f.code) or lookup(f.name) or _NoRole()


def _declared_stage(f: Finding | None) -> str:
    """startup / served / unknown: the finding's own stage, else its rule's declared stage."""
    if f is None:
        return "unknown"
    stage = f.stage or _role(f).stage
    return stage if stage in ("startup", "served") else "unknown"


def _crash_outcome(
    analysis: Analysis,
    root: Finding | None,
    failing: list[Finding],
    crash: int,
    start: int,
    end: int,
) -> str | None:
    log = analysis.log
    cause = root or (min(failing, key=lambda f: f.first_line) if failing else None)
    stage = crash_stage(_crash_traceback(log, cause, crash))
    hint = _declared_stage(cause)
    if stage == "startup" or (stage == "unknown" and hint == "startup"):
        return "crashed-at-startup"
    served = hint == "served"
    if not served:
        ready = ready_line(log, start, crash)
        traffic = traffic_line(log, start, crash)
        served = ready is not None or traffic is not None
    if served:
        return "crashed-while-serving"
    if stage == "serving":
        return None  # the request loop's first batch may have been the warmup request
    if startup_evidence(log, start, end):
        return "crashed-at-startup"
    return None


def ready_line(log: ParsedLog, start: int, end: int) -> int | None:
    for e in log.events:
        if not _in(e, start, end):
            continue
        if isinstance(e, ServerReady):
            return e.line
        if isinstance(e, UvicornLifecycle) and e.stage in ("running", "startup-complete"):
            return e.line
    return None


def traffic_line(log: ParsedLog, start: int, end: int) -> int | None:
    """The first line that shows real (user) traffic: decode stats, prefill stats beyond SGLang's
    single warmup prefill, retraction, requests to user endpoints, logged user requests."""
    found: list[int] = []
    d = log.decode
    i = bisect_left(d.line, start)  # stats columns are in file order
    if i < len(d) and d.line[i] <= end:
        found.append(d.line[i])
    p = log.prefill
    lo, hi = bisect_left(p.line, start), bisect_right(p.line, end)
    if hi - lo > 1:
        found.append(p.line[lo + 1])
        running, queue = p.cols["running"], p.cols["queue"]
        busy = next((p.line[k] for k in range(lo, hi) if _pos(running[k]) or _pos(queue[k])), None)
        if busy is not None:
            found.append(busy)
    found.extend(e.line for e in log.of(Retraction) if _in(e, start, end))
    a = log.access
    strings = a.strings.values
    generate = 0
    for k in range(bisect_left(a.line, start), bisect_right(a.line, end)):
        path = strings[a.path[k]] or ""
        if path in INFRA_PATHS:
            continue
        if path == "/generate":
            generate += 1
            if generate < 2:
                continue  # the first POST /generate is SGLang's own warmup request
        found.append(a.line[k])
        break
    for e in log.of(KnownMessage):
        if (
            _in(e, start, end)
            and e.code in ("request-received", "request-finished")
            and WARMUP_PROMPT not in e.text
        ):
            found.append(e.line)
            break
    return min(found) if found else None


def _pos(v: float) -> bool:
    return not math.isnan(v) and v > 0


def _shutdown_after(log: ParsedLog, line: int, end: int) -> bool:
    for e in log.events:
        if e.line <= line or e.line > end:
            continue
        if isinstance(e, UvicornLifecycle) and e.stage in SHUTDOWN_STAGES:
            return True
        if isinstance(e, KnownMessage) and e.code in SHUTDOWN_CODES:
            return True
    return False


def startup_evidence(log: ParsedLog, start: int, end: int) -> bool:
    for e in log.events:
        if not _in(e, start, end):
            continue
        if isinstance(e, STARTUP_EVENTS):
            return True
        if isinstance(e, KnownMessage) and e.code in STARTUP_CODES:
            return True
        if isinstance(e, Traceback) and traceback_phase(e) == "startup":
            return True
    return False


# --------------------------------------------------------------------------- evidence text


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


def _walk(findings: list[Finding]) -> Iterator[Finding]:
    for f in findings:
        yield f
        yield from _walk(f.consequences)
