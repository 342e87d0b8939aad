"""The export schema: every table's columns with their types, versioned.

Event tables are derived from the event classes (`logparse/model/events.py`): the common columns,
then the class's own fields in declaration order, typed from their annotations. `findings` and
`runs` are declared here. docs/export.md documents every table (`tests/test_export.py` compares it
with this module and with the written Parquet files, so they cannot drift).

Bump SCHEMA_VERSION when a column is removed, renamed or changes type (adding a kind or a column
at the end of a table is compatible and bumps the minor part).
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from logparse.model.events import EVENT_CLASSES

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA_VERSION = "1.0"
# The Parquet key-value metadata keys every file carries.
META_VERSION = b"logdiag.schema_version"
META_TABLE = b"logdiag.table"

# Logical types (what docs/export.md shows) → how they are written.
STRING, INT, INT32, FLOAT, BOOL, TIMESTAMP, CATEGORY = (
    "string", "int64", "int32", "float64", "bool", "timestamp", "category")
MAP_FLOAT, MAP_STRING, LIST_INT, LIST_STRING, JSON = (
    "map<string,float64>", "map<string,string>", "list<int64>", "list<string>", "json")
# Types that CSV and JSON lines write as JSON text / JSON values.
NESTED = frozenset({MAP_FLOAT, MAP_STRING, LIST_INT, LIST_STRING, JSON})


@dataclass(frozen=True)
class Column:
    """One column of an exported table."""

    name: str
    type: str
    doc: str = ""


# Every table starts with these: together (run, line) identifies an event of any table.
COMMON: tuple[Column, ...] = (
    Column("run", STRING, "the log's identity: first 16 hex digits of the sha256 of its bytes"),
    Column("file", STRING, "the log's path as given (directories expanded)"),
    Column("launch", INT32, "the launch attempt the line belongs to (1-based, the run model's)"),
)
EVENT_COMMON: tuple[Column, ...] = (
    Column("line", INT, "first line of the event in the file (1-based)"),
    Column("end_line", INT, "last line of the event (multi-line records)"),
    Column("ts", TIMESTAMP, "timestamp as printed (no time zone; time-only stamps on 1900-01-01)"),
    Column("rank", CATEGORY, "rank tags as printed (`TP3`, `DP1 TP1`), null for the main process"),
    Column("stream", STRING, "wrapper stream the reader stripped (docker service, Ray pid), or null"),
)
# Event fields that the common columns replace.
_PROVENANCE = frozenset({"line", "end_line", "ts", "rank", "source", "wrapper"})

FINDINGS: tuple[Column, ...] = (
    *COMMON,
    Column("code", STRING, "rule code (`MEM001`)"),
    Column("name", STRING, "diagnosis name (`cuda-oom`)"),
    Column("family", STRING, "rule family"),
    Column("severity", CATEGORY, "error, warning or info"),
    Column("message", STRING, "what happened, with the log's numbers"),
    Column("remedy", STRING, "the fix, with flags"),
    Column("line", INT, "first evidence line"),
    Column("ranks", LIST_STRING, "ranks involved"),
    Column("count", INT, "occurrences grouped into this finding"),
    Column("stage", STRING, "start-up or served stage the finding refines, or null"),
    Column("parent", STRING, "code of the finding this one is a consequence of (null: top level)"),
    Column("root_cause", BOOL, "the root cause of its launch attempt"),
    Column("fingerprint", STRING, "stable identity (baselines match on it)"),
    Column("data", JSON, "the rule's machine-readable details"),
)

RUNS: tuple[Column, ...] = (
    *COMMON,
    Column("first_line", INT, "first line of the attempt"),
    Column("last_line", INT, "last line of the attempt"),
    Column("command_line", INT, "line of the server command, or null"),
    Column("model", STRING, "model_path the attempt states"),
    Column("sglang_version", STRING, "SGLang release the attempt states (image tag, pip pin)"),
    Column("nccl_version", STRING, "NCCL version the log prints"),
    Column("tp_size", INT, "tensor parallel size the attempt states"),
    Column("dp_size", INT, "data parallel size the attempt states"),
    Column("outcome", STRING, "the attempt's outcome (ok, crashed, hung, ...)"),
    Column("root_cause", STRING, "code of the attempt's root cause, or null"),
    Column("root_cause_name", STRING, "name of the attempt's root cause, or null"),
    Column("root_cause_line", INT, "first line of the root cause, or null"),
    Column("ready", BOOL, "reached readiness or served (null: the lines cannot tell)"),
    Column("ready_line", INT, "line that shows the server ready, or null"),
    Column("time_to_ready_s", FLOAT, "seconds from the attempt's first timestamp to ready"),
    Column("decode_lines", INT, "decode stats lines of the attempt"),
    Column("gen_throughput_median", FLOAT, "median decode throughput (token/s) of the attempt"),
    Column("findings", INT, "top-level findings of the attempt"),
)

SPECIAL: dict[str, tuple[Column, ...]] = {"findings": FINDINGS, "runs": RUNS}


def _logical(hint: Any) -> str:
    """The logical column type of an event field's annotation."""
    from datetime import datetime

    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin is typing.Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
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
    return JSON  # Any, free dicts, frames, chains: JSON text


@cache
def event_fields(kind: str) -> tuple[tuple[str, str], ...]:
    """(field name, logical type) of an event kind's own fields, in declaration order."""
    cls = EVENT_CLASSES[kind]
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _logical(hints[f.name])) for f in dataclasses.fields(cls)
                 if f.name not in _PROVENANCE)


def column_name(field: str) -> str:
    """An event field's column name: a field named like a common column gets a trailing `_`."""
    taken = {c.name for c in (*COMMON, *EVENT_COMMON)}
    return f"{field}_" if field in taken else field


def event_kinds() -> list[str]:
    """Every event kind, sorted."""
    return sorted(EVENT_CLASSES)


def table_kinds() -> list[str]:
    """Every table `export` can write: the event kinds, then findings and runs."""
    return [*event_kinds(), *SPECIAL]


@cache
def table_columns(kind: str) -> tuple[Column, ...]:
    """The columns of a table, in order. KeyError for an unknown kind."""
    if kind in SPECIAL:
        return SPECIAL[kind]
    own = tuple(Column(column_name(name), typ) for name, typ in event_fields(kind))
    return (*COMMON, *EVENT_COMMON, *own)


def arrow_type(logical: str) -> pa.DataType:
    import pyarrow as pa

    simple = {
        STRING: pa.string(), INT: pa.int64(), INT32: pa.int32(), FLOAT: pa.float64(),
        BOOL: pa.bool_(), TIMESTAMP: pa.timestamp("us"), CATEGORY: pa.dictionary(pa.int32(), pa.string()),
        MAP_FLOAT: pa.map_(pa.string(), pa.float64()), MAP_STRING: pa.map_(pa.string(), pa.string()),
        LIST_INT: pa.list_(pa.int64()), LIST_STRING: pa.list_(pa.string()), JSON: pa.string(),
    }
    return simple[logical]


def arrow_schema(kind: str) -> pa.Schema:
    """The Parquet schema of a table, with the schema version and table name as metadata."""
    import pyarrow as pa

    fields = [pa.field(c.name, arrow_type(c.type)) for c in table_columns(kind)]
    return pa.schema(fields, metadata={META_VERSION: SCHEMA_VERSION.encode(), META_TABLE: kind.encode()})
