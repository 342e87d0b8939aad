"""Typed column stores for the hot events: decode and prefill stats lines and HTTP access lines.

A busy server prints hundreds of thousands of these; as objects or dicts they would dominate
memory. Each column is an `array` of machine numbers (NaN = not printed), ranks and strings are
interned to small integers. pandas is imported only when a table is asked for.

A stats field is appended as float64 (the hot path's bound `append`), and every CHUNK_ROWS rows
the filled slice is narrowed (`_Column`): a slice that printed nothing keeps no storage, counts
and flags become int8/16/32, and a decimal value printed with up to four places becomes a scaled
integer whenever that gives back the same float64 bit for bit. Readers ask `StatsColumns.column`
for float64 values (NaN = not printed), the whole column or a row range: at 4M serving lines
the fields held ~230 MB wide, ~60 MB narrowed. The base columns (line, ts, rank) are narrowed
the same way (`BaseColumn`: 20 bytes a row wide, ~9 narrowed) and read as sequences of their
wide values.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from logparse.grammar.transform import runtime
from logparse.model import numbers
from logparse.model.events import DecodeBatch, Event, HttpAccess, PrefillBatch
from logparse.parsing import prefix_times

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


CHUNK_ROWS = 65_536  # rows per narrowed slice of a stats field (a short log never narrows: no numpy)
# Scales tried for a slice of decimals: value = k / scale exactly (IEEE division of two exact
# numbers rounds to the same float64 as parsing the printed decimal).
_SCALES = (1.0, 10.0, 100.0, 1000.0, 10000.0)
_INT_CODES = (("b", 1), ("h", 2), ("i", 4))  # typecode, bytes; the type's minimum means "not printed"


def _narrow(x: Any) -> tuple[array[Any] | None, float]:
    """A float64 slice (numpy) as (storage, scale): (None, 0) when nothing is printed; (ints,
    scale) when every printed value is k / scale for a k that fits; (float64, 0) otherwise."""
    import numpy as np

    present = x == x
    if not present.any():
        return None, 0.0
    v = x[present]
    with np.errstate(all="ignore"):
        for scale in _SCALES:
            k = np.rint(v * scale)
            # -0.0 == 0.0 but is another float64: keep it as printed.
            if not (k / scale == v).all() or np.signbit(v[k == 0]).any():
                continue
            lo, hi = float(k.min()), float(k.max())
            for code, size in _INT_CODES:
                low = -(1 << (8 * size - 1))
                if low < lo and hi < -low:
                    out = np.full(len(x), low, dtype=f"i{size}")
                    out[present] = k
                    return array(code, out.tobytes()), scale
            break  # wider than int32 at this scale, and a larger one only widens
    return array("d", x.tobytes()), 0.0


def _widen(chunk: tuple[array[Any] | None, float], rows: int) -> Any:
    """A narrowed slice back as float64 values (numpy), NaN where nothing was printed."""
    import numpy as np

    values, scale = chunk
    if values is None:
        return np.full(rows, NAN)
    if values.typecode == "d":
        return np.frombuffer(values, dtype=np.float64)
    k = np.frombuffer(values, dtype=f"i{values.itemsize}")
    out = k.astype(np.float64)
    out[k == -(1 << (8 * values.itemsize - 1))] = NAN
    if scale != 1.0:
        out /= scale
    return out


class _Column:
    """One stats field: narrowed slices of CHUNK_ROWS rows, then the float64 rows after them
    (`tail`, the array the hot path appends to; it is emptied in place, never replaced, so a
    bound `tail.append` stays valid)."""

    __slots__ = ("chunks", "tail")

    def __init__(self) -> None:
        self.chunks: list[tuple[array[Any] | None, float]] = []
        self.tail: array[float] = array("d")

    def __len__(self) -> int:
        return len(self.chunks) * CHUNK_ROWS + len(self.tail)

    def seal(self) -> None:
        """Narrow every full slice of the tail."""
        import numpy as np

        tail = self.tail
        while len(tail) >= CHUNK_ROWS:
            self.chunks.append(_narrow(np.frombuffer(tail, dtype=np.float64, count=CHUNK_ROWS).copy()))
            del tail[:CHUNK_ROWS]

    def extend(self, values: array[float]) -> None:
        self.tail.extend(values)
        if len(self.tail) >= CHUNK_ROWS:
            self.seal()

    def values(self, lo: int, hi: int) -> array[float]:
        """Rows lo..hi-1 as float64 (NaN = not printed)."""
        chunks = self.chunks
        if not chunks:
            return self.tail if lo == 0 and hi >= len(self.tail) else self.tail[lo:hi]
        import numpy as np

        parts = []
        first, last = lo // CHUNK_ROWS, (hi - 1) // CHUNK_ROWS
        for c in range(first, min(last, len(chunks) - 1) + 1):
            start = c * CHUNK_ROWS
            parts.append(_widen(chunks[c], CHUNK_ROWS)[max(lo - start, 0) : hi - start])
        tail_start = len(chunks) * CHUNK_ROWS
        if hi > tail_start:
            parts.append(np.frombuffer(self.tail, dtype=np.float64)[max(lo - tail_start, 0) : hi - tail_start])
        out: array[float] = array("d")
        for part in parts:
            out.frombytes(part.tobytes())
        return out

    def nbytes(self) -> int:
        """Bytes held (the narrowed slices and the tail)."""
        return sum(v.itemsize * len(v) for v, _ in self.chunks if v is not None) + 8 * len(self.tail)


# ---- Base columns: line numbers, timestamps, rank codes, narrowed per slice -------------------
# A row's line (int64), time (float64) and rank code (int32) were 20 bytes a row (~120 MB at 4M
# serving lines). Every CHUNK_ROWS rows a filled slice is narrowed: line numbers as a base and
# uint32 deltas, times as integer offsets (seconds, ms or us) from the slice's first whole
# second when base + k / scale gives back each float64 bit for bit (else float64), rank codes as
# int8/int16 when they fit. Readers see the wide values (`BaseColumn` is a read-only sequence
# of them, `numpy()` / `values(lo, hi)` for ranges).
_TS_SCALES = (1.0, 1000.0, 1_000_000.0)
_WIDE = {"q": "int64", "d": "float64", "i": "int32"}


def _narrow_line(x: Any) -> tuple[array[Any], float, float]:
    lo, hi = int(x.min()), int(x.max())
    if hi - lo < (1 << 32):
        return array("I", (x - lo).astype("u4").tobytes()), float(lo), 0.0
    return array("q", x.tobytes()), 0.0, 0.0


def _narrow_rank(x: Any) -> tuple[array[Any], float, float]:
    lo, hi = int(x.min()), int(x.max())
    for code, size in (("b", 1), ("h", 2)):
        if -(1 << (8 * size - 1)) <= lo and hi < (1 << (8 * size - 1)):
            return array(code, x.astype(f"i{size}").tobytes()), 0.0, 0.0
    return array("i", x.tobytes()), 0.0, 0.0


def _ts_values(k: Any, base: float, scale: float) -> Any:
    """Offsets back as epoch seconds (the one formula `_narrow_ts` checks bit for bit)."""
    return base + k.astype("float64") / scale


def _narrow_ts(x: Any) -> tuple[array[Any], float, float]:
    import numpy as np

    present = x == x
    if present.any():
        v = x[present]
        base = float(math.floor(float(v.min())))
        with np.errstate(all="ignore"):
            for scale in _TS_SCALES:
                k = np.rint((v - base) * scale)
                if float(k.max()) >= 2**31 - 1:
                    break  # a finer unit only widens
                # -0.0 is another float64 than the 0.0 the offsets give back.
                if (_ts_values(k, base, scale) == v).all() and not np.signbit(v[v == 0]).any():
                    out = np.full(len(x), -1, dtype="i4")
                    out[present] = k
                    return array("i", out.tobytes()), float(base), scale
    return array("d", x.tobytes()), 0.0, 0.0


def _widen_base(typecode: str, chunk: tuple[array[Any], float, float]) -> Any:
    import numpy as np

    values, base, scale = chunk
    if values.typecode == typecode:
        return np.frombuffer(values, dtype=_WIDE[typecode])
    k = np.frombuffer(values, dtype=values.typecode)
    if typecode == "q":
        return k.astype("int64") + int(base)
    if typecode == "i":
        return k.astype("int32")
    out = _ts_values(k, base, scale)
    out[k < 0] = NAN
    return out


_NARROW = {"q": _narrow_line, "d": _narrow_ts, "i": _narrow_rank}


class BaseColumn:
    """One base column (typecode 'q' line, 'd' ts, 'i' rank code): narrowed slices of CHUNK_ROWS
    rows, then the wide rows after them (`tail`; `append` is its bound append, kept valid since
    the tail is emptied in place, never replaced). Reads give the wide values."""

    __slots__ = ("append", "chunks", "tail", "typecode")

    def __init__(self, typecode: str) -> None:
        self.typecode = typecode
        self.chunks: list[tuple[array[Any], float, float]] = []
        self.tail: array[Any] = array(typecode)
        self.append = self.tail.append

    def __getstate__(self) -> tuple[str, list[tuple[array[Any], float, float]], array[Any]]:
        return self.typecode, self.chunks, self.tail

    def __setstate__(self, state: tuple[str, list[tuple[array[Any], float, float]], array[Any]]) -> None:
        self.typecode, self.chunks, self.tail = state
        self.append = self.tail.append

    def __len__(self) -> int:
        return len(self.chunks) * CHUNK_ROWS + len(self.tail)

    def seal(self) -> None:
        """Narrow every full slice of the tail."""
        import numpy as np

        tail = self.tail
        narrow = _NARROW[self.typecode]
        while len(tail) >= CHUNK_ROWS:
            self.chunks.append(narrow(np.frombuffer(tail, dtype=_WIDE[self.typecode], count=CHUNK_ROWS).copy()))
            del tail[:CHUNK_ROWS]

    def extend(self, values: Any) -> None:
        """Append wide values (an array, an iterable, or another BaseColumn slice by slice)."""
        if isinstance(values, BaseColumn):
            for lo in range(0, len(values), CHUNK_ROWS):
                self.extend(values.values(lo, min(lo + CHUNK_ROWS, len(values))))
            return
        self.tail.extend(values)
        if len(self.tail) >= CHUNK_ROWS:
            self.seal()

    def values(self, lo: int = 0, hi: int | None = None) -> array[Any]:
        """Rows lo..hi-1 as a new wide array."""
        n = len(self)
        hi = n if hi is None else min(hi, n)
        lo = min(lo, hi)
        chunks = self.chunks
        if not chunks:
            return self.tail[lo:hi]
        out: array[Any] = array(self.typecode)
        for c in range(lo // CHUNK_ROWS, min((hi - 1) // CHUNK_ROWS, len(chunks) - 1) + 1):
            start = c * CHUNK_ROWS
            out.frombytes(_widen_base(self.typecode, chunks[c])[max(lo - start, 0) : hi - start].tobytes())
        tail_start = len(chunks) * CHUNK_ROWS
        if hi > tail_start:
            out.extend(self.tail[max(lo - tail_start, 0) : hi - tail_start])
        return out

    def numpy(self) -> Any:
        """Every row as a numpy array of the wide type (zero-copy while nothing is narrowed)."""
        import numpy as np

        wide = self.tail if not self.chunks else self.values()
        return np.frombuffer(wide, dtype=_WIDE[self.typecode]) if len(wide) else np.zeros(0, _WIDE[self.typecode])

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def tobytes(self) -> bytes:
        return self.values().tobytes()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BaseColumn):
            other = other.values()
        return self.values() == other

    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[Any]:
        for c in range(len(self.chunks)):
            yield from self.values(c * CHUNK_ROWS, (c + 1) * CHUNK_ROWS)
        yield from self.tail

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            lo, hi, step = index.indices(len(self))
            if step != 1:
                return self.values()[index]
            return self.values(lo, hi)
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("column index out of range")
        tail_start = len(self.chunks) * CHUNK_ROWS
        if index >= tail_start:  # the tail may be longer than a slice until its next seal
            return self.tail[index - tail_start]
        c, i = divmod(index, CHUNK_ROWS)
        values, base, scale = self.chunks[c]
        k = values[i]
        if values.typecode == self.typecode:
            return k
        if self.typecode == "q":
            return k + int(base)
        if self.typecode == "i":
            return k
        if k < 0:
            return NAN
        return float(base + float(k) / scale)


class _Columns:
    """Common part: line numbers, timestamps (epoch seconds), ranks (codes of `ranks`)."""

    def __init__(self) -> None:
        self.line = BaseColumn("q")
        self.ts = BaseColumn("d")
        self.rank = BaseColumn("i")
        self.ranks = Interner()

    def __len__(self) -> int:
        return len(self.line)

    def _base(self, line: int, ts: float, rank: str | None) -> None:
        self.line.append(line)
        self.ts.append(ts)
        self.rank.append(self.ranks.code(rank))
        if len(self.line.tail) >= CHUNK_ROWS:
            self.seal_base()

    def _extend_base(self, other: _Columns) -> list[int]:
        """Append other's base columns; return the mapping of other's rank codes to ours."""
        remap = [self.ranks.code(v) for v in other.ranks.values]
        self.line.extend(other.line)
        self.ts.extend(other.ts)
        self.rank.extend(array("i", (remap[c] for c in other.rank)))
        return remap

    def seal_base(self) -> None:
        """Narrow the base columns' full slices."""
        self.line.seal()
        self.ts.seal()
        self.rank.seal()


