"""torch's NCCL watchdog line about the failed collective's stack trace is a c10d log line, with
or without the flight recorder's trace and whichever rank envelope it carries."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.model.events import C10dLog
from logparse.parsing.pipeline import parse_file

LINES = [
    # real lines from public bug reports (torch 2.5-2.8 on SGLang / verl runs)
    "[rank1]:[E1218 20:27:21.484941868 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not found,"
    " potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE"
    " to a non-zero value.",
    "[Rank7]:[T506 14:16:14.488406827 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not found,"
    " potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE"
    " to a non-zero value.",
    "[rank0]:[E709 17:05:38.162832798 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective: ",
]


@pytest.mark.parametrize("line", LINES)
def test_stack_trace_line_is_a_c10d_log_line(line: str, tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    path.write_text(line + "\n")
    log = parse_file(str(path))
    assert log.coverage.unparsed == 0
    [event] = log.of(C10dLog)
    assert event.text.startswith("Stack trace of the failed collective")
    assert event.torch_rank is None


def test_prose_about_the_stack_trace_stays_unrecognized(tmp_path: Path) -> None:
    # The phrase inside prose, without torch's envelope and wording, is no c10d line.
    path = tmp_path / "run.log"
    path.write_text("we only see a stack trace of the failed collective in some runs\n")
    assert not parse_file(str(path)).of(C10dLog)
