"""How a `--jobs N` parse shares one plain file: this process parses the first byte range itself
(stages 1 and 2 as it reads, like a one-process run), N-1 worker processes parse the others
(stage 1 only) and hand their parts back to be merged in order.

Three choices keep the serial part small:
- nothing is read before the workers start: a cut is moved to the next line start by reading a
  few bytes there, and each worker counts the newlines before its own range (its first line
  number) itself, in parallel with this process's parsing (counting them all up front read
  half the file, ~0.2 s at 1M lines, before any worker began);
- this process does not wait idle for a part of its own to come back pickled: it parses the
  first range, so one part fewer is pickled, and its stage 2 overlaps the workers' stage 1;
- its range is smaller by about what stage 2 costs (`MAIN_SHARE`), so that it and the workers end
  together; what is left serial is the workers' stage 2, then the rules and the rendering.
"""

from __future__ import annotations

import os
import stat

from logparse.io.gunzip import GZIP_MAGIC

# This process's share of the bytes, relative to one worker's (1.0): stage 2 costs it ~10-15 % of
# a failure-heavy log's parse and next to nothing on a serving-heavy one.
MAIN_SHARE = 0.9
_BLOCK = 1 << 20


def plan(path: str, jobs: int, min_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges [start, end) aligned to line starts that cover the file, this process's
    first; [] (read it whole, opened once) for stdin, a non-regular or gzip file, a file below
    `min_bytes`, or jobs <= 1. Ranges that would be empty (one huge line across a cut) merge."""
    if jobs <= 1 or path == "-":
        return []
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size < min_bytes:
            return []  # nothing is opened here for a FIFO: reading its magic would eat its first bytes
        with open(path, "rb", buffering=0) as fh:
            if fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
                return []
            size = st.st_size
            weights = [MAIN_SHARE] + [1.0] * (jobs - 1)
            starts = [0]
            for k in range(1, jobs):
                cut = int(size * sum(weights[:k]) / sum(weights))
                start = _line_start(fh, max(cut, starts[-1] + 1), size)
                if start < size and start > starts[-1]:
                    starts.append(start)
    except OSError:
        return []  # the reader opens it again and reports the error as usual
    return [(s, starts[i + 1] if i + 1 < len(starts) else size) for i, s in enumerate(starts)]


def _line_start(fh: object, cut: int, size: int) -> int:
    """The first line start at or after `cut` (the byte after the first newline at cut-1 or later)."""
    pos = cut - 1
    fh.seek(pos)  # type: ignore[attr-defined]
    while pos < size:
        block: bytes = fh.read(_BLOCK)  # type: ignore[attr-defined]
        if not block:
            break
        i = block.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(block)
    return size


def first_line_no(path: str, start: int) -> int:
    """The line number of the line starting at byte `start`: 1 + the newlines before it."""
    newlines = 0
    with open(path, "rb", buffering=0) as fh:
        left = start
        while left > 0:
            block = fh.read(min(_BLOCK, left))
            if not block:
                break
            newlines += block.count(b"\n")
            left -= len(block)
    return newlines + 1
