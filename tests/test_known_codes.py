"""Known-message codes are a typed vocabulary that matches the grammar, and the code base uses only codes
the grammar emits."""

from __future__ import annotations

import re
from pathlib import Path

from logparse.grammar.build import get_parser
from logparse.grammar.transform.known import code_of
from logparse.model.codes import KnownCode

PACKAGE = Path(__file__).resolve().parents[1] / "logparse"


def _grammar_codes() -> set[str]:
    lark = get_parser(fast=False).lark
    out = set()
    for r in lark.rules:
        if r.alias == "known_message":
            # The code is the first kept terminal (uvicorn's level prefix excepted), as in KnownCallbacks.
            heads = [s for s in r.expansion if s.is_term and not s.name.startswith("_") and s.name != "UV_LEVEL"]
            out.add(code_of(heads[0].name))
    return out


def test_the_enum_and_the_grammar_agree() -> None:
    grammar = _grammar_codes()
    enum = set(KnownCode)
    assert grammar - enum == set(), f"codes the grammar emits but KnownCode lacks: {sorted(grammar - enum)}"
    assert enum - grammar == set(), f"KnownCode members the grammar never emits: {sorted(enum - grammar)}"


def test_code_literals_in_the_code_base_are_known() -> None:
    """String literals compared with a `.code` or collected in a `*_CODES` set must be codes the grammar
    emits — a code that is never emitted silently never matches (a log cut during start-up once got
    outcome None instead of `incomplete` that way)."""
    from logparse.grammar.messages import catalog

    known = set(KnownCode) | set(catalog().codes())  # MessageHit.code: catalog codes
    bad: list[str] = []
    compare = re.compile(r"""\.code\s*(?:==|!=)\s*["']([a-z0-9-]+)["']|\.code\s+(?:not\s+)?in\s+\(([^)]*)\)""")
    collection = re.compile(r"""^\s*[A-Z_]*CODES\s*(?::[^=]+)?=\s*frozenset\(\s*\{([^}]*)\}""", re.MULTILINE)
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        literals: list[str] = []
        for m in compare.finditer(text):
            literals += [m.group(1)] if m.group(1) else re.findall(r"""["']([a-z0-9-]+)["']""", m.group(2))
        for m in collection.finditer(text):
            literals += re.findall(r"""["']([a-z0-9-]+)["']""", m.group(1))
        bad += [f"{path.relative_to(PACKAGE)}: {c}" for c in literals if c not in known]
    assert not bad, "codes the grammar never emits: " + ", ".join(bad)
