"""The engine's tables: `findings` (every finding, consequences included) and `runs` (one row per
launch attempt: settings, outcome, root cause, readiness, decode throughput).

Every value is read from its owner: findings and verdicts from the engine's `Analysis`, readiness
and time to ready from the run model's lifecycle, model / versions / parallelism from
`run/settings.py`, decode throughput from `run/serving.py`. The Python API and `logdiag export`
both build these tables here; docs/export.md documents them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logparse.engine.evidence import walk
from logparse.run.tables import (
    BOOL,
    CATEGORY,
    FLOAT,
    IDENTITY,
    INT,
    JSON,
    LIST_STRING,
    RAW,
    STRING,
    Cleaner,
    Column,
    TableBuilder,
    plain,
    to_int,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from logparse.engine.analysis import Analysis
    from logparse.run.settings import LaunchSettings

FINDINGS: tuple[Column, ...] = (
    *IDENTITY,
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
    *IDENTITY,
    Column("first_line", INT, "first line of the attempt"),
    Column("last_line", INT, "last line of the attempt"),
    Column("command_line", INT, "line of the server command, or null"),
    Column("model", STRING, "model_path the attempt states"),
    Column("sglang_version", STRING, "SGLang release the attempt states (image tag, pip pin)"),
    Column("nccl_version", STRING, "NCCL version the log prints"),
    Column("tp_size", INT, "tensor parallel size the attempt states, else the log's rank tags say"),
    Column("dp_size", INT, "data parallel size the attempt states, else the log's rank tags say"),
    Column("outcome", STRING, "the attempt's outcome (serving, crashed-at-startup, ...)"),
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

ENGINE_TABLES: dict[str, tuple[Column, ...]] = {"findings": FINDINGS, "runs": RUNS}


def findings_table(analysis: Analysis, builder: TableBuilder) -> pa.Table:
    """Every finding (depth first: a root cause, then its consequences), with its parent's code."""
    roots = {id(a.root_cause) for a in analysis.attempts if a.root_cause is not None}
    if analysis.root_cause is not None:
        roots.add(id(analysis.root_cause))
    rows = list(walk(analysis.findings))
    parents = {id(c): f.code for f in rows for c in f.consequences}
    c: Cleaner = builder.cleaner
    lines = [f.first_line for f in rows]
    data = builder.identity(lines)
    data.update(
        code=[f.code for f in rows],
        name=[f.name for f in rows],
        family=[f.family or None for f in rows],
        severity=[str(f.severity) for f in rows],
        message=[c.text(f.message) for f in rows],
        remedy=[c.text(f.remedy) for f in rows],
        line=lines,
        ranks=[[c.text(r) for r in f.ranks] for f in rows],
        count=[f.count for f in rows],
        stage=[f.stage for f in rows],
        parent=[parents.get(id(f)) for f in rows],
        root_cause=[id(f) in roots for f in rows],
        fingerprint=[f.fingerprint for f in rows],
        data=[c.field(f, "data", plain(f.data)) for f in rows],
    )
    return builder.table(FINDINGS, data)


def runs_table(analysis: Analysis, builder: TableBuilder) -> pa.Table:
    """One row per launch attempt."""
    from logparse.run.serving import launch_serving
    from logparse.run.settings import launch_settings

    verdicts = {a.launch.index: a for a in analysis.attempts}
    cols: dict[str, list[Any]] = {c.name: [] for c in RUNS}
    for lc in analysis.run.lifecycles:
        launch = lc.launch
        settings = launch_settings(launch)
        verdict = verdicts.get(launch.index)
        root = verdict.root_cause if verdict is not None else None
        serving = launch_serving(analysis.log, launch.first_line, launch.last_line)
        model = settings.get("model_path")
        row = {
            "run": builder.run,
            "file": builder.file,
            "launch": launch.index,
            "first_line": launch.first_line,
            "last_line": launch.last_line,
            "command_line": launch.command.line if launch.command is not None else None,
            "model": None if model is None else builder.cleaner.text(str(model)),
            "sglang_version": _str(settings.get("sglang_version")),
            "nccl_version": _str(settings.get("nccl_version")),
            "tp_size": _size(analysis, settings, "tp_size"),
            "dp_size": _size(analysis, settings, "dp_size"),
            "outcome": verdict.outcome if verdict is not None else None,
            "root_cause": root.code if root is not None else None,
            "root_cause_name": root.name if root is not None else None,
            "root_cause_line": root.first_line if root is not None else None,
            "ready": lc.ready,
            "ready_line": lc.ready_line,
            "time_to_ready_s": lc.time_to_ready_s,
            "decode_lines": serving["decode_lines"],
            "gen_throughput_median": serving["gen_throughput_median"],
            "findings": len(verdict.findings) if verdict is not None else 0,
        }
        for name, value in row.items():
            cols[name].append(value)
    return builder.table(RUNS, cols)


def engine_table(analysis: Analysis, kind: str, builder: TableBuilder | None = None) -> pa.Table:
    """`findings` or `runs` of an analysis (raw values unless the builder cleans them)."""
    if builder is None:
        from logparse.run.tables import run_id

        builder = TableBuilder(analysis.log, run_id(analysis.log.path), analysis.log.path, RAW)
    return (
        findings_table(analysis, builder) if kind == "findings" else runs_table(analysis, builder)
    )


def _size(analysis: Analysis, settings: LaunchSettings, key: str) -> int | None:
    """TP or DP size of one attempt: what it states; else, when no attempt of the log states it,
    the run model's size from the rank tags (`TP0`..`TP7`: 8; a dated untagged scheduler: TP 1),
    the value `analyze` prints, so the runs table and the JSON output agree. An attempt that states
    nothing in a log where another does stays null (the tags are the whole file's)."""
    stated = to_int(settings.get(key))
    if stated is not None or analysis.views.arg(key) is not None:
        return stated
    return to_int(getattr(analysis.views, key))


def _str(value: Any) -> str | None:
    return None if value is None else str(value)
