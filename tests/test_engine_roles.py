"""Rules declare their roles; the engine decides from the declarations and knows no rule by name."""

from __future__ import annotations

import re
from pathlib import Path

from logparse.engine import core as engine
from logparse.engine.roles import declared_stage, role_of
from logparse.model.events import Severity
from logparse.model.findings import Finding
from logparse.rules.registry import REGISTRY, STAGES

ENGINE = Path(engine.__file__).resolve().parent


def test_no_rule_name_or_code_appears_in_the_engine() -> None:
    names = set(REGISTRY)
    codes = {r.code for r in REGISTRY.values()}
    for path in sorted(ENGINE.glob("*.py")):
        literals = set(re.findall(r"""["']([A-Za-z0-9-]+)["']""", path.read_text(encoding="utf-8")))
        assert not literals & names, f"{path.name} names rules {sorted(literals & names)}"
        assert not literals & codes, f"{path.name} names rule codes {sorted(literals & codes)}"


def test_declared_roles_are_valid_and_used() -> None:
    stages = {r.stage for r in REGISTRY.values()}
    assert stages <= {None, *STAGES}
    # The catalog declares each role at least once (otherwise the engine's branch is dead code).
    assert any(r.hang for r in REGISTRY.values())
    assert any(r.follow_on for r in REGISTRY.values())
    assert any(r.crash for r in REGISTRY.values())
    assert "startup" in stages and "served" in stages


def _finding(rule_name: str, line: int, **kw: object) -> Finding:
    r = REGISTRY[rule_name]
    return Finding(code=r.code, name=r.name, severity=Severity.ERROR, message="m", remedy="r",
                   first_line=line, **kw)  # type: ignore[arg-type]


def test_engine_reads_roles_from_the_registry_not_names() -> None:
    hang = next(r for r in REGISTRY.values() if r.hang)
    not_hang = next(r for r in REGISTRY.values() if not r.hang and r.severity == Severity.ERROR)
    assert role_of(_finding(hang.name, 1)).hang is True
    assert role_of(_finding(not_hang.name, 1)).hang is False
    startup = next(r for r in REGISTRY.values() if r.stage == "startup")
    assert declared_stage(_finding(startup.name, 1)) == "startup"
    # A finding's own stage wins over its rule's declaration (cuda-oom during weight loading).
    anytime = next(r for r in REGISTRY.values() if r.stage is None and r.severity == Severity.ERROR)
    assert declared_stage(_finding(anytime.name, 1)) == "unknown"
    assert declared_stage(_finding(anytime.name, 1, stage="startup")) == "startup"
    # An unregistered finding has no roles.
    ad_hoc = Finding(code="ZZZ999", name="not-a-rule", severity=Severity.ERROR, message="", remedy="")
    assert declared_stage(ad_hoc) == "unknown" and not role_of(ad_hoc).hang
