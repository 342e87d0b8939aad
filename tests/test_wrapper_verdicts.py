"""A wrapper's verdict on the server's start-up (run/verdicts.py) is readiness and outcome evidence,
and the traceback it raises is the wrapper's, not the server's crash: not ready in time →
startup-stalled and ready False; the server process died → crashed-at-startup and ready False.
A traceback that says (or follows a record saying) the real error is shown elsewhere is a
consequence, never the root.

The exception texts are the printed forms of the wrappers' own strings: SGLang's test_utils
`popen_launch_server` and `srt/entrypoints/http_server_engine.launch_server_process`,
`sglang.utils.wait_for_server`, slime's `_wait_server_healthy`, verl's `launch_server_process`,
vLLM's engine core client, Xinference's worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import analyze_text, findings_named

# /health_generate answered 503 while the wrapper waits (dev h-034's shape).
_WAITING = (
    '[2026-03-26 08:44:08] INFO: 127.0.0.1:38764 - "GET /health_generate HTTP/1.1" 503 Service Unavailable\n'
    '[2026-03-26 08:44:18] INFO: 127.0.0.1:46050 - "GET /health_generate HTTP/1.1" 503 Service Unavailable\n'
)

NOT_READY = [
    "TimeoutError: Server failed to start within the timeout period.",  # test_utils, http_server_engine
    "TimeoutError: Server failed to start within the timeout period",  # without the full stop (CI excerpt)
    "TimeoutError: Server did not become ready within timeout period",  # sglang.utils.wait_for_server
    "TimeoutError: Server failed to become healthy within timeout period",  # verl
]


@pytest.mark.parametrize("verdict", NOT_READY)
def test_a_wrappers_not_ready_verdict_is_a_stalled_start_not_a_crash(tmp_path: Path, verdict: str) -> None:
    a = analyze_text(tmp_path, _WAITING + verdict + "\n")
    assert a.root_cause is not None and a.root_cause.name == "startup-stalled"
    assert "scheduler-crash" not in a.fired()
    assert a.facts.get("ready") is False
    assert a.outcome == "hung"


def test_verls_logged_not_healthy_line_is_a_verdict(tmp_path: Path) -> None:
    text = (_WAITING + "2026-03-26 08:52:40,120 - verl - ERROR - Server in http://10.0.0.12:30000 failed to "
            "become healthy within timeout period\n")
    a = analyze_text(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "startup-stalled"
    assert a.facts.get("ready") is False


_SLIME = (
    "ray::SGLangEngine.init()\n"
    '  File "/root/slime/slime/backends/sglang_utils/sglang_engine.py", line 180, in _init_normal\n'
    "    self.process = launch_server_process(ServerArgs(**server_args_dict))\n"
    '  File "/root/slime/slime/backends/sglang_utils/sglang_engine.py", line 95, in _wait_server_healthy\n'
    '    raise Exception("Server process terminated unexpectedly.")\n'
    "Exception: Server process terminated unexpectedly.\n"
)
_SGLANG_ENGINE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/rl/train.py", line 40, in <module>\n'
    "    engine = HttpServerEngineAdapter(**kwargs)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/entrypoints/http_server_engine.py", line 40, in launch_server_process\n'
    '    raise Exception("Server process terminated unexpectedly.")\n'
    "Exception: Server process terminated unexpectedly.\n"
)
_VERL = (
    "Traceback (most recent call last):\n"
    '  File "/workspace/verl/verl/workers/rollout/sglang_rollout/http_server_engine.py", line 140, in launch_server_process\n'
    '    raise RuntimeError("Server process terminated unexpectedly during startup")\n'
    "RuntimeError: Server process terminated unexpectedly during startup\n"
)
DIED = {
    "slime": _SLIME,
    "sglang-http-server-engine": _SGLANG_ENGINE,
    "verl": _VERL,
    "test-utils-0.4": "Exception: Server unexpectedly exits (return_code=-9). Usually there will be error logs "
                      "describing the cause far above this line.\n",
    "test-utils-0.5": "Exception: Server process exited with code 1. Check server logs for errors.\n",
    "test-utils-0.5-poll": "Exception: Server unexpectedly exited (return_code=-6). Check server logs for errors.\n",
}


@pytest.mark.parametrize("text", DIED.values(), ids=list(DIED))
def test_a_wrapper_saying_the_server_died_is_a_start_up_crash(tmp_path: Path, text: str) -> None:
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired() and "startup-stalled" not in a.fired()
    assert a.root_cause is None  # the wrapper does not know why; its cause is not in the excerpt
    assert a.outcome == "crashed-at-startup"
    assert a.facts.get("ready") is False


def test_the_servers_own_crash_stays_the_root_and_the_verdict_is_its_consequence(tmp_path: Path) -> None:
    text = (
        "[2026-05-31 10:00:00 TP0] Load weight begin. avail mem=78.31 GB\n"
        "[2026-05-31 10:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2500, in run_scheduler_process\n'
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)\n"
        "ZeroDivisionError: division by zero\n"
        + _VERL
    )
    a = analyze_text(tmp_path, text)
    root = a.root_cause
    assert root is not None and root.name == "scheduler-crash" and root.first_line == 2
    assert len(findings_named(a, "scheduler-crash")) == 1
    assert {6, 9} <= set(root.data["consequence_lines"])  # the wrapper's traceback, under the root
    assert a.outcome == "crashed-at-startup" and a.facts.get("ready") is False


def test_a_died_verdict_after_the_server_was_ready_is_no_start_up_verdict(tmp_path: Path) -> None:
    # slime's cache-flush wait runs after /health_generate answered: the server was up, then died.
    text = "[2026-05-31 10:01:00] The server is fired up and ready to roll!\n" + _SLIME
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired()
    assert a.facts.get("ready") is True
    assert a.outcome == "crashed-while-serving"


# --------------------------------------------------------------------------- shown elsewhere


def test_a_traceback_after_a_record_saying_see_above_is_a_consequence(tmp_path: Path) -> None:
    # Xinference's worker logs the launch failure, then its own (cut) traceback of it (dev i-016).
    text = (
        "2025-06-30 06:18:36,801 xinference.core.worker 113 ERROR    [request b087e27a-55b4-11f0-93e7-7ac282aee84d] "
        "Leave launch_builtin_model, error: [address=0.0.0.0:43399, pid=1793] Initialization failed. Please see "
        "the error messages above., elapsed time: 17 s\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/xinference/core/utils.py", line 93, in wrapped\n'
        "    ret = await func(*args, **kwargs)\n"
        '  File "/usr/local/lib/python3.10/dist-packages/xinference/core/worker.py", line 1114, in launch_builtin_model\n'
        "    await model_ref.load()\n"
    )
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired() and a.root_cause is None
    assert a.outcome == "crashed-at-startup" and a.facts.get("ready") is False


def test_vllms_see_root_cause_above_is_an_echo(tmp_path: Path) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/utils.py", line 690, in wait_for_engine_startup\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
    )
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired()
    assert a.outcome == "crashed-at-startup"



def test_a_verdict_followed_by_a_retry_that_came_up_decides_nothing(tmp_path: Path) -> None:
    # sglang test_utils (0.5.x, CI): an offline launch that died is retried online, and comes up.
    text = (
        "CI_OFFLINE: Launching server HF_HUB_OFFLINE=1 model=meta-llama/Llama-3.1-8B-Instruct\n"
        "CI_OFFLINE: Offline launch failed (Server process exited with code 1), retrying with online mode...\n"
        "CI_OFFLINE: Launching server HF_HUB_OFFLINE=0 model=meta-llama/Llama-3.1-8B-Instruct\n"
        "[2026-03-26 08:46:02] The server is fired up and ready to roll!\n"
        "CI_OFFLINE: Online retry succeeded\n"
    )
    a = analyze_text(tmp_path, text)
    assert a.facts.get("ready") is True
    assert a.outcome == "ready"
