"""Event tables: one typed table per event kind of a parsed log (pyarrow, imported on demand).

The columns are derived from the event classes (`logparse/model/events.py`): the identity columns
(`run`, `file`, `launch`), the provenance columns (`line`, `end_line`, `ts`, `rank`, `stream`),
then the class's own fields in declaration order, typed from their annotations. The hot kinds
(decode, prefill, access) come straight from the typed columns, never through event objects.
`launch` is the run model's attempt. The Python API (`Analysis.table`) and `logdiag export`
both read these tables, so they cannot disagree; docs/export.md documents them.

Output safety is the caller's: a `Cleaner` maps every text and field value (the export passes
the sanitizer; the Python API keeps the raw values).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import stat
import typing
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from logparse.model.events import EVENT_CLASSES
from logparse.parsing.columns import BaseColumn

if TYPE_CHECKING:
    import pyarrow as pa

    from logparse.parsing.columns import AccessColumns, StatsColumns
    from logparse.parsing.pipeline import ParsedLog

# Logical types (what docs/export.md shows) → how they are stored (`arrow_type`).
STRING, INT, INT32, FLOAT, BOOL, TIMESTAMP, CATEGORY = (
    "string",
    "int64",
    "int32",
    "float64",
    "bool",
    "timestamp",
    "category",
)
MAP_FLOAT, MAP_STRING, LIST_INT, LIST_STRING, JSON = (
    "map<string,float64>",
    "map<string,string>",
    "list<int64>",
    "list<string>",
    "json",
)
# Types that text formats write as JSON.
NESTED = frozenset({MAP_FLOAT, MAP_STRING, LIST_INT, LIST_STRING, JSON})
HOT = ("decode_batch", "prefill_batch", "http_access")
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Column:
    """One column of a table."""

    name: str
    type: str
    doc: str = ""


# Every table starts with these: (run, line) identifies an event in any table.
IDENTITY: tuple[Column, ...] = (
    Column(
        "run",
        STRING,
        "the log's identity: first 16 hex digits of the sha256 of its bytes, decompressed for "
        "a .gz (of its name for a pipe; `stdin`)",
    ),
    Column("file", STRING, "the log's path as given (directories expanded)"),
    Column("launch", INT32, "the launch attempt the line belongs to (1-based, the run model's)"),
)
PROVENANCE: tuple[Column, ...] = (
    Column("line", INT, "first line of the event in the file (1-based)"),
    Column("end_line", INT, "last line of the event (multi-line records)"),
    Column("ts", TIMESTAMP, "timestamp as printed (no time zone; time-only stamps on 1900-01-01)"),
    Column("rank", CATEGORY, "rank tags as printed (`TP3`, `DP1 TP1`), null for the main process"),
    Column(
        "stream", STRING, "wrapper stream the reader stripped (docker service, Ray pid), or null"
    ),
)
# Event fields that the provenance columns replace.
_REPLACED = frozenset({"line", "end_line", "ts", "rank", "source", "wrapper"})


class Cleaner(Protocol):
    """What a table does to the log's text on the way out (the export's sanitizer)."""

    def text(self, value: str) -> str: ...

    def field(self, event: Any, name: str, value: Any) -> Any: ...


class Raw:
    """The Python API's cleaner: values as the log printed them."""

    def text(self, value: str) -> str:
        return value

    def field(self, event: Any, name: str, value: Any) -> Any:
        return value


RAW = Raw()


def _logical(hint: Any) -> str:
    """The logical column type of an event field's annotation."""
    from datetime import datetime

    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin is typing.Union or (
        origin is not None and getattr(origin, "__name__", "") == "UnionType"
    ):
        return _logical(args[0]) if len(args) == 1 else JSON
    if hint is bool:
        return BOOL
    if hint is int:
        return INT
    if hint is float:
        return FLOAT
    if hint is datetime:
        return TIMESTAMP
    if isinstance(hint, type) and issubclass(hint, str):
        return STRING  # str and StrEnum vocabularies
    if origin is dict and typing.get_args(hint)[:1] == (str,):
        value = typing.get_args(hint)[1]
        if value is float:
            return MAP_FLOAT
        if value is str:
            return MAP_STRING
    if origin is tuple and typing.get_args(hint) == (int, ...):
        return LIST_INT
    return JSON  # Any, free dicts, traceback frames, exception chains: JSON text


