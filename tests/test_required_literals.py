"""`patterns.required_literal`: a literal every match of a pattern contains, which the fast path
tests with one `str.find` before it compiles or runs a terminal's or an alternative's regex. It must
be sound — a literal some match lacks would rule out a terminal lark's lexer picks — so every
terminal and flat alternative of the grammar is checked against strings generated from its own
regex, and the analyzer's reading of each construct is pinned below."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.grammar.build import get_parser
from logparse.grammar.patterns import required_literal


@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        ("abc", "abc"),
        ("a?bc", "bc"),  # an optional character is not required
        ("ab*cd", "cd"),
        ("a{2,3}bcd", "bcd"),  # a counted character ends a run (what follows may not touch it)
        ("a+bcd", "bcd"),
        ("(?:foo|bar)bazz", "bazz"),  # an alternation inside a group requires none of its branches
        ("x(?:foo)+y", "foo"),  # a group repeated at least once is required
        ("x(?:fooo)?y", "x"),
        ("x(?:fooo){0,2}y", "x"),
        ("(?P<n>hello) world", " world"),  # the longest run wins
        ("(?>(?P<k0>Decode batch)), ", "Decode batch"),
        ("(?=foooo)bar", "foooo"),  # a positive lookahead's text lies in the match's line
        ("(?!foooo)bar", "bar"),
        ("(?<=foooo)bar", "bar"),  # a look-behind reads text before the match: not required
        ("a|b", ""),
        ("abc|abd", ""),
        ("(?i)abcd", ""),  # a global flag changes what a literal matches
        ("(?i:abcd)ef", "ef"),  # a scoped one only inside its group
        (r"ab\x41cdef", "cdef"),  # an escape is never read as literal digits
        (r"ab\u0041cdef", "cdef"),
        (r"\N{BULLET}xyz", "xyz"),
        (r"(a)\1bcd", "bcd"),
        (r"\[\d{4}-\d{2}\] Capture", "] Capture"),
        (r"Load weight end\. type=\w+", "Load weight end. type="),
        ("[abc]def", "def"),
        ("[]x]def", "def"),  # a `]` first in a class is a member
        (r"[\]x]def", "def"),
        ("a{,}bcd", "a{,}bcd"),  # not a quantifier: literal braces
        ("a{x}bcd", "a{x}bcd"),
        (r"\.\.\.", "..."),
        (".*", ""),
        ("^ab$", "ab"),
        ("(?#comment)abc", "abc"),
        ("(a)?(?(1)ab|cd)efg", "efg"),
    ],
)
def test_reading_of_each_construct(pattern: str, needle: str) -> None:
    assert required_literal(pattern) == needle
    re.compile(pattern)  # every case is a real pattern


def _grammar_patterns() -> list[tuple[str, str]]:
    data = get_parser().fast.data  # type: ignore[union-attr]
    out = [(f"terminal {name}", regexp) for name, regexp in (data.terminal_patterns or {}).items()]
    for first, alts in data.alternatives.items():
        out += [(f"alternative {first}#{i}", src) for i, (src, _, _) in enumerate(alts)]
    return [(label, p) for label, p in out if required_literal(p)]


GRAMMAR = _grammar_patterns()


def test_the_grammar_has_required_literals() -> None:
    """Most terminals and alternatives name a literal (else the check below tests nothing)."""
    assert len(GRAMMAR) > 100


@pytest.mark.parametrize(("label", "pattern"), GRAMMAR, ids=[label for label, _ in GRAMMAR])
def test_every_generated_match_holds_the_literal(label: str, pattern: str) -> None:
    needle = required_literal(pattern)
    compiled = re.compile(pattern)

    @settings(max_examples=10, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(compiled, fullmatch=True))
    def check(text: str) -> None:
        assert needle in text, f"{label}: {needle!r} not in a match {text!r}"

    check()
