"""Shared test helpers: where the repository, its fixtures and the shared corpus are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
# shared/ sits next to the repository (CI has it too).
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"


def corpus_logs() -> list[Path]:
    return sorted(CORPUS.glob("dev-*.log"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files under tests/golden/")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
