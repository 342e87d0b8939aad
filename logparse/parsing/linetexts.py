"""The kept text of a log's non-hot lines by line number, in two flat columns.

A log keeps the cleaned text of every line that is not a stats or access line (`ParsedLog.texts`:
evidence for findings, the neighbours `coverage.settle` and the rules read). As a `dict[int, str]`
each entry cost ~80 bytes besides its text (a hash slot and an int object per line number: ~60 MiB
of a 1M-line log of mostly other programs' text); here it costs 16: the line numbers in an
`array` and the texts in a list (texts repeated across lines are one shared string, see
`pipeline._Stage2`). Lines arrive in file order, so writing is an append and reading a binary
search (the last line, which the pipeline reads back while it joins a physical line's segments,
is checked first). A number written out of order (a merge of several files' logs) is inserted
where it belongs: correct, and linear, which only a merge of logs in reverse order would pay.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, MutableMapping, ValuesView
from typing import Any

__all__ = ["LineTexts", "lines_in_order"]


class LineTexts(MutableMapping[int, str]):
    """`dict[int, str]` of line number → text, kept sorted by line number in flat columns."""

    __slots__ = ("_nos", "_texts")

    def __init__(self, items: Mapping[int, str] | Iterable[tuple[int, str]] | None = None) -> None:
        self._nos: array[int] = array("q")
        self._texts: list[str] = []
        if items is not None:
            # (as dict(): the last text written for a number wins)
            pairs = items if isinstance(items, Mapping) else dict(items)
            for no, text in sorted(pairs.items()):
                self[no] = text

    def _find(self, no: int) -> int:
        """The position of `no`, or -1."""
        nos = self._nos
        if not nos or no > nos[-1]:
            return -1  # past the end: what the pipeline asks of each new line
        if nos[-1] == no:
            return len(nos) - 1
        i = bisect_left(nos, no)
        return i if nos[i] == no else -1

    def __getitem__(self, no: int) -> str:
        i = self._find(no)
        if i < 0:
            raise KeyError(no)
        return self._texts[i]

    def get(self, no: int, default: Any = None) -> Any:  # (the hot read: no exception raised)
        i = self._find(no)
        return self._texts[i] if i >= 0 else default

    def __contains__(self, no: object) -> bool:
        return isinstance(no, int) and self._find(no) >= 0

    def __setitem__(self, no: int, text: str) -> None:
        nos = self._nos
        if not nos or no > nos[-1]:
            nos.append(no)
            self._texts.append(text)
            return
        i = bisect_left(nos, no)
        if i < len(nos) and nos[i] == no:
            self._texts[i] = text
        else:
            nos.insert(i, no)
            self._texts.insert(i, text)

    def __delitem__(self, no: int) -> None:
        i = self._find(no)
        if i < 0:
            raise KeyError(no)
        del self._nos[i]
        del self._texts[i]

    def __iter__(self) -> Iterator[int]:
        return iter(self._nos)

    def __len__(self) -> int:
        return len(self._nos)

    def keys(self) -> KeysView[int]:
        return _Keys(self)

    def items(self) -> ItemsView[int, str]:
        return _Items(self)

    def values(self) -> ValuesView[str]:
        return _Values(self)

    def __repr__(self) -> str:
        return f"LineTexts({len(self)} lines)"

    def __getstate__(self) -> tuple[array[int], list[str]]:
        return self._nos, self._texts

    def __setstate__(self, state: tuple[array[int], list[str]]) -> None:
        self._nos, self._texts = state


class _Keys(KeysView[int]):
    _mapping: LineTexts

    def __iter__(self) -> Iterator[int]:
        return iter(self._mapping._nos)


class _Items(ItemsView[int, str]):
    _mapping: LineTexts

    def __iter__(self) -> Iterator[tuple[int, str]]:
        m = self._mapping
        return zip(m._nos, m._texts)

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        return self._mapping.get(item[0], _MISSING) == item[1]


class _Values(ValuesView[str]):
    _mapping: LineTexts

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping._texts)


_MISSING = object()


def lines_in_order(texts: Mapping[int, str]) -> Iterable[tuple[int, str]]:
    """(line, text) pairs in line order: a `LineTexts` as it is kept (no lookup per line: each
    costs a bisection), any other mapping sorted."""
    if isinstance(texts, LineTexts):
        return texts.items()
    return sorted(texts.items())

