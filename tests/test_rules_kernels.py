"""Kernels family: unsupported-gpu-arch, kernel-library-mismatch, illegal-memory-access."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from tests.conftest import CORPUS
from tests.conftest import analyze_text as run
from tests.conftest import findings_named as named

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


# --------------------------------------------------------------------------- unsupported-gpu-arch


def test_trtllm_gen_on_wrong_arch_points_at_attention_backend() -> None:
    a = analyze(str(CORPUS / "dev-010.log"))
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data["kernel"] == "TllmGenFmhaRunner"
    assert f.data["flag"] == "--attention-backend"
    assert "--attention-backend flashinfer" in f.remedy
    # the cut scheduler traceback it belongs to is explained, so the fallback does not fire
    assert "scheduler-crash" not in a.fired()
    assert a.root_cause is f


def test_no_kernel_image_names_the_kernel_and_claims_the_echoed_traceback() -> None:
    a = analyze(str(CORPUS / "dev-036.log"))
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data["kernel"] == "RMSNorm"
    assert "sgl-kernel" in f.remedy
    assert {"kernel-library-mismatch", "illegal-memory-access", "scheduler-crash"}.isdisjoint(a.fired())


def test_arch_message_variants(tmp_path: Path) -> None:
    text = (
        f"[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process\n'
        f"    scheduler = Scheduler(\n"
        f'  File "{SG}/layers/quantization/fp8.py", line 210, in __init__\n'
        f"    raise RuntimeError(\n"
        f"RuntimeError: MXFP8 MoE quantization requires SM100.\n\n"
    )
    a = run(tmp_path, text)
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data.get("gpu_sm") == 100 or "SM100" in f.message


def test_gpu_sm_is_read_from_the_message(tmp_path: Path) -> None:
    text = ("/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:262: UserWarning: \n"
            "RuntimeError: NVIDIA RTX PRO 6000 Blackwell with CUDA capability sm_120 is not compatible with the current "
            "PyTorch installation.\n")
    a = run(tmp_path, text)
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data["gpu_sm"] == 120


# --------------------------------------------------------------------------- kernel-library-mismatch


def test_driver_api_symbol() -> None:
    a = analyze(str(CORPUS / "dev-005.log"))
    [f] = named(a, "kernel-library-mismatch")
    assert f.data == {"library": "sgl_kernel", "symbol": "cuGreenCtxStreamCreate", "cause": "driver-api"}
    assert "driver" in f.remedy
    assert "unsupported-gpu-arch" not in a.fired()


def test_torch_abi_symbol(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.12/site-packages/sgl_kernel/__init__.py", line 5, in <module>\n'
            "    from sgl_kernel import common_ops\n"
            "ImportError: /opt/venv/lib/python3.12/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: "
            "_ZN3c104cuda9SetDeviceEa\n")
    a = run(tmp_path, text)
    [f] = named(a, "kernel-library-mismatch")
    assert f.data["cause"] == "torch-abi"
    assert "torch" in f.remedy


def test_common_ops_critical_line(tmp_path: Path) -> None:
    a = run(tmp_path, "[sgl_kernel] CRITICAL: Could not load any common_ops library!\n")
    [f] = named(a, "kernel-library-mismatch")
    assert f.data["library"] == "sgl_kernel"


# --------------------------------------------------------------------------- illegal-memory-access


def test_ima_names_the_backend_of_the_traceback() -> None:
    a = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/rules/illegal-memory-access/bad.log"))
    [f] = named(a, "illegal-memory-access")
    assert f.data["backend"] == "FlashInfer"
    assert "--attention-backend triton" in f.remedy
    assert "CUDA_LAUNCH_BLOCKING=1" in f.remedy
    assert "scheduler-crash" not in a.fired()  # the fallback order: illegal-memory-access claims it first


def test_ima_is_not_reported_when_deepgemm_explains_the_launch_failure() -> None:
    a = analyze(str(CORPUS / "dev-044.log"))
    assert "illegal-memory-access" not in a.fired()
    assert a.root_cause is not None and a.root_cause.name == "deepgemm-scale-format"


def test_device_asserts_printed_per_thread_are_one_finding(tmp_path: Path) -> None:
    lines = [f"/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [{i},0,0], thread: [{t},0,0] "
             "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed."
             for i in range(3) for t in range(4)]
    a = run(tmp_path, "\n".join(lines) + "\n")
    found = named(a, "illegal-memory-access")
    assert len(found) == 1
    assert found[0].data.get("lines") == 12


def test_ima_without_a_backend_says_how_to_find_it(tmp_path: Path) -> None:
    text = (f"[2026-03-02 10:00:01 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 3306, in run_scheduler_process\n'
            f"    scheduler.event_loop_normal()\n"
            f'  File "{SG}/managers/scheduler.py", line 1050, in event_loop_normal\n'
            f"    result = self.run_batch(batch)\n"
            f"RuntimeError: CUDA error: an illegal memory access was encountered\n\n")
    a = run(tmp_path, text)
    [f] = named(a, "illegal-memory-access")
    assert f.data["backend"] is None
    assert "CUDA_LAUNCH_BLOCKING=1" in f.remedy


# --------------------------------------------------------------------------- structure, not words

SGK = "/usr/local/lib/python3.12/dist-packages/sgl_kernel"


def _common_ops_report(detail: str, capability: int = 120) -> str:
    """sgl-kernel's load report as load_utils.py prints it: the ImportError's message starts on the
    line after `ImportError:`."""
    return (
        "Traceback (most recent call last):\n"
        f'  File "{SG}/layers/quantization/fp8_kernel.py", line 49, in <module>\n'
        "    from sgl_kernel import sgl_per_token_group_quant_fp8\n"
        f'  File "{SGK}/__init__.py", line 5, in <module>\n'
        "    common_ops = _load_architecture_specific_ops()\n"
        f'  File "{SGK}/load_utils.py", line 188, in _load_architecture_specific_ops\n'
        "    raise ImportError(error_msg)\n"
        "ImportError: \n"
        "[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
        "\n"
        "Attempted locations:\n"
        f"1. Architecture-specific pattern: {SGK}/sm100/common_ops.* - found files: ['{SGK}/sm100/common_ops.abi3.so']\n"
        f"2. Fallback pattern: {SGK}/common_ops.* - found files: []\n"
        "3. Standard Python import: common_ops - failed\n"
        "\n"
        "GPU Info:\n"
        f"- Compute capability: {capability}\n"
        f"- Expected variant: SM{capability} (precise math for compatibility)\n"
        "\n"
        "Please ensure sgl_kernel is properly installed with:\n"
        "pip install --upgrade sgl_kernel\n"
        "\n"
        "Error details from previous import attempts:\n"
        f"{detail}\n"
        "- ModuleNotFoundError: No module named 'common_ops'\n"
        "\n"
    )


def test_common_ops_report_is_one_failure_that_claims_its_import_error(tmp_path: Path) -> None:
    detail = f"- ImportError: {SGK}/sm100/common_ops.abi3.so: undefined symbol: _ZN3c1013MessageLoggerC1EPKciib"
    a = run(tmp_path, "$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n" + _common_ops_report(detail))
    [f] = named(a, "kernel-library-mismatch")
    assert f.data == {"library": "sgl_kernel", "symbol": "_ZN3c1013MessageLoggerC1EPKciib", "cause": "torch-abi"}
    assert f.first_line == 2  # the traceback that raised the report is part of the finding
    assert "scheduler-crash" not in a.fired()
    assert a.root_cause is f


def test_common_ops_report_names_a_missing_runtime_library(tmp_path: Path) -> None:
    a = run(tmp_path, _common_ops_report("- ImportError: libnvrtc.so.13: cannot open shared object file", 86))
    [f] = named(a, "kernel-library-mismatch")
    assert f.data["cause"] == "missing-library" and f.data["missing"] == "libnvrtc.so.13"
    assert "libnvrtc.so.13" in f.remedy
    assert "scheduler-crash" not in a.fired()


def test_a_lone_critical_line_is_not_merged_with_a_later_traceback(tmp_path: Path) -> None:
    text = ("[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
            "Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 3306, in run_scheduler_process\n'
            "    scheduler.event_loop_normal()\n"
            "ImportError: /opt/venv/lib/python3.12/site-packages/flashinfer/_C.so: undefined symbol: cuTensorMapEncodeTiled\n")
    a = run(tmp_path, text)
    found = named(a, "kernel-library-mismatch")
    assert {f.data.get("cause") for f in found} == {"load-failure", "driver-api"}


def test_torch_symbols_are_read_from_the_mangled_namespace() -> None:
    from logparse.rules.kernels.library import is_driver_symbol, is_torch_symbol

    assert is_torch_symbol("_ZN3c1013MessageLoggerC1EPKciib")
    assert is_torch_symbol("_ZNK2at10TensorBase8data_ptrIfEEPT_v")
    assert not is_torch_symbol("_ZN9attention6kernelEv")  # 'attention' merely starts with 'at'
    assert is_driver_symbol("cuGreenCtxStreamCreate") and not is_driver_symbol("cudaMalloc")


def test_fault_inside_a_draft_graph_capture_is_a_kernel_fault_not_a_draft_failure(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 --speculative-draft-model-path d\n"
            "[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 352, in __init__\n'
            "    self.draft_worker = EAGLEWorker(\n"
            f'  File "{SG}/speculative/eagle_worker.py", line 130, in __init__\n'
            "    self.init_cuda_graphs()\n"
            f'  File "{SG}/speculative/eagle_draft_cuda_graph_runner.py", line 95, in __init__\n'
            "    raise Exception(\n"
            "Exception: Capture cuda graph failed: CUDA error: an illegal memory access was encountered\n\n")
    a = run(tmp_path, text)
    assert "spec-draft-load-failure" not in a.fired()
    [f] = named(a, "illegal-memory-access")
    assert a.root_cause is f


def test_a_kernel_fault_line_claims_the_cut_scheduler_traceback_after_it() -> None:
    a = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/rules/illegal-memory-access/bad-2.log"))
    [f] = named(a, "illegal-memory-access")
    assert f.data["backend"] == "FlashInfer"
    assert "scheduler-crash" not in a.fired()  # the traceback is the same failure seen from Python


def test_no_kernel_image_names_the_kernel_not_a_wheel_called_after_it() -> None:
    a = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/rules/unsupported-gpu-arch/bad-2.log"))
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data["kernel"] == "TopKTopPSamplingFromProbs"
    assert "TopKTopPSamplingFromProbs kernel" in f.remedy and "installed TopKTopPSamplingFromProbs" not in f.remedy


def test_damaged_symbols_and_numbers_never_raise(tmp_path: Path) -> None:
    from logparse.rules.kernels.library import is_torch_symbol

    assert not is_torch_symbol("_ZN" + "9" * 5000 + "x")
    text = ("ImportError: /x/common_ops.abi3.so: undefined symbol: _ZN" + "7" * 5000 + "c10\n"
            "RuntimeError: MXFP8 MoE quantization requires SM" + "1" * 5000 + ".\n"
            "AssertionError: mamba_track_interval " + "9" * 5000 + " must be divisible by page_size 64\n")
    a = run(tmp_path, text)
    assert "kernel-library-mismatch" in a.fired()


def test_backend_list_on_blackwell_is_not_read_as_a_trtllm_kernel(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3.5-4B --attention-backend flashinfer\n"
            "AssertionError: triton or trtllm_mha backend are the only supported backends on Blackwell GPUs for hybrid "
            "GDN models, use --attention-backend triton or --attention-backend trtllm_mha to specify the backend.\n")
    a = run(tmp_path, text)
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data["kernel"] == "the flashinfer attention backend"
    assert "triton or trtllm_mha" in f.remedy and "SM100 only" not in f.remedy


def test_bfloat16_on_a_pre_ampere_gpu_asks_for_half(tmp_path: Path) -> None:
    text = ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU "
            "has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for "
            "example: --dtype=half.\n")
    a = run(tmp_path, text)
    [f] = named(a, "unsupported-gpu-arch")
    assert f.data["flag"] == "--dtype" and "--dtype half" in f.remedy
    assert f.data["gpu_sm"] == 75


def test_a_missing_driver_library_means_no_visible_driver() -> None:
    a = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/rules/kernel-library-mismatch/bad-3.log"))
    [f] = named(a, "kernel-library-mismatch")
    assert f.data == {"library": "sgl_kernel", "cause": "driver-not-visible", "missing": "libcuda.so.1"}
    assert "--gpus all" in f.remedy


def test_the_schedulers_cut_echo_of_a_kernel_fault_is_the_same_failure(tmp_path: Path) -> None:
    # The overlap thread raises the device assert; the event loop's traceback right after it is cut.
    sg = "/sgl-workspace/sglang/python/sglang/srt"
    text = "\n".join([
        "Traceback (most recent call last):",
        f'  File "{sg}/managers/tp_worker_overlap_thread.py", line 196, in forward_batch_generation',
        "    self.scheduler_stream.synchronize()",
        "RuntimeError: CUDA error: device-side assert triggered",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "",
        "[2025-03-01 20:34:50 TP6] Scheduler hit an exception: Traceback (most recent call last):",
        f'  File "{sg}/managers/scheduler.py", line 1887, in run_scheduler_process',
        "    scheduler.event_loop_overlap()",
        "",
    ])
    from tests.conftest import analyze_text
    a = analyze_text(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "illegal-memory-access"
    assert "scheduler-crash" not in a.fired()


def test_a_deepgemm_device_assert_is_a_kernel_fault(tmp_path: Path) -> None:
    from tests.conftest import analyze_text
    line = ("Assertion failed: /opt/venv/lib/python3.12/site-packages/deep_gemm/include/deep_gemm/impls/"
            "sm90_fp8_gemm_1d2d.cuh:211, condition: scale_b_ptr != nullptr\n")
    a = analyze_text(tmp_path, line * 3)
    assert a.root_cause is not None and a.root_cause.name == "illegal-memory-access"
    assert a.root_cause.data["backend"] == "DeepGEMM"
    # The same printf from a host-side assert (a .hpp) is no kernel fault.
    host = line.replace("impls/sm90_fp8_gemm_1d2d.cuh:211", "jit_kernels/impls/runtime.hpp:88")
    assert "illegal-memory-access" not in analyze_text(tmp_path, host, name="host.log").fired()


def test_a_kernel_fault_after_serving_is_a_crash_while_serving(tmp_path: Path) -> None:
    # A sticky CUDA error: the torch NCCL watchdog surfaces it and the process cannot go on.
    from tests.conftest import analyze_text
    text = "\n".join([  # noqa: FLY002 — one log line per item
        ("[2025-12-09 02:28:12 TP0] Prefill batch, #new-seq: 3, #new-token: 1025, #cached-token: 0, token usage: 0.01, "
         "#running-req: 2, #queue-req: 0"),
        ("[rank1]:[E1209 02:28:15.281862353 ProcessGroupNCCL.cpp:2057] [PG ID 2 PG GUID 3 Rank 1] Process group "
         "watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"),
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "illegal-memory-access"
    assert a.outcome == "crashed-while-serving"
    assert "nccl-timeout" not in a.fired()


# sgl-kernel's load_utils report (0.3.x+) as the message of an ImportError raised in the scheduler.
_COMMON_OPS_REPORT = "\n".join([  # noqa: FLY002 — one log line per item
    "[2025-10-01 10:00:00] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/activation.py", line 30, in <module>',
    "    from sgl_kernel import gelu_and_mul, silu_and_mul",
    '  File "/usr/local/lib/python3.12/dist-packages/sgl_kernel/__init__.py", line 27, in <module>',
    "    common_ops = _load_architecture_specific_ops()",
    '  File "/usr/local/lib/python3.12/dist-packages/sgl_kernel/load_utils.py", line 188, in _load_architecture_specific_ops',
    "    raise ImportError(error_msg)",
    "ImportError: ",
    "[sgl_kernel] CRITICAL: Could not load any common_ops library!",
    "",
    "GPU Info:",
    "- Compute capability: 120",
    "",
    "Error details from previous import attempts:",
    "- ImportError: {attempt}",
    "- ModuleNotFoundError: No module named 'common_ops'",
    "",
])


@pytest.mark.parametrize(("attempt", "cause"), [
    ("libnuma.so.1: cannot open shared object file: No such file or directory", "missing-system-library"),
    (("/usr/local/lib/python3.12/dist-packages/sgl_kernel/sm120/common_ops.abi3.so: undefined symbol: "
      "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"), "torch-abi"),
    ("libcudart.so.13: cannot open shared object file: No such file or directory", "missing-library"),
])
def test_the_common_ops_report_as_an_import_errors_message_is_the_root(tmp_path: Path, attempt: str,
                                                                        cause: str) -> None:
    from tests.conftest import analyze_text
    a = analyze_text(tmp_path, _COMMON_OPS_REPORT.replace("{attempt}", attempt))
    assert a.root_cause is not None and a.root_cause.name == "kernel-library-mismatch"
    assert a.root_cause.data["cause"] == cause
    assert "scheduler-crash" not in a.fired()
    assert "''" not in a.root_cause.remedy and a.outcome == "crashed-at-startup"


def _capture_failure(cause: str, runner: str = "model_executor/cuda_graph_runner.py") -> str:
    """SGLang's capture wrapper around a CUDA error (0.4.x–0.5.x shape): the capture traceback, then
    `Exception: Capture cuda graph failed: <cause>` raised from the runner's __init__."""
    sg = "/sgl-workspace/sglang/python/sglang/srt"
    return "\n".join([
        "[2025-06-10 10:00:02 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=18.00 GB",
        "[2025-06-10 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        f'  File "{sg}/{runner}", line 380, in capture',
        "    ) = self.capture_one_batch_size(bs, forward)",
        f'  File "{sg}/{runner}", line 470, in capture_one_batch_size',
        "    run_once()",
        f"RuntimeError: {cause}",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        f'  File "{sg}/managers/scheduler.py", line 2500, in run_scheduler_process',
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)",
        f'  File "{sg}/{runner}", line 302, in __init__',
        "    raise Exception(",
        f"Exception: Capture cuda graph failed: {cause}",
        "Possible solutions:",
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
        "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
        "",
    ])


