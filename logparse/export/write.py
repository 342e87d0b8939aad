"""Write export tables as a dataset folder: one file per table, and `manifest.json`.

Results are written in input order whatever order they arrive in (a distributed run yields them as
workers finish), so the same inputs give byte-identical files. Nothing is written over a file that
logdiag did not write: `manifest.json` records each file's sha256, a target that exists must still
match it, and every file goes through a temporary file and a rename. A table an earlier export
wrote into the folder and this one does not is removed only when it is still exactly what the
manifest recorded (a stale table would otherwise be read with the new ones).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logparse.export.schema import NESTED, SCHEMA_VERSION, arrow_schema, table_columns, table_kinds
from logparse.export.tables import FileTables
from logparse.render.neutral import csv_cell
from logparse.render.outfiles import OutputError, file_digest, make_output_folder, overwritten_input
from logparse.render.sanitize import Sanitizer
from logparse.run.tables import valid_text

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ("parquet", "csv", "jsonl")
EXTENSIONS = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
MANIFEST = "manifest.json"
# Rows buffered per table before a Parquet row group is written (row groups never depend on how
# the rows were split over files or workers).
ROW_GROUP = 64 * 1024
_MAX_MANIFEST = 16 << 20


@dataclass
class Manifest:
    """What an export wrote: the schema version, each table's file and row count, each input."""

    format: str
    schema_version: str = SCHEMA_VERSION
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    redactions: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # file name → sha256

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [i for i in self.inputs if i["status"] != "ok"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "written_by": "logdiag",
            "schema_version": self.schema_version,
            "format": self.format,
            "tables": dict(sorted(self.tables.items())),
            "inputs": self.inputs,
            "failed": len(self.failed),
            "redactions": dict(sorted(self.redactions.items())),
            "files": dict(sorted(self.files.items())),
        }


def in_order(results: Iterable[FileTables], order: Sequence[str]) -> Iterator[FileTables]:
    """The results in the order of `order` (input paths), however they arrive; results for paths
    not in `order` follow in arrival order. Holds back only what arrived early."""
    slots: dict[str, list[int]] = {}
    for i, path in enumerate(order):
        slots.setdefault(path, []).append(i)
    pending: dict[int, FileTables] = {}
    extra: list[FileTables] = []
    nxt = 0
    for r in results:
        free = slots.get(r.path)
        if not free:
            extra.append(r)
            continue
        pending[free.pop(0)] = r
        while nxt in pending:
            yield pending.pop(nxt)
            nxt += 1
    for i in sorted(pending):
        yield pending[i]
    yield from extra


class _Sink:
    """One table's output file, written through a temporary file."""

    def __init__(self, kind: str, fmt: str, folder: Path) -> None:
        self.kind, self.fmt = kind, fmt
        self.name = kind + EXTENSIONS[fmt]
        self.tmp = folder / f".{self.name}.{os.getpid()}.tmp"
        self.rows = 0
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._writer: Any = None
        self._fh: Any = None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.tmp, flags, 0o644)
        self._fh = os.fdopen(fd, "wb")
        if fmt == "parquet":
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self._fh, arrow_schema(kind), compression="zstd")
        elif fmt == "csv":
            self._text([[c.name for c in table_columns(kind)]])

    def write(self, table: pa.Table) -> None:
        self.rows += table.num_rows
        if self.fmt == "parquet":
            self._buffer.append(table)
            self._buffered += table.num_rows
            if self._buffered >= ROW_GROUP:
                self._flush()
        elif self.fmt == "csv":
            self._text(_csv_rows(table))
        else:
            lines = (
                json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in _json_rows(table)
            )
            self._fh.write("".join(lines).encode("utf-8"))

    def _text(self, rows: Iterable[list[Any]]) -> None:
        sio = io.StringIO()
        csv.writer(sio, lineterminator="\n").writerows(rows)
        self._fh.write(sio.getvalue().encode("utf-8"))

    def _flush(self) -> None:
        if self._buffer:
            import pyarrow as pa

            self._writer.write_table(pa.concat_tables(self._buffer), row_group_size=ROW_GROUP)
            self._buffer, self._buffered = [], 0

    def close(self) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.close()
        self._fh.close()

    def discard(self) -> None:
        # Closing a half-written temporary file can fail again (the error that got us here): it is
        # removed next anyway, and the original error is the one to report.
        with contextlib.suppress(Exception):
            if self._writer is not None:
                self._writer.close()
        with contextlib.suppress(OSError):
            self._fh.close()
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


def _cell(value: Any, nested: bool) -> Any:
    if value is None:
        return None
    if nested:
        return (
            json.dumps(_nested(value), ensure_ascii=False, default=str)
            if not isinstance(value, str)
            else value
        )
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    return value


