"""health-check-failed: `/health_generate` got no answer from the detokenizer in time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import HealthCheckFailed, Severity
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule


@rule(code="SRV005", name="health-check-failed", family="server", severity=Severity.ERROR, needs=("events",),
      follow_on=True)
def health_check_failed(ctx: RuleContext) -> Iterator[Finding]:
    """`/health_generate` got no answer from the detokenizer in time.

    **What it means**
    The health endpoint ran a one-token generation and the detokenizer produced nothing for
    `SGLANG_HEALTH_CHECK_TIMEOUT` seconds (default 20): `Health check failed. Server couldn't get a
    response from detokenizer for last 20 seconds.` The endpoint then answers 503.

    **Why it matters**
    Orchestrators restart the server on 503. The check itself is a symptom: the scheduler is stuck
    (a hang, a long prefill, a dead peer) or dead.

    **Example**
    ```
    [2026-03-07 15:40:22] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 15:40:02. last_heartbeat time: 15:39:11
    ```

    **Fix**
    Find the stall behind it (the watchdog / NCCL / crash findings of the same log); raise
    `SGLANG_HEALTH_CHECK_TIMEOUT` only when long prefills legitimately exceed it.
    """
    events = ctx.unclaimed(ctx.log.of(HealthCheckFailed))
    if not events:
        return
    first = events[0]
    timeout = first.timeout_s
    data: dict[str, Any] = {"timeout_s": timeout, "count": len(events)}
    heartbeat = (ctx.match("health-check-heartbeat", ctx.text(first.line)) or {}).get("last_heartbeat")
    if heartbeat:
        data["last_heartbeat"] = heartbeat
    prior = [f for f in ctx.findings if f.severity == Severity.ERROR and f.first_line <= first.line]
    cause = f"; see {prior[0].name} at line {prior[0].first_line}" if prior else ""
    message = (f"Health check failed {len(events)} time{'s' if len(events) > 1 else ''}: no response from the "
               f"detokenizer for {timeout:g} s" if timeout else "Health check failed")
    message += f" (last heartbeat {data['last_heartbeat']})" if "last_heartbeat" in data else ""
    message += cause
    remedy = "find the stall behind it (scheduler hang, dead rank, NCCL, very long prefill)" + cause
    if timeout:
        remedy += (f"; raise `SGLANG_HEALTH_CHECK_TIMEOUT` (now {timeout:g} s) only if long prefills legitimately "
                   "take longer")
    yield ctx.finding("health-check-failed", message, remedy, events=events[:16], data=data,
                      fingerprint="health-check-failed")