@cache
def event_fields(kind: str) -> tuple[tuple[str, str], ...]:
    """(field name, logical type) of an event kind's own fields, in declaration order."""
    cls = EVENT_CLASSES[kind]
    hints = typing.get_type_hints(cls)
    return tuple(
        (f.name, _logical(hints[f.name]))
        for f in dataclasses.fields(cls)
        if f.name not in _REPLACED
    )


def column_name(field: str) -> str:
    """An event field's column name: a field named like an identity or provenance column gets a
    trailing `_` (`c10d_log.file` → `file_`)."""
    taken = {c.name for c in (*IDENTITY, *PROVENANCE)}
    return f"{field}_" if field in taken else field


def event_kinds() -> list[str]:
    """Every event kind, sorted."""
    return sorted(EVENT_CLASSES)


@cache
def event_columns(kind: str) -> tuple[Column, ...]:
    """The columns of an event kind's table, in order. KeyError for an unknown kind."""
    own = tuple(Column(column_name(name), typ) for name, typ in event_fields(kind))
    return (*IDENTITY, *PROVENANCE, *own)


def arrow_type(logical: str) -> pa.DataType:
    import pyarrow as pa

    types = {
        STRING: pa.string(),
        INT: pa.int64(),
        INT32: pa.int32(),
        FLOAT: pa.float64(),
        BOOL: pa.bool_(),
        TIMESTAMP: pa.timestamp("us"),
        CATEGORY: pa.dictionary(pa.int32(), pa.string()),
        MAP_FLOAT: pa.map_(pa.string(), pa.float64()),
        MAP_STRING: pa.map_(pa.string(), pa.string()),
        LIST_INT: pa.list_(pa.int64()),
        LIST_STRING: pa.list_(pa.string()),
        JSON: pa.string(),
    }
    return types[logical]


def columns_schema(columns: Sequence[Column]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(c.name, arrow_type(c.type)) for c in columns])


def run_id(path: str) -> str:
    """The log's identity: the first 16 hex digits of the sha256 of its bytes ('stdin' for '-'),
    of its decompressed bytes for a gzip file (a rotated `server.log.1.gz` is the log it was).
    The same log exported twice, from anywhere, plain or gzip'd, has the same id."""
    if path == "-":
        return "stdin"
    by_name = hashlib.sha256(path.encode("utf-8", "surrogateescape"))
    try:
        # A FIFO or a device was read once already (a second open would wait forever): its name.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return by_name.hexdigest()[:16]
        with open(path, "rb") as fh:
            h = _content_hash(fh)
    except OSError:  # not a file (a run merged from several): the identity of its name
        h = by_name
    return h.hexdigest()[:16]


def _content_hash(fh: typing.BinaryIO) -> hashlib._Hash:
    """sha256 of the file's text bytes: inflated when it is gzip (every member), else as is.
    A gzip stream that does not inflate to its end is hashed as raw bytes (still one id per file)."""
    import zlib

    head = fh.read(_HASH_CHUNK)
    if head[:2] == b"\x1f\x8b":
        h = hashlib.sha256()
        inflate = zlib.decompressobj(wbits=31)
        chunk = head
        try:
            while chunk:
                data = chunk
                while data:
                    h.update(inflate.decompress(data, _HASH_CHUNK))
                    data = inflate.unconsumed_tail
                    if inflate.eof:  # a next member (concatenated gzip) starts here
                        data = inflate.unused_data + data
                        inflate = zlib.decompressobj(wbits=31)
                        if not data:
                            break
                chunk = fh.read(_HASH_CHUNK)
            h.update(inflate.flush())
            return h
        except zlib.error:
            fh.seek(0)
            head = fh.read(_HASH_CHUNK)
    raw = hashlib.sha256(head)
    while chunk := fh.read(_HASH_CHUNK):
        raw.update(chunk)
    return raw


