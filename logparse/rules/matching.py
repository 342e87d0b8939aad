"""Legacy regex helpers (find_errors, python_warnings) still used by the kernels, quantization and
speculative rules, and per-launch arguments; the catalog-based replacements are rules.errors
(find_message, warnings_with) and rules.frames. Removed once nothing imports it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logparse.model.events import Event, LaunchCommand, PythonWarning, ServerArgs, Traceback
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import event_at
from logparse.rules.frames import (
    ARGS_FUNCS,
    echo_after,
    first_sglang_frame,
    frame_files,
    frame_funcs,
    is_args_traceback,
    is_command_line,
    traceback_after,
    traceback_at,
)

# Re-exported while the kernels, quantization and speculative rules still import them from here:
# new code imports rules.frames / rules.errors / model.text directly.
__all__ = [
    "ARGS_FUNCS", "Hit", "arg_at", "echo_after", "find_errors", "first_sglang_frame", "frame_files", "frame_funcs",
    "is_args_traceback", "is_command_line", "launch_config", "python_warnings", "short", "traceback_after",
    "traceback_at",
]

@dataclass(frozen=True)
class Hit:
    """One place the log shows a matched error: `line` is where the text matched; `traceback` the
    assembled record it belongs to (None for a lone line); `event` what to cite and claim."""

    line: int
    text: str
    match: re.Match[str]
    traceback: Traceback | None
    event: Event

    @property
    def rank(self) -> str | None:
        return self.event.rank


def find_errors(ctx: RuleContext, pattern: re.Pattern[str], *, include_claimed: bool = False,
                texts: bool = True) -> list[Hit]:
    """Every place the log shows `pattern`: exceptions (each of a traceback's chain, lone exception
    lines), then kept text lines outside those (known messages, unparsed lines). One hit per
    traceback. Claimed lines are skipped unless `include_claimed`."""
    hits: list[Hit] = []
    seen_tb: set[int] = set()
    covered: set[int] = set()
    for r in ctx.raised():
        text = r.text
        m = pattern.search(text)
        if not m:
            continue
        ev = r.traceback or r.event
        if not include_claimed and ev.line in ctx.claimed:
            continue
        if r.traceback is not None:
            if r.traceback.line in seen_tb:
                continue
            seen_tb.add(r.traceback.line)
            covered.update(range(r.traceback.line, (r.traceback.end_line or r.traceback.line) + 1))
        else:
            covered.add(ev.line)
        hits.append(Hit(ev.line, text, m, r.traceback, ev))
    if texts:
        for no, m in ctx.texts_matching(pattern, unclaimed=not include_claimed):
            if no in covered:
                continue
            tb = traceback_at(ctx, no)
            if tb is not None:
                if tb.line in seen_tb:
                    continue
                seen_tb.add(tb.line)
                covered.update(range(tb.line, (tb.end_line or tb.line) + 1))
                cited: Event = tb
            else:
                cited = event_at(ctx, no)
            hits.append(Hit(no, ctx.text(no), m, tb, cited))
    hits.sort(key=lambda h: h.line)
    return hits


def python_warnings(ctx: RuleContext, pattern: re.Pattern[str]) -> Iterator[PythonWarning]:
    for w in ctx.log.of(PythonWarning):
        if pattern.search(w.message):
            yield w


def launch_config(ctx: RuleContext, line: int | None) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The server arguments and environment of the launch that `line` belongs to, when the log holds
    several launches (pasted commands and `server_args=` lines): the last server command before the
    line and the `server_args=` printed after that command (snake_case keys; flags without `--`).
    None when the log holds at most one launch, so callers use the whole-log views."""
    if line is None:
        return None
    commands = [e for e in ctx.log.of(LaunchCommand) if e.program and "bench" not in e.program]
    args_lines = ctx.log.of(ServerArgs)
    if len(commands) + len(args_lines) <= 1 or (len(commands) <= 1 and len(args_lines) <= 1):
        return None
    before = [c for c in commands if c.line < line]
    cmd = before[-1] if before else None
    args: dict[str, Any] = {}
    env: dict[str, str] = {}
    if cmd is not None:
        for flag, value in cmd.flags.items():
            args[flag.lstrip("-").replace("-", "_")] = value
        aliases = {"tp": "tp_size", "tensor_parallel_size": "tp_size", "dp": "dp_size", "ep": "ep_size",
                   "model": "model_path"}
        for short_name, long_name in aliases.items():
            if short_name in args and long_name not in args:
                args[long_name] = args[short_name]
        env = dict(cmd.env)
    start = cmd.line if cmd is not None else 0
    for sa in args_lines:
        if start < sa.line < line:
            args.update(sa.args)
    return args, env


def arg_at(ctx: RuleContext, name: str, line: int | None) -> Any:
    """A server argument of the launch `line` belongs to (see `launch_config`), else of the whole log."""
    per_launch = launch_config(ctx, line)
    if per_launch is None:
        return ctx.views.arg(name)
    return per_launch[0].get(name)
