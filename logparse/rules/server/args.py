"""invalid-server-args (fallback): the server arguments were rejected before any scheduler started."""

from __future__ import annotations

from collections.abc import Iterator

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.frames import first_sglang_frame, is_args_traceback
from logparse.rules.registry import rule
from logparse.run.model import run_of
from logparse.run.stage import traceback_phase

# The exception types SGLang's argument checks raise.
_CHECK_TYPES = ("ValueError", "AssertionError")


def _arg_remedy(ctx: RuleContext, message: str) -> str:
    if (m := ctx.match("context-length-too-long", message)) and m.get("derived") is not None:
        return (f"`--context-length {m['derived']}` (the model's limit), or set "
                f"`SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1` to keep {m.get('user', 'it')} at your own risk")
    if ctx.match("chunked-prefill-page-size", message) is not None:
        page = ctx.views.arg("page_size")
        chunk = ctx.views.arg("chunked_prefill_size")
        if isinstance(page, int) and isinstance(chunk, int) and page > 0:
            return f"`--chunked-prefill-size {chunk // page * page or page}` (a multiple of --page-size {page})"
    if (m := ctx.match("tp-ep-divisible", message)) and isinstance(m.get("tp"), int):
        tp = m["tp"]
        eps = [e for e in (1, 2, 4, 8, 16, 32) if tp % e == 0]
        return f"`--ep-size` dividing --tp {tp}: one of {eps}"
    return f"the constraint the message states: {short(message, 180)}"


def _lone_startup_check(ctx: RuleContext, tb: Traceback) -> bool:
    """A frameless ValueError/AssertionError worded like an argument constraint counts only where an
    argument check can run: at start-up, before the attempt was ready or served, and not in a
    traceback whose frames (if the excerpt kept any) place it in the request loop. The same words
    raised while serving (a state pool's "try to increase --mamba-full-memory-ratio") are a runtime
    failure, not rejected arguments."""
    if tb.frames or tb.exc_type not in _CHECK_TYPES:
        return False
    if tb.process or tb.rank:
        return False  # printed by a server process (`Scheduler hit an exception`, a TP rank): past the checks
    if ctx.match("server-arg-constraint", tb.message) is None:
        return False
    if traceback_phase(tb) == "serving":
        return False
    return not run_of(ctx.log).lifecycle_at(tb.line).up_before(tb.line)


def _cut_args_traceback(ctx: RuleContext, tb: Traceback) -> Finding:
    """The main process's argument processing raised, but the excerpt stops before the exception
    line: the launch ended there (no server process was started), why is not shown — a warning, so
    that no guessed cause becomes the root."""
    where = first_sglang_frame(tb)
    return ctx.finding(
        "invalid-server-args",
        f"The argument processing raised{f' in {where}' if where else ''}, but the traceback is cut before its "
        "exception line: the launch stopped before any server process started",
        "the exception line (the traceback's last line) names the rejected argument: get the complete output of "
        "the launch command",
        events=[tb], severity=Severity.WARNING, data={"exception": None, "cut": True}, stage="startup")


def _bare_usage(ctx: RuleContext, line: int) -> Finding:
    """argparse printed its usage and the excerpt ends before the `error:` line that follows it (or
    `--help` was asked for): the command line stopped the launch; what it refused is not shown."""
    return ctx.finding(
        "invalid-server-args",
        "argparse printed its usage: the command line stopped the launch (the `error:` line after the usage, "
        "which names the refused flag, is not in the excerpt)",
        "the line after the usage text names the flag argparse refused; `python -m sglang.launch_server --help` "
        "lists the valid ones",
        lines=[(line, line)], severity=Severity.WARNING, data={"cut": True}, stage="startup")


@rule(code="SRV004", name="invalid-server-args", family="server", severity=Severity.ERROR,
      needs=("tracebacks",), fallback=True, stage="startup",
      crash=True)  # rejected arguments always end the launch (argparse exits 2, the checks raise)
def invalid_server_args(ctx: RuleContext) -> Iterator[Finding]:
    """The server arguments were rejected before any scheduler started (fallback).

    **What it means**
    SGLang's argument processing (`ServerArgs.__post_init__`, `check_server_args`, the model-config
    checks) raised a `ValueError` / `AssertionError`, or argparse refused the command line, and no
    more specific rule (speculative, mamba, quantization, port, …) explains it. Decided from where
    the exception was raised (its frames, before the server was up), not from flag names that happen
    to appear in a message.

    **Why it matters**
    Nothing started; the message names the constraint the flags violate.

    **Example**
    ```
    Traceback (most recent call last):
      File "/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/engine.py", line 771, in _launch_subprocesses
        server_args.check_server_args()
      File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 5102, in check_server_args
        assert (
    AssertionError: chunked_prefill_size must be divisible by page_size
    ```

    **Fix**
    Change the flags as the message says (the finding computes the value for the common checks).
    """
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if not tb.exc_type:
            if is_args_traceback(tb):
                yield _cut_args_traceback(ctx, tb)
            continue
        if not (is_args_traceback(tb) or _lone_startup_check(ctx, tb)):
            continue
        where = first_sglang_frame(tb)
        msg = tb.message.strip() or "(bare assertion, no message)"
        message = f"Server arguments rejected{f' in {where}' if where else ''}: {tb.exc_type}: {short(msg, 220)}"
        remedy = _arg_remedy(ctx, tb.message) if tb.message.strip() else (
            f"the assertion has no message: read the condition at {where or 'the last frame'} and change the flag it tests")
        yield ctx.finding("invalid-server-args", message, remedy, events=[tb], data={"exception": tb.exc_type})
    errors = ctx.message_lines("argparse-error")
    if not errors and (usage_hits := ctx.message_lines("argparse-usage")):
        yield _bare_usage(ctx, usage_hits[0].line)
    if errors:
        hit = errors[0]
        text = ctx.text(hit.line)
        usage = [h.line for h in ctx.message_lines("argparse-usage") if h.line < hit.line]
        lines = [(hit.line, hit.line)] + ([(usage[-1], usage[-1])] if usage else [])
        said = str(hit.fields.get("error") or hit.fields.get("bare_error") or text)
        yield ctx.finding("invalid-server-args", f"The command line was rejected: {short(text, 200)}",
                          f"fix the flag the error names: {short(said, 160)} "
                          "(`python -m sglang.launch_server --help` lists the valid ones)", lines=lines, data={})
