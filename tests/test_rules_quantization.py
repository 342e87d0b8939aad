"""Quantization family: deepgemm-scale-format, quant-scale-missing, quant-block-misaligned."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.model.events import Severity
from logparse.rules.quantization import tp_candidates
from tests.conftest import CORPUS
from tests.conftest import analyze_text as run
from tests.conftest import findings_named as named

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def scheduler_tb(rank: str, exc: str, frames: list[tuple[str, int, str]] | None = None) -> str:
    frames = frames or [("managers/scheduler.py", 3183, "run_scheduler_process"), ("model_executor/model_runner.py", 902, "load_model")]
    out = [f"[2026-03-02 10:00:01 {rank}] Scheduler hit an exception: Traceback (most recent call last):"]
    for path, no, func in frames:
        out += [f'  File "{SG}/{path}", line {no}, in {func}', "    x = y(", ]
    out += [exc, ""]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- deepgemm-scale-format


def test_ue8m0_assert_is_an_error_and_explains_the_launch_failure() -> None:
    a = analyze(str(CORPUS / "dev-044.log"))
    [f] = named(a, "deepgemm-scale-format")
    assert f.severity == Severity.ERROR
    assert f.data["assert"] == "(values[j] & 0x807fffffu) == 0"
    assert f.data["cuda_error"] == "CUDA_ERROR_LAUNCH_FAILED"
    assert {e.line for e in f.evidence} == {1, 2}
    assert "SGLANG_ENABLE_JIT_DEEPGEMM=0" in f.remedy


def test_scale_fmt_warning_on_every_rank_is_one_warning(tmp_path: Path) -> None:
    warn = "DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell."
    text = warn + "\n" + "".join(f"[2026-03-02 10:00:0{i} TP{i}] {warn}\n" for i in range(4))
    a = run(tmp_path, text)
    found = named(a, "deepgemm-scale-format")
    assert len(found) == 1
    f = found[0]
    assert f.severity == Severity.WARNING
    assert f.data["warnings"] == 5
    assert f.ranks == ["TP0", "TP1", "TP2", "TP3"]
    assert a.root_cause is None


# --------------------------------------------------------------------------- quant-scale-missing


def test_k_scale_keyerror_names_the_scale_and_quantization() -> None:
    a = analyze(str(CORPUS / "dev-016.log"))
    [f] = named(a, "quant-scale-missing")
    assert f.data["scale"] == "k_scale"
    assert f.data["quantization"] == "modelopt_fp4"
    assert "modelopt_fp4" in f.remedy
    assert {"model-load-failure", "scheduler-crash"}.isdisjoint(a.fired())


def test_weight_scale_keyerror_in_a_scheduler_traceback(tmp_path: Path) -> None:
    text = scheduler_tb("TP3", "KeyError: 'model.layers.3.mlp.experts.w13_weight_scale_inv'")
    a = run(tmp_path, text)
    [f] = named(a, "quant-scale-missing")
    assert f.data["scale"] == "w13_weight_scale_inv"
    assert f.ranks == ["TP3"]
    assert "scheduler-crash" not in a.fired()


def test_other_keyerror_is_not_a_scale(tmp_path: Path) -> None:
    a = run(tmp_path, scheduler_tb("TP0", "KeyError: 'model.layers.47.mlp.experts.w2_weight'"))
    assert "quant-scale-missing" not in a.fired()
    assert "scheduler-crash" in a.fired()


# --------------------------------------------------------------------------- quant-block-misaligned


@pytest.mark.parametrize(("full", "block", "expected"), [
    (1536, 128, [1, 2, 4]),
    (18432, 128, [1, 2, 4, 8, 16]),
    (2048, 128, [1, 2, 4, 8, 16]),
    (1408, 128, [1]),
    (192, 128, []),
])
def test_tp_candidates(full: int, block: int, expected: list[int]) -> None:
    assert tp_candidates(full, block) == expected


def test_block_n_partition_computes_tp_sizes(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B-FP8 --tp 8 --port 30000\n"
            + scheduler_tb("TP0", "ValueError: Weight output_partition_size = 192 is not divisible by weight quantization "
                                  "block_n = 128.",
                           [("managers/scheduler.py", 3183, "run_scheduler_process"),
                            ("layers/quantization/fp8.py", 412, "create_weights"),
                            ("layers/quantization/fp8.py", 371, "validate_block_quant_shapes")]))
    a = run(tmp_path, text)
    [f] = named(a, "quant-block-misaligned")
    assert f.data["full_size"] == 1536
    assert f.data["tp_candidates"] == [1, 2, 4]
    assert "--tp 4" in f.remedy
    assert a.root_cause is f
    assert "scheduler-crash" not in a.fired()


def test_moe_block_check_suggests_ep(tmp_path: Path) -> None:
    msg = ("ValueError: For quantized MoE models, please make sure (moe_intermediate_size=1536 / moe_tp_size=16) % "
           "weight_block_size_n=128 == 0 where moe_tp_size is equal to tp_size (16) divided by ep_size (1). You can fix "
           "this by setting arguments `--tp` and `--ep` correctly.")
    text = ("$ python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 16 --port 30000\n"
            + scheduler_tb("TP0", msg))
    a = run(tmp_path, text)
    [f] = named(a, "quant-block-misaligned")
    assert f.data["moe_tp_candidates"] == [1, 2, 4]
    assert "--ep 4" in f.remedy


def test_awq_alignment_says_what_would_decide() -> None:
    a = analyze(str(CORPUS / "dev-026.log"))
    [f] = named(a, "quant-block-misaligned")
    assert f.data["undecidable"] is True
    assert f.data["model"] == "MiniCPMV"
    assert "group_size" in f.remedy and "config.json" in f.remedy
    assert "scheduler-crash" not in a.fired()  # the TP0 traceback after the message is claimed


# --------------------------------------------------------------------------- families across releases (catalog)


def test_block_k_partition(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B-FP8 --tp 8 --port 30000\n"
            + scheduler_tb("TP0", "ValueError: Weight input_size_per_partition = 176 is not divisible by weight "
                                  "quantization block_k = 128."))
    a = run(tmp_path, text)
    [f] = named(a, "quant-block-misaligned")
    assert f.data["partition"] == "input_size_per_partition" and f.data["block_name"] == "block_k"
    assert f.data["full_size"] == 1408 and f.data["tp_candidates"] == [1]
    assert "--tp 1" in f.remedy


def test_moe_tp_divisibility(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen1.5-MoE-A2.7B --tp 3 --port 30000\n"
            + scheduler_tb("TP0", "ValueError: moe_intermediate_size 1408 must be divisible by moe_tp_size (3) "
                                  "which is tp_size (3) divided by moe_ep_size (1)."))
    [f] = named(run(tmp_path, text), "quant-block-misaligned")
    assert f.data["moe_intermediate_size"] == 1408 and f.data["moe_tp_size"] == 3
    assert f.data["moe_tp_candidates"] == [1, 2, 4, 8, 16, 32]
    assert "tp/ep is one of [1, 2, 4, 8, 16, 32]" in f.remedy


@pytest.mark.parametrize("exc", [
    ("ValueError: Weight input_size_per_partition = 3696 is not divisible by min_thread_k = 128. Consider reducing "
    "tensor_parallel_size or running with --quantization gptq."),
    ("ValueError: Weight input_size_per_partition = 3696 is not divisible by group_size = 128. Consider reducing "
    "tensor_parallel_size or running with --quantization gptq."),
])
def test_marlin_group_alignment_is_undecidable(tmp_path: Path, exc: str) -> None:
    [f] = named(run(tmp_path, scheduler_tb("TP1", exc)), "quant-block-misaligned")
    assert f.data["undecidable"] is True and f.ranks == ["TP1"]


def test_ue8m0_assert_followed_by_an_illegal_memory_access(tmp_path: Path) -> None:
    text = ("Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & "
            "0x807fffffu) == 0\n"
            "[2026-03-02 10:00:01 TP0] RuntimeError: CUDA error: an illegal memory access was encountered\n")
    a = run(tmp_path, text)
    [f] = named(a, "deepgemm-scale-format")
    assert f.data["assert"] == "(values[j] & 0x807fffffu) == 0"
    assert {e.line for e in f.evidence} == {1, 2}
    assert "illegal-memory-access" not in a.fired()
