"""Line adjacency that blank lines do not break.

A double-spaced paste (a blank line after every line: a chat client, a wiki, a terminal copy) puts
a blank line between a record and the traceback it introduced, and after the last line of an
excerpt. Blank lines are no evidence (the pipeline keeps no text for them), so structural checks
that ask "the line before" or "nothing after" look past them, as the record assembler and the
rules' searches (`rules.frames`) already do.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from logparse.run.launches import within

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# How many lines without text may separate a line from the one before it: a double-spaced paste's
# one blank line.
PASTE_GAP = 1


def line_before(log: ParsedLog, line: int, gap: int = PASTE_GAP) -> int | None:
    """The line with text before `line`, looking past up to `gap` lines without text (a
    double-spaced paste's blank line); None when there is none that close."""
    for n in range(line - 1, max(0, line - 2 - gap), -1):
        if log.texts.get(n):
            return n
        if _hot(log, n, n):
            return None  # a stats or access line holds the place: the line before is not a record's
    return None


def text_before(log: ParsedLog, line: int, gap: int = PASTE_GAP) -> str:
    """The text of `line_before(log, line, gap)`; '' when there is none that close."""
    n = line_before(log, line, gap)
    return log.texts[n] if n is not None else ""


def holds_text(log: ParsedLog, start: int, end: int) -> bool:
    """Whether any of lines start..end holds something (a kept text, an event or a stats/access
    line), i.e. the span is not only blank lines."""
    if start > end:
        return False
    if within(log.events, start, end) or _hot(log, start, end):
        return True
    texts = log.texts  # an unparsed line is no event: its kept text says it is not blank
    return any(n in texts for n in range(start, end + 1))


def _hot(log: ParsedLog, start: int, end: int) -> bool:
    """Whether a stats or access line (kept only in the columns) lies in start..end."""
    for cols in (log.decode, log.prefill, log.access):
        lines = cols.line
        i = bisect_left(lines, start)
        if i < len(lines) and lines[i] <= end:
            return True
    return False
