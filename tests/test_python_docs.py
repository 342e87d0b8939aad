"""docs/python.md ("Use from Python"): every example on the page runs, with the output it shows."""

from __future__ import annotations

import doctest

import pytest

from tests.conftest import REPO

PAGE = REPO / "docs" / "python.md"


def test_every_example_of_the_python_page_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the examples name fixtures relative to the repository root
    result = doctest.testfile(
        str(PAGE),
        module_relative=False,
        verbose=False,
        report=True,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted >= 25, "the page lost its examples"
    assert result.failed == 0, f"{result.failed} example(s) of docs/python.md failed (output above)"


def test_the_page_documents_every_public_name() -> None:
    import logparse

    text = PAGE.read_text(encoding="utf-8")
    missing = [
        name
        for name in logparse.__all__
        if name != "__version__" and f"`{name}" not in text and f"logparse.{name}" not in text
    ]
    assert not missing, f"docs/python.md does not mention {missing}"
