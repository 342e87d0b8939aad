"""One log → its export tables (pyarrow), sanitized: the per-file half of `logdiag export`.

`export_file` is pure and self-contained (a path and options in, a picklable `FileTables` out) so
that a process pool or a Dask worker can run it; every fact comes from the parser, the run model
and the engine, never recomputed here. A file that cannot be read or analysed comes back with
`errors` set and no tables: the writer lists it as failed, it is never dropped.
"""

from __future__ import annotations

import hashlib
import json
import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from logparse.export.schema import (
    BOOL,
    CATEGORY,
    FLOAT,
    INT,
    INT32,
    JSON,
    LIST_INT,
    LIST_STRING,
    MAP_FLOAT,
    MAP_STRING,
    STRING,
    TIMESTAMP,
    arrow_schema,
    column_name,
    event_fields,
    table_columns,
    table_kinds,
)
from logparse.io.reader import InputError
from logparse.render.redact import MASK, is_secret_key
from logparse.render.sanitize import Sanitizer

if TYPE_CHECKING:
    import pyarrow as pa

    from logparse.engine.analysis import Analysis
    from logparse.parsing.columns import AccessColumns, StatsColumns
    from logparse.parsing.pipeline import ParsedLog

HOT = ("decode_batch", "prefill_batch", "http_access")
# Stats fields stored as floats in the columns (NaN = not printed) whose events type them int.
_INT_STATS = frozenset({"running", "tokens", "queue", "iteration", "new_seq", "new_token", "cached_token"})
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class ExportOptions:
    """What to export. `kinds` None: every table (event kinds that have rows, findings, runs)."""

    kinds: tuple[str, ...] | None = None
    redact: bool = True
    # A time window (helper E's type, from `--since/--until`); None: the whole log.
    window: Any | None = None
    jobs: int = 1

    def wants(self, kind: str) -> bool:
        return self.kinds is None or kind in self.kinds


@dataclass
class FileTables:
    """One input's tables (kind → pyarrow Table with the documented schema), or its errors."""

    path: str
    run: str = ""
    tables: dict[str, pa.Table] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lines: int = 0
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def findings(self) -> pa.Table | None:
        return self.tables.get("findings")

    @property
    def runs(self) -> pa.Table | None:
        return self.tables.get("runs")


def run_id(path: str) -> str:
    """The log's identity: the first 16 hex digits of the sha256 of its bytes ('stdin' for '-')."""
    if path == "-":
        return "stdin"
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()[:16]


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

    log = parse_file(path, jobs=options.jobs)
    out.run = run_id(path)
    out.lines = log.coverage.total
    if options.window is not None:
        log = _windowed(log, options.window)
    s = Sanitizer(options.redact)
    ctx = _Context(out.run, s.text(path), log, s)
    hot: dict[str, Any] = {"decode_batch": log.decode, "prefill_batch": log.prefill, "http_access": log.access}
    by_kind: dict[str, list[Any]] = {}
    for e in log.events:
        by_kind.setdefault(e.kind, []).append(e)
    for kind in table_kinds():
        if not options.wants(kind) or kind in ("findings", "runs"):
            continue
        if kind in hot:
            if len(hot[kind]):
                out.tables[kind] = ctx.hot_table(kind, hot[kind])
        elif kind in by_kind:
            out.tables[kind] = ctx.event_table(kind, by_kind[kind])
    if options.wants("findings") or options.wants("runs"):
        from logparse.engine.core import analyze_log

        analysis = analyze_log(log)
        if options.wants("findings"):
            out.tables["findings"] = ctx.findings_table(analysis)
        if options.wants("runs"):
            out.tables["runs"] = ctx.runs_table(analysis)
    out.redactions = s.summary()


def _windowed(log: ParsedLog, window: Any) -> ParsedLog:
    """The log restricted to a time window, by the window type's own function."""
    apply = getattr(window, "apply", None)
    if callable(apply):
        result = apply(log)
        return result if result is not None else log
    return log


