"""An analysis runs with a larger young-generation threshold (engine/gcpace.py): its long-lived
events made CPython's default collector walk them again and again (11 full collections on a
failure-heavy 1M-line log). Counted here: young collections during `analyze` vs during a bare
parse of the same log, and the threshold is put back after."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from logparse.engine.core import analyze
from logparse.engine.gcpace import YOUNG_THRESHOLD, fewer_collections
from logparse.parsing.pipeline import parse_file

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def _log(path: Path, blocks: int) -> None:
    lines = []
    for i in range(blocks):
        ts = f"2026-04-14 {9 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        lines.append(f"[{ts} TP{i % 8}] Decode batch, #running-req: {i % 64}, #token: {1000 + i}, "
                     f"token usage: 0.{i % 90 + 10}, cuda graph: True, gen throughput (token/s): {i * 1.5:.2f}, "
                     f"#queue-req: {i % 5}")
        lines += [
            f"[{ts} TP{i % 8}] Scheduler hit an exception: Traceback (most recent call last):",
            f'  File "{SG}/managers/scheduler.py", line {3000 + i % 7}, in run_scheduler_process',
            "    scheduler.event_loop_normal()",
            f"RuntimeError: CUDA error: an illegal memory access was encountered ({i % 3})",
            "",
        ]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def test_analysis_runs_fewer_young_collections(tmp_path: Path) -> None:
    path = tmp_path / "failures.log"
    _log(path, 4000)
    was_enabled, before = gc.isenabled(), gc.get_threshold()
    gc.enable()
    gc.set_threshold(700, *before[1:])
    young = [0, 0]
    phase = [0]

    def count(state: str, info: dict[str, Any]) -> None:
        if state == "start" and info["generation"] == 0:
            young[phase[0]] += 1

    gc.callbacks.append(count)
    try:
        gc.collect()
        parse_file(str(path))  # the default threshold: the baseline
        phase[0] = 1
        gc.collect()
        analyze(str(path))  # parse again, then rules and evidence
    finally:
        gc.callbacks.remove(count)
        assert gc.get_threshold() == (700, *before[1:])
        gc.set_threshold(*before)
        if not was_enabled:
            gc.disable()
    assert young[0] >= 10, young
    assert young[1] * 3 < young[0], young


def test_a_raised_or_disabled_collector_is_left_alone() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(YOUNG_THRESHOLD * 2, *before[1:])
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD * 2
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD * 2
        gc.set_threshold(700, *before[1:])
        with fewer_collections():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*before)
