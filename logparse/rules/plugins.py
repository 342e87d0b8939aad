"""Rules from installed packages: the `logdiag.rules` entry-point group, held to the built-in contract.

A package declares, in its pyproject.toml:

    [project.entry-points."logdiag.rules"]
    mycompany = "mycompany_logdiag.rules"      # a module whose import registers rules with @rule

and registers rules exactly like the built-in ones (`from logparse.rules.registry import rule`). A plugin
rule must meet the same contract as a built-in rule, or it is not registered: a code like `ACME001`, a
kebab-case name that does not clash, a docstring with the four sections (What it means, Why it matters,
Example, Fix), and fixtures `fixtures/<name>/bad.log` and `good.log` beside the module. A plugin that fails
to import, or a rule that breaks the contract, is reported (`logdiag rules` lists the problems) and never
stops logdiag. `LOGDIAG_NO_PLUGINS=1` skips plugins altogether.
"""

from __future__ import annotations

import os
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING

from logparse.model.record import Record, record
from logparse.rules import registry

if TYPE_CHECKING:
    from pathlib import Path  # imported where used: pathlib costs a short run's start-up

ENTRY_POINT_GROUP = "logdiag.rules"


def _is_code(code: str) -> bool:
    """Like the built-in codes: 2–8 capital letters and three digits (`ACME001`)."""
    head, digits = code[:-3], code[-3:]
    return 2 <= len(head) <= 8 and head.isascii() and head.isalpha() and head.isupper() and digits.isdigit()


def _is_kebab(name: str) -> bool:
    parts = name.split("-")
    return all(p and p.isascii() and p.isalnum() and p == p.lower() for p in parts)


@record  # frozen, keyword-only, without @dataclass's code generation at import
class PluginProblem(Record):
    """A plugin, or one of its rules, that was not loaded, and why."""

    origin: str  # the distribution (or the entry point's value when it has none)
    entry_point: str
    rule: str | None
    reason: str

    def __str__(self) -> str:
        what = f"rule {self.rule}" if self.rule else f"entry point {self.entry_point}"
        return f"{self.origin}: {what} not loaded: {self.reason}"


PROBLEMS: list[PluginProblem] = []
_LOADED = [False]


def contract_problems(rule: registry.Rule, fixture_dir: Path | None) -> list[str]:
    """Why a rule breaks the catalog's contract (empty when it meets it)."""
    out = []
    if not _is_code(rule.code):
        out.append(f"code {rule.code!r} is not like 'ACME001'")
    if not _is_kebab(rule.name):
        out.append(f"name {rule.name!r} is not kebab-case")
    missing = [s for s in registry.DOC_SECTIONS if not rule.sections.get(s)]
    if missing:
        out.append(f"docstring lacks the sections {', '.join(missing)}")
    if fixture_dir is None or not all((fixture_dir / f).is_file() for f in ("bad.log", "good.log")):
        out.append(f"no fixtures/{rule.name}/bad.log and good.log beside the plugin module")
    return out


def _fixture_root(obj: object) -> Path | None:
    module_file = getattr(obj, "__file__", None)
    if module_file is None and not isinstance(obj, ModuleType):
        module_name = getattr(obj, "__module__", None)
        import sys

        module_file = getattr(sys.modules.get(module_name or ""), "__file__", None)
    from pathlib import Path

    return Path(module_file).resolve().parent / "fixtures" if module_file else None


def _unregister(name: str) -> None:
    r = registry.REGISTRY.pop(name, None)
    if r is not None:
        registry.BY_CODE.pop(r.code, None)


def _declared_anywhere() -> bool:
    """Whether any installed distribution's `entry_points.txt` mentions the group. A cheap look at
    the metadata files on sys.path, so that a run without plugins never imports importlib.metadata
    (with the email package it pulls in, a measurable share of a short run's start-up)."""
    import sys

    marker = f"[{ENTRY_POINT_GROUP}]"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8") as fh:
                    if marker in fh.read():
                        return True
            except OSError:
                continue
    return False


def load_plugins(*, force: bool = False) -> list[PluginProblem]:
    """Import every `logdiag.rules` entry point once; keep the rules that meet the contract."""
    if _LOADED[0] and not force:
        return PROBLEMS
    _LOADED[0] = True
    if os.environ.get("LOGDIAG_NO_PLUGINS") or not _declared_anywhere():
        return PROBLEMS
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        origin = ep.dist.name if ep.dist is not None else ep.value
        before = set(registry.REGISTRY)
        registry._ORIGIN[0] = origin
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, ModuleType):
                obj()  # an entry point may name a function that registers the rules
        except Exception as err:  # noqa: BLE001 — a broken plugin must never stop logdiag
            for name in set(registry.REGISTRY) - before:
                _unregister(name)
            PROBLEMS.append(PluginProblem(origin=origin, entry_point=ep.value, rule=None,
                                          reason=f"{type(err).__name__}: {err}"))
            continue
        finally:
            registry._ORIGIN[0] = "logdiag"
        root = _fixture_root(obj)
        for name in sorted(set(registry.REGISTRY) - before):
            rule = registry.REGISTRY[name]
            fixtures = root / name if root is not None else None
            problems = contract_problems(rule, fixtures)
            if problems:
                _unregister(name)
                PROBLEMS.append(PluginProblem(origin=origin, entry_point=ep.value, rule=name,
                                              reason="; ".join(problems)))
                continue
            registry.REGISTRY[name] = registry.BY_CODE[rule.code] = replace(rule, fixture_dir=str(fixtures))
    return PROBLEMS
