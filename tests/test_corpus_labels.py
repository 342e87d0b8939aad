"""Every labeled development case meets its labels: root, expect, forbid, outcome, phase, facts.

The cases are the shared development corpus (../shared/corpus/, or its copy in
fixtures/corpus/shared-dev/) and the repository's own labeled real excerpts in
fixtures/corpus/dev/ (label format and conventions: shared/corpus/README.md). Scoring is
`tests/corpus_score.py` (one analysis per case, through `logparse.engine.core.analyze`).

A case listed in fixtures/corpus/known-misses.json is expected to miss (xfail, with the reason);
once it meets its labels the test fails until it is taken off the list. The holdout split is not
run case by case here (its scores are reported by tests/test_corpus_scores.py).
"""

from __future__ import annotations

import pytest

from tests.corpus_score import Case, cases, known_misses, scored

CASES = cases(["shared", "dev"])
KNOWN = known_misses()
_IDS = [f"{c.split}/{c.name}" for c in CASES]


def test_corpus_is_present() -> None:
    assert sum(c.split == "shared" for c in CASES) >= 51, "expected the 51 labeled shared corpus excerpts"


def test_known_misses_name_real_cases() -> None:
    names = {f"{c.split}/{c.name}" for c in cases()}
    assert not set(KNOWN) - names, f"known-misses.json names no such case: {sorted(set(KNOWN) - names)}"
    assert all(reason.strip() for reason in KNOWN.values()), "every known miss needs its reason"


def _check(case: Case, fields: set[str]) -> None:
    result = scored(case)
    key = f"{case.split}/{case.name}"
    problems = [p for p in result.describe() if p.split(":", 1)[0] in fields]
    if key in KNOWN:
        if result.ok:
            pytest.fail(f"{key} meets all its labels now: take it off fixtures/corpus/known-misses.json")
        pytest.xfail(f"known miss: {KNOWN[key]}")
    assert not problems, "\n".join(problems + [f"source: {case.source.get('url') if case.source else 'shared corpus'}"])


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_corpus_labels(case: Case) -> None:
    _check(case, {"root", "expect", "forbid", "outcome", "phase", "rules"})


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_corpus_facts(case: Case) -> None:
    _check(case, {"facts"})
