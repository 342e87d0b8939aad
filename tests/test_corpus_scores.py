"""The corpus scores, by split, against the targets of issue 9 — printed on every run.

Whole corpus (shared + dev + holdout): root cause, expected findings (per case) and outcome each
≥ 95 % right, 0 forbidden findings, labeled facts ≥ 95 %, recognized lines ≥ 98 %. The holdout
split (fixtures/corpus/holdout/, never looked at while writing rules) is scored and printed
separately, next to the development splits, so that its score says how logdiag does on logs
its rules were not written against. Run `python -m tests.corpus_score` for the same table.
"""

from __future__ import annotations

import pytest

from tests.corpus_score import Score, cases, score_splits, table

# Issue 9's targets for the whole corpus.
TARGET_SHARE = 0.95
TARGET_RECOGNIZED = 0.98
# The development splits' unrecognized templates are printed (never the holdout's).
TOP_TEMPLATES = 20


@pytest.fixture(scope="module")
def scores() -> dict[str, Score]:
    return {s.split: s for s in score_splits(["shared", "dev", "holdout"])}


def test_scores_are_printed(scores: dict[str, Score], capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print("\n" + table(list(scores.values())))
        dev = Score("shared+dev", scores["shared"].results + (scores["dev"].results if "dev" in scores else []))
        print(f"\ntop unrecognized templates ({dev.split}, {sum(r.lines_total - r.lines_recognized for r in dev.results)} lines):")
        for template, count in dev.unrecognized().most_common(TOP_TEMPLATES):
            print(f"  {count:6d}  {template}")
    assert scores["shared"].n >= 51


def test_holdout_is_a_third_of_the_new_cases() -> None:
    new = cases(["dev", "holdout"])
    if not new:
        pytest.skip("no repository corpus cases (fixtures/corpus/dev, holdout)")
    holdout = sum(c.split == "holdout" for c in new)
    # The split is fixed by the hash of each case's source thread, so about a third.
    assert 0.2 <= holdout / len(new) <= 0.45, (holdout, len(new))


def test_new_cases_have_provenance() -> None:
    for case in cases(["dev", "holdout"]):
        assert case.source is not None, f"{case.split}/{case.name}: no .source.json"
        for key in ("url", "key", "title"):
            assert case.source.get(key), f"{case.split}/{case.name}: provenance lacks {key!r}"
        assert case.labels.get("note"), f"{case.split}/{case.name}: label has no note"


def test_whole_corpus_meets_the_targets(scores: dict[str, Score]) -> None:
    whole = scores.get("all", scores["shared"])
    misses = [
        f"{name} {value:.1%} < {TARGET_SHARE:.0%}"
        for name, value in (("root", whole.root), ("expect", whole.expect), ("outcome", whole.outcome),
                            ("facts", whole.facts))
        if value < TARGET_SHARE
    ]
    if whole.recognized < TARGET_RECOGNIZED:
        misses.append(f"recognized lines {whole.recognized:.2%} < {TARGET_RECOGNIZED:.0%}")
    if whole.forbidden:
        misses.append(f"{whole.forbidden} forbidden findings fired")
    assert not misses, "; ".join(misses)
