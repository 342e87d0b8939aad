"""max-running-requests-capped: SGLang capped the number of running requests on its own."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, KnownMessage, SchedulerLimits, Severity
from logparse.model.findings import Finding
from logparse.parsing import colstats
from logparse.rules.context import RuleContext
from logparse.rules.performance import round_bs
from logparse.rules.registry import rule


@rule(code="INFO002", name="max-running-requests-capped", family="info", severity=Severity.INFO,
      needs=("events", "serving"))
def max_running_requests_capped(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang capped the number of running requests on its own.

    **What it means**
    Argument processing lowered `--max-running-requests` and said why: `Max running requests is reset
    to 48 for speculative decoding. You can override this by explicitly setting
    --max-running-requests.` The finding reports the cap, the reason, and whether the serving stats
    reached it while requests queued.

    **Why it matters**
    Under load no more than N requests decode at once; the rest wait in the queue (`#queue-req` grows,
    TTFT rises) even when the KV cache has room.

    **Example**
    ```
    Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting --max-running-requests.
    ```

    **Fix**
    Set `--max-running-requests` explicitly when the KV cache has room for more (with speculative
    decoding also `--cuda-graph-max-bs` to match), or keep the cap.
    """
    resets: list[tuple[Event, int, str]] = []
    for e in ctx.log.of(KnownMessage):
        if e.code == "max-running-reset":
            # The grammar's fields; the catalog's wording family when a damaged line lost them.
            said = ctx.match("max-running-reset", e.text) or {}
            n = e.fields.get("max_running_requests")
            if n is None:
                n = said.get("max_running_requests")
            reason = e.fields.get("reason") or said.get("reason") or ""
            if isinstance(n, int):
                resets.append((e, n, str(reason).strip()))
    if not resets:
        return
    ev, cap, reason = resets[-1]
    data: dict[str, Any] = {"max_running_requests": cap, "reason": reason or None, "messages": len(resets)}
    d = ctx.log.decode
    queued, first_queued, queue_max, umax = _queued_at_cap(d, cap)
    why = f" for {reason}" if reason and not reason.startswith("because") else (f" {reason}" if reason else "")
    message = f"Max running requests capped at {cap}{why} by SGLang (not set explicitly)"
    remedy = f"set `--max-running-requests` explicitly if the KV cache has room for more than {cap}; otherwise keep it"
    lines = [(ev.line, ev.line)]
    if queued:
        qmax = int(queue_max)
        data.update(lines_at_cap_with_queue=queued, queue_req_max_at_cap=qmax, token_usage_at_cap=umax)
        # "on them": the serving summary's queue maximum is over every stats line
        message += (f"; the decode batch reached {cap} on {queued} stats lines while up to {qmax} requests "
                    "queued on them"
                    + (f", with KV token usage only {umax:.2f}" if umax is not None else ""))
        if umax is not None and umax < 0.5:
            new = int(cap * min(2.0, 0.8 / max(umax, 0.05)))
            new = max(new, cap + 1)
            data["suggested_max_running_requests"] = new
            spec = "specul" in reason.lower()  # the grammar's reason field: "speculative decoding"
            remedy = (f"`--max-running-requests {new}` (KV usage was {umax:.2f} at {cap} running)"
                      + (f" with `--cuda-graph-max-bs {round_bs(new)}` so the larger batches keep CUDA graphs"
                         if spec else "") + ", if throughput matters more than per-request latency")
        lines += [(d.line[first_queued], d.line[first_queued])]
    limits = ctx.log.of(SchedulerLimits)
    if limits and limits[-1].max_running_requests is not None:
        data["max_running_requests_effective"] = limits[-1].max_running_requests
        lines.append((limits[-1].line, limits[-1].line))
    yield ctx.finding("max-running-requests-capped", message, remedy, lines=sorted(set(lines)), data=data, claim=False,
                      fingerprint="max-running-requests-capped")


def _queued_at_cap(d: Any, cap: float) -> tuple[int, int, float, float | None]:
    """The decode rows at the cap (#running-req >= cap) with requests queued: how many, the first,
    their largest queue and their largest printed token usage. One pass, slice by slice (lists of
    every row at the cap were ~12 MB at 1M failure-heavy lines)."""
    count, first, queue_max, usage_max = 0, -1, -math.inf, None
    for lo in range(0, len(d), colstats.SLICE_ROWS):
        hi = min(lo + colstats.SLICE_ROWS, len(d))
        running, queue, usage = (d.column(name, lo, hi) for name in ("running", "queue", "token_usage"))
        for i, r in enumerate(running):
            if r >= cap and queue[i] > 0:  # NaN compares False: not printed is neither
                if first < 0:
                    first = lo + i
                count += 1
                queue_max = max(queue_max, queue[i])
                u = usage[i]
                if u == u and (usage_max is None or u > usage_max):
                    usage_max = u
    return count, first, queue_max, usage_max
