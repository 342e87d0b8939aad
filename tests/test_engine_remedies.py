"""Every finding on every real log says something: a message and a remedy that are not empty and
hold no empty quotation (an exception without a message once gave "search the SGLang issues for
''"). Runs over the rule fixtures and the labeled corpus (shared and dev splits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from tests.conftest import CORPUS

REPO = Path(__file__).resolve().parents[1]
LOGS = sorted([*(REPO / "fixtures" / "rules").glob("*/*.log"), *CORPUS.glob("*.log"),
               *(REPO / "fixtures" / "corpus" / "dev").glob("*.log")])
EMPTY_QUOTES = ("''", '""', "``", "‘’", "“”")


def test_there_are_logs() -> None:
    assert len(LOGS) > 100


@pytest.mark.parametrize("path", LOGS, ids=[f"{p.parent.name}/{p.name}" for p in LOGS])
def test_no_finding_has_an_empty_message_or_remedy(path: Path) -> None:
    a = analyze(str(path))
    for f in a.all_findings():
        for what, text in (("message", f.message), ("remedy", f.remedy)):
            assert text.strip(), f"{f.name}: empty {what}"
            bad = [q for q in EMPTY_QUOTES if q in text]
            assert not bad, f"{f.name}: {what} quotes nothing ({bad}): {text}"
