"""The export schema: every table's columns with their types, and the schema version.

Event tables are the run model's (`logparse/run/tables.py`: derived from the event classes);
`findings` and `runs` are the engine's (`logparse/engine/tables.py`). docs/export.md documents
every table; `tests/test_export.py` compares it with these columns and with the written Parquet
files, so they cannot drift.

SCHEMA_VERSION is MAJOR.MINOR: the major part changes when a column is removed, renamed or changes
type; the minor part when a table or a column at the end of a table is added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from logparse.engine.tables import ENGINE_TABLES
from logparse.run.tables import NESTED, Column, columns_schema, event_columns, event_kinds

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "META_TABLE",
    "META_VERSION",
    "NESTED",
    "SCHEMA_VERSION",
    "Column",
    "arrow_schema",
    "table_columns",
    "table_kinds",
]

SCHEMA_VERSION = "1.0"
# The Parquet key-value metadata every file carries.
META_VERSION = b"logdiag.schema_version"
META_TABLE = b"logdiag.table"


def table_kinds() -> list[str]:
    """Every table `export` can write: the event kinds (sorted), then findings and runs."""
    return [*event_kinds(), *ENGINE_TABLES]


def table_columns(kind: str) -> tuple[Column, ...]:
    """The columns of a table, in order. KeyError for an unknown kind."""
    if kind in ENGINE_TABLES:
        return ENGINE_TABLES[kind]
    return event_columns(kind)


def arrow_schema(kind: str) -> pa.Schema:
    """The Parquet schema of a table, with the schema version and the table name as metadata."""
    schema = columns_schema(table_columns(kind))
    return schema.with_metadata({META_VERSION: SCHEMA_VERSION.encode(), META_TABLE: kind.encode()})
