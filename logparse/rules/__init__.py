"""The rule catalog: one module per family; importing this package registers every rule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from logparse.rules.registry import REGISTRY, Rule, all_rules, lookup, rule

if TYPE_CHECKING:
    from logparse.engine.core import Analysis

__all__ = ["REGISTRY", "Rule", "all_rules", "lookup", "rule", "run_rules"]


def run_rules(analysis: Analysis, config: Any = None) -> None:
    """Run the whole catalog over one analysis: specific rules, then the fallbacks on unclaimed
    evidence; then the engine groups repeats, picks the root cause, nests consequences and decides
    the outcome (fills `analysis.findings`, `.root_cause`, `.outcome`).

    `config`: per-rule thresholds ({rule name: {key: value}}) or a `logparse.gate.config.Config`."""
    from logparse.engine.core import execute

    execute(analysis, all_rules(), config)
