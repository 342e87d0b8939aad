"""The rule catalog is complete and documented: every diagnosis of shared/diagnoses.md has a rule
under that exact name (with the family code and default severity the table gives), every rule has a
complete docstring and its bad/good fixtures, and docs/rules.md is the registry's current rendering."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.cli.rules import rules_markdown
from logparse.engine.core import analyze
from logparse.rules import all_rules, lookup
from logparse.rules.registry import DOC_SECTIONS

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DIAGNOSES = SHARED / "diagnoses.md"
DOCS = REPO / "docs" / "rules.md"
FIXTURES = REPO / "fixtures" / "rules"
RULES = all_rules()
_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def catalog_table() -> dict[str, dict[str, str]]:
    """Every diagnosis in the tables of diagnoses.md: name → {prefix, severity} (the code prefix from
    the section heading, e.g. 'Memory (MEM)', and the first word of the severity column)."""
    out: dict[str, dict[str, str]] = {}
    prefix = ""
    if not DIAGNOSES.is_file():  # a clone without ../shared/: the two catalog tests skip
        return out
    for line in DIAGNOSES.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## .*\((\w+)\)\s*$", line)
        if heading:
            prefix = heading.group(1)
            continue
        cells = (
            [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        )
        if len(cells) < 2:
            continue
        m = re.fullmatch(r"`([a-z0-9-]+)`", cells[0])
        if m and _KEBAB.match(m.group(1)):
            sev = re.match(r"\w+", cells[1])
            out[m.group(1)] = {"prefix": prefix, "severity": sev.group(0) if sev else ""}
    return out


CATALOG = catalog_table()
needs_diagnoses = pytest.mark.skipif(not DIAGNOSES.is_file(), reason="../shared/diagnoses.md is not beside the repository")


@needs_diagnoses
def test_catalog_parsed() -> None:
    # The catalog has 9 families; if the table format changes, this parser must follow.
    assert len(CATALOG) >= 30, CATALOG
    assert {
        "cuda-oom",
        "kv-pool-no-room",
        "startup-stalled",
        "max-running-requests-capped",
    } <= CATALOG.keys()


@needs_diagnoses
@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_diagnosis_has_a_rule(name: str) -> None:
    r = lookup(name)
    assert r is not None, f"diagnoses.md lists '{name}' but no rule is registered under that name"
    expected = CATALOG[name]
    assert re.fullmatch(rf"{expected['prefix']}\d{{3}}", r.code), (
        f"{name}: code {r.code} should be {expected['prefix']}nnn (its section in diagnoses.md)"
    )
    assert str(r.severity) == expected["severity"], (
        f"{name}: default severity {r.severity}, diagnoses.md says {expected['severity']}"
    )


def test_names_and_codes_are_unique_and_kebab_case() -> None:
    names = [r.name for r in RULES]
    codes = [r.code for r in RULES]
    assert len(set(names)) == len(names)
    assert len(set(codes)) == len(codes)
    for r in RULES:
        assert _KEBAB.match(r.name), r.name
        assert r.status in ("stable", "preview"), (r.name, r.status)


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_docstring_has_every_section(rule: object) -> None:
    r = rule
    assert r.summary and not r.summary.startswith("**"), (
        f"{r.name}: the docstring's first line is the summary"
    )
    for section in DOC_SECTIONS:
        body = r.sections.get(section, "").strip()
        assert body, f"{r.name}: docstring lacks a non-empty **{section}** section"
    example = r.sections["Example"]
    assert "```" in example and len(example.strip("`\n ")) > 20, (
        f"{r.name}: Example must be a log excerpt in a code block"
    )


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_rule_has_fixtures(rule: object) -> None:
    r = rule
    for kind in ("bad", "good"):
        path = FIXTURES / r.name / f"{kind}.log"
        assert path.is_file() and path.stat().st_size > 0, (
            f"{r.name}: missing {path.relative_to(REPO)}"
        )


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_fixtures_fire_and_do_not_fire(rule: object) -> None:
    r = rule
    bad, good = FIXTURES / r.name / "bad.log", FIXTURES / r.name / "good.log"
    if not (bad.is_file() and good.is_file()):
        pytest.fail(f"{r.name}: fixtures missing (see test_rule_has_fixtures)")
    fired_bad = analyze(str(bad))
    assert r.name in fired_bad.fired(), (
        f"{r.name}: bad.log does not fire it ({sorted(fired_bad.fired())})"
    )
    assert not fired_bad.rule_errors
    fired_good = analyze(str(good))
    assert r.name not in fired_good.fired(), f"{r.name}: good.log fires it"


def test_docs_rules_md_is_current() -> None:
    expected = rules_markdown(RULES)
    assert DOCS.is_file(), (
        "docs/rules.md is missing: run `python -m logparse.cli.rules docs/rules.md`"
    )
    assert DOCS.read_text(encoding="utf-8") == expected, (
        "docs/rules.md is stale: regenerate it with `python -m logparse.cli.rules docs/rules.md`"
    )


def test_docs_mention_every_rule() -> None:
    text = rules_markdown(RULES)
    for r in RULES:
        assert f"## {r.name}\n" in text and r.code in text


# --------------------------------------------------------------------------- the commands


def test_rules_command_formats() -> None:
    runner = CliRunner()
    text = runner.invoke(main, ["rules"])
    assert text.exit_code == 0 and text.stderr == ""
    for r in RULES:
        assert r.name in text.stdout and r.code in text.stdout
    js = runner.invoke(main, ["rules", "--format", "json"])
    assert js.exit_code == 0
    import json

    doc = json.loads(js.stdout)
    assert {d["name"] for d in doc["rules"]} == {r.name for r in RULES}
    assert all(set(DOC_SECTIONS) <= d["sections"].keys() for d in doc["rules"])
    md = runner.invoke(main, ["rules", "--format", "md"])
    assert md.exit_code == 0 and md.stdout == rules_markdown(RULES)


@pytest.mark.parametrize("key", ["cuda-oom", "MEM001", "mem001"])
def test_rule_command_by_name_or_code(key: str) -> None:
    result = CliRunner().invoke(main, ["rule", key])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("cuda-oom (MEM001)")
    for section in DOC_SECTIONS:
        assert f"\n{section}\n" in out
    # The fixture example: the evidence lines of bad.log (marked ►) with their context, numbered.
    assert "Fixture example (fixtures/rules/cuda-oom/bad.log" in out
    marked = [line for line in out.splitlines() if line.startswith(" ►")]
    assert any("CUDA out of memory" in line for line in marked)
    first = (FIXTURES / "cuda-oom" / "bad.log").read_text().splitlines()[0]
    assert f" ►   1 | {first}" in out


def test_rule_command_unknown_name() -> None:
    result = CliRunner().invoke(main, ["rule", "cuda-om"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "unknown rule 'cuda-om'" in result.stderr and "cuda-oom" in result.stderr
