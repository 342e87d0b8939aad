"""Incremental start-up state of a log being followed: per-rank phase, progress, readiness, stalls.

Every line goes through the grammar (`get_parser().parse`, the parser `analyze` uses). Only the
events the run model needs for phases and readiness are kept (the phase begin/end lines, uvicorn's
lifecycle, the ready marker), in a small `ParsedLog`, and the run model's own functions
(`run.timeline.startup_phases`, `run.readiness.ready_event`) are asked what they mean, so a phase
or readiness can never be defined twice. Progress bars and stats lines are kept only as the latest
value per rank. Memory therefore grows with the number of phase events, never with the file.

Ready means what the run model's `Lifecycle.up_line` means: the ready line (uvicorn's fallback
lines for releases without it), or the first decode stats line (traffic: a serving excerpt).

Findings, outcome and root cause are not decided here: `follow.session` runs the real engine on the
file when a line calls for it (`wants_analysis`).

Time: "elapsed in phase" and "silent for" are wall-clock seconds since the line was *read*
(`now` is `time.monotonic()`), because a live question is about now, not about the log's clock;
the phase durations printed at the end are the run model's (SGLang's own elapsed times).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from logparse.grammar.build import get_parser
from logparse.io.readreport import ReadReport
from logparse.model.events import (
    CaptureBegin,
    CaptureEnd,
    DecodeBatch,
    DistInitBegin,
    DistInitEnd,
    Event,
    ExceptionLine,
    ExitCode,
    HealthCheckFailed,
    HttpAccess,
    KnownMessage,
    KvCacheAllocated,
    MemoryPoolEnd,
    NcclWatchdogTimeout,
    PrefillBatch,
    ProgressBar,
    PythonWarning,
    Retraction,
    ServerArgs,
    ServerReady,
    SglangWatchdog,
    TracebackStart,
    Unparsed,
    UvicornLifecycle,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.parsing.pipeline import ParsedLog, TimeCache
from logparse.run.readiness import ready_event
from logparse.run.timeline import MAIN, Phase, last_phase, rel_s, startup_phases
from logparse.run.vocab import (
    ERROR_EVENTS,
    FATAL_EVENTS,
    INFRA_PATHS,
    READY_STAGES,
    REQUEST_CODES,
    SHUTDOWN_CODES,
    SHUTDOWN_STAGES,
    WARMUP_PROMPT,
)

# The events `startup_phases` and `ready_event` read: the only events kept.
PHASE_EVENTS: tuple[type[Event], ...] = (
    DistInitBegin,
    DistInitEnd,
    WeightLoadBegin,
    WeightLoadEnd,
    KvCacheAllocated,
    MemoryPoolEnd,
    CaptureBegin,
    CaptureEnd,
    UvicornLifecycle,
    ServerReady,
)
# Lines after which the process may be dying: the engine decides once the log goes quiet.
SUSPECT_EVENTS: tuple[type[Event], ...] = (
    *FATAL_EVENTS,
    *ERROR_EVENTS,
    ExitCode,
    TracebackStart,
    ExceptionLine,
    NcclWatchdogTimeout,
    SglangWatchdog,
    HealthCheckFailed,
)
# Lines that may carry a (non-fatal) finding: warnings and known messages.
NOTABLE_EVENTS: tuple[type[Event], ...] = (KnownMessage, PythonWarning)
_ERROR_LEVELS = frozenset({"WARNING", "ERROR", "CRITICAL", "FATAL"})
END = 1 << 62  # "to the end of the log" for the run model's line spans

# How long a phase may print nothing before a rank is called possibly stalled, when no other rank
# has finished it yet. Weight loading of a large checkpoint and CUDA-graph capture ("can take up to
# several minutes", SGLang says) get the larger allowances; unknown phases the default.
PHASE_ALLOWANCE_S = {
    "dist-init": 300.0,
    "weight-load": 900.0,
    "kv-alloc": 180.0,
    "capture-prefill": 600.0,
    "capture-piecewise": 600.0,
    "capture-target": 600.0,
    "capture-draft": 600.0,
    "capture-draft-extend": 600.0,
    "http-server": 120.0,
    "warmup": 300.0,
}
DEFAULT_ALLOWANCE_S = 300.0
# When other ranks finished the phase: STALL_FACTOR × their median duration, at least STALL_FLOOR_S
# (ranks of one job take about as long as each other; one-second timestamps need a floor).
STALL_FACTOR = 3.0
STALL_FLOOR_S = 5.0
# Readiness from uvicorn's "running" line (releases without the ready marker) is accepted only when
# no marker follows within this many seconds: newer releases print "running" before warmup.
FALLBACK_READY_WAIT_S = 10.0
# A warning-like line is analysed only after this much silence: its finding is not urgent, and an
# analysis running while start-up still prints would delay noticing the ready line.
NOTABLE_QUIET_S = 2.0


@dataclass
class Progress:
    """The latest refresh of one tqdm bar (checkpoint loading, CUDA-graph capture, …)."""

    kind: str
    n: int | None
    total: int | None
    percent: int | None
    elapsed_s: float | None
    remaining_s: float | None
    seen: float = 0.0  # when this refresh was read (monotonic)

    @property
    def rate(self) -> float | None:
        """Items per second, from the bar's own count and elapsed time."""
        if self.n and self.elapsed_s:
            return self.n / self.elapsed_s
        return None

    @property
    def eta_s(self) -> float | None:
        """Seconds left: tqdm's own estimate, else the remaining count at the observed rate."""
        if self.remaining_s is not None:
            return self.remaining_s
        rate = self.rate
        if rate and self.total is not None and self.n is not None:
            return max(0.0, (self.total - self.n) / rate)
        return None

    def as_dict(self, now: float | None = None) -> dict[str, Any]:
        """As shown; with `now`, the ETA counts down from when the refresh was read."""
        rate, eta = self.rate, self.eta_s
        if eta is not None and now is not None:
            eta = max(0.0, eta - (now - self.seen))
        return {
            "kind": self.kind,
            "n": self.n,
            "total": self.total,
            "percent": self.percent,
            "rate_per_s": None if rate is None else round(rate, 3),
            "eta_s": None if eta is None else round(eta, 1),
        }


