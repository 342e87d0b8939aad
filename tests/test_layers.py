"""The package's one direction of flow ([tool.importlinter] in pyproject.toml) holds."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept() -> None:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    res = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "broken" not in res.stdout.split("Contracts:")[-1].split("\n")[0] or "0 broken" in res.stdout
