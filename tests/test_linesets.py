"""`LineSet` (what findings claim, as ranges) answers as a set of ints would, and holds ranges:
its size follows the runs of claimed lines, not the lines (a set of ints grew with the file)."""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.model.linesets import LineSet
from logparse.rules.context import RuleContext

_RANGES = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 12)), max_size=30)


@settings(max_examples=400, deadline=None)
@given(_RANGES, _RANGES, st.lists(st.integers(-5, 230), max_size=20))
def test_answers_as_a_set_of_ints(first: list[tuple[int, int]], second: list[tuple[int, int]],
                                  singles: list[int]) -> None:
    a = LineSet.of_ranges((s, s + n) for s, n in first)
    ref = {x for s, n in first for x in range(s, s + n + 1)}
    assert list(a) == sorted(ref) and len(a) == len(ref) and bool(a) == bool(ref) and a == ref
    b = LineSet.of_ranges((s, s + n) for s, n in second)
    ref_b = {x for s, n in second for x in range(s, s + n + 1)}
    assert (a | b) == (ref | ref_b) and LineSet().union(a, b, singles) == ref | ref_b | set(singles)
    a.update(singles)
    ref |= set(singles)
    assert all((x in a) == (x in ref) for x in range(-10, 240))
    assert None not in a and "3" not in a
    # The ranges are canonical: disjoint, sorted, never touching.
    rs = list(a.ranges())
    assert all(x[1] + 1 < y[0] for x, y in zip(rs, rs[1:])) and a == LineSet(sorted(ref))
    assert pickle.loads(pickle.dumps(a)) == a
    assert not ref or a.span() == (min(ref), max(ref))


def _claimed_ranges(tracebacks: int) -> int:
    """A rule context claims `tracebacks` 20-line tracebacks, 30 lines apart; the ranges held."""
    ctx = RuleContext.__new__(RuleContext)
    ctx.claimed = LineSet()
    for i in range(tracebacks):
        ctx.claimed |= LineSet.of_ranges([(i * 30, i * 30 + 19)])
    assert len(ctx.claimed) == 20 * tracebacks
    return len(list(ctx.claimed.ranges()))


def test_held_size_follows_the_runs_not_the_lines() -> None:
    one_run = LineSet.of_ranges([(1, 10)])
    long_run = LineSet.of_ranges([(1, 1_000_000)])
    assert list(one_run.ranges()) == [(1, 10)] and list(long_run.ranges()) == [(1, 1_000_000)]
    assert _claimed_ranges(100) == 100 and _claimed_ranges(1000) == 1000


def _traceback_log(path: Any, frames: int) -> None:
    lines = ["[2026-04-14 10:00:00] server_args=ServerArgs(tp_size=1)", "Traceback (most recent call last):"]
    for i in range(frames):
        lines += [f'  File "/srv/mod{i}.py", line {i + 1}, in f{i}', f"    g{i}()"]
    lines.append("RuntimeError: CUDA error: an illegal memory access was encountered")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_longer_traceback_claims_no_more_ranges(tmp_path: Any) -> None:
    """Claims held by an analysis: the same number of ranges whatever the traceback's length (a set
    of ints held one entry per frame line)."""
    from logparse.engine.core import analyze

    held = []
    for frames in (20, 400):
        path = tmp_path / f"tb{frames}.log"
        _traceback_log(path, frames)
        found = analyze(str(path), jobs=1).all_findings()
        assert found and any(len(f.claims) > 2 * frames for f in found)
        held.append(sum(len(list(f.claims.ranges())) for f in found))  # type: ignore[union-attr]
    assert held[0] == held[1]
