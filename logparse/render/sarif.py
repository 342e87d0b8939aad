"""SARIF 2.1.0 for code-scanning UIs: one run, the rule catalog as `tool.driver.rules`, one
result per finding located at its evidence lines in the log (path relative to the working
directory). Deterministic: no timestamps, no absolute paths for files under the working directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from logparse._version import __version__
from logparse.gate.baseline import FINGERPRINT_KEY
from logparse.gate.report import CheckItem, CheckReport
from logparse.render.check_json import clean

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SECTION_ORDER = ("What it means", "Why it matters", "Example", "Fix")
MAX_SNIPPET_LINES = 20


def artifact_uri(path: str) -> str:
    """A relative URI reference for a log under the working directory, a file: URI elsewhere."""
    if path == "-":
        return "stdin"
    absolute = Path(os.path.abspath(path))
    try:
        rel = absolute.relative_to(Path(os.getcwd()).resolve())
    except ValueError:
        try:
            rel = absolute.relative_to(Path(os.path.abspath(os.getcwd())))
        except ValueError:
            return absolute.as_uri()
    return quote(os.fsencode(rel.as_posix()), safe="/")  # bytes: a non-UTF-8 name is %-encoded


def _help(rule: Any) -> tuple[str, str]:
    sections: dict[str, str] = dict(getattr(rule, "sections", {}) or {})
    order = [s for s in SECTION_ORDER if s in sections] + [s for s in sections if s not in SECTION_ORDER]
    text = "\n\n".join(f"{s}:\n{sections[s]}" for s in order) or (rule.summary or rule.name)
    md = "\n\n".join(f"**{s}**\n\n{sections[s]}" for s in order) or (rule.summary or rule.name)
    return text, md


def rule_descriptor(rule: Any) -> dict[str, Any]:
    summary = getattr(rule, "summary", "") or rule.name
    sections = getattr(rule, "sections", {}) or {}
    text, md = _help(rule)
    desc: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": sections.get("What it means") or summary},
        "help": {"text": text, "markdown": md},
        "defaultConfiguration": {"level": LEVELS[str(rule.severity)]},
        "properties": {"family": rule.family, "tags": [rule.family]},
    }
    status = getattr(rule, "status", None)
    if status:
        desc["properties"]["status"] = status
    return desc


def _region(line: int, end_line: int, lines: list[tuple[int, str]]) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(1, line), "endLine": max(1, line, end_line)}
    shown = [t for n, t in lines if line <= n <= end_line][:MAX_SNIPPET_LINES]
    if shown:
        region["snippet"] = {"text": "\n".join(shown)}
    return region


def _result(item: CheckItem, rule_index: dict[str, int], has_baseline: bool) -> dict[str, Any]:
    uri = artifact_uri(item.path)
    evidence = item.evidence
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
    if evidence:
        ev = evidence[0]
        location["physicalLocation"]["region"] = _region(ev.line, ev.end_line, ev.lines)
    text = item.message + (f"\nFix: {item.remedy}" if item.remedy else "")
    res: dict[str, Any] = {
        "ruleId": item.code,
        "ruleIndex": rule_index[item.code],
        "level": LEVELS[str(item.severity)],
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: item.fingerprint},
        "properties": {
            "name": item.name,
            "family": item.family,
            "remedy": item.remedy,
            "ranks": list(item.finding.ranks),
            "consequence": item.consequence,
            "rootCause": item.root_cause,
            "failing": item.failing,
        },
    }
    if item.cause:
        res["properties"]["cause"] = item.cause
    if item.finding.data:
        res["properties"]["data"] = item.finding.data
    related = [
        {"id": k, "physicalLocation": {"artifactLocation": {"uri": uri}, "region": _region(ev.line, ev.end_line, ev.lines)},
         "message": {"text": "evidence"}}
        for k, ev in enumerate(evidence[1:], 1)
    ]
    if related:
        res["relatedLocations"] = related
    if item.baselined:
        res["baselineState"] = "unchanged"
    elif has_baseline:
        res["baselineState"] = "new"
    return res


def document(report: CheckReport) -> dict[str, Any]:
    rules = [rule_descriptor(r) for r in report.rules]
    rule_index = {r["id"]: k for k, r in enumerate(rules)}
    # Findings of rules outside the evaluated set cannot occur (select/ignore drop them), but a
    # rule listed twice or a finding without a descriptor must not produce a dangling index.
    for item in report.items:
        if item.code not in rule_index:
            rule_index[item.code] = len(rules)
            rules.append({"id": item.code, "name": item.name, "shortDescription": {"text": item.name},
                          "defaultConfiguration": {"level": LEVELS[str(item.finding.severity)]}})
    results = [_result(i, rule_index, report.baseline is not None) for i in report.items]
    artifacts = []
    seen: set[str] = set()
    for f in report.files:
        uri = artifact_uri(f.path)
        if uri not in seen:
            seen.add(uri)
            artifacts.append({"location": {"uri": uri}, "mimeType": "text/plain"})
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "logdiag",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "artifacts": artifacts,
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {"redactions": report.redactions or {}},
            }
        ],
    }


def render(report: CheckReport) -> str:
    return json.dumps(clean(document(report)), indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
