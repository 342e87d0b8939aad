"""Regex patterns compiled on first use.

The rule catalog and the callbacks define ~150 module-level patterns; compiling them all at import
cost a measurable share of the start-up of a short run, though most runs use few of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from logparse.model.retext import class_end, escape_end, group_end, group_kind, least_count

# What callers read from a pattern: bound to the instance at the first use, so that later reads
# are plain attribute reads (no Python-level call per `.match` on a per-line path).
_FORWARDED = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
              "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """Behaves like the compiled pattern (`.search`, `.match`, `.sub`, `.pattern`, ...)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the instance does not hold yet: the first use, or a rare attribute.
        if name.startswith("__") or name == "_args":
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(*self._args)
            self.__dict__["_compiled"] = compiled
            for attr in _FORWARDED:
                self.__dict__[attr] = getattr(compiled, attr)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._args[0]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile`, deferred to the first use (typed as a Pattern for callers)."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]


# -- alternations dispatched by first character ----------------------------------------------
#
# The classifier's families are long alternations (~40 branches for other programs' loggers); a
# short log with one foreign line compiled four of them whole (~9 ms of a ~100 ms run) to learn it
# is urllib3's. Split by the first character a branch can start with, a line compiles only the
# branches that can match it: the same answer (`match` anchors at the start, so a branch that
# cannot start with the line's first character never matches; the others keep their order).

_ASCII = frozenset(chr(c) for c in range(128))
# What `re` itself counts as \d, \w, \s among ASCII characters (its \s also takes \x1c-\x1f).
_CLASS_ESCAPES = {e: frozenset(c for c in _ASCII if re.match(f"\\{e}", c)) for e in "dws"}
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_ZERO_WIDTH_ESCAPES = frozenset("bBAZ")
_ANY = None  # a first-character set that is not known (or not limited): every character

Firsts = frozenset[str] | None

# Every pattern made by `lazy_branches` (the tests check each branch's first characters).
BRANCHED: list[BranchedPattern] = []


class BranchedPattern:
    """`re.compile(pattern).match`, compiling per first character only the branches that can
    start with it."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        # first character → the `match` of its branches' alternation (`_no_match` when none)
        self._by_char: dict[str, Callable[[str], re.Match[str] | None]] = {}
        self._read: tuple[list[str], list[Firsts]] | None = None

    @property
    def branches(self) -> list[str]:
        return self._reading()[0]

    @property
    def firsts(self) -> list[Firsts]:
        return self._reading()[1]

    def _reading(self) -> tuple[list[str], list[Firsts]]:
        """The branches and their first characters, read on the first match (a run that never
        classifies a line does not pay for it)."""
        read = self._read
        if read is None:
            branches = split_branches(self.pattern)
            # A global inline flag (`(?i)`) changes what a character matches: then no dispatch.
            firsts: list[Firsts] = [_ANY] * len(branches) if _global_flags(self.pattern) \
                else [branch_firsts(b) for b in branches]
            read = self._read = (branches, firsts)
        return read

    def _for(self, char: str) -> Callable[[str], re.Match[str] | None]:
        if not char or char not in _ASCII:
            chosen = self.branches  # the sets describe ASCII only
        else:
            chosen = [b for b, f in zip(self.branches, self.firsts, strict=True) if f is _ANY or char in f]
        found = re.compile("|".join(chosen)).match if chosen else _no_match
        self._by_char[char] = found
        return found

    def match(self, text: str) -> re.Match[str] | None:
        found = self._by_char.get(text[:1])
        return found(text) if found is not None else self._for(text[:1])(text)

    def __repr__(self) -> str:
        return f"BranchedPattern({self.pattern!r})"


def _no_match(text: str) -> None:
    return None


def lazy_branches(pattern: str) -> BranchedPattern:
    """A top-level alternation whose `match` compiles only the branches a line's first character
    can start (see `BranchedPattern`)."""
    out = BranchedPattern(pattern)
    BRANCHED.append(out)
    return out


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


def _global_flags(pattern: str) -> bool:
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
