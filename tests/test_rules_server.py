"""Server family: port-in-use, model-load-failure, warmup-failed, invalid-server-args,
health-check-failed, scheduler-crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from tests.conftest import CORPUS
from tests.conftest import analyze_text as run
from tests.conftest import findings_named as named

REPO = Path(__file__).resolve().parents[1]
SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


# --------------------------------------------------------------------------- port-in-use


def test_internal_port_conflict_names_the_port() -> None:
    a = analyze(str(REPO / "fixtures/rules/port-in-use/bad.log"))
    [f] = named(a, "port-in-use")
    assert f.data["conflict"] == {"dist_init_port": 30005}
    assert f.data["ports"]["nccl_port"] == 30003
    assert ":30005" in f.remedy and "--port 30100" in f.remedy
    assert {"scheduler-crash", "invalid-server-args"}.isdisjoint(a.fired())


def test_zmq_address_in_use(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            f'  File "{SG}/utils/common.py", line 1932, in get_zmq_socket\n'
            "    socket.bind(endpoint)\n"
            "zmq.error.ZMQError: Address already in use (addr='tcp://10.0.0.3:5757')\n")
    a = run(tmp_path, text)
    [f] = named(a, "port-in-use")
    assert f.data["ports"] == {"port": 5757}
    assert "5757" in f.remedy


# --------------------------------------------------------------------------- model-load-failure


def test_unknown_model_type_from_a_cut_transformers_frame() -> None:
    a = analyze(str(CORPUS / "dev-018.log"))
    [f] = named(a, "model-load-failure")
    assert f.data["kind"] == "unknown-model-type"
    assert "transformers" in f.remedy
    assert a.root_cause is f


def test_architecture_not_supported_points_at_the_ignored_import(tmp_path: Path) -> None:
    text = ("[2025-03-10 14:17:52 TP0] Ignore import error when loading sglang.srt.models.deepseek_v2. No module named "
            "'deep_gemm'\n"
            "[2025-03-10 14:17:53 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 1999, in run_scheduler_process\n'
            "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
            f'  File "{SG}/models/registry.py", line 65, in resolve_model_cls\n'
            "    return self._raise_for_unsupported(architectures)\n"
            "ValueError: Model architectures ['DeepseekV3ForCausalLM'] are not supported for now. Supported "
            "architectures: dict_keys(['LlamaForCausalLM'])\n\n")
    a = run(tmp_path, text)
    [f] = named(a, "model-load-failure")
    assert f.data["kind"] == "architecture"
    assert f.data["ignored_imports"] == [{"line": 1, "module": "sglang.srt.models.deepseek_v2"}]
    assert "line 1" in f.remedy and "deep_gemm" in f.remedy
    assert "scheduler-crash" not in a.fired()


def test_gated_repo(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct\n"
            "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-67)\n"
            "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.\n")
    a = run(tmp_path, text)
    [f] = named(a, "model-load-failure")
    assert f.data["kind"] == "auth"
    assert "HF_TOKEN" in f.remedy


@pytest.mark.parametrize("dev", ["dev-001", "dev-008", "dev-042"])
def test_not_a_model_load_failure(dev: str) -> None:
    assert "model-load-failure" not in analyze(str(CORPUS / f"{dev}.log")).fired()


# --------------------------------------------------------------------------- warmup-failed


def test_proxy_answered_the_warmup() -> None:
    a = analyze(str(CORPUS / "dev-025.log"))
    [f] = named(a, "warmup-failed")
    assert f.data["warmup_http_status"] == 503 and f.data["proxy"] is True
    assert "no_proxy=127.0.0.1,localhost" in f.remedy
    assert "health-check-failed" not in a.fired()


def test_warmup_failure_without_proxy(tmp_path: Path) -> None:
    text = ("[2026-03-02 10:00:01] Initialization failed. warmup error: Traceback (most recent call last):\n"
            f'  File "{SG}/entrypoints/http_server.py", line 1290, in _wait_and_warmup\n'
            '    assert res.status_code == 200, f"{res=}, {res.text=}"\n'
            "AssertionError: res=<Response [500]>, res.text='Internal Server Error'\n")
    a = run(tmp_path, text)
    [f] = named(a, "warmup-failed")
    assert f.data["proxy"] is False and f.data["warmup_http_status"] == 500
    assert "no_proxy" not in f.remedy


# --------------------------------------------------------------------------- invalid-server-args


def test_chunked_prefill_vs_page_size_is_computed() -> None:
    a = analyze(str(REPO / "fixtures/rules/invalid-server-args/bad.log"))
    [f] = named(a, "invalid-server-args")
    assert "--chunked-prefill-size 960" in f.remedy
    assert "scheduler-crash" not in a.fired()


def test_argparse_error(tmp_path: Path) -> None:
    text = ("usage: launch_server.py [-h] --model-path MODEL_PATH [--tp-size TP_SIZE]\n"
            "launch_server.py: error: argument --tp-size: invalid int value: 'eight'\n")
    a = run(tmp_path, text)
    [f] = named(a, "invalid-server-args")
    assert "--tp-size" in f.remedy
    assert a.root_cause is f


def test_context_length_check(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            f'  File "{SG}/server_args.py", line 724, in __post_init__\n'
            "    self._handle_model_specific_adjustments()\n"
            "ValueError: Warning: User-specified context_length (262144) is greater than the derived context_length "
            "(131072). This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may "
            "differ from max_position_embeddings in the model's config. To allow overriding this maximum, set the env var "
            "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1\n")
    a = run(tmp_path, text)
    [f] = named(a, "invalid-server-args")
    assert "--context-length 131072" in f.remedy


# --------------------------------------------------------------------------- health-check-failed


def test_health_checks_are_grouped() -> None:
    a = analyze(str(REPO / "fixtures/rules/health-check-failed/bad.log"))
    [f] = named(a, "health-check-failed")
    assert f.data["count"] == 3 and f.data["timeout_s"] == 20
    assert f.data["last_heartbeat"] == "15:39:11"
    assert "SGLANG_HEALTH_CHECK_TIMEOUT" in f.remedy


# --------------------------------------------------------------------------- scheduler-crash


@pytest.mark.parametrize("dev", ["dev-008", "dev-012", "dev-028", "dev-045", "dev-046", "dev-048", "dev-050"])
def test_unexplained_crashes_fall_back(dev: str) -> None:
    a = analyze(str(CORPUS / f"{dev}.log"))
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"


def test_cut_traceback_says_what_would_decide() -> None:
    a = analyze(str(CORPUS / "dev-028.log"))
    [f] = named(a, "scheduler-crash")
    assert f.data["cut"] is True and f.ranks == ["TP3"]
    assert "complete log of TP3" in f.remedy


def test_exit_code_minus_3_is_not_the_oom_killer() -> None:
    a = analyze(str(CORPUS / "dev-050.log"))
    [f] = named(a, "scheduler-crash")
    assert f.data["exit_code"] == -3
    assert "SIGQUIT" in f.message
    assert "host-oom" not in a.fired()


def test_exception_type_message_and_frame(tmp_path: Path) -> None:
    text = ("[2026-03-02 10:00:01 TP5] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 3306, in run_scheduler_process\n'
            "    scheduler.event_loop_overlap()\n"
            f'  File "{SG}/mem_cache/radix_cache.py", line 412, in cache_finished_req\n'
            "    assert len(kv_indices) == len(token_ids)\n"
            "AssertionError: 1023 != 1024\n\n"
            "[2026-03-02 10:00:01] SIGQUIT received. signum=3, frame=<frame at 0x7f0>. It usually means one child failed.\n")
    a = run(tmp_path, text)
    [f] = named(a, "scheduler-crash")
    assert f.data["exception"] == "AssertionError"
    assert f.data["frame"] == "radix_cache.py:412 in cache_finished_req"
    assert "1023 != 1024" in f.message


def test_same_crash_on_every_rank_is_one_finding(tmp_path: Path) -> None:
    block = ("[2026-03-02 10:00:01 TP{r}] Scheduler hit an exception: Traceback (most recent call last):\n"
             f'  File "{SG}/managers/scheduler.py", line 3306, in run_scheduler_process\n'
             "    scheduler.event_loop_overlap()\n"
             f'  File "{SG}/managers/scheduler.py", line 1101, in event_loop_overlap\n'
             "    batch_result = self.run_batch(batch)\n"
             "RuntimeError: unexpected state {r}0\n\n")
    a = run(tmp_path, "".join(block.format(r=r) for r in range(4)))
    crashes = named(a, "scheduler-crash")
    assert len(crashes) == 1
    assert crashes[0].ranks == ["TP0", "TP1", "TP2", "TP3"]


def test_consequence_tracebacks_are_not_crashes(tmp_path: Path) -> None:
    text = ("[2026-03-02 10:00:01] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
            "[2026-03-02 10:00:01] Exit code: -9\n"
            "Traceback (most recent call last):\n"
            f'  File "{SG}/entrypoints/engine.py", line 1277, in _wait_for_scheduler_ready\n'
            "    data = scheduler_pipe_readers[i].recv()\n"
            "EOFError\n")
    a = run(tmp_path, text)
    assert "scheduler-crash" not in a.fired()


def test_uvicorn_bind_error_is_the_http_port(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --port 30000\n"
            "[2026-02-26 16:40:59] INFO:     Started server process [40311]\n"
            "[2026-02-26 16:40:59] INFO:     Waiting for application startup.\n"
            "[2026-02-26 16:40:59] INFO:     Application startup complete.\n"
            "[2026-02-26 16:40:59] ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
            "address already in use\n"
            "[2026-02-26 16:40:59] INFO:     Waiting for application shutdown.\n")
    a = run(tmp_path, text)
    [f] = named(a, "port-in-use")
    assert f.data["ports"] == {"port": 30000}
    assert "ss -ltnp | grep :30000" in f.remedy and "--port 30010" in f.remedy


# --------------------------------------------------------------------------- structure, not words

_CONSTRAINT_WORDED = ("[2026-03-07 15:31:12 TP0] AssertionError: radix tree lock count went negative; try "
                      "--disable-radix-cache")
_DECODE = ("[2026-03-07 15:31:10 TP0] Decode batch, #running-req: 32, #token: 25316, token usage: 0.06, cuda graph: "
           "True, gen throughput (token/s): 2876.45, #queue-req: 0")
_SCHED_FRAME = ('  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3183, in '
                "run_scheduler_process")


def _log(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


def test_a_constraint_worded_assertion_while_serving_is_not_rejected_arguments(tmp_path: Path) -> None:
    a = run(tmp_path, _log("[2026-03-07 15:30:31] The server is fired up and ready to roll!", _DECODE,
                           _CONSTRAINT_WORDED))
    assert "invalid-server-args" not in a.fired()
    assert a.outcome != "crashed-at-startup"


def test_the_same_frameless_assertion_at_startup_is_rejected_arguments(tmp_path: Path) -> None:
    # Printed by the main process (no rank tag, no process header) before any scheduler started.
    main = _CONSTRAINT_WORDED.replace(" TP0]", "]")
    a = run(tmp_path, _log("[2026-03-07 15:30:01] server_args=ServerArgs(model_path='m', tp_size=1)", main))
    (f,) = named(a, "invalid-server-args")
    assert "--disable-radix-cache" in f.message


def test_a_constraint_worded_assertion_of_a_scheduler_rank_is_not_rejected_arguments(tmp_path: Path) -> None:
    # A TP rank printed it: a scheduler process exists, so the argument checks (main process) passed.
    a = run(tmp_path, _log("[2026-03-07 15:30:01 TP0] Load weight begin. avail mem=78.12 GB", _CONSTRAINT_WORDED))
    assert "invalid-server-args" not in a.fired()
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"


def test_an_exception_without_a_message_is_not_searched_for_an_empty_string(tmp_path: Path) -> None:
    a = run(tmp_path, _log("[2025-11-05 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
                           _SCHED_FRAME, "    scheduler = Scheduler(", "RuntimeError"))
    (f,) = named(a, "scheduler-crash")
    assert "''" not in f.remedy and "no message" in f.message


def test_a_cut_tracing_record_needs_its_error_level(tmp_path: Path) -> None:
    cut = "2025-11-05T01:56:54.292138Z ERROR scheduler.run_sch\n"
    (f,) = named(run(tmp_path, cut), "scheduler-crash")
    assert f.data["cut"] is True and f.data["target"] == "scheduler.run_sch"
    info = cut.replace(" ERROR ", "  INFO ")
    assert "scheduler-crash" not in run(tmp_path, info, name="info.log").fired()


def test_no_multimodal_processor_is_a_model_load_failure() -> None:
    # NVIDIA/dgx-spark-playbooks#68 (dev/i-023): SGLang 0.5.3's registry has no processor for Phi-4-MM.
    a = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/rules/model-load-failure/bad-processor.log"))
    [f] = named(a, "model-load-failure")
    assert a.root_cause is f
    assert f.data["kind"] == "processor"
    assert "Phi4MMForCausalLM" in f.remedy and "upgrade SGLang" in f.remedy
    assert "scheduler-crash" not in a.fired()


@pytest.mark.parametrize("message", [
    "ValueError: No image processor found for architecture: ['LlavaQwenForCausalLM']",  # 0.3–0.4.5
    ("ValueError: Cannot find corresponding multimodal processor registered in sglang for model type "
     "`clip_vision_model`"),  # models/llava.py
])
def test_processor_registry_wordings_of_other_releases(tmp_path: Path, message: str) -> None:
    text = ("[2025-04-01 10:00:00] Traceback (most recent call last):\n"
            f'  File "{SG}/managers/tokenizer_manager.py", line 210, in __init__\n'
            "    self.mm_processor = get_mm_processor(\n"
            f"{message}\n")
    [f] = named(run(tmp_path, text), "model-load-failure")
    assert f.data["kind"] == "processor"


def test_no_processor_points_at_the_processor_import_that_was_skipped(tmp_path: Path) -> None:
    # The registry logs a processor module's import error and skips it; the lookup fails later.
    text = ("[2025-10-25 10:00:00] Ignore import error when loading sglang.srt.multimodal.processors.mimo_v2: "
            "No module named 'torchcodec'\n"
            "[2025-10-25 10:00:05] ValueError: No processor registered for architecture: ['MiMoV2ForCausalLM'].\n")
    [f] = named(run(tmp_path, text), "model-load-failure")
    assert f.data["kind"] == "processor"
    assert f.data["ignored_imports"] == [{"line": 1, "module": "sglang.srt.multimodal.processors.mimo_v2"}]
    assert "torchcodec" in f.remedy and "skip that processor" in f.remedy
