"""Findings: what a rule reports — a diagnosis with its evidence lines, reason and remedy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logparse.model.events import Severity
from logparse.model.linesets import LineSet

__all__ = ["Evidence", "Finding", "Severity"]


@dataclass
class Evidence:
    """A line range of the log that shows what a finding says."""

    file: str
    line: int
    end_line: int
    lines: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "end_line": self.end_line,
                "lines": [{"line": n, "text": t} for n, t in self.lines]}


@dataclass
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    remedy: str
    family: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    ranks: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    consequences: list[Finding] = field(default_factory=list)
    # The first evidence line: orders findings and decides the root cause.
    first_line: int = 0
    consequence: bool = False  # true for findings that are effects of another (never the root cause)
    # Identity for grouping repeats (same exception and frames on several ranks → one finding).
    fingerprint: str | None = None
    # Line numbers of the events this finding explains (a fallback rule skips claimed events).
    # A LineSet (ranges) from the rule context; a plain set of ints is accepted too.
    claims: LineSet | set[int] = field(default_factory=LineSet)
    count: int = 1  # how many occurrences were grouped into this finding
    # Where in the run's life this occurrence happened, when the rule knows better than its declared
    # stage (a CUDA OOM during weight loading is a start-up failure; during decode it is not).
    stage: str | None = None

    def as_dict(self) -> dict[str, Any]:
        lines = [{"line": n, "text": t} for ev in self.evidence for n, t in ev.lines]
        return {
            "code": self.code,
            "name": self.name,
            "severity": str(self.severity),
            "family": self.family,
            "message": self.message,
            "remedy": self.remedy,
            "evidence": lines,
            "ranks": self.ranks,
            "data": self.data,
            "consequences": [c.as_dict() for c in self.consequences],
        }
