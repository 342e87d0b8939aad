"""`LineSet` (what findings claim, as ranges) answers as a set of ints would, and holds ranges:
its size follows the runs of claimed lines, not the lines (a set of ints grew with the file)."""

from __future__ import annotations

import pickle

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