class StatsColumns(_Columns):
    """Decode or prefill stats lines: fixed numeric columns plus sparse extras."""

    def __init__(self, event_cls: type[Event], fields: tuple[str, ...]) -> None:
        super().__init__()
        self.event_cls = event_cls
        self.fields = fields
        self._cols = {f: _Column() for f in fields}
        # Bound appends (hot: one per field per stats line, no attribute lookup each time). The
        # tails are only ever extended and emptied in place, never replaced, so these stay valid.
        self._appends = [(f, self._cols[f].tail.append) for f in fields]
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
            self.add_extra(len(self.line) - 1, extra)
        if len(self.line.tail) >= CHUNK_ROWS:
            self.seal()

    def seal(self) -> None:
        """Narrow the fields' and base columns' full slices (every CHUNK_ROWS rows; the hot path
        calls it too)."""
        self.seal_base()
        for col in self._cols.values():
            col.seal()

    def add_extra(self, row: int, extra: dict[str, float]) -> None:
        """A row's sparse extras (as `add` stores them)."""
        for name, value in extra.items():
            slot = self.extra.get(name)
            if slot is None:
                slot = self.extra[name] = (array("q"), array("d"))
            slot[0].append(row)
            slot[1].append(value)

    def extend(self, other: StatsColumns) -> None:
        offset = len(self.line)
        self._extend_base(other)
        for name, col in self._cols.items():
            theirs = other._cols[name]
            # Slice by slice: a part's whole column is never widened at once.
            for lo in range(0, len(theirs), CHUNK_ROWS):
                col.extend(theirs.values(lo, min(lo + CHUNK_ROWS, len(theirs))))
        for name, (rows, values) in other.extra.items():
            slot = self.extra.get(name)
            if slot is None:
                slot = self.extra[name] = (array("q"), array("d"))
            slot[0].extend(array("q", (r + offset for r in rows)))
            slot[1].extend(values)

    def column(self, name: str, lo: int = 0, hi: int | None = None) -> array[float]:
        """Rows lo..hi-1 (default: all) of a fixed field or an extra as float64 values, NaN where
        the row did not print it. A new array unless the field was never narrowed (a short log:
        then the store's own, which readers must not change)."""
        n = len(self.line)
        hi = n if hi is None else min(hi, n)
        lo = min(lo, hi)
        col = self._cols.get(name)
        if col is not None:
            return col.values(lo, hi)
        out = array("d", [NAN]) * (hi - lo)
        slot = self.extra.get(name)
        if slot is not None:
            for r, v in zip(*slot, strict=True):
                if lo <= r < hi:
                    out[r - lo] = v
        return out

    def nbytes(self) -> int:
        """Bytes the fixed fields hold (tests, benchmarks)."""
        return sum(col.nbytes() for col in self._cols.values())

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        data: dict[str, Any] = {
            "line": self.line.numpy(),
            "ts": pd.to_datetime(pd.Series(self.ts.numpy(), dtype="float64"), unit="s"),
            "rank": [self.ranks.values[c] for c in self.rank],
        }
        for name in self.fields:
            data[name] = self.column(name)
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
        col_list = [(name, self.column(name)) for name in self.fields]
        for i in range(len(self.line)):
            kw: dict[str, Any] = {}
            for name, col in col_list:
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
        self.add_fields(line, ts, self.ranks.code(rank), kw["client"], kw["method"], kw["path"], kw["status"])

    def add_fields(self, line: int, ts: float, rank: int, client: str, method: str, path: str, status: int) -> None:
        """One access row from its fields (`rank` already a code of `self.ranks`)."""
        self.line.append(line)
        self.ts.append(ts)
        self.rank.append(rank)
        code = self.strings.code
        self.status.append(status)
        self.method.append(code(method))
        # Paths can carry unbounded query strings; intern the path without the query.
        self.path.append(code(path.split("?", 1)[0]))
        # Client ports change per connection; keep the host only.
        self.client.append(code(client.rpartition(":")[0] or client))
        if len(self.line.tail) >= CHUNK_ROWS:
            self.seal_base()

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
                "line": self.line.numpy(),
                "ts": pd.to_datetime(pd.Series(self.ts.numpy(), dtype="float64"), unit="s"),
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


