"""A set of line numbers held as sorted, disjoint ranges.

What findings claim (`Finding.claims`, `RuleContext.claimed`) is runs of consecutive lines (a
traceback, a multi-line record). As a Python `set[int]` every claimed line cost a hash slot and
an int object (~60 bytes per line: ~17 MiB at a 200k-line corpus-profile log, growing with the
file); as ranges it costs two machine integers per run. It answers what the callers ask of a set:
`in`, iteration (ascending), `len`, `add`, `update`, `|`, `|=` and equality with another LineSet or
a set of ints.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from typing import Any


class LineSet:
    """Line numbers as ranges [starts[i], ends[i]]: sorted, disjoint and never adjacent (touching
    runs are merged), so two sets with the same members have the same ranges."""

    __slots__ = ("_starts", "_ends")

    def __init__(self, lines: Iterable[int] = ()) -> None:
        self._starts = array("q")
        self._ends = array("q")
        self.update(lines)

    @classmethod
    def of_ranges(cls, ranges: Iterable[tuple[int, int]]) -> LineSet:
        """The lines of the inclusive ranges (first, last); an empty range (last < first) adds none."""
        out = cls()
        for a, b in ranges:
            out.add_range(a, b)
        return out

    def add_range(self, a: int, b: int) -> None:
        """Add lines a..b (inclusive)."""
        if b < a:
            return
        starts, ends = self._starts, self._ends
        if not ends or a > ends[-1] + 1:  # the usual case: claims arrive in file order
            starts.append(a)
            ends.append(b)
            return
        # The ranges that overlap or touch [a, b] are a contiguous run [i, j): ends and starts
        # are both ascending because the ranges are disjoint and sorted.
        i = bisect_left(ends, a - 1)
        j = bisect_right(starts, b + 1)
        if i == j:
            starts.insert(i, a)
            ends.insert(i, b)
            return
        lo, hi = min(a, starts[i]), max(b, ends[j - 1])
        del starts[i + 1 : j]
        del ends[i + 1 : j]
        starts[i] = lo
        ends[i] = hi

    def add(self, line: int) -> None:
        self.add_range(line, line)

    def update(self, *others: Iterable[int]) -> None:
        for other in others:
            if isinstance(other, LineSet):
                for a, b in zip(other._starts, other._ends):
                    self.add_range(a, b)
            elif isinstance(other, range) and other.step == 1:
                self.add_range(other.start, other.stop - 1)
            else:
                for n in other:
                    self.add_range(n, n)

    def union(self, *others: Iterable[int]) -> LineSet:
        out = LineSet(self)
        out.update(*others)
        return out

    def span(self) -> tuple[int, int]:
        """The first and last line (ValueError when empty)."""
        if not self._starts:
            raise ValueError("span of an empty LineSet")
        return self._starts[0], self._ends[-1]

    def ranges(self) -> Iterator[tuple[int, int]]:
        return zip(self._starts, self._ends)

    def __contains__(self, line: object) -> bool:
        try:
            i = bisect_right(self._starts, line)  # type: ignore[call-overload]
        except TypeError:  # not a number (a set of ints answers False too)
            return False
        return i > 0 and line <= self._ends[i - 1]  # type: ignore[operator]

    def __iter__(self) -> Iterator[int]:
        for a, b in zip(self._starts, self._ends):
            yield from range(a, b + 1)

    def __len__(self) -> int:
        return sum(self._ends) - sum(self._starts) + len(self._starts)

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __or__(self, other: Iterable[int]) -> LineSet:
        return self.union(other)

    __ror__ = __or__

    def __ior__(self, other: Iterable[int]) -> LineSet:
        self.update(other)
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LineSet):
            return self._starts == other._starts and self._ends == other._ends
        if isinstance(other, (set, frozenset)):
            return len(other) == len(self) and all(n in self for n in other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like set

    def __repr__(self) -> str:
        return f"LineSet.of_ranges({list(self.ranges())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Findings cross process boundaries (--jobs) and caches by pickle.
        return (LineSet.of_ranges, (list(self.ranges()),))
