"""The rule catalog: one module per family; importing this package registers every rule."""

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
from logparse.rules.registry import REGISTRY, Rule, all_rules, lookup, rule

__all__ = ["REGISTRY", "Rule", "all_rules", "lookup", "rule"]
