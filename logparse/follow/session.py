"""One `logdiag follow` run: tail the input, keep the live state, decide when to stop and with what code.

The loop is single-threaded. Lines come from the reader's own line iterator fed by `Tail` blocks;
after every block and whenever the input is idle, `Tail` calls `_tick`, which does the periodic
work (readiness by health check, the engine, stall checks, the timeout, redrawing) and stops the
run by raising `_Stop(code)`.

Findings, the outcome and the root cause always come from the real engine
(`logparse.engine.core.analyze`) run over the whole input read so far (the followed file, or the
spool of a pipe), so they are exactly what `logdiag analyze` says. The engine runs when a line that
may mean a crash arrived and the log has gone quiet (a traceback is complete), and, rate-limited by
its own cost, after warning-like lines: between those, per line, only the grammar runs.

Exit codes: 0 ready (or, with `--until exit`, the server stopped cleanly), 1 crashed or ended
without becoming ready, 4 timed out. 2 (bad input) and 3 (a bug) are the CLI's.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from logparse.follow.live import LiveState
from logparse.follow.render import JsonRenderer, progress_text, safe, seconds, serving_text
from logparse.follow.tail import Tail
from logparse.io.lines import MAX_LINE_CHARS, iter_lines
from logparse.io.readreport import ReadReport
from logparse.run.ranks import rank_key
from logparse.run.timeline import MAIN, Phase

EXIT_READY, EXIT_CRASHED, EXIT_TIMEOUT = 0, 1, 4
CRASHED = frozenset({"crashed-at-startup", "crashed-while-serving", "hung"})
HEALTH_TIMEOUT_S = 2.0
REDRAW_EVERY_S = 0.2
SERVING_EVERY_S = 30.0
# Up to this size the ready summary re-parses the input for the run model's exact numbers
# (~0.1 s per MB on one core); above it, the live state's.
EXACT_READY_MAX_BYTES = (
    8 * 1024 * 1024
)  # plain/JSON serving status lines (the terminal's status line is live)


@dataclass
class Options:
    until: str = "ready"  # "ready" | "exit"
    timeout: float | None = None
    health: str | None = None
    poll: float = 0.25
    quiet_s: float = 0.6  # silence after a suspect line before the engine decides


class _Stop(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Session:
    """Follow `path` and report through `renderer` (see `logparse.follow.render`)."""

    def __init__(self, path: str, options: Options, renderer: JsonRenderer) -> None:
        self.path = path
        self.opts = options
        self.out = renderer
        self.start = time.monotonic()
        self.tail = Tail(path, poll=options.poll, tick=self._tick)
        self.live = LiveState(path)
        self.announced_ready = False
        self.health_ok = False
        self.health_at = 0.0
        self.analysis_at = 0.0
        self.analysis_cost = 0.0
        self.findings_seen: set[tuple[str, int]] = set()
        self.redrawn_at = 0.0
        self.serving_at = 0.0
        self.waiting_said = False
        # A crash verdict waits one more quiet period: a writer that paused mid-traceback (a busy
        # machine) must not leave the verdict to a partial traceback.
        self.crash: tuple[float, int, dict[str, Any]] | None = None

    # ------------------------------------------------------------------ the loop

    def run(self) -> int:
        try:
            while True:
                self.live = LiveState(self.path)
                report = ReadReport(path=self.path)
                for no, text, wrapper in iter_lines(self.tail.blocks(), report, 1, MAX_LINE_CHARS):
                    self.live.feed(no, text, wrapper, time.monotonic())
                    if self.live.changes:
                        self._phase_changes()
                    if self.live.ready_line is not None and not self.announced_ready:
                        self._ready_reached(time.monotonic())
                if self.tail.eof:
                    return self._input_ended()
                self.out.emit(
                    {
                        "event": "input",
                        "what": self.tail.restarted,
                        "message": f"{safe(self.path)} was {self.tail.restarted}: following the new file from its start",
                    }
                )
                # A new file is a new launch: nothing decided about the old one carries over.
                self.announced_ready, self.health_ok, self.crash = False, False, None
                self.findings_seen.clear()
        except _Stop as stop:
            return stop.code
        finally:
            self.tail.close()
            self.out.finish()

    def _tick(self) -> None:
        """Periodic work; raises _Stop to end the run."""
        now = time.monotonic()
        live = self.live
        if not self.tail.opened and not self.waiting_said and now - self.start > 1.0:
            self.waiting_said = True
            self.out.emit(
                {
                    "event": "input",
                    "what": "waiting",
                    "message": f"waiting for {safe(self.path)} to appear",
                }
            )
        if not self.announced_ready and live.check_ready(now):
            self._ready_reached(now)
        quiet = self.opts.quiet_s
        if (
            live.shutdown_line is not None
            and live.suspect_at is None
            and now - live.last_line_at >= quiet
        ):
            live.suspect_at = now  # a shutdown: let the engine say how it ended
        if self.crash is not None and now - self.crash[0] >= quiet:
            _, lines, entry = self.crash
            self.crash = None
            if live.lines == lines:
                self._exit(EXIT_CRASHED, "crashed", entry)
            live.suspect_at = live.suspect_at or now  # more lines came: decide again when quiet
        elif self.crash is None and live.wants_analysis(
            now, self.analysis_at, self.analysis_cost, quiet
        ):
            self._analyse(now)
        for change in live.stalls(now):
            self.out.emit(
                {
                    "event": "stall",
                    "rank": change.rank,
                    "phase": change.phase,
                    "silent_s": round(change.silent_s, 1),
                    "allowance_s": round(change.allowance_s, 1),
                    "last_line_no": change.line,
                    "last_line": safe(change.last_line),
                }
            )
        if self.opts.timeout is not None and now - self.start >= self.opts.timeout:
            self._timed_out(now)
        if (
            self.announced_ready
            and self.opts.until == "exit"
            and live.serving
            and not self.out.live
            and now - self.serving_at >= SERVING_EVERY_S
        ):
            self.serving_at = now
            self.out.emit({"event": "serving", **live.serving})
        if self.out.live and now - self.redrawn_at >= REDRAW_EVERY_S:
            self.redrawn_at = now
            self.out.redraw(self._live_lines(now))

    def _phase_changes(self) -> None:
        durations = {
            (r, p.name): p.duration_s for r, plist in self.live.phases.items() for p in plist
        }
        for c in self.live.take_changes():
            if c.kind == "attempt":
                # The server was launched again: what was decided about the last attempt is void.
                self.announced_ready, self.health_ok = False, False
                self.out.emit({"event": "attempt", "line": c.line})
                continue
            d = durations.get((c.rank, c.phase or "")) if c.complete else None
            self.out.emit(
                {
                    "event": "phase",
                    "rank": c.rank,
                    "phase": c.phase,
                    "state": "done" if c.complete else "started",
                    "line": c.line,
                    "duration_s": None if d is None else round(d, 2),
                    "t": round(time.monotonic() - self.start, 2),
                }
            )

    # ------------------------------------------------------------------ readiness

    def _ready_reached(self, now: float) -> None:
        live = self.live
        if not live.check_ready(now):
            return
        if self.opts.health is not None and not self._healthy(now):
            return
        self.announced_ready = True
        time_to_ready, by_rank = self._startup_facts()
        phases = {
            rank: [
                {
                    "phase": p.name,
                    "duration_s": None if p.duration_s is None else round(p.duration_s, 2),
                    "complete": p.complete,
                }
                for p in plist
            ]
            for rank, plist in sorted(by_rank.items(), key=_rank_order)
        }
        self.out.emit(
            {
                "event": "ready",
                "line": live.ready_line,
                "time_to_ready_s": time_to_ready,
                "followed_s": round(now - self.start, 2),
                "health": self.opts.health is not None,
                "phases": phases,
            }
        )
        if self.opts.until == "ready":
            raise _Stop(EXIT_READY)

    def _startup_facts(self) -> tuple[float | None, dict[str, list[Phase]]]:
        """Time to ready and per-rank phases of the ready attempt, from the run model over the
        whole input (exactly what `analyze` prints) when it is small enough to parse at once;
        else the live state's (its phases are the same run-model function over the phase events
        kept since the attempt began; time to ready from the attempt's first timestamp)."""
        from logparse.io.reader import InputError

        live = self.live
        path = self.tail.analysis_path
        try:
            if live.ready_line is not None and os.path.getsize(path) <= EXACT_READY_MAX_BYTES:
                from logparse.parsing.pipeline import parse_file
                from logparse.run.model import run_of

                life = run_of(parse_file(path)).lifecycle_at(live.ready_line)
                return life.time_to_ready_s, life.phases
        except (InputError, OSError):
            pass
        return live.time_to_ready_s(), live.phases

    def _healthy(self, now: float) -> bool:
        """GET --health (2 s timeout) once the log shows the HTTP server started; 200 is healthy."""
        if self.health_ok:
            return True
        if not self.live.http_started or now - self.health_at < max(self.opts.poll, 0.2):
            return False
        self.health_at = now
        url = self.opts.health
        assert url is not None
        import urllib.error  # only with --health (urllib.request costs ~60 ms to import)
        import urllib.request

        try:
            with urllib.request.urlopen(
                url, timeout=HEALTH_TIMEOUT_S
            ) as resp:  # http(s) only: the CLI checks
                self.health_ok = resp.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            self.health_ok = False
        return self.health_ok

    # ------------------------------------------------------------------ the engine

    def _analyse(self, now: float) -> None:
        """Run the engine on everything read so far; report new findings; stop on a crash or,
        after a shutdown, with the verdict."""
        from logparse.engine.core import analyze
        from logparse.io.reader import InputError
        from logparse.render.json import document

        live = self.live
        live.analysed()
        began = time.monotonic()
        try:
            analysis = analyze(self.tail.analysis_path)
        except InputError:
            return  # e.g. still empty
        entry = document([analysis])["files"][0]
        self.analysis_cost = time.monotonic() - began
        self.analysis_at = time.monotonic()
        outcome = entry.get("outcome")
        for f in entry["findings"]:
            key = (f["code"], f["evidence"][0]["line"] if f["evidence"] else 0)
            # On a crash the exit event carries every finding, laid out as `analyze` does.
            if key not in self.findings_seen and outcome not in CRASHED:
                self.findings_seen.add(key)
                self.out.emit(
                    {
                        "event": "finding",
                        "code": f["code"],
                        "name": f["name"],
                        "severity": f["severity"],
                        "message": f["message"],
                        "remedy": f["remedy"],
                        "first_line": key[1],
                        "ranks": f.get("ranks", []),
                    }
                )
        if outcome in CRASHED:
            self.crash = (time.monotonic(), live.lines, entry)
            return
        if live.shutdown_line is not None:
            if self.announced_ready and self.opts.until == "exit":
                self._exit(EXIT_READY, "stopped", entry)
            if not self.announced_ready:
                self._exit(
                    EXIT_CRASHED, "stopped", entry, "the server shut down before it was ready"
                )

    def _exit(
        self, code: int, reason: str, entry: dict[str, Any] | None, message: str = ""
    ) -> None:
        self.out.emit(
            {
                "event": "exit",
                "code": code,
                "reason": reason,
                "outcome": entry.get("outcome") if entry else None,
                "root_cause": entry.get("root_cause") if entry else None,
                "findings": entry.get("findings", []) if entry else [],
                "message": message,
            }
        )
        raise _Stop(code)

    def _input_ended(self) -> int:
        """A pipe closed: the server process is gone (or its output went elsewhere)."""
        now = time.monotonic()
        try:
            if not self.announced_ready and self.live.check_ready(now, ended=True):
                self._ready_reached(now)
            from logparse.engine.core import analyze
            from logparse.io.reader import InputError
            from logparse.render.json import document

            try:
                entry: dict[str, Any] | None = document([analyze(self.tail.analysis_path)])[
                    "files"
                ][0]
            except InputError:
                entry = None
            outcome = entry.get("outcome") if entry else None
            if outcome in CRASHED:
                self._exit(EXIT_CRASHED, "crashed", entry)
            if self.announced_ready:
                self._exit(EXIT_READY, "stopped", entry, "the input ended")
            self._exit(EXIT_CRASHED, "ended", entry, "the input ended before the server was ready")
        except _Stop as stop:
            return stop.code
        return EXIT_CRASHED

    # ------------------------------------------------------------------ timeout and the live block

    def _timed_out(self, now: float) -> None:
        ranks = {}
        for state in sorted(self.live.ranks.values(), key=lambda s: _rank_order((s.rank, None))):
            ranks[state.rank] = {
                "phase": state.phase,
                "complete": state.complete,
                "in_phase_s": round(now - state.entered, 1),
                "silent_s": round(now - state.last_at, 1) if state.last_at else None,
                "last_line_no": state.last_no,
                "last_line": safe(state.last_line),
            }
        self.out.emit(
            {
                "event": "timeout",
                "after_s": round(now - self.start, 1),
                "ranks": ranks,
                "ready": self.announced_ready,
                "appeared": self.tail.opened,
                "lines": self.live.lines,
                "path": safe(self.path),
            }
        )
        raise _Stop(EXIT_TIMEOUT)

    def _live_lines(self, now: float) -> list[str]:
        live = self.live
        head = (
            f"following {safe(self.path, 60)} — {live.lines:,} lines, {seconds(now - self.start)}"
        )
        if self.announced_ready:
            head += " — " + serving_text(live.serving)
        lines = [head]
        for state in sorted(live.ranks.values(), key=lambda s: _rank_order((s.rank, None))):
            phase = state.phase or "starting"
            what = f"{phase} done" if state.complete else phase
            line = f"{state.rank:>8}  {what:<22} {seconds(now - state.entered):>7}"
            silent = now - state.last_at if state.last_at else 0.0
            if silent >= 10:
                line += f"  silent {seconds(silent)}" + (
                    " (possibly stalled)" if state.stalled else ""
                )
            lines.append(line)
        for p in live.progress.values():
            if p.percent != 100:
                lines.append("          " + progress_text(p.as_dict(now)))
        return lines


def _rank_order(item: tuple[str, Any]) -> tuple[int, tuple[Any, ...]]:
    rank = item[0]
    return (1, ()) if rank == MAIN else (0, rank_key(rank))