def kinds_present(log: ParsedLog) -> list[str]:
    """The event kinds the log has rows of, sorted."""
    kinds = {e.kind for e in log.events}
    for kind, cols in zip(HOT, (log.decode, log.prefill, log.access), strict=True):
        if len(cols):
            kinds.add(kind)
    return sorted(kinds)


class TableBuilder:
    """Builds a log's tables with its identity columns and the run model's launch attempts."""

    def __init__(self, log: ParsedLog, run: str, file: str, cleaner: Cleaner = RAW) -> None:
        from logparse.run.model import run_of

        self.log, self.run, self.cleaner = log, run, cleaner
        self.file = valid_text(cleaner.text(file))
        self.firsts = [launch.first_line for launch in run_of(log).launches]
        self._by_kind: dict[str, list[Any]] | None = None

    def launch_of(self, line: int) -> int:
        """The run model's attempt for a line (`Run.launch_at`: attempts are contiguous from line
        1, a line past the last belongs to the last), by bisection over their first lines."""
        return max(1, bisect_right(self.firsts, line))

    def identity(self, lines: Sequence[int]) -> dict[str, Any]:
        import numpy as np
        import pyarrow as pa

        n = len(lines)
        at = np.asarray(lines, dtype=np.int64) if n else np.zeros(0, np.int64)
        # Run.launch_at for every line at once: the attempt whose first line is the last <= line.
        launch = np.maximum(
            1, np.searchsorted(np.asarray(self.firsts, dtype=np.int64), at, side="right")
        )
        return {
            "run": pa.array([self.run] * n, pa.string()),
            "file": pa.array([self.file] * n, pa.string()),
            "launch": pa.array(launch.astype(np.int32), pa.int32()),
        }

    def table(self, columns: Sequence[Column], data: dict[str, Any]) -> pa.Table:
        """A table of the given columns from lists (coerced to the column type) or arrays."""
        import pyarrow as pa

        arrays = [
            data[c.name] if isinstance(data[c.name], pa.Array) else to_array(data[c.name], c.type)
            for c in columns
        ]
        return pa.Table.from_arrays(arrays, schema=columns_schema(columns))

    def event_table(self, kind: str) -> pa.Table:
        """The table of one event kind (no rows when the log has none)."""
        hot: dict[str, StatsColumns | AccessColumns] = {
            "decode_batch": self.log.decode,
            "prefill_batch": self.log.prefill,
            "http_access": self.log.access,
        }
        if kind in hot:
            return self._hot(kind, hot[kind])
        if self._by_kind is None:
            self._by_kind = {}
            for e in self.log.events:
                self._by_kind.setdefault(e.kind, []).append(e)
        return self._events(kind, self._by_kind.get(kind, []))

    # -- hot kinds, straight from the typed columns
    def _hot(self, kind: str, cols: StatsColumns | AccessColumns) -> pa.Table:
        import numpy as np
        import pyarrow as pa

        lines = _np(cols.line, np.int64)
        data: dict[str, Any] = self.identity(lines)
        data["line"] = pa.array(lines, pa.int64())
        data["end_line"] = pa.array(lines, pa.int64())
        data["ts"] = _epoch_array(cols.ts)
        data["rank"] = self._ranks(cols.rank, cols.ranks.values)
        data["stream"] = pa.nulls(len(cols), pa.string())
        if kind == "http_access":
            self._access(data, cols)  # type: ignore[arg-type]
        else:
            self._stats(kind, data, cols)  # type: ignore[arg-type]
        return self.table(event_columns(kind), data)

    def _ranks(self, codes: Any, values: list[str | None]) -> pa.Array:
        import numpy as np
        import pyarrow as pa

        idx = _np(codes, np.int32)
        names = [valid_text(self.cleaner.text(v)) for v in values[1:] if v is not None]  # 0: None
        return pa.DictionaryArray.from_arrays(
            pa.array(idx - 1, pa.int32(), mask=idx == 0), pa.array(names, pa.string())
        )

    def _stats(self, kind: str, data: dict[str, Any], cols: StatsColumns) -> None:
        import numpy as np
        import pyarrow as pa

        for name, logical in event_fields(kind):
            if name == "extra":
                continue
            raw = _np(cols.column(name), np.float64)
            missing = np.isnan(raw)  # NaN: the line did not print the field
            if logical == BOOL:
                data[column_name(name)] = pa.array(raw == 1.0, pa.bool_(), mask=missing)
            elif logical == INT:
                data[column_name(name)] = pa.array(
                    np.where(missing, 0, raw).astype(np.int64), pa.int64(), mask=missing
                )
            else:
                data[column_name(name)] = pa.array(raw, pa.float64(), mask=missing)
        data["extra"] = self._extras(cols)

    def _extras(self, cols: StatsColumns) -> pa.Array:
        """The sparse extras as one map per row (keys sorted), built from offsets: most rows have
        none."""
        import numpy as np
        import pyarrow as pa

        names = sorted(cols.extra)
        rows_, keys_, values_ = [], [], []
        for k, name in enumerate(names):
            rows, values = cols.extra[name]
            r, v = _np(rows, np.int64), _np(values, np.float64)
            keep = ~np.isnan(v)
            rows_.append(r[keep])
            values_.append(v[keep])
            keys_.append(np.full(int(keep.sum()), k, dtype=np.int32))
        n = len(cols)
        if not rows_:
            return pa.MapArray.from_arrays(
                pa.array(np.zeros(n + 1, np.int32)),
                pa.array([], pa.string()),
                pa.array([], pa.float64()),
            )
        row, key, value = np.concatenate(rows_), np.concatenate(keys_), np.concatenate(values_)
        order = np.lexsort((key, row))
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(row, minlength=n), out=offsets[1:])
        shown = pa.array([valid_text(self.cleaner.text(n)) for n in names], pa.string())
        return pa.MapArray.from_arrays(
            pa.array(offsets),
            shown.take(pa.array(key[order])),
            pa.array(value[order], pa.float64()),
        )

    def _access(self, data: dict[str, Any], cols: AccessColumns) -> None:
        import numpy as np
        import pyarrow as pa

        strings = [None if v is None else self.cleaner.text(v) for v in cols.strings.values]
        for name in ("client", "method", "path"):
            data[name] = [strings[c] for c in getattr(cols, name)]
        data["status"] = pa.array(_np(cols.status, np.int32).astype(np.int64), pa.int64())
        data["reason"] = pa.nulls(len(cols), pa.string())  # the columns keep no reason phrase

    # -- every other kind, from the event objects
    def _events(self, kind: str, events: list[Any]) -> pa.Table:
        c = self.cleaner
        lines = [e.line for e in events]
        data: dict[str, Any] = self.identity(lines)
        data["line"] = lines
        data["end_line"] = [e.end_line or e.line for e in events]
        data["ts"] = [e.ts for e in events]
        data["rank"] = [None if e.rank is None else c.text(e.rank) for e in events]
        data["stream"] = [_stream(e.wrapper, c) for e in events]
        for name, logical in event_fields(kind):
            values = []
            for e in events:
                value = plain(getattr(e, name))
                if value is not None and logical not in (INT, FLOAT, BOOL, TIMESTAMP):
                    value = c.field(e, name, value)
                values.append(value)
            data[column_name(name)] = values
        return self.table(event_columns(kind), data)


