"""The JSON form of `logdiag check`'s result (`gate/report.py` builds and scores it):
deterministic (sorted keys, no wall-clock values), the input of `--baseline`."""

from __future__ import annotations

import json
import math
import os
from typing import Any

from logparse._version import __version__
from logparse.gate.report import CheckReport

__all__ = ["clean", "display_path", "document", "render"]


def clean(value: Any) -> Any:
    """JSON-safe: NaN/inf → None, tuples and sets → lists, keys → str, recursively."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((clean(v) for v in value), key=repr)
    return value


def document(report: CheckReport) -> dict[str, Any]:
    items = report.items
    return {
        "logdiag_version": __version__,
        "fail_on": report.fail_on,
        "baseline": report.baseline,
        "config_file": report.config_file,
        "summary": {
            "files": len(report.files),
            "findings": len(items),
            "by_severity": report.counts(),
            "failing": len(report.failing),
            "baselined": sum(i.baselined for i in items),
        },
        "rules": [r.code for r in report.rules],
        "files": [
            {
                "path": f.path,
                "outcome": f.outcome,
                "root_cause": ({"code": f.root_cause.code, "name": f.root_cause.name, "line": f.root_cause.line}
                               if f.root_cause is not None else None),
                "findings": len(f.items),
                "failing": sum(i.failing for i in f.items),
                "rule_errors": sorted(f.rule_errors),
            }
            for f in report.files
        ],
        "findings": [i.as_dict() for i in items],
        "redactions": report.redactions or {},
    }


def render(report: CheckReport) -> str:
    return json.dumps(clean(document(report)), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False,
                      default=str) + "\n"


def display_path(path: str) -> str:
    """The path relative to the working directory when it is inside it (posix separators), on
    one line: control characters and undecodable bytes escaped, workflow commands defused."""
    from logparse.render.neutral import one_line

    if path == "-":
        return "-"
    try:
        rel = os.path.relpath(os.path.abspath(path))
    except ValueError:  # another drive on Windows
        return one_line(path.replace(os.sep, "/"))
    if rel == ".." or rel.startswith(".." + os.sep):
        return one_line(os.path.abspath(path).replace(os.sep, "/"))
    return one_line(rel.replace(os.sep, "/"))
