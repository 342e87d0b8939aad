"""Find a catalog message wherever the log shows an error: an exception of a traceback's chain, a
lone exception line, or a kept text line (a known message, a line the grammar does not know) — and
the traceback it belongs to. Rules name catalog codes (grammars/messages/); they match no text."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any

from logparse.model.events import Event, PythonWarning, Traceback
from logparse.model.record import Record, record
from logparse.rules.context import RuleContext
from logparse.rules.frames import traceback_at


@record(kw_only=False)
class Found(Record):
    """One place the log shows a catalog message: `code` the entry that matched, `fields` its typed
    captures, `line` where it matched, `text` the exception (`Type: message`) or the line's text,
    `traceback` the assembled record it belongs to (None for a lone line), `event` what to cite."""

    code: str
    line: int
    text: str
    fields: dict[str, Any]
    traceback: Traceback | None
    event: Event

    @property
    def rank(self) -> str | None:
        return self.event.rank


def _codes(codes: str | Sequence[str]) -> tuple[str, ...]:
    return (codes,) if isinstance(codes, str) else tuple(codes)


def first_match(ctx: RuleContext, codes: Sequence[str], text: str) -> tuple[str, dict[str, Any]] | None:
    """The first of `codes` (in the order given) that occurs in `text`, with its fields."""
    for code in codes:
        fields = ctx.match(code, text)
        if fields is not None:
            return code, fields
    return None


def find_message(ctx: RuleContext, codes: str | Sequence[str], *, include_claimed: bool = False,
                 texts: bool = True) -> list[Found]:
    """Every place the log shows one of the catalog messages `codes`: exceptions first (each of a
    traceback's chain, lone exception lines), then kept text lines outside those (`texts`). One hit
    per traceback, in file order. Claimed lines are skipped unless `include_claimed`."""
    wanted = _codes(codes)
    hits: list[Found] = []
    seen_tb: set[int] = set()
    covered: set[int] = set()
    # Ranks raise the same exception (a failure-heavy log: thousands of tracebacks, a few distinct
    # texts): each distinct text is matched against the codes once, each hit gets its own fields.
    answers: dict[str, tuple[str, dict[str, Any]] | None] = {}
    for r in ctx.raised():
        text = r.text
        m = answers[text] if text in answers else answers.setdefault(text, first_match(ctx, wanted, text))
        if m is None:
            continue
        ev = r.traceback or r.event
        if not include_claimed and ev.line in ctx.claimed:
            continue
        if r.traceback is not None:
            if r.traceback.line in seen_tb:
                continue
            seen_tb.add(r.traceback.line)
            covered.update(range(r.traceback.line, (r.traceback.end_line or r.traceback.line) + 1))
        else:
            covered.add(ev.line)
        hits.append(Found(m[0], ev.line, r.text, dict(m[1]), r.traceback, ev))
    if texts:
        lines: dict[int, tuple[str, dict[str, Any]]] = {}
        for code in wanted:
            for h in ctx.message_lines(code, unclaimed=not include_claimed):
                lines.setdefault(h.line, (code, h.fields))
        for no in sorted(lines):
            if no in covered:
                continue
            tb = traceback_at(ctx, no)
            if tb is not None:
                if tb.line in seen_tb:
                    continue
                seen_tb.add(tb.line)
                covered.update(range(tb.line, (tb.end_line or tb.line) + 1))
                cited: Event = tb
            else:
                cited = event_at(ctx, no)
            code, fields = lines[no]
            hits.append(Found(code, no, ctx.text(no), fields, tb, cited))
    hits.sort(key=lambda h: h.line)
    return hits


def event_at(ctx: RuleContext, line: int) -> Event:
    """The event that starts on `line`, else a bare event for the line (a text-only line).
    The events are in file order: a binary search, not a scan per question."""
    events = ctx.log.events
    i = bisect_left(events, line, key=lambda e: e.line)
    if i < len(events) and events[i].line == line:
        return events[i]
    return Event(line=line, end_line=line)


def warnings_with(ctx: RuleContext, code: str) -> Iterator[PythonWarning]:
    """The Python `warnings` records whose message is catalog message `code`. `warnings` prints the
    file's path first: a location whose 'path' holds words or a backtick before its first `/` is a
    sentence quoting the warning (`I see `/…/launch_server.py:54: UserWarning: …``), not the record."""
    for w in ctx.log.of(PythonWarning):
        head = w.path.replace("\\", "/").split("/", 1)[0]
        if "`" in w.path or len(head.split()) > 1:
            continue
        if ctx.match(code, w.message) is not None:
            yield w
