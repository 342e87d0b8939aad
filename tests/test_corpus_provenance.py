"""The repository corpus's provenance rules (fixtures/corpus/README.md), checked on every case:
no case comes from a thread reserved for evaluation, each case sits in the split its thread's hash
gives (or says why not), and one thread's cases share one split.

The excluded list is only compared against the keys our cases already carry: nothing here reads
which threads it holds."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "fixtures" / "corpus"
EXCLUDED = REPO.parent / "shared" / "corpus" / "excluded-sources.sha256"
SPLITS = ("dev", "holdout")


def _digest(key: str) -> str:
    return hashlib.sha256(key.lower().encode()).hexdigest()


def _sources() -> list[tuple[str, str, dict[str, object]]]:
    found = [(split, path.name.removesuffix(".source.json"), json.loads(path.read_text()))
             for split in SPLITS for path in sorted((CORPUS / split).glob("*.source.json"))]
    if not found:
        pytest.skip("no repository corpus cases (fixtures/corpus/dev, holdout)")
    return found


def _hash_split(key: str) -> str:
    return "holdout" if int(_digest(key), 16) % 3 == 0 else "dev"


def _rule_sources() -> set[str]:
    """Threads read while writing rules (their cases are not unseen, so they go to dev)."""
    listed = CORPUS / "rule-sources.txt"
    if not listed.exists():
        return set()
    return {line.split()[0].lower() for line in listed.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")}


def test_no_case_comes_from_an_excluded_thread() -> None:
    if not EXCLUDED.exists():
        pytest.skip("../shared/corpus/excluded-sources.sha256 not found (a clone without ../shared)")
    excluded = {line.split()[0] for line in EXCLUDED.read_text().splitlines() if line.strip()
                and not line.startswith("#")}
    assert len(excluded) > 10, "the excluded list did not parse"
    hits = [f"{split}/{name}" for split, name, source in _sources()
            if _digest(str(source["key"])) in excluded]
    assert not hits, f"cases from threads reserved for evaluation: {hits}"


def test_each_case_sits_in_its_threads_split() -> None:
    moved_to_dev = _rule_sources()
    wrong: list[str] = []
    for split, name, source in _sources():
        key = str(source["key"]).lower()
        expected = _hash_split(key)
        if expected == split:
            continue
        # Allowed only towards dev, for a thread rules were written from, and said so.
        if split == "dev" and (key in moved_to_dev or source.get("split_note")):
            continue
        wrong.append(f"{split}/{name} ({key}) belongs in {expected}")
    assert not wrong, wrong


def test_one_thread_one_split() -> None:
    splits: dict[str, set[str]] = defaultdict(set)
    for split, _name, source in _sources():
        splits[str(source["key"]).lower()].add(split)
    mixed = {key: sorted(s) for key, s in splits.items() if len(s) > 1}
    assert not mixed, f"threads whose cases are in both splits: {mixed}"


def test_the_split_rule_is_the_readmes() -> None:
    # The README's own example of the rule, so a change of the hash or the modulus shows here.
    assert _hash_split("sgl-project/sglang#36770") == "holdout"
    assert {_hash_split(f"sgl-project/sglang#{n}") for n in range(1, 30)} == {"dev", "holdout"}
