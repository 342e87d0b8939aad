"""Serving behaviour for a report: time series and per-concurrency summaries of the stats lines.

Throughput at 1 running request and at 32 are different questions, so the summaries are per
#running-req level (power-of-two buckets: 1, 2, 3–4, 5–8, …): median and p90 of generation
throughput, per-request throughput, queued requests, token usage, the share of decode batches
that ran as CUDA graphs, prefill input throughput, and retractions. With DP attention every DP
rank prints its own stats lines; each line is counted at its own rank's concurrency.

numpy is imported inside the functions: the report is the only user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logparse.model.events import Retraction
from logparse.parsing.columns import StatsColumns, epoch, from_epoch
from logparse.run.views import rank_key

if TYPE_CHECKING:
    import numpy as np

    from logparse.engine.core import Analysis

MAX_LISTED_LINES = 10


def bucket_of(running: float) -> tuple[int, int]:
    """The concurrency bucket (lo, hi) of a #running-req value: 1, 2, 3–4, 5–8, 9–16, …"""
    if not abs(running) < 2**53:  # nan, inf: no bucket (int() would raise)
        return (0, 0)
    r = int(running)
    if r <= 0:
        return (0, 0)
    hi = 1
    while hi < r:
        hi *= 2
    return (hi // 2 + 1 if hi > 2 else hi, hi)


def bucket_label(lo: int, hi: int) -> str:
    return str(hi) if lo == hi else f"{lo}–{hi}"


def arr(values: Any) -> np.ndarray:
    import numpy as np

    return np.asarray(values, dtype="float64")


def stat(values: np.ndarray, *, nd: int = 2, p10: bool = False) -> dict[str, Any] | None:
    """median / p90 / max (and mean) of the non-NaN values; None when there are none."""
    import numpy as np

    v = values[~np.isnan(values)]
    if v.size == 0:
        return None
    out: dict[str, Any] = {
        "median": round(float(np.median(v)), nd),
        "p90": round(float(np.percentile(v, 90)), nd),
        "mean": round(float(v.mean()), nd),
        "max": round(float(v.max()), nd),
    }
    if p10:
        out["p10"] = round(float(np.percentile(v, 10)), nd)
        out["min"] = round(float(v.min()), nd)
    return out


def _num(v: float) -> float | int:
    return int(v) if abs(v) < 2**53 and v == int(v) else v  # abs() first: int() of inf/nan raises


def columns(cols: StatsColumns, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    out = {"line": arr(cols.line), "ts": arr(cols.ts), "rank": arr(cols.rank)}
    for name in names:
        out[name] = arr(cols.column(name))
    return out


DECODE = (
    "running",
    "queue",
    "token_usage",
    "gen_throughput",
    "cuda_graph",
    "accept_len",
    "accept_rate",
    "tokens",
    "mamba_usage",
)
PREFILL = (
    "running",
    "queue",
    "token_usage",
    "input_throughput",
    "new_token",
    "cached_token",
    "new_seq",
)


def _bucket_his(running: np.ndarray) -> np.ndarray:
    """The upper bound of each value's bucket (0 for NaN or idle): 1, 2, 4, 8, …"""
    import numpy as np

    r = np.nan_to_num(running, nan=0.0)
    r = np.where(r >= 1, np.floor(r), 0.0)
    with np.errstate(divide="ignore"):
        hi = np.where(r >= 1, 2.0 ** np.ceil(np.log2(np.maximum(r, 1.0))), 0.0)
    return hi


def by_concurrency(
    d: dict[str, np.ndarray], p: dict[str, np.ndarray], retraction_lines: list[int]
) -> list[dict[str, Any]]:
    import numpy as np

    d_hi = _bucket_his(d["running"])
    p_hi = _bucket_his(p["running"])
    # A retraction is counted at the concurrency of the decode batch printed just before it.
    order = np.argsort(d["line"], kind="stable")
    before = np.searchsorted(d["line"][order], np.asarray(retraction_lines, dtype="float64")) - 1
    r_hi = [float(d_hi[order[i]]) for i in before if i >= 0 and d_hi[order[i]] > 0]
    out = []
    for hi in sorted({float(h) for h in np.unique(d_hi) if h > 0} | set(r_hi)):
        key = bucket_of(hi)
        m = d_hi == hi
        pm = p_hi == hi
        running = d["running"][m]
        gen = d["gen_throughput"][m]
        with np.errstate(divide="ignore", invalid="ignore"):
            per_req = np.where(running > 0, gen / running, np.nan)
        graph = d["cuda_graph"][m]
        graph_known = graph[~np.isnan(graph)]
        inp = p["input_throughput"][pm]
        row: dict[str, Any] = {
            "running": bucket_label(*key),
            "lo": key[0],
            "hi": key[1],
            "decode_lines": int(m.sum()),
            "gen_throughput": stat(gen),
            "per_request_throughput": stat(per_req),
            "queue": stat(d["queue"][m], nd=1),
            "token_usage": stat(d["token_usage"][m]),
            "cuda_graph_share": round(float(graph_known.mean()), 3) if graph_known.size else None,
            "accept_len": stat(d["accept_len"][m]),
            "prefill_lines": int(pm.sum()),
            "input_throughput": stat(inp[inp > 0]) if inp.size else None,
            "retractions": sum(1 for h in r_hi if h == hi),
        }
        out.append(row)
    return out


def _rel_time(ts: np.ndarray, t0: float) -> np.ndarray:
    return ts - t0


def serving_section(analysis: Analysis) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the serving data for the report, the series for the plots)."""
    import numpy as np

    log = analysis.log
    d = columns(log.decode, DECODE)
    p = columns(log.prefill, PREFILL)
    retractions = log.of(Retraction)
    data: dict[str, Any] = {
        "decode_lines": len(log.decode),
        "prefill_lines": len(log.prefill),
        "http_requests": len(log.access),
    }
    if not len(log.decode) and not len(log.prefill):
        data["retractions"] = {
            "count": len(retractions),
            "lines": [e.line for e in retractions][:MAX_LISTED_LINES],
        }
        return data, {}
    # The distinct codes first (np.unique), then their names: not a million int() calls.
    ranks = sorted(
        {log.decode.ranks.values[int(c)] or "" for c in np.unique(d["rank"])}
        | {log.prefill.ranks.values[int(c)] or "" for c in np.unique(p["rank"])},
        key=rank_key,
    )
    dp_attention = (
        bool(analysis.views.arg("enable_dp_attention")) or sum(1 for r in ranks if "DP" in r) > 1
    )
    codes, counts = np.unique(np.asarray(log.access.status, dtype=np.int64), return_counts=True)
    statuses = {str(int(code)): int(n) for code, n in zip(codes, counts, strict=True)}
    overall: dict[str, Any] = {
        "gen_throughput": stat(d["gen_throughput"]),
        "running": stat(d["running"], nd=1) if len(log.decode) else stat(p["running"], nd=1),
        "queue": stat(np.concatenate([d["queue"], p["queue"]]), nd=1),
        "token_usage": stat(np.concatenate([d["token_usage"], p["token_usage"]])),
        "input_throughput": stat(p["input_throughput"][p["input_throughput"] > 0]),
        "mamba_usage": stat(d["mamba_usage"]),
    }
    data.update(
        {
            "stats_ranks": [r for r in ranks if r] or ["(untagged)"],
            "dp_attention": dp_attention,
            "overall": {k: v for k, v in overall.items() if v is not None},
            "http_status": dict(sorted(statuses.items())),
        }
    )
    all_ts = np.concatenate([d["ts"], p["ts"]])
    known = all_ts[~np.isnan(all_ts)]
    timed = known.size >= max(1, (len(log.decode) + len(log.prefill)) // 2)
    if timed:
        t0, t1 = float(known.min()), float(known.max())
        start, end = from_epoch(t0), from_epoch(t1)
        data["span"] = {
            "start": start.isoformat(sep=" ") if start and start.year > 1900 else None,
            "end": end.isoformat(sep=" ") if end and end.year > 1900 else None,
            "duration_s": round(t1 - t0, 1),
        }
    else:
        t0 = 0.0
    # CUDA-graph use of decode batches.
    graph = d["cuda_graph"]
    with_graph = d["running"][graph == 1.0]
    without = d["running"][graph == 0.0]
    no_graph_lines = [int(n) for n in d["line"][graph == 0.0][:MAX_LISTED_LINES]]
    data["cuda_graph"] = {
        "decode_lines_with": int((graph == 1.0).sum()),
        "decode_lines_without": int((graph == 0.0).sum()),
        "max_running_with_graph": _num(float(with_graph.max())) if with_graph.size else None,
        "min_running_without_graph": _num(float(without.min())) if without.size else None,
        "captured_max_bs": analysis.views.cuda_graph_max_bs,
        "first_lines_without": no_graph_lines,
    }
    data["retractions"] = {
        "count": len(retractions),
        "retracted_requests": sum(e.retracted or 0 for e in retractions),
        "lines": [e.line for e in retractions][:MAX_LISTED_LINES],
    }
    data["by_concurrency"] = by_concurrency(d, p, [e.line for e in retractions])

    def x(cols: dict[str, np.ndarray]) -> np.ndarray:
        return _rel_time(cols["ts"], t0) if timed else cols["line"]

    rank_names = np.asarray([name or "" for name in log.decode.ranks.values], dtype=object)
    series = {
        "timed": timed,
        "t0": data.get("span", {}).get("start"),
        "decode": {
            "x": x(d),
            "rank": rank_names[d["rank"].astype(np.intp)].tolist(),
            **{k: d[k] for k in DECODE},
        },
        "prefill": {"x": x(p), **{k: p[k] for k in PREFILL}},
        "retractions": [
            (epoch(r.ts) - t0) if timed else float(r.line)
            for r in retractions
            if r.ts is not None or not timed
        ],
        "by_concurrency": data["by_concurrency"],
    }
    return data, series
