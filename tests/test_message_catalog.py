"""The message catalog (grammars/messages/*.toml): well-formed, its samples match, its prefilter is sound,
and every code a rule asks for exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logparse.grammar.messages import CatalogError, catalog, load_catalog

RULES = Path(__file__).resolve().parents[1] / "logparse" / "rules"
CAT = catalog()
SPECS = [CAT[c] for c in CAT.codes()]


def test_the_catalog_is_not_empty() -> None:
    assert len(SPECS) >= 1


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.code)
def test_every_pattern_matches_a_sample_and_every_sample_matches(spec) -> None:  # type: ignore[no-untyped-def]
    assert spec.samples, f"{spec.code}: no samples"
    for pattern in spec.compiled:
        assert any(pattern.search(s) for s in spec.samples), f"{spec.code}: no sample for {pattern.pattern}"
    for sample in spec.samples:
        assert spec.match(sample) is not None, f"{spec.code}: sample does not match: {sample}"
        # The prefilter must select the entry for its own sample, or a real match would be hidden.
        assert spec.code in CAT.candidates(sample), f"{spec.code}: no needle occurs in: {sample}"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.code)
def test_declared_fields_are_named_groups(spec) -> None:  # type: ignore[no-untyped-def]
    groups = {g for p in spec.compiled for g in p.groupindex}
    assert set(spec.fields) <= groups, f"{spec.code}: fields without a group: {set(spec.fields) - groups}"


def test_every_code_a_rule_asks_for_exists() -> None:
    asked: set[str] = set()
    for path in RULES.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        asked |= set(re.findall(r"""\b(?:messages|message_lines|match|collect|occurrences|has_message)\(\s*["']([a-z0-9-]+)["']""",
                                text))
        asked |= set(re.findall(r"""\b(?:find_message|warnings_with)\(\s*ctx,\s*["']([a-z0-9-]+)["']""", text))
    missing = sorted(c for c in asked if c not in CAT)
    assert not missing, f"rules ask for codes the catalog lacks: {missing}"


def test_conversions_are_total() -> None:
    cat = load_catalog([("t", '''
[[message]]
code = "t-num"
needles = ["value"]
patterns = ['value (?P<n>\\S+) (?P<x>\\S+)']
fields = { n = "int", x = "float" }
samples = ["value 3 1.5"]
''')])
    spec = cat["t-num"]
    assert spec.match("value 3 1.5") == {"n": 3, "x": 1.5}
    assert spec.match("value " + "9" * 5000 + " inf") == {"n": None, "x": None}
    assert spec.match("value -inf nan") == {"n": None, "x": None}
    assert spec.match("value 1,024 2") == {"n": 1024, "x": 2.0}


def test_collect_merges_the_clauses_of_one_message() -> None:
    spec = CAT["cuda-oom-numbers"]
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
            "capacity of 79.11 GiB of which 3.50 MiB is free.")
    assert spec.collect(text) == {"tried": 20.0, "tried_unit": "MiB", "gpu": 0, "total": 79.11,
                                  "total_unit": "GiB", "free": 3.5, "free_unit": "MiB"}
    assert spec.collect("no numbers here") is None


def test_prefilter_finds_overlapping_and_case_folded_needles() -> None:
    cat = load_catalog([("t", '''
[[message]]
code = "a"
needles = ["out of memory"]
patterns = ['out of memory']
ignore_case = true
samples = ["CUDA out of memory"]
[[message]]
code = "b"
needles = ["out of mem"]
patterns = ['Out of mem']
samples = ["Out of mem"]
[[message]]
code = "c"
needles = ["memory leak"]
patterns = ['memory leak']
samples = ["memory leak"]
''')])
    assert cat.candidates("CUDA OUT OF MEMORY LEAK") == {"a", "b", "c"}
    assert cat.candidates("nothing here") == set()


@pytest.mark.parametrize(
    "doc, error",
    [
        ('[[message]]\ncode = "Bad Code"\nneedles=["abc"]\npatterns=["a"]', "bad or missing code"),
        ('[[message]]\ncode = "x"\npatterns=["a"]', "needs 'patterns' and 'needles'"),
        ('[[message]]\ncode = "x"\nneedles=["ab"]\npatterns=["a"]', "at least 3"),
        ('[[message]]\ncode = "x"\nneedles=["abc"]\npatterns=["a"]\nfields={a="date"}', "unknown type"),
        ('[[message]]\ncode = "x"\nneedles=["abc"]\npatterns=["a"]\nwhat=1', "unknown keys"),
        (('[[message]]\ncode = "x"\nneedles=["abc"]\npatterns=["a"]\n[[message]]\ncode = "x"\nneedles=["abc"]\n'
         'patterns=["a"]'), "defined twice"),
        ("[[message]\n", "t"),
    ],
)
def test_malformed_catalogs_are_rejected(doc: str, error: str) -> None:
    with pytest.raises(CatalogError, match=re.escape(error)):
        load_catalog([("t", doc)])


def test_masked_prefilter_starts_small_and_answers_as_the_full_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A short run compiles the masked prefilter as the trie of the words' first three characters
    (a few hundred texts do not pay for the whole words' trie); after _FULL_TRIE_AFTER scans the
    whole words' trie replaces it. Both give `candidates` on every fixture line."""
    from pathlib import Path

    from logparse.grammar import messages
    from logparse.grammar.messages import Catalog, catalog

    monkeypatch.setattr(messages, "_FULL_TRIE_AFTER", 100)
    cat = Catalog(catalog().specs)  # fresh: no prefilter built yet
    root = Path(__file__).parents[1] / "fixtures"
    texts = list(dict.fromkeys(
        line for path in sorted(root.glob("corpus/dev/*.log"))
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()))
    assert len(texts) > 1_000
    cat.candidates_masked(texts[0])
    words = cat.__dict__["_masked_words"]
    small = cat.__dict__["_masked"][0].pattern
    assert len(small) * 2 < len(messages._trie_regex(words).pattern)
    for text in texts:
        assert cat.candidates_masked(text) == cat.candidates(text), text
    assert cat.__dict__["_masked"][0].pattern == messages._trie_regex(words).pattern  # switched
