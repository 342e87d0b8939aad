"""Every `facts` entry of every corpus label is reproduced by `logdiag analyze --format json`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from tests.conftest import CORPUS, corpus_logs

LOGS = corpus_logs()


def _same(expected: Any, actual: Any, where: str) -> list[str]:
    """Differences between a label value and the reported one (floats compared with a tight tolerance)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected a dict {expected!r}, got {actual!r}"]
        out: list[str] = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{where}.{k}: missing (expected {v!r})")
            else:
                out.extend(_same(v, actual[k], f"{where}.{k}"))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {expected!r}, got {actual!r}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for d in _same(e, a, f"{where}[{i}]")]
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return [] if math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9) else [
            f"{where}: expected {expected!r}, got {actual!r}"]
    return [f"{where}: expected {expected!r}, got {actual!r}"]


def test_corpus_is_present() -> None:
    assert len(LOGS) >= 51, f"expected the 51 labelled corpus excerpts in {CORPUS}"


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_facts_reproduced(log: Path) -> None:
    labels = json.loads(log.with_suffix(".labels.json").read_text())
    result = CliRunner().invoke(main, ["analyze", str(log), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (entry,) = doc["files"]
    assert entry["lines"]["total"] == entry["lines"]["recognized"] + entry["lines"]["unparsed"]
    diffs = _same(labels["facts"], entry["facts"], "facts")
    assert not diffs, "\n".join(diffs)
