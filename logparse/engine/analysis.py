"""The result of analysing one log: findings, root cause and outcome, per launch attempt and overall."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.engine.evidence import walk
from logparse.model.findings import Finding

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.launches import Launch
    from logparse.run.model import Run
    from logparse.run.views import Views


@dataclass
class Attempt:
    """One launch attempt's verdict: its outcome, root cause and top-level findings (root first)."""

    launch: Launch
    outcome: str | None = None
    root_cause: Finding | None = None
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """`files[].launches[]` of the JSON output: `findings` are the names of the attempt's
        top-level findings (its root cause first; consequences are nested under the root cause in
        `files[].findings`); `root_cause` is a short form of the full finding found there."""
        root = self.root_cause
        out = self.launch.as_dict()
        out["outcome"] = self.outcome
        out["root_cause"] = None if root is None else {
            "code": root.code, "name": root.name, "message": root.message, "remedy": root.remedy,
            "first_line": root.first_line,
        }
        out["findings"] = [f.name for f in self.findings]
        return out


@dataclass
class Analysis:
    """The result for one log file. `outcome` and `root_cause` are those of the last launch attempt."""

    log: ParsedLog
    views: Views
    findings: list[Finding] = field(default_factory=list)
    outcome: str | None = None
    root_cause: Finding | None = None
    # Rules that raised (a bug in logdiag): "CODE name: ExceptionType: message". Empty normally.
    rule_errors: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.log.path

    @property
    def run(self) -> Run:
        """The run model (launch attempts, lifecycles) of the analysed log."""
        return self.views.run

    def all_findings(self) -> list[Finding]:
        """Every finding, consequences included (depth first)."""
        return list(walk(self.findings))

    def fired(self) -> set[str]:
        """Names of every diagnosis that fired, nested consequences included."""
        return {f.name for f in self.all_findings()}
