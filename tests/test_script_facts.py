"""Facts from benchmark scripts and CUDA errors (issue 9): `send_one`, `bench_runs`, `cuda_error`,
and the NCCL timeout named by torch's own `Timeout at NCCL work` line.

Real lines are quoted from dev-split corpus cases and public threads (checked against the excluded
list); where no public occurrence outside the excluded threads was found, the line is the format
string of the script that prints it (SGLang's send_one.py / bench_sglang_eagle.py / the few-shot
GSM8K scripts, vLLM's CUDACHECK macro), with values filled in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.run.facts import _cuda_error


def _facts(tmp_path: Path, text: str) -> dict:
    log = tmp_path / "case.log"
    log.write_text(text, encoding="utf-8")
    return analyze(str(log)).facts


# ---------------------------------------------------------------- cuda_error, every shape

@pytest.mark.parametrize(("text", "want"), [
    # fixtures/corpus/dev/c-039 (sgl-project/sglang, dev split)
    ("RuntimeError: CUDA error: device-side assert triggered", "device-side assert triggered"),
    # ai-dynamo/dynamo#1229
    ("RuntimeError: CUDA error: peer access is not supported between these two devices",
     "peer access is not supported between these two devices"),
    # torch ≥ 2.8 raises AcceleratorError for the same message
    ("torch.AcceleratorError: CUDA error: operation not permitted when stream is capturing",
     "operation not permitted when stream is capturing"),
    # fixtures/corpus/dev/c-002: a c10d watchdog abort carries it in what()
    ("  what():  [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: CUDA error: "
     "an illegal memory access was encountered", "an illegal memory access was encountered"),
    # fixtures/corpus/dev/c-001 (sgl-project/sglang#5491): flashinfer's own report
    ("CUDA Error: an illegal memory access was encountered (CUDA Error: 700an illegal memory access was encountered)  "
     "(/opt/conda/lib/python3.10/site-packages/flashinfer/data/include/flashinfer/attention/decode.cuh: line ) 700",
     "an illegal memory access was encountered"),
    # vLLM's / SGLang 0.1.x custom all-reduce CUDACHECK: printf("Failed: Cuda error %s:%d '%s'\n", …)
    ("Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 "
     "'peer access is not supported between these two devices'", "peer access is not supported between these two devices"),
    # a kernel library's check with the place it failed
    ("RuntimeError: CUDA error: an illegal memory access was encountered at /sgl-kernel/csrc/moe/moe_align_kernel.cu:212",
     "an illegal memory access was encountered"),
    # the driver API's symbolic name (shared corpus dev-044)
    ("tvm.error.InternalError: CUDA driver error (jit_kernels/impls/smxx_layout.hpp:72): 719 (CUDA_ERROR_LAUNCH_FAILED)",
     "CUDA_ERROR_LAUNCH_FAILED"),
])
def test_cuda_error_shapes(text: str, want: str) -> None:
    assert _cuda_error(text) == want


def test_cuda_error_absent_without_one() -> None:
    assert _cuda_error("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.") is None
    assert _cuda_error("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB.") is None


def test_cuda_error_fact_from_a_bare_kernel_report(tmp_path: Path) -> None:
    facts = _facts(tmp_path, (
        "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 "
        "'peer access is not supported between these two devices'\n"
        "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 "
        "'peer access is not supported between these two devices'\n"))
    assert facts["cuda_error"] == "peer access is not supported between these two devices"


def test_cuda_error_fact_from_a_traceback(tmp_path: Path) -> None:
    facts = _facts(tmp_path, (
        "[2025-04-22 15:12:46 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 2011, in run_scheduler_process\n'
        "    scheduler.event_loop_normal()\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"))
    assert facts["cuda_error"] == "an illegal memory access was encountered"
    assert facts["exception_type"] == "RuntimeError"


# ---------------------------------------------------------------- send_one and bench_runs

def test_send_one_key_value_lines_and_table(tmp_path: Path) -> None:
    facts = _facts(tmp_path, (
        # send_one.py ≤ 0.4.x: print(f"{acc_length=:.2f}"); print(f"{speed=:.2f} token/s")
        "acc_length=3.12\n"
        "speed=123.45 token/s\n"
        # the speculative tests: print(f"{acc_length=:.2f} {speed=:.2f}")
        "acc_length=2.61 speed=187.40\n"
        # send_one.py 0.5.x: a tabulate "pretty" table
        "+-------------+--------+------------+-----------------+\n"
        "| Latency (s) | Tokens | Acc Length | Speed (token/s) |\n"
        "+-------------+--------+------------+-----------------+\n"
        "|    4.105    |  512   |   3.320    |     124.73      |\n"
        "+-------------+--------+------------+-----------------+\n"))
    assert facts["send_one"] == [
        {"acc_length": 3.12, "speed": 123.45},
        {"acc_length": 2.61, "speed": 187.4},
        {"latency_s": 4.105, "tokens": 512, "acc_length": 3.32, "speed": 124.73},
    ]


def test_single_send_one_result_is_a_dict(tmp_path: Path) -> None:
    assert _facts(tmp_path, "acc_length=1.00\nspeed=98.70 token/s\n")["send_one"] == {"acc_length": 1.0, "speed": 98.7}


def test_mtbench_and_eval_lines_are_bench_runs(tmp_path: Path) -> None:
    facts = _facts(tmp_path, (
        # benchmark/mtbench/bench_sglang_eagle.py
        "#questions: 80, Throughput: 312.45 token/s, Acceptance length: 3.21\n"
        # benchmark/gsm8k/bench_sglang.py, sglang.test.few_shot_gsm8k
        "Accuracy: 0.951\n"
        "Invalid: 0.000\n"
        "Latency: 25.123 s\n"
        "Output throughput: 4500.123 token/s\n"
        "Accuracy: 0.948\n"
        "Invalid: 0.001\n"
        "Latency: 24.870 s\n"
        "Output throughput: 4610.220 token/s\n"))
    assert facts["bench_runs"] == [
        {"questions": 80, "throughput": 312.45, "accept_length": 3.21},
        {"accuracy": 0.951, "invalid": 0.0, "latency_s": 25.123, "output_throughput": 4500.123},
        {"accuracy": 0.948, "invalid": 0.001, "latency_s": 24.87, "output_throughput": 4610.22},
    ]


# ---------------------------------------------------------------- NCCL timeout from torch's work line

def test_nccl_timeout_from_the_timed_out_work_line(tmp_path: Path) -> None:
    # fixtures/corpus/dev/b-054: only the `Timeout at NCCL work` line names the work and the rank.
    facts = _facts(tmp_path, (
        "[rank16]:[E214 06:46:21.341531487 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 3 Rank 16] Timeout at NCCL "
        "work: 9301, last enqueued NCCL work: 9301, last completed NCCL work: 9300.\n"))
    assert facts["nccl_timeout"] == {"seq": 9301, "rank": 16}


def test_watchdog_abort_for_a_cuda_error_is_not_a_timeout(tmp_path: Path) -> None:
    facts = _facts(tmp_path, (
        "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        "  what():  [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: CUDA error: "
        "an illegal memory access was encountered\n"))
    assert "nccl_timeout" not in facts
    assert facts["cuda_error"] == "an illegal memory access was encountered"
