"""SGLang's own log messages, as its source prints them: is an unparsed line one of them?

`grammars/source-messages/sglang.txt` holds the templates of every logging call, `print` and
`warnings.warn` of 17 SGLang releases (0.1.20 … 0.5.23; `extract.py` there rebuilds it), `{}`
marking a formatted value. A line the grammar has no rule for, but whose text is one of these
templates, is SGLang's informational output and counts as recognized (`coverage.classify`); it
stays an `Unparsed` line for everything else (no rule reads it, tracebacks may still claim it).

Cost: only lines the grammar could not parse get here (rare lines). Templates are grouped by their
first word and compiled into one alternation per word on first use; templates that start with a
formatted value are tried only when their longest literal piece is in the line.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache

from logparse.grammar.resources import grammar_dir

__all__ = ["SourceMessages", "is_cut_source_message", "is_source_message", "source_messages"]

TEMPLATES = ("source-messages", "sglang.txt")  # under the grammar folder
HOLE = "{}"
# A line longer than this is not compared: a message is one line, a pasted blob is not, and the
# lazy gaps of a template must not meet an unbounded line.
MAX_LINE = 1000
# A floating template (one that starts with a value) needs a literal piece at least this long,
# else it would match too much (`{} is {}`).
MIN_FLOATING_PIECE = 12
# A cut line must keep at least this much of a template's head to count as that message.
MIN_CUT_PREFIX = 12


def _pieces(template: str) -> list[str]:
    """Literal pieces of a template, around its holes; `{{`/`}}` are literal braces."""
    raw = template.replace("{{", "\x01").replace("}}", "\x02")
    return [p.replace("\x01", "{").replace("\x02", "}") for p in raw.split(HOLE)]


def _regex(template: str) -> str:
    # A value never spans lines; it may be empty (`Loaded {} weights` with an empty name).
    return ".*?".join(re.escape(p) for p in _pieces(template))


def _first_word(text: str) -> str:
    return text.split(" ", 1)[0]


class SourceMessages:
    """The templates, indexed for one lookup per unparsed line. Building the index is one pass of
    string splits (no regex is compiled until a line asks for its first word's templates)."""

    def __init__(self, templates: list[str]) -> None:
        by_word: dict[str, list[str]] = {}
        floating: list[tuple[str, str]] = []
        heads: list[str] = []
        for raw in templates:
            t = raw.strip()
            if not t or t.startswith("# "):
                continue
            if "{" not in t:
                # A fixed message: its first word is literal and whole.
                by_word.setdefault(_first_word(t), []).append(t)
                heads.append(t)
                continue
            pieces = _pieces(t)
            head = pieces[0]
            heads.append(head.rstrip())
            if len(pieces) == 1 or " " in head:
                # The first word is literal and whole (`Registering {} cuda graph addresses`): a
                # line that starts with another word cannot be this one.
                by_word.setdefault(_first_word(head), []).append(t)
                continue
            # Starts with a value, or the first word runs into one (`Load{} …`): try it only when
            # its longest literal piece is in the line.
            longest = max(pieces, key=len)
            if len(longest.strip()) >= MIN_FLOATING_PIECE:
                floating.append((longest, t))
        heads.sort()
        self._heads = heads
        self._sources = by_word
        self._compiled: dict[str, re.Pattern[str] | None] = {}
        self._floating = floating
        self._floating_compiled: dict[str, re.Pattern[str]] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self._sources.values()) + len(self._floating)

    def _for_word(self, word: str) -> re.Pattern[str] | None:
        try:
            return self._compiled[word]
        except KeyError:
            pass
        sources = self._sources.get(word)
        pattern = re.compile("(?:" + "|".join(_regex(t) for t in sources) + r")\s*") if sources else None
        if len(self._compiled) < 65536:  # bounded: a log's first words are few, junk is not
            self._compiled[word] = pattern
        return pattern

    def match(self, text: str) -> bool:
        """Whether `text` (a message without its envelope) is one of SGLang's templates."""
        text = text.strip()
        if not text or len(text) > MAX_LINE:
            return False
        pattern = self._for_word(_first_word(text))
        if pattern is not None and pattern.fullmatch(text):
            return True
        for piece, template in self._floating:
            if piece in text:
                rx = self._floating_compiled.get(template)
                if rx is None:
                    rx = self._floating_compiled[template] = re.compile(_regex(template) + r"\s*")
                if rx.fullmatch(text):
                    return True
        return False

    def is_cut_prefix(self, text: str) -> bool:
        """Whether `text` is the start of a template's literal head, cut short (an excerpt that ends
        or a hard wrap that falls inside a message: `Ignore import error when lo`)."""
        text = text.strip()
        if len(text) < MIN_CUT_PREFIX or " " not in text:
            return False
        i = bisect_left(self._heads, text)
        return i < len(self._heads) and self._heads[i].startswith(text) and self._heads[i] != text


@cache
def source_messages() -> SourceMessages:
    """The templates of grammars/source-messages/sglang.txt (read once, on the first unparsed line)."""
    path = grammar_dir().joinpath(*TEMPLATES)
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return SourceMessages(lines)


def is_source_message(text: str) -> bool:
    return source_messages().match(text)


def is_cut_source_message(text: str) -> bool:
    return source_messages().is_cut_prefix(text)
