"""launcher-exception (fallback): the launching program died at its own top level — an import that
failed while it loaded, or a traceback cut before its exception — before any server process is shown
failing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext, sglang_frames
from logparse.rules.frames import first_sglang_frame
from logparse.rules.registry import rule
from logparse.rules.server.crash import IMPORT_ERRORS, launcher_failure, process_tracebacks


def missing_module(message: str) -> str | None:
    """The module an import error names: `cannot import name 'x' from 'pkg.mod' (…)` → `pkg.mod`,
    `No module named 'pkg.mod'` → `pkg.mod` (CPython's two wordings, every 3.x)."""
    for head in ("' from '", "No module named '"):
        at = message.find(head)
        if at >= 0:
            rest = message[at + len(head):]
            end = rest.find("'")
            if end > 0:
                return rest[:end]
    return None


def _finding(ctx: RuleContext, tb: Traceback) -> Finding:
    where = first_sglang_frame(tb) or (tb.frames[-1].path if tb.frames else None)
    at = f" (at {where})" if where else ""
    data: dict[str, Any] = {"exception": tb.exc_type, "frame": where, "sglang_frames": sglang_frames(tb),
                            "process": "main", "cut": tb.exc_type is None}
    if tb.exc_type in IMPORT_ERRORS:
        msg = tb.message.strip()
        module = missing_module(msg)
        pkg = module.split(".", 1)[0] if module else None
        data.update(message=short(msg, 300), import_failure=True, module=module)
        message = (f"The launching program could not import {'`' + module + '`' if module else 'a dependency'} "
                   f"while it loaded ({tb.exc_type}: {short(msg, 160)}){at}")
        remedy = ((f"install the `{pkg}` version your sglang release pins (`pip show sglang` names its "
                   f"requirements; `pip install --force-reinstall \"sglang==<your version>\"` restores them), "
                   f"or the release of the launching program written for the `{pkg}` you have")
                  if pkg else "install the dependency versions your sglang release pins")
    else:
        last = tb.frames[-1] if tb.frames else None
        seen = f"; the last visible frame is {where}" if where else (
            f"; the last visible frame is {last.func}" if last and last.func else "")
        message = f"The launching program raised an exception at its top level (the traceback is cut before its exception line){seen}"
        remedy = ("the exception line (the traceback's last line) is not in the log: get the complete output of "
                  "the launching command to see which exception it was")
    return ctx.finding("launcher-exception", message, remedy, events=[tb], data=data, severity=Severity.WARNING)


@rule(code="SRV007", name="launcher-exception", family="server", severity=Severity.WARNING,
      needs=("tracebacks",), fallback=True, follow_on=True, crash=True)
def launcher_exception(ctx: RuleContext) -> Iterator[Finding]:
    """The launching program died at its own top level before a server process is shown failing (fallback).

    **What it means**
    The program that was to start the server — `python -m sglang.launch_server`, `sglang serve`, or a
    wrapper's CLI that imports SGLang (a trainer, a serving framework) — raised an exception that
    reached its top level: its traceback's outermost frame is module level (a script, runpy) or
    SGLang's HTTP-server launcher, and no process header, rank tag or server-process frame says a
    scheduler printed it. Two shapes are reported here: a failed import while the program loaded
    (`ImportError: cannot import name 'x' from 'pkg'`, `ModuleNotFoundError: No module named 'pkg'`),
    and a traceback cut before its exception line. Neither is a scheduler's crash
    (`scheduler-crash`), and no root cause is guessed: a warning, whose process ended.

    **Why it matters**
    No server process ran, or none is shown failing: the fix is in the installation (a package
    version SGLang or the wrapper does not expect) or in the part of the output that is missing.

    **Example**
    ```
    Traceback (most recent call last):
      File "/usr/local/bin/llamafactory-cli", line 8, in <module>
        sys.exit(main())
      File "/src/llamafactory/chat/sglang_engine.py", line 36, in <module>
        from sglang.utils import launch_server_cmd, terminate_process, wait_for_server
    ImportError: cannot import name 'launch_server_cmd' from 'sglang.utils' (/usr/lib/python3/sglang/utils.py)
    ```

    **Fix**
    For an import failure, install the version of the named package that your SGLang release (or
    the wrapper's) pins, or the release written for the package you have. For a cut traceback, get
    the complete output of the launching command: its last line names the exception.
    """
    for tb in process_tracebacks(ctx, only=launcher_failure):  # (a faulthandler dump names its process: never one)
        yield _finding(ctx, tb)
