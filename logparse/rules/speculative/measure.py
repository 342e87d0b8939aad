"""Speculative acceptance measured in a log: the mean accept length (decode stats or a benchmark),
the per-draft-token acceptance it implies, and the break-even accept length against a run without
speculation in the same log."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logparse.model.events import BenchServingResult
from logparse.parsing import colstats

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

BISECTION_STEPS = 60


def finite(values: Any) -> list[float]:
    return [float(v) for v in values if not math.isnan(v)]


def implied_token_acceptance(accept_len: float, depth: int) -> float | None:
    """The per-draft-token acceptance p for which a chain of `depth` drafts gives this mean accept
    length: (1 − p^(depth+1)) / (1 − p) = accept_len (bisection)."""
    if depth < 1 or accept_len < 1:
        return None
    if accept_len >= depth + 1:
        return 1.0

    def expected(p: float) -> float:
        return float(depth + 1) if p >= 1 else (1 - p ** (depth + 1)) / (1 - p)

    lo, hi = 0.0, 1.0
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        if expected(mid) < accept_len:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 3)


@dataclass
class Acceptance:
    """The mean accept length of a log and where it comes from."""

    mean: float | None = None
    rate_mean: float | None = None
    lines: int = 0
    first_line: int = 0
    last_line: int = 0
    source: str = ""
    bench: BenchServingResult | None = None


def acceptance(log: ParsedLog) -> Acceptance:
    """From the decode stats lines that print `accept len`, else from bench_serving results."""
    d = log.decode
    acc = d.cols["accept_len"]
    idx = colstats.present_indices(acc)
    out = Acceptance()
    if idx:
        vals = [acc[i] for i in idx]
        out.mean = round(sum(vals) / len(vals), 3)
        rates = finite(d.cols["accept_rate"][i] for i in idx)
        out.rate_mean = round(sum(rates) / len(rates), 3) if rates else None
        out.lines = len(idx)
        out.first_line = d.line[idx[0]]
        out.last_line = d.line[idx[-1]]
        out.source = "decode lines"
        return out
    for b in log.of(BenchServingResult):
        if isinstance(b.fields.get("accept_length"), (int, float)):
            out.mean = float(b.fields["accept_length"])
            out.first_line = b.line
            out.last_line = b.end_line or b.line
            out.source = "benchmark"
            out.bench = b
    return out


def break_even(log: ParsedLog, acc: Acceptance) -> dict[str, Any] | None:
    """The accept length at which speculation only breaks even, when the log also holds a run
    without speculation to compare with: decode throughput per running request at the same batch
    sizes (decode lines without accept fields), or bench_serving results at the same concurrency.
    speedup = spec / baseline; break-even accept length = accept_len / speedup."""
    if acc.mean is None:
        return None
    d = log.decode
    spec, base = per_request_throughput(d.cols["accept_len"], d.cols["running"], d.cols["gen_throughput"])
    common = sorted(set(spec) & set(base))
    if common:
        speedup = median([spec[b] / base[b] for b in common])
        return {"method": "decode throughput per running request, spec vs no-spec lines at the same batch sizes",
                "speedup": round(speedup, 3), "break_even_accept_len": round(acc.mean / speedup, 2),
                "batch_buckets": [2 ** b for b in common]}
    benches = log.of(BenchServingResult)
    with_acc = [b for b in benches if "accept_length" in b.fields and b.fields.get("output_throughput")]
    without = [b for b in benches if "accept_length" not in b.fields and b.fields.get("output_throughput")]
    for s in with_acc:
        for b in without:
            if s.fields.get("max_concurrency") == b.fields.get("max_concurrency"):
                speedup = float(s.fields["output_throughput"]) / float(b.fields["output_throughput"])
                mean = float(s.fields["accept_length"])
                return {"method": "bench_serving output throughput with vs without speculation at the same concurrency",
                        "speedup": round(speedup, 3), "break_even_accept_len": round(mean / speedup, 2),
                        "bench_lines": [b.line, s.line]}
    return None


def per_request_throughput(acc: Any, run: Any, gen: Any) -> tuple[dict[int, float], dict[int, float]]:
    """Median decode throughput per running request, by batch-size bucket (int(log2(#running))),
    for lines with accept fields (speculative) and without (baseline). numpy on large logs."""
    if len(run) >= colstats.NUMPY_FROM:
        import numpy as np

        r, g, a = (np.frombuffer(c, dtype=np.float64) for c in (run, gen, acc))
        valid = (r > 0) & (g > 0)  # NaN compares False
        rv, gv, av = r[valid], g[valid], a[valid]
        buckets = np.trunc(np.log2(rv)).astype(np.int64)
        ratio = gv / rv
        is_spec = ~np.isnan(av)
        out: tuple[dict[int, float], dict[int, float]] = ({}, {})
        for which, mask in ((0, is_spec), (1, ~is_spec)):
            for b in np.unique(buckets[mask]).tolist():
                out[which][int(b)] = float(np.median(ratio[mask & (buckets == b)]))
        return out
    spec: dict[int, list[float]] = {}
    base: dict[int, list[float]] = {}
    for i in range(len(run)):
        rr, gg = run[i], gen[i]
        if math.isnan(rr) or math.isnan(gg) or rr <= 0 or gg <= 0:
            continue
        bucket = int(math.log2(rr))
        (base if math.isnan(acc[i]) else spec).setdefault(bucket, []).append(gg / rr)
    return ({b: median(v) for b, v in spec.items()}, {b: median(v) for b, v in base.items()})


def median(values: list[float]) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
