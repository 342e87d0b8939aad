"""Find the grammar and report-template files, in an installed wheel or in a source checkout.

Plain `os.path` on the paths every run takes (`grammar_text`, `grammar_folder`): `pathlib` pulls in
`urllib.parse` and `ipaddress` (~10 ms of a short run's start-up). `grammar_dir()` and
`reports_dir()` still return a `Path` for the callers that want one."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# The order in which the grammar files are concatenated into one grammar (see grammars/sglang.lark).
GRAMMAR_FILES = ("sglang.lark", "common.lark", "startup.lark", "runtime.lark", "failures.lark", "bench.lark",
                 "shell.lark", "notices.lark")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # logparse/


def _data_folder(name: str) -> str:
    """The wheel maps grammars/ and reports/ into logparse/_data/; an editable install or a checkout
    does not see that copy, so fall back to the top-level folders next to the package."""
    packaged = os.path.join(_PACKAGE, "_data", name)
    if os.path.isdir(packaged):
        return packaged
    checkout = os.path.join(os.path.dirname(_PACKAGE), name)
    if os.path.isdir(checkout):
        return checkout
    raise FileNotFoundError(f"logdiag data folder '{name}' is missing (looked in {packaged} and {checkout})")


def grammar_folder() -> str:
    """The grammars/ folder as a string path (no pathlib)."""
    return _data_folder("grammars")


def grammar_dir() -> Path:
    from pathlib import Path

    return Path(_data_folder("grammars"))


def reports_dir() -> Path:
    from pathlib import Path

    return Path(_data_folder("reports"))


def grammar_text() -> str:
    """The whole grammar: the grammar files concatenated in their fixed order."""
    folder = grammar_folder()
    parts = []
    for name in GRAMMAR_FILES:
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            text = fh.read()
        parts.append(f"// ---- {name}\n{text}\n")
    return "".join(parts)