@pytest.mark.parametrize("cause", [
    "CUDA error: operation not permitted when stream is capturing",
    "Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture. ",
    "CUDA error: capturing stream has unjoined work",
])
def test_a_capture_unsafe_call_is_a_capture_failure_not_a_draft_or_oom(tmp_path: Path, cause: str) -> None:
    for runner in ("model_executor/cuda_graph_runner.py", "speculative/eagle_draft_cuda_graph_runner.py"):
        a = run(tmp_path, _capture_failure(cause, runner), name=runner.replace("/", "_") + ".log")
        f = a.root_cause
        assert f is not None and f.name == "scheduler-crash", (runner, a.fired())
        assert f.data["phase"] == "cuda-graph-capture" and f.data["cause"] == "not-capturable"
        assert "`--disable-cuda-graph`" in f.remedy and "search the SGLang issues" not in f.remedy
        assert not {"spec-draft-load-failure", "cuda-oom"} & a.fired()
        assert a.outcome == "crashed-at-startup"


def test_an_illegal_address_while_capturing_is_a_kernel_fault_in_capture(tmp_path: Path) -> None:
    a = run(tmp_path, _capture_failure("CUDA error: an illegal memory access was encountered"))
    f = a.root_cause
    assert f is not None and f.name == "illegal-memory-access"
    assert f.data["phase"] == "cuda-graph-capture" and f.data["backend"] == "CUDA graph capture"
    assert a.outcome == "crashed-at-startup"


