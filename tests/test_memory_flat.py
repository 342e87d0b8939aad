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


def _held(fn: Callable[[], Any]) -> tuple[Any, int]:
    """fn's result and the Python memory it still holds once it returned (bytes)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[0] - base
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
    acc, rate = big.decode.column("accept_len"), big.decode.column("accept_rate")
    vals = [v for v in acc if not math.isnan(v)]
    rates = [rate[i] for i, v in enumerate(acc) if not math.isnan(v) and not math.isnan(rate[i])]
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


def _bits(values: Any) -> bytes:
    return array("d", values).tobytes()


def test_narrowed_columns_give_back_the_same_floats() -> None:
    """Across slice boundaries, every kind of value: NaN, counts beyond int32, -0.0, decimals with
    up to four places and more, flags; whole columns and row ranges are the float64s appended."""
    from logparse.parsing import columns

    rows = 3 * columns.CHUNK_ROWS + 123
    want: dict[str, list[float]] = {f: [] for f in columns.DECODE_FIELDS}
    d = columns.decode_columns()
    for i in range(rows):
        kw: dict[str, Any] = {"running": i % 50, "tokens": 10 * i, "cuda_graph": bool(i % 3)}
        if i // columns.CHUNK_ROWS == 1:
            kw["tokens"] = 2**40 + i  # too wide for int32: this slice stays float64
            kw["token_usage"] = -0.0 if i % 1000 == 0 else (i % 100) / 100
        else:
            kw["token_usage"] = (i % 100) / 100
        if i % 7:
            kw["gen_throughput"] = round(1000 + i / 37, 2) if i < 2 * columns.CHUNK_ROWS else 1000 + i / 37
        if i >= 2 * columns.CHUNK_ROWS:
            kw["accept_len"] = 1 + (i % 300) / 100
        d.add(i, 1.7e9, "TP0", kw)
        for f in columns.DECODE_FIELDS:
            v = kw.get(f, math.nan)
            want[f].append(float(v))
    assert len(d) == rows
    for f in columns.DECODE_FIELDS:
        assert d.column(f).tobytes() == _bits(want[f]), f
        for lo, hi in ((0, 10), (columns.CHUNK_ROWS - 5, columns.CHUNK_ROWS + 5), (rows - 200, rows + 50),
                       (2 * columns.CHUNK_ROWS + 7, 2 * columns.CHUNK_ROWS + 8), (5, 5)):
            assert d.column(f, lo, hi).tobytes() == _bits(want[f][lo:hi]), (f, lo, hi)
    other = columns.decode_columns()
    other.add(0, 1.0, "TP1", {"running": 3})
    other.extend(d)
    assert other.column("tokens").tobytes() == _bits([math.nan] + want["tokens"])
    assert other.column("running").tobytes() == _bits([3.0] + want["running"])
    assert other.column("gen_throughput").tobytes() == _bits([math.nan] + want["gen_throughput"])


def test_stats_fields_are_stored_narrow() -> None:
    """Counts, flags and two-decimal values of a serving log: 16 bytes a row for the nine decode
    fields (9 x 8 as float64 before: 97 bytes a row in all, measured); `iteration`, never
    printed, holds nothing."""
    from logparse.parsing import columns

    def fill() -> columns.StatsColumns:
        d = columns.decode_columns()
        for i in range(200_000):
            d.add(i, 1.7e9, "TP0", {"running": i % 48, "tokens": 800 + 37 * i % 700_000,
                                    "token_usage": (i % 100) / 100, "cuda_graph": True,
                                    "gen_throughput": (1376 + i % 830_000) / 100, "queue": i % 4000,
                                    "accept_len": (175 + i % 190) / 100, "accept_rate": (44 + i % 47) / 100})
        return d

    d, held = _held(fill)
    # line, ts, rank: 9 bytes a row (were 20); the fields 16 (were 72); ~28 measured (39 with
    # wide base columns, 97 with wide fields).
    assert held < 200_000 * 32, held
    assert all(math.isnan(v) for v in d.column("iteration"))
    assert d.column("token_usage", 0, 3).tolist() == [0.0, 0.01, 0.02]


def _base_rows(rows: int) -> list[tuple[int, float, str | None]]:
    """(line, ts, rank) rows crossing every narrowing case, slice by slice: whole seconds, ms,
    us, times no unit gives back (float64 kept), NaN (no time), -0.0, slices spanning more than
    int32 microseconds; line gaps beyond uint32; more ranks than int8 holds."""
    from logparse.parsing.columns import CHUNK_ROWS

    out: list[tuple[int, float, str | None]] = []
    line = 5
    for i in range(rows):
        s, k = divmod(i, CHUNK_ROWS)
        line += 3 if not (s == 2 and k == 100) else 1 << 33
        ts = [1.7e9 + i // 10, 1.7e9 + i / 1000, 1.7e9 + i * 1e-6, 1.7e9 + i / 3, 1.7e9 + i * 50.000001,
              -0.0 if k == 9 else 1e-3 * k][s % 6]
        if k % 11 == 0:
            ts = math.nan
        rank = f"TP{k % 300}" if s == 3 else (None if k % 5 == 0 else f"TP{k % 8}")
        out.append((line, ts, rank))
    return out


def test_base_columns_give_back_the_same_values() -> None:
    """Line numbers, times (bit for bit, NaN and -0.0 kept) and rank codes across narrowed
    slices: whole columns, iteration, indexes, row ranges, extend, pickling."""
    import pickle

    from logparse.parsing import columns

    rows = 6 * columns.CHUNK_ROWS + 77
    want = _base_rows(rows)
    a = columns.AccessColumns()
    for line, ts, rank in want:
        a.add(line, ts, rank, {"client": "1.2.3.4:5", "method": "GET", "path": "/x", "status": 200})
    lines, times = [r[0] for r in want], [r[1] for r in want]
    codes = [a.ranks.code(r[2]) for r in want]
    assert len(a.line) == len(a.ts) == len(a.rank) == rows
    assert len(a.line.chunks) == 6 and len({c[0].typecode for c in a.ts.chunks}) > 1
    assert list(a.line) == lines and a.line.numpy().tolist() == lines and list(a.rank) == codes
    assert a.ts.tobytes() == _bits(times) and a.ts.numpy().tobytes() == _bits(times)
    assert array("d", a.ts).tobytes() == _bits(times)
    for i in (0, 11, columns.CHUNK_ROWS - 1, columns.CHUNK_ROWS, 2 * columns.CHUNK_ROWS + 101, rows - 1, -1, -rows):
        assert a.line[i] == lines[i] and a.rank[i] == codes[i], i
        assert _bits([a.ts[i]]) == _bits([times[i]]), i
    for lo, hi in ((0, 10), (columns.CHUNK_ROWS - 5, columns.CHUNK_ROWS + 5), (rows - 200, rows + 50), (7, 7),
                   (columns.CHUNK_ROWS, 5 * columns.CHUNK_ROWS + 3)):
        assert a.ts[lo:hi].tobytes() == _bits(times[lo:hi]), (lo, hi)
        assert a.line.values(lo, hi).tolist() == lines[lo:hi] and a.rank[lo:hi].tolist() == codes[lo:hi]
    copy = pickle.loads(pickle.dumps(a))
    copy.add(1, 2.0, "TP1", {"client": "c", "method": "GET", "path": "/", "status": 200})
    assert copy.line == a.line.values() + array("q", [1]) and len(a) == rows
    loose = columns.BaseColumn("d")  # appended without a seal: the tail is longer than a slice
    for i in range(columns.CHUNK_ROWS + 9):
        loose.append(times[i])
    assert _bits([loose[columns.CHUNK_ROWS + 3], loose[-1]]) == _bits([times[columns.CHUNK_ROWS + 3], times[columns.CHUNK_ROWS + 8]])
    other = columns.AccessColumns()
    other.add(1, 0.5, "TP9", {"client": "c", "method": "GET", "path": "/", "status": 200})
    other.extend(a)
    assert other.ts.tobytes() == _bits([0.5, *times]) and list(other.line) == [1, *lines]
    assert [other.ranks.values[c] for c in other.rank] == ["TP9", *(r[2] for r in want)]


def test_base_columns_are_stored_narrow() -> None:
    """A serving log's line numbers (uint32 deltas), whole-second times (int32 offsets) and
    ranks (int8): 9 bytes a row for the three, 20 before."""
    import numpy  # noqa: F401 — imported before the measure (sealing imports it)

    from logparse.parsing import columns

    def fill() -> columns.AccessColumns:
        a = columns.AccessColumns()
        add = a.add_fields
        for i in range(300_000):
            add(3 * i + 7, 1.7e9 + i // 40, i % 8 + 1, "c", "GET", "/", 200)
        return a

    a, held = _held(fill)
    # status/method/path/client: 16 bytes a row; the base columns ~9 (were 20) and their wide
    # tails (one slice each): ~27 measured, ~37 before.
    assert held < 300_000 * 31, held
    assert a.line[-1] == 3 * 299_999 + 7 and a.ts[-1] == 1.7e9 + 299_999 // 40


def _graph_reference(d: Any, captured: float | None) -> tuple[Any, ...]:
    """What cuda-graph-not-used read before: lists of the False and True rows and their counts."""
    graph, running = d.column("cuda_graph"), d.column("running")
    false_idx = [i for i, v in enumerate(graph) if v == 0.0]
    true_idx = [i for i, v in enumerate(graph) if v == 1.0]
    run_false = [running[i] for i in false_idx if running[i] == running[i]]
    run_true = [running[i] for i in true_idx if running[i] == running[i]]
    peak = max(false_idx, key=lambda i: running[i] if running[i] == running[i] else -1) if false_idx else -1
    return (len(false_idx), bool(true_idx), false_idx[0] if false_idx else -1, false_idx[-1] if false_idx else -1,
            peak, min(run_false, default=None), max(run_false, default=None), max(run_true, default=None),
            sum(1 for r in run_false if captured is not None and r > captured))


def test_graph_rows_one_pass_equals_the_lists() -> None:
    import random

    from logparse.parsing import columns
    from logparse.rules import performance

    rng = random.Random(5)
    for rows in (0, 300, 150_000):  # Python below NUMPY_FROM, numpy slices above
        d = columns.decode_columns()
        for i in range(rows):
            kw: dict[str, Any] = {}
            if rng.random() < 0.9:
                kw["cuda_graph"] = rng.random() < 0.7
            if rng.random() < 0.8:
                kw["running"] = rng.choice([-1, -5, 0, 3, 64, 64, rng.randint(0, 200)])
            d.add(i, 1.0, "TP0", kw)
        for captured in (None, 48):
            got = performance._graph_rows(d, captured)
            assert (got.false_lines, got.any_true, got.first, got.last, got.peak, got.min_false, got.max_false,
                    got.max_true, got.above) == _graph_reference(d, captured), (rows, captured)


def test_graph_rows_hold_a_slice_not_lists() -> None:
    from logparse.parsing import columns
    from logparse.rules import performance

    d = columns.decode_columns()
    for i in range(400_000):
        d.add(i, 1.0, "TP0", {"cuda_graph": i % 5 != 0, "running": i % 97})
    got, peak = _peak(lambda: performance._graph_rows(d))
    assert got.false_lines == 80_000 and got.max_true == 96
    assert peak < 6 * MiB, peak  # the lists: ~30 MB here (~126 MB at 4M failure-heavy lines)


def test_break_even_buckets_keep_the_valid_rows_only() -> None:
    """per_request_throughput: the valid rows' ratio, bucket and kind (11 bytes a row, joined
    once), not three whole float64 columns and their temporaries at once (~70 bytes a row)."""
    from logparse.parsing import columns

    d = columns.decode_columns()
    for i in range(400_000):
        d.add(i, 1.0, "TP0", {"running": 1 + i % 90, "gen_throughput": 100 + i % 5000 / 100,
                              **({"accept_len": 2.5} if i % 2 else {})})
    (spec, base), peak = _peak(lambda: speculative.per_request_throughput(d))
    assert sorted(base) == list(range(7)) and sorted(spec) == list(range(1, 7))  # odd rows: an even count
    assert peak < 400_000 * 40, peak


def test_saturated_rows_one_pass_equals_the_list() -> None:
    """kv-cache-saturated's facts from one pass equal those of the old list of (line, usage, queue,
    running) per hit, sorted."""
    import random

    from logparse.parsing import columns
    from logparse.rules import performance

    rng = random.Random(9)
    for rows in (0, 500, 90_000):
        d, p = columns.decode_columns(), columns.prefill_columns()
        for i in range(rows):
            kw: dict[str, Any] = {"token_usage": rng.choice([0.5, 0.9, 0.95, 0.99, 1.0]),
                                  "queue": rng.choice([0, 0, 3, 40, 200])}
            if rng.random() < 0.8:
                kw["running"] = rng.randint(0, 60)
            (d if rng.random() < 0.6 else p).add(2 * i + rng.randint(0, 1), 1.0, "TP0", kw)
        hits = []
        for cols in (d, p):
            usage, queue, running = (cols.column(n) for n in ("token_usage", "queue", "running"))
            hits += [(cols.line[i], usage[i], queue[i], running[i]) for i in range(len(cols))
                     if usage[i] >= 0.9 and queue[i] > 0]
        hits.sort()
        got = performance._saturated(d, p, 0.9)
        assert got.lines == len(hits)
        if not hits:
            continue
        runs = sorted(h[3] for h in hits if h[3] == h[3])
        assert (got.first, got.last, got.peak_line) == (hits[0][0], hits[-1][0], max(hits, key=lambda h: (h[1], h[2]))[0])
        assert (got.peak_queue, got.peak_usage) == (max(h[2] for h in hits), max(h[1] for h in hits))
        assert got.median_running() == (runs[len(runs) // 2] if runs else None)
        assert got.dwarfed == any(performance._dwarfed(h[2], h[3]) for h in hits)


def test_saturated_rows_hold_no_tuple_per_hit() -> None:
    from logparse.parsing import columns
    from logparse.rules import performance

    d = columns.decode_columns()
    for i in range(300_000):
        d.add(i, 1.0, "TP0", {"token_usage": 0.97, "queue": 5 + i % 9, "running": i % 40})
    got, peak = _peak(lambda: performance._saturated(d, columns.prefill_columns(), 0.9))
    assert got.lines == 300_000
    assert peak < 12 * MiB, peak  # 6 MB measured (8 bytes a hit for the median); the list of tuples: 72 MB


def test_queued_at_cap_one_pass_equals_the_lists() -> None:
    import random

    from logparse.parsing import columns
    from logparse.rules.info import max_running

    rng = random.Random(3)
    for rows in (0, 400, 140_000):
        d = columns.decode_columns()
        for i in range(rows):
            kw: dict[str, Any] = {}
            if rng.random() < 0.9:
                kw["running"] = rng.choice([8, 16, 31, 32, 32, 40])
            if rng.random() < 0.9:
                kw["queue"] = rng.choice([0, 0, 1, 7, 90])
            if rng.random() < 0.7:
                kw["token_usage"] = rng.choice([0.1, 0.35, 0.8])
            d.add(i, 1.0, "TP0", kw)
        running, queue, usage = (d.column(n) for n in ("running", "queue", "token_usage"))
        at_cap = [i for i in range(len(d)) if running[i] == running[i] and running[i] >= 32]
        queued = [i for i in at_cap if queue[i] == queue[i] and queue[i] > 0]
        u = [usage[i] for i in queued if usage[i] == usage[i]]
        got = max_running._queued_at_cap(d, 32)
        assert got[0] == len(queued)
        if queued:
            assert got[1:] == (queued[0], max(queue[i] for i in queued), max(u) if u else None)
    d = columns.decode_columns()
    for i in range(600_000):
        d.add(i, 1.0, "TP0", {"running": 32, "queue": 1 + i % 5, "token_usage": 0.5})
    got, peak = _peak(lambda: max_running._queued_at_cap(d, 32))
    assert got == (600_000, 0, 5.0, 0.5)
    assert peak < 8 * MiB, peak  # three widened slices; the lists of every row at the cap: ~43 MB
