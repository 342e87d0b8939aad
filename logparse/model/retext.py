"""Reading a regex's text, the pieces two conservative analyzers share: where a character class,
a group and an escape end, what a group's head makes of it, and a quantifier's least count.

`grammar/patterns.required_literal` (a literal every match holds) and `lazyre.branch_firsts` (the
characters a match can start with) read patterns with these; neither uses a private module of
`re`. Only what Python's `re` syntax says is read here; any construct these do not know is left to
the callers' "unknown" answer."""

from __future__ import annotations

_QUANT_CHARS = frozenset("0123456789,")


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
