"""JSON for machines: deterministic (same input → same bytes), no wall-clock values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from logparse._version import __version__
from logparse.render.summary import clean, file_summary


def document(analyses: Sequence[Any], errors: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
    doc: dict[str, Any] = {"logdiag_version": __version__, "files": [file_summary(a) for a in analyses]}
    if errors:
        doc["input_errors"] = list(errors)
    return doc


def dumps(obj: Any) -> str:
    return json.dumps(clean(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render(analyses: Sequence[Any], errors: Sequence[dict[str, str]] = ()) -> str:
    return dumps(document(analyses, errors))
