"""What a change bought: benchmark results side by side at matched concurrency, decode throughput
per concurrency bucket (medians and spread), a noise statement, and — for speculative decoding —
the speedup and the break-even accept length against the baseline.

Noise: a run's spread in a bucket is its relative half inter-quartile range of decode throughput
((p75 − p25) / 2 / median). A ratio whose distance from 1 lies inside the larger spread of the two
runs is "no measurable difference", not a win. A benchmark result is one number per run; its noise
is the spread of the decode stats lines at the same concurrency when both logs have them.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.model.events import BenchServingResult
from logparse.run.speculative import acceptance, break_even_accept_len, median

if TYPE_CHECKING:
    from logparse.compare.settings import RunSettings

# bench_serving fields compared, and whether a larger value is better.
BENCH_METRICS: tuple[tuple[str, bool], ...] = (
    ("output_throughput", True), ("total_throughput", True), ("request_throughput", True),
    ("median_ttft_ms", False), ("median_itl_ms", False), ("median_tpot_ms", False),
    ("median_e2e_latency_ms", False), ("accept_length", True),
)
MIN_LINES = 3  # decode lines per bucket and run before a bucket is compared


@dataclass(frozen=True)
class Metric:
    """One measured quantity at one concurrency, baseline vs candidate."""

    name: str
    concurrency: Any  # bench max_concurrency ('not set' → None), or a decode bucket label '4-7'
    baseline: float
    candidate: float
    source: str  # 'bench' or 'decode'
    higher_is_better: bool = True
    noise: float | None = None  # relative band: |ratio − 1| inside it is no measurable difference
    candidate_source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        return round(self.candidate / self.baseline, 3) if self.baseline else None

    @property
    def assessment(self) -> str:
        r = self.ratio
        if r is None:
            return "no ratio (baseline is 0)"
        if self.noise is None:
            where = "one measurement each, noise unknown"
        elif abs(r - 1) <= self.noise:
            return f"no measurable difference (inside the runs' own spread of ±{self.noise:.1%})"
        else:
            where = f"outside the runs' spread of ±{self.noise:.1%}"
        better = (r > 1) == self.higher_is_better
        return f"{'better' if better else 'worse'} ({where})" if r != 1 else "equal"

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "concurrency": self.concurrency, "baseline": self.baseline,
               "candidate": self.candidate, "ratio": self.ratio, "source": self.source,
               "higher_is_better": self.higher_is_better, "noise": self.noise, "assessment": self.assessment,
               "candidate_source": self.candidate_source}
        out.update(self.extra)
        return out


@dataclass
class Bucket:
    """Decode throughput of one run at one concurrency bucket."""

    label: str
    lines: int
    median: float
    spread: float  # relative half inter-quartile range


def _quantile(sorted_values: list[float], q: float) -> float:
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bucket_label(running: float) -> str:
    """#running-req → its power-of-two bucket: 1, 2-3, 4-7, …"""
    lo = 1 << int(math.log2(running))
    return str(lo) if lo == 1 else f"{lo}-{2 * lo - 1}"


def decode_buckets(run: RunSettings) -> dict[str, Bucket]:
    """Decode gen throughput per concurrency bucket, for the measured attempt's stats lines."""
    d = run.log.decode
    lines = d.line
    lo = bisect_left(lines, run.launch.first_line)
    hi = bisect_right(lines, run.launch.last_line)
    running, gen = d.column("running"), d.column("gen_throughput")
    values: dict[str, list[float]] = {}
    for i in range(lo, hi):
        r, g = running[i], gen[i]
        if math.isnan(r) or math.isnan(g) or r < 1 or g <= 0:
            continue
        values.setdefault(bucket_label(r), []).append(g)
    out: dict[str, Bucket] = {}
    for label, vals in values.items():
        vals.sort()
        m = median(vals)
        spread = (_quantile(vals, 0.75) - _quantile(vals, 0.25)) / 2 / m if m else 0.0
        out[label] = Bucket(label, len(vals), round(m, 2), round(spread, 4))
    return out


