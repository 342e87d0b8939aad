"""mamba-pool-exhausted: the mamba / SSM state pool of a hybrid model ran out of slots (an allocation
that found none, or `mamba usage` pinned at 1.00)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logparse.model.events import MambaCacheAllocated, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import Raised, RuleContext
from logparse.rules.frames import file_name
from logparse.rules.memory.common import source_line
from logparse.rules.registry import rule

# Files of SGLang's request/state pools (0.5.x mem_cache/): an allocation assert raised there is the pool's.
_POOL_FILES = frozenset({"memory_pool.py", "mamba_radix_cache.py", "radix_cache.py", "allocator.py"})


@rule(
    code="MEM005",
    name="mamba-pool-exhausted",
    family="memory",
    severity=Severity.ERROR,
    needs=("tracebacks", "serving"),
)
def mamba_pool_exhausted(ctx: RuleContext) -> Iterator[Finding]:
    """The mamba / SSM state pool of a hybrid model ran out of slots.

    **What it means**
    Hybrid models (Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, Kimi-Linear, …) keep one recurrent
    state per running request in a fixed mamba pool (plus ping-pong / extra-buffer slots for radix
    caching and speculative decoding). An allocation found no free slot (an error or assertion from
    the mamba pool / radix cache, e.g. `Not enough space for mamba cache, try to increase
    --mamba-full-memory-ratio …` — a capacity limit hit while serving, not an argument error), or
    `mamba usage` stayed at ~1.00 in the decode stats.

    **Why it matters**
    Unlike the KV pool, SGLang cannot always retract its way out: the scheduler crashes or stalls
    as soon as more requests run than there are state slots.

    **Example**
    ```
    [2026-03-07 15:31:10 TP0] Decode batch, #running-req: 48, #full token: 120331, full token usage: 0.41, mamba num: 96, mamba usage: 1.00, cuda graph: True, gen throughput (token/s): 3120.11, #queue-req: 7
    ```

    **Fix**
    Give the mamba pool more room (`--max-mamba-cache-size`, a different `--mamba-full-memory-ratio`)
    or run fewer requests at once (`--max-running-requests` below the pool's slot count; with
    `extra_buffer` / speculative decoding each request holds more than one slot).
    """
    size = next((e.max_size for e in ctx.log.of(MambaCacheAllocated) if e.max_size), None)
    remedy, data = _mamba_remedy(ctx, size)
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen or ctx.match("memory-leak", r.text) is not None:
            continue
        if ctx.match("mamba-pool-full", r.text) is None and not _mamba_alloc_assert(ctx, r):
            continue
        seen.add(r.event.line)
        stated = (ctx.collect("mamba-pool-size", r.text) or {}).get("size")
        fix, info = _mamba_remedy(ctx, stated) if stated and not size else (remedy, data)
        yield ctx.finding(
            "mamba-pool-exhausted",
            f"Mamba state pool exhausted{{where}}: {r.exc_type}: {short(r.message, 200)}",
            fix,
            events=[r.event],
            data=dict(info),
            stage="serving" if _in_serving_loop(r.traceback) else None,
        )
    for hit in ctx.messages("mamba-pool-full"):
        text = ctx.text(hit.line)
        if ctx.match("memory-leak", text) is not None or source_line(ctx, hit.line):
            continue
        yield ctx.finding(
            "mamba-pool-exhausted",
            f"Mamba state pool exhausted: {short(text, 200)}",
            remedy,
            lines=[(hit.line, hit.line)],
            data=dict(data),
        )
    yield from _pinned_usage(ctx, remedy, data)


def _hybrid(ctx: RuleContext) -> bool:
    """Whether the log shows a mamba state pool (a hybrid / SSM model)."""
    return bool(ctx.log.of(MambaCacheAllocated)) or "mamba_usage" in ctx.log.decode.extra


def _mamba_alloc_assert(ctx: RuleContext, r: Raised) -> bool:
    """An assertion raised by a mamba slot allocation (whatever its message says): a frame of the
    mamba pool / radix cache that allocates, or an allocation in the pool files of a hybrid model."""
    tb = r.traceback
    if tb is None or r.exc_type != "AssertionError" or not tb.frames:
        return False
    for f in tb.frames:
        func = f.func or ""
        if "mamba" in (f.path + func).lower() and ("alloc" in func or "radix" in f.path):
            return True
    inner = tb.frames[-1]
    return file_name(inner.path) in _POOL_FILES and "alloc" in (inner.func or "") and _hybrid(ctx)


def _in_serving_loop(tb: Traceback | None) -> bool:
    """Raised from the scheduler's event loop (serving requests), not from its start-up."""
    return tb is not None and any((f.func or "").startswith("event_loop") for f in tb.frames)


def _pinned_usage(ctx: RuleContext, remedy: str, data: dict[str, Any]) -> Iterator[Finding]:
    d = ctx.log.decode
    if "mamba_usage" not in d.extra:
        return
    col = d.column("mamba_usage")
    pinned = [i for i in range(len(d)) if col[i] == col[i] and col[i] >= 0.99]
    if len(pinned) >= ctx.threshold("mamba-pool-exhausted", "min_lines", 3):
        yield ctx.finding(
            "mamba-pool-exhausted",
            f"Mamba state pool full: `mamba usage` ≥ 0.99 on {len(pinned)} decode lines",
            remedy,
            lines=[(d.line[i], d.line[i]) for i in pinned[:8]],
            severity=Severity.WARNING,
            data={**data, "pinned_lines": len(pinned)},
        )


def _slots_per_request(ctx: RuleContext) -> float | None:
    """Mamba slots one running request holds, from the decode stats (`mamba num` / `#running-req`)."""
    d = ctx.log.decode
    if "mamba_num" not in d.extra:
        return None
    num, running = d.column("mamba_num"), d.column("running")
    ratios = [
        num[i] / running[i]
        for i in range(len(d))
        if not math.isnan(num[i]) and not math.isnan(running[i]) and running[i] > 0
    ]
    return max(ratios) if ratios else None


def _mamba_remedy(ctx: RuleContext, size: int | None) -> tuple[str, dict[str, Any]]:
    if size:
        per = _slots_per_request(ctx) or (2.0 if ctx.views.arg("speculative_algorithm") else 1.0)
        cap = max(1, int(size / per * 0.9))
        data = {
            "max_mamba_cache_size": size,
            "slots_per_request": round(per, 2),
            "suggested_max_running_requests": cap,
        }
        return (
            f"`--max-running-requests {cap}` (the mamba pool has {size} slots, about {per:.1f} per running request) "
            "or a larger pool (`--max-mamba-cache-size`, `--mamba-full-memory-ratio`)"
        ), data
    return (
        "raise the mamba pool size (`--max-mamba-cache-size`, `--mamba-full-memory-ratio`) or lower "
        "`--max-running-requests`"
    ), {}
