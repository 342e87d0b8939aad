"""How `logdiag follow` speaks: live lines on a terminal, plain lines in CI, NDJSON for tools.

The session hands every event of interest over as one dict (`{"event": "phase"|"finding"|"stall"|
"ready"|"exit"|"timeout"|"input"|"serving", ...}`); a renderer decides how it looks:

- `JsonRenderer`: the dict itself, one JSON object per line, flushed at once (tools read it live);
- `PlainRenderer`: one line per event, no control codes (a CI log, a pipe);
- `TtyRenderer`: the plain lines scroll above a block of live lines (one per rank: phase, time in
  phase, progress with rate and ETA; a serving status once ready) that is redrawn in place with
  ANSI cursor movement.

Log text shown (a stalled rank's last line, evidence) is redacted and made one line first.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from logparse.render.neutral import one_line
from logparse.render.redact import redact_text
from logparse.render.text import (
    finding_lines,  # analyze's own layout of a finding
)

WIDTH = 100


def safe(text: str, limit: int = 240) -> str:
    """Log text for a terminal or CI log: secrets masked, one line, bounded."""
    out = one_line(redact_text(text))
    return out if len(out) <= limit else out[: limit - 1] + "…"


def seconds(s: float | None) -> str:
    """'42s', '3m05s', '1h02m'."""
    if s is None:
        return "?"
    s = max(0.0, s)
    if s < 60:
        return f"{s:.0f}s" if s >= 10 else f"{s:.1f}s"
    m, sec = divmod(int(s), 60)
    if m < 60:
        return f"{m}m{sec:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def progress_text(p: dict[str, Any]) -> str:
    """'checkpoint-load 12/94 (13%, 0.33/s, ETA 4m10s)'."""
    count = f"{p['n']}/{p['total']}" if p.get("total") else str(p.get("n") or "")
    bits = [f"{p['percent']}%"] if p.get("percent") is not None else []
    if p.get("rate_per_s"):
        rate = p["rate_per_s"]
        bits.append(f"{rate:.2f}/s" if rate >= 1 else f"{1 / rate:.1f}s/it")
    if p.get("eta_s") is not None and p.get("percent") != 100:
        bits.append(f"ETA {seconds(p['eta_s'])}")
    return f"{p['kind']} {count}" + (f" ({', '.join(bits)})" if bits else "")


def serving_text(s: dict[str, Any]) -> str:
    """'serving: 1,223 tok/s, running 25, queued 0, token usage 0.05, accept length 3.06'."""
    parts = []
    if s.get("gen_throughput") is not None:
        parts.append(f"{s['gen_throughput']:,.0f} tok/s")
    for key, name in (
        ("running", "running"),
        ("queue", "queued"),
        ("token_usage", "token usage"),
        ("accept_len", "accept length"),
    ):
        if s.get(key) is not None:
            parts.append(f"{name} {s[key]}")
    return "serving: " + (", ".join(parts) if parts else "no decode stats yet")


def event_line(ev: dict[str, Any]) -> list[str]:
    """The plain-text lines of one event."""
    kind = ev["event"]
    if kind == "phase":
        head = f"{ev['rank']:>8}  {ev['phase']} {'done' if ev['state'] == 'done' else 'started'}"
        if ev.get("duration_s") is not None:
            head += f" ({seconds(ev['duration_s'])})"
        return [head + f"  [line {ev['line']}]"]
    if kind == "finding":
        return [
            f"finding: [{ev['severity'].upper()}] {ev['name']} ({ev['code']}): {safe(ev['message'])}"
            + (f" — fix: {safe(ev['remedy'])}" if ev.get("remedy") else "")
        ]
    if kind == "stall":
        phase = ev["phase"] or "start-up"
        return [
            f"{ev['rank']:>8}  possibly stalled in {phase}: nothing printed for {seconds(ev['silent_s'])} "
            f"(usually within {seconds(ev['allowance_s'])}); last line {ev['last_line_no']}: "
            + safe(ev["last_line"], 160)
        ]
    if kind == "attempt":
        return [f"new launch attempt at line {ev['line']}: following its start-up"]
    if kind == "input":
        return [f"logdiag follow: {ev['message']}"]
    if kind == "serving":
        return [serving_text(ev)]
    if kind == "ready":
        head = f"ready: line {ev['line']}"
        if ev.get("time_to_ready_s") is not None:
            head += f", {seconds(ev['time_to_ready_s'])} after the launch's first timestamp"
        head += f" (followed {seconds(ev['followed_s'])}"
        head += ", health check answered 200)" if ev.get("health") else ")"
        out = [head]
        for rank, phases in ev.get("phases", {}).items():
            shown = ", ".join(
                f"{p['phase']} {seconds(p['duration_s']) if p['duration_s'] is not None else '?'}"
                + ("" if p["complete"] else " (unfinished)")
                for p in phases
            )
            out.append(f"  {rank:>8}: {shown}")
        return out
    if kind == "timeout":
        out = [f"timeout: not ready after {seconds(ev['after_s'])}"]
        if not ev.get("appeared", True):
            out[0] += f" ({ev.get('path', 'the log')} never appeared)"
        elif not ev.get("ranks"):
            out[0] += f" ({ev.get('lines', 0)} lines read, none from a rank or a start-up phase)"
        for rank, r in ev.get("ranks", {}).items():
            phase = r["phase"] or "(no phase yet)"
            state = "done, next not started" if r["complete"] else "in progress"
            out.append(
                f"  {rank:>8}: {phase} {state}; printed nothing for {seconds(r['silent_s'])}"
                + (
                    f"; last line {r['last_line_no']}: {safe(r['last_line'], 120)}"
                    if r.get("last_line")
                    else ""
                )
            )
        return out
    if kind == "exit":
        return exit_lines(ev)
    return [safe(json.dumps(ev))]


def exit_lines(ev: dict[str, Any]) -> list[str]:
    """The verdict when following ends without readiness: the outcome, then the root cause and the
    other findings exactly as `logdiag analyze` prints them."""
    reason = ev.get("reason", "")
    outcome = ev.get("outcome") or "outcome unknown"
    shown = "failed" if reason == "crashed" else reason  # 'crashed' covers hung servers too
    out = [f"{shown}: {outcome}" + (f" — {ev['message']}" if ev.get("message") else "")]
    root = ev.get("root_cause")
    if root:
        out.append("root cause:")
        out.extend(finding_lines(root))
    others = [
        f
        for f in ev.get("findings", [])
        if not root or f["code"] != root["code"] or f.get("evidence") != root.get("evidence")
    ]
    if others and reason != "stopped":  # a clean stop: its findings were reported as they appeared
        out.append("findings:")
        for f in others:
            out.extend(finding_lines(f))
    return out


class JsonRenderer:
    """Newline-delimited JSON, one object per event; no live lines."""

    live = False

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def emit(self, ev: dict[str, Any]) -> None:
        self.out.write(json.dumps(ev, ensure_ascii=False, default=str, allow_nan=False) + "\n")
        self.out.flush()

    def redraw(self, lines: list[str]) -> None:
        pass

    def finish(self) -> None:
        pass


class PlainRenderer(JsonRenderer):
    """One plain line per event (no control codes)."""

    def emit(self, ev: dict[str, Any]) -> None:
        for line in event_line(ev):
            self.out.write(line + "\n")
        self.out.flush()


class TtyRenderer(PlainRenderer):
    """Plain lines scroll; the live block (one line per rank) is redrawn in place below them."""

    live = True

    def __init__(self, out: TextIO, width: int = WIDTH) -> None:
        super().__init__(out)
        self.width = width
        self.drawn = 0
        self.block: list[str] = []

    def _clear(self) -> None:
        if self.drawn:
            # Up to the block's first line, then erase to the end of the screen.
            self.out.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = 0

    def _draw(self) -> None:
        for line in self.block:
            self.out.write(line[: self.width - 1] + "\n")
        self.drawn = len(self.block)

    def emit(self, ev: dict[str, Any]) -> None:
        if ev["event"] == "phase":
            return  # the live block shows phases; scrolling lines are for what must stay visible
        self._clear()
        for line in event_line(ev):
            self.out.write(line + "\n")
        if ev["event"] not in ("ready", "exit", "timeout"):
            self._draw()
        else:
            self.block = []
        self.out.flush()

    def redraw(self, lines: list[str]) -> None:
        if lines == self.block and self.drawn:
            return
        self._clear()
        self.block = lines
        self._draw()
        self.out.flush()

    def finish(self) -> None:
        self._clear()
        self.block = []
        self.out.flush()
