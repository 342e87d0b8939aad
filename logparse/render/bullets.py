"""A rule's remedy as short bullets for the terminal: one per flag or action.

Remedies are written as one sentence for JSON and the report (`a (why), or b (why); c: x, y, z`).
A person at a terminal wants the actions: the sentence is split where it lists alternatives
(`; ` and `, or ` outside parentheses and backticks) and where a short heading introduces a list
(`worth trying: `x`, `y``). A long remedy also loses its long asides (parenthesised text): the
first clause of an aside is kept when it is short, the rest is what `logdiag rule NAME` and
`--format json` carry; `shortened` says so, and the renderer prints that pointer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

LONG_REMEDY = 160  # characters: above this the asides are shortened
MAX_ASIDE = 50  # characters an aside may keep in a long remedy
MAX_HEADING = 40  # a `heading: a, b, c` list only under a heading this short
MAX_ITEM_WORDS = 6  # … and of items this short (or flags)


@dataclass
class Bullet:
    text: str
    items: list[str] = field(default_factory=list)


def _top_level(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of the characters outside parentheses, brackets and backticks."""
    depth = 0
    code = False
    for i, c in enumerate(text):
        if c == "`":
            code = not code
            continue
        if code:
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            yield i, c


def split_top(text: str, sep: str) -> list[str]:
    """`text` split at `sep` where it stands outside parentheses and backticks."""
    parts: list[str] = []
    start = 0
    for i, _ in _top_level(text):
        if i >= start and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _asides(text: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level parenthesised aside, end exclusive."""
    spans: list[tuple[int, int]] = []
    depth = 0
    code = False
    start = 0
    for i, c in enumerate(text):
        if c == "`":
            code = not code
        elif code:
            continue
        elif c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def shorten_asides(text: str) -> tuple[str, bool]:
    """The text with each long aside cut to its first clause (when that is short) or dropped."""
    changed = False
    out = text
    for start, end in reversed(_asides(text)):
        inner = text[start + 1 : end - 1]
        if len(inner) <= MAX_ASIDE:
            continue
        head = inner
        for sep in (": ", "; ", " — ", ", "):
            pieces = split_top(head, sep)
            if pieces:
                head = pieces[0]
        repl = f" ({head})" if len(head) <= MAX_ASIDE and head != inner else ""
        out = out[:start].rstrip() + repl + out[end:]
        changed = True
    return out.strip(), changed


def _heading_list(part: str) -> Bullet:
    """`heading: a, b, c` → a bullet with items; anything else → one bullet."""
    colon = next((i for i, c in _top_level(part) if c == ":" and part.startswith(": ", i)), None)
    if colon is not None and 0 < colon <= MAX_HEADING:
        items = split_top(part[colon + 2 :], ", ")
        # A list, not a sentence that names a few flags in passing: every item is a flag (starts
        # with a backtick) or a short phrase.
        if len(items) >= 2 and (all(i.startswith("`") for i in items)
                                or all(len(i.split()) <= MAX_ITEM_WORDS for i in items)):
            return Bullet(part[: colon + 1], items)
    return Bullet(part)


def remedy_bullets(remedy: str, shorten: bool = True) -> tuple[list[Bullet], bool]:
    """(bullets, shortened): the remedy's actions, and whether detail was left out (never with
    `shorten=False`: the report has the room for the asides)."""
    shortened = False
    if shorten and len(remedy) > LONG_REMEDY:
        remedy, shortened = shorten_asides(remedy)
    bullets: list[Bullet] = []
    for part in split_top(remedy, "; "):
        alternatives = split_top(part, ", or ")
        for n, alt in enumerate(alternatives):
            bullets.append(_heading_list(alt if n == 0 else f"or {alt}"))
    return bullets or [Bullet(remedy)], shortened
