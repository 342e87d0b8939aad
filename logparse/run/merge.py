"""One run from several files (`analyze --run`): the per-node or per-rank logs of one multi-node run,
merged by timestamp into one ParsedLog.

Every file's lines keep their order; blocks of lines (a multi-line event such as a traceback, or a
single line) from different files are interleaved by their timestamps (a block without one keeps
the time of the line before it in its file). The merged log numbers its lines 1…N in that order;
`origins` maps every merged line back to (file, line), so evidence keeps the real place.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from logparse.parsing.columns import AccessColumns, StatsColumns, epoch

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


@dataclass(frozen=True)
class Origins:
    """Merged line → (file index, line in that file), by blocks of consecutive lines."""

    paths: tuple[str, ...]
    starts: tuple[int, ...]  # merged first line of each block, ascending
    blocks: tuple[tuple[int, int, int], ...]  # (size, file index, first line in the file)

    def locate(self, line: int) -> tuple[str, int] | None:
        """(path, line in that file) of a merged line, or None outside every block."""
        i = bisect_right(self.starts, line) - 1
        if i < 0:
            return None
        size, idx, first = self.blocks[i]
        offset = line - self.starts[i]
        return (self.paths[idx], first + offset) if offset < size else None


def _blocks(log: ParsedLog) -> list[tuple[int, int, float]]:
    """(first line, last line, epoch) of the file's blocks in file order; overlapping spans merged."""
    spans: list[tuple[int, int, float]] = [
        (e.line, max(e.end_line or e.line, e.line), epoch(e.ts) if e.ts is not None else math.nan)
        for e in log.events
    ]
    for cols in (log.decode, log.prefill, log.access):
        spans.extend((n, n, t) for n, t in zip(cols.line, cols.ts, strict=True))
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[list[Any]] = []
    for a, b, t in spans:
        if out and a <= out[-1][1]:
            last = out[-1]
            last[1] = max(last[1], b)
            if math.isnan(last[2]):
                last[2] = t
        else:
            out.append([a, b, t])
    merged: list[tuple[int, int, float]] = []
    now = -math.inf  # blocks before the file's first timestamp come first
    for a, b, t in out:
        if not math.isnan(t):
            now = t
        merged.append((a, b, now))
    return merged


def merge_logs(logs: Sequence[ParsedLog]) -> ParsedLog:
    """One ParsedLog for the files of one run, lines interleaved by timestamp (see module doc)."""
    from logparse.io.reader import ReadReport
    from logparse.parsing.pipeline import ParsedLog, _merge_report

    per_file = [[(t, i, a, b) for a, b, t in _blocks(log)] for i, log in enumerate(logs)]
    remap: list[dict[int, int]] = [{} for _ in logs]
    starts: list[int] = []
    blocks: list[tuple[int, int, int]] = []
    nxt = 1
    for _t, i, a, b in heapq.merge(*per_file, key=lambda x: x[0]):
        starts.append(nxt)
        blocks.append((b - a + 1, i, a))
        table = remap[i]
        for k in range(b - a + 1):
            table[a + k] = nxt + k
        nxt += b - a + 1
    paths = tuple(log.path for log in logs)
    out = ParsedLog(path=" + ".join(paths), report=ReadReport(path=" + ".join(paths)))
    for log in logs:
        _merge_report(out.report, log.report)
    for i, log in enumerate(logs):
        table = remap[i]
        for e in log.events:
            out.events.append(replace(e, line=table[e.line], end_line=table[max(e.end_line or e.line, e.line)]))
        for real, text in log.texts.items():
            v = table.get(real)
            if v is not None:
                out.texts[v] = text
        out.ranks_seen |= log.ranks_seen
        out.unanchored.update(table[n] for n in log.unanchored if n in table)
        out.coverage.recognized += log.coverage.recognized
        out.coverage.unparsed += log.coverage.unparsed
        out.coverage.total += log.coverage.total
        out.coverage.outside_window += log.coverage.outside_window
        if log.coverage.window is not None:  # the same options on every file of the run
            out.coverage.window = log.coverage.window
    out.events.sort(key=lambda e: (e.line, e.end_line))
    out.decode = _stats([(log.decode, remap[i]) for i, log in enumerate(logs)], logs[0].decode)
    out.prefill = _stats([(log.prefill, remap[i]) for i, log in enumerate(logs)], logs[0].prefill)
    out.access = _access([(log.access, remap[i]) for i, log in enumerate(logs)])
    out.derived["origins"] = Origins(paths, tuple(starts), tuple(blocks))
    out.derived["parts"] = list(logs)
    out.reindex()
    return out


def _stats(parts: list[tuple[StatsColumns, dict[int, int]]], like: StatsColumns) -> StatsColumns:
    """Stats rows of every file, renumbered and in merged line order."""
    rows: list[tuple[int, StatsColumns, int]] = []
    for cols, table in parts:
        rows.extend((table[n], cols, k) for k, n in enumerate(cols.line.values()))
    rows.sort(key=lambda r: r[0])
    out = StatsColumns(like.event_cls, like.fields)
    extras: dict[int, dict[int, dict[str, float]]] = {}
    for cols, _ in parts:
        per_row: dict[int, dict[str, float]] = {}
        for name, (idx, values) in cols.extra.items():
            for r, v in zip(idx, values, strict=True):
                per_row.setdefault(r, {})[name] = v
        extras[id(cols)] = per_row
    # Each file's fields, times and rank codes wide once (narrowed slices: not once per row).
    values = {id(cols): [(f, cols.column(f)) for f in cols.fields] for cols, _ in parts}
    base = {id(cols): (cols.ts.values(), cols.rank.values()) for cols, _ in parts}
    for line, cols, k in rows:
        kw: dict[str, Any] = {f: col[k] for f, col in values[id(cols)]}
        extra = extras[id(cols)].get(k)
        if extra:
            kw["extra"] = extra
        ts, rank = base[id(cols)]
        out.add(line, ts[k], cols.ranks.values[rank[k]], kw)
    return out


def _access(parts: list[tuple[AccessColumns, dict[int, int]]]) -> AccessColumns:
    rows: list[tuple[int, AccessColumns, int]] = []
    for cols, table in parts:
        rows.extend((table[n], cols, k) for k, n in enumerate(cols.line.values()))
    rows.sort(key=lambda r: r[0])
    out = AccessColumns()
    code = out.strings.code
    base = {id(cols): (cols.ts.values(), cols.rank.values()) for cols, _ in parts}
    for line, cols, k in rows:
        s = cols.strings.values
        ts, rank = base[id(cols)]
        out._base(line, ts[k], cols.ranks.values[rank[k]])
        out.status.append(cols.status[k])
        # Interned values are already normalised (path without query, client host): copy them as they are.
        out.method.append(code(s[cols.method[k]]))
        out.path.append(code(s[cols.path[k]]))
        out.client.append(code(s[cols.client[k]]))
    return out
