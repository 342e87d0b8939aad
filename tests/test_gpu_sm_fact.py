"""The `gpu_sm` fact: the GPU's own compute capability (major*10+minor), owned by run/facts.py and
read through the catalog's gpu-own-sm entry; requirements and variant directories are not the GPU's."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from tests.conftest import analyze_text

REPO = Path(__file__).resolve().parents[1]


def test_sgl_kernel_loader_report_states_the_gpu_capability() -> None:
    # dev/h-013: the loader's 'GPU Info:' block; the sm90/ directory of the attempted locations
    # comes first in the file and is a kernel variant, not the GPU.
    assert analyze(str(REPO / "fixtures/corpus/dev/h-013.log")).views.facts()["gpu_sm"] == 90


@pytest.mark.parametrize(("line", "sm"), [
    ("* Compute capability: 121", 121),  # sglang#13198's bullet
    ("GPU 0 Compute Capability: 12.1", 121),  # sglang.check_env (sglang#13198)
    ("    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.", 121),  # torch _check_capability
    ("NVIDIA RTX PRO 6000 Blackwell with CUDA capability sm_120 is not compatible with the current "
     "PyTorch installation.", 120),
])
def test_every_wording_of_the_gpu_capability(tmp_path: Path, line: str, sm: int) -> None:
    assert analyze_text(tmp_path, line + "\n").views.facts()["gpu_sm"] == sm


def test_requirements_and_an_unknown_gpu_state_no_capability(tmp_path: Path) -> None:
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "[2025-10-01 10:00:00] Compute capability below sm80. Use float16 due to lack of bfloat16 support.",
        ("1. Architecture-specific pattern: /usr/lib/python3.12/site-packages/sgl_kernel/sm90/common_ops.* - "
         "found files: []"),
        "- Compute capability: None",
        "RuntimeError: MXFP8 MoE quantization requires SM100.",
        "",
    ])
    assert "gpu_sm" not in analyze_text(tmp_path, text).views.facts()
    # The GPU's own line after them is the one taken.
    a = analyze_text(tmp_path, text + "- Compute capability: 100\n", name="y.log")
    assert a.views.facts()["gpu_sm"] == 100
