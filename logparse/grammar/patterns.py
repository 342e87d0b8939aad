"""Reading lark's terminal patterns for the fast path: lexer order, first characters, literal prefixes.

Nothing here uses CPython-private modules: first characters come from the `regex` package's partial
matching, literal prefixes from the pattern text (conservatively: a prefix is only what every match
must start with)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any


def _lexer_order(term: Any) -> tuple[int, int, int, str]:
    """The order in which lark's lexer tries terminals (lark.lexer.BasicLexer._build_scanner)."""
    return (-term.priority, -term.pattern.max_width, -len(term.pattern.value), term.name)




def _first_chars(regexp: str) -> frozenset[str] | None:
    """The ASCII characters a match of `regexp` can start with, or None when that is not known
    (then the terminal is tried for every first character). Only ASCII is described: lines
    starting with a non-ASCII character are dispatched to the full scanner (exact).

    Decided with the `regex` package's partial matching — `fullmatch(c, partial=True)` succeeds
    when `c` is a prefix of some match — so no private parser of the `re` module is needed."""
    import regex

    if "(?<=" in regexp:  # a positive look-behind cannot be judged from the first character alone
        return None
    try:
        compiled = regex.compile(regexp)
    except (regex.error, re.error):
        return None
    if compiled.flags & regex.IGNORECASE or compiled.fullmatch("") is not None:
        return None
    return frozenset(c for c in _ASCII if compiled.fullmatch(c, partial=True) is not None)


_ASCII = tuple(chr(c) for c in range(128))
_META = frozenset(".^$*+?{}[]\\|()")


def _structure(regexp: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, depth) of the characters of `regexp` from `start` that are structure:
    not escaped and not inside a character class (a `]` right after `[` is a member). The depth
    is the parenthesis nesting before the character. One walker for the two questions below."""
    depth, i, in_class = 0, start, False
    while i < len(regexp):
        ch = regexp[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if regexp[i + 1 : i + 2] == "]":
                i += 1
        else:
            yield i, ch, depth
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
        i += 1


def _top_level_alternation(regexp: str) -> bool:
    return any(ch == "|" and depth == 0 for _, ch, depth in _structure(regexp))


def _literal_prefix(regexp: str) -> str:
    """The text every match of `regexp` starts with ('' when none): a cheap `startswith` test
    that rules a terminal out before its regex is even compiled. Read from the pattern's text,
    conservatively: plain characters and escaped punctuation up to the first construct that is
    not a literal (a class, a group, an escape like \\d, a quantifier)."""
    if _top_level_alternation(regexp):
        return ""
    if regexp[:3] in ("(?:", "(?>") and regexp.endswith(")") and _closing(regexp, 0) == len(regexp) - 1:
        return _literal_prefix(regexp[3:-1])
    out: list[str] = []
    i = 0
    while i < len(regexp):
        ch = regexp[i]
        if ch == "\\":
            nxt = regexp[i + 1 : i + 2]
            if not nxt or nxt.isalnum():
                break  # \\d, \\s, \\b, \\x41, \\n …: not a plain literal
            lit, step = nxt, 2
        elif ch in _META:
            break
        else:
            lit, step = ch, 1
        after = regexp[i + step : i + step + 1]
        if after in ("*", "?", "{"):
            break  # the literal is optional or counted
        out.append(lit)
        if after == "+":
            break
        i += step
    return "".join(out)


def _closing(regexp: str, start: int) -> int:
    """The index of the parenthesis that closes the one at `start` (-1 when unbalanced)."""
    for i, ch, depth in _structure(regexp, start):
        if ch == ")" and depth == 1:
            return i
    return -1
