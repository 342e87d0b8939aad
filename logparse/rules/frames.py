"""Structural facts about tracebacks for rules: where a record is, its frames, whether SGLang's
argument processing raised it. Plain comparisons on event fields; no text matching."""

from __future__ import annotations

from bisect import bisect_right

from logparse.model.events import KnownMessage, LaunchCommand, ShellSignal, Traceback
from logparse.rules.context import RuleContext

# Functions of SGLang's argument handling (ServerArgs and its _handle_* steps across 0.3–0.5.x,
# argparse itself): a traceback whose innermost frame is one of them is an argument check.
ARGS_FUNCS = frozenset({
    "__post_init__", "check_server_args", "prepare_server_args", "from_cli_args", "_handle_speculative_decoding",
    "_handle_model_specific_adjustments", "_handle_mamba_radix_cache", "_handle_gpu_memory_settings",
    "_handle_attention_backend_compatibility", "_handle_cache_compatibility", "_handle_data_parallelism",
    "_handle_moe_kernel_config", "_handle_a2a_moe", "_handle_deterministic_inference", "check_lora_server_args",
    "_handle_other_validations", "_handle_context_parallelism", "_handle_elastic_ep", "parse_args",
})
# Files whose frames mean the exception was raised after argument processing, inside a running
# server process (scheduler, model runner, worker, memory pools).
SERVER_PROCESS_FILES = frozenset({
    "scheduler.py", "model_runner.py", "tp_worker.py", "memory_pool.py", "mamba_radix_cache.py",
    "radix_cache.py", "schedule_batch.py", "eagle_worker.py", "cuda_graph_runner.py",
})
# Entry functions of the scheduler process loop (any release).
SCHEDULER_LOOP_FUNCS = frozenset({"run_scheduler_process", "event_loop_normal", "event_loop_overlap"})


def file_name(path: str) -> str:
    """The last component of a frame path (either separator)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def in_sglang(path: str) -> bool:
    """Whether a frame path is inside SGLang or its kernel package."""
    return "sglang" in path or "sgl_kernel" in path or "sgl-kernel" in path


def frame_funcs(tb: Traceback | None) -> list[str]:
    return [f.func for f in tb.frames if f.func] if tb is not None else []


def frame_files(tb: Traceback | None) -> list[str]:
    return [file_name(f.path) for f in tb.frames] if tb is not None else []


def first_sglang_frame(tb: Traceback | None) -> str | None:
    """`file.py:LINE in func` of the innermost frame inside SGLang (else the innermost frame)."""
    if tb is None or not tb.frames:
        return None
    sg = [f for f in tb.frames if in_sglang(f.path)]
    f = (sg or list(tb.frames))[-1]
    if f.lineno is None and not f.func:
        path = f.path.replace(chr(92), "/")
        tail = path[-60:]
        if len(path) > 60 and "/" in tail:
            tail = "…/" + tail.split("/", 1)[1]  # whole path components: not `space/sglang/…`
        return f"{tail} (cut)"
    name = file_name(f.path)
    where = f"{name}:{f.lineno}" if f.lineno else name
    return f"{where} in {f.func}" if f.func else where


def is_args_traceback(tb: Traceback | None) -> bool:
    """An exception raised by SGLang's argument processing (main process, before any scheduler):
    a frame of a server_args.py function and none in a server process, or the innermost frame an
    args step."""
    if tb is None:
        return False
    files = set(frame_files(tb))
    funcs = frame_funcs(tb)
    if files & SERVER_PROCESS_FILES or set(funcs) & SCHEDULER_LOOP_FUNCS:
        return False
    # A function of server_args.py ran (prepare_server_args, __post_init__, a check): an import
    # chain through its module level (`<module>`, importing what it needs) is an import failure.
    if any(file_name(f.path) == "server_args.py" and f.func != "<module>" for f in tb.frames):
        return True
    return bool(funcs) and funcs[-1] in ARGS_FUNCS


def traceback_at(ctx: RuleContext, line: int) -> Traceback | None:
    """The assembled traceback whose line range holds `line`."""
    for tb in ctx.log.of(Traceback):
        if tb.line <= line <= (tb.end_line or tb.line):
            return tb
    return None


def _tracebacks(ctx: RuleContext) -> tuple[list[Traceback], list[int]]:
    """The tracebacks in file order and their first lines, built once per state of the events:
    the lookups below bisect instead of scanning every traceback per call (that was quadratic
    in the tracebacks of a failure-heavy log)."""
    key = (id(ctx.log.events), len(ctx.log.events))
    cached = ctx.__dict__.get("_tracebacks")
    if cached is None or cached[0] != key:
        tbs = ctx.log.of(Traceback)
        cached = ctx.__dict__["_tracebacks"] = (key, tbs, [tb.line for tb in tbs])
    return cached[1], cached[2]


def traceback_after(ctx: RuleContext, line: int, within: int = 4, rank: str | None = None) -> Traceback | None:
    """The first traceback that starts within `within` lines after `line` (on `rank` when the
    traceback has a rank and `rank` is given): the record a one-line error message precedes."""
    tbs, starts = _tracebacks(ctx)
    for i in range(bisect_right(starts, line), len(tbs)):  # no scan from the start, no copy
        tb = tbs[i]
        if tb.line > line + _SPAN * within:
            break
        if _distance(ctx, line, tb.line) <= within:
            if rank and tb.rank and tb.rank != rank:
                continue
            return tb
    return None


# How many physical lines per text line a search may look past: a double-spaced paste (x2) of a
# report that itself had a blank line between its lines (x2).
_SPAN = 4


def _distance(ctx: RuleContext, line: int, later: int) -> int:
    """How many lines `later` comes after `line`, counting only lines that hold text: blank lines
    (a double-spaced paste, a blank line between two reports) do not separate them. A
    double-spaced paste doubles a distance, blank lines of the report's own included, hence the
    callers' `_SPAN * within` bound on physical lines."""
    texts = ctx.log.texts
    return 1 + sum(1 for n in range(line + 1, later) if n in texts)


