"""The wheel ships the grammar and report templates: build it, install it in a fresh venv, run it
from outside the checkout."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.conftest import CORPUS, REPO


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(REPO)],
                 cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("logdiag-*.whl")

    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path).returncode == 0
    py = venv / "bin" / "python"
    # The dependencies come from this test environment (no download): a .pth line adds its
    # site-packages after the venv's own, so the venv's copy of logparse (the wheel) wins.
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp_path)
    parent = [p for p in site.getsitepackages() if "site-packages" in p] or [sysconfig.get_paths()["purelib"]]
    Path(purelib.stdout.strip(), "parent-env.pth").write_text("\n".join(parent) + "\n")
    inst = _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)], cwd=tmp_path)
    assert inst.returncode == 0, inst.stderr

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    where = _run([str(py), "-c", "import logparse, logparse.grammar.resources as r; print(logparse.__file__); print(r.grammar_dir())"],
                 cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    module_file, grammar_dir = where.stdout.split()
    assert str(venv) in module_file, "the wheel's copy must be imported, not the checkout"
    assert grammar_dir.endswith(os.path.join("logparse", "_data", "grammars"))

    log = CORPUS / "dev-041.log"
    out = _run([str(venv / "bin" / "logdiag"), "analyze", str(log), "--format", "json"], cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert '"logdiag_version"' in out.stdout
    version = _run([str(venv / "bin" / "logdiag"), "--version"], cwd=tmp_path, env=env)
    assert version.stdout.startswith("logdiag ")
