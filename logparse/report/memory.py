"""The report's memory section: the per-rank memory budget of the last launch that printed one
(`run/memory.py`, as the analyze summary carries it), as rows of GB ready for a table and a plot."""

from __future__ import annotations

from typing import Any

# Stacked-bar segments, in start-up order: (key, label).
SEGMENTS = (
    ("weights_gb", "weights"),
    ("kv_gb", "KV pool"),
    ("other_pools_gb", "mamba/SWA pools"),
    ("graphs_gb", "CUDA graphs"),
    ("draft_gb", "draft model"),
    ("unaccounted_gb", "other (activations, NCCL, …)"),
    ("free_after_gb", "free after start-up"),
)


def _sum(*values: Any) -> float | None:
    nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return round(sum(nums), 2) if nums else None


def _row(r: dict[str, Any], tightest: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "rank": r.get("rank") or "-",
        "tightest": tightest is not None and r.get("rank") == tightest,
        "free_at_start_gb": r.get("free_at_start_gb"),
        "weights_gb": r.get("weights_gb"),
        "kv_gb": r.get("kv_gb"),
        "kv_tokens": r.get("kv_tokens"),
        "kv_dtype": r.get("kv_dtype"),
        "other_pools_gb": _sum(r.get("mamba_gb"), r.get("swa_gb")),
        "graphs_gb": r.get("target_graph_gb"),
        "draft_gb": _sum(r.get("draft_weights_gb"), r.get("draft_kv_gb"), r.get("draft_graph_gb")),
        "free_after_gb": r.get("free_after_gb"),
    }
    start = row["free_at_start_gb"]
    known = _sum(*(row[k] for k, _ in SEGMENTS if k not in ("unaccounted_gb",)))
    # What the start-up lines do not name (NCCL buffers, activations of warm-up, allocator slack).
    row["unaccounted_gb"] = (
        round(start - known, 2)
        if start is not None and known is not None and start > known
        else None
    )
    return row


def memory_section(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The last launch's budget from a file summary (`launches[].memory`), or None."""
    launches = entry.get("launches") or []
    found = next(
        ((i, a["memory"]) for i, a in reversed(list(enumerate(launches))) if a.get("memory")), None
    )
    if found is None:
        return None
    index, mem = found
    ranks = mem.get("ranks") or []
    frees = {r.get("free_after_gb") for r in ranks}
    tight = mem.get("tightest_rank") if len(frees) > 1 else None
    return {
        "launch": index + 1,
        "launches": len(launches),
        "mem_fraction_static": mem.get("mem_fraction_static"),
        "mem_fraction_static_source": mem.get("mem_fraction_static_source"),
        "kv_bytes_per_token": mem.get("kv_bytes_per_token"),
        "captured_max_bs": mem.get("captured_max_bs"),
        "gpu_total_gb": mem.get("gpu_total_gb"),
        "tightest_rank": tight,
        "ranks": [_row(r, tight) for r in ranks],
    }