def _nested(value: Any) -> Any:
    """A map column's value (pyarrow gives a list of pairs) as a JSON object."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, tuple) and len(v) == 2 for v in value)
    ):
        return {str(k): v for k, v in value}
    return value


def _columns(table: pa.Table) -> list[tuple[str, bool, list[Any]]]:
    types = {c.name: c.type for c in table_columns(_kind_of(table))}
    return [
        (name, types.get(name) in NESTED, table.column(name).to_pylist())
        for name in table.column_names
    ]


def _kind_of(table: pa.Table) -> str:
    meta = table.schema.metadata or {}
    return meta.get(b"logdiag.table", b"").decode()


def _csv_rows(table: pa.Table) -> Iterator[list[Any]]:
    cols = _columns(table)
    for i in range(table.num_rows):
        row = []
        for _, nested, values in cols:
            v = _cell(values[i], nested)
            row.append("true" if v is True else "false" if v is False else csv_cell(v))
        yield row


def _json_rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    cols = _columns(table)
    for i in range(table.num_rows):
        out: dict[str, Any] = {}
        for name, nested, values in cols:
            v = values[i]
            if nested and isinstance(v, str):
                v = _json_value(v)
            out[name] = (
                _nested(v) if nested else v.isoformat(sep=" ") if isinstance(v, datetime) else v
            )
        yield out


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _previous(folder: Path) -> dict[str, str]:
    """{file name: sha256} an earlier export recorded; OutputError when manifest.json is not
    ours."""
    path = folder / MANIFEST
    if not os.path.lexists(path):
        return {}
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_MANIFEST:
            raise ValueError
        doc = json.loads(path.read_text(encoding="utf-8"))
        if (
            not isinstance(doc, dict)
            or doc.get("written_by") != "logdiag"
            or not isinstance(doc.get("files"), dict)
        ):
            raise ValueError
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        raise OutputError(
            f"refusing to overwrite {path}: logdiag did not write it; choose another -o"
        ) from None
    return {
        k: v
        for k, v in doc["files"].items()
        if isinstance(k, str) and isinstance(v, str) and "/" not in k
    }


def _prepare(folder: Path, fmt: str, inputs: Sequence[str]) -> dict[str, str]:
    """Check, before writing anything, that every file this export may write is logdiag's to
    replace."""
    # A folder that is an input already exists: creating it first writes nothing into it.
    make_output_folder(folder, "a dataset")
    for path in inputs:
        if path != "-" and Path(path).resolve() == folder.resolve():
            raise OutputError(f"refusing to write into {folder}: it is an input")
    previous = _previous(folder)
    for kind in table_kinds():
        target = folder / (kind + EXTENSIONS[fmt])
        if not os.path.lexists(target):
            continue
        if overwritten_input(str(target), inputs):
            raise OutputError(f"refusing to overwrite the input {target}")
        if target.is_symlink() or file_digest(target) != previous.get(target.name):
            raise OutputError(
                f"refusing to overwrite {target}: logdiag did not write it (or it was changed "
                "since); remove it or choose another -o"
            )
    return previous


def write_dataset(
    results: Iterable[FileTables],
    out: Path,
    fmt: str = "parquet",
    *,
    kinds: Sequence[str] | None = None,
    inputs: Sequence[str] = (),
    redact: bool = True,
) -> Manifest:
    """Write every table of `results` into the folder `out` (one file per table, in the order of
    `inputs` when given) and its manifest. Tables named in `kinds` are written even when empty.
    Raises OutputError (nothing replaced) when a target is not logdiag's to write."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    out = Path(out)
    previous = _prepare(out, fmt, inputs)
    manifest = Manifest(format=fmt)
    s = Sanitizer(redact)
    sinks: dict[str, _Sink] = {}
    try:
        for r in in_order(results, inputs):
            manifest.inputs.append(_input_entry(r, s))
            for name, count in r.redactions.items():
                manifest.redactions[name] = manifest.redactions.get(name, 0) + count
            for kind in table_kinds():  # a fixed table order: the same bytes however results arrive
                table = r.tables.get(kind)
                if table is None:
                    continue
                if kind not in sinks:
                    sinks[kind] = _Sink(kind, fmt, out)
                sinks[kind].write(table)
        for kind in kinds or ():
            if kind not in sinks:
                sinks[kind] = _Sink(kind, fmt, out)
        for sink in sinks.values():
            sink.close()
    except BaseException:
        for sink in sinks.values():
            sink.discard()
        raise
    for kind, sink in sorted(sinks.items()):
        os.replace(sink.tmp, out / sink.name)
        manifest.files[sink.name] = file_digest(out / sink.name) or ""
        manifest.tables[kind] = {"file": sink.name, "rows": sink.rows}
    for name, digest in previous.items():  # stale tables of an earlier export, still unchanged
        target = out / name
        if name not in manifest.files and name != MANIFEST and file_digest(target) == digest:
            os.unlink(target)
    for name, count in s.counts.items():
        manifest.redactions[name] = manifest.redactions.get(name, 0) + count
    _write_manifest(out, manifest)
    return manifest


def _input_entry(r: FileTables, s: Sanitizer) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "file": s.text(r.path),
        "run": r.run or None,
        "lines": r.lines,
        "status": "ok" if r.ok else "failed",
    }
    if r.window is not None:
        entry["outside_window"] = r.outside_window
        entry["window"] = {k: None if v is None else s.text(v) for k, v in r.window.items()}
    if r.errors:
        entry["errors"] = [s.text(e) for e in r.errors]
    else:
        entry["rows"] = {k: t.num_rows for k, t in sorted(r.tables.items())}
    return entry


def _write_manifest(folder: Path, manifest: Manifest) -> None:
    text = json.dumps(manifest.as_dict(), indent=2, ensure_ascii=False) + "\n"
    data = valid_text(text).encode("utf-8")  # a file name's undecodable bytes: U+FFFD
    tmp = folder / f".{MANIFEST}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, folder / MANIFEST)
