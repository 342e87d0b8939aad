"""The facts the corpus scorer reads (`analysis.views.facts()`) are the ones `logdiag analyze
--format json` prints, and its line accounting adds up (every line recognized or unparsed).

Per-case fact labels are checked by tests/test_corpus_labels.py::test_corpus_facts.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from tests.corpus_score import Case, cases, scored

# Every fourth development case: the JSON round trip is the same code for all of them.
SAMPLE = cases(["shared", "dev"])[::4]


@pytest.mark.parametrize("case", SAMPLE, ids=[f"{c.split}/{c.name}" for c in SAMPLE])
def test_json_facts_are_the_scored_facts(case: Case) -> None:
    result = CliRunner().invoke(main, ["analyze", str(case.log), "--format", "json"])
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["files"]
    lines = entry["lines"]
    assert lines["total"] == lines["recognized"] + lines["unparsed"]
    scored_case = scored(case)
    assert (lines["total"], lines["recognized"]) == (scored_case.lines_total, scored_case.lines_recognized)
    assert entry["facts"] == scored_case.reported_facts
