"""Where a cut traceback was raised: the scheduler loop's batch-building frames (issue 9).

`get_next_batch_to_run`, `get_new_batch_prefill`, `update_running_batch` (scheduler.py) and
`get_model_worker_batch`, `prepare_for_extend`, `prepare_for_decode` (schedule_batch.py) run only
inside the event loop. A traceback ending in one of them, with no serving shown before it, may be the
warmup batch: outcome None (README "Crashes in the request loop"), never crashed-at-startup because
another worker's start-up bars are interleaved. Real occurrences: dev e-002 (Ray workers, a
`get_model_worker_batch` illegal memory access next to other workers' capture bars), e-001 and
a-003 (`get_next_batch_to_run` / `update_running_batch` frames).
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Traceback
from logparse.parsing.pipeline import parse_file
from logparse.run.stage import traceback_phase
from tests.conftest import FIXTURES


def test_dev_case_with_interleaved_capture_bars_is_undecided() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "e-002.log"))
    assert a.root_cause is not None and a.root_cause.name == "illegal-memory-access"
    assert a.outcome is None


def test_batch_building_frames_are_the_request_loop() -> None:
    for name in ("e-001", "e-002", "a-003"):
        tbs = parse_file(str(FIXTURES / "corpus" / "dev" / f"{name}.log")).of(Traceback)
        assert any(traceback_phase(tb) == "serving" for tb in tbs), name


def test_capture_frames_stay_start_up(tmp_path: Path) -> None:
    # Near miss: a cut traceback in CUDA-graph capture (no loop frame) is still a start-up crash.
    log = tmp_path / "x.log"
    log.write_text(
        "[2025-05-23 18:02:30 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=30.12 GB\n"
        "[2025-05-23 18:02:43 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 390, in capture\n'
        "    ) = self.capture_one_batch_size(bs, forward)\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 482, in capture_one_batch_size\n',
        encoding="utf-8")
    assert analyze(str(log)).outcome == "crashed-at-startup"
