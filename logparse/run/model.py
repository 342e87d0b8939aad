"""The run model: a log → launch attempts → per-rank lifecycle (phases, readiness, traffic) per attempt.

Every consumer (rules, engine, text and JSON summaries, the report) reads run facts from here, so
each fact has one owner: `run_of(log)` computes the model once per parsed log.
"""

from __future__ import annotations

import bisect

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from logparse.model.events import Event, Traceback
from logparse.run.launches import Launch, disjoint_firsts, launch_at, launch_attempts
from logparse.run.readiness import (
    http_answered_line,
    ready_event,
    shutdown_after,
    startup_evidence,
    traffic_line,
    warmup_answered_line,
)
from logparse.run.timeline import MAIN, Phase, rel_s, slowest_rank, startup_phases
from logparse.run.verdicts import StartupVerdict, startup_verdicts
from logparse.run.vocab import FATAL_EVENTS

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


@dataclass
class Lifecycle:
    """What one launch attempt went through: phases per rank, readiness, traffic, failures per rank,
    shutdown."""

    launch: Launch
    # Set by the engine when a finding shows the attempt had served (a diagnosis that only exists
    # after requests ran, e.g. the idle memory-leak check) although no stats or access line shows it.
    served_per_findings: bool = False
    # Set by the engine when the attempt crashed while starting (the failing rule's declared stage
    # says so) although no start-up line shows it was starting.
    failed_starting: bool = False

    @property
    def log(self) -> ParsedLog:
        return self.launch.log

    @cached_property
    def phases(self) -> dict[str, list[Phase]]:
        """Startup phases by rank key (rank tag, or 'main'), each list in phase order."""
        return startup_phases(self.launch)  # type: ignore[arg-type]

    @cached_property
    def t0(self) -> datetime | None:
        """The attempt's first dated timestamp (else its first time-only one)."""
        stamps = [e.ts for e in self.launch.events if e.ts is not None]
        return next((t for t in stamps if t.year > 1900), stamps[0] if stamps else None)

    @cached_property
    def ready_event(self) -> Event | None:
        return ready_event(self.log, self.launch.first_line, self.launch.last_line)

    @property
    def ready_line(self) -> int | None:
        return self.ready_event.line if self.ready_event is not None else None

    @cached_property
    def traffic_line(self) -> int | None:
        return traffic_line(self.log, self.launch.first_line, self.launch.last_line)

    @cached_property
    def startup_seen(self) -> bool:
        return startup_evidence(self.log, self.launch.first_line, self.launch.last_line)

    @cached_property
    def up_line(self) -> int | None:
        """The first line that shows the server up: readiness, an answered request (the warmup's, or
        any 2xx: the HTTP server was running), or traffic, whichever came first."""
        first, last = self.launch.first_line, self.launch.last_line
        answered = [warmup_answered_line(self.log, first, last), http_answered_line(self.log, first, last)]
        lines = [x for x in (self.ready_line, *answered, self.traffic_line) if x is not None]
        return min(lines) if lines else None

    @cached_property
    def shutdown_line(self) -> int | None:
        """The first shutdown line after the server was up."""
        up = self.up_line
        return None if up is None else shutdown_after(self.log, up, self.launch.last_line)

    def up_before(self, line: int) -> bool:
        """Whether the attempt was ready or serving before `line` (e.g. a crash)."""
        return self.up_line is not None and self.up_line <= line

    @cached_property
    def startup_verdict(self) -> StartupVerdict | None:
        """The first wrapper verdict on this attempt's start-up (run/verdicts.py) — the server was
        not ready in time, or its process died first — when the attempt never shows the server up.
        Once it was up, a verdict before that was followed by a retry that came up (test_utils'
        offline-then-online launch), and one after it is about the running server, not its start-up."""
        if self.up_line is not None:
            return None
        verdicts = startup_verdicts(self.log, self.launch.first_line, self.launch.last_line)
        return verdicts[0] if verdicts else None

    @property
    def ready(self) -> bool | None:
        """True if the attempt reached readiness or served; False if it was starting and never did
        (or a wrapper says it did not come up); None when the lines cannot tell (benchmark output,
        an excerpt of other messages)."""
        if self.up_line is not None or self.served_per_findings:
            return True
        starting = self.startup_seen or self.failed_starting or self.startup_verdict is not None
        return False if starting else None

    @property
    def serving(self) -> bool:
        return self.traffic_line is not None

    @property
    def time_to_ready_s(self) -> float | None:
        e = self.ready_event
        t = rel_s(e.ts, self.t0) if e is not None else None
        return None if t is None else round(t, 2)

    @cached_property
    def failures(self) -> dict[str, int]:
        """Rank key (rank tag, or 'main') → the first line of the attempt that shows it dying (a
        fatal line or a traceback), in file order."""
        out: dict[str, int] = {}
        for e in self.launch.of(*FATAL_EVENTS, Traceback):
            out.setdefault(e.rank or MAIN, e.line)
        return out

    @cached_property
    def slowest_rank(self) -> str | None:
        return slowest_rank(self.phases, self.t0)


