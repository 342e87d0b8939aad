"""scheduler-crash (fallback): a server process raised an exception that no specific rule explains; the
filter of the tracebacks that may have ended a process, shared with `launcher-exception`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from logparse.model.events import SchedulerDead, Severity, ShellSignal, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext, sglang_frames
from logparse.rules.frames import (
    FAULTHANDLER,
    SCHEDULER_LOOP_FUNCS,
    crashing_frame,
    ends_at_native_crash,
    first_sglang_frame,
    frame_funcs,
    in_graph_capture,
    in_sglang,
    native_crash,
)
from logparse.rules.registry import rule
from logparse.run.readiness import user_interrupt
from logparse.run.spacing import line_before
from logparse.run.stage import main_top_level
from logparse.run.verdicts import echoes_failure_elsewhere, is_wrapper_verdict

# What an exit code of a dead scheduler says about how it died.
_EXIT_CODES = {-3: "SIGQUIT: the scheduler's own error path, not the OOM killer", -6: "SIGABRT (a native abort)",
               -11: "SIGSEGV (a native crash)", 1: "a Python exception in the scheduler"}
# How far after an exception line without a message its message may continue (a multi-line message).
_MESSAGE_TAIL = 3


def _message_after(ctx: RuleContext, tb: Traceback) -> tuple[str, int] | None:
    """The first kept text after a traceback whose exception line has no message: a multi-line
    message (`ImportError:` then the loader's report) continues on the next lines."""
    end = tb.end_line or tb.line
    for n in range(end + 1, end + 1 + _MESSAGE_TAIL):
        text = ctx.text(n).strip()
        if text and n not in ctx.claimed:
            return text, n
    return None


def _tool_frame(path: str) -> bool:
    """A frame of one of SGLang's client tools (`sglang/bench_*.py`, `sglang/test/…`): a benchmark or
    test program talking to a server, not a server process."""
    path = path.replace("\\", "/")
    return in_sglang(path) and (path.rsplit("/", 1)[-1].startswith("bench_") or "/sglang/test/" in path)


def _server_frame(path: str) -> bool:
    """A frame of SGLang itself other than its client tools: the server runtime (`srt/`), its CLI
    (`sglang/cli/`), diffusion runtime (`multimodal_gen/`), the kernel package."""
    return in_sglang(path.replace("\\", "/")) and not _tool_frame(path)


# Ray's exceptions for an actor that died elsewhere: the driver waiting on it re-raises them (the
# actor's own error, if any, is in its log) — a consequence, never a server process's crash.
_ACTOR_DIED = ("ActorDiedError", "RayActorError", "ActorUnavailableError")


# Python's resource tracker runs as a process of its own (`from multiprocessing.resource_tracker
# import main; main(fd)`): a traceback whose outermost frame is its `main` is that helper's (it
# unlinks the shared memory a dead process left behind: `KeyError: '/mp-…'` on teardown).
_RESOURCE_TRACKER = "/multiprocessing/resource_tracker.py"


def _foreign(tb: Traceback) -> bool:
    """A traceback that no server process printed (no process header such as `Scheduler hit an
    exception`, no rank tag, no frame of SGLang's server runtime) and that says whose it is: an
    SGLang tool's frames (a bench script's own bug), Ray's client API raising from `ray.get`, a
    Ray actor-death exception, Python's resource-tracker process (its `main` outermost), or frames
    of an HTTP client library only (a failed request). A cut tail of other library frames
    (flashinfer, torch) stays a crash."""
    if tb.process or tb.rank or any(_server_frame(f.path) for f in tb.frames):
        return False
    if any(t in (tb.exc_type or "") for t in _ACTOR_DIED):
        return True
    paths = [f.path.replace("\\", "/") for f in tb.frames]
    if paths and paths[0].endswith(_RESOURCE_TRACKER) and tb.frames[0].func == "main":
        return True  # the resource tracker's own process, tidying up after a dead one
    if any(_tool_frame(p) for p in paths):
        return True  # SGLang's client tools (bench_*, test): their own bug, not a server's
    whole = [f.path for f in tb.frames if f.func]  # a frame cut inside its path says no package
    if whole and all(_http_client_frame(p) for p in whole):
        return True  # only an HTTP client library's frames: a request that failed (a client of the server)
    return bool(paths) and "/ray/" in paths[-1]  # raised inside Ray's client API (ray.get)


# HTTP client libraries (and CPython's own `http.client`): a traceback with nothing but their frames is
# a request that failed — `ConnectionRefusedError` from urllib3's `create_connection` when a benchmark
# calls a server that is gone — printed by a client, not by a server process.
_HTTP_CLIENT_PACKAGES = frozenset({"urllib3", "requests", "httpx", "httpcore", "aiohttp"})


def _http_client_frame(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return bool(_HTTP_CLIENT_PACKAGES & set(parts[:-1])) or parts[-2:] == ["http", "client.py"]


# The web stack SGLang's HTTP server runs on: a traceback through these packages is a request's.
_WEB_PACKAGES = frozenset({"starlette", "uvicorn", "fastapi", "sse_starlette", "h11", "httptools", "anyio"})
# How a request ends when its client goes away: the handler's task is cancelled (asyncio, or the
# concurrent.futures alias older Pythons raise), or starlette reports the disconnect.
_CLIENT_GONE = ("CancelledError", "ClientDisconnect")


def _web_frame(path: str) -> bool:
    """A frame of the web framework (starlette, uvicorn, fastapi, …), not of SGLang."""
    return not in_sglang(path) and bool(_WEB_PACKAGES & set(path.replace("\\", "/").split("/")))


def _request_cancelled(tb: Traceback) -> bool:
    """A traceback of the HTTP server's web layer ending because a client went away: no process
    header or rank tag, frames of the web framework and none of a scheduler, and its last exception
    is the cancellation of the request's task (`asyncio.exceptions.CancelledError` from
    starlette's `listen_for_disconnect`) or starlette's `ClientDisconnect`. A streamed request the
    client cancelled: the server keeps serving."""
    if tb.process or tb.rank or not tb.exc_type:
        return False
    if tb.exc_type.rsplit(".", 1)[-1] not in _CLIENT_GONE:
        return False
    if SCHEDULER_LOOP_FUNCS & set(frame_funcs(tb)) or any(
        f.path.replace("\\", "/").endswith("/managers/scheduler.py") for f in tb.frames
    ):
        return False
    return any(_web_frame(f.path) for f in tb.frames)


_TRACEBACK_HEADER = "Traceback (most recent call last):"
# How a Python repr opens a string value: a dict's `'key': '` or a keyword's `key='`. A JSON log's
# `"message": "` is a process's own record and is not among them.
_REPR_VALUE_OPENINGS = ("': '", "='")


def _quoted_in_repr(ctx: RuleContext, tb: Traceback) -> bool:
    """A traceback that is a string value inside a printed Python repr (`{'supported': False,
    'help_output': 'Traceback (most recent call last):\\n  File …`): a program reporting another
    one's captured output as data, not a server process's log."""
    text = ctx.text(tb.line)
    at = text.find(_TRACEBACK_HEADER)
    return at > 0 and text[:at].endswith(_REPR_VALUE_OPENINGS)


def _logging_dump(ctx: RuleContext, tb: Traceback, dumps: list[int]) -> bool:
    """A stack without an exception line that Python logging printed (`--- Logging error ---` /
    `Call stack:` before it, `Message: '…'` right after it): the frames of a logging call, not a
    process dying."""
    end = tb.end_line or tb.line
    return any(tb.line - 2 <= n <= end + 2 for n in dumps)


def _traceback_finding(ctx: RuleContext, tb: Traceback) -> Finding:
    where = first_sglang_frame(tb)
    process = tb.process or ("Scheduler" if SCHEDULER_LOOP_FUNCS & set(frame_funcs(tb)) else None)
    who = f"{process} " if process and process not in ("warmup",) else "A process "
    data: dict[str, Any] = {"exception": tb.exc_type, "frame": where, "sglang_frames": sglang_frames(tb),
                            "process": tb.process, "cut": tb.exc_type is None}
    lines: list[tuple[int, int]] = []
    if tb.exc_type:
        msg = tb.message.strip()
        data["message"] = short(msg, 300)
        at = f" (at {where})" if where else ""
        if msg:
            message = f"{who}raised {tb.exc_type}: {short(msg, 200)}{at}"
            remedy = (f"read {tb.exc_type} at {where or 'the last frame'}; search the SGLang issues for "
                      f"`{short(msg, 60)}`, and report it with the full traceback if it is a bug")
        elif (after := _message_after(ctx, tb)) is not None:
            text, n = after
            lines.append((n, n))
            message = f"{who}raised {tb.exc_type}{at}; its message follows on line {n}: {short(text, 160)}"
            remedy = (f"read {tb.exc_type} at {where or 'the last frame'} together with the lines after it (its "
                      "message), and fix what they name")
        else:
            message = f"{who}raised {tb.exc_type} (no message){at}"
            remedy = (f"read {tb.exc_type} at {where or 'the last frame'}: the exception carries no message, so the "
                      "frame and the lines before it say what failed")
        if in_graph_capture(ctx, tb):
            # Raised while capturing CUDA graphs: a start-up failure whose fix is about capture.
            data["phase"] = "cuda-graph-capture"
            blob = " ".join([msg, *(m for _, m in tb.chain)])
            if ctx.match("cuda-stream-capture-error", blob) is not None:
                data["cause"] = "not-capturable"
                remedy = ("an operation in the forward pass is not allowed while a CUDA graph is captured (a host "
                          "synchronisation, an allocation or a kernel that cannot be captured, often in the attention "
                          "or MoE backend this model uses): confirm with `--disable-cuda-graph`, then try another "
                          "`--attention-backend` / `--moe-runner-backend`, and report it upstream with this traceback")
            else:
                remedy = (f"read {tb.exc_type} at {where or 'the last frame'}: it was raised while capturing CUDA graphs; "
                          "`--disable-cuda-graph` confirms it (or lower `--cuda-graph-max-bs` to skip the failing "
                          "batch sizes), then report it upstream with this traceback")
        died = ctx.match("scheduler-died-exit-code", msg)
        if died and isinstance(died.get("exit_code"), int):
            code = died["exit_code"]
            data["exit_code"] = code
            if sig := _EXIT_CODES.get(code):
                message += f" — exit code {code} = {sig}"
            remedy = ("the scheduler's own error is not in this excerpt: look for its `Scheduler hit an exception` "
                      "traceback (or an assertion) earlier in the full log of that rank")
    else:
        last = tb.frames[-1] if tb.frames else None
        at = (f"; the last visible frame is {where}" if where else
              f"; the last visible frame is {last.func}" if last and last.func else "")
        message = f"{who}raised an exception (the traceback is cut before its exception line){at}"
        remedy = ("the exception line (the traceback's last line) is not in the log: get the complete log of "
                  f"{tb.rank or 'this process'} to see which exception it was")
    message = message[0].upper() + message[1:]
    return ctx.finding("scheduler-crash", message, remedy, events=[tb], lines=lines, data=data)


def _native_crash_finding(ctx: RuleContext, tb: Traceback, signal: ShellSignal, where: str) -> Finding:
    """The crashing thread of a faulthandler dump: the process died on a fatal signal inside native
    code called from `where` (its innermost frame), with no Python exception."""
    funcs = set(frame_funcs(tb))
    process = ("Scheduler" if funcs & (SCHEDULER_LOOP_FUNCS | {"event_loop_overlap_disagg_prefill"})
               or any(f.path.replace("\\", "/").endswith("/managers/scheduler.py") for f in tb.frames) else None)
    fatal = signal.text.strip()
    sg = first_sglang_frame(tb)
    via = f", called from {sg}" if sg and sg != where else ""
    message = (f"{process or 'A process'} crashed natively ({fatal}) in {where}{via}: the process died on a "
               "fatal signal without a Python exception")
    remedy = ("a crash inside native code (a C/C++/CUDA extension) reached from the frame shown: note which library "
              "that call enters (a kernel, NCCL, a tokenizer), check that the driver, torch, sgl-kernel and "
              "flashinfer builds match each other, and report it upstream with this dump")
    data: dict[str, Any] = {"exception": None, "frame": where, "sglang_frames": sglang_frames(tb),
                            "process": process, "cut": False, "native": True, "signal": fatal}
    return ctx.finding("scheduler-crash", message, remedy, events=[signal, tb], data=data)


def _unplaced_native_dump(tb: Traceback) -> bool:
    """A faulthandler dump that shows no process and no place: a thread listing whose header was
    cut off (its frames run most recent call first, so the module level — `<module>`, runpy's
    entry — is its LAST frame, where a traceback has it first), or a `Current thread … (most recent
    call first):` header cut before any whole frame. A process crashed natively, but not which."""
    if tb.process == "faulthandler":
        return not frame_funcs(tb)
    if not tb.headless or tb.exc_type is not None or len(tb.frames) < 2:
        return False
    last = tb.frames[-1]
    # A process's entry frame (runpy's, or multiprocessing's `python -c "…spawn_main(…)"`) listed
    # last: only a most-recent-first dump lists it there (an import's `<module>` has a file path).
    return last.func == "_run_module_as_main" or (last.func == "<module>" and last.path == "<string>")




def process_tracebacks(ctx: RuleContext, only: Callable[[Traceback], bool] | None = None) -> Iterator[Traceback]:
    """The unclaimed tracebacks that may have ended a process (faulthandler dumps included, for the
    caller to judge): without the ones whose structure says they are no crash — an interrupt, the
    tail of a native-crash dump, a parent echoing a failure shown elsewhere, a wrapper's verdict, a
    wait on a scheduler already reported dead, an unplaced native dump, output quoted in a repr, a
    cancelled request, another program's traceback (by its frames, or by the other program's ERROR
    record right above it: `logger.exception` prints the record, then the traceback), Python
    logging's report. The one filter of `scheduler-crash` and `launcher-exception`; `only` (a cheap
    test of the traceback itself) is asked first, so a rule that wants few pays for few."""
    dead_lines = [e.line for e in ctx.log.of(SchedulerDead)]
    dumps = [h.line for h in ctx.message_lines("python-logging-error", unclaimed=False)]
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if only is not None and not only(tb):
            continue
        if user_interrupt(ctx.log, tb):  # KeyboardInterrupt/SystemExit, or cut at a Ctrl-C echo
            continue  # someone stopped it (Ctrl-C, its `^C` echo right before a cut traceback)
        if tb.process == FAULTHANDLER:
            yield tb
            continue
        if ends_at_native_crash(ctx, tb):
            continue  # the last thread of an earlier native-crash dump: frames, not an exception
        if echoes_failure_elsewhere(ctx.log, tb):
            continue  # a parent echoing a failure shown elsewhere (`… see the error messages above`)
        if is_wrapper_verdict(tb):
            continue  # a wrapper's verdict on the start-up (not ready in time, the server died): readiness
        if tb.exc_type == "EOFError" and any(0 < tb.line - d <= 6 for d in dead_lines):
            continue  # waiting for a scheduler that is already reported dead
        if _unplaced_native_dump(tb):
            continue  # a native crash of some process, shown nowhere: nothing to name
        if _quoted_in_repr(ctx, tb):
            continue  # another program's output quoted as data in a repr, not a process dying
        if _request_cancelled(tb):
            continue  # a client went away mid-request (a cancelled stream): the web layer's, no crash
        if _foreign(tb):
            continue  # another program's traceback (a Ray driver, a training loop): not a server process
        if _after_foreign_error(ctx, tb):
            continue  # another program's `logger.exception` record right above it: that program's traceback
        if tb.exc_type is None and _logging_dump(ctx, tb, dumps):
            continue  # Python logging's report of a record it failed to write: the record says what happened
        yield tb


def _after_foreign_error(ctx: RuleContext, tb: Traceback) -> bool:
    """The line right above the traceback (past a double-spaced paste's blank line) is another
    program's ERROR record (`ParsedLog.foreign_errors`)."""
    foreign = ctx.log.foreign_errors
    return bool(foreign) and line_before(ctx.log, tb.line) in foreign


# The exceptions of a failed import: the launching program could not load a dependency.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def launcher_failure(tb: Traceback) -> bool:
    """A traceback of the launching program's own top level (`run.stage.main_top_level`: a CLI,
    `python -m sglang.launch_server`, a wrapper's script) that is an import failure or is cut before
    its exception: no server process is shown failing, so it is no scheduler's crash. Except when an
    exception of its chain carries a child's traceback in its message (a 2024 launcher's `RuntimeError:
    Initialization failed. controller_init_state: Traceback (most recent call last): …`): the frames
    after it are that server process's, and it is the one that failed."""
    if not (tb.exc_type is None or tb.exc_type in IMPORT_ERRORS) or not main_top_level(tb):
        return False
    return not any(_TRACEBACK_HEADER in message for _, message in tb.chain)


@rule(code="SRV006", name="scheduler-crash", family="server", severity=Severity.ERROR,
      needs=("tracebacks",), fallback=True, follow_on=True, crash=True)
def scheduler_crash(ctx: RuleContext) -> Iterator[Finding]:
    """A scheduler, tokenizer or detokenizer raised an exception that no specific rule explains (fallback).

    **What it means**
    A process of the server died on an exception: `Scheduler hit an exception: Traceback …`,
    `TokenizerManager hit an exception`, a 2024 `Exception in ControllerSingle`, or the main process's
    `Rank N scheduler died during initialization`. No specific rule recognised the exception, or the
    excerpt is cut before the exception line. The finding reports the exception type, its message and
    the innermost SGLang frame. Whose traceback it is comes from its structure: a process header, a
    rank tag or a frame of SGLang's runtime make it a server's; SGLang's client tools (`bench_*`),
    Ray's `ray.get` re-raising an actor's death, Python logging's own error report and the web
    layer's report of a client gone mid-request (starlette/uvicorn frames ending in `CancelledError`)
    and Python's resource-tracker process tidying up after a dead one (`resource_tracker.py … in
    main`, `KeyError: '/mp-…'`) are not crashes; nor is a wrapper's verdict on the start-up (`TimeoutError: Server failed to start within
    the timeout period`, `Server process terminated unexpectedly.`: readiness evidence) or a
    traceback that says, or follows a record saying, the real error is shown elsewhere
    (`Initialization failed. Please see the error messages above.`). A cut traceback of the
    launching program's top level, and its failure to import a dependency while it loads, are no
    server process's crash: `launcher-exception` reports them.

    **Why it matters**
    The process is gone and the server with it. When the exception line is missing, the excerpt
    cannot tell why: the full log of that rank can.

    **Example**
    ```
    [2025-04-16 14:22:53] Received sigquit from a child process. It usually means the child failed.
    [2025-04-16 14:22:53 TP3] Scheduler hit an exception: Traceback (most recent call last):
    ```

    **Fix**
    Read the exception and the frame named in the finding; when it is cut, get the complete traceback
    of that rank (its last line names the exception). Search the SGLang issues for the exception text.
    """
    for tb in process_tracebacks(ctx):
        if tb.process == FAULTHANDLER:
            # A thread dump: a crash only for the crashing thread of a fatal-signal dump, and it says
            # where only when a frame is shown (a dump cut at its header names neither process nor place).
            signal = native_crash(ctx, tb)
            where = crashing_frame(tb)
            if signal is not None and where is not None and signal.line not in ctx.claimed and not (
                any(_tool_frame(f.path) for f in tb.frames) and not any(_server_frame(f.path) for f in tb.frames)
            ):
                yield _native_crash_finding(ctx, tb, signal, where)
            continue
        if launcher_failure(tb):
            continue  # the launching program's own failure, no server process's (rules/server/launcher.py)
        yield _traceback_finding(ctx, tb)
    # A wrapper-formatted ERROR record of the scheduler cut before its message (dynamo's tracing format).
    for hit in ctx.message_lines("cut-tracing-target"):
        if hit.line not in ctx.log.error_levels:
            continue
        text = ctx.text(hit.line)
        yield ctx.finding("scheduler-crash",
                          f"An ERROR record of {text}… is cut before its message (the scheduler failed right after "
                          "initialisation)",
                          "the message of this ERROR record is not in the log: get the complete log to see the exception",
                          lines=[(hit.line, hit.line)], data={"exception": None, "cut": True, "target": text})
