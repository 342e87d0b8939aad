"""`logdiag export`: every event table of many logs, plus findings and launch runs, as datasets.

`export_file(path, options) -> FileTables` does one file (pure; picklable arguments and result, so
a process pool or a Dask worker can run it); `write_dataset(results, out, fmt) -> Manifest` writes
the tables in input order (so a distributed run writes the same bytes as a local one). The schema
(`schema.py`) is versioned and documented in docs/export.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logparse.export.schema import SCHEMA_VERSION, Column, table_columns
    from logparse.export.tables import ExportOptions, FileTables, export_file
    from logparse.export.write import FORMATS, Manifest, write_dataset

__all__ = [
    "FORMATS",
    "SCHEMA_VERSION",
    "Column",
    "ExportOptions",
    "FileTables",
    "Manifest",
    "export_file",
    "table_columns",
    "write_dataset",
]

_LAZY = {
    "SCHEMA_VERSION": "logparse.export.schema",
    "Column": "logparse.export.schema",
    "table_columns": "logparse.export.schema",
    "ExportOptions": "logparse.export.tables",
    "FileTables": "logparse.export.tables",
    "export_file": "logparse.export.tables",
    "FORMATS": "logparse.export.write",
    "Manifest": "logparse.export.write",
    "write_dataset": "logparse.export.write",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'logparse.export' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
