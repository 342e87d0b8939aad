"""custom-allreduce-unavailable's severity follows the structure, not the words (issue 9).

`peer access is not supported between these two devices` appears in two families:
- 0.1.x–0.2.x: the kernel's CUDACHECK prints `Failed: Cuda error …/custom_all_reduce.cuh:307 '…'` and
  exits the process (fixtures/rules/custom-allreduce-unavailable/bad-2.log, real): an error;
- 0.4.6–0.5.23: `Setup Custom allreduce failed with {e}. To silence this warning, specify
  --disable-custom-all-reduce explicitly.` (formats §4 W18), a WARNING after which SGLang falls back
  to NCCL and goes on starting: info, never a root cause.
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Severity
from tests.conftest import FIXTURES, analyze_text

_W18 = ("[2025-06-01 10:00:00 TP{r}] Setup Custom allreduce failed with CUDA error: peer access is not supported "
        "between these two devices. To silence this warning, specify --disable-custom-all-reduce explicitly.\n")
_GOES_ON = "[2025-06-01 10:00:01 TP{r}] Load weight begin. avail mem=78.31 GB\n"




def _ar(a):  # type: ignore[no-untyped-def]
    return [f for f in a.findings if f.name == "custom-allreduce-unavailable"]


def test_setup_warning_with_peer_access_is_a_fallback(tmp_path: Path) -> None:
    text = "".join(_W18.format(r=r) for r in (0, 1)) + "".join(_GOES_ON.format(r=r) for r in (0, 1))
    a = analyze_text(tmp_path, text)
    assert a.root_cause is None and a.outcome == "incomplete"
    assert _ar(a) and all(f.severity == Severity.INFO for f in _ar(a))


def test_old_kernel_line_kills_the_process() -> None:
    a = analyze(str(FIXTURES / "rules" / "custom-allreduce-unavailable" / "bad-2.log"))
    assert a.root_cause is not None and a.root_cause.name == "custom-allreduce-unavailable"
    assert a.outcome == "crashed-at-startup"


def test_peer_access_exception_after_the_warning_is_still_an_error(tmp_path: Path) -> None:
    # Near miss: the warning, then a scheduler that died on the same CUDA error: the traceback is the error.
    text = _W18.format(r=0) + (
        "[2025-06-01 10:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process\n'
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)\n"
        "RuntimeError: CUDA error: peer access is not supported between these two devices\n")
    a = analyze_text(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "custom-allreduce-unavailable"
    assert a.outcome == "crashed-at-startup"


def test_old_kernel_line_alone_is_a_startup_crash(tmp_path: Path) -> None:
    # The 0.1.x line with nothing around it (a reporter's one-line excerpt): the kernel prints it while
    # setting up its buffers, which only happens while the server starts.
    line = ("Failed: Cuda error /tmp/pip-req-build-2ar9y_eb/csrc/custom_all_reduce.cuh:307 "
            "'peer access is not supported between these two devices'\n")
    a = analyze_text(tmp_path, line)
    assert a.root_cause is not None and a.root_cause.name == "custom-allreduce-unavailable"
    assert a.outcome == "crashed-at-startup"
