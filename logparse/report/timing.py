"""Startup timing for a report: per-rank phases (a waterfall), time to ready, the slowest rank and
the phase that made it slow, unlogged gaps, and progress-bar rates (checkpoint load, capture).

A log can hold several launches of the server one after the other (a failed attempt, then a
fixed one); phases are taken from the last launch that has any, so that a phase's start on an
earlier attempt is not paired with its end on a later one. Times are seconds from the launch's
first dated timestamp. SGLang prints one-second timestamps; where it prints an elapsed time
(`elapsed=41.22 s`), that is the phase's length.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from statistics import median
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    EngineStartupTimings,
    ProgressBar,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.parsing.columns import epoch
from logparse.run.launches import Launch
from logparse.run.model import Lifecycle, SegmentIndex, run_of, run_segments
from logparse.run.ranks import rank_key
from logparse.run.timeline import MAIN, PHASES, Phase, rel_s, startup_phases

if TYPE_CHECKING:
    from logparse.engine.core import Analysis
    from logparse.parsing.pipeline import ParsedLog

DEFAULT_GAP_S = 30.0
MAX_GAPS = 50
# rank_key runs two regexes per word of a tag; the gaps of a large log are sorted by it twice
# (11,000 gaps of a handful of ranks at 200k lines of the corpus profile: ~0.25 s of the report
# model), so each distinct tag's key is computed once.
_rank_key = lru_cache(maxsize=4096)(rank_key)
# A rank is "slow" because of a phase when that phase ran at least this much longer than the
# same phase's median over the ranks.
LAG_MIN_S = 1.0
DRAFT_WEIGHT_LOAD = "draft-weight-load"
PHASE_ORDER = {name: i for i, name in enumerate((*PHASES[:2], DRAFT_WEIGHT_LOAD, *PHASES[2:]))}
PROGRESS_UNITS = {
    "checkpoint-load": "shards",
    "capture": "batch sizes",
    "piecewise": "batch sizes",
    "prefill-capture": "token sizes",
    "download": "files",
}


def _draft_loads(seg: Launch) -> dict[str, Phase]:
    """A second `Load weight begin/end` pair on a rank: the draft model's weights."""
    seen: dict[str, int] = {}
    out: dict[str, Phase] = {}
    for e in seg.events:
        if not isinstance(e, (WeightLoadBegin, WeightLoadEnd)) or e.rank is None:
            continue
        if isinstance(e, WeightLoadEnd) and e.committed_after_capture:
            continue
        if isinstance(e, WeightLoadBegin):
            seen[e.rank] = seen.get(e.rank, 0) + 1
            if seen[e.rank] == 2:
                out[e.rank] = Phase(DRAFT_WEIGHT_LOAD, e.rank, e.ts, None, e.line, None)
        elif e.rank in out and out[e.rank].end_line is None:
            p = out[e.rank]
            p.end, p.end_line, p.printed_s = e.ts, e.line, e.elapsed_s
    return out


def _last_ts(seg: Launch, rank: str) -> datetime | None:
    last = None
    for e in seg.events:
        if (e.rank or MAIN) == rank and e.ts is not None:
            last = e.ts
    return last


_rel = rel_s


def _r(v: float | None, nd: int = 2) -> float | None:
    return None if v is None else round(v, nd)


