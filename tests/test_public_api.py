"""The documented public API: `parse`, `analyze`, `Analysis`, `Finding`, `Severity`, imported lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import logparse
from tests.conftest import FIXTURES


def test_import_loads_nothing_else() -> None:
    code = "import sys, logparse; print(sorted(m for m in sys.modules if m.startswith('logparse')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['logparse', 'logparse._version']"


def test_analyze_and_parse_through_the_public_names() -> None:
    log = FIXTURES / "logs" / "nextn-hybrid-launch.log"
    a = logparse.analyze(str(log))
    assert isinstance(a, logparse.Analysis)
    assert all(isinstance(f, logparse.Finding) for f in a.all_findings())
    assert {f.severity for f in a.all_findings()} <= set(logparse.Severity)
    assert a.outcome == "serving" and len(a.attempts) == 4
    parsed = logparse.parse(str(log))
    assert parsed.coverage.total == a.log.coverage.total
    assert set(logparse.__all__) <= set(dir(logparse))


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        logparse.no_such_name  # noqa: B018
