"""A native CUDA check that ends its process (run/native_exit.py): flash-attention's Hopper kernels
(vendored by sgl-kernel) and CUTLASS-based ones print `CUDA error (file.h:166): <error>` and call
`exit(EXIT_FAILURE)` — no exception follows, yet the process is gone. Real occurrence: dev/r-001
(sgl-project/sglang#19125, an SM100 GPU running FA3's Hopper kernel while capturing the draft
model's CUDA graphs)."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from tests.conftest import FIXTURES

CAPTURE = "[2026-02-21 14:12:48 TP1 EP1] Capture draft extend cuda graph begin (step 2). This can take up to several minutes. avail mem=15.38 GB"
EXIT = ("CUDA error (/sgl-kernel/build/_deps/repo-flash-attention-src/hopper/flash_fwd_launch_template.h:166): "
        "no kernel image is available for execution on the device")


def _analysis(tmp_path: Path, *lines: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return analyze(str(log))


def test_the_corpus_case_crashed_at_start_up() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "r-001.log"))
    assert a.outcome == "crashed-at-startup"
    assert a.root_cause is not None and a.root_cause.name == "unsupported-gpu-arch"


def test_a_native_check_exit_ends_the_start_up(tmp_path: Path) -> None:
    assert _analysis(tmp_path, CAPTURE, EXIT).outcome == "crashed-at-startup"


def test_the_same_error_without_the_macros_location_is_no_exit(tmp_path: Path) -> None:
    # torch's wording of the same CUDA error raises an exception; alone, the line shows no end
    a = _analysis(tmp_path, CAPTURE, "CUDA error: no kernel image is available for execution on the device")
    assert a.outcome is None


def test_a_quoted_check_in_prose_is_no_exit(tmp_path: Path) -> None:
    a = _analysis(tmp_path, CAPTURE, "I saw 'CUDA error (flash_fwd_launch_template.h:166): no kernel image' once")
    assert a.outcome != "crashed-at-startup"  # (the start-up is still in progress when the log ends)