# --------------------------------------------------------------------------- illegal-memory-access on an NPU

NPU_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/rules/illegal-memory-access"


def test_an_ascend_device_report_is_one_kernel_fault_with_its_error_string() -> None:
    # sglang#12464 (dev/i-010): EZ9999 report of an aivec fault, its detail lines, the kernel-task line.
    a = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/corpus/dev/i-010.log"))
    [f] = named(a, "illegal-memory-access")  # one report, not one finding per line
    assert a.root_cause is f
    assert f.data["device"] == "npu"
    assert f.data["error"] == "The MPU address access is invalid"
    assert f.data["retcode"] == "0x31"
    assert "`ASCEND_LAUNCH_BLOCKING=1`" in f.remedy and "CUDA_LAUNCH_BLOCKING" not in f.remedy


@pytest.mark.parametrize(("name", "error"), [
    ("bad-npu.log", "L0C read/write conflict(vec read operation or cube write operation).When the FIXP reads"),
    ("bad-npu-2.log", "The DDR address of the MTE instruction is out of range"),
])
def test_npu_fault_wordings_of_other_cann_releases(name: str, error: str) -> None:
    # pto-dsl#90 (torch_npu '[Error]: The aicore execution is abnormal.', fftsplus aicore, A2/A3) and
    # PTOAS#426 (aclrtSynchronizeStream 507015, A5 'there is an aicore error exception').
    a = analyze(str(NPU_FIXTURES / name))
    [f] = named(a, "illegal-memory-access")
    assert f.data["error"] == error


