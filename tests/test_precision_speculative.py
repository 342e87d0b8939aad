"""Precision of spec-v2-topk-conflict: a crash in SGLang's spec-v2 EAGLE worker is the draft tree's
width only when the log shows topk > 1, or — topk not in the log — when it happened where spec v2
assumes a width of 1 (`_draft_extend_for_decode` feeds the draft `num_steps + 1` tokens a request
but selects from `num_draft_tokens`) with a shape error or a cut exception line. Any other spec-v2
serving crash with topk unknown is another failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import analyze_text

SG = "/sgl-workspace/sglang/python/sglang/srt"


def _v2_crash(func: str, exc: str, launch: str = "") -> str:
    head = (f"$ SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
            f"--speculative-num-steps 3{launch}\n") if launch is not None else ""
    return (head
            + "[2026-03-02 10:00:00 TP0] Decode batch, #running-req: 4, #token: 900, token usage: 0.01, "
            "accept len: 2.10, cuda graph: True, gen throughput (token/s): 120.00, #queue-req: 0\n"
            "[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 2736, in run_scheduler_process\n'
            "    scheduler.event_loop_overlap()\n"
            f'  File "{SG}/managers/scheduler.py", line 2032, in run_batch\n'
            "    batch_result = self.model_worker.forward_batch_generation(\n"
            f'  File "{SG}/speculative/eagle_worker_v2.py", line 628, in forward_batch_generation\n'
            "    verify_input: EagleVerifyInput = self.draft_worker.draft(\n"
            f'  File "{SG}/speculative/eagle_worker_v2.py", line 311, in {func}\n'
            "    out = self.draft_runner.forward(\n"
            + (f"{exc}\n" if exc else "")
            + "\n")


def _fired(tmp_path: Path, text: str) -> set[str]:
    return set(analyze_text(tmp_path, text).fired())


@pytest.mark.parametrize("exc", [
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "AttributeError: 'NoneType' object has no attribute 'hidden_states'",
    "",
], ids=["cuda-fault", "attribute-error", "cut"])
def test_a_spec_v2_crash_elsewhere_with_topk_unknown_is_no_topk_conflict(tmp_path: Path, exc: str) -> None:
    assert "spec-v2-topk-conflict" not in _fired(tmp_path, _v2_crash("verify", exc))


@pytest.mark.parametrize("exc", [
    "AttributeError: 'NoneType' object has no attribute 'hidden_states'",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
], ids=["attribute-error", "cuda-fault"])
def test_another_exception_in_draft_extend_with_topk_unknown_is_no_topk_conflict(tmp_path: Path, exc: str) -> None:
    assert "spec-v2-topk-conflict" not in _fired(tmp_path, _v2_crash("_draft_extend_for_decode", exc))


@pytest.mark.parametrize("exc", [
    "",
    "RuntimeError: shape '[4, 4, 3]' is invalid for input of size 32",
], ids=["cut", "shape-error"])
def test_draft_extend_crash_with_topk_unknown_is_the_topk_conflict(tmp_path: Path, exc: str) -> None:
    # the shape of shared dev-015: the exception line cut below `_draft_extend_for_decode`
    assert "spec-v2-topk-conflict" in _fired(tmp_path, _v2_crash("_draft_extend_for_decode", exc))


def test_a_spec_v2_crash_with_topk_4_in_the_launch_is_the_topk_conflict(tmp_path: Path) -> None:
    text = _v2_crash("verify", "AttributeError: 'NoneType' object has no attribute 'hidden_states'",
                     " --speculative-eagle-topk 4 --speculative-num-draft-tokens 8")
    assert "spec-v2-topk-conflict" in _fired(tmp_path, text)
