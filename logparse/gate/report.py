"""The result of `logdiag check`: every finding of every file flattened, selected, given its
configured severity, fingerprinted, matched against the baseline and scored against --fail-on.
This is the gate's policy; the renderers (`render/check_json.py`, `sarif.py`, `junit.py`,
`github.py`, the text summary) only format a `CheckReport`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from logparse.gate.baseline import Baseline, finding_fingerprint
from logparse.gate.config import SEVERITIES, Config, fails
from logparse.model.events import Severity
from logparse.model.findings import Evidence, Finding

__all__ = ["CheckFile", "CheckItem", "CheckReport", "FileResult", "RuleStub", "build_report", "evaluated_rules"]


@dataclass
class FileResult:
    """What the analysis of one file hands to `check` (small and picklable: no parsed log)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    outcome: str | None = None
    root_cause: Finding | None = None
    rule_errors: list[str] = field(default_factory=list)  # rules that raised on this file


@dataclass
class CheckItem:
    """One finding of one file, consequences included (flattened, marked)."""

    path: str
    finding: Finding
    severity: Severity  # after the configuration's severity override
    consequence: bool = False  # an effect of another finding (never the root cause)
    cause: str | None = None  # the name of the finding it is a consequence of, if nested under one
    root_cause: bool = False
    fingerprint: str = ""
    baselined: bool = False  # matched by the baseline: reported, never fails the run
    failing: bool = False  # at or above --fail-on and not baselined

    @property
    def code(self) -> str:
        return self.finding.code

    @property
    def name(self) -> str:
        return self.finding.name

    @property
    def family(self) -> str:
        return self.finding.family

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def remedy(self) -> str:
        return self.finding.remedy

    @property
    def evidence(self) -> list[Evidence]:
        return self.finding.evidence

    @property
    def line(self) -> int | None:
        return self.finding.evidence[0].line if self.finding.evidence else None

    @property
    def end_line(self) -> int | None:
        if not self.finding.evidence:
            return None
        ev = self.finding.evidence[0]
        return max(ev.end_line, ev.line)

    def sort_key(self) -> tuple[Any, ...]:
        return (self.line or 0, self.end_line or 0, self.code, self.name, self.message, self.fingerprint)

    def as_dict(self) -> dict[str, Any]:
        f = self.finding
        return {
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "code": f.code,
            "name": f.name,
            "family": f.family,
            "severity": str(self.severity),
            "message": f.message,
            "remedy": f.remedy,
            "evidence": [{"line": n, "text": t} for ev in f.evidence for n, t in ev.lines],
            "ranges": [[ev.line, max(ev.end_line, ev.line)] for ev in f.evidence],
            "ranks": list(f.ranks),
            "data": f.data,
            "consequence": self.consequence,
            "cause": self.cause,
            "root_cause": self.root_cause,
            "fingerprint": self.fingerprint,
            "baselined": self.baselined,
            "failing": self.failing,
        }


@dataclass
class CheckFile:
    path: str
    outcome: str | None
    items: list[CheckItem]
    rule_errors: list[str] = field(default_factory=list)

    @property
    def root_cause(self) -> CheckItem | None:
        return next((i for i in self.items if i.root_cause), None)


@dataclass
class CheckReport:
    files: list[CheckFile]
    rules: list[Any]  # the rules evaluated (after select / ignore): registry Rules, or stand-ins
    fail_on: str
    baseline: str | None = None
    redactions: dict[str, int] | None = None  # secrets masked by kind (None: not sanitized)
    config_file: str | None = None  # the configuration file used (None: the defaults)

    @property
    def items(self) -> list[CheckItem]:
        return [i for f in self.files for i in f.items]

    @property
    def failing(self) -> list[CheckItem]:
        return [i for i in self.items if i.failing]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(SEVERITIES, 0)
        for i in self.items:
            out[str(i.severity)] += 1
        return out


@dataclass(frozen=True)
class RuleStub:
    """A rule a finding names that is not in the registry (keeps SARIF/JUnit complete)."""

    code: str
    name: str
    family: str
    severity: Severity
    summary: str = ""
    sections: dict[str, str] = field(default_factory=dict)


def _flatten(findings: Sequence[Finding], root: Finding | None) -> Iterator[tuple[Finding, bool, str | None, bool]]:
    """(finding, is consequence, cause name, is root cause), parents before their consequences."""
    seen: set[int] = set()

    def walk(fs: Sequence[Finding], parent: Finding | None) -> Iterator[tuple[Finding, bool, str | None, bool]]:
        for f in fs:
            if id(f) in seen:
                continue
            seen.add(id(f))
            yield f, bool(f.consequence or parent is not None), parent.name if parent else None, f is root
            yield from walk(f.consequences, f)

    yield from walk(findings, None)
    if root is not None and id(root) not in seen:  # a root cause the engine did not list
        yield from walk([root], None)


def evaluated_rules(config: Config, results: Sequence[FileResult] = ()) -> list[Any]:
    """The registry's rules in scope, plus rules named by findings but absent from the registry."""
    from logparse.rules import all_rules

    rules: list[Any] = [r for r in all_rules() if config.selects(r.name, r.code, r.family)]
    known = {r.code for r in rules} | {r.code for r in all_rules()}
    for res in results:
        for f, *_ in _flatten(res.findings, res.root_cause):
            if f.code not in known and config.selects(f.name, f.code, f.family):
                known.add(f.code)
                rules.append(RuleStub(code=f.code, name=f.name, family=f.family, severity=f.severity))
    return sorted(rules, key=lambda r: (r.code, r.name))


def build_report(results: Sequence[FileResult], config: Config, fail_on: str,
                 baseline: Baseline | None = None) -> CheckReport:
    """Flatten, select / ignore, override severities, fingerprint, match the baseline, score."""
    files: list[CheckFile] = []
    for res in results:
        items: list[CheckItem] = []
        for f, consequence, cause, is_root in _flatten(res.findings, res.root_cause):
            if not config.selects(f.name, f.code, f.family):
                continue
            sev = config.severity_for(f.name, f.code, f.severity)
            fp = finding_fingerprint(f)
            item = CheckItem(path=res.path, finding=f, severity=sev, consequence=consequence, cause=cause,
                             root_cause=is_root, fingerprint=fp, baselined=baseline is not None and fp in baseline)
            item.failing = not item.baselined and fails(sev, fail_on)
            items.append(item)
        items.sort(key=CheckItem.sort_key)
        files.append(CheckFile(path=res.path, outcome=res.outcome, items=items, rule_errors=list(res.rule_errors)))
    return CheckReport(files=files, rules=evaluated_rules(config, results), fail_on=fail_on,
                       baseline=baseline.path if baseline is not None else None, config_file=config.source)
