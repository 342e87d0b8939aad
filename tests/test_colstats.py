"""Column statistics: the numpy path (large logs) and the pure-Python path give the same answers."""

from __future__ import annotations

import math
import random
from array import array

import pytest

from logparse.parsing import colstats


@pytest.mark.parametrize("seed", range(20))
def test_numpy_and_python_paths_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    n = rng.randint(0, 400)
    groups = array("i", [rng.randint(0, 3) for _ in range(n)])
    values = array("d", [rng.choice([math.nan, rng.random(), 0.995, 1.0, 0.0]) for _ in range(n)])
    queue = array("d", [rng.choice([math.nan, 0.0, 1.0, 5.0]) for _ in range(n)])

    def everything() -> tuple:  # type: ignore[type-arg]
        return (
            colstats.longest_runs(groups, values, 0.99),
            colstats.rows_where(values, 0.9, queue, 0),
            colstats.present_indices(values),
            colstats.nanmax(values), colstats.nanmin(values), colstats.count_equal(values, 0.0),
            colstats.any_present(values),
            None if (m := colstats.nanmedian(values)) is None else round(m, 12),
            None if (m := colstats.nanmean(values)) is None else round(m, 9),
        )

    monkeypatch.setattr(colstats, "NUMPY_FROM", 10**9)
    python = everything()
    monkeypatch.setattr(colstats, "NUMPY_FROM", 0)
    assert everything() == python


def test_longest_run_is_the_first_of_equal_length() -> None:
    groups = array("i", [0] * 7)
    values = array("d", [1, 1, 0, 1, 1, 0, 1])
    assert colstats.longest_runs(groups, values, 1.0) == {0: [0, 1]}


@pytest.mark.parametrize("seed", range(10))
def test_break_even_buckets_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.parsing.columns import decode_columns
    from logparse.run.speculative import per_request_throughput as _per_request_throughput

    rng = random.Random(seed)
    n = rng.randint(0, 500)
    run = array("d", [rng.choice([math.nan, 0.0, float(rng.randint(1, 300))]) for _ in range(n)])
    gen = array("d", [rng.choice([math.nan, 0.0, rng.random() * 3000]) for _ in range(n)])
    acc = array("d", [rng.choice([math.nan, 1 + rng.random() * 3]) for _ in range(n)])
    d = decode_columns()
    for i in range(n):
        d.add(i, 0.0, None, {"running": run[i], "gen_throughput": gen[i], "accept_len": acc[i]})
    monkeypatch.setattr(colstats, "NUMPY_FROM", 10**9)
    python = _per_request_throughput(d)
    monkeypatch.setattr(colstats, "NUMPY_FROM", 0)
    monkeypatch.setattr(colstats, "SLICE_ROWS", 7)  # many slices: their parts are joined in row order
    vector = _per_request_throughput(d)
    for p, v in zip(python, vector, strict=True):
        assert p.keys() == v.keys()
        for k in p:
            assert math.isclose(p[k], v[k], rel_tol=1e-12)