def phase_rows(
    seg: Launch, t0: datetime | None, known: dict[str, list[Phase]] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """`known`: the launch's phases when the caller has them (a Lifecycle's, computed once for
    the summary; at 1M failure-heavy lines another pass over the launch's events costs ~0.1 s).
    They are copied: the draft loads are appended below."""
    if known is None:
        phases = startup_phases(seg)  # type: ignore[arg-type]
    else:
        phases = {rank: list(ps) for rank, ps in known.items()}
    for rank, p in _draft_loads(seg).items():
        phases.setdefault(rank, []).append(p)
    out: dict[str, list[dict[str, Any]]] = {}
    for rank in sorted(phases, key=lambda r: (r == MAIN, rank_key(r))):
        rows = []
        for p in sorted(phases[rank], key=lambda p: (p.start_line, PHASE_ORDER.get(p.name, 99))):
            start = _rel(p.start, t0)
            end = _rel(p.end, t0)
            dur = p.duration_s
            if not p.complete:
                # Still running when the log (or this launch) ends: up to the rank's last line.
                end = _rel(_last_ts(seg, rank), t0)
                if start is not None and p.at_least_s is not None:
                    # a progress bar ran this long in it (the run model's fact, also in the text)
                    end = max(end or start, start + p.at_least_s)
                dur = None if start is None or end is None else max(0.0, end - start)
            elif start is not None and dur is not None:
                end = start + dur
            elif start is None and end is not None and dur is not None:
                start = end - dur
            rows.append(
                {
                    "phase": p.name,
                    "start_s": _r(start),
                    "end_s": _r(end),
                    "duration_s": _r(dur),
                    "complete": p.complete,
                    "start_line": p.start_line,
                    "end_line": p.end_line,
                }
            )
        out[rank] = rows
    return out


def _slowest(ranks: dict[str, list[dict[str, Any]]], slow: str | None) -> dict[str, Any] | None:
    """The slowest rank (chosen by the run model: the one whose startup ended last), its lag behind
    the median rank, and the phase that ran longest compared with the same phase on the other
    ranks (else its longest phase)."""
    ends: dict[str, float] = {}
    for rank, rows in ranks.items():
        if rank == MAIN:
            continue
        done = [r["end_s"] for r in rows if r["complete"] and r["end_s"] is not None]
        if done:
            ends[rank] = max(done)
    if slow is None or slow not in ranks:
        return None
    typical = median(ends.values()) if ends else None
    by_phase: dict[str, list[float]] = {}
    for rank, rows in ranks.items():
        if rank == MAIN:
            continue
        for row in rows:
            if row["duration_s"] is not None:
                by_phase.setdefault(row["phase"], []).append(row["duration_s"])
    best = None
    for row in ranks[slow]:
        if row["duration_s"] is None:
            continue
        excess = row["duration_s"] - median(by_phase[row["phase"]])
        if best is None or excess > best[1]:
            best = (row, excess)
    longest = max(
        (r for r in ranks[slow] if r["duration_s"] is not None),
        key=lambda r: r["duration_s"],
        default=None,
    )
    out: dict[str, Any] = {
        "rank": slow,
        "end_s": _r(ends.get(slow)),
        "median_rank_end_s": _r(typical),
        "lag_s": _r(ends[slow] - typical) if slow in ends and typical is not None else None,
        "longest_phase": longest["phase"] if longest else None,
        "longest_phase_s": longest["duration_s"] if longest else None,
    }
    if best is not None and best[1] >= LAG_MIN_S:
        row, excess = best
        out.update(
            phase=row["phase"],
            phase_s=row["duration_s"],
            phase_median_s=_r(median(by_phase[row["phase"]])),
            excess_s=_r(excess),
        )
    else:
        out.update(phase=None, phase_s=None, phase_median_s=None, excess_s=None)
    return out


def _phase_medians(ranks: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    by_phase: dict[str, list[float]] = {}
    for rank, rows in ranks.items():
        if rank == MAIN:
            continue
        for row in rows:
            if row["duration_s"] is not None and row["complete"]:
                by_phase.setdefault(row["phase"], []).append(row["duration_s"])
    order = sorted(by_phase, key=lambda p: PHASE_ORDER.get(p, 99))
    return {
        p: {
            "median_s": _r(median(by_phase[p])),
            "max_s": _r(max(by_phase[p])),
            "ranks": len(by_phase[p]),
        }
        for p in order
    }


def _open_phase(ranks: dict[str, list[dict[str, Any]]], rank: str, a: int, b: int) -> str | None:
    """The phase of `rank` that was open between lines a and b (None if none)."""
    for row in ranks.get(rank, []):
        end = row["end_line"] if row["end_line"] is not None else 1 << 62
        if row["start_line"] <= a and b <= end and row["phase"] != "ready":
            return row["phase"]
    return None


def _gap_pairs(log: ParsedLog, threshold_s: float) -> list[tuple[str, int, float, int, float]]:
    """(rank, line a, ts a, line b, ts b) for each pair of consecutive timestamped lines of one
    rank at least `threshold_s` apart, ranks in the order they first appear (events, then the
    decode, prefill and access columns), each rank's lines in (line, ts) order.

    The stats columns hold most of a large log's timestamped lines (a million at 1M lines): they
    are sorted and differenced as numpy arrays, not as a million Python tuples (~0.5 s)."""
    import numpy as np

    names: dict[str, int] = {}
    ev_line: list[int] = []
    ev_ts: list[float] = []
    ev_rank: list[int] = []
    for e in log.events:
        if e.ts is None or (e.rank or "").startswith(("rank", "GPU")):
            continue
        ev_line.append(e.line)
        ev_ts.append(epoch(e.ts))
        ev_rank.append(names.setdefault(e.rank or MAIN, len(names)))
    lines = [np.asarray(ev_line, dtype=np.int64)]
    stamps = [np.asarray(ev_ts, dtype=np.float64)]
    ranks = [np.asarray(ev_rank, dtype=np.int64)]
    for cols in (log.decode, log.prefill, log.access):
        if not len(cols):
            continue
        ts = cols.ts.numpy()
        keep = ~np.isnan(ts)
        # The columns' rank codes → ids shared with the events (a code whose rows are all
        # untimed gets an id too; it has no rows, so it orders nothing).
        remap = np.asarray([names.setdefault(n or MAIN, len(names)) for n in cols.ranks.values], dtype=np.int64)
        lines.append(cols.line.numpy()[keep].astype(np.int64))
        stamps.append(ts[keep])
        ranks.append(remap[cols.rank.numpy()[keep]])
    line = np.concatenate(lines)
    ts = np.concatenate(stamps)
    rank = np.concatenate(ranks)
    if line.size < 2:
        return []
    # Ranks in the order of their first timestamped row (a dict filled row by row would have
    # that order), so the pairs come out as a per-rank loop over that dict made them.
    ids, first = np.unique(rank, return_index=True)
    order_of = np.zeros(len(names), dtype=np.int64)
    order_of[ids[np.argsort(first, kind="stable")]] = np.arange(ids.size)
    idx = np.lexsort((ts, line, order_of[rank]))
    line, ts, rank = line[idx], ts[idx], rank[idx]
    ta, tb = ts[:-1], ts[1:]
    gap = tb - ta
    # Same rank; time-only stamps (year 1900, negative epochs) and dated ones cannot be compared.
    hit = (rank[:-1] == rank[1:]) & ((ta < 0) == (tb < 0)) & (gap >= threshold_s)
    by_id = list(names)
    return [
        (by_id[int(rank[i])], int(line[i]), float(ta[i]), int(line[i + 1]), float(tb[i]))
        for i in np.flatnonzero(hit)
    ]


def unlogged_gaps(
    log: ParsedLog,
    ranks: dict[str, list[dict[str, Any]]],
    ready_line: int | None,
    launch: tuple[int, int],
    threshold_s: float,
) -> dict[str, Any]:
    """Gaps longer than the threshold between consecutive timestamped lines of one rank."""
    seg = SegmentIndex(run_segments(log)).index

    items: list[dict[str, Any]] = []
    for rank, a, ta, b, tb in _gap_pairs(log, threshold_s):
        gap = tb - ta
        in_launch = launch[0] <= a <= launch[1]
        phase = _open_phase(ranks, rank, a, b) if in_launch else None
        if seg(a) != seg(b):
            during = "between launches"
        elif phase is not None:
            during = phase
        elif ready_line is not None and in_launch and b > ready_line:
            during = "serving"
        elif rank == MAIN and in_launch:
            during = "startup (main process waits for the scheduler ranks)"
        elif in_launch:
            during = "startup, between phases"
        else:
            during = "earlier launch"
        items.append({"rank": rank, "from_line": a, "to_line": b, "gap_s": _r(gap), "during": during})
    items.sort(key=lambda g: (-g["gap_s"], g["from_line"], _rank_key(g["rank"])))
    return {
        "threshold_s": threshold_s,
        "count": len(items),
        "longest_s": items[0]["gap_s"] if items else None,
        "items": sorted(items[:MAX_GAPS], key=lambda g: (g["from_line"], _rank_key(g["rank"]))),
    }


def progress_runs(
    log: ParsedLog, ranks: dict[str, list[dict[str, Any]]], launch: tuple[int, int]
) -> list[dict[str, Any]]:
    """Progress bars grouped into runs (one bar from 0 to its end): items done, rate, phase."""
    runs: list[list[ProgressBar]] = []
    for e in log.of(ProgressBar):
        if e.n is None or e.total is None:
            continue
        cur = runs[-1] if runs else None
        if (
            cur is not None
            and cur[-1].bar_kind == e.bar_kind
            and cur[-1].total == e.total
            and e.n >= (cur[-1].n or 0)
            and e.line - cur[-1].line <= 2
        ):
            cur.append(e)
        elif (
            cur is not None
            and cur[-1].bar_kind == "other"
            and e.bar_kind != "other"
            and cur[-1].line == e.line
            and len(cur) == 1
        ):
            cur[0] = e  # tqdm's bare first refresh ("  0%| | 0/10") before the described one
        else:
            runs.append([e])
    out = []
    for run in runs:
        last = run[-1]
        if last.bar_kind == "other" and len(run) == 1:
            continue
        elapsed = last.elapsed_s
        rate = (last.n / elapsed) if elapsed and last.n else None
        phase = None
        if not launch[0] <= run[0].line <= launch[1]:
            phase = "earlier launch"
        for rank in sorted(ranks, key=rank_key):
            if phase:
                break
            phase = _open_phase(ranks, rank, run[0].line, last.line)
        item: dict[str, Any] = {
            "kind": last.bar_kind,
            "desc": last.desc.split(" (")[0] if last.desc else "",
            "first_line": run[0].line,
            "last_line": last.line,
            "done": last.n,
            "total": last.total,
            "complete": last.n == last.total,
            "elapsed_s": elapsed,
            "rate_per_s": _r(rate, 3),
            "unit": PROGRESS_UNITS.get(last.bar_kind, "items"),
            "phase": phase,
        }
        if " (" in (last.desc or ""):
            # `Capturing batches (bs=1 avail_mem=13.88 GB)`: the item the bar was on last.
            item["last_item"] = last.desc.split(" (", 1)[1].rstrip(")")
        out.append(item)
    return out


def _last(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The phase a rank reached last (by line, then phase order), complete or not."""
    if not rows:
        return {"last_phase": None, "last_phase_complete": None}
    last = max(
        rows, key=lambda r: (r["end_line"] or r["start_line"], PHASE_ORDER.get(r["phase"], 99))
    )
    return {"last_phase": last["phase"], "last_phase_complete": last["complete"]}


def _failing_phase(rows: list[dict[str, Any]], line: int) -> dict[str, Any] | None:
    """The phase row of one rank that a failure at `line` interrupted: the one open at that line
    (an unfinished phase first), else the last phase the rank had begun before it."""
    begun = [r for r in rows if r["start_line"] <= line and r["phase"] != "ready"]
    open_ = [r for r in begun if r["end_line"] is None or r["end_line"] >= line]
    pick = [r for r in open_ if not r["complete"]] or open_ or begun
    if not pick:
        return None
    return max(pick, key=lambda r: (r["start_line"], PHASE_ORDER.get(r["phase"], 99)))


def _failure_ts(seg: Launch, line: int) -> datetime | None:
    """The timestamp of the failure line, else of the last dated line before it."""
    ts = None
    for e in seg.events:
        if e.line > line:
            break
        if e.ts is not None:
            ts = e.ts
    return ts


def startup_failures(
    lc: Lifecycle, ranks: dict[str, list[dict[str, Any]]], t0: datetime | None
) -> list[dict[str, Any]]:
    """Where start-up broke, for the waterfall's failure markers: the run model's failure facts
    (`Lifecycle.failures`: the first line showing each rank die), each with the phase it
    interrupted and its time. Failures after the server came up are not start-up failures. The
    main process is listed only when no scheduler rank failed (otherwise its death is the
    teardown that follows theirs); its phase is the one most ranks had open at that line."""
    out: list[dict[str, Any]] = []
    for rank, line in lc.failures.items():
        if lc.up_before(line):
            continue
        if rank == MAIN and any(r != MAIN for r in lc.failures):
            continue
        row = _failing_phase(ranks.get(rank, []), line)
        on = [rank] if row is not None else []
        if row is None and rank == MAIN:
            hit = {r: p for r, rows in ranks.items() if (p := _failing_phase(rows, line))}
            names = [p["phase"] for p in hit.values()]
            if names:
                common = max(set(names), key=lambda n: (names.count(n), -PHASE_ORDER.get(n, 99)))
                row = next(p for p in hit.values() if p["phase"] == common)
                on = [r for r, p in hit.items() if p["phase"] == common]
        at = _rel(_failure_ts(lc.launch, line), t0)
        during = row is not None and (row["end_line"] is None or row["end_line"] >= line)
        if row is not None and not row["complete"] and row["end_s"] is not None:
            # It died in a phase that never ended: not before that phase's bar ends.
            at = row["end_s"] if at is None else max(at, row["end_s"])
        out.append(
            {
                "rank": rank,
                "line": line,
                "phase": row["phase"] if row is not None else None,
                "during": during,  # False: it failed after this phase ended, before the next
                "at_s": _r(at),
                "ranks_marked": on,
            }
        )
    return sorted(out, key=lambda f: (f["line"], _rank_key(f["rank"])))


def timing_section(analysis: Analysis, gap_threshold_s: float = DEFAULT_GAP_S) -> dict[str, Any]:
    log = analysis.log
    run = run_of(log)
    lc: Lifecycle = run.startup  # the attempt whose phases are shown
    seg, launches = lc.launch, len(run.launches)
    t0 = lc.t0
    ranks = phase_rows(seg, t0, lc.phases)  # lc.phases is startup_phases(lc.launch), kept
    progress = progress_runs(log, ranks, (seg.start, seg.end))
    # Readiness is the last attempt's (the file's outcome); its line and time when it is also the
    # attempt whose phases are shown.
    ready = run.last.ready_event if lc is run.last else None
    ready_s = _rel(ready.ts, t0) if ready is not None else None
    out: dict[str, Any] = {
        "launches": launches,
        "launch_first_line": seg.start if launches > 1 else None,
        "start": t0.isoformat(sep=" ") if t0 is not None else None,
        "ready": run.ready,
        "ready_line": ready.line if ready is not None else None,
        "time_to_ready_s": _r(ready_s),
        "ranks": [{"rank": rank, "phases": rows, **_last(rows)} for rank, rows in ranks.items()],
        "phase_stats": _phase_medians(ranks),
        "slowest_rank": _slowest(ranks, lc.slowest_rank),
        "gaps": unlogged_gaps(
            log,
            ranks,
            ready.line if ready is not None else None,
            (seg.start, seg.end),
            gap_threshold_s,
        ),
        "progress": progress,
        "failures": startup_failures(lc, ranks, t0),
    }
    eng = [e for e in seg.events if isinstance(e, EngineStartupTimings)]
    if eng:
        out["engine_timings"] = {"line": eng[0].line, "phases": eng[0].phases}
    return out
