"""A refused /flush_cache with requests in flight is serving evidence (issue 9).

`Cache not flushed because there are pending requests. #queue-req: {}, #running-req: {}` (the one
wording of every release in grammars/source-messages/sglang.txt) is printed when a client asks to
flush while requests are queued or running: the server was up and someone's request was in flight.
Real occurrence: fixtures/corpus/dev/e-001 (verl's Ray WorkerDict, then a scheduler crash).
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from tests.conftest import FIXTURES, analyze_text

_CRASH = (
    "[2025-05-26 16:01:06 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 661, in event_loop_overlap\n'
    "    batch = self.get_next_batch_to_run()\n"
)




def test_dev_case_crashed_while_serving() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "e-001.log"))
    assert a.outcome == "crashed-while-serving" and a.facts.get("ready") is True


def test_queued_request_counts_too(tmp_path: Path) -> None:
    line = "[2025-05-26 16:01:05 TP0] Cache not flushed because there are pending requests. #queue-req: 3, #running-req: 0\n"
    assert analyze_text(tmp_path, line + _CRASH).outcome == "crashed-while-serving"


def test_refusal_without_its_counts_says_nothing_of_serving(tmp_path: Path) -> None:
    # Near miss: the line cut before its counts does not show a request in flight.
    line = "[2025-05-26 16:01:05 TP0] Cache not flushed because there are pending requests.\n"
    assert analyze_text(tmp_path, line + _CRASH).outcome is None


def test_crash_in_the_loop_without_it_stays_undecided(tmp_path: Path) -> None:
    # Near miss: the same crash with nothing before it may have been the warmup batch.
    assert analyze_text(tmp_path, _CRASH).outcome is None
