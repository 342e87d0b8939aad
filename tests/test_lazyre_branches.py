"""`lazyre.lazy_branches` (with `retext.branch_firsts`): an alternation whose `match` compiles, per first character of the text,
only the branches that can start with it. It must answer exactly as the whole pattern: every
branch's first-character set is checked against the `regex` package's partial matching (a superset
is sound), and texts generated from each branch and every fixture line get the same answer."""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.model.lazyre import BRANCHED, lazy_branches
from logparse.model.retext import branch_firsts, split_branches
from logparse.parsing import classify  # noqa: F401  (defines the classifier's branched patterns)
from tests.conftest import FIXTURES

_ASCII = [chr(c) for c in range(128)]
CASES = [(f"{i}:{j}", b, branch) for i, b in enumerate(BRANCHED) for j, branch in enumerate(b.branches)]


def test_the_classifier_uses_branched_patterns() -> None:
    assert len(BRANCHED) >= 6 and sum(len(b.branches) for b in BRANCHED) > 60


@pytest.mark.parametrize(("label", "pattern", "branch"), CASES, ids=[c[0] for c in CASES])
def test_first_characters_are_a_superset(label: str, pattern: object, branch: str) -> None:
    """Every ASCII character that can start a match (partial matching says a match starts with
    it) is in the branch's set; None means every character."""
    firsts = branch_firsts(branch)
    if firsts is None:
        return
    compiled = regex.compile(branch)
    can = {c for c in _ASCII if compiled.fullmatch(c, partial=True) is not None}
    assert can <= firsts, f"{label}: {sorted(can - firsts)} can start {branch!r}"


@pytest.mark.parametrize(("label", "pattern", "branch"), CASES, ids=[c[0] for c in CASES])
def test_a_match_of_each_branch_is_found(label: str, pattern: object, branch: str) -> None:
    whole = re.compile(pattern.pattern)  # type: ignore[attr-defined]

    @settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.from_regex(re.compile(branch), fullmatch=True))
    def check(text: str) -> None:
        assert (pattern.match(text) is not None) == (whole.match(text) is not None), text  # type: ignore[attr-defined]
        assert pattern.match(text) is not None, text  # type: ignore[attr-defined]

    check()


def test_every_fixture_line_gets_the_whole_patterns_answer() -> None:
    wholes = [(b, re.compile(b.pattern)) for b in BRANCHED]
    n = 0
    for path in sorted(FIXTURES.glob("**/*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            body = line.strip()
            for b, whole in wholes:
                n += 1
                assert (b.match(body) is None) == (whole.match(body) is None), (b, body)
    assert n > 10_000


@pytest.mark.parametrize(
    ("branch", "firsts"),
    [
        ("abc", "a"),
        ("a?bc", "ab"),
        ("(?:x|y)z", "xy"),
        ("(?:x|y)?z", "xyz"),
        (r"\d+ x", "0123456789"),
        (r"[a-c_]x", "abc_"),
        (r"[]a]x", "]a"),
        (r"(?=\[)\[x", "["),  # a look-ahead consumes nothing
        (r"^\s*x", " \t\n\r\f\v\x1c\x1d\x1e\x1fx"),  # re's \\s takes the separators too
        ("[^a]x", None),
        (".x", None),
        ("a*", None),  # may match empty: any text
        (r"\bword", "w"),
        (r"(?P<n>ab)c", "a"),
        (r"(?i:ab)c", None),
    ],
)
def test_first_characters_of_each_construct(branch: str, firsts: str | None) -> None:
    assert branch_firsts(branch) == (None if firsts is None else frozenset(firsts))


def test_split_ignores_bars_in_groups_and_classes() -> None:
    assert split_branches(r"a(?:b|c)|[|]d|\|e") == ["a(?:b|c)", "[|]d", r"\|e"]


def test_a_global_flag_turns_the_dispatch_off() -> None:
    p = lazy_branches("(?i)abc|def")
    assert p.match("ABC") is not None and p.match("DEF") is not None
    BRANCHED.remove(p)


def test_a_text_no_branch_can_start_compiles_nothing() -> None:
    p = lazy_branches("abc|def")
    try:
        assert p.match("xyz") is None
        assert list(p._by_char) == ["x"] and p._by_char["x"]("xyz") is None
        assert p.match("abc") is not None and p.match("") is None and p.match("é") is None
    finally:
        BRANCHED.remove(p)
