"""Reading a regex's text: where a character class, a group and an escape end, what a group's head
makes of it, a quantifier's least count, a pattern's top-level branches and the characters a
branch's match can start with.

The one owner of this reading: `grammar/patterns` (literal prefixes, required literals) and
`lazyre.lazy_branches` (the classifier's per-character dispatch) call it; nothing uses a private
module of `re`. Only what Python's `re` syntax says is read; a construct not known here is the
callers' "unknown" answer (no literal, every character)."""

from __future__ import annotations

import re

_QUANT_CHARS = frozenset("0123456789,")
ASCII = frozenset(chr(c) for c in range(128))
# What `re` itself counts as \d, \w, \s among ASCII characters (its \s also takes \x1c-\x1f).
_CLASS_ESCAPES = {e: frozenset(c for c in ASCII if re.match(f"\\{e}", c)) for e in "dws"}
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_ZERO_WIDTH_ESCAPES = frozenset("bBAZ")
_ANY = None  # a first-character set that is not known (or not limited): every character

# The characters a match can start with: a set (ASCII only is described), or None (any).
Firsts = frozenset[str] | None


def class_end(p: str, i: int, end: int | None = None) -> int:
    """The index after the character class that starts at `i` (a `]` first in it, after an
    optional `^`, is a member)."""
    stop = len(p) if end is None else end
    j = i + 1
    if p[j : j + 1] == "^":
        j += 1
    if p[j : j + 1] == "]":
        j += 1
    while j < stop:
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "]":
            return j + 1
        j += 1
    return stop


def group_end(p: str, i: int, end: int) -> int:
    """The index after the parenthesis that closes the one at `i` (`end` when unbalanced)."""
    depth, j = 0, i
    while j < end:
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = class_end(p, j, end)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return end


def group_kind(p: str, i: int, close: int) -> tuple[str, int]:
    """(kind, index of the inside) of the group at `i` that ends before `close`. Kinds: 'group'
    (capturing, non-capturing, atomic, named: it matches its inside), 'lookahead', 'negative'
    (a negative look-ahead), 'lookbehind' (either sign), 'comment', 'other' (a back-reference,
    a conditional, a scoped flag group) and 'flags' (a flag for the whole pattern)."""
    head = p[i + 1 : i + 4]
    if not head.startswith("?"):
        return "group", i + 1
    if head.startswith(("?:", "?>")):
        return "group", i + 3
    if head.startswith("?P<"):
        return "group", p.find(">", i) + 1
    if head.startswith("?="):
        return "lookahead", i + 3
    if head.startswith("?!"):
        return "negative", i + 3
    if head.startswith("?<"):
        return "lookbehind", i + 4
    if head.startswith("?#"):
        return "comment", i + 2
    if head.startswith(("?P=", "?(")):
        return "other", i + 1
    # (?aiLmsux) sets a flag for the whole pattern; (?i:...) only inside its group.
    return ("other" if p.find(":", i, close) >= 0 else "flags"), i + 1


def escape_end(p: str, i: int, end: int) -> int:
    """The index after the escape at `i` (`\\x41`, `\\u…`, `\\N{…}` and back-references run
    longer than two characters: their digits are never literal text)."""
    nxt = p[i + 1 : i + 2]
    if nxt == "x":
        return min(i + 4, end)
    if nxt == "u":
        return min(i + 6, end)
    if nxt == "U":
        return min(i + 10, end)
    if nxt == "N":
        close = p.find("}", i)
        return close + 1 if 0 <= close < end else end
    if nxt.isdigit():
        j = i + 1
        while j < end and p[j].isdigit():
            j += 1
        return j
    return min(i + 2, end)


def least_count(p: str, j: int, end: int) -> tuple[int, int]:
    """(least count, index after) of the quantifier at `j`: (1, j) when there is none (a `{` that
    is no quantifier is a literal, the next atom). A lazy or possessive mark has the same count."""
    q = p[j : j + 1]
    if q in ("*", "?"):
        low, k = 0, j + 1
    elif q == "+":
        low, k = 1, j + 1
    elif q == "{":
        close = p.find("}", j, end)
        body = p[j + 1 : close] if close > j else ""
        if close < 0 or not body or body == "," or not set(body) <= _QUANT_CHARS or body.count(",") > 1:
            return 1, j
        head = body.split(",")[0]
        low, k = (int(head) if head else 0), close + 1
    else:
        return 1, j
    if p[k : k + 1] in ("?", "+"):
        k += 1
    return low, k


# -- first characters and top-level branches ---------------------------------------------