# ---- Hot rows straight from the fast path's matches (no event dict per line) -----------------

_PREFIX_CACHE_MAX = 4096  # distinct prefixes (second x rank) remembered per store (lines come in time order)
_HEAD_CACHE_MAX = 4096


class HotRows:
    """Where stage 1 puts the hot lines the fast path matched with a learned shape: it turns a
    shape's match groups straight into column values (`FastPath.parse_hot`). Each fused stats
    shape gets a function generated for its key signature and its store (`_stats_code`): the
    same values, damage counts, rank codes and extras as the transformer's fields dict through
    `StatsColumns.add` (tests/test_hot_rows.py compares both), without building that dict.

    `epoch` is the stage's `TimeCache.epoch` (timestamp text -> epoch seconds, pure)."""

    def __init__(self, decode: StatsColumns, prefill: StatsColumns, access: AccessColumns,
                 epoch: Callable[[str | None], float]) -> None:
        self.stores: dict[type, StatsColumns] = {DecodeBatch: decode, PrefillBatch: prefill}
        self.access = access
        self.epoch = epoch
        self.adders: dict[int, Callable[..., None]] = {}
        # prefix terminal -> prefix text -> (epoch of the envelope's time, None when it has none;
        # the envelope's rank text). Shared by the stores: decode and prefill lines of one rank
        # and second have the same prefix.
        self._prefixes: dict[str, dict[str, tuple[float | None, str | None]]] = {}

    def wrapper_epoch(self, wrapper: Any) -> float:
        """A line's time when its envelope has none: the wrapper's (as stage 1 reads it)."""
        return self.epoch(wrapper.ts if wrapper is not None else None)

    def _resolver(self, prefix: str, envelope: Callable[[str, str], Any]
                  ) -> tuple[dict[str, tuple[float | None, str | None]], Callable[[str], tuple[float | None, str | None]]]:
        cache = self._prefixes.setdefault(prefix, {})
        # The plain SGLang prefix by its date-time and rank parts (a new second is no miss).
        split = prefix_times.split_resolver(prefix, envelope, self.epoch)

        def resolve(text: str) -> tuple[float | None, str | None]:
            hit = split(text)
            if len(cache) >= _PREFIX_CACHE_MAX:
                cache.clear()
            cache[text] = hit
            return hit

        return cache, resolve

    def stats_adder(self, key: int, cls: type, plan: tuple[tuple[str, str], ...], fields: Callable[..., Any],
                    groups: dict[str, int], offset: int, prefix: str | None,
                    envelope: Callable[[str, str], Any]) -> Callable[[int, Any, tuple[str, ...]], None]:
        """The appender of one fused stats shape: (line number, wrapper, match groups) -> a row.
        `groups`: the regex's group name -> index in `m.groups()`; values start at `offset`."""
        store = self.stores[cls]
        namespace: dict[str, Any] = {"NAN": NAN, "_fields": fields, "_damage": numbers.note_damage,
                                     "_damaged": numbers.damaged, "_number": runtime.number,
                                     "_MAX_COUNT": runtime.MAX_COUNT_F, "_MAX_FLOAT": runtime.MAX_FLOAT,
                                     "_wepoch": self.wrapper_epoch, "_heads": {},
                                     "_add_extra": store.add_extra, "_a_line": store.line.append,
                                     "_a_ts": store.ts.append, "_a_rank": store.rank.append}
        if prefix is not None:
            namespace["_pcache"], namespace["_resolve"] = self._resolver(prefix, envelope)
            namespace["_rindex"], namespace["_code"] = store.ranks._index, store.ranks.code
        code = _stats_code(store, plan, groups, offset, prefix is not None, namespace)
        exec(code, namespace)  # noqa: S102 — generated from field names (identifiers) and indexes only
        add: Callable[[int, Any, tuple[str, ...]], None] = namespace["add"]
        self.adders[key] = add
        return add

    def access_adder(self, key: int, groups: dict[str, int], body: str, prefix: str | None,
                     envelope: Callable[[str, str], Any], split: Callable[[str], tuple[str, str, str, int, str]]
                     ) -> Callable[[int, Any, tuple[str, ...]], None]:
        """The appender of an access line's shape; `split` is the transformer's own field split."""
        store = self.access
        wepoch = self.wrapper_epoch
        at = groups[body]
        a_line, a_ts, a_rank, a_status = store.line.append, store.ts.append, store.rank.append, store.status.append
        a_method, a_path, a_client = store.method.append, store.path.append, store.client.append
        strings, code = store.strings._index, store.strings.code
        ranks, rank_code = store.ranks._index, store.ranks.code
        line_tail, seal = store.line.tail, store.seal_base
        cache, resolve = self._resolver(prefix, envelope) if prefix is not None else ({}, None)
        at_pfx = groups.get("pfx", 0)

        def add(no: int, wrapper: Any, g: tuple[str, ...]) -> None:
            # `AccessColumns.add_fields` inlined (interned codes by a dict hit).
            if resolve is None:
                ts, rank = wepoch(wrapper), 0
            else:
                pfx = g[at_pfx]
                hit = cache.get(pfx)
                if hit is None:
                    hit = resolve(pfx)
                ts, rk = hit
                if ts is None:
                    ts = wepoch(wrapper)
                rank = ranks.get(rk)
                if rank is None:
                    rank = rank_code(rk)
            client, method, path, status, _reason = split(g[at])
            a_line(no)
            a_ts(ts)
            a_rank(rank)
            a_status(status)
            c = strings.get(method)
            a_method(code(method) if c is None else c)
            path = path.split("?", 1)[0]
            c = strings.get(path)
            a_path(code(path) if c is None else c)
            client = client.rpartition(":")[0] or client
            c = strings.get(client)
            a_client(code(client) if c is None else c)
            if len(line_tail) >= CHUNK_ROWS:
                seal()
        self.adders[key] = add
        return add


