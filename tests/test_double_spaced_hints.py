"""torch's hints after a `CUDA error: …` message (`Compile with TORCH_USE_CUDA_DSA …`) belong to the
exception even after a blank line (a double-spaced paste before its spacing is established), and a
kernel fault's cut scheduler traceback a few text lines later is the same failure however many blank
lines the paste put between them (dev case e-034, double-spaced)."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Traceback
from logparse.parsing.pipeline import parse_file

REPO = Path(__file__).resolve().parents[1]


def _spaced(tmp_path: Path, case: str) -> str:
    text = (REPO / f"fixtures/corpus/dev/{case}.log").read_text(encoding="utf-8")
    p = tmp_path / "spaced.log"
    p.write_text("".join(line + "\n\n" for line in text.splitlines()), encoding="utf-8")
    return str(p)


def test_hint_after_a_blank_line_continues_the_message(tmp_path: Path) -> None:
    log = parse_file(_spaced(tmp_path, "e-034"))
    first = log.of(Traceback)[0]
    assert first.exc_type == "torch.AcceleratorError"
    assert "TORCH_USE_CUDA_DSA" in first.message


def test_double_spaced_kernel_fault_is_one_failure(tmp_path: Path) -> None:
    a = analyze(_spaced(tmp_path, "e-034"))
    assert a.root_cause is not None and a.root_cause.name == "illegal-memory-access"
    assert "scheduler-crash" not in a.fired()


def test_near_miss_other_text_after_the_blank_still_ends_the_record(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("RuntimeError: CUDA error: an illegal memory access was encountered\n\n"
                 "[2025-01-01 00:00:00] INFO:     127.0.0.1:1 - \"GET /health HTTP/1.1\" 200 OK\n", encoding="utf-8")
    tb = parse_file(str(p)).of(Traceback)[0]
    assert tb.end_line == 1
