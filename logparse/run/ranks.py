"""Rank tags: numeric order ('TP2' < 'TP10') and compact ranges ('TP0–TP7')."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from logparse.model.events import Event
from logparse.model.numbers import MAX_INT_CHARS


def _tag_number(digits: str) -> int:
    """The number of a rank tag; a damaged one (thousands of digits: Python's int-string limit)
    sorts after every real rank instead of raising."""
    return int(digits) if len(digits) <= MAX_INT_CHARS else 10**MAX_INT_CHARS


def rank_key(tag: str) -> tuple[Any, ...]:
    """Sort rank tags numerically: 'TP2' < 'TP10'; 'DP1 TP1' by DP then TP."""
    return tuple((re.sub(r"\d+", "", part), _tag_number(re.sub(r"\D", "", part) or "0")) for part in tag.split())


def is_sglang_rank(e: Event) -> bool:
    """Whether the event's rank tag is SGLang's (torch '[rankN]:' and 'GPU…' prefixes are not)."""
    return not (e.rank or "").startswith(("rank", "GPU"))


def rank_range(ranks: Iterable[str]) -> str:
    """'TP0–TP7' for consecutive rank tags, 'DP0 TP0–DP7 TP7', else a comma list of runs."""
    tags = sorted(set(ranks), key=rank_key)
    if not tags:
        return ""
    runs: list[list[str]] = [[tags[0]]]
    for tag in tags[1:]:
        if _successor(runs[-1][-1], tag):
            runs[-1].append(tag)
        else:
            runs.append([tag])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{run[0]}–{run[-1]}")
        else:
            parts.extend(run)
    return ", ".join(parts)


def _successor(a: str, b: str) -> bool:
    """Whether every number of tag b is the same number of tag a plus one ('DP1 TP1' → 'DP2 TP2')."""
    if re.sub(r"\d+", "#", a) != re.sub(r"\d+", "#", b):
        return False
    na = [_tag_number(x) for x in re.findall(r"\d+", a)]
    nb = [_tag_number(x) for x in re.findall(r"\d+", b)]
    return bool(na) and all(y == x + 1 for x, y in zip(na, nb, strict=True))
