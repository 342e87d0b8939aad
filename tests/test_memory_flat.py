"""Memory that must not grow with the file beyond the hot columns themselves (issue 10: peak RSS
≤ 300 MiB at 4M lines). Measured with tracemalloc (Python allocations, deterministic), never RSS:
the reductions over the columns hold O(slice) memory, not a Python object per row."""

from __future__ import annotations

import math
import tracemalloc
from array import array
from collections.abc import Callable
from typing import Any

from logparse.io.readreport import ReadReport
from logparse.parsing.pipeline import ParsedLog
from logparse.run import speculative

MiB = 1 << 20


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """fn's result and the peak of the Python memory it allocated (bytes)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _spec_log(rows: int) -> ParsedLog:
    """Decode rows that print accept len and rate (every third without a rate), as stage 1 leaves them."""
    log = ParsedLog(path="spec.log", report=ReadReport(path="spec.log"))
    d = log.decode
    for i in range(rows):
        d.add(i + 1, 1.7e9 + i, "TP0", {"running": 8 + i % 5, "accept_len": 1.5 + (i % 7) / 4,
                                        **({"accept_rate": 0.25 + (i % 3) / 8} if i % 3 else {})})
    return log


def test_acceptance_sums_in_slices_not_lists() -> None:
    """Old: a list of every present row index and of every value (~70 MB per million rows)."""
    small, big = _spec_log(20_000), _spec_log(400_000)
    (acc_small, peak_small), (acc_big, peak_big) = (_peak(lambda log=log: speculative._acceptance(log))
                                                    for log in (small, big))
    assert peak_big < 4 * MiB and peak_big < 4 * max(peak_small, MiB // 4)  # 20x the rows, not 20x the memory
    # The same answer as the sum of the list of values, in file order.
    vals = [v for v in big.decode.cols["accept_len"] if not math.isnan(v)]
    rates = [big.decode.cols["accept_rate"][i] for i, v in enumerate(big.decode.cols["accept_len"])
             if not math.isnan(v) and not math.isnan(big.decode.cols["accept_rate"][i])]
    assert acc_big.mean == round(sum(vals) / len(vals), 3)
    assert acc_big.rate_mean == round(sum(rates) / len(rates), 3)
    assert (acc_big.lines, acc_big.first_line, acc_big.last_line) == (400_000, 1, 400_000)
    assert acc_small.lines == 20_000


def test_acceptance_first_and_last_printed_row() -> None:
    log = ParsedLog(path="x.log", report=ReadReport(path="x.log"))
    d = log.decode
    for i in range(200_000):
        printed = i in (70_000, 70_001, 150_000)
        d.add(10 + i, 1.7e9, "TP0", {"running": 1, **({"accept_len": 2.0 + i % 2} if printed else {})})
    acc = speculative._acceptance(log)
    assert (acc.lines, acc.first_line, acc.last_line, acc.mean, acc.rate_mean) == (3, 70_010, 150_010, 2.333, None)
    assert speculative._acceptance(ParsedLog(path="y", report=ReadReport(path="y"))).mean is None
    assert isinstance(d.cols["accept_len"], array)
