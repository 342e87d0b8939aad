"""JSON for machines: deterministic (same input → same bytes), no wall-clock values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from logparse._version import __version__
from logparse.render.summary import clean, file_summary


def document(analyses: Sequence[Any], errors: Sequence[dict[str, str]] = (), *, redact: bool = True) -> dict[str, Any]:
    """Secrets are masked unless redact=False; `redactions` counts them by kind (per file and in all)."""
    from collections import Counter

    from logparse.render.sanitize import clean_document, clean_entry

    files = [clean_entry(file_summary(a), a, redact) for a in analyses]
    total: Counter[str] = Counter()
    for f in files:
        total.update(f["redactions"])
    doc: dict[str, Any] = {"logdiag_version": __version__, "files": files, "redactions": dict(sorted(total.items()))}
    if errors:
        doc["input_errors"] = clean_document(clean(list(errors)), redact)[0]
    return doc


def dumps(obj: Any) -> str:
    return json.dumps(clean(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render(analyses: Sequence[Any], errors: Sequence[dict[str, str]] = (), *, redact: bool = True) -> str:
    # `document` is JSON-safe already (each part went through `clean`, and the sanitizer's copy
    # keeps it so): no second walk of a document that holds every error and finding.
    return json.dumps(document(analyses, errors, redact=redact), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