@dataclass
class Run:
    """One log's run: its launch attempts in file order and each attempt's lifecycle."""

    log: ParsedLog

    @cached_property
    def launches(self) -> list[Launch]:
        return launch_attempts(self.log)

    @cached_property
    def lifecycles(self) -> list[Lifecycle]:
        return [Lifecycle(launch) for launch in self.launches]

    @property
    def last(self) -> Lifecycle:
        """The last attempt: the file's outcome, readiness and root cause are its."""
        return self.lifecycles[-1]

    @cached_property
    def startup(self) -> Lifecycle:
        """The last attempt that shows start-up phases (else the last attempt): the start-up table.
        Phases of one attempt are never paired with those of another."""
        with_phases = [lc for lc in self.lifecycles if lc.phases]
        return with_phases[-1] if with_phases else self.last

    @property
    def startup_launch(self) -> Launch:
        return self.startup.launch

    @property
    def ready(self) -> bool | None:
        return self.last.ready

    @cached_property
    def _firsts(self) -> list[int] | None:
        return disjoint_firsts(self.launches)

    def launch_at(self, line: int) -> Launch:
        """The attempt a line belongs to."""
        return launch_at(self.launches, line, self._firsts)

    def lifecycle_at(self, line: int) -> Lifecycle:
        return self.lifecycles[self.launch_at(line).index - 1]

    def segments(self) -> list[tuple[int, int]]:
        """(first line, last line) of each attempt."""
        return [(x.first_line, x.last_line) for x in self.launches]


def run_of(log: ParsedLog) -> Run:
    """The run model of a parsed log, computed once and kept with it."""
    cached: Any = log.derived.get("run")
    if cached is None or cached.log is not log:
        cached = log.derived["run"] = Run(log)
    return cached  # type: ignore[no-any-return]


def run_segments(log: ParsedLog) -> list[tuple[int, int]]:
    """(first line, last line) of each launch attempt of the log."""
    return run_of(log).segments()


class SegmentIndex:
    """Which launch attempt holds a line: the first (first, last) segment holding it, else the last.

    Attempts come in line order and do not overlap, so a bisect on their first lines answers;
    the linear scan is kept for segment lists that are not so (then the first match in list
    order is still the answer). A report asks this for every unlogged gap: a scan per gap was
    gaps x attempts (2.5 s of a 300k-line corpus report with ~1,500 attempts).
    """

    def __init__(self, segments: list[tuple[int, int]]) -> None:
        self.segments = segments
        self.starts = [a for a, _ in segments]
        self.ordered = all(
            segments[i][1] < segments[i + 1][0] and segments[i][0] <= segments[i][1]
            for i in range(len(segments) - 1)
        )

    def index(self, line: int) -> int:
        segs = self.segments
        if not self.ordered:
            return next((i for i, (a, b) in enumerate(segs) if a <= line <= b), len(segs) - 1)
        i = bisect.bisect_right(self.starts, line) - 1
        return i if i >= 0 and line <= segs[i][1] else len(segs) - 1