def _stream(wrapper: Any, cleaner: Cleaner) -> str | None:
    stream = getattr(wrapper, "stream", None) if wrapper is not None else None
    return cleaner.text(str(stream)) if stream else None


def _np(values: Any, dtype: Any) -> Any:
    import numpy as np

    if isinstance(values, BaseColumn):
        return values.numpy()
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype)


def plain(value: Any) -> Any:
    """A JSON-like copy: dataclasses (traceback frames) → dicts, tuples → lists, enums → values."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def _epoch_array(ts: Any) -> pa.Array:
    """Epoch seconds (NaN = no timestamp) → naive microsecond timestamps, as printed."""
    import numpy as np
    import pyarrow as pa

    raw = _np(ts, np.float64)
    missing = np.isnan(raw)
    us = np.round(np.where(missing, 0.0, raw) * 1e6).astype(np.int64)
    return pa.array(us, pa.timestamp("us"), mask=missing)


def valid_text(text: str) -> str:
    """Text a UTF-8 column can hold: lone surrogates (a file name's undecodable bytes, as Python
    escapes them) become U+FFFD, as in every other output."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def json_text(value: Any) -> str | None:
    if value is None:
        return None
    return valid_text(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


def to_int(v: Any) -> int | None:
    """An int64 cell: ints and integral numbers or numeric text; anything else (or out of the
    int64 range: a log can print any number of digits) null."""
    if isinstance(v, bool):
        return int(v)
    if not isinstance(v, int):
        try:
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            return None
        if not (math.isfinite(f) and f.is_integer()):
            return None
        v = int(f)
    return v if -(2**63) <= v < 2**63 else None


def _to_float(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if math.isnan(f) else f


def _pairs(v: Any) -> Iterable[tuple[Any, Any]]:
    return v.items() if isinstance(v, dict) else v


def coerce(values: Iterable[Any], logical: str) -> list[Any]:
    """Values as the column type holds them (an annotation is not a guarantee: a field typed int
    may hold what the log printed); what does not fit becomes null, JSON columns JSON text."""
    out: list[Any] = []
    for v in values:
        if v is None:
            out.append(None)
        elif logical in (INT, INT32):
            out.append(to_int(v))
        elif logical == FLOAT:
            out.append(_to_float(v))
        elif logical == BOOL:
            out.append(bool(v) if isinstance(v, (bool, int)) else None)
        elif logical in (STRING, CATEGORY):
            text = (
                v if isinstance(v, str) else json_text(v) if isinstance(v, (dict, list)) else str(v)
            )
            out.append(valid_text(text) if text is not None else None)
        elif logical == JSON:
            out.append(json_text(v))
        elif logical == MAP_FLOAT:
            out.append([(valid_text(str(k)), _to_float(x)) for k, x in _pairs(v)])
        elif logical == MAP_STRING:
            out.append(
                [
                    (valid_text(str(k)), None if x is None else valid_text(str(x)))
                    for k, x in _pairs(v)
                ]
            )
        elif logical == LIST_INT:
            out.append([to_int(x) for x in v] if isinstance(v, list) else None)
        elif logical == LIST_STRING:
            out.append([valid_text(str(x)) for x in v] if isinstance(v, list) else None)
        else:
            out.append(v)
    return out


def to_array(values: list[Any], logical: str) -> pa.Array:
    """A column's values (Python objects) as a pyarrow array of its type."""
    import pyarrow as pa

    typ = arrow_type(logical)
    if logical == CATEGORY:
        return pa.array(coerce(values, STRING), pa.string()).dictionary_encode()
    if logical == JSON:
        return pa.array(coerce(values, logical), typ)
    try:
        return pa.array(values, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError, UnicodeError):
        return pa.array(coerce(values, logical), typ)


def to_frame(table: pa.Table, columns: Sequence[Column]) -> Any:
    """A table as a pandas DataFrame with typed columns: integers and booleans nullable (`Int64`,
    `boolean`), timestamps `datetime64`, ranks and severities categorical, maps as dicts, lists
    as lists and JSON columns as the Python values they encode."""
    import pandas as pd
    import pyarrow as pa

    mapping = {
        pa.int64(): pd.Int64Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }
    frame = table.to_pandas(types_mapper=mapping.get)
    for c in columns:
        if c.type in (MAP_FLOAT, MAP_STRING):
            frame[c.name] = pd.Series(
                [None if v is None else dict(v) for v in table.column(c.name).to_pylist()],
                index=frame.index,
                dtype=object,
            )
        elif c.type in (LIST_INT, LIST_STRING):
            frame[c.name] = pd.Series(
                table.column(c.name).to_pylist(), index=frame.index, dtype=object
            )
        elif c.type == JSON:
            frame[c.name] = pd.Series(
                [None if v is None else json.loads(v) for v in table.column(c.name).to_pylist()],
                index=frame.index,
                dtype=object,
            )
    return frame
