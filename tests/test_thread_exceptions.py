"""An exception that ended a thread is not a process's death: Python prints it (threading.excepthook,
outermost frame threading.py `_bootstrap_inner`) and the process goes on. 0.2.x's warmup thread
(`_wait_and_warmup` raising on `res.json()`, dev g-001 / f-001) is reported as `warmup-failed` with no
outcome; the 0.3+ warmup failure (`Initialization failed. warmup error: …`, then SGLang kills its own
process tree) stays a start-up crash."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Frame, Traceback
from logparse.run.stage import thread_exception

REPO = Path(__file__).resolve().parents[1]


def _tb(*frames: tuple[str, str]) -> Traceback:
    return Traceback(line=1, frames=tuple(Frame(path=p, lineno=1, func=f) for p, f in frames))


def test_thread_exception_is_read_from_the_outermost_frame() -> None:
    assert thread_exception(_tb(("/usr/lib/python3.11/threading.py", "_bootstrap_inner"),
                                ("/usr/lib/python3.11/threading.py", "run"),
                                ("/site-packages/sglang/srt/server.py", "_wait_and_warmup")))
    # Near misses: a thread function named like the bootstrap outside threading.py, and a traceback
    # that only passes through threading.py further in (a main-thread `Event.wait` raising).
    assert not thread_exception(_tb(("/app/mythreads.py", "_bootstrap_inner")))
    assert not thread_exception(_tb(("/site-packages/sglang/launch_server.py", "<module>"),
                                    ("/usr/lib/python3.11/threading.py", "wait")))


def test_the_old_warmup_thread_dying_has_no_outcome() -> None:
    for case in ("dev/g-001", "dev/f-001"):
        a = analyze(str(REPO / "fixtures" / "corpus" / f"{case}.log"))
        assert a.root_cause is not None and a.root_cause.name == "warmup-failed", case
        assert a.outcome is None, case


def test_the_warmup_error_that_kills_the_server_is_still_a_start_up_crash() -> None:
    a = analyze(str(REPO / "fixtures" / "rules" / "warmup-failed" / "bad.log"))
    assert a.root_cause is not None and a.root_cause.name == "warmup-failed"
    assert a.outcome == "crashed-at-startup"


def test_a_crash_rule_in_a_thread_still_ends_the_process(tmp_path: Path) -> None:
    # The overlap worker thread's crash: SGLang's thread sends SIGQUIT to its process, and the
    # scheduler-crash finding (a rule that stands for a process ending) keeps the crash.
    text = ("[2025-01-01 10:00:00 TP0] Load weight begin. avail mem=78.31 GB\n"
            "Exception in thread Thread-3 (forward_thread_func):\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner\n'
            "    self.run()\n"
            '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/tp_worker_overlap_thread.py", '
            "line 112, in forward_thread_func\n"
            "    self.forward_thread_func_()\n"
            "ValueError: boom\n")
    p = tmp_path / "x.log"
    p.write_text(text, encoding="utf-8")
    a = analyze(str(p))
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome is not None and a.outcome.startswith("crashed")
