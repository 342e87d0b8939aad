"""cuda-graph-oversized: a healthy run captured CUDA graphs for batch sizes far above any batch it ran;
the memory they hold, computed from the log's own budget, could be KV cache instead."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logparse.model.events import CaptureBatchSizes, CaptureEnd, Event, Severity
from logparse.model.findings import Finding
from logparse.parsing import colstats
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule
from logparse.run.memory import (
    DECODE_GRAPHS,
    GIB,
    MemoryBudget,
    RankBudget,
    budget_at,
    budgets,
    decode_range,
    peak_running,
)


def first_at_or_above(sizes: tuple[int, ...], n: int) -> int | None:
    """The smallest captured batch size ≥ n (the graph SGLang replays for a batch of n)."""
    return next((s for s in sorted(sizes) if s >= n), None)


def bs_flag(launch: Any) -> str:
    """The flag that bounds the decode graphs' batch sizes in this launch's release (0.5.23 splits
    `--cuda-graph-max-bs` into prefill/decode ones)."""
    return (
        "--cuda-graph-max-bs-decode"
        if "cuda_graph_max_bs_decode" in launch.server_args
        else "--cuda-graph-max-bs"
    )


def decode_graph_gb(r: RankBudget) -> float | None:
    """GB of the graphs whose batch sizes `--cuda-graph-max-bs` bounds (target and draft decode)."""
    return r.graph_gb(*DECODE_GRAPHS)


def graph_trade_off(budget: MemoryBudget, new_bs: int) -> dict[str, Any] | None:
    """What capping the captured batch sizes at `new_bs` frees on the tightest rank, from the budget.

    Graphs are captured largest first into one shared memory pool, so their memory is that of the
    largest batch's buffers: it scales with the largest captured size. Freed ≈ graph GB × (1 − new/max);
    KV tokens = freed bytes / the log's KV bytes per token; the static fraction that hands the freed
    memory to the KV pool = f + freed / free-at-start (rounded down, to stay on the safe side)."""
    if not budget.captured_sizes:
        return None
    top = max(budget.captured_sizes)
    r = budget.tightest or budget.ranks[0]
    graph_gb = decode_graph_gb(r)
    if graph_gb is None or top <= 0 or new_bs >= top:
        return None
    freed = round(graph_gb * (1 - new_bs / top), 2)
    out: dict[str, Any] = {
        "rank": r.rank,
        "captured_max_bs": top,
        "suggested_cuda_graph_max_bs": new_bs,
        "graph_gb": graph_gb,
        "freed_gb_per_rank": freed,
        "arithmetic": f"{graph_gb:.2f} GB × (1 − {new_bs}/{top}) = {freed:.2f} GB",
    }
    bpt = budget.bytes_per_token
    if bpt:
        out["kv_bytes_per_token"] = bpt
        out["kv_tokens_freed"] = int(freed * GIB // bpt)
        out["arithmetic"] += (
            f"; {freed:.2f} GB × 2^30 / {bpt} bytes per token = {out['kv_tokens_freed']} tokens"
        )
    f, start = budget.mem_fraction_static, r.free_at_start_gb
    if f is not None and start:
        new_f = math.floor((f + freed / start) * 100 + 1e-9) / 100
        if new_f > f:
            out.update(current_mem_fraction_static=f, suggested_mem_fraction_static=new_f)
            out["arithmetic"] += (
                f"; f = {f} + {freed:.2f} / {start:.2f} GB = {f + freed / start:.4f} → {new_f}"
            )
    return out


@rule(
    code="MEM007",
    name="cuda-graph-oversized",
    family="memory",
    severity=Severity.INFO,
    needs=("startup", "serving"),
)
def cuda_graph_oversized(ctx: RuleContext) -> Iterator[Finding]:
    """CUDA graphs were captured for batch sizes far above the largest batch the run ever decoded.

    **What it means**
    A launch that served traffic and never decoded without graphs captured batch sizes up to
    `--cuda-graph-max-bs` (the `Capture cuda graph bs […]` list, or `bs=` of the capture lines), while
    the largest `#running-req` of its decode lines (per DP rank: each DP rank replays its own graphs)
    stayed far below — by default the largest captured size is at least twice the first captured
    size at or above the observed peak, and capping there frees at least 0.5 GB per rank.

    **Why it matters**
    Graph memory comes out of the memory the KV pool could have had. The finding computes, from the
    log's own budget, what capping the sizes frees per rank (graph GB of the capture lines × (1 −
    new/max), `data.arithmetic`), how many KV tokens that is (the KV pool's bytes per token), and
    the `--mem-fraction-static` that hands it to the pool. On PCIe-only nodes every GB of KV is
    concurrency.

    **Example**
    ```
    [2026-03-11 14:05:33 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160]
    [2026-03-11 14:05:43 TP0] Capture cuda graph end. Time elapsed: 9.87 s. mem usage=1.12 GB. avail mem=8.66 GB.
    [2026-03-11 14:07:31 TP0] Decode batch, #running-req: 44, #token: 26950, token usage: 0.09, cuda graph: True, gen throughput (token/s): 1466.35, #queue-req: 0
    ```

    **Fix**
    `--cuda-graph-max-bs` set to the first captured size at or above the observed peak, with the
    `--mem-fraction-static` the finding computes (the freed memory goes to the KV pool). Batches above
    the new maximum then run without graphs (`cuda graph: False`, the `cuda-graph-not-used` finding in
    reverse): slower decode for them. When NOT to follow it: when this log's traffic is not the
    production peak (a smoke test, a short benchmark, a low `--max-concurrency`); when the KV pool is
    not the limit (token usage stays low and nothing queues); when the freed GB are small against the
    KV pool. Thresholds: `[tool.logdiag.thresholds.cuda-graph-oversized] min_ratio` (2.0),
    `min_free_gb` (0.5), `min_decode_lines` (10).
    """
    min_ratio = float(ctx.threshold("cuda-graph-oversized", "min_ratio", 2.0))
    min_free = float(ctx.threshold("cuda-graph-oversized", "min_free_gb", 0.5))
    min_lines = int(ctx.threshold("cuda-graph-oversized", "min_decode_lines", 10))
    run = ctx.views.run
    for lifecycle, budget in zip(run.lifecycles, budgets(ctx.log), strict=True):
        launch = lifecycle.launch
        if not lifecycle.serving or not budget:
            continue
        finding = _oversized(
            ctx, launch.first_line, launch.last_line, budget, min_ratio, min_free, min_lines
        )
        if finding is not None:
            yield finding


def _decode_window(ctx: RuleContext, first: int, last: int) -> tuple[int, bool]:
    """How many decode lines the launch printed, and whether any ran without graphs."""
    lo, hi = decode_range(ctx.log, first, last)
    return hi - lo, colstats.count_equal(ctx.log.decode.column("cuda_graph", lo, hi), 0.0) > 0


def _oversized(
    ctx: RuleContext,
    first: int,
    last: int,
    budget: MemoryBudget,
    min_ratio: float,
    min_free: float,
    min_lines: int,
) -> Finding | None:
    n, without = _decode_window(ctx, first, last)
    if n < min_lines or without or not budget.captured_sizes:
        return None
    peaks = peak_running(ctx.log, first, last)
    if not peaks:
        return None
    peak = max(peaks.values())
    new_bs = first_at_or_above(budget.captured_sizes, max(peak, 1))
    top = max(budget.captured_sizes)
    if new_bs is None or top < min_ratio * new_bs:
        return None
    trade = graph_trade_off(budget, new_bs)
    if trade is None or trade["freed_gb_per_rank"] < min_free:
        return None
    data: dict[str, Any] = {"peak_running_req": peak, "peak_running_req_per_rank": peaks, **trade}
    tokens = trade.get("kv_tokens_freed")
    frees = f"about {trade['freed_gb_per_rank']:.2f} GB per rank" + (
        f" = {tokens} KV tokens at {trade['kv_bytes_per_token']} bytes per token"
        if tokens is not None
        else ""
    )
    message = (
        f"CUDA graphs were captured up to batch size {top} but the largest decode batch was {peak} "
        f"#running-req{{where}}: capping at {new_bs} frees {frees} (graphs took {trade['graph_gb']:.2f} GB)"
    )
    frac = ""
    if "suggested_mem_fraction_static" in trade:
        frac = (
            f" with `--mem-fraction-static {trade['suggested_mem_fraction_static']}` "
            f"(from {trade['current_mem_fraction_static']}) so the KV pool gets it"
        )
    remedy = (
        f"`{bs_flag(ctx.launch_at(first))} {new_bs}`{frac}; batches above {new_bs} then run without CUDA graphs (slower "
        "decode), so keep it at or above the production peak, not only this log's"
    )
    evidence = [e for e in ctx.log.of(CaptureBatchSizes) if first <= e.line <= last][:1]
    evidence += [
        e for e in ctx.log.of(CaptureEnd) if first <= e.line <= last and e.rank == trade["rank"]
    ][:1]
    d = ctx.log.decode
    lo, hi = decode_range(ctx.log, first, last)
    running = d.column("running", lo, hi)
    peak_line = next((d.line[i] for i in range(lo, hi) if running[i - lo] == peak), None)
    lines = [(peak_line, peak_line)] if peak_line is not None else []
    return ctx.finding(
        "cuda-graph-oversized",
        message,
        remedy,
        events=evidence,
        lines=lines,
        data=data,
        claim=False,
    )


def capture_remedy(
    ctx: RuleContext,
    text: str,
    at: Event,
    numbers: dict[str, Any],
    frac_text: str,
    data: dict[str, Any],
) -> str | None:
    """The flags for an OOM while capturing graphs (the cuda-oom rule's remedy): SGLang's own
    suggestion when the message printed one, else a batch size from the launch's memory budget;
    None when neither is known (the caller halves the captured maximum)."""
    budget = budget_at(ctx.log, at.line)
    sizes = budget.captured_sizes
    top = max(sizes) if sizes else ctx.views.cuda_graph_max_bs
    if top:
        data["cuda_graph_max_bs"] = top
    hint = ctx.match("cuda-graph-capture-hint", text) or {}
    captured = f" (captured up to {top})" if top else ""
    if isinstance(hint.get("bs"), int):
        new = hint["bs"]
        flag = hint.get("flag") or "--cuda-graph-max-bs"  # 0.5.23 names --cuda-graph-max-bs-decode
        data.update(sglang_hint_cuda_graph_max_bs=new, suggested_cuda_graph_max_bs=new)
        return f"`{flag} {new}` as SGLang's message suggests{captured}, and/or {frac_text}"
    if isinstance(hint.get("tokens"), int):
        new = hint["tokens"]
        data.update(
            sglang_hint_piecewise_cuda_graph_max_tokens=new,
            suggested_piecewise_cuda_graph_max_tokens=new,
        )
        return f"`--piecewise-cuda-graph-max-tokens {new}` as SGLang's message suggests, and/or {frac_text}"
    return _capture_from_budget(budget, at, numbers, top, frac_text, data)


def _capture_from_budget(
    budget: MemoryBudget,
    at: Event,
    numbers: dict[str, Any],
    top: int | None,
    frac_text: str,
    data: dict[str, Any],
) -> str | None:
    """Graphs are captured largest batch first into one pool, so when the capture failed it had used
    (free at capture begin − free at the OOM) and asked for `tried` more: the graphs need at least that.
    A maximum batch size scaled down by free / need (less 10 % headroom) is the most that can fit."""
    r = budget.rank(at.rank)
    free_mib, tried_mib = numbers.get("free_mib"), numbers.get("tried_to_allocate_mib")
    begin = (
        next((g.begin_avail_gb for g in reversed(r.graphs) if not g.finished), None) if r else None
    )
    if not top or begin is None or free_mib is None or not tried_mib:
        return None
    need = round(begin - free_mib / 1024 + tried_mib / 1024, 2)
    if need <= 0:
        return None
    fits = int(top * begin * 0.9 / need)
    below = [s for s in budget.captured_sizes if s <= fits and s < top]
    new = max(below) if below else max(1, min(fits, top // 2) // 8 * 8 or 1)
    if new >= top:
        return None
    data.update(
        capture_avail_gb=begin,
        capture_need_gb_at_least=need,
        suggested_cuda_graph_max_bs=new,
        arithmetic=(
            f"need ≥ {begin:.2f} − {free_mib:.2f}/1024 + {tried_mib:.2f}/1024 = {need:.2f} GB for graphs up to {top}; "
            f"{top} × {begin:.2f} × 0.9 / {need:.2f} = {fits} → captured size {new}"
        ),
    )
    return (
        f"`--cuda-graph-max-bs {new}` (captured up to {top}; the graphs needed at least {need:.2f} GB of the "
        f"{begin:.2f} GB free when capture began) and/or {frac_text}"
    )


def graph_growth(
    ctx: RuleContext, line: int, captured: int, want: int
) -> tuple[dict[str, Any], str]:
    """What raising the captured maximum from `captured` to `want` costs per rank, from the memory
    budget of the launch holding `line` (graph GB scale with the largest captured size; the cost
    in KV tokens at the log's bytes per token): (data, a clause for the remedy; '' when unknown)."""
    budget = budget_at(ctx.log, line)
    r = (budget.tightest or budget.ranks[0]) if budget else None
    graph_gb = decode_graph_gb(r) if r is not None else None
    if r is None or graph_gb is None or captured <= 0 or want <= captured:
        return {}, ""
    extra = round(graph_gb * (want / captured - 1), 2)
    data: dict[str, Any] = {"graph_gb": graph_gb, "extra_graph_gb_per_rank": extra}
    clause = f"about {extra:.2f} GB more graph memory per rank: {graph_gb:.2f} GB × ({want}/{captured} − 1)"
    bpt = budget.bytes_per_token
    if bpt:
        data["kv_tokens_cost"] = int(extra * GIB // bpt)
        clause += f", the memory of {data['kv_tokens_cost']} KV tokens at {bpt} bytes per token"
    if r.free_after_gb is not None:
        data["free_after_startup_gb"] = r.free_after_gb
        fits = extra < r.free_after_gb
        clause += (
            f", with {r.free_after_gb:.2f} GB free after start-up on {r.rank or 'the rank'}"
            + ("" if fits else ", not enough: lower `--mem-fraction-static` too")
        )
    return data, clause
