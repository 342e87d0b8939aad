"""Shared matching helpers for the kernels, quantization, speculative, server, performance and info
rules: find an error by its text wherever the log shows it (an assembled traceback, a lone exception
line, a known message or a line the grammar does not know), and the traceback it belongs to."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from logparse.model.events import Event, LaunchCommand, PythonWarning, ServerArgs, Traceback
from logparse.rules.context import RuleContext

# Functions of SGLang's argument handling: a traceback through them is an argument check.
ARGS_FUNCS = frozenset({
    "__post_init__", "check_server_args", "prepare_server_args", "from_cli_args", "_handle_speculative_decoding",
    "_handle_model_specific_adjustments", "_handle_mamba_radix_cache", "_handle_gpu_memory_settings",
    "_handle_attention_backend_compatibility", "_handle_cache_compatibility", "_handle_data_parallelism",
    "_handle_moe_kernel_config", "_handle_a2a_moe", "_handle_deterministic_inference", "check_lora_server_args",
    "_handle_other_validations", "_handle_context_parallelism", "_handle_elastic_ep", "parse_args",
})


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


def traceback_at(ctx: RuleContext, line: int) -> Traceback | None:
    """The assembled traceback whose line range holds `line`."""
    for tb in ctx.log.of(Traceback):
        if tb.line <= line <= (tb.end_line or tb.line):
            return tb
    return None


def traceback_after(ctx: RuleContext, line: int, within: int = 4, rank: str | None = None) -> Traceback | None:
    """The first traceback that starts within `within` lines after `line` (on `rank` when the
    traceback has a rank and `rank` is given): the record a one-line error message precedes."""
    for tb in ctx.log.of(Traceback):
        if line < tb.line <= line + within:
            if rank and tb.rank and tb.rank != rank:
                continue
            return tb
        if tb.line > line + within:
            break
    return None


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
                cited = _event_at(ctx, no)
            hits.append(Hit(no, ctx.text(no), m, tb, cited))
    hits.sort(key=lambda h: h.line)
    return hits


def _event_at(ctx: RuleContext, line: int) -> Event:
    for e in ctx.log.events:
        if e.line == line:
            return e
        if e.line > line:
            break
    return Event(line=line, end_line=line)


def is_command_line(ctx: RuleContext, line: int) -> bool:
    """Whether the line is (part of) a pasted shell command, not something SGLang printed."""
    return any(e.line == line for e in ctx.log.of(LaunchCommand))


def frame_funcs(tb: Traceback | None) -> list[str]:
    return [f.func for f in tb.frames if f.func] if tb is not None else []


def frame_files(tb: Traceback | None) -> list[str]:
    return [f.path.replace("\\", "/").rsplit("/", 1)[-1] for f in tb.frames] if tb is not None else []


def first_sglang_frame(tb: Traceback | None) -> str | None:
    """`file.py:LINE in func` of the innermost frame inside SGLang (else the innermost frame)."""
    if tb is None or not tb.frames:
        return None
    sg = [f for f in tb.frames if "sglang" in f.path or "sgl_kernel" in f.path]
    f = (sg or list(tb.frames))[-1]
    name = f.path.replace("\\", "/").rsplit("/", 1)[-1]
    if f.lineno is None and not f.func:
        return f"{f.path.replace(chr(92), '/')[-60:]} (cut)"
    where = f"{name}:{f.lineno}" if f.lineno else name
    return f"{where} in {f.func}" if f.func else where


def is_args_traceback(tb: Traceback | None) -> bool:
    """An exception raised by SGLang's argument processing (main process, before any scheduler)."""
    if tb is None:
        return False
    files = frame_files(tb)
    funcs = frame_funcs(tb)
    if "server_args.py" in files and not any(f in ("scheduler.py", "model_runner.py", "tp_worker.py") for f in files):
        return True
    return bool(funcs) and funcs[-1] in ARGS_FUNCS


def short(text: str, n: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


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


def echo_after(ctx: RuleContext, tb: Traceback | None, within: int = 3) -> Traceback | None:
    """A traceback cut before its exception line that starts right after `tb` ends: the same failure
    reported again by the parent process (`Exception in ControllerSingle:` after the worker's own
    traceback), not a second error."""
    if tb is None:
        return None
    end = tb.end_line or tb.line
    for other in ctx.log.of(Traceback):
        if end < other.line <= end + within and other.exc_type is None and other.line not in ctx.claimed:
            return other
        if other.line > end + within:
            break
    return None
