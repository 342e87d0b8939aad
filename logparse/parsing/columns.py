"""Typed column stores for the hot events: decode and prefill stats lines and HTTP access lines.

A busy server prints hundreds of thousands of these; as objects or dicts they would dominate
memory. Each column is an `array` of machine numbers (NaN = not printed), ranks and strings are
interned to small integers. pandas is imported only when a table is asked for.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from logparse.model.events import DecodeBatch, Event, HttpAccess, PrefillBatch

if TYPE_CHECKING:
    import pandas as pd

NAN = math.nan


def epoch(ts: datetime | None) -> float:
    """Naive timestamps are taken as UTC for arithmetic only; they are shown back as printed."""
    return NAN if ts is None else ts.replace(tzinfo=UTC).timestamp()


def from_epoch(value: float) -> datetime | None:
    return None if math.isnan(value) else datetime.fromtimestamp(value, UTC).replace(tzinfo=None)


class Interner:
    """Small-integer codes for repeated strings (ranks, methods, paths). Index 0 is None."""

    def __init__(self) -> None:
        self.values: list[str | None] = [None]
        self._index: dict[str | None, int] = {None: 0}

    def code(self, value: str | None) -> int:
        idx = self._index.get(value)
        if idx is None:
            idx = self._index[value] = len(self.values)
            self.values.append(value)
        return idx


class _Columns:
    """Common part: line numbers, timestamps (epoch seconds), ranks."""

    def __init__(self) -> None:
        self.line = array("q")
        self.ts = array("d")
        self.rank = array("i")
        self.ranks = Interner()

    def __len__(self) -> int:
        return len(self.line)

    def _base(self, line: int, ts: float, rank: str | None) -> None:
        self.line.append(line)
        self.ts.append(ts)
        self.rank.append(self.ranks.code(rank))

    def _extend_base(self, other: _Columns) -> list[int]:
        """Append other's base columns; return the mapping of other's rank codes to ours."""
        remap = [self.ranks.code(v) for v in other.ranks.values]
        self.line.extend(other.line)
        self.ts.extend(other.ts)
        self.rank.extend(array("i", (remap[c] for c in other.rank)))
        return remap


class StatsColumns(_Columns):
    """Decode or prefill stats lines: fixed numeric columns plus sparse extras."""

    def __init__(self, event_cls: type[Event], fields: tuple[str, ...]) -> None:
        super().__init__()
        self.event_cls = event_cls
        self.fields = fields
        self.cols = {f: array("d") for f in fields}
        self._col_list = [(f, self.cols[f]) for f in fields]
        # Bound appends (hot: one per field per stats line, no attribute lookup each time). The
        # column arrays are only ever extended in place, never replaced, so these stay valid.
        self._appends = [(f, self.cols[f].append) for f in fields]
        # Sparse: extra name → (row indexes, values). Most rows print the same few extras.
        self.extra: dict[str, tuple[array[int], array[float]]] = {}

    def add(self, line: int, ts: float, rank: str | None, kw: dict[str, Any]) -> None:
        self.line.append(line)
        self.ts.append(ts)
        self.rank.append(self.ranks.code(rank))
        get = kw.get
        for name, append in self._appends:
            # Callbacks set only the fields a line printed (never None); array('d') converts
            # ints and bools itself.
            append(get(name, NAN))
        extra = get("extra")
        if extra:
            row = len(self.line) - 1
            for name, value in extra.items():
                slot = self.extra.get(name)
                if slot is None:
                    slot = self.extra[name] = (array("q"), array("d"))
                slot[0].append(row)
                slot[1].append(value)

    def extend(self, other: StatsColumns) -> None:
        offset = len(self.line)
        self._extend_base(other)
        for name, col in self.cols.items():
            col.extend(other.cols[name])
        for name, (rows, values) in other.extra.items():
            slot = self.extra.get(name)
            if slot is None:
                slot = self.extra[name] = (array("q"), array("d"))
            slot[0].extend(array("q", (r + offset for r in rows)))
            slot[1].extend(values)

    def column(self, name: str) -> array[float]:
        """A full column by name: a fixed field or an extra (NaN where the row did not print it)."""
        if name in self.cols:
            return self.cols[name]
        out = array("d", [NAN]) * len(self.line)
        slot = self.extra.get(name)
        if slot is not None:
            for r, v in zip(*slot, strict=True):
                out[r] = v
        return out

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        data: dict[str, Any] = {
            "line": self.line,
            "ts": pd.to_datetime(pd.Series(self.ts, dtype="float64"), unit="s"),
            "rank": [self.ranks.values[c] for c in self.rank],
        }
        for name in self.fields:
            data[name] = self.cols[name]
        for name in sorted(self.extra):
            data[name] = self.column(name)
        frame = pd.DataFrame(data)
        if "cuda_graph" in frame:
            frame["cuda_graph"] = frame["cuda_graph"].map({1.0: True, 0.0: False}).astype("object")
        return frame

    def iter_events(self, source: str = "") -> Iterator[Event]:
        """The rows as event objects (for exports and the fast-path equivalence tests)."""
        extras = {name: self.column(name) for name in self.extra}
        ints = {"running", "tokens", "queue", "iteration", "new_seq", "new_token", "cached_token"}
        for i in range(len(self.line)):
            kw: dict[str, Any] = {}
            for name, col in self._col_list:
                v = col[i]
                if not math.isnan(v):
                    kw[name] = bool(v) if name == "cuda_graph" else int(v) if name in ints else v
            extra = {n: c[i] for n, c in extras.items() if c[i] == c[i]}
            if extra:
                kw["extra"] = extra
            yield self.event_cls(
                line=self.line[i],
                end_line=self.line[i],
                ts=from_epoch(self.ts[i]),
                rank=self.ranks.values[self.rank[i]],
                source=source,
                **kw,
            )


DECODE_FIELDS = ("running", "tokens", "token_usage", "accept_len", "accept_rate", "cuda_graph", "gen_throughput", "queue", "iteration")
PREFILL_FIELDS = ("new_seq", "new_token", "cached_token", "token_usage", "running", "queue", "cuda_graph", "input_throughput", "iteration")


def decode_columns() -> StatsColumns:
    return StatsColumns(DecodeBatch, DECODE_FIELDS)


def prefill_columns() -> StatsColumns:
    return StatsColumns(PrefillBatch, PREFILL_FIELDS)


class AccessColumns(_Columns):
    """HTTP access lines."""

    def __init__(self) -> None:
        super().__init__()
        self.status = array("i")
        self.method = array("i")
        self.path = array("i")
        self.client = array("i")
        self.strings = Interner()

    def add(self, line: int, ts: float, rank: str | None, kw: dict[str, Any]) -> None:
        self._base(line, ts, rank)
        code = self.strings.code
        self.status.append(kw["status"])
        self.method.append(code(kw["method"]))
        # Paths can carry unbounded query strings; intern the path without the query.
        self.path.append(code(kw["path"].split("?", 1)[0]))
        # Client ports change per connection; keep the host only.
        self.client.append(code(kw["client"].rpartition(":")[0] or kw["client"]))

    def extend(self, other: AccessColumns) -> None:
        self._extend_base(other)
        remap = [self.strings.code(v) for v in other.strings.values]
        self.status.extend(other.status)
        for mine, theirs in ((self.method, other.method), (self.path, other.path), (self.client, other.client)):
            mine.extend(array("i", (remap[c] for c in theirs)))

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        s = self.strings.values
        return pd.DataFrame(
            {
                "line": self.line,
                "ts": pd.to_datetime(pd.Series(self.ts, dtype="float64"), unit="s"),
                "client": [s[c] for c in self.client],
                "method": [s[c] for c in self.method],
                "path": [s[c] for c in self.path],
                "status": self.status,
            }
        )

    def iter_events(self, source: str = "") -> Iterator[Event]:
        s = self.strings.values
        for i in range(len(self.line)):
            yield HttpAccess(
                line=self.line[i],
                end_line=self.line[i],
                ts=from_epoch(self.ts[i]),
                rank=self.ranks.values[self.rank[i]],
                source=source,
                client=s[self.client[i]] or "",
                method=s[self.method[i]] or "",
                path=s[self.path[i]] or "",
                status=self.status[i],
            )
