"""Serving summary: throughput, load, KV-cache use and speculative acceptance from the stats lines."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from logparse.model.events import Retraction
from logparse.parsing import colstats

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


def _mean(values: Sequence[float]) -> float | None:
    mean = colstats.nanmean(values)
    return None if mean is None else round(mean, 3)


def _max(values: Sequence[float]) -> float | None:
    return colstats.nanmax(values)


def _num(value: float) -> float | int:
    """JSON numbers as printed: 48.0 → 48."""
    # abs() first: int() of inf or nan raises.
    return int(value) if abs(value) < 2**53 and value == int(value) else value


def is_nan(v: float) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _median(values: Sequence[float]) -> float | None:
    return colstats.nanmedian(values)


def _round(v: float | None, nd: int = 2) -> float | None:
    return None if v is None else round(v, nd)


def serving_summary(log: ParsedLog) -> dict[str, Any]:
    """Throughput, load, KV use and speculative acceptance over the whole log (stats lines)."""
    d, p, a = log.decode, log.prefill, log.access
    out: dict[str, Any] = {"decode_lines": len(d), "prefill_lines": len(p), "http_requests": len(a)}
    if len(d):
        gen = d.column("gen_throughput")
        out["gen_throughput"] = {"median": _round(_median(gen)), "max": _round(_max(gen))}
        out["running_req"] = {"median": _median(d.column("running")), "max": _max(d.column("running"))}
        out["token_usage"] = {"median": _round(_median(d.column("token_usage"))),
                              "max": _round(_max(d.column("token_usage")))}
        acc = d.column("accept_len")
        if colstats.any_present(acc):
            out["accept_len"] = {"mean": _mean(acc), "median": _round(_median(acc)), "min": _round(colstats.nanmin(acc)),
                                 "max": _round(_max(acc))}
            rate = d.column("accept_rate")
            if colstats.any_present(rate):
                out["accept_rate"] = {"mean": _mean(rate), "median": _round(_median(rate))}
        out["cuda_graph_false_lines"] = colstats.count_equal(d.column("cuda_graph"), 0.0)
    if len(p):
        thr = p.column("input_throughput")
        if colstats.any_present(thr):
            out["input_throughput"] = {"median": _round(_median(thr)), "max": _round(_max(thr))}
        out["prefill_queue_req_max"] = _max(p.column("queue"))
    # Requests queue on both kinds of stats line; the prefill lines see the queue while new
    # requests wait for prefill, so a decode-only maximum under-reports it (it printed
    # `queued: max 0` for a run that queued requests). facts.queue_req_max agrees.
    queue = [v for c in (d, p) if len(c) for v in c.column("queue")]
    if queue:
        out["queue_req"] = {"median": _median(queue), "max": _max(queue)}
    if len(a):
        from collections import Counter

        out["http_status"] = {str(k): v for k, v in sorted(Counter(a.status).items())}
    out["retractions"] = len(log.of(Retraction))
    return {k: v for k, v in out.items() if v is not None}


def launch_serving(log: ParsedLog, first_line: int, last_line: int) -> dict[str, Any]:
    """Decode stats of one launch attempt (lines first_line..last_line): how many stats lines, and
    their median generation throughput (None without any). `export`'s runs table reads it."""
    from bisect import bisect_left, bisect_right

    d = log.decode
    lines = d.line
    # Stats lines are appended in file order (byte-range parts are merged in order).
    lo, hi = bisect_left(lines, first_line), bisect_right(lines, last_line)
    gen = d.column("gen_throughput", lo, hi)
    median = _round(_median(gen)) if hi > lo else None
    return {"decode_lines": hi - lo, "gen_throughput_median": median}
