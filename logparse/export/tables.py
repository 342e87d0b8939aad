"""One log → its export tables (pyarrow), sanitized: the per-file half of `logdiag export`.

`export_file` is pure and self-contained (a path and options in, a picklable `FileTables` out) so
that a process pool or a Dask worker can run it. The tables are the run model's and the engine's
(`run/tables.py`, `engine/tables.py`) with the sanitizer as their cleaner: secrets redacted unless
`redact=False`, workflow commands always defused. A file that cannot be read or analysed comes
back with `errors` set and no tables: the writer lists it as failed, it is never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.export.schema import META_TABLE, META_VERSION, SCHEMA_VERSION, table_kinds
from logparse.io.reader import InputError
from logparse.render.redact import MASK, is_secret_key
from logparse.render.sanitize import Sanitizer

if TYPE_CHECKING:
    import pyarrow as pa

    from logparse.model.window import TimeWindow

__all__ = ["ExportOptions", "FileTables", "export_file"]


@dataclass(frozen=True)
class ExportOptions:
    """What to export. `kinds` None: every table (event kinds that have rows, findings, runs)."""

    kinds: tuple[str, ...] | None = None
    redact: bool = True
    # `--since/--until` (a `model.window.TimeWindow`, applied by the parser); None: the whole log.
    window: TimeWindow | None = None
    jobs: int = 1

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds


@dataclass
class FileTables:
    """One input's tables (table name → pyarrow Table with the documented schema), or its errors."""

    path: str
    run: str = ""
    tables: dict[str, pa.Table] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lines: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    # With --since/--until: lines the window left out, and the window as given and as resolved
    # (the manifest says so: rows a window left out are counted, never dropped silently).
    outside_window: int = 0
    window: dict[str, str | None] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def findings(self) -> pa.Table | None:
        return self.tables.get("findings")

    @property
    def runs(self) -> pa.Table | None:
        return self.tables.get("runs")


class _Cleaner:
    """The sanitizer as a table cleaner: every text redacted and defused, secret-named fields and
    the value of a secret-named variable (`export HF_TOKEN=…`: name / value fields) masked."""

    def __init__(self, redact: bool) -> None:
        self.s = Sanitizer(redact)

    def text(self, value: str) -> str:
        return self.s.text(value)

    def field(self, event: Any, name: str, value: Any) -> Any:
        if (
            name == "value"
            and self.s.redact
            and value
            and is_secret_key(str(getattr(event, "name", "")))
        ):
            self.s.counts["secret-field"] += 1
            return MASK
        return self.s.data(value, name)


def export_file(path: str, options: ExportOptions) -> FileTables:
    """Parse, analyse (when findings or runs are asked for) and tabulate one log."""
    out = FileTables(path=path)
    try:
        _fill(out, path, options)
    except InputError as err:
        out.errors.append(str(err))
    except OSError as err:
        out.errors.append(f"cannot read {path}: {err.strerror or err}")
    except Exception as err:  # noqa: BLE001  (a bug in logdiag must not drop the file: it is listed as failed)
        out.errors.append(f"internal error on {path}: {type(err).__name__}: {err}")
    if out.errors:
        out.tables = {}
    return out


def _fill(out: FileTables, path: str, options: ExportOptions) -> None:
    from logparse.parsing.pipeline import parse_file
    from logparse.run.tables import TableBuilder, kinds_present, run_id

    log = parse_file(path, jobs=options.jobs, window=options.window)
    out.run = run_id(path)
    out.lines = log.coverage.total
    if log.coverage.window is not None:
        out.outside_window = log.coverage.outside_window
        out.window = dict(log.coverage.window)
    cleaner = _Cleaner(options.redact)
    builder = TableBuilder(log, out.run, path, cleaner)
    for kind in kinds_present(log):
        if options.wants(kind):
            out.tables[kind] = _stamped(builder.event_table(kind), kind)
    if options.wants("findings") or options.wants("runs"):
        from logparse.engine.core import analyze_log
        from logparse.engine.tables import engine_table

        analysis = analyze_log(log)
        for kind in ("findings", "runs"):
            if options.wants(kind):
                out.tables[kind] = _stamped(engine_table(analysis, kind, builder), kind)
    # A fixed table order: the writer and the manifest see the same order however tables were built.
    out.tables = {k: out.tables[k] for k in table_kinds() if k in out.tables}
    out.redactions = cleaner.s.summary()


def _stamped(table: pa.Table, kind: str) -> pa.Table:
    """The table with the schema version and its name in the schema metadata."""
    return table.replace_schema_metadata(
        {META_VERSION: SCHEMA_VERSION.encode(), META_TABLE: kind.encode()}
    )
