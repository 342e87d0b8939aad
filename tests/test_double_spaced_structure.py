"""Structural checks that ask for "the line before" or "nothing after" look past the blank lines a
double-spaced paste (a blank line after every line) puts everywhere: the same excerpt gives the same
answer pasted either way (dev d-037: a traceback pasted tail first; dev i-016: a traceback that
follows a record saying the real error is shown above)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import analyze_text
from tests.test_ctrl_c_stop import _DETOKENIZER_CUT  # a detokenizer traceback cut in its zmq wait
from tests.test_outcome_rotated_paste import _BETWEEN, _HEAD, _TAIL  # dev d-037's shape


def _double_spaced(text: str) -> str:
    return "".join(line + "\n\n" for line in text.splitlines())


_SPACINGS = [pytest.param(lambda t: t, id="plain"), pytest.param(_double_spaced, id="double-spaced")]

_LATER = "[2025-03-03 06:49:30] Received sigquit from a child process. It usually means the child failed.\n"


@pytest.mark.parametrize("paste", _SPACINGS)
def test_a_rotated_traceback_is_read_so_however_spaced(tmp_path: Path, paste) -> None:
    a = analyze_text(tmp_path, paste(_TAIL + _BETWEEN + _HEAD))
    assert a.outcome == "crashed-while-serving"
    # Near miss: a line after the head (blank lines around it) means the excerpt was not cut there.
    b = analyze_text(tmp_path, paste(_TAIL + _BETWEEN + _HEAD + _LATER), name="y.log")
    assert b.outcome != "crashed-while-serving"


_SEE_ABOVE = (
    "2025-06-30 06:18:36,801 xinference.core.worker 113 ERROR    [request b087e27a-55b4-11f0-93e7-7ac282aee84d] "
    "Leave launch_builtin_model, error: [address=0.0.0.0:43399, pid=1793] Initialization failed. Please see "
    "the error messages above., elapsed time: 17 s\n"
)
_LAUNCH_TB = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/xinference/core/utils.py", line 93, in wrapped\n'
    "    ret = await func(*args, **kwargs)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/xinference/core/worker.py", line 1114, in launch_builtin_model\n'
    "    await model_ref.load()\n"
)


@pytest.mark.parametrize("paste", _SPACINGS)
def test_a_traceback_after_a_see_above_record_is_a_consequence_however_spaced(tmp_path: Path, paste) -> None:
    a = analyze_text(tmp_path, paste(_SEE_ABOVE + _LAUNCH_TB))
    assert "scheduler-crash" not in a.fired() and a.root_cause is None
    assert a.outcome == "crashed-at-startup"
    # Near miss: another record between them: the traceback is not the see-above record's.
    other = "2025-06-30 06:18:37,001 xinference.core.worker 113 INFO     Launching the next model\n"
    b = analyze_text(tmp_path, paste(_SEE_ABOVE + other + _LAUNCH_TB), name="y.log")
    assert "scheduler-crash" in b.fired()


_MULTILINE_MESSAGE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/api.py", line 38, in Runtime\n'
    "    return Runtime(*args, **kwargs)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/lang/backend/runtime_endpoint.py", line 396, in __init__\n'
    "    raise RuntimeError(\n"
    "RuntimeError: Initialization failed. The model could not be loaded:\n"
    "the checkpoint lists 61 layers and the config 62\n"
)


def _unrecognized(tmp_path: Path, text: str, name: str) -> int:
    cov = analyze_text(tmp_path, text, name=name).log.coverage
    return cov.total - cov.recognized


def test_an_exception_message_goes_on_past_a_double_spaced_pastes_blank_line(tmp_path: Path) -> None:
    # The message's second line continues it in the plain log; the paste's blank line between them
    # is spacing, not the message's end.
    assert _unrecognized(tmp_path, _MULTILINE_MESSAGE, "plain.log") == 0
    assert _unrecognized(tmp_path, _double_spaced(_MULTILINE_MESSAGE), "spaced.log") == 0
    # Near miss: a blank line of the log's own after the message (two in a row once double-spaced)
    # ends it, as in the plain log.
    ended = _MULTILINE_MESSAGE + "\nsome unrelated text the grammar does not know\n"
    assert _unrecognized(tmp_path, ended, "ended.log") == 1
    assert _unrecognized(tmp_path, _double_spaced(ended), "ended-spaced.log") == 1


@pytest.mark.parametrize("echo", ["^C\nProcess Process-2:\n", "^CProcess Process-2:\nProcess Process-3:\n"],
                         ids=["echo-alone", "headers-together"])
def test_ctrl_c_before_a_cut_traceback_is_a_stop_however_spaced(tmp_path: Path, echo: str) -> None:
    # The terminal's `^C` echo and the `Process …:` headers printed together (readiness.user_interrupt).
    a = analyze_text(tmp_path, _double_spaced(echo + _DETOKENIZER_CUT))
    assert a.outcome == "stopped" and "scheduler-crash" not in a.fired()
    # Near miss: another record between the echo's headers and the traceback: not the same run.
    other = "[2025-06-01 10:00:00] Received sigquit from a child process. It usually means the child failed.\n"
    b = analyze_text(tmp_path, _double_spaced(echo + other + _DETOKENIZER_CUT), name="y.log")
    assert b.outcome != "stopped"
