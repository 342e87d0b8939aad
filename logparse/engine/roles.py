"""The roles a finding's rule declares (hang, follow-on, crash, stage), looked up in the registry."""

from __future__ import annotations

from typing import Any

from logparse.model.findings import Finding


class _NoRole:
    """The roles of a finding whose rule is not registered (a test's ad-hoc finding): none."""

    stage: str | None = None
    hang = follow_on = crash = False


def role_of(f: Finding) -> Any:
    """The declared roles of the rule that made a finding (rules/registry.py)."""
    from logparse.rules.registry import lookup

    return lookup(f.code) or lookup(f.name) or _NoRole()


def declared_stage(f: Finding | None) -> str:
    """startup / served / unknown: the finding's own stage, else its rule's declared stage."""
    if f is None:
        return "unknown"
    stage = f.stage or role_of(f).stage
    return stage if stage in ("startup", "served") else "unknown"
