"""Newest-first exports: a log viewer (a cloud console, a log shipper's UI) that prints the most
recent line first. Read as is, every traceback is upside down and every phase runs backwards, so
the reader gives such an input back in time order.

The decision is structural and made on the input's head (`HEAD_BYTES`), so the file reader and
the evidence re-reader (`ranges.line_ranges`) reach the same answer without reading the whole
file twice:
- line timestamps (the first ISO-8601 / SGLang stamp near a line's start, whoever printed it)
  that go down from one stamped line to the next, against those that go up;
- tracebacks that stand on their head: a `Traceback (most recent call last):` header with a
  `File "…"` frame right above it and none below it (Python prints the header first, then the
  frames), against headers followed by their frames.
A traceback counts as much as two stamps (it is a whole record's order, not one clock reading).
Only inputs smaller than `REORDER_MAX_BYTES` are reordered: they are never split into byte ranges
(`ranges.SPLIT_MIN_BYTES`), so a split run and a whole run read the same lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from logparse.io.readreport import ReadReport

__all__ = ["HEAD_BYTES", "REORDER_MAX_BYTES", "REORDER_NOTE", "in_time_order", "newest_first",
           "oldest_first"]

HEAD_BYTES = 64 * 1024
REORDER_MAX_BYTES = 4 << 20  # ranges.SPLIT_MIN_BYTES is this: a reordered input is never split
REORDER_NOTE = "newest-first export: read in time order (line numbers count from the oldest line)"

# The first date-time in a line's first 96 bytes: an outer stamp (docker, k8s, a console export)
# comes before SGLang's own, and one writer's stamps are what is compared.
_STAMP = re.compile(rb"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)")
_HEADER = b"Traceback (most recent call last):"
_FRAME = b'File "'
# Votes needed (at least), and how many times the other direction's votes they must exceed.
_MIN_VOTES = 3
_MARGIN = 3


def _stamp(line: bytes) -> bytes | None:
    m = _STAMP.search(line, 0, 96)
    return m[1] + b" " + m[2].replace(b",", b".") if m else None


def _votes(lines: list[bytes]) -> tuple[int, int]:
    """(newest-first votes, oldest-first votes) of `lines`."""
    down = up = 0
    last: bytes | None = None
    body = [i for i, line in enumerate(lines) if line.strip()]
    for k, i in enumerate(body):
        line = lines[i]
        ts = _stamp(line)
        if ts is not None:
            # Decimal fractions compare as text: `…:53.5` > `…:53.123` > `…:53`.
            if last is not None and ts != last:
                if ts < last:
                    down += 1
                else:
                    up += 1
            last = ts
        at = line.find(_HEADER)
        if at < 0 or _FRAME in line[at:]:
            continue  # no header, or a collapsed traceback (its frames on the same line)
        below = lines[body[k + 1]] if k + 1 < len(body) else b""
        above = lines[body[k - 1]] if k else b""
        if _FRAME in below:
            up += 2
        elif _FRAME in above:
            down += 2
    return down, up


def newest_first(head: bytes) -> bool:
    """Whether the text `head` (an input's first bytes) reads newest line first."""
    if len(head) >= HEAD_BYTES:
        cut = head.rfind(b"\n", 0, HEAD_BYTES)
        head = head[:cut] if cut > 0 else head[:HEAD_BYTES]
    down, up = _votes(head.replace(b"\r\n", b"\n").split(b"\n"))
    return down >= _MIN_VOTES and down > _MARGIN * up


def oldest_first(data: bytes) -> bytes:
    """`data`'s lines in reverse order, each ending with a newline."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the final newline ends the last line; it starts no line
    lines.reverse()
    return b"".join(line + b"\n" for line in lines)


def in_time_order(blocks: Iterator[bytes], report: ReadReport) -> Iterator[bytes]:
    """`blocks` as they come, or, for a newest-first input smaller than REORDER_MAX_BYTES, its
    lines oldest first (noted in `report`). Holds back only the head until it is decided, and
    the rest of the input only when the head reads newest-first."""
    held: list[bytes] = []
    size = 0
    for block in blocks:
        held.append(block)
        size += len(block)
        if size >= HEAD_BYTES:
            break
    head = b"".join(held)
    if not head or not newest_first(head):
        yield from held
        yield from blocks
        return
    for block in blocks:
        held.append(block)
        size += len(block)
        if size >= REORDER_MAX_BYTES:
            # Too large to reorder (it could be split into byte ranges): read it as it is.
            yield from held
            yield from blocks
            return
    report.flag(1, REORDER_NOTE)
    yield oldest_first(b"".join(held))
