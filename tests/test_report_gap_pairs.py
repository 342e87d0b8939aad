"""`timing._gap_pairs` (numpy) against the per-rank tuple loop it replaced: the same pairs in the
same order, on a log whose ranks interleave, whose stamps go backwards, that mixes events and
stats lines, untimed stats lines and a time-only stamp."""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path

from logparse.engine.core import analyze
from logparse.parsing.columns import epoch
from logparse.parsing.pipeline import ParsedLog
from logparse.report.timing import _gap_pairs
from logparse.run.timeline import MAIN


def _reference(log: ParsedLog, threshold_s: float) -> list[tuple[str, int, float, int, float]]:
    per_rank: dict[str, list[tuple[int, float]]] = {}
    for e in log.events:
        if e.ts is None or (e.rank or "").startswith(("rank", "GPU")):
            continue
        per_rank.setdefault(e.rank or MAIN, []).append((e.line, epoch(e.ts)))
    for cols in (log.decode, log.prefill, log.access):
        names = cols.ranks.values
        for no, ts, code in zip(cols.line, cols.ts, cols.rank, strict=True):
            if not math.isnan(ts):
                per_rank.setdefault(names[code] or MAIN, []).append((no, ts))
    out = []
    for rank, rows in per_rank.items():
        rows.sort()
        for (a, ta), (b, tb) in pairwise(rows):
            if (ta < 0) != (tb < 0) or tb - ta < threshold_s:
                continue
            out.append((rank, a, ta, b, tb))
    return out


def _decode(stamp: str, rank: str) -> str:
    return (f"[{stamp} {rank}] Decode batch, #running-req: 3, #token: 4772, token usage: 0.01, "
            "cuda graph: True, gen throughput (token/s): 47.05, #queue-req: 0")


def test_gap_pairs_match_the_tuple_loop(tmp_path: Path) -> None:
    lines = [
        "[2026-05-01 10:00:00 TP1] Load weight begin. avail mem=78.00 GB",
        _decode("2026-05-01 10:00:05", "TP0"),
        _decode("2026-05-01 10:01:05", "TP1"),
        _decode("2026-05-01 10:00:40", "TP0"),
        _decode("2026-05-01 10:00:01", "TP0"),  # backwards: a gap only in line order
        "Decode batch, #running-req: 3, #token: 4772, token usage: 0.01, gen throughput (token/s): 1.0, #queue-req: 0",
        _decode("2026-05-01 10:03:00", "TP1"),
        "[2026-05-01 10:04:00 TP0] Load weight begin. avail mem=78.00 GB",
        _decode("2026-05-01 10:05:00", "DP1 TP0"),
        _decode("2026-05-01 10:07:00", "DP1 TP0"),
        "[10:08:00 TP1] Load weight begin. avail mem=78.00 GB",
        _decode("2026-05-01 10:09:00", "TP1"),
    ]
    log = tmp_path / "gaps.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parsed = analyze(str(log)).log
    assert len(parsed.decode) >= 8
    for threshold in (1.0, 30.0, 100.0):
        want = _reference(parsed, threshold)
        assert _gap_pairs(parsed, threshold) == want
    assert len(_reference(parsed, 1.0)) >= 5
