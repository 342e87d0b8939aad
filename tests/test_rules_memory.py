"""Memory rules: cuda-oom (phase and phase-specific remedy), kv-pool-no-room (a computed
--mem-fraction-static), host-oom vs SGLang's self-kill, kv-cache-exhausted, mamba-pool-exhausted,
memory-leak-detected — on their fixtures, corpus excerpts and small written logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.model.events import Severity
from tests.conftest import only_finding as only
from tests.conftest import write_log as write

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "rules"
from tests.conftest import CORPUS

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"
FAMILY = [
    "cuda-oom",
    "kv-pool-no-room",
    "host-oom",
    "kv-cache-exhausted",
    "mamba-pool-exhausted",
    "memory-leak-detected",
]


# --------------------------------------------------------------------------- cuda-oom

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.02 GiB is free."


def oom_log(frames: list[tuple[str, str]], tail: str = OOM, before: str = "") -> str:
    body = "".join(
        f'  File "{SG}/{path}", line 100, in {func}\n    x = y()\n' for path, func in frames
    )
    return (
        f"{before}[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process\n    scheduler = Scheduler(\n'
        f"{body}{tail}\n"
    )


SERVER_ARGS = (
    "[2026-03-07 15:29:50] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', tp_size=2, "
    "mem_fraction_static=0.88, chunked_prefill_size=8192, max_running_requests=256, cuda_graph_max_bs=160)\n"
)


@pytest.mark.parametrize(
    ("frames", "phase"),
    [
        (
            [
                ("managers/scheduler.py", "__init__"),
                ("model_executor/model_runner.py", "load_model"),
                ("model_loader/loader.py", "load_weights"),
            ],
            "weight-load",
        ),
        (
            [
                ("managers/scheduler.py", "__init__"),
                ("model_executor/model_runner.py", "init_memory_pool"),
            ],
            "kv-alloc",
        ),
        (
            [
                ("managers/scheduler.py", "__init__"),
                ("model_executor/model_runner.py", "init_cuda_graphs"),
                ("model_executor/cuda_graph_runner.py", "capture"),
                ("model_executor/model_runner.py", "forward_decode"),
            ],
            "cuda-graph-capture",
        ),
        (
            [
                ("managers/scheduler.py", "event_loop_normal"),
                ("managers/scheduler.py", "run_batch"),
                ("model_executor/model_runner.py", "forward_extend"),
            ],
            "prefill",
        ),
        (
            [
                ("managers/scheduler.py", "event_loop_normal"),
                ("managers/scheduler.py", "run_batch"),
                ("model_executor/model_runner.py", "forward_decode"),
            ],
            "decode",
        ),
        (
            [
                ("managers/scheduler.py", "event_loop_normal"),
                ("model_executor/model_runner.py", "forward_decode"),
                ("layers/sampler.py", "sample"),
            ],
            "sampling",
        ),
        ([("managers/scheduler.py", "event_loop_normal")], "unknown"),
        # a weight loader function, whatever file it is in
        (
            [
                ("managers/scheduler.py", "__init__"),
                ("layers/linear.py", "composed_weight_loader"),
            ],
            "weight-load",
        ),
        # 0.5.10+: the KV pool is set up by the kv-cache mixin
        (
            [
                ("managers/scheduler.py", "__init__"),
                ("model_executor/model_runner_kv_cache_mixin.py", "_init_pools"),
            ],
            "kv-alloc",
        ),
    ],
)
def test_cuda_oom_phase_from_frames(
    tmp_path: Path, frames: list[tuple[str, str]], phase: str
) -> None:
    a = analyze(write(tmp_path, oom_log(frames, before=SERVER_ARGS)))
    f = only(a, "cuda-oom")
    assert f.data["phase"] == phase
    assert f.data["oom"] == {
        "gpu": 0,
        "total_capacity_gib": 79.1,
        "tried_to_allocate_mib": 1792.0,
        "free_mib": 1044.48,
    }
    assert "kv-pool-no-room" not in a.fired()
    # Never the KV-pool advice: the OOM remedy does not raise the static fraction.
    assert (
        "raise" not in f.remedy.lower()
        or "--mem-fraction-static" not in f.remedy.split("raise", 1)[1][:40]
    )
    assert "increase --mem-fraction-static" not in f.remedy


def test_cuda_oom_remedies_use_the_logged_values(tmp_path: Path) -> None:
    capture = only(
        analyze(
            write(
                tmp_path,
                oom_log([("model_executor/cuda_graph_runner.py", "capture")], before=SERVER_ARGS),
            )
        ),
        "cuda-oom",
    )
    assert "`--cuda-graph-max-bs 80` (captured up to 160)" in capture.remedy
    # 1.75 GiB failed on a 79.10 GiB GPU: lower the fraction by (1.75 + 1) / 79.1 → 0.04, from 0.88 to 0.84.
    assert capture.data["suggested_mem_fraction_static"] == 0.84
    assert "`--mem-fraction-static 0.84` (from 0.88)" in capture.remedy
    decode = only(
        analyze(
            write(
                tmp_path,
                oom_log([("model_executor/model_runner.py", "forward_decode")], before=SERVER_ARGS),
            )
        ),
        "cuda-oom",
    )
    assert "`--chunked-prefill-size 4096` (from 8192)" in decode.remedy
    assert "`--max-running-requests 128` (from 256)" in decode.remedy
    weights = only(
        analyze(
            write(
                tmp_path,
                oom_log([("model_executor/model_runner.py", "load_model")], before=SERVER_ARGS),
            )
        ),
        "cuda-oom",
    )
    assert "`--tp 4`" in weights.remedy and "quantized" in weights.remedy


def test_cuda_oom_phase_from_the_startup_phase_in_progress(tmp_path: Path) -> None:
    before = (
        "[2026-03-07 15:30:10 TP0] Load weight end. type=X, avail mem=20.00 GB, mem usage=58.00 GB.\n"
        "[2026-03-07 15:30:11 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=9.10 GB\n"
    )
    tail = "RuntimeError: CUDA error: out of memory"
    f = only(
        analyze(write(tmp_path, oom_log([("other/thing.py", "helper")], tail=tail, before=before))),
        "cuda-oom",
    )
    assert f.data["phase"] == "cuda-graph-capture"
    assert "capture-target in progress on TP0" in f.message


def test_cuda_oom_on_the_corpus() -> None:
    capture = only(analyze(str(CORPUS / "dev-040.log")), "cuda-oom")
    assert capture.data["phase"] == "cuda-graph-capture"
    assert capture.data["oom"] == {
        "gpu": 7,
        "tried_to_allocate_mib": 448.0,
    }  # capacity cut mid-number: not given
    ray = only(analyze(str(CORPUS / "dev-011.log")), "cuda-oom")
    assert ray.data["phase"] == "unknown"
    assert ray.data["exception_type"] == "ray.exceptions.RayTaskError(OutOfMemoryError)"
    assert "frames are needed" in ray.remedy  # says what would decide it


def test_retraction_is_not_a_cuda_oom() -> None:
    assert "cuda-oom" not in analyze(str(CORPUS / "dev-047.log")).fired()


# --------------------------------------------------------------------------- kv-pool-no-room


def test_kv_pool_no_room_computes_the_fraction() -> None:
    a = analyze(str(CORPUS / "dev-004.log"))
    f = a.root_cause
    assert f is not None and f.name == "kv-pool-no-room"
    assert f.count == 8 and f.ranks == [f"DP{i} TP{i}" for i in range(8)]
    assert f.message.startswith(
        "KV pool sizing failed on DP0 TP0–DP7 TP7 (8 times): the profiled token budget is "
        "-561981 (max_total_tokens=131072 requested)"
    )
    # 166.59 GB of weights out of 166.59 + 21.73 = 188.32 GB free before loading: f must exceed 0.885.
    assert f.data["weights_fraction"] == pytest.approx(166.59 / 188.32, abs=1e-4)
    assert f.data["suggested_mem_fraction_static"] == 0.94
    assert "0.885" in f.data["arithmetic"]
    assert "raise `--mem-fraction-static` to 0.94" in f.remedy
    assert "cuda-oom" not in a.fired() and "kv-cache-exhausted" not in a.fired()


def test_kv_pool_from_the_runtime_error(tmp_path: Path) -> None:
    log = (
        "[2026-03-07 15:30:10 TP0] Load weight begin. avail mem=78.31 GB\n"
        "[2026-03-07 15:30:18 TP0] Load weight end. type=Qwen3ForCausalLM, avail mem=16.71 GB, mem usage=61.60 GB.\n"
        "[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/model_executor/model_runner.py", line 1923, in init_memory_pool\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
        "self.server_args.mem_fraction_static=0.7\n"
    )
    f = only(analyze(write(tmp_path, log)), "kv-pool-no-room")
    assert f.data["current_mem_fraction_static"] == 0.7
    # weights 61.60 / 78.31 = 0.787 → + 0.05 → 0.84 (above the current 0.7).
    assert f.data["suggested_mem_fraction_static"] == 0.84
    assert "raise `--mem-fraction-static` to 0.84" in f.remedy
    assert "cuda-oom" not in analyze(write(tmp_path, log)).fired()


def test_kv_pool_positive_profile_is_a_warning_with_bytes_per_token(tmp_path: Path) -> None:
    log = (
        "[2026-03-07 15:29:50] server_args=ServerArgs(model_path='m', mem_fraction_static=0.85, max_total_tokens=500000)\n"
        "[2026-03-07 15:30:10] Load weight begin. avail mem=80.00 GB\n"
        "[2026-03-07 15:30:18] Load weight end. type=M, avail mem=64.00 GB, mem usage=16.00 GB.\n"
        "[2026-03-07 15:30:19] max_total_tokens=500000 is larger than the profiled value 400000. Use the profiled value instead.\n"
    )
    f = only(analyze(write(tmp_path, log)), "kv-pool-no-room")
    assert f.severity == Severity.WARNING
    # rest = 64 − 80 × 0.15 = 52 GB for 400000 tokens → 500000 tokens need (16 + 65) / 80 = 1.0125 → capped at 0.95.
    assert f.data["kv_bytes_per_token"] == round(52 / 400000 * (1 << 30))
    assert f.data["suggested_mem_fraction_static"] == 0.95


# --------------------------------------------------------------------------- host-oom

LOADING = (
    "[2026-03-07 15:30:10] Load weight begin. avail mem=78.31 GB\n"
    "Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:03<00:09,  3.01s/it]\n"
)


def test_bare_killed_while_loading_is_host_oom(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, LOADING + "Killed\n"))
    f = only(a, "host-oom")
    assert "while weights were loading" in f.message and f.data["loading"] is True
    assert a.root_cause is f and "dmesg" in f.remedy


def test_killed_after_sigquit_is_the_self_kill(tmp_path: Path) -> None:
    log = (
        LOADING
        + "[2026-03-07 15:30:19] Received sigquit from a child process. It usually means the child failed.\n"
        "Killed\n"
    )
    assert "host-oom" not in analyze(write(tmp_path, log)).fired()
    assert "host-oom" not in analyze(str(FIXTURES / "host-oom" / "good.log")).fired()


def test_host_oom_from_errno_12_and_exit_codes() -> None:
    a = analyze(str(CORPUS / "dev-034.log"))
    assert a.root_cause is not None and a.root_cause.name == "host-oom"
    assert "run_scheduler_process" in a.root_cause.message and a.root_cause.data["errno"] == 12
    # exit -3 is SIGQUIT from an assertion path, not the OOM killer
    assert "host-oom" not in analyze(str(CORPUS / "dev-050.log")).fired()


def test_host_oom_exit_minus_9(tmp_path: Path) -> None:
    log = (
        "[2025-03-07 10:00:01] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
        "[2025-03-07 10:00:01] Exit code: -9\n"
    )
    f = only(analyze(write(tmp_path, log)), "host-oom")
    assert f.data["exit_code"] == -9


def test_hicache_host_pool(tmp_path: Path) -> None:
    log = (
        f"[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/mem_cache/memory_pool_host.py", line 80, in __init__\n    raise ValueError(\n'
        "ValueError: Not enough host memory available. Requesting 200.00 GB but only have 120.50 GB free. "
        "Please reduce the size of the hierarchical cache.\n"
    )
    f = only(analyze(write(tmp_path, log)), "host-oom")
    assert f.data["hicache"] == {"requested_gb": 200.0, "free_gb": 120.5}
    assert "`--hicache-size 96`" in f.remedy


# --------------------------------------------------------------------------- kv-cache-exhausted


def test_retractions_are_one_finding() -> None:
    a = analyze(str(CORPUS / "dev-047.log"))
    f = only(a, "kv-cache-exhausted")
    assert f.severity == Severity.WARNING and a.root_cause is None
    assert f.ranks == [f"TP{i}" for i in range(8, 16)]
    assert f.data["retractions"] == 12
    assert "on TP8–TP15" in f.message


def test_pinned_usage_and_its_threshold() -> None:
    path = str(CORPUS / "dev-024.log")
    f = only(analyze(path), "kv-cache-exhausted")
    assert f.data["pinned_lines"] == 3 and "3 request(s) queue" in f.message
    assert f.data["suggested_max_running_requests"] == 3  # 4 running when the pool filled → 75 %
    assert (
        "kv-cache-exhausted"
        not in analyze(path, config={"kv-cache-exhausted": {"min_lines": 4}}).fired()
    )


def test_batch_oom_raised_is_an_error(tmp_path: Path) -> None:
    log = (
        f"[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/managers/scheduler.py", line 2996, in run_scheduler_process\n    scheduler.event_loop_normal()\n'
        f'  File "{SG}/mem_cache/common.py", line 300, in alloc_for_extend\n    raise RuntimeError(\n'
        "RuntimeError: Prefill out of memory. Try to lower your batch size.\n"
    )
    f = only(analyze(write(tmp_path, log)), "kv-cache-exhausted")
    assert f.severity == Severity.ERROR
    assert "cuda-oom" not in analyze(write(tmp_path, log)).fired()


# --------------------------------------------------------------------------- mamba-pool-exhausted / memory-leak-detected


def test_mamba_pool_remedy_from_slots_per_request() -> None:
    f = only(analyze(str(FIXTURES / "mamba-pool-exhausted" / "bad.log")), "mamba-pool-exhausted")
    assert f.data["max_mamba_cache_size"] == 102
    assert f.data["slots_per_request"] == pytest.approx(
        2.12, abs=0.01
    )  # mamba num 102 / 48 running
    assert f.data["suggested_max_running_requests"] == 43


def test_leak_is_not_a_pool_exhaustion() -> None:
    a = analyze(str(CORPUS / "dev-029.log"))
    f = only(a, "memory-leak-detected")
    assert a.root_cause is f
    assert f.data["pool"] == "token_to_kv_pool_allocator" and f.data["raised"] is True
    assert f.data["values"]["full_available_size"] == 6016
    assert "upgrade" in f.remedy
    assert (
        not {"mamba-pool-exhausted", "kv-pool-no-room", "kv-cache-exhausted", "cuda-oom"}
        & a.fired()
    )
    assert a.outcome == "crashed-while-serving"


def test_leak_printed_as_a_warning(tmp_path: Path) -> None:
    log = (
        "[2026-03-07 15:40:00 TP0] token_to_kv_pool_allocator memory leak detected! self.max_total_num_tokens=444877, "
        "available_size=444000, evictable_size=0, protected_size=0\n"
    )
    f = only(analyze(write(tmp_path, log)), "memory-leak-detected")
    assert f.data["raised"] is False and f.data["values"]["available_size"] == 444000


# --------------------------------------------------------------------------- families across releases (catalog)

SERVING = (
    "[2026-03-07 15:30:31] The server is fired up and ready to roll!\n"
    "[2026-03-07 15:31:06 TP0] Decode batch, #running-req: 48, #full token: 118012, full token usage: 0.40, "
    "mamba num: 96, mamba usage: 0.94, cuda graph: True, gen throughput (token/s): 3098.52, #queue-req: 21\n"
)


def _scheduler_tb(frames: list[tuple[str, str]], tail: str, rank: str = "TP0") -> str:
    body = "".join(f'  File "{SG}/{path}", line 100, in {func}\n    x = y()\n' for path, func in frames)
    return f"[2026-03-07 15:31:11 {rank}] Scheduler hit an exception: Traceback (most recent call last):\n{body}{tail}\n"


SERVING_LOOP = [
    ("managers/scheduler.py", "run_scheduler_process"),
    ("managers/scheduler.py", "event_loop_overlap"),
    ("managers/scheduler.py", "get_new_batch_prefill"),
    ("managers/schedule_batch.py", "alloc_req_slots"),
    ("mem_cache/memory_pool.py", "alloc"),
]


def test_mamba_ping_pong_assert_while_serving_is_the_pool_not_the_arguments(tmp_path: Path) -> None:
    """The message names a flag (`--mamba-full-memory-ratio`), but the structure says a state pool
    ran out while serving: not invalid-server-args at start-up."""
    tail = "AssertionError: Not enough space for mamba ping pong idx, try to increase --mamba-full-memory-ratio."
    a = analyze(write(tmp_path, SERVING + _scheduler_tb(SERVING_LOOP, tail)))
    f = only(a, "mamba-pool-exhausted")
    assert a.root_cause is f
    assert "invalid-server-args" not in a.fired()
    assert a.outcome == "crashed-while-serving"


def test_mamba_alloc_assert_without_a_message_is_the_pool(tmp_path: Path) -> None:
    """A bare assertion in the pool's allocation of a hybrid model, raised from the event loop, with
    no decode line before it: the frames decide, and the stage is serving."""
    log = (
        "[2026-03-07 15:30:18 TP0] Mamba Cache is allocated. max_mamba_cache_size: 64, conv_state size: 0.60GB, "
        "ssm_state size: 25.16GB \n" + _scheduler_tb(SERVING_LOOP, "AssertionError")
    )
    a = analyze(write(tmp_path, log))
    f = only(a, "mamba-pool-exhausted")
    assert f.data["max_mamba_cache_size"] == 64
    assert "invalid-server-args" not in a.fired()


def test_mamba_pool_size_from_the_assert_message(tmp_path: Path) -> None:
    tail = (
        "AssertionError: Not enough space for mamba cache, try to increase --mamba-full-memory-ratio or "
        "--max-mamba-cache-size. mid=None, self.mamba_pool.size=40, self.mamba_pool.available_size()=0, len(reqs)=4"
    )
    f = only(analyze(write(tmp_path, _scheduler_tb(SERVING_LOOP, tail))), "mamba-pool-exhausted")
    assert f.data["max_mamba_cache_size"] == 40
    assert f.data["suggested_max_running_requests"] == 36  # 40 slots, one per request, 90 %


CAPTURE = [
    ("managers/scheduler.py", "__init__"),
    ("model_executor/model_runner.py", "init_device_graphs"),
    ("model_executor/cuda_graph_runner.py", "__init__"),
]


@pytest.mark.parametrize(
    "error",
    [
        "CUDA error: an illegal memory access was encountered",
        "CUDA error: operation not permitted when stream is capturing",
    ],
)
def test_graph_capture_failure_that_is_not_an_oom(tmp_path: Path, error: str) -> None:
    tail = (
        f"Exception: Capture cuda graph failed: {error}\nPossible solutions:\n"
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
        "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
    )
    a = analyze(write(tmp_path, _scheduler_tb(CAPTURE, tail)))
    assert "cuda-oom" not in a.fired()
    assert "spec-draft-load-failure" not in a.fired()


@pytest.mark.parametrize(
    ("tail", "numbers"),
    [
        # torch < 2.1
        (
            ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity; "
            "75.12 GiB already allocated; 1.02 GiB free; 76.90 GiB reserved in total by PyTorch)"),
            {"gpu": 0, "total_capacity_gib": 79.35, "tried_to_allocate_mib": 2048.0, "free_mib": 1044.48},
        ),
        # torch 2.1 spelled it "capacty", and says "0 bytes" when nothing is free
        (
            (
                "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total "
                "capacty of 6.00 GiB of which 0 bytes is free."
            ),
            {"gpu": 0, "total_capacity_gib": 6.0, "tried_to_allocate_mib": 1740.8, "free_mib": 0.0},
        ),
        # ROCm
        (
            ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 512.00 MiB. GPU 3 has a total capacity "
            "of 191.98 GiB of which 128.00 MiB is free."),
            {"gpu": 3, "total_capacity_gib": 191.98, "tried_to_allocate_mib": 512.0, "free_mib": 128.0},
        ),
    ],
)
def test_cuda_oom_numbers_in_every_wording(tmp_path: Path, tail: str, numbers: dict[str, float]) -> None:
    a = analyze(write(tmp_path, oom_log([("model_executor/model_runner.py", "forward_decode")], tail=tail)))
    f = only(a, "cuda-oom")
    assert f.data["oom"] == numbers


def test_oom_fact_and_rule_read_the_same_numbers() -> None:
    from logparse.run.facts import _oom_fields
    from logparse.run.oom import oom_numbers

    text = OOM + "\n"
    assert _oom_fields(text) == oom_numbers(text) == {
        "gpu": 0, "total_capacity_gib": 79.1, "tried_to_allocate_mib": 1792.0, "free_mib": 1044.48}
    assert _oom_fields("Tried to allocate 2.00 GiB") == {}  # not an OOM message


def test_kv_pool_fraction_in_the_new_wording(tmp_path: Path) -> None:
    log = (
        "[2026-03-07 15:30:10 TP0] Load weight begin. avail mem=78.31 GB\n"
        "[2026-03-07 15:30:18 TP0] Load weight end. type=Qwen3ForCausalLM, avail mem=16.71 GB, mem usage=61.60 GB.\n"
        + _scheduler_tb([("mem_cache/pool_configurator.py", "__post_init__")],
                        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                        "Current value: mem_fraction_static=0.66")
    )
    a = analyze(write(tmp_path, log))
    f = only(a, "kv-pool-no-room")
    assert f.data["current_mem_fraction_static"] == 0.66
    assert "cuda-oom" not in a.fired()


DIED = ("RuntimeError: Rank 0 scheduler died during initialization (exit code: {code}). If exit code is -9 "
        "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.")


@pytest.mark.parametrize(("code", "fires"), [(-9, True), (-3, False), (137, True)])
def test_sigkill_exit_code_in_the_exception(tmp_path: Path, code: int, fires: bool) -> None:
    """The 0.5.10+ message names -9 in its hint whatever the exit code was: only the stated code counts."""
    log = (
        "[2026-03-07 15:30:19] Traceback (most recent call last):\n"
        f'  File "{SG}/entrypoints/engine.py", line 900, in _launch_subprocesses\n    raise RuntimeError(\n'
        + DIED.format(code=code) + "\n"
    )
    a = analyze(write(tmp_path, log))
    assert ("host-oom" in a.fired()) is fires
    if fires:
        assert only(a, "host-oom").data["exit_code"] == code


def test_old_kv_cache_pool_leak_wording(tmp_path: Path) -> None:
    log = "[2024-06-07 15:40:00 TP0] KV cache pool leak detected!available_size=123, self.max_total_num_tokens=456\n"
    f = only(analyze(write(tmp_path, log)), "memory-leak-detected")
    assert f.data["values"] == {"available_size": 123, "max_total_num_tokens": 456}
    assert f.data["raised"] is False


def test_request_slot_exhaustion_is_kv_cache_exhausted(tmp_path: Path) -> None:
    tail = ("RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for "
            "`--max-running-requests`. req_to_token_pool.available_size()=0, num_reqs=1, ")
    a = analyze(write(tmp_path, SERVING + _scheduler_tb(SERVING_LOOP[:4], tail)))
    f = only(a, "kv-cache-exhausted")
    assert f.severity == Severity.ERROR and "alloc_req_slots" in f.message
    assert "cuda-oom" not in a.fired()


def test_retract_abort_is_kv_cache_exhausted(tmp_path: Path) -> None:
    log = SERVING + "[2026-03-07 15:31:12 TP0] retract_decode: aborted last request 8c2f0e6b1d7a due to OOM\n"
    a = analyze(write(tmp_path, log))
    f = only(a, "kv-cache-exhausted")
    assert f.data["aborted_request"] == "8c2f0e6b1d7a" and f.data["running_when_full"] == 48
    assert "cuda-oom" not in a.fired()


def test_source_line_naming_the_oom_is_not_an_oom(tmp_path: Path) -> None:
    """A traceback whose code mentions `torch.OutOfMemoryError` but whose exception is another error."""
    log = _scheduler_tb(
        [("managers/scheduler.py", "event_loop_overlap")],
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ).replace("    x = y()\n", "    except torch.OutOfMemoryError:\n")
    assert "except torch.OutOfMemoryError:" in log
    assert "cuda-oom" not in analyze(write(tmp_path, log)).fired()


def test_assert_source_naming_the_mamba_pool_is_not_an_exhaustion(tmp_path: Path) -> None:
    """Python 3.13 prints an assert's whole statement as source; the exception is another error."""
    log = _scheduler_tb(
        [("managers/scheduler.py", "event_loop_overlap"), ("mem_cache/memory_pool.py", "alloc")],
        "RuntimeError: CUDA error: an illegal memory access was encountered",
    ).replace(
        "in alloc\n    x = y()\n",
        'in alloc\n    ), f"Not enough space for mamba cache, try to increase --mamba-full-memory-ratio"\n',
    )
    assert 'f"Not enough space for mamba cache' in log
    assert "mamba-pool-exhausted" not in analyze(write(tmp_path, log)).fired()


def test_every_mamba_pool_wording_is_the_pool_never_rejected_arguments(tmp_path: Path) -> None:
    # Frameless lines whose words name a flag (`--mamba-full-memory-ratio`): the family decides, and
    # a rank-tagged line is a scheduler's, never the argument checks'.
    from tests.conftest import analyze_text
    for n, text in enumerate([
        ("[2026-03-07 15:31:11 TP0] AssertionError: Not enough space for mamba ping pong idx, try to increase "
         "--mamba-full-memory-ratio."),
        ("RuntimeError: Not enough space for decoupled drafter mamba rollback checkpoints. Try to increase "
         "--mamba-full-memory-ratio or --max-mamba-cache-size. request_id=7f3a, window=4, mamba_pool_size=96, "
         "mamba_available_size=0"),
    ]):
        a = analyze_text(tmp_path, text + "\n", name=f"m{n}.log")
        assert a.root_cause is not None and a.root_cause.name == "mamba-pool-exhausted", a.fired()
        assert "invalid-server-args" not in a.fired()
