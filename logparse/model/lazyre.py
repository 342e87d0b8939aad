"""Regex patterns compiled on first use.

The rule catalog and the callbacks define ~150 module-level patterns; compiling them all at import
cost a measurable share of the start-up of a short run, though most runs use few of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from logparse.model.retext import ASCII, Firsts, branch_firsts, global_flags, split_branches

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
            firsts: list[Firsts] = [None] * len(branches) if global_flags(self.pattern) \
                else [branch_firsts(b) for b in branches]
            read = self._read = (branches, firsts)
        return read

    def _for(self, char: str) -> Callable[[str], re.Match[str] | None]:
        if not char or char not in ASCII:
            chosen = self.branches  # the sets describe ASCII only
        else:
            chosen = [b for b, f in zip(self.branches, self.firsts, strict=True) if f is None or char in f]
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
