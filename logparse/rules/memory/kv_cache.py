"""kv-cache-exhausted: the KV cache pool filled up while serving (retractions, a batch that did not
fit, token usage pinned at 1.00)."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

from logparse.model.events import KnownMessage, MemoryPoolEnd, Retraction, Severity
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.parsing import colstats
from logparse.rules.context import RuleContext
from logparse.rules.memory.common import current_fraction, memory_numbers, round_up
from logparse.rules.registry import rule
from logparse.run.ranks import rank_key, rank_range

# Known-message codes of the grammar for a batch that found no free KV tokens.
_BATCH_OOM_MESSAGES = frozenset({"prefill-out-of-memory", "decode-out-of-memory"})


def _running_before(ctx: RuleContext, line: int) -> int | None:
    """The running-request count of the last decode line (with one printed) up to the first decode
    line after `line`. Asked once per finding: a scan of the decode column per call made the rule
    quadratic on logs with many findings (5 s at 1M startup-heavy lines); a prefix table built
    once answers by bisection."""
    d = ctx.log.decode
    table = ctx.__dict__.get("_kv_running_before")
    if table is None or table[0] is not d or table[1] != len(d):
        table = ctx.__dict__["_kv_running_before"] = (d, len(d), *_running_table(d.line, d.column("running")))
    _, _, ordered, last = table
    if ordered:
        stop = bisect_right(d.line, line)  # rows up to the first one after `line`
    else:
        # Not in line order (a hand-built log): the rows before the first one after `line`.
        stop = next((i for i, n in enumerate(d.line) if n > line), len(d))
    return None if stop == 0 or math.isnan(last[stop - 1]) else int(last[stop - 1])


def _running_table(lines: Sequence[int], running: Sequence[float]) -> tuple[bool, array[float]]:
    """Whether the decode rows are in line order, and per row the last printed (non-NaN) running
    count among the rows up to it (NaN while none was printed)."""
    ordered = all(a <= b for a, b in zip(lines, islice(lines, 1, None)))
    last = array("d")
    best = math.nan
    for v in running:
        if not math.isnan(v):
            best = v
        last.append(best)
    return ordered, last


@rule(
    code="MEM004",
    name="kv-cache-exhausted",
    family="memory",
    severity=Severity.WARNING,
    needs=("serving",),
    stage="served",
)
def kv_cache_exhausted(ctx: RuleContext) -> Iterator[Finding]:
    """The KV cache pool filled up while serving: requests were retracted, or a batch did not fit.

    **What it means**
    SGLang ran out of KV-cache tokens for the running requests: it retracted requests (`KV cache pool
    is full. Retract requests.` / older `Decode out of memory happened.`), a batch could not be
    allocated (`Prefill/Decode out of memory. Try to lower your batch size`, `alloc_req_slots runs
    out of memory`), the last running request was aborted (`retract_decode: aborted last request …
    due to OOM`), or token usage stayed pinned at ~1.00 over consecutive decode lines.

    **Why it matters**
    Retracted requests are recomputed later: throughput drops and latency jumps while the pool
    thrashes. It is a capacity limit of the KV pool, not a CUDA OOM.

    **Example**
    ```
    [2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
    [2025-03-07 21:49:33 TP12] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
    ```

    **Fix**
    More KV room (a higher `--mem-fraction-static` when memory is left after the pool, more GPUs, FP8
    KV cache) or fewer concurrent requests (`--max-running-requests` below the running count at which
    the pool filled).
    """
    retractions = ctx.log.of(Retraction)
    if retractions:
        yield _retractions(ctx, retractions)
    for r in ctx.raised():
        fields = ctx.match("batch-out-of-memory", r.text)
        if fields is None:
            continue
        remedy, data = _kv_room_remedy(ctx, _running_before(ctx, r.event.line))
        what = f"{fields['stage']} batch did not fit in the KV cache pool" if "stage" in fields else (
            f"{fields.get('slots', 'a slot allocation')} found no free request/token slots")
        yield ctx.finding(
            "kv-cache-exhausted",
            f"{what} and the scheduler raised ({r.exc_type}: {short(r.message, 160)})",
            remedy,
            events=[r.event],
            data=data,
            severity=Severity.ERROR,
        )
    for e in ctx.unclaimed(ctx.log.of(KnownMessage)):
        if e.code in _BATCH_OOM_MESSAGES:
            remedy, data = _kv_room_remedy(ctx, _running_before(ctx, e.line))
            yield ctx.finding(
                "kv-cache-exhausted",
                f"{e.text.strip()[:120]} — a batch did not fit in the KV cache pool",
                remedy,
                events=[e],
                data=data,
            )
    for hit in ctx.messages("retract-abort-oom"):
        remedy, data = _kv_room_remedy(ctx, _running_before(ctx, hit.line))
        yield ctx.finding(
            "kv-cache-exhausted",
            "KV cache pool full while serving: no request was left to retract, so SGLang aborted the last "
            f"one ({hit.fields.get('rid', '?')})",
            remedy,
            lines=[(hit.line, hit.line)],
            data={**data, "aborted_request": hit.fields.get("rid")},
        )
    yield from _pinned_usage(ctx)


def _retractions(ctx: RuleContext, retractions: list[Retraction]) -> Finding:
    ranks = sorted({e.rank for e in retractions if e.rank}, key=rank_key)
    total = sum(e.retracted or 0 for e in retractions)
    remedy, data = _kv_room_remedy(ctx, _running_before(ctx, retractions[0].line))
    data.update(retractions=len(retractions), retracted_requests=total)
    where = f" on {rank_range(ranks)}" if ranks else ""
    message = (
        f"KV cache pool full while serving{where}: {len(retractions)} retraction line(s), "
        f"{total} request(s) retracted and recomputed"
    )
    return ctx.finding("kv-cache-exhausted", message, remedy, events=retractions[:32], data=data, ranks=ranks)


def _kv_room_remedy(ctx: RuleContext, running: int | None) -> tuple[str, dict[str, Any]]:
    data: dict[str, Any] = {}
    parts = []
    pool_end = ctx.log.of(MemoryPoolEnd)
    frac = current_fraction(ctx)
    if frac is not None and pool_end and pool_end[0].avail_mem_gb and pool_end[0].avail_mem_gb > 4:
        # Memory left after the pool: part of it can go to the KV cache (keep ~3 GB for activations/graphs).
        before = memory_numbers(ctx, pool_end[0].rank).get("avail_before_weights_gb")
        if before:
            new = min(0.95, round_up(frac + (pool_end[0].avail_mem_gb - 3) / before))
            data.update(current_mem_fraction_static=frac, suggested_mem_fraction_static=new)
            parts.append(
                f"`--mem-fraction-static {new}` (from {frac}; {pool_end[0].avail_mem_gb:.2f} GB were left after the pool)"
            )
    if not parts:
        parts.append(
            "more KV room (a higher `--mem-fraction-static` if memory is left after the pool, FP8 KV cache, more GPUs)"
        )
    if running:
        cap = max(1, int(running * 0.75))
        data.update(running_when_full=running, suggested_max_running_requests=cap)
        parts.append(f"`--max-running-requests {cap}` ({running} were running when the pool filled)")
    else:
        parts.append("a lower `--max-running-requests`")
    return " or ".join(parts), data


def _pinned_usage(ctx: RuleContext) -> Iterator[Finding]:
    """Token usage ≥ 0.99 on `min_lines` consecutive decode lines of one rank."""
    level = ctx.threshold("kv-cache-exhausted", "pinned_usage", 0.99)
    need = ctx.threshold("kv-cache-exhausted", "min_lines", 3)
    d = ctx.log.decode
    if not len(d):
        return
    usage = d.column("token_usage")
    for code, best in colstats.longest_runs(d.rank, usage, level).items():
        if len(best) < need:
            continue
        rank = d.ranks.values[code]
        first_running = d.column("running", best[0], best[0] + 1)[0]
        running = None if math.isnan(first_running) else int(first_running)
        queue = d.column("queue", best[0], best[0] + 1)[0]
        remedy, data = _kv_room_remedy(ctx, running)
        data.update(pinned_lines=len(best), token_usage=round(float(usage[best[0]]), 2))
        q = f" while {int(queue)} request(s) queue" if not math.isnan(queue) and queue > 0 else ""
        lines = [(d.line[i], d.line[i]) for i in best[:8]]
        yield ctx.finding(
            "kv-cache-exhausted",
            f"KV cache token usage pinned at {usage[best[0]]:.2f} over {len(best)} "
            f"consecutive decode lines{q}: the pool is full",
            remedy,
            lines=lines,
            data=data,
            ranks=[rank] if rank else [],
        )
