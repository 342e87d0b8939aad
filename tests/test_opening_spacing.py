"""The opening look-ahead that tells a short double-spaced paste (parsing.records.opening_spacing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.parsing.pipeline import parse_file
from logparse.parsing.records import OPENING_SPACED_LINES, opening_spacing

B, L = True, False  # a blank line, a line with text


def test_whole_short_excerpt_alternating_is_double_spaced() -> None:
    assert opening_spacing([L, B, L, B], at_end=True) is True
    assert opening_spacing([B, B, L, B, L, B, L], at_end=True) is True  # leading blanks are not the paste's


def test_two_lines_one_blank_between_is_the_authors() -> None:
    assert opening_spacing([L, B, L], at_end=True) is False


def test_lines_in_a_row_or_two_blanks_decide_against() -> None:
    assert opening_spacing([L, L], at_end=False) is False
    assert opening_spacing([L, B, B], at_end=False) is False


def test_undecided_until_enough_lines_then_decided() -> None:
    run = [L, B] * OPENING_SPACED_LINES
    assert opening_spacing(run, at_end=False) is None
    assert opening_spacing([*run, L], at_end=False) is True


def test_message_continuation_survives_double_spacing(tmp_path: Path) -> None:
    lines = [
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:81,"
        " unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        "Last error:",
        "Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)",
    ]
    plain = tmp_path / "plain.log"
    plain.write_text("".join(f"{x}\n" for x in lines))
    spaced = tmp_path / "spaced.log"
    spaced.write_text("".join(f"{x}\n\n" for x in lines))
    a, b = parse_file(str(plain)), parse_file(str(spaced))
    assert a.coverage.unparsed == 0
    assert b.coverage.unparsed == a.coverage.unparsed
    assert b.coverage.total == 2 * a.coverage.total


def test_leading_blank_lines_do_not_hold_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A log that starts with many blank lines: the opening hold gives up after a bounded number of
    # items (each decision rescans the hold, so an unbounded one would be quadratic), the log parses.
    from logparse.parsing import pipeline

    calls = []

    def counted(blanks: list[bool], at_end: bool) -> bool | None:
        calls.append(len(blanks))
        return opening_spacing(blanks, at_end)

    monkeypatch.setattr(pipeline, "opening_spacing", counted)
    path = tmp_path / "blank-start.log"
    path.write_text("\n" * 5000 + "ValueError: boom\n")
    log = parse_file(str(path))
    assert len(calls) <= 2 * OPENING_SPACED_LINES + 64
    assert max(calls) <= 64
    assert log.coverage.total == 5001
    assert log.coverage.unparsed == 0
