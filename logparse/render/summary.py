"""The format-independent summary of one analysis that the text and JSON renderers share."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BenchOneBatchResult,
    BenchServingResult,
    Traceback,
)
from logparse.parsing.records import root_exception
from logparse.run.ranks import rank_key
from logparse.run.serving import serving_summary
from logparse.run.stage import traceback_phase
from logparse.run.timeline import MAIN, last_phase, rel_s
from logparse.run.vocab import ERROR_EVENTS

if TYPE_CHECKING:
    from logparse.engine.core import Analysis
    from logparse.model.findings import Finding

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
    """Start-up of the log's run model: readiness of the last attempt (the file's outcome), phases
    of the last attempt that shows any (attempts are never mixed)."""
    run = analysis.run
    lc = run.startup
    launch = lc.launch
    ready = run.last.ready_event if lc is run.last else None
    t = rel_s(ready.ts, lc.t0) if ready is not None else None
    out: dict[str, Any] = {
        "ready": run.ready,
        "ready_line": ready.line if ready is not None else None,
        "ready_at": ready.ts.isoformat(sep=" ") if ready is not None and ready.ts else None,
        "time_to_ready_s": None if t is None else round(t, 2),
        "launches": len(run.launches),
        "launch_lines": [launch.first_line, launch.last_line],
    }
    phases = lc.phases
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
    origins = analysis.log.derived.get("origins")
    if origins is not None and ready is not None and (place := origins.locate(ready.line)) is not None:
        out["ready_file"], out["ready_line"] = place  # a merged run: the line in its own file
    slow = lc.slowest_rank
    if slow is not None:
        plist = phases[slow]
        # an unfinished phase counts with what it ran at least (a killed checkpoint load of
        # 128 s is the longest phase, not the 3 s dist-init before it)
        worst = max(plist, key=lambda p: p.duration_s or p.at_least_s or 0.0)
        total = sum(p.duration_s or 0.0 for p in plist)
        out["slowest_rank"] = {"rank": slow, "phases_s": round(total, 2), "slowest_phase": worst.name}
        if worst.duration_s is None and worst.at_least_s is not None:
            out["slowest_rank"]["slowest_phase_at_least_s"] = round(worst.at_least_s, 2)
    return out


def _error_items(analysis: Analysis) -> Iterator[dict[str, Any]]:
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
        yield item


def _benchmark_items(analysis: Analysis) -> Iterator[dict[str, Any]]:
    for e in analysis.log.events:
        if isinstance(e, BenchServingResult):
            yield {"kind": "bench_serving", "title": e.title, "line": e.line, "end_line": e.end_line,
                   "complete": e.complete, "fields": e.fields}
        elif isinstance(e, BenchOneBatchResult):
            yield {"kind": "bench_one_batch", "line": e.line, "end_line": e.end_line, "fields": e.fields}


def _finding_dict(f: Finding, merged: bool) -> dict[str, Any]:
    """A finding as JSON; in a run merged from several files, each evidence line names its file."""
    out = f.as_dict()
    if merged:
        files = [ev.file for ev in f.evidence for _ in ev.lines]
        for item, path in zip(out["evidence"], files, strict=False):
            item["file"] = path
        out["consequences"] = [_finding_dict(c, merged) for c in f.consequences]
    return out


def _launch_items(analysis: Analysis) -> Iterator[dict[str, Any]]:
    """Each launch attempt as JSON, with its per-rank memory budget (`run/memory.py`) as `memory`
    where the log printed one."""
    from logparse.run.memory import budgets

    found = budgets(analysis.log)
    for i, attempt in enumerate(getattr(analysis, "attempts", [])):
        launch = attempt.as_dict()
        budget = found[i] if i < len(found) else None
        if budget:
            launch["memory"] = budget.as_dict()
        yield launch


def file_summary(analysis: Analysis, *, top: int = 10) -> dict[str, Any]:
    """The per-file summary, JSON-safe (`clean`)."""
    return clean(summary_entry(analysis, top=top))  # type: ignore[no-any-return]


# The entry's lists that grow with the log: with `summary_entry(lazy=True)` they are iterators
# that build one item at a time, so that a writer can sanitize and write each before the next
# exists (`render/json.write`; a 1M-line corpus document held ~200 MB whole, twice: the entry and
# its sanitized copy).
STREAMED = ("findings", "launches", "errors", "benchmarks")


def summary_entry(analysis: Analysis, *, top: int = 10, lazy: bool = False) -> dict[str, Any]:
    """The per-file summary before `clean` (the sanitizer's JSON-safe walk cleans it on its way);
    with `lazy`, the `STREAMED` values are iterators of their items, in the same order."""
    log = analysis.log
    merged = "origins" in log.derived
    cov = log.coverage
    entry: dict[str, Any] = {
        "path": log.path,
        "lines": {"total": cov.total, "recognized": cov.recognized, "unparsed": cov.unparsed}
        | ({"outside_window": cov.outside_window} if cov.window is not None else {}),
        "facts": analysis.views.facts(),
        "outcome": analysis.outcome,
        "root_cause": _finding_dict(analysis.root_cause, merged) if analysis.root_cause is not None else None,
        "findings": (_finding_dict(f, merged) for f in analysis.findings),
        "launches": _launch_items(analysis),
        "config": analysis.views.run_config(),
        "startup": startup_summary(analysis),
        "serving": serving_summary(log),
        "errors": _error_items(analysis),
        "benchmarks": _benchmark_items(analysis),
        "coverage": cov.as_dict(top),
        "read": log.report.as_dict(),
    }
    if merged:
        entry["files"] = list(log.derived["origins"].paths)
    if not lazy:
        for key in STREAMED:
            entry[key] = list(entry[key])
    return entry
