"""deprecated-entrypoint: the server was started with `python -m sglang.launch_server`, which now
prints a deprecation warning."""

from __future__ import annotations

from collections.abc import Iterator

from logparse.model.events import Event, Severity
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.errors import warnings_with
from logparse.rules.registry import rule


@rule(code="INFO001", name="deprecated-entrypoint", family="info", severity=Severity.INFO, needs=("events",))
def deprecated_entrypoint(ctx: RuleContext) -> Iterator[Finding]:
    """The server was started with `python -m sglang.launch_server`, which now prints a deprecation warning.

    **What it means**
    From 0.5.10 `python -m sglang.launch_server` prints a Python `UserWarning`: `'python -m
    sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.` Only
    this printed warning counts; a pasted command line that uses the old module is not the warning.

    **Why it matters**
    Nothing today: the old entrypoint works. It may be removed in a future release.

    **Example**
    ```
    /usr/local/lib/python3.12/dist-packages/sglang/launch_server.py:51: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.
      Example: sglang serve --model-path <model> [options]
      warnings.warn(
    ```

    **Fix**
    Start the server with `sglang serve --model-path … [options]` (same flags).
    """
    # The grammar's PythonWarning event is the printed UserWarning; a pasted command line is a
    # LaunchCommand, so it can never count here.
    events: list[Event] = list(warnings_with(ctx, "launch-server-deprecated"))
    if not events:
        return
    events.sort(key=lambda e: e.line)
    n = len(events)
    message = ("Started with the deprecated entrypoint `python -m sglang.launch_server` (UserWarning"
               + (f", printed {n} times: one per launch" if n > 1 else "") + ")")
    yield ctx.finding("deprecated-entrypoint", message, "use `sglang serve --model-path <model> [options]` (same flags)",
                      events=events[:16], data={"warnings": n}, claim=False, fingerprint="deprecated-entrypoint")
