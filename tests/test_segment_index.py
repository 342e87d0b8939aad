"""SegmentIndex answers as the linear first-match scan it replaced, with a bisect when it can."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from logparse.run.model import SegmentIndex


def _scan(segments: list[tuple[int, int]], line: int) -> int:
    return next((i for i, (a, b) in enumerate(segments) if a <= line <= b), len(segments) - 1)


@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8),
    st.lists(st.integers(-2, 70), min_size=1, max_size=20),
)
def test_any_segments_answer_as_the_scan(segs: list[tuple[int, int]], lines: list[int]) -> None:
    index = SegmentIndex(segs)
    assert [index.index(x) for x in lines] == [_scan(segs, x) for x in lines]


@given(st.lists(st.integers(1, 9), min_size=2, max_size=40), st.data())
def test_attempts_in_line_order_bisect(widths: list[int], data: st.DataObject) -> None:
    # Launch attempts as the run model makes them: in line order, not overlapping, with gaps.
    segs: list[tuple[int, int]] = []
    at = 1
    for w in widths:
        segs.append((at, at + w - 1))
        at += w + (w % 3)
    index = SegmentIndex(segs)
    assert index.ordered
    for x in data.draw(st.lists(st.integers(0, at + 3), min_size=1, max_size=30)):
        assert index.index(x) == _scan(segs, x)


def test_line_order_is_required_for_the_bisect() -> None:
    assert not SegmentIndex([(10, 20), (5, 8)]).ordered
    assert not SegmentIndex([(1, 10), (10, 20)]).ordered  # sharing a line: first match wins
    assert SegmentIndex([(10, 20), (5, 8)]).index(6) == 1
