"""A kernel library that lacks a name SGLang imports from it is another build of that library
(kernel-library-mismatch), whichever library and whichever name; SGLang's own log line about a
model module it skipped for such an import is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze

# Raised ImportErrors from real reports (sgl-project/sglang#23083 on ROCm; SGLang 0.2/0.3 images
# with a newer flashinfer; an sgl-kernel older than the sglang that imports it).
RAISED = [
    ("aiter", "dynamic_per_tensor_quant", True,
     "ImportError: cannot import name 'dynamic_per_tensor_quant' from 'aiter' (unknown location)"),
    ("flashinfer", "_grouped_size_compiled_for_decode_kernels", False,
     "ImportError: cannot import name '_grouped_size_compiled_for_decode_kernels' from 'flashinfer.decode'"),
    ("sgl_kernel", "sgl_per_token_group_quant_fp8", False,
     "ImportError: cannot import name 'sgl_per_token_group_quant_fp8' from 'sgl_kernel'"),
]


@pytest.mark.parametrize(("package", "name", "partial", "line"), RAISED)
def test_a_missing_name_is_a_kernel_library_mismatch(package: str, name: str, partial: bool, line: str,
                                                     tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("Traceback (most recent call last):\n"
                   '  File "/usr/lib/python3/dist-packages/sglang/srt/layers/x.py", line 7, in <module>\n'
                   f"    from {package} import {name}\n{line}\n")
    a = analyze(str(log))
    assert a.root_cause is not None and a.root_cause.name == "kernel-library-mismatch"
    data = a.root_cause.data
    assert (data["library"], data["missing_name"], data["cause"]) == (package, name, "missing-name")
    assert data.get("namespace_package", False) is partial
    assert package in a.root_cause.remedy and "pins" in a.root_cause.remedy


def test_sglangs_skipped_model_module_is_not_a_mismatch(tmp_path: Path) -> None:
    # SGLang logs this at start-up and goes on without that model's module: harmless.
    log = tmp_path / "run.log"
    log.write_text("[2025-07-12 10:11:12] Ignore import error when loading sglang.srt.models.foo: "
                   "cannot import name 'bar_op' from 'sgl_kernel'\n")
    assert "kernel-library-mismatch" not in {f.name for f in analyze(str(log)).findings}


def test_another_packages_missing_name_is_not_a_kernel_library(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("Traceback (most recent call last):\n"
                   '  File "/app/x.py", line 3, in <module>\n    from albumentations import RandomBrightness\n'
                   "ImportError: cannot import name 'RandomBrightness' from 'albumentations' "
                   "(/usr/local/lib/python3.11/dist-packages/albumentations/__init__.py)\n")
    assert "kernel-library-mismatch" not in {f.name for f in analyze(str(log)).findings}
