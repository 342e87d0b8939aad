"""kv-pool-no-room: the static pool leaves no (or too little) room for the KV cache after the weights;
the fix is a larger --mem-fraction-static computed from the logged memory numbers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, ProfiledTokensExceeded, Severity
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.memory.common import (
    current_fraction,
    kv_bytes_per_token,
    memory_numbers,
    round_up,
    source_line,
    weight_events,
)
from logparse.rules.registry import rule


def kv_pool_advice(
    ctx: RuleContext,
    rank: str | None,
    current: float | None,
    requested: int | None,
    profiled: int | None,
    line: int | None = None,
) -> tuple[float | None, dict[str, Any], str]:
    """A new --mem-fraction-static from the logged memory numbers, with the arithmetic.

    SGLang sizes the KV pool as rest = avail_after_weights − avail_before_weights × (1 − f), so any
    f ≤ weights / avail_before leaves no room at all. With f and the profiled token count known,
    the per-token KV size follows (the launch's own `KV Cache is allocated` line gives it directly when
    SGLang went on with fewer tokens), and with it the f that holds the requested max_total_tokens."""
    mem = memory_numbers(ctx, rank, line)
    data: dict[str, Any] = dict(mem)
    before, after = mem.get("avail_before_weights_gb"), mem.get("avail_after_weights_gb")
    if current is not None:
        data["current_mem_fraction_static"] = current
    if not before or after is None:
        return None, data, ""
    used = before - after
    need = used / before
    data["weights_fraction"] = round(need, 4)
    why = (
        f"the weights take {used:.2f} GB of the {before:.2f} GB free before loading ({need:.1%}), so "
        f"--mem-fraction-static must be above {need:.3f} to leave any room for the KV cache"
    )
    steps = [
        (
            f"KV pool = avail_after_weights − avail_before_weights × (1 − f) = {after:.2f} − {before:.2f} × (1 − f) GB, "
            f"> 0 only for f > {used:.2f} / {before:.2f} = {need:.3f}"
        )
    ]
    target = need + 0.05  # room for a minimal pool beyond the weights
    if current is not None and profiled and requested:
        rest = after - before * (1 - current)
        if rest and (rest > 0) == (profiled > 0):
            per_token_gb = rest / profiled
            printed = kv_bytes_per_token(ctx, line) if line is not None else None
            if printed:
                per_token_gb = printed / (1 << 30)
            data["kv_bytes_per_token_from"] = "KV Cache is allocated" if printed else "profiled tokens"
            target = max(target, (used + requested * per_token_gb) / before + 0.01)
            data["kv_bytes_per_token"] = round(per_token_gb * (1 << 30))
            per = (
                f"the KV Cache line gives {data['kv_bytes_per_token']} bytes/token"
                if printed
                else f"at f={current} that is {rest:.2f} GB for {profiled} tokens ({data['kv_bytes_per_token']} bytes/token)"
            )
            steps.append(
                f"{per}, so {requested} tokens need f ≥ {(used + requested * per_token_gb) / before:.3f}"
            )
    else:
        steps.append(f"plus 0.05 for a minimal pool: {need + 0.05:.3f}")
    if current is not None:
        target = max(target, current + 0.02)
    suggested = min(0.95, round_up(target))
    data["suggested_mem_fraction_static"] = suggested
    steps.append(f"suggested f = {suggested}" + (" (capped at 0.95)" if suggested < round_up(target) else ""))
    data["arithmetic"] = "; ".join(steps)
    return suggested, data, why


def _pool_remedy(ctx: RuleContext, suggested: float | None, data: dict[str, Any]) -> str:
    tp = ctx.views.tp_size
    more = f"`--tp {2 * tp}`" if tp else "more GPUs (`--tp`)"
    if suggested is None:
        return (
            f"raise `--mem-fraction-static` (the log does not show the memory numbers to compute it), or {more}, "
            "a quantized checkpoint or a smaller `--context-length`"
        )
    if data.get("weights_fraction", 0) > 0.88:
        return (
            f"raise `--mem-fraction-static` to {suggested} — that leaves little for activations and CUDA graphs, "
            f"so prefer {more}, a quantized checkpoint (FP8) or a smaller `--context-length`"
        )
    # ", or" parts the two actions (raising f is not `--tp`); the bullets split there too
    return f"raise `--mem-fraction-static` to {suggested}, or use {more}, a quantized checkpoint or a smaller `--context-length`"


@rule(
    code="MEM002",
    name="kv-pool-no-room",
    family="memory",
    severity=Severity.ERROR,
    needs=("startup",),
    stage="startup",
)
def kv_pool_no_room(ctx: RuleContext) -> Iterator[Finding]:
    """The static memory pool leaves no room for the KV cache after the weights are loaded.

    **What it means**
    SGLang sizes the KV cache from what is left of `--mem-fraction-static` × GPU memory after the
    weights. Here that budget is zero or negative: `Not enough memory. Please try to increase
    --mem-fraction-static`, a negative profiled token count, or `max_total_tokens=… is larger than the
    profiled value …` (a warning when the profiled value is still positive and SGLang continues with
    fewer tokens).

    **Why it matters**
    With no KV pool the scheduler cannot start; with a smaller one than requested the server holds
    fewer tokens than planned. This is the opposite of a runtime CUDA OOM: the static fraction is too
    *small*, so lowering it (the OOM advice) makes it worse.

    **Example**
    ```
    [2025-07-02 07:41:58 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB.
    [2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.
    ```

    **Fix**
    Raise `--mem-fraction-static` to the value computed from the logged memory numbers (weights GB,
    free memory before and after loading; `data.arithmetic` shows the computation), or shard the
    weights over more GPUs (`--tp`), use a quantized checkpoint or a smaller `--context-length`.
    """
    for e in ctx.log.of(ProfiledTokensExceeded):
        yield _profiled(ctx, e)
    found: list[tuple[Event, dict[str, Any]]] = []
    for r in ctx.raised():
        fields = ctx.match("kv-pool-not-enough-memory", r.message)
        if fields is not None:
            found.append((r.event, fields))
    for ev, fields in found:
        yield _not_enough(ctx, ev, fields, ())
    # A lone line (a prefixed or wrapped message the grammar did not turn into an exception).
    for hit in ctx.messages("kv-pool-not-enough-memory"):
        if any(ev.line <= hit.line <= (ev.end_line or ev.line) for ev, _ in found) or source_line(ctx, hit.line):
            continue
        no = hit.line
        yield _not_enough(ctx, Event(line=no, end_line=no), hit.fields, ((no, no),))


def _profiled(ctx: RuleContext, e: ProfiledTokensExceeded) -> Finding:
    """`max_total_tokens=… is larger than the profiled value …`: an error when nothing is left."""
    current = current_fraction(ctx)
    suggested, data, why = kv_pool_advice(ctx, e.rank, current, e.max_total_tokens, e.profiled, e.line)
    data.update(requested_max_total_tokens=e.max_total_tokens, profiled_max_total_tokens=e.profiled)
    negative = e.profiled <= 0
    what = (
        "KV pool sizing failed{where}: the profiled token budget is"
        if negative
        else "KV pool smaller than requested{where}: the profiled token budget is"
    )
    message = f"{what} {e.profiled} (max_total_tokens={e.max_total_tokens} requested)" + (
        f"; {why}" if why else ""
    )
    return ctx.finding(
        "kv-pool-no-room",
        message,
        _pool_remedy(ctx, suggested, data),
        events=[e],
        context=weight_events(ctx, e.rank) if why else (),
        data=data,
        severity=Severity.ERROR if negative else Severity.WARNING,
        fingerprint=f"profiled|{e.max_total_tokens}|{e.profiled}",
    )


def _not_enough(
    ctx: RuleContext, ev: Event, fields: dict[str, Any], lines: tuple[tuple[int, int], ...]
) -> Finding:
    current = current_fraction(ctx, fields.get("fraction"))
    suggested, data, why = kv_pool_advice(ctx, ev.rank, current, None, None, ev.line)
    # the setting before the ranks: `(--mem-fraction-static=0.85) on TP0–TP7 (8 times)` read as
    # two asides glued together
    stated = f" at --mem-fraction-static={current}" if current is not None else ""
    message = f"Not enough memory for the KV pool{stated} after loading the weights{{where}}" + (
        f": {why}" if why else ""
    )
    return ctx.finding(
        "kv-pool-no-room",
        message,
        _pool_remedy(ctx, suggested, data),
        events=[] if lines else [ev],
        lines=lines,
        context=weight_events(ctx, ev.rank) if why else (),
        data=data,
        ranks=[ev.rank] if ev.rank else [],
    )