class _Context:
    """Per-file state for building tables: identity columns, launch lookup, the sanitizer."""

    def __init__(self, run: str, file: str, log: ParsedLog, s: Sanitizer) -> None:
        from logparse.run.model import run_of

        self.run, self.file, self.log, self.s = run, file, log, s
        self.model = run_of(log)
        self.firsts = [launch.first_line for launch in self.model.launches]

    # -- identity and provenance
    def launch_of(self, line: int) -> int:
        """The run model's attempt for a line (`Run.launch_at`, by bisection over its boundaries)."""
        return max(1, bisect_right(self.firsts, line))

    def _identity(self, n: int, lines: Sequence[int]) -> dict[str, Any]:
        return {"run": [self.run] * n, "file": [self.file] * n, "launch": [self.launch_of(x) for x in lines]}

    def _table(self, kind: str, data: dict[str, Any]) -> pa.Table:
        import pyarrow as pa

        schema = arrow_schema(kind)
        arrays = [data[f.name] if isinstance(data[f.name], pa.Array) else _array(data[f.name], c.type)
                  for f, c in zip(schema, table_columns(kind), strict=True)]
        return pa.Table.from_arrays(arrays, schema=schema)

    # -- hot tables, straight from the typed columns
    def hot_table(self, kind: str, cols: StatsColumns | AccessColumns) -> pa.Table:
        import numpy as np
        import pyarrow as pa

        lines = np.frombuffer(cols.line, dtype=np.int64) if len(cols) else np.zeros(0, np.int64)
        data: dict[str, Any] = self._identity(len(cols), cols.line)
        data["line"] = pa.array(lines, pa.int64())
        data["end_line"] = pa.array(lines, pa.int64())
        data["ts"] = _epoch_array(cols.ts)
        data["rank"] = self._rank_array(cols.rank, cols.ranks.values)
        data["stream"] = pa.nulls(len(cols), pa.string())
        if kind == "http_access":
            self._access(data, cols)  # type: ignore[arg-type]
        else:
            self._stats(kind, data, cols)  # type: ignore[arg-type]
        return self._table(kind, data)

    def _rank_array(self, codes: Any, values: list[str | None]) -> pa.Array:
        import numpy as np
        import pyarrow as pa

        idx = np.frombuffer(codes, dtype=np.int32) if len(codes) else np.zeros(0, np.int32)
        names = [self.s.text(v) for v in values[1:] if v is not None]
        return pa.DictionaryArray.from_arrays(pa.array(idx - 1, pa.int32(), mask=idx == 0), pa.array(names, pa.string()))

    def _stats(self, kind: str, data: dict[str, Any], cols: StatsColumns) -> None:
        import numpy as np
        import pyarrow as pa

        for name, logical in event_fields(kind):
            if name == "extra":
                continue
            raw = np.frombuffer(cols.cols[name], dtype=np.float64) if len(cols) else np.zeros(0)
            missing = np.isnan(raw)
            if logical == BOOL:
                data[column_name(name)] = pa.array(raw == 1.0, pa.bool_(), mask=missing)
            elif logical == INT:
                data[column_name(name)] = pa.array(np.where(missing, 0, raw).astype(np.int64), pa.int64(), mask=missing)
            else:
                data[column_name(name)] = pa.array(raw, pa.float64(), mask=missing)
        extras: list[list[tuple[str, float]]] = [[] for _ in range(len(cols))]
        for name in sorted(cols.extra):
            rows, values = cols.extra[name]
            for r, v in zip(rows, values, strict=True):
                if not math.isnan(v):
                    extras[r].append((self.s.text(name), v))
        data["extra"] = extras

    def _access(self, data: dict[str, Any], cols: AccessColumns) -> None:
        import numpy as np
        import pyarrow as pa

        strings = [None if v is None else self.s.text(v) for v in cols.strings.values]
        for name in ("client", "method", "path"):
            codes = getattr(cols, name)
            data[name] = [strings[c] for c in codes]
        status = np.frombuffer(cols.status, dtype=np.int32) if len(cols) else np.zeros(0, np.int32)
        data["status"] = pa.array(status.astype(np.int64), pa.int64())
        data["reason"] = pa.nulls(len(cols), pa.string())  # the columns keep no reason phrase

    # -- other events, from the event objects
    def event_table(self, kind: str, events: list[Any]) -> pa.Table:
        own = event_fields(kind)
        lines = [e.line for e in events]
        data: dict[str, Any] = self._identity(len(events), lines)
        data["line"] = lines
        data["end_line"] = [e.end_line or e.line for e in events]
        data["ts"] = [e.ts for e in events]
        data["rank"] = [None if e.rank is None else self.s.text(e.rank) for e in events]
        data["stream"] = [self._stream(e.wrapper) for e in events]
        for name, logical in own:
            data[column_name(name)] = [self._value(e, name, logical) for e in events]
        return self._table(kind, data)

    def _stream(self, wrapper: Any) -> str | None:
        stream = getattr(wrapper, "stream", None) if wrapper is not None else None
        return self.s.text(str(stream)) if stream else None

    def _value(self, e: Any, name: str, logical: str) -> Any:
        value = _plain(getattr(e, name))
        if logical in (INT, FLOAT, BOOL, TIMESTAMP) or value is None:
            return value
        # A secret-named variable's value (`export HF_TOKEN=…`: name / value fields) is masked.
        if name == "value" and self.s.redact and is_secret_key(str(getattr(e, "name", ""))) and value:
            self.s.counts["secret-field"] += 1
            return MASK
        return self.s.data(value, name)

    # -- findings and runs, from the engine and the run model
    def findings_table(self, analysis: Analysis) -> pa.Table:
        from logparse.engine.evidence import walk

        roots = {id(a.root_cause) for a in analysis.attempts if a.root_cause is not None}
        if analysis.root_cause is not None:
            roots.add(id(analysis.root_cause))
        parents: dict[int, str] = {}
        for f in walk(analysis.findings):
            for c in f.consequences:
                parents[id(c)] = f.code
        rows = list(walk(analysis.findings))
        s = self.s
        lines = [f.first_line for f in rows]
        data = self._identity(len(rows), lines)
        data.update(
            code=[f.code for f in rows], name=[f.name for f in rows], family=[f.family or None for f in rows],
            severity=[str(f.severity) for f in rows], message=[s.text(f.message) for f in rows],
            remedy=[s.text(f.remedy) for f in rows], line=lines, ranks=[[s.text(r) for r in f.ranks] for f in rows],
            count=[f.count for f in rows], stage=[f.stage for f in rows], parent=[parents.get(id(f)) for f in rows],
            root_cause=[id(f) in roots for f in rows], fingerprint=[f.fingerprint for f in rows],
            data=[s.data(_plain(f.data)) for f in rows],
        )
        return self._table("findings", data)

    def runs_table(self, analysis: Analysis) -> pa.Table:
        from logparse.run.serving import launch_serving
        from logparse.run.settings import launch_settings

        lifecycles = analysis.run.lifecycles
        verdicts = {a.launch.index: a for a in analysis.attempts}
        cols: dict[str, list[Any]] = {c.name: [] for c in table_columns("runs")}
        for lc in lifecycles:
            launch = lc.launch
            settings = launch_settings(launch)
            verdict = verdicts.get(launch.index)
            root = verdict.root_cause if verdict is not None else None
            serving = launch_serving(self.log, launch.first_line, launch.last_line)
            model = settings.get("model_path")
            row = {
                "run": self.run, "file": self.file, "launch": launch.index,
                "first_line": launch.first_line, "last_line": launch.last_line,
                "command_line": launch.command.line if launch.command is not None else None,
                "model": None if model is None else self.s.text(str(model)),
                "sglang_version": _str(settings.get("sglang_version")),
                "nccl_version": _str(settings.get("nccl_version")),
                "tp_size": _to_int(settings.get("tp_size")), "dp_size": _to_int(settings.get("dp_size")),
                "outcome": verdict.outcome if verdict is not None else None,
                "root_cause": root.code if root is not None else None,
                "root_cause_name": root.name if root is not None else None,
                "root_cause_line": root.first_line if root is not None else None,
                "ready": lc.ready, "ready_line": lc.ready_line, "time_to_ready_s": lc.time_to_ready_s,
                "decode_lines": serving["decode_lines"],
                "gen_throughput_median": serving["gen_throughput_median"],
                "findings": len(verdict.findings) if verdict is not None else 0,
            }
            for name, value in row.items():
                cols[name].append(value)
        return self._table("runs", cols)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _plain(value: Any) -> Any:
    """A JSON-like copy: dataclasses (traceback frames) → dicts, tuples → lists, enums → values."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    return value


def _epoch_array(ts: Any) -> pa.Array:
    """Epoch seconds (NaN = no timestamp) → naive microsecond timestamps."""
    import numpy as np
    import pyarrow as pa

    raw = np.frombuffer(ts, dtype=np.float64) if len(ts) else np.zeros(0)
    missing = np.isnan(raw)
    us = np.round(np.where(missing, 0.0, raw) * 1e6).astype(np.int64)
    return pa.array(us, pa.timestamp("us"), mask=missing)


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _to_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if math.isfinite(f) and f.is_integer() else None


def _to_float(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _coerce(values: Iterable[Any], logical: str) -> list[Any]:
    """Values as the column type holds them (an annotation is not a guarantee: a field typed int
    may hold what the log printed); what does not fit becomes null, JSON columns JSON text."""
    out: list[Any] = []
    for v in values:
        if v is None:
            out.append(None)
        elif logical in (INT, INT32):
            out.append(_to_int(v))
        elif logical == FLOAT:
            out.append(_to_float(v))
        elif logical == BOOL:
            out.append(bool(v) if isinstance(v, (bool, int)) else None)
        elif logical in (STRING, CATEGORY):
            out.append(v if isinstance(v, str) else _json(v) if isinstance(v, (dict, list)) else str(v))
        elif logical == JSON:
            out.append(_json(v))
        elif logical == MAP_FLOAT:
            out.append([(str(k), _to_float(x)) for k, x in (v.items() if isinstance(v, dict) else v)])
        elif logical == MAP_STRING:
            out.append([(str(k), None if x is None else str(x))
                        for k, x in (v.items() if isinstance(v, dict) else v)])
        elif logical == LIST_INT:
            out.append([_to_int(x) for x in v] if isinstance(v, list) else None)
        elif logical == LIST_STRING:
            out.append([str(x) for x in v] if isinstance(v, list) else None)
        else:
            out.append(v)
    return out


def _array(values: list[Any], logical: str) -> pa.Array:
    import pyarrow as pa

    from logparse.export.schema import arrow_type

    typ = arrow_type(logical)
    if logical == CATEGORY:
        return pa.array(_coerce(values, STRING), pa.string()).dictionary_encode()
    if logical == JSON:
        return pa.array(_coerce(values, JSON), typ)
    if logical == TIMESTAMP:
        return pa.array(values, typ)
    try:
        return pa.array(values, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return pa.array(_coerce(values, logical), typ)
