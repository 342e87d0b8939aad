"""Startup phases per rank: how far each rank got, and how long each phase took.

A phase runs from its begin line to its end line on the same rank. Ranks are the scheduler rank
tags ('TP3'); the main process (no tag) owns the HTTP-server, warmup and ready phases. Timestamps
have one-second resolution in most releases, so a phase's `printed_s` (the elapsed time SGLang
printed, when it did) is more precise than `duration_s` and is preferred for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    CaptureBegin,
    CaptureEnd,
    DistInitBegin,
    DistInitEnd,
    Event,
    KnownMessage,
    KvCacheAllocated,
    MemoryPoolEnd,
    ProgressBar,
    ServerReady,
    UvicornLifecycle,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.run.warmup import is_warmup_request

# The known-message code of HiCache's host-pool allocation line (grammars/startup.lark).
HICACHE_HOST_ALLOC = "hicache-host-alloc"

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# Phase order within a rank (the order SGLang runs them, formats §2.1).
PHASES = (
    "dist-init",
    "weight-load",
    "kv-alloc",
    "capture-prefill",
    "capture-piecewise",
    "capture-target",
    "capture-draft",
    "capture-draft-extend",
    "hicache-alloc",
    "http-server",
    "warmup",
    "ready",
)
MAIN = "main"  # the rank key of the main process


@dataclass
class Phase:
    name: str
    rank: str
    start: datetime | None
    end: datetime | None
    start_line: int
    end_line: int | None
    printed_s: float | None = None  # elapsed seconds as SGLang printed them
    # An unfinished phase ran at least as long as a progress bar printed while it was open (tqdm
    # lines carry no timestamp, only their own elapsed time): a checkpoint load killed after
    # two minutes of bar lines is not "0 s" (the report's waterfall draws it from this too).
    at_least_s: float | None = None

    @property
    def complete(self) -> bool:
        return self.end_line is not None

    @property
    def duration_s(self) -> float | None:
        if self.printed_s is not None:
            return self.printed_s
        if self.start is not None and self.end is not None:
            return max(0.0, (self.end - self.start).total_seconds())
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.name,
            "rank": self.rank,
            "start": self.start.isoformat(sep=" ") if self.start else None,
            "end": self.end.isoformat(sep=" ") if self.end else None,
            "duration_s": None if self.duration_s is None else round(self.duration_s, 2),
            "complete": self.complete,
            "start_line": self.start_line,
            "end_line": self.end_line,
        } | ({"at_least_s": round(self.at_least_s, 2)} if self.at_least_s is not None and not self.complete else {})


def _capture_phase(e: CaptureBegin | CaptureEnd) -> str:
    kind = str(e.graph_kind)
    return {"target": "capture-target", "verify": "capture-target", "draft": "capture-draft",
            "draft-extend": "capture-draft-extend", "piecewise": "capture-piecewise",
            "prefill": "capture-prefill"}.get(kind, "capture-target")


def startup_phases(log: ParsedLog) -> dict[str, list[Phase]]:
    """Phases by rank key (rank tag, or 'main'), each list in phase order. Computed once per parsed
    log (rules ask for them per event); each call gets its own dict and lists."""
    derived = getattr(log, "derived", None)
    if derived is None:
        return _startup_phases(log)
    cached = derived.get("phases")
    if cached is None or cached[0] != len(log.events):
        cached = derived["phases"] = (len(log.events), _startup_phases(log))
    return {rank: list(phases) for rank, phases in cached[1].items()}


# The event classes `_startup_phases` reads (each branch's isinstance), and which classes are one.
_PHASE_CLASSES: tuple[type, ...] = (
    ProgressBar, DistInitBegin, DistInitEnd, WeightLoadBegin, WeightLoadEnd, KvCacheAllocated,
    MemoryPoolEnd, CaptureBegin, CaptureEnd, KnownMessage, UvicornLifecycle, ServerReady,
)
_PHASE_RELEVANT: dict[type, bool] = {}


def _startup_phases(log: ParsedLog) -> dict[str, list[Phase]]:
    open_: dict[tuple[str, str], Phase] = {}
    done: dict[str, list[Phase]] = {}

    def begin(name: str, rank: str, e: Event) -> None:
        key = (rank, name)
        if key in open_ or any(p.name == name for p in done.get(rank, [])):
            return  # a second begin (e.g. a draft model's own weight load) does not restart the phase
        open_[key] = Phase(name, rank, e.ts, None, e.line, None)

    def end(name: str, rank: str, e: Event, printed: float | None = None) -> None:
        phase = open_.pop((rank, name), None)
        if phase is None:
            # An end without its begin (excerpt starts mid-startup): a phase with only an end.
            if any(p.name == name for p in done.get(rank, [])):
                return
            phase = Phase(name, rank, None, None, e.line, None)
        phase.end, phase.end_line, phase.printed_s = e.ts, e.line, printed
        done.setdefault(rank, []).append(phase)

    def end_all(name: str, e: Event) -> None:
        """End the phase on every rank where it is open (its end is printed by another process)."""
        for rank, open_name in [k for k in open_ if k[1] == name]:
            end(open_name, rank, e)

    relevant = _PHASE_RELEVANT
    for e in log.events:
        # Most events are of no class below: one dict lookup by class instead of the whole
        # isinstance chain (asked per attempt, over every event of the log in all).
        cls = type(e)
        known = relevant.get(cls)
        if known is None:
            known = relevant[cls] = issubclass(cls, _PHASE_CLASSES)
        if not known:
            continue
        rank = e.rank or MAIN
        if isinstance(e, ProgressBar):
            if e.elapsed_s is not None:
                # the bar began after every phase open now began, so each ran at least this long
                for phase in open_.values():
                    phase.at_least_s = max(phase.at_least_s or 0.0, e.elapsed_s)
        elif isinstance(e, DistInitBegin):
            begin("dist-init", rank, e)
        elif isinstance(e, DistInitEnd):
            end("dist-init", rank, e, e.elapsed_s)
        elif isinstance(e, WeightLoadBegin):
            begin("weight-load", rank, e)
        elif isinstance(e, WeightLoadEnd):
            end("weight-load", rank, e, e.elapsed_s)
        elif isinstance(e, KvCacheAllocated):
            begin("kv-alloc", rank, e)
        elif isinstance(e, MemoryPoolEnd):
            end("kv-alloc", rank, e)
        elif isinstance(e, CaptureBegin):
            begin(_capture_phase(e), rank, e)
        elif isinstance(e, CaptureEnd):
            end(_capture_phase(e), rank, e, e.elapsed_s)
        elif isinstance(e, KnownMessage) and e.code == HICACHE_HOST_ALLOC:
            # HiCache's host tier (`Allocating N GB host memory for hierarchical KV cache.`): the
            # scheduler builds its HiRadixCache after the model runner's pool and graphs, pinning
            # host memory (slow for tens of GB); nothing is printed when it is done, so the phase
            # ends when the HTTP server starts or the server says it is ready.
            begin("hicache-alloc", rank, e)
        elif isinstance(e, UvicornLifecycle) and e.stage == "started":
            end_all("hicache-alloc", e)
            begin("http-server", MAIN, e)
        elif isinstance(e, UvicornLifecycle) and e.stage == "running":
            end("http-server", MAIN, e)
            begin("warmup", MAIN, e)
        elif isinstance(e, KnownMessage) and is_warmup_request(e):
            # SGLang's own warmup request logged as it arrives (`--log-requests`): the warmup
            # phase has begun even when uvicorn's lines are not in the excerpt.
            begin("warmup", MAIN, e)
        elif isinstance(e, ServerReady):
            end_all("hicache-alloc", e)
            end("warmup", MAIN, e)
            begin("ready", MAIN, e)
            end("ready", MAIN, e, 0.0)
    for phase in open_.values():
        done.setdefault(phase.rank, []).append(phase)
    order = {name: i for i, name in enumerate(PHASES)}
    for phases in done.values():
        phases.sort(key=lambda p: (order[p.name], p.start_line))
    return done


def last_phase(phases: list[Phase]) -> Phase | None:
    """The phase a rank reached last (by line), complete or not."""
    return max(phases, key=lambda p: p.end_line or p.start_line) if phases else None


def first_timestamp(log: ParsedLog) -> datetime | None:
    """The first full (dated) timestamp; time-only stamps (year 1900) cannot be compared with it."""
    for e in log.events:
        if e.ts is not None and e.ts.year > 1900:
            return e.ts
    return None


def rel_s(ts: datetime | None, t0: datetime | None) -> float | None:
    """Seconds from t0; None when either is missing or one is time-only (year 1900) and the other dated."""
    if ts is None or t0 is None or (ts.year > 1900) != (t0.year > 1900):
        return None
    return (ts - t0).total_seconds()


def phase_end_s(p: Phase, t0: datetime | None) -> float | None:
    """When a complete phase ended, in seconds from t0 (its start plus the printed elapsed time when
    SGLang printed one: more precise than one-second timestamps)."""
    if not p.complete:
        return None
    start, end, dur = rel_s(p.start, t0), rel_s(p.end, t0), p.duration_s
    if start is not None and dur is not None:
        return start + dur
    return end


def slowest_rank(phases: dict[str, list[Phase]], t0: datetime | None) -> str | None:
    """The scheduler rank whose start-up ended last (the one the others waited for); without
    timestamps, the rank with the most time in logged phases. None with fewer than two ranks."""
    from logparse.run.ranks import rank_key

    ranks = {r: p for r, p in phases.items() if r != MAIN and p}
    ends: dict[str, float] = {}
    for rank, plist in ranks.items():
        done = [x for p in plist if (x := phase_end_s(p, t0)) is not None]
        if done:
            ends[rank] = max(done)
    if len(ends) >= 2:
        return max(ends, key=lambda r: (ends[r], rank_key(r)))
    totals = {r: sum(p.duration_s or 0.0 for p in plist) for r, plist in ranks.items()}
    if len(totals) < 2 or not any(totals.values()):
        return None
    return max(totals, key=lambda r: (totals[r], rank_key(r)))
