"""Native-crash dumps (Python faulthandler after a fatal signal) read by structure: the crashing
thread is the one headed `Current thread` after a `Fatal Python error:` line, its crashing frame is
the FIRST one listed, and the process is dead. Second real occurrences and near misses for
tests/test_native_dumps.py."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

# sgl-project/sglang#3778 (0.4.3, TP8): the fatal line and the dump header as in its dev case g-036,
# then the frames of the other process's dump of the same report (line numbers of that release).
_ISSUE_3778 = """Fatal Python error: Segmentation fault

Current thread 0x00007c21b539c1c0 (most recent call first):
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 351 in ncclCommInitRank
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/distributed/device_communicators/pynccl.py", line 108 in __init__
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/distributed/parallel_state.py", line 233 in __init__
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/distributed/parallel_state.py", line 890 in init_model_parallel_group
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/distributed/parallel_state.py", line 1055 in initialize_model_parallel
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/model_executor/model_runner.py", line 262 in init_torch_distributed
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/model_executor/model_runner.py", line 187 in __init__
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/managers/tp_worker.py", line 68 in __init__
  File "/home/ubuntu/sglang/lib/python3.10/site-packages/sglang/srt/managers/tp_worker_overlap_thread.py", line 63 in __init__
  File "/home/ubun
"""

# sgl-project/sglang#3745 (2x8 H800): the scheduler's watchdog thread is a bystander; the crashing
# thread is in torch.distributed.all_reduce (no NCCL binding frame): a native crash, not NCCL's.
_ISSUE_3745 = """Fatal Python error: Segmentation fault

Thread 0x00007f2e93fff640 (most recent call first):
  File "/XXXX/sglang/python/sglang/srt/managers/scheduler.py", line 462 in watchdog_thread
  File "/usr/lib/python3.10/threading.py", line 953 in run
  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner
  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap

Current thread 0x00007f2ea0870640 (most recent call first):
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/XXXX/sglang/python/sglang/srt/distributed/parallel_state.py",
"""




def test_second_release_segfault_in_comm_init_is_an_nccl_error_at_startup(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _ISSUE_3778)
    assert a.root_cause is not None and a.root_cause.name == "nccl-error"
    assert a.root_cause.data["during"] == "communicator-init"
    assert "Segmentation fault" in a.root_cause.message
    assert a.root_cause.evidence[0].line == 1  # the fatal line is evidence too
    assert a.outcome == "crashed-at-startup"
    assert "scheduler-crash" not in a.fired()


def test_a_snapshot_dump_without_a_fatal_line_is_no_crash(tmp_path: Path) -> None:
    # The same thread listing with no `Fatal Python error:` before it (a SIGUSR1 / on-demand dump of a
    # process waiting in ncclCommInitRank): the process did not die.
    a = analyze_text(tmp_path, _ISSUE_3778.split("\n", 2)[2])
    assert "nccl-error" not in a.fired() and "scheduler-crash" not in a.fired()


def test_a_bystander_thread_inside_the_binding_is_not_the_crash(tmp_path: Path) -> None:
    # The NCCL frames belong to another thread (`Thread 0x…`); the crashing thread is elsewhere.
    lines = _ISSUE_3778.splitlines()
    bystander = ["Fatal Python error: Segmentation fault", "", lines[2].replace("Current thread", "Thread"),
                 *lines[3:6], "", "Current thread 0x00007f2ea0870640 (most recent call first):",
                 '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce',
                 ""]
    a = analyze_text(tmp_path, "\n".join(bystander))
    assert "nccl-error" not in a.fired()


def test_native_crash_outside_nccl_is_a_crash_at_its_first_listed_frame(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _ISSUE_3745)
    assert "nccl-error" not in a.fired()
    f = a.root_cause
    assert f is not None and f.name == "scheduler-crash"
    assert f.data["native"] is True and f.data["frame"] == "distributed_c10d.py:2501 in all_reduce"
    assert f.data["signal"] == "Fatal Python error: Segmentation fault"
    # The bystander watchdog thread is not reported as a second crash.
    assert not any(x.name == "scheduler-crash" and x.data.get("frame", "").startswith("scheduler.py")
                   for x in a.findings)
