"""Reading lark's terminal patterns for the fast path: lexer order, first characters, literal prefixes.

Nothing here uses CPython-private modules: first characters come from the `regex` package's partial
matching, literal prefixes from the pattern text (conservatively: a prefix is only what every match
must start with)."""

from __future__ import annotations

import re
from typing import Any

from logparse.model.retext import (
    class_end,
    escape_end,
    group_end,
    group_kind,
    least_count,
    split_branches,
)


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


def _literal_prefix(regexp: str) -> str:
    """The text every match of `regexp` starts with ('' when none): a cheap `startswith` test
    that rules a terminal out before its regex is even compiled. Read from the pattern's text,
    conservatively: plain characters and escaped punctuation up to the first construct that is
    not a literal (a class, a group, an escape like \\d, a quantifier)."""
    if len(split_branches(regexp)) > 1:
        return ""
    if regexp[:3] in ("(?:", "(?>") and regexp.endswith(")") and group_end(regexp, 0, len(regexp)) == len(regexp):
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


# -- required literals -------------------------------------------------------------------------
#
# A literal every match of a pattern must contain lets the fast path rule a terminal or a flat
# alternative out with one `str.find` before its regex is compiled or run: on a short log most of
# the terminals tried and compiled never match (a 1,000-line log compiled 41 such terminals,
# ~9 ms of its ~100 ms of work). Read from the pattern's text, conservatively: only what the
# pattern's structure forces (a literal run outside any optional part, alternation or class).

def required_literal(regexp: str) -> str:
    """The longest literal that every match of `regexp` contains ('' when none is known)."""
    runs = _required_runs(regexp, 0, len(regexp))
    return max(runs, key=len) if runs else ""


def _required_runs(regexp: str, start: int, end: int) -> list[str] | None:
    """The literal runs every match of `regexp[start:end]` (one scope: a whole pattern or a
    group's inside) contains; [] when none is known, None when the pattern sets a flag that
    changes what a literal matches (then nothing is known anywhere)."""
    out: list[str] = []
    run: list[str] = []
    i = start
    while i < end:
        kind, j, inner = _atom(regexp, i, end)
        if kind == "flags":
            return None
        if kind == "alt":
            return []  # an alternation of this scope: no single branch is required
        low, k = least_count(regexp, j, end)
        if kind == "lit" and low >= 1:
            run.append(regexp[j - 1] if regexp[i] == "\\" else regexp[i])
            if k != j:  # counted: the character is there, what follows may not be next to it
                out.append("".join(run))
                run = []
        else:
            if run:
                out.append("".join(run))
                run = []
            if kind == "group" and low >= 1 and inner is not None:
                found = _required_runs(regexp, inner[0], inner[1])
                if found is None:
                    return None
                out.extend(found)
        i = k
    if run:
        out.append("".join(run))
    return [r for r in out if r]


def _atom(regexp: str, i: int, end: int) -> tuple[str, int, tuple[int, int] | None]:
    """(kind, index after the atom, the inside of a group whose requirements hold) of the atom at
    `i`: kind is 'lit' (one literal character), 'group' (inside given when every match of the
    group is text the match holds: capturing, non-capturing, atomic, named, positive lookahead),
    'alt' (a `|`), 'flags' (an inline global flag) or 'other' (anything else: a class, an escape
    like \\d, '.', an anchor, a look-behind, a back-reference, a scoped flag group)."""
    ch = regexp[i]
    if ch == "\\":
        nxt = regexp[i + 1 : i + 2]
        if not nxt:
            return "other", i + 1, None
        if not nxt.isalnum():
            return "lit", i + 2, None
        return "other", escape_end(regexp, i, end), None
    if ch == "[":
        return "other", class_end(regexp, i, end), None
    if ch == "(":
        close = group_end(regexp, i, end)
        kind, inner = group_kind(regexp, i, close)
        if kind in ("group", "lookahead"):  # a positive look-ahead's text lies in the line too
            return "group", close, (inner, close - 1)
        return ("flags" if kind == "flags" else "other"), close, None
    if ch == "|":
        return "alt", i + 1, None
    if ch in ".^$":
        return "other", i + 1, None
    return "lit", i + 1, None