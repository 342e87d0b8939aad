"""Shared test helpers: where the repository, its fixtures and the shared corpus are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
# shared/ sits next to the repository (CI has it too). A clone without it runs the tests on the
# repository's own copy of that development corpus (fixtures/corpus/shared-dev/, copied verbatim).
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" if (SHARED / "corpus").is_dir() else FIXTURES / "corpus" / "shared-dev"


def corpus_logs() -> list[Path]:
    return sorted(CORPUS.glob("dev-*.log"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files under tests/golden/")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


# --------------------------------------------------------------------------- rule-test helpers


def write_log(tmp_path: Path, text: str, name: str = "run.log") -> str:
    """Write a small log for a test and return its path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def analyze_text(tmp_path: Path, text: str, config: dict | None = None, *, name: str = "x.log"):  # type: ignore[no-untyped-def, type-arg]
    """Analyze a log written from `text`; no rule may have raised."""
    from logparse.engine.core import analyze

    a = analyze(write_log(tmp_path, text, name), config=config)
    assert not a.rule_errors, a.rule_errors
    return a


def findings_named(a, name: str) -> list:  # type: ignore[no-untyped-def, type-arg]
    """Every finding of rule `name`, consequences included."""
    return [f for f in a.all_findings() if f.name == name]


def only_finding(a, name: str):  # type: ignore[no-untyped-def]
    """The one finding of rule `name` (fails with the list of findings otherwise)."""
    found = findings_named(a, name)
    assert len(found) == 1, [(f.name, f.message) for f in a.all_findings()]
    return found[0]
