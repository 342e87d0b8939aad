"""What a rule sees: the parsed log, its views, and helpers that build findings with evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.events import Event, Severity
from logparse.findings import Evidence, Finding
from logparse.rules.registry import REGISTRY

if TYPE_CHECKING:
    from logparse.parse import ParsedLog
    from logparse.views import Views


@dataclass
class RuleContext:
    log: ParsedLog
    views: Views
    config: dict[str, Any] = field(default_factory=dict)  # per-rule thresholds: {'spec-low-acceptance': {...}}
    claimed: set[int] = field(default_factory=set)  # line numbers of events a finding already explains

    def threshold(self, rule_name: str, key: str, default: Any) -> Any:
        """A per-rule threshold from the configuration (`[tool.logdiag.thresholds.<rule>]`), else the default."""
        return self.config.get(rule_name, {}).get(key, default)

    def unclaimed(self, events: Iterable[Event]) -> list[Event]:
        return [e for e in events if e.line not in self.claimed]

    def finding(
        self,
        name: str,
        message: str,
        remedy: str,
        *,
        events: Sequence[Event] = (),
        lines: Sequence[tuple[int, int]] = (),
        data: dict[str, Any] | None = None,
        severity: Severity | None = None,
        ranks: Sequence[str] | None = None,
        fingerprint: str | None = None,
        consequence: bool = False,
        claim: bool = True,
    ) -> Finding:
        """A finding of rule `name` whose evidence is the line ranges of `events` (and `lines`:
        extra (first, last) ranges). Evidence texts are filled in by the engine."""
        rule = REGISTRY[name]
        ranges = [(e.line, e.end_line or e.line) for e in events] + list(lines)
        evidence = [Evidence(self.log.path, a, b) for a, b in sorted(set(ranges))]
        if ranks is None:
            ranks = sorted({e.rank for e in events if e.rank})
        f = Finding(
            code=rule.code,
            name=rule.name,
            severity=severity or rule.severity,
            message=message,
            remedy=remedy,
            family=rule.family,
            evidence=evidence,
            ranks=list(ranks),
            data=dict(data or {}),
            first_line=min((a for a, _ in ranges), default=0),
            consequence=consequence,
            fingerprint=fingerprint,
        )
        if claim:
            f.claims = {e.line for e in events}
            self.claimed |= f.claims
        return f
