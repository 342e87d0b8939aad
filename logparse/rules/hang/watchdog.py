"""watchdog-timeout: SGLang's own watchdog found a process making no progress and killed the server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import BatchDump, Event, KnownMessage, Severity, SglangWatchdog
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.hang.jit import open_jit
from logparse.rules.registry import rule
from logparse.run.launches import within


@rule(
    code="HANG001",
    name="watchdog-timeout",
    family="hang",
    severity=Severity.ERROR,
    needs=("events",),
    hang=True,
    follow_on=True,
)
def watchdog_timeout(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang's own watchdog found a process making no progress and killed the server.

    **What it means**
    The scheduler (or tokenizer / detokenizer / DP controller) watchdog saw no forward progress for
    `--watchdog-timeout` seconds: `Scheduler watchdog timeout (self.watchdog_timeout=300,
    self.soft=False)` (old wording: `Watchdog timeout (self.watchdog_timeout=300)`). It prints the
    stuck batch (`self.cur_batch.batch_size()=26`) and py-spy stacks, then SIGQUITs the server. With
    `self.soft=True` it only reports.

    **Why it matters**
    Something blocks a forward pass: typically a JIT compile on the first batch of a shape, a
    collective waiting for a dead peer, or a kernel hang. The debug dump before the kill says which.

    **Example**
    ```
    [2025-06-22 16:13:55 TP0] Watchdog timeout (self.watchdog_timeout=300)
    [2025-06-22 16:13:55 TP0] self.cur_batch.batch_size()=26,  self.cur_batch.reqs=[Req(rid=d4424f3eb90345f0a863068978c0f17c……
    [2025-06-22 16:13:55 TP0] Pyspy failed to dump PID 63217.   Error: /bin/sh: py-spy: command not found
    ```

    **Fix**
    Read the debug dump / py-spy stacks (install `py-spy` if the log says it is missing); warm JIT
    caches; check peers; raise `--watchdog-timeout` only if the batch is legitimately slow.
    """
    dumps = ctx.log.of(BatchDump)
    pyspy = [e for e in ctx.log.of(KnownMessage) if e.code == "pyspy-failed"]
    debug = [e for e in ctx.log.of(KnownMessage) if e.code == "watchdog-debug-info"]
    jit_open = open_jit(ctx)
    events: list[SglangWatchdog] = ctx.log.of(SglangWatchdog)
    items: list[tuple[Event, float | None, bool, str]] = [
        (e, e.timeout_s, e.soft, e.debug_name) for e in events
    ]
    if not events:
        # A watchdog line the grammar kept as text (an unknown wrapper): the catalog finds it.
        for hit in ctx.message_lines("sglang-watchdog-timeout"):
            timeout = hit.fields.get("timeout")
            items.append((Event(line=hit.line, end_line=hit.line), timeout if isinstance(timeout, float) else None,
                          hit.fields.get("soft", "").lower() == "true", str(hit.fields.get("process") or "Scheduler")))
    for ev, timeout, soft, who in items:
        # The lists are in file order: the lines near the watchdog's are a bisected slice (a scan
        # of every dump and py-spy line per watchdog line was quadratic on a log of many kills).
        near = [
            d for d in within(dumps, ev.line - 20, ev.line + 20) if d.rank == ev.rank or not ev.rank
        ]
        size = next((d.batch_size for d in near if d.batch_size is not None), None)
        pyspy_near = within(pyspy, ev.line - 30, ev.line + 30)
        extra: list[Event] = (
            near[:2]
            + pyspy_near[:2]
            + within(debug, ev.line - 30, ev.line + 30)[:1]
        )
        t = f"{timeout:g} s" if timeout is not None else "the watchdog timeout"
        batch = (
            f" with a batch of {size} request(s) stuck in the forward pass"
            if size is not None
            else ""
        )
        kind = "soft watchdog (report only, no kill)" if soft else "watchdog"
        message = f"SGLang's {who} {kind} fired: no progress for {t}{batch}"
        hints = []
        if jit_open:
            j = jit_open[0]
            hints.append(
                f"a {j.library} JIT compile ({j.name}) began on line {j.line} and never finished — the likely stall"
            )
        if pyspy_near:
            hints.append("py-spy is not installed, so no stack dump was taken")
        if hints:
            message += "; " + "; ".join(hints)
        remedy_parts = [
            "read the debug dump / py-spy stacks printed before the kill to see where it is stuck"
        ]
        if pyspy_near:
            remedy_parts.append("`pip install py-spy` so the next timeout dumps the stacks")
        if jit_open:
            remedy_parts.append("warm the JIT cache before serving (see jit-compile-stall)")
        new = int(2 * timeout) if timeout else 600
        remedy_parts.append(
            f"`--watchdog-timeout {new}` only if the batch is legitimately slow; often a JIT stall or a dead peer"
        )
        data: dict[str, Any] = {"watchdog_timeout_s": timeout, "soft": soft, "process": who}
        if size is not None:
            data["watchdog_batch_size"] = size
        kwargs: dict[str, Any] = (
            {"events": [ev, *extra]}
            if ev.source
            else {"events": extra, "lines": [(ev.line, ev.line)]}
        )
        yield ctx.finding(
            "watchdog-timeout",
            message,
            "; ".join(remedy_parts),
            data=data,
            severity=Severity.WARNING if soft else Severity.ERROR,
            ranks=[ev.rank] if ev.rank else [],
            **kwargs,
        )
