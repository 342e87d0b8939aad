"""How much of a log the grammar understood: counts and templates of the lines it did not.

Unparsed lines are never errors; grouping them into templates (numbers, hex, paths, addresses
masked) keeps the grammar's gaps visible without holding every line. A line the grammar has no rule
for but whose kind is known by structure (`parsing/classify.py`: SGLang's own source messages, pip,
markdown, shell output, another logger) counts as recognized and is counted by kind in `classified`;
so does one whose kind only its neighbours tell (`parsing/continuations.py`: an excerpt's cut last
line, a hard-wrapped line's rest), decided by `settle` once the log is read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from logparse.parsing.classify import classify
from logparse.parsing.continuations import context_kind

_MASKS = [
    (re.compile(r"(?:/[\w.@+-]+){2,}/?"), "<path>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<hex>"),
    (re.compile(r"-?\d+(?:\.\d+)?"), "<n>"),
]
MAX_TEMPLATES = 5_000  # distinct templates kept; the rest are counted under one overflow bucket
MAX_TEMPLATE_CHARS = 160
OVERFLOW = "<other templates>"
# What an unparsed line is (its kind, or its template) depends on its text alone, and logs repeat
# such lines (a corpus pasted twice, another program's fixed messages, every rank's copy): the
# answer is kept per text. Bounded in entries and in the length of a kept text (a memo of long
# unique lines would only cost memory); a full memo starts over.
MEMO_ENTRIES = 8192
MEMO_TEXT_CHARS = 400
# Unknown lines kept (number, text, template, enveloped) for `settle` to look at with their neighbours: an
# excerpt holds a few; a large log's first ones are enough to count (the rest stay unknown).
MAX_PENDING = 4096


def template_of(text: str) -> str:
    """Mask the variable parts of a line: '… avail mem=12.3 GB' → '… avail mem=<n> GB'."""
    t = text[:MAX_TEMPLATE_CHARS * 2]
    path, hex_, ip, long_hex, number = _MASKS
    # A mask that cannot match (a path needs '/', a 0x number its '0x', an address its dots) is
    # skipped: the substitutions run in the same order on the same text as without the checks.
    if "/" in t:
        t = path[0].sub(path[1], t)
    if "0x" in t:
        t = hex_[0].sub(hex_[1], t)
    if "." in t:
        t = ip[0].sub(ip[1], t)
    t = long_hex[0].sub(long_hex[1], t)
    t = number[0].sub(number[1], t)
    t = " ".join(t.split())
    return t[:MAX_TEMPLATE_CHARS]


def line_hit(text: str) -> tuple[str | None, str | None]:
    """What an unparsed line's message is: (its kind, None) or (None, its template). A pure
    function of the text, so a worker process may compute it for its lines (`Coverage.primed`)."""
    kind = classify(text)
    return kind, template_of(text) if kind is None else None


@dataclass
class Coverage:
    total: int = 0
    recognized: int = 0
    unparsed: int = 0
    templates: Counter[str] = field(default_factory=Counter)
    first_line: dict[str, int] = field(default_factory=dict)
    # Lines left out by a time window (--since/--until): total = recognized + unparsed + this.
    outside_window: int = 0
    window: dict[str, str | None] | None = None  # as given and as resolved, when one was set
    # Recognized lines the grammar has no rule for, by kind (parsing/classify.py).
    classified: Counter[str] = field(default_factory=Counter)
    # The line number and kind of the last classified line (a reclaim of it moves it out of `classified`).
    _last_classified: tuple[int, str] | None = None
    # Text → (kind, None) or (None, template) of lines seen (MEMO_ENTRIES): not part of the result.
    _memo: dict[str, tuple[str | None, str | None]] = field(default_factory=dict, repr=False, compare=False)
    # `line_hit` answers a worker process computed for the chunk of its lines being fed (`--jobs`:
    # the classifier then runs where the lines were parsed, not serially here).
    primed: dict[str, tuple[str | None, str | None]] = field(default_factory=dict, repr=False, compare=False)
    # Unknown lines as (number, text, template, enveloped) in file order (MAX_PENDING), for `settle`.
    _pending: list[tuple[int, str, str, bool]] = field(default_factory=list, repr=False, compare=False)
    # Numbers of the lines classify() knew (MAX_PENDING), for `settle`: a wrapped repr's pieces.
    _known_lines: set[int] = field(default_factory=set, repr=False, compare=False)
    # The last run of blank lines (first, last number) seen: trailing blank lines end no excerpt.
    _blank_run: tuple[int, int] = field(default=(0, -1), repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        # A pickled coverage (a worker's or a fleet's result) carries its counts, not the memo.
        state = self.__dict__.copy()
        state["_memo"] = {}
        state["primed"] = {}
        state["_pending"] = []
        state["_known_lines"] = set()
        return state

    def add_unparsed(self, line_no: int, text: str, enveloped: bool = False, foreign: bool = False) -> None:
        """Count a line the grammar did not parse (`text`: its message; `enveloped`: a record
        envelope or a wrapper's level stood before it, so it starts a record of its own;
        `foreign`: the wrapper names another program's logger, `io.wrappers.foreign_logger`: a
        line no kind fits is then that program's record)."""
        memo = self._memo
        hit = memo.get(text)
        if hit is None:
            hit = self.primed.get(text) if self.primed else None
            if hit is None:
                hit = line_hit(text)
            if len(text) <= MEMO_TEXT_CHARS:
                if len(memo) >= MEMO_ENTRIES:
                    memo.clear()
                memo[text] = hit
        kind, key = hit
        if kind is None and foreign:
            # The message is not known, but its envelope names the program that wrote it.
            kind = "foreign-logger"
        if kind is not None:
            self.recognized += 1
            self.classified[kind] += 1
            self._last_classified = (line_no, kind)
            if len(self._known_lines) < MAX_PENDING:
                self._known_lines.add(line_no)
            return
        assert key is not None
        self.unparsed += 1
        if key not in self.templates and len(self.templates) >= MAX_TEMPLATES:
            key = OVERFLOW
        self.templates[key] += 1
        self.first_line.setdefault(key, line_no)
        if len(self._pending) < MAX_PENDING:
            self._pending.append((line_no, text, key, enveloped))

    def add_blank(self, line_no: int) -> None:
        """Count a blank line (a known shape), remembering the run of blank lines it ends."""
        self.recognized += 1
        start, end = self._blank_run
        self._blank_run = (start if line_no == end + 1 else line_no, line_no)

    def settle(self, texts: Mapping[int, str], lines: int | None) -> None:
        """Classify the unknown lines whose neighbours tell what they are (`parsing/continuations.py`):
        `texts` holds the log's non-blank lines by number (the hot ones aside), `lines` is how many
        lines it has (None when `texts` is not the whole log: then no line is known to be the last)."""
        start, end = self._blank_run
        last_line = None if lines is None else start - 1 if end == lines else lines
        open_depth: dict[int, int] = {}
        for line_no, text, key, enveloped in self._pending:
            kind = context_kind(line_no, text, enveloped, texts, last_line, open_depth, self._known_lines)
            if kind is None:
                continue
            self.unparsed -= 1
            self.recognized += 1
            self.classified[kind] += 1
            self.templates[key] -= 1
            if self.templates[key] <= 0:
                del self.templates[key]
                self.first_line.pop(key, None)
        self._pending = []
        self._known_lines = set()

    def reclaim(self, line_no: int, text: str) -> None:
        """A line counted as unparsed turned out to continue a multi-line record."""
        last = self._last_classified
        if last is not None and last[0] == line_no:
            # It was recognized already (by its kind); now it is part of a record instead.
            self._last_classified = None
            self._known_lines.discard(line_no)
            self.classified[last[1]] -= 1
            if self.classified[last[1]] <= 0:
                del self.classified[last[1]]
            return
        if self._pending and self._pending[-1][0] == line_no:
            self._pending.pop()  # (part of a record now: no longer a line of its own)
        self.unparsed -= 1
        self.recognized += 1
        key = template_of(text)
        if key not in self.templates:
            key = OVERFLOW
        self.templates[key] -= 1
        if self.templates[key] <= 0:
            del self.templates[key]
            self.first_line.pop(key, None)

    @property
    def share(self) -> float:
        # Of the lines inside the window (all lines without one).
        inside = self.recognized + self.unparsed
        return self.recognized / inside if inside else 1.0

    def top(self, n: int = 10) -> list[dict[str, Any]]:
        items = sorted(self.templates.items(), key=lambda kv: (-kv[1], self.first_line.get(kv[0], 0)))
        return [{"template": k, "count": c, "first_line": self.first_line.get(k)} for k, c in items[:n]]

    def as_dict(self, n: int = 10) -> dict[str, Any]:
        return {
            "total": self.total,
            "recognized": self.recognized,
            "unparsed": self.unparsed,
            "recognized_share": round(self.share, 4),
            "top_unparsed": self.top(n),
        } | ({"classified": dict(sorted(self.classified.items()))} if self.classified else {}) | (
            {"outside_window": self.outside_window, "window": dict(self.window)}
            if self.window is not None else {})
