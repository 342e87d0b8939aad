"""Find the grammar and report-template files, in an installed wheel or in a source checkout."""

from __future__ import annotations

from pathlib import Path

# The order in which the grammar files are concatenated into one grammar (see grammars/sglang.lark).
GRAMMAR_FILES = ("sglang.lark", "common.lark", "startup.lark", "runtime.lark", "failures.lark", "bench.lark",
                 "shell.lark", "notices.lark")

_PACKAGE = Path(__file__).resolve().parent.parent  # logparse/


def _data_dir(name: str) -> Path:
    """The wheel maps grammars/ and reports/ into logparse/_data/; an editable install or a checkout
    does not see that copy, so fall back to the top-level folders next to the package."""
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"logdiag data folder '{name}' is missing (looked in {packaged} and {checkout})")


def grammar_dir() -> Path:
    return _data_dir("grammars")


def reports_dir() -> Path:
    return _data_dir("reports")


def grammar_text() -> str:
    """The whole grammar: the grammar files concatenated in their fixed order."""
    folder = grammar_dir()
    parts = []
    for name in GRAMMAR_FILES:
        text = (folder / name).read_text(encoding="utf-8")
        parts.append(f"// ---- {name}\n{text}\n")
    return "".join(parts)