def echo_after(ctx: RuleContext, tb: Traceback | None, within: int = 3) -> Traceback | None:
    """A traceback cut before its exception line that starts right after `tb` ends: the same failure
    reported again by the parent process (`Exception in ControllerSingle:` after the worker's own
    traceback), not a second error."""
    if tb is None:
        return None
    end = tb.end_line or tb.line
    tbs, starts = _tracebacks(ctx)
    for i in range(bisect_right(starts, end), len(tbs)):
        other = tbs[i]
        if other.line > end + _SPAN * within:
            break
        if _distance(ctx, end, other.line) <= within and other.exc_type is None and other.line not in ctx.claimed:
            return other
    return None


def is_command_line(ctx: RuleContext, line: int) -> bool:
    """Whether the line is (part of) a pasted shell command, not something SGLang printed."""
    return any(e.line <= line <= e.end_line for e in ctx.log.of(LaunchCommand))  # commands span lines


# Functions of SGLang's graph capture (cuda_graph_runner and its piecewise / draft / prefill variants).
CAPTURE_FUNCS = frozenset({"capture", "capture_one_batch_size", "init_cuda_graphs", "init_device_graphs"})


def in_graph_capture(ctx: RuleContext, tb: Traceback | None) -> bool:
    """Whether a traceback was raised while SGLang captured CUDA graphs: its frames go through the
    capture, or its message is SGLang's `Capture … graph failed` wrapper (catalog)."""
    if tb is None:
        return False
    if set(frame_funcs(tb)) & CAPTURE_FUNCS:
        return True
    messages = [tb.message, *(m for _, m in tb.chain)]
    return any(ctx.match("cuda-graph-capture-failed", m or "") is not None for m in messages)


# ------------------------------------------------------------------ native crash dumps (faulthandler)

# `Traceback.process` of a faulthandler thread dump (parsing/records.py), whose frames are stored
# outermost first like any traceback: the last one is where the thread was when the signal came.
FAULTHANDLER = "faulthandler"
# How many lines back from a thread's dump its `Fatal Python error: …` line may be: the other
# threads' dumps come first (faulthandler prints every thread, the crashing one marked `Current`).
_DUMP_LINES = 512


def _current_thread_lines(ctx: RuleContext) -> set[int]:
    cached = ctx.__dict__.get("_current_threads")
    if cached is None:
        cached = ctx.__dict__["_current_threads"] = {
            e.line for e in ctx.log.of(KnownMessage)
            if e.code == "faulthandler-thread" and e.fields.get("current")
        }
    return cached  # type: ignore[no-any-return]


def native_crash(ctx: RuleContext, tb: Traceback) -> ShellSignal | None:
    """The fatal-signal line of the native-crash dump whose crashing thread `tb` is, else None.

    Python's faulthandler, on a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL), prints
    `Fatal Python error: <signal>`, a blank line, then one dump per thread, the thread that received
    the signal headed `Current thread 0x… (most recent call first):`. Only that thread crashed; the
    others (`Thread 0x…`) are bystanders, and a dump with no fatal line before it (SIGUSR1,
    `dump_traceback_later`) is a snapshot, not a crash. Structure only: the dump's header, the
    lines between it and the fatal line (blank or other threads' dumps)."""
    if tb.process != FAULTHANDLER or tb.line not in _current_thread_lines(ctx):
        return None
    signals = {e.line: e for e in ctx.log.of(ShellSignal)}
    dumps = {t.line: t for t in ctx.log.of(Traceback) if t.process == FAULTHANDLER}
    ends = {(t.end_line or t.line): t for t in dumps.values()}
    texts = ctx.log.texts
    n = tb.line - 1
    while n > 0 and tb.line - n <= _DUMP_LINES:
        if n in signals:
            return signals[n]
        if n in ends:
            n = ends[n].line - 1  # another thread of the same dump
            continue
        if texts.get(n, "").strip():
            return None  # other output between: not this dump's fatal line
        n -= 1
    return None


def ends_at_native_crash(ctx: RuleContext, tb: Traceback) -> bool:
    """A run of frames with no header and no exception line that ends right before a fatal-signal
    line: the last thread of an earlier native-crash dump (another process's, whose first lines the
    excerpt lost), not an exception — a Python traceback ends with its exception line."""
    if not tb.headless or tb.exc_type is not None:
        return False
    signals = {e.line for e in ctx.log.of(ShellSignal)}
    end = tb.end_line or tb.line
    for n in range(end + 1, end + 4):  # a blank line or two may separate them
        if n in signals:
            return True
        if ctx.log.texts.get(n, "").strip():
            return False
    return False


def crashing_frame(tb: Traceback) -> str | None:
    """`file.py:LINE in func` of the frame a native-crash dump's thread was in (its innermost
    frame); None when the dump shows no complete frame (cut right after its header)."""
    f = tb.frames[-1] if tb.frames else None  # printed first, so only a one-frame dump can cut it
    if f is None or not f.func:
        return None
    where = f"{file_name(f.path)}:{f.lineno}" if f.lineno else file_name(f.path)
    return f"{where} in {f.func}"
