"""An excerpt cut at both ends that holds one traceback's two halves in the wrong order (its tail —
the exception — pasted first, its head — `Scheduler hit an exception` and the first frames — last):
the process died where the head is, so what was pasted between came before the failure (dev d-037:
a request rejected for its length, then the scheduler's TypeError while serving)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

_TAIL = (
    "    if req.sampling_params.max_new_tokens > 0:\n"
    "TypeError: '>' not supported between instances of 'NoneType' and 'int'\n"
)
_BETWEEN = (
    "[2025-03-03 06:49:28 TP0] Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). "
    "Use a shorter input or enable --allow-auto-truncate.\n"
)
_HEAD = (
    "[2025-03-03 06:49:28 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1796, in run_scheduler_process\n'
)


def test_a_traceback_pasted_tail_first_is_one_failure_where_its_head_is(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _TAIL + _BETWEEN + _HEAD)
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome == "crashed-while-serving" and a.facts.get("ready") is True
    # Not rotated when the excerpt goes on after the head: the tail came first.
    later = "[2025-03-03 06:49:30] Received sigquit from a child process. It usually means the child failed.\n"
    b = analyze_text(tmp_path, _TAIL + _BETWEEN + _HEAD + later, name="y.log")
    assert b.outcome != "crashed-while-serving"
