"""The rule catalog: one module per family; importing this package registers every rule.

Rules from other installed packages register through the `logdiag.rules` entry-point group
(`logparse/rules/plugins.py`); `all_rules()` loads them on first use, under the same contract."""

from __future__ import annotations

from logparse.rules import (  # noqa: F401 — imported for their registrations
    distributed,
    hang,
    info,
    kernels,
    memory,
    performance,
    quantization,
    server,
    speculative,
)
from logparse.rules.registry import REGISTRY, Rule, lookup, rule

__all__ = ["REGISTRY", "Rule", "all_rules", "lookup", "rule"]


def all_rules() -> list[Rule]:
    """Every registered rule, built-in and from plugins, by code."""
    from logparse.rules.plugins import load_plugins
    from logparse.rules.registry import all_rules as registered

    load_plugins()
    return registered()
