"""A regex matching any of a set of words, shaped as their trie (shared by the message catalog's
prefilter and the source-message index's unkeyed pieces)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any


def trie_regex(words: Iterable[str]) -> re.Pattern[str]:
    """A regex matching any of `words`, shaped as their trie: `out of mem|out of range` becomes
    `out\\ of\\ (?:mem|range)`, so the engine does not retry every word at every position."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alternatives = [re.escape(ch) + emit(node[ch]) for ch in sorted(k for k in node if k)]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        return f"(?:{body})?" if "" in node else body

    return re.compile(emit(trie) or "(?!)")
