"""The rules hold no second parser: no regular expressions and no CPython-private regex internals
anywhere under logparse/rules/ — message families live in the catalog (grammars/messages/), line
shapes in the grammar, and rules read events, run facts and catalog messages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[1] / "logparse" / "rules"
MODULES = sorted(RULES.rglob("*.py"))
# Modules that compile or run regular expressions, or walk the regex engine's private structures.
FORBIDDEN = {"re", "regex", "sre_parse", "sre_compile", "sre_constants", "_sre", "logparse.model.lazyre",
             "logparse.model.recache"}


def _imports(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def test_there_are_rule_modules() -> None:
    assert len(MODULES) >= 20


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(RULES)))
def test_a_rule_module_imports_no_regex_machinery(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used = {m for m in _imports(tree) if m in FORBIDDEN or m.split(".")[0] in {"re", "regex", "_sre"}}
    assert not used, f"{path.relative_to(RULES)} imports {sorted(used)}: put the wording in grammars/messages/"
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "lazy_compile" not in names


# The one module that reads the message catalog for the rules: RuleContext leaves out the lines
# whose words are quoted rather than printed (a typed command, a request dump, the server_args
# dump) and remembers each answer. A rule that scans with the catalog itself bypasses both.
CATALOG_READER = RULES / "context.py"


@pytest.mark.parametrize("path", [m for m in MODULES if m != CATALOG_READER],
                         ids=lambda p: str(p.relative_to(RULES)))
def test_a_rule_module_reads_the_catalog_only_through_its_context(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    direct = sorted(m for m in _imports(tree) if m.startswith("logparse.grammar.messages"))
    assert not direct, (f"{path.relative_to(RULES)} imports {direct}: use ctx.messages / ctx.message_lines / "
                        "ctx.match / ctx.occurrences")