def _stats_code(store: StatsColumns, plan: tuple[tuple[str, str], ...], groups: dict[str, int], offset: int,
                prefixed: bool, namespace: dict[str, Any]) -> str:
    """The source of a fused stats shape's appender: `_Signature.build` (runtime.py), then the
    head's fields (`fields(head, kw)` overrides), then `StatsColumns.add`, as straight-line code."""
    var = {name: f"v{i}" for i, name in enumerate(store.fields)}
    out = ["def add(no, wrapper, g):"]
    if prefixed:
        out += [f"    pfx = g[{groups['pfx']}]", "    hit = _pcache.get(pfx)", "    if hit is None:",
                "        hit = _resolve(pfx)", "    ts, rk = hit", "    if ts is None:",
                "        ts = _wepoch(wrapper)", "    rank = _rindex.get(rk)", "    if rank is None:",
                "        rank = _code(rk)"]
    else:
        out += ["    ts = _wepoch(wrapper)", "    rank = 0"]
    out += [f"    {v} = NAN" for v in var.values()]
    has_extra = any(kind in ("extra", "graph") for kind, _ in plan)
    if has_extra:
        out.append("    extra = {}")
    for i, (kind, name) in enumerate(plan):
        at = offset + i
        target = var.get(name, "_")
        if kind in ("count", "float"):
            bound = "_MAX_COUNT" if kind == "count" else "_MAX_FLOAT"
            out += ["    try:", f"        x = float(g[{at}])", "    except ValueError:", "        _damage()",
                    "    else:", f"        if -{bound} <= x <= {bound}:",
                    f"            {target} = {'int(x)' if kind == 'count' else 'x'}", "        else:",
                    "            _damage()"]
        elif kind == "graph":
            out.append(f"    {var.get('cuda_graph', '_')} = g[{at}] == 'True'")
            if name:
                out.append(f"    extra[{name!r}] = 1.0")
        else:
            out += [f"    x = _number(g[{at}])", "    if x is not None:", f"        extra[{name!r}] = x"]
    if "token_usage" in var and has_extra:
        # `_finish`: no plain `token usage` (set values are finite, so NaN = not set): the
        # first fallback pool printed.
        usage = var["token_usage"]
        out.append(f"    if {usage} != {usage}:")
        for j, name in enumerate(runtime.USAGE_FALLBACK_NAMES):
            out += [f"        {'elif' if j else 'if'} {name!r} in extra:", f"            {usage} = extra[{name!r}]"]
    # The head's fields (`Decode batch [N], ` -> iteration; a mixed prefill's running count)
    # override the body's, as `fields(head, kw)` does. Cached per head text unless reading it
    # counted damage (the count must stay per line).
    out += [f"    head = g[{groups['k0']}]", "    hk = _heads.get(head)", "    if hk is None:",
            "        d = _damaged()", "        hk = _fields(head, {})[1]",
            f"        if _damaged() == d and len(_heads) < {_HEAD_CACHE_MAX}:", "            _heads[head] = hk",
            "    if hk:"]
    out += [f"        {v} = hk.get({name!r}, {v})" for name, v in var.items()]
    out += ["    _a_line(no)", "    _a_ts(ts)", "    _a_rank(rank)"]
    for name, v in var.items():
        namespace[f"_a_{v}"] = store._cols[name].tail.append
        out.append(f"    _a_{v}({v})")
    namespace["_line"], namespace["_ltail"], namespace["_seal"] = store.line, store.line.tail, store.seal
    if has_extra:
        out += ["    if extra:", "        _add_extra(len(_line) - 1, extra)"]
    out += [f"    if len(_ltail) >= {CHUNK_ROWS}:", "        _seal()"]
    return "\n".join(out)