@dataclass
class RankState:
    """What one rank (or the main process, 'main') is doing now."""

    rank: str
    phase: str | None = None
    complete: bool = False
    entered: float = 0.0  # when the current phase (or its completion) was read
    last_at: float = 0.0  # when this rank last printed anything
    last_line: str = ""
    last_no: int = 0
    stalled: bool = False  # reported as possibly stalled since its last line


@dataclass
class Change:
    """Something worth telling: a phase change, a possible stall."""

    kind: str  # "phase" | "stall" | "attempt" (a new launch attempt began)
    rank: str
    phase: str | None
    complete: bool = False
    line: int = 0
    silent_s: float = 0.0
    allowance_s: float = 0.0
    last_line: str = ""


@dataclass
class LiveState:
    """Feed lines with `feed`; ask `ready`, `changes`, `wants_analysis`, `stalls`."""

    path: str
    log: ParsedLog = field(init=False)
    ranks: dict[str, RankState] = field(default_factory=dict)
    progress: dict[str, Progress] = field(default_factory=dict)  # by bar kind
    serving: dict[str, Any] = field(default_factory=dict)  # latest decode stats
    lines: int = 0
    http_started: bool = False
    ready_line: int | None = None
    ready_ts: Any = None
    first_ts: Any = None
    fallback_ready_at: float | None = None  # when uvicorn said "running" (no marker yet)
    shutdown_line: int | None = None
    suspect_at: float | None = None  # first unanalysed suspect line (monotonic)
    notable: bool = False  # a warning-ish line arrived since the last analysis
    last_line_at: float = 0.0
    changes: list[Change] = field(default_factory=list)
    server_args_seen: bool = False

    def __post_init__(self) -> None:
        self.log = ParsedLog(path=self.path, report=ReadReport(path=self.path))
        self._parse = get_parser().parse
        self._times = TimeCache()
        self._phases: dict[str, list[Phase]] = {}
        self._prefills = self._generates = 0  # for the warmup rules of `_is_traffic`

    # ------------------------------------------------------------------ feeding

    def feed(self, no: int, text: str, wrapper: Any, now: float) -> None:
        """One cleaned line (from the reader's line iterator) read at `now`."""
        self.lines += 1
        self.last_line_at = now
        env, cls, kw = self._parse(text)
        rank = env.rank if env is not None else None
        key = rank or MAIN
        if self.ready_line is None and self._is_traffic(cls, kw):
            # Traffic: the server is up, marker or not (the run model's readiness: `up_line` is
            # the ready line or the first traffic line).
            self.ready_line = no
            self.ready_ts = self._times.get(env.ts) if env is not None and env.ts else None
        if cls is DecodeBatch:
            self.serving = {
                "rank": rank,
                "line": no,
                **{
                    k: kw.get(k)
                    for k in (
                        "gen_throughput",
                        "running",
                        "queue",
                        "token_usage",
                        "accept_len",
                        "cuda_graph",
                    )
                },
            }
        elif cls is PrefillBatch or cls is HttpAccess:
            pass  # hot lines: no phase, no finding between two analyses
        elif cls is ProgressBar:
            self.progress[str(kw.get("bar_kind") or "other")] = Progress(
                str(kw.get("bar_kind") or "other"),
                kw.get("n"),
                kw.get("total"),
                kw.get("percent"),
                kw.get("elapsed_s"),
                kw.get("remaining_s"),
                now,
            )
        elif issubclass(cls, PHASE_EVENTS):
            self._phase_event(no, env, wrapper, cls, kw, key, now)
        elif cls is ServerArgs:
            # A second `server_args=` line starts a new launch attempt (run.launches' rule): the
            # phases and readiness of the previous attempt no longer describe the server.
            if self.server_args_seen:
                self._new_attempt(no)
            self.server_args_seen = True
        elif issubclass(cls, SUSPECT_EVENTS):
            if self.suspect_at is None:
                self.suspect_at = now
        elif issubclass(cls, NOTABLE_EVENTS):
            self.notable = True
            if (
                cls is KnownMessage
                and kw.get("code") in SHUTDOWN_CODES
                and self.shutdown_line is None
            ):
                self.shutdown_line = no
        elif (
            cls is Unparsed
            and wrapper is not None
            and str(getattr(wrapper, "level", "") or "").upper() in _ERROR_LEVELS
        ):
            self.notable = True
        if env is not None and env.level and str(env.level).upper() in _ERROR_LEVELS:
            self.notable = True
        state = self.ranks.get(key)
        if state is None and rank is not None:
            state = self.ranks[key] = RankState(key, entered=now)
        if state is not None and text:
            state.last_at, state.last_line, state.last_no, state.stalled = now, text, no, False
        if self.first_ts is None and env is not None and env.ts is not None:
            ts = self._times.get(env.ts)
            if ts is not None and ts.year > 1900:
                self.first_ts = ts

    def _is_traffic(self, cls: type[Event], kw: dict[str, Any]) -> bool:
        """Line by line, what `run.readiness.traffic_line` finds in a span: decode stats, a
        retraction, prefill stats beyond SGLang's single warmup prefill (or with requests running
        or queued), a request to a user endpoint beyond the warmup POST /generate, a logged
        request without the warmup prompt."""
        if cls is DecodeBatch or cls is Retraction:
            return True
        if cls is PrefillBatch:
            self._prefills += 1
            return self._prefills > 1 or bool(kw.get("running")) or bool(kw.get("queue"))
        if cls is HttpAccess:
            path = kw.get("path") or ""
            if path in INFRA_PATHS:
                return False
            if path == "/generate":
                self._generates += 1
                return self._generates > 1
            return True
        if cls is KnownMessage:
            return kw.get("code") in REQUEST_CODES and WARMUP_PROMPT not in str(kw.get("text", ""))
        return False

    def _new_attempt(self, line: int) -> None:
        self.log.events.clear()
        self._phases = {}
        self.ranks.clear()
        self.progress.clear()
        self.ready_line = self.ready_ts = self.fallback_ready_at = self.shutdown_line = None
        self.first_ts = None  # time to ready counts from the attempt's first timestamp
        self._prefills = self._generates = 0
        self.http_started = False
        self.changes.append(Change("attempt", MAIN, None, line=line))

    def _phase_event(
        self,
        no: int,
        env: Any,
        wrapper: Any,
        cls: type[Event],
        kw: dict[str, Any],
        key: str,
        now: float,
    ) -> None:
        ts = (
            self._times.get(env.ts)
            if env is not None and env.ts is not None
            else (
                self._times.get(wrapper.ts)
                if wrapper is not None and getattr(wrapper, "ts", None)
                else None
            )
        )
        rank = env.rank if env is not None else None
        event = cls(line=no, end_line=no, ts=ts, rank=rank, source=self.path, wrapper=wrapper, **kw)
        self.log.events.append(event)
        if cls is UvicornLifecycle:
            stage = kw.get("stage")
            if stage in SHUTDOWN_STAGES and self.shutdown_line is None:
                self.shutdown_line = no
            elif stage not in SHUTDOWN_STAGES:
                self.http_started = True
        self._phases = startup_phases(self.log)
        for rank_key, phases in self._phases.items():
            p = last_phase(phases)
            if p is None:
                continue
            state = self.ranks.get(rank_key)
            if state is None:
                state = self.ranks[rank_key] = RankState(rank_key, entered=now, last_at=now)
            if (state.phase, state.complete) != (p.name, p.complete):
                state.phase, state.complete, state.entered = p.name, p.complete, now
                self.changes.append(
                    Change("phase", rank_key, p.name, p.complete, p.end_line or p.start_line)
                )
        if cls is ServerReady or (cls is UvicornLifecycle and kw.get("stage") in READY_STAGES):
            self.http_started = True  # a log without uvicorn's lines still shows the server up
            self._readiness(now)

    def _readiness(self, now: float) -> None:
        e = ready_event(self.log, 0, END)
        if e is None or self.ready_line is not None:
            return
        if isinstance(e, ServerReady):
            self.ready_line, self.ready_ts = e.line, e.ts
        elif self.fallback_ready_at is None:
            self.fallback_ready_at = now
            self._fallback = e

    # ------------------------------------------------------------------ questions

    def check_ready(self, now: float, *, ended: bool = False) -> bool:
        """Whether the log shows the server ready (uvicorn's fallback line counts once no marker
        followed it for FALLBACK_READY_WAIT_S, or the input ended)."""
        if (
            self.ready_line is None
            and self.fallback_ready_at is not None
            and (ended or now - self.fallback_ready_at >= FALLBACK_READY_WAIT_S)
        ):
            self.ready_line, self.ready_ts = self._fallback.line, self._fallback.ts
        return self.ready_line is not None

    @property
    def phases(self) -> dict[str, list[Phase]]:
        """The run model's phases per rank of what was read."""
        return self._phases

    def time_to_ready_s(self) -> float | None:
        """From the log's first dated timestamp to the ready line (the log's own clock)."""
        t = rel_s(self.ready_ts, self.first_ts)
        return None if t is None else round(t, 2)

    def wants_analysis(
        self, now: float, last_analysis_at: float, last_cost: float, quiet_s: float
    ) -> bool:
        """Whether to run the engine now: after a suspect line once the log has been quiet for
        `quiet_s` (the traceback is complete) or 5 s passed; after a warning-ish line once quiet
        for NOTABLE_QUIET_S, at most every max(10 s, 20 × the last analysis's cost), so a long
        log is not re-read constantly."""
        if self.suspect_at is not None:
            return now - self.last_line_at >= quiet_s or now - self.suspect_at >= 5.0
        if self.notable:
            return now - last_analysis_at >= max(
                10.0, 20.0 * last_cost
            ) and now - self.last_line_at >= max(quiet_s, NOTABLE_QUIET_S)
        return False

    def analysed(self) -> None:
        self.suspect_at, self.notable = None, False

    def allowance_s(self, state: RankState) -> float:
        """How long `state.rank` may print nothing in its current phase before it looks stalled."""
        phase = state.phase
        if phase is None:
            return DEFAULT_ALLOWANCE_S
        if state.complete:
            # Between phases: as long as the next phase may take (the rank may be starting it).
            return max(PHASE_ALLOWANCE_S.values())
        others = [
            p.duration_s
            for r, ps in self._phases.items()
            if r != state.rank
            for p in ps
            if p.name == phase and p.complete and p.duration_s is not None
        ]
        if others:
            return max(STALL_FLOOR_S, STALL_FACTOR * statistics.median(others))
        return PHASE_ALLOWANCE_S.get(phase, DEFAULT_ALLOWANCE_S)

    def stalls(self, now: float) -> list[Change]:
        """Ranks silent longer than their allowance, each reported once per silence."""
        if self.ready_line is not None:
            return []
        found: list[Change] = []
        for state in self.ranks.values():
            if state.stalled or not state.last_at or (state.rank == MAIN and state.phase is None):
                continue
            silent = now - state.last_at
            allowance = self.allowance_s(state)
            if silent > allowance and not math.isnan(silent):
                state.stalled = True
                found.append(
                    Change(
                        "stall",
                        state.rank,
                        state.phase,
                        state.complete,
                        state.last_no,
                        silent_s=silent,
                        allowance_s=allowance,
                        last_line=state.last_line,
                    )
                )
        return found

    def take_changes(self) -> list[Change]:
        out, self.changes = self.changes, []
        return out