# The characters that give a pattern its structure, with what hides them taken whole: an escape,
# a class (a `]` first in it, after an optional `^`, is a member). One C-level scan instead of a
# Python loop over every character (the classifier's families are ~20 KB of pattern text).
_STRUCTURE = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|[()|]", re.DOTALL)


def split_branches(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern` (outside groups and classes)."""
    out: list[str] = []
    depth, start = 0, 0
    for m in _STRUCTURE.finditer(pattern):
        ch = m.group()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start : m.start()])
            start = m.end()
    out.append(pattern[start:])
    return out


def global_flags(pattern: str) -> bool:
    """Whether `pattern` sets an inline flag for all of it (`(?i)`: what a character matches changes)."""
    i = 0
    while True:
        i = pattern.find("(?", i)
        if i < 0:
            return False
        j = i + 2
        while j < len(pattern) and pattern[j] in "aiLmsux-":
            j += 1
        if j > i + 2 and pattern[j : j + 1] == ")":
            return True
        i += 2


def branch_firsts(branch: str) -> Firsts:
    """The characters a match of `branch` can start with: a superset, or None (any, or a match
    may be empty)."""
    firsts, nullable = _seq_firsts(branch, 0, len(branch))
    return _ANY if nullable else firsts


def _seq_firsts(p: str, start: int, end: int) -> tuple[Firsts, bool]:
    """(first characters, whether the sequence can match empty) of `p[start:end]`, one scope."""
    # An alternation in this scope: the union of its branches.
    parts = split_branches(p[start:end])
    if len(parts) > 1:
        acc: set[str] = set()
        nullable = False
        for part in parts:
            f, n = _seq_firsts(part, 0, len(part))
            if f is _ANY:
                return _ANY, n
            acc |= f
            nullable = nullable or n
        return frozenset(acc), nullable
    acc = set()
    i = start
    while i < end:
        f, zero_width, nullable_atom, j = _atom_firsts(p, i, end)
        low, k = least_count(p, j, end)
        i = k
        if zero_width:
            continue
        if f is _ANY:
            return _ANY, False
        acc |= f
        if low >= 1 and not nullable_atom:
            return frozenset(acc), False
    return frozenset(acc), True


def _atom_firsts(p: str, i: int, end: int) -> tuple[Firsts, bool, bool, int]:
    """(first characters, zero-width, can match empty, index after) of the atom at `i`."""
    ch = p[i]
    if ch == "\\":
        nxt = p[i + 1 : i + 2]
        if nxt in _ZERO_WIDTH_ESCAPES:
            return frozenset(), True, True, i + 2
        if nxt in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[nxt], False, False, i + 2
        if nxt in _CHAR_ESCAPES:
            return frozenset(_CHAR_ESCAPES[nxt]), False, False, i + 2
        if nxt and not nxt.isalnum():
            return frozenset(nxt), False, False, i + 2
        return _ANY, False, False, escape_end(p, i, end)
    if ch == "[":
        j = class_end(p, i)
        return _class_firsts(p[i + 1 : j - 1]), False, False, j
    if ch == "(":
        j = group_end(p, i, end)
        kind, inner = group_kind(p, i, j)
        if kind in ("lookahead", "negative", "lookbehind", "comment"):
            return frozenset(), True, True, j  # a look-around or a comment consumes nothing
        if kind != "group":
            return _ANY, False, False, j  # a back-reference, a conditional, a flag
        f, nullable = _seq_firsts(p, inner, j - 1)
        return f, False, nullable, j
    if ch in "^$":
        return frozenset(), True, True, i + 1
    if ch == ".":
        return _ANY, False, False, i + 1
    return frozenset(ch), False, False, i + 1


def _class_firsts(body: str) -> Firsts:
    if body.startswith("^"):
        return _ANY
    out: set[str] = set()
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1 : i + 2]
            if nxt in _CLASS_ESCAPES:
                out |= _CLASS_ESCAPES[nxt]
                i += 2
                continue
            if nxt in _CHAR_ESCAPES:
                c, i = _CHAR_ESCAPES[nxt], i + 2
            elif nxt and not nxt.isalnum():
                c, i = nxt, i + 2
            else:
                return _ANY  # \D, \W, \S, \x41, …: not worth reading
        else:
            i += 1
        if body[i : i + 1] == "-" and i + 1 < len(body):
            hi = body[i + 1]
            if hi == "\\":
                return _ANY
            out |= {chr(x) for x in range(ord(c), ord(hi) + 1)}
            i += 2
        else:
            out.add(c)
    return frozenset(out)
