"""JUnit XML for CI dashboards: a testsuite per log file, a testcase per rule evaluated, a
`<failure>` where the rule found something at or above --fail-on (its message and evidence lines
in the body). Findings below the threshold or in the baseline pass, listed in `<system-out>`."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from logparse.gate.config import severity_rank
from logparse.gate.report import CheckItem, CheckReport
from logparse.render.check_json import display_path

# XML 1.0 forbids most control characters (logs carry ANSI escapes, NULs, ...) and lone surrogates.
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
MAX_EVIDENCE_LINES = 40


def _x(text: str) -> str:
    return _BAD_XML.sub("\ufffd", text)


def _describe(item: CheckItem) -> list[str]:
    where = ""
    if item.line is not None:
        where = f" line {item.line}" + (f"-{item.end_line}" if item.end_line and item.end_line != item.line else "")
    tags = []
    if item.root_cause:
        tags.append("root cause")
    if item.consequence:
        tags.append(f"consequence of {item.cause}" if item.cause else "consequence")
    if item.baselined:
        tags.append("in baseline")
    tag = f" ({'; '.join(tags)})" if tags else ""
    out = [f"[{str(item.severity).upper()}] {item.name} ({item.code}){where}{tag}: {item.message}"]
    if item.remedy:
        out.append(f"fix: {item.remedy}")
    shown = [(n, t) for ev in item.evidence for n, t in ev.lines]
    for n, t in shown[:MAX_EVIDENCE_LINES]:
        out.append(f"{n:>7} | {t}")
    if len(shown) > MAX_EVIDENCE_LINES:
        out.append(f"        … {len(shown) - MAX_EVIDENCE_LINES} more evidence lines")
    return out


def _testcase(suite: ET.Element, rule: Any, path: str, items: list[CheckItem]) -> bool:
    case = ET.SubElement(suite, "testcase", {"classname": f"logdiag.{rule.family or 'rules'}",
                                            "name": f"{rule.name} ({rule.code})", "file": path})
    failing = [i for i in items if i.failing]
    passing = [i for i in items if not i.failing]
    if failing:
        worst = max(failing, key=lambda i: severity_rank(i.severity))
        first = failing[0]
        message = first.message if len(failing) == 1 else f"{len(failing)} findings; first: {first.message}"
        failure = ET.SubElement(case, "failure", {"message": _x(message), "type": str(worst.severity)})
        failure.text = _x("\n\n".join("\n".join(_describe(i)) for i in failing))
    if passing:
        out = ET.SubElement(case, "system-out")
        out.text = _x("\n\n".join("\n".join(_describe(i)) for i in passing))
    return bool(failing)


def document(report: CheckReport) -> ET.Element:
    root = ET.Element("testsuites", {"name": "logdiag check"})
    total = failures = 0
    for f in report.files:
        path = display_path(f.path)
        suite = ET.SubElement(root, "testsuite", {"name": path})
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", {"name": "fail-on", "value": report.fail_on})
        if f.outcome:
            ET.SubElement(props, "property", {"name": "outcome", "value": f.outcome})
        rc = f.root_cause
        if rc is not None:
            ET.SubElement(props, "property", {"name": "root-cause", "value": f"{rc.name} ({rc.code})"})
        by_code: dict[str, list[CheckItem]] = {}
        for i in f.items:
            by_code.setdefault(i.code, []).append(i)
        n = fails = 0
        for rule in report.rules:
            n += 1
            fails += _testcase(suite, rule, path, by_code.get(rule.code, []))
        suite.attrib.update({"tests": str(n), "failures": str(fails), "errors": "0", "skipped": "0"})
        total += n
        failures += fails
    root.attrib.update({"tests": str(total), "failures": str(failures), "errors": "0", "skipped": "0"})
    return root


def render(report: CheckReport) -> str:
    root = document(report)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
