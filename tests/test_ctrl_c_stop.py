"""Ctrl-C (issue 9): the terminal's `^C` echo before a cut traceback is a manual stop, not a crash.

Real occurrences: fixtures/corpus/dev/e-025 (sgl-project/sglang, a StepMesh RDMA deployment stopped
with Ctrl-C: `^CProcess Process-2:` then the detokenizer's traceback blocked in zmq `recv_pyobj`,
cut before its KeyboardInterrupt line), and the same terminal shape in a public multiprocessing
log where several processes print their headers together (`^CProcess Process-2:` /
`Process Process-3:` / `Traceback (most recent call last):`).
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.io.wrappers import Unwrapper
from tests.conftest import FIXTURES, analyze_text

_DETOKENIZER_CUT = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap\n'
    "    self.run()\n"
    '  File "/usr/lib/python3.12/multiprocessing/process.py", line 108, in run\n'
    "    self._target(*self._args, **self._kwargs)\n"
    '  File "/home/sglang/python/sglang/srt/managers/detokenizer_manager.py", line 250, in run_detokenizer_process\n'
    "    manager.event_loop()\n"
    '  File "/home/sglang/python/sglang/srt/managers/detokenizer_manager.py", line 117, in event_loop\n'
    "    recv_obj = self.recv_from_scheduler.recv_pyobj()\n"
)




def _names(a) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.name for f in a.findings}


def test_tty_echo_is_stripped_but_kept_as_the_wrappers_kind() -> None:
    w, rest = Unwrapper()("^CProcess Process-2:")
    assert w is not None and w.kind == "tty-interrupt" and rest == "Process Process-2:"
    w, rest = Unwrapper()("^C")  # alone: left as text (the line before a traceback is read as such)
    assert w is None and rest == "^C"


def test_dev_case_stopped_with_ctrl_c() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "e-025.log"))
    assert a.outcome == "stopped" and a.root_cause is None
    assert "scheduler-crash" not in _names(a)


def test_headers_printed_together_after_the_echo(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, "^CProcess Process-2:\nProcess Process-3:\n" + _DETOKENIZER_CUT)
    assert a.outcome == "stopped" and "scheduler-crash" not in _names(a)


def test_echo_alone_on_the_line_before(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, "^C\nProcess Process-2:\n" + _DETOKENIZER_CUT)
    assert a.outcome == "stopped" and "scheduler-crash" not in _names(a)


def test_without_the_echo_the_cut_traceback_is_a_crash(tmp_path: Path) -> None:
    # Near miss: the same cut traceback with nothing that says Ctrl-C: the fallback reports it.
    a = analyze_text(tmp_path, "Process Process-2:\n" + _DETOKENIZER_CUT)
    assert "scheduler-crash" in _names(a) and a.outcome != "stopped"


def test_echo_before_a_real_exception_is_still_that_exception(tmp_path: Path) -> None:
    # Near miss: a traceback whose exception line is shown and is no interrupt is what it says.
    text = "^CProcess Process-2:\n" + _DETOKENIZER_CUT + "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    a = analyze_text(tmp_path, text)
    assert a.outcome != "stopped" and a.root_cause is not None
