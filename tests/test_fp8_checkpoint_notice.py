"""Fp8Config's start-up notice (issue 9): `Detected fp8 checkpoint.` (both wordings in sglang.txt)
is printed while the model's quantization config is built, so it is start-up evidence.
Real occurrence: fixtures/corpus/dev/e-022 (16 ranks, both wordings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.grammar.build import get_parser
from logparse.model.events import KnownMessage
from tests.conftest import FIXTURES


@pytest.mark.parametrize("line", [
    "[2025-02-07 02:59:26 TP13] Detected fp8 checkpoint. Please note that the format is experimental and subject to change.",
    "[2025-02-07 02:59:26 TP10] Detected fp8 checkpoint.",
])
def test_both_wordings_are_the_notice(line: str) -> None:
    _, cls, kw = get_parser().parse(line)
    assert cls is KnownMessage and kw["code"] == "fp8-checkpoint-detected"


def test_dev_case_is_a_start_up_cut_short() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "e-022.log"))
    assert a.outcome == "incomplete" and any(f.name == "startup-stalled" for f in a.findings)


def test_notice_before_the_ready_marker_is_no_stall(tmp_path: Path) -> None:
    # Near miss: the same notice in a start-up that reached readiness.
    log = tmp_path / "x.log"
    log.write_text("[2025-02-07 02:59:26 TP0] Detected fp8 checkpoint.\n"
                   "[2025-02-07 03:05:00] The server is fired up and ready to roll!\n", encoding="utf-8")
    a = analyze(str(log))
    assert a.outcome == "ready" and not any(f.name == "startup-stalled" for f in a.findings)