def _bench_by_concurrency(run: RunSettings) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
    out: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for b in run.launch.of(BenchServingResult):
        out.setdefault((b.fields.get("max_concurrency"), b.fields.get("request_rate")), []).append(b.fields)
    return out


def _value(blocks: list[dict[str, Any]], name: str) -> float | None:
    vals = [float(b[name]) for b in blocks if isinstance(b.get(name), (int, float)) and not isinstance(b.get(name), bool)]
    return round(median(vals), 3) if vals else None


def _repeat_spread(blocks: list[dict[str, Any]], name: str) -> float | None:
    vals = sorted(float(b[name]) for b in blocks if isinstance(b.get(name), (int, float)))
    if len(vals) < 2 or not median(vals):
        return None
    return (vals[-1] - vals[0]) / 2 / median(vals)


def compare_metrics(base: RunSettings, cand: RunSettings) -> list[Metric]:
    """Benchmark results at matched concurrency and decode throughput per bucket, with ratios."""
    out: list[Metric] = []
    bb, cb = decode_buckets(base), decode_buckets(cand)
    bench_b, bench_c = _bench_by_concurrency(base), _bench_by_concurrency(cand)
    for key in sorted(set(bench_b) & set(bench_c), key=str):
        conc = key[0]
        bucket = bucket_label(conc) if isinstance(conc, int) and conc >= 1 else None
        for name, higher in BENCH_METRICS:
            a, c = _value(bench_b[key], name), _value(bench_c[key], name)
            if a is None or c is None:
                continue
            spreads = [s for s in (_repeat_spread(bench_b[key], name), _repeat_spread(bench_c[key], name))
                       if s is not None]
            if not spreads and bucket in bb and bucket in cb and "throughput" in name:
                spreads = [bb[bucket].spread, cb[bucket].spread]
            extra = {"request_rate": key[1]} if key[1] is not None else {}
            out.append(Metric(name, conc, a, c, "bench", higher, round(max(spreads), 4) if spreads else None,
                              cand.source, extra))
    for label in sorted(set(bb) & set(cb), key=lambda s: int(s.split("-")[0])):
        x, y = bb[label], cb[label]
        if x.lines < MIN_LINES or y.lines < MIN_LINES:
            continue
        out.append(Metric("decode_throughput", label, x.median, y.median, "decode", True,
                          round(max(x.spread, y.spread), 4), cand.source,
                          {"baseline_lines": x.lines, "candidate_lines": y.lines,
                           "baseline_spread": x.spread, "candidate_spread": y.spread}))
    return out


def speculative_gain(base: RunSettings, cand: RunSettings, metrics: list[Metric]) -> dict[str, Any] | None:
    """Speedup of a speculative candidate over a baseline without speculation, and the accept length
    at which it would only break even (run/speculative.py owns the formula)."""
    if not cand.spec.configured or base.spec.configured:
        return None
    tput = [m for m in metrics if m.name == "output_throughput" and m.ratio]
    method = "bench_serving output throughput at matched concurrency"
    if not tput:
        tput = [m for m in metrics if m.name == "decode_throughput" and m.ratio]
        method = "decode throughput per concurrency bucket (median of the bucket ratios)"
    if not tput:
        return {"speedup": None, "note": "no benchmark or decode bucket measured in both runs"}
    speedup = round(median([m.ratio for m in tput if m.ratio]), 3)
    acc = acceptance(cand.log)
    noise = max((m.noise for m in tput if m.noise is not None), default=None)
    return {
        "speedup": speedup,
        "method": method,
        "concurrency": [m.concurrency for m in tput],
        "accept_len": acc.mean,
        "accept_len_source": acc.source or None,
        "break_even_accept_len": break_even_accept_len(acc.mean, speedup),
        "pays_off": speedup > 1 + (noise or 0.0),
        "algorithm": cand.spec.algorithm,
        "num_steps": cand.spec.num_steps,
    }