def test_a_repeated_npu_report_is_one_finding_and_names_the_fault_kernel(tmp_path: Path) -> None:
    report = [
        "[W1216 15:09:53.857638449 compiler_depend.ts:526] Warning: NPU warning, error code is 507035[Error]: ",
        "[Error]: The vector core execution is abnormal. ",
        "        Rectify the fault based on the error information in the ascend log.",
        "EZ9999: Inner Error!",
        ("       Aicore kernel execute failed, device_id=2, stream_id=2, report_stream_id=2, task_id=42014, "
         "flip_num=6, fault kernel_name=reshape_and_cache_200000000,"),
    ]
    gap = [f"[2025-12-16 15:09:5{i}] some other line {i}" for i in range(10)]
    a = run(tmp_path, "\n".join(report + gap + report) + "\n")
    [f] = named(a, "illegal-memory-access")
    assert f.data["kernel"] == "reshape_and_cache_200000000"
    assert f.data["code"] == 507035
    assert f.data["reports"] == 2
    assert "reshape_and_cache_200000000" in f.message


def test_an_ai_cpu_exception_is_no_kernel_fault(tmp_path: Path) -> None:
    # hw-native-sys/simpler#1019: an AICPU task exception, then 207001 on the next launch. Host-side
    # op code on the AI CPU, not a device kernel's memory fault: alone it is no finding, and next to
    # a real aivec report (PTOAS#426's A5 wording) it is not part of that finding's evidence.
    aicpu = [
        ("11:05:31.652  PrintTaskErrorMsg: Task run failed, stream_id=59, sqe_type=5(aicpu_d), "
         "errType=0x1(task exception)"),
        ("11:05:31.653  ProcessStarsAicpuErrorInfo: error from device(chipId:0,dieId:0), exception during "
         "AICPU execution"),
        "11:05:31.656  PrintAicpuErrorInfo: Aicpu kernel execute failed, device_id=2,",
        "              rtKernelLaunchWithHandleV2: 207001, desc=[Failed to create the module object.",
    ]
    assert "illegal-memory-access" not in run(tmp_path, "\n".join(aicpu) + "\n").fired()
    aivec = ("       The error from device(chipId:0, dieId:0), serial number is 9, there is an aivec error "
             "exception, core id is 0, error code = 0, dump info: pc start: 0x100040800764")
    gap = [f"[2025-12-16 15:09:5{i}] some other line {i}" for i in range(10)]
    a = run(tmp_path, "\n".join(aicpu + gap + [aivec]) + "\n", name="both.log")
    [f] = named(a, "illegal-memory-access")
    assert f.data["fault"] == "aivec"
    assert all(ev.line > len(aicpu) for ev in f.evidence)
