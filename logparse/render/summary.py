"""The format-independent summary of one analysis that the text and JSON renderers share."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BenchOneBatchResult,
    BenchServingResult,
    CppTerminate,
    HealthCheckFailed,
    Killed,
    NcclWatchdogTimeout,
    SchedulerDead,
    ServerReady,
    SglangWatchdog,
    ShellSignal,
    SigquitReceived,
    SubprocessCrashed,
    Traceback,
    UvicornLifecycle,
)
from logparse.parsing.records import root_exception
from logparse.run.timeline import MAIN, last_launch, last_phase, startup_phases
from logparse.run.views import rank_key, serving_summary, traceback_phase

if TYPE_CHECKING:
    from logparse.engine.core import Analysis

ERROR_EVENTS = (Traceback, SglangWatchdog, NcclWatchdogTimeout, CppTerminate, HealthCheckFailed, SigquitReceived,
                SchedulerDead, SubprocessCrashed, ShellSignal, Killed)
MAX_MESSAGE = 300


def clean(value: Any) -> Any:
    """JSON-safe: NaN → None, tuples → lists, recursively."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def startup_summary(analysis: Analysis) -> dict[str, Any]:
    """Startup of the last launch in the log (a log can hold several attempts)."""
    launch = last_launch(analysis.log)
    phases = startup_phases(launch)  # type: ignore[arg-type]
    views = analysis.views
    ready = next((e for e in launch.events if isinstance(e, ServerReady)), None) or next(
        (e for e in launch.events if isinstance(e, UvicornLifecycle) and e.stage in ("running", "startup-complete")),
        None)
    t0 = next((e.ts for e in launch.events if e.ts is not None and e.ts.year > 1900), None)
    out: dict[str, Any] = {
        "ready": views.ready if launch.launches == 1 else (ready is not None or views.ready),
        "ready_line": ready.line if ready is not None else None,
        "ready_at": ready.ts.isoformat(sep=" ") if ready is not None and ready.ts else None,
        "time_to_ready_s": round((ready.ts - t0).total_seconds(), 2) if ready is not None and ready.ts and t0 else None,
        "launches": launch.launches,
        "launch_lines": [launch.start, None if launch.end >= 1 << 60 else launch.end],
    }
    ranks: dict[str, Any] = {}
    for rank in sorted(phases, key=lambda r: (r == MAIN, rank_key(r))):
        plist = phases[rank]
        last = last_phase(plist)
        ranks[rank] = {
            "last_phase": last.name if last else None,
            "last_phase_complete": last.complete if last else None,
            "phases": [p.as_dict() for p in plist],
        }
    out["ranks"] = ranks
    slowest = None
    for rank, plist in phases.items():
        if rank == MAIN:
            continue
        total = sum(p.duration_s or 0.0 for p in plist)
        if slowest is None or total > slowest[1]:
            worst = max(plist, key=lambda p: p.duration_s or 0.0)
            slowest = (rank, total, worst.name)
    if slowest is not None and len(phases) > 2:
        out["slowest_rank"] = {"rank": slowest[0], "phases_s": round(slowest[1], 2), "slowest_phase": slowest[2]}
    return out


def errors_summary(analysis: Analysis) -> list[dict[str, Any]]:
    out = []
    for e in analysis.log.events:
        if not isinstance(e, ERROR_EVENTS):
            continue
        item: dict[str, Any] = {"kind": e.kind, "line": e.line, "end_line": e.end_line, "rank": e.rank}
        if isinstance(e, Traceback):
            etype, msg = root_exception(e)
            item.update(exception=e.exc_type or etype, root_exception=etype, message=(e.message or msg)[:MAX_MESSAGE],
                        process=e.process, phase=traceback_phase(e), cut=e.cut, frames=len(e.frames))
        else:
            item["detail"] = {k: v for k, v in e.as_dict().items()
                              if k not in ("kind", "line", "end_line", "ts", "rank", "source", "wrapper")}
        out.append(item)
    return out


def benchmarks_summary(analysis: Analysis) -> list[dict[str, Any]]:
    out = []
    for e in analysis.log.events:
        if isinstance(e, BenchServingResult):
            out.append({"kind": "bench_serving", "title": e.title, "line": e.line, "end_line": e.end_line,
                        "complete": e.complete, "fields": e.fields})
        elif isinstance(e, BenchOneBatchResult):
            out.append({"kind": "bench_one_batch", "line": e.line, "end_line": e.end_line, "fields": e.fields})
    return out


def file_summary(analysis: Analysis, *, top: int = 10) -> dict[str, Any]:
    log = analysis.log
    cov = log.coverage
    entry: dict[str, Any] = {
        "path": log.path,
        "lines": {"total": cov.total, "recognized": cov.recognized, "unparsed": cov.unparsed},
        "facts": analysis.views.facts(),
        "outcome": analysis.outcome,
        "root_cause": analysis.root_cause.as_dict() if analysis.root_cause is not None else None,
        "findings": [f.as_dict() for f in analysis.findings],
        "config": analysis.views.run_config(),
        "startup": startup_summary(analysis),
        "serving": serving_summary(log),
        "errors": errors_summary(analysis),
        "benchmarks": benchmarks_summary(analysis),
        "coverage": cov.as_dict(top),
        "read": log.report.as_dict(),
    }
    return clean(entry)  # type: ignore[no-any-return]
