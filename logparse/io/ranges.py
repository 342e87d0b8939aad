"""Byte ranges of plain regular files: where to split a file across processes
(`split_points`) and where given lines start (`line_ranges`, to re-read evidence lines)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from logparse.io.gunzip import GZIP_MAGIC
from logparse.io.order import HEAD_BYTES, REORDER_MAX_BYTES, newest_first
from logparse.io.readreport import InputError, os_message

__all__ = ["SPLIT_MIN_BYTES", "line_ranges", "split_points"]

SPLIT_MIN_BYTES = REORDER_MAX_BYTES  # files smaller than this are never split (not worth a process)
_COUNT_BLOCK = 4 << 20  # newline counting per read


def split_points(path: str, parts: int, min_bytes: int | None = None) -> list[tuple[int, int, int]]:
    """For a plain regular file, return up to `parts` (start, end, first_line_no) byte ranges
    aligned to line starts covering the whole file, suitable for read_lines(start=, end=,
    first_line_no=). A file below `min_bytes` (default SPLIT_MIN_BYTES, 4 MiB), a gzip file,
    stdin, a pipe, a FIFO or a device, or parts <= 1 gives one part (read it whole, opened
    once: nothing is opened or read here for a non-regular file); ranges that would be empty
    (a single huge line spanning several nominal parts) are merged, so fewer than `parts` may
    come back."""
    if path == "-":
        return [(0, 0, 1)]
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(os_message(path, e)) from None
    size = st.st_size
    floor = SPLIT_MIN_BYTES if min_bytes is None else min_bytes
    if parts <= 1 or size < floor or not stat.S_ISREG(st.st_mode):
        return [(0, size, 1)]
    try:
        with open(path, "rb", buffering=0) as f:
            gz = f.read(2) == GZIP_MAGIC
    except OSError as e:
        raise InputError(os_message(path, e)) from None
    if gz:
        return [(0, size, 1)]
    nominal = [size * k // parts for k in range(1, parts)]
    # One pass: for each nominal cut, find the first line start at or after it (the byte
    # after the first b'\n' at offset >= cut-1), counting newlines before it on the way.
    starts: list[tuple[int, int]] = [(0, 1)]
    newlines = 0
    pos = 0
    k = 0
    with open(path, "rb") as f:
        while k < len(nominal):
            block = f.read(_COUNT_BLOCK)
            if not block:
                break
            bstart = pos
            bend = pos + len(block)
            while k < len(nominal):
                cut = max(nominal[k], starts[-1][0] + 1)
                lo = cut - 1
                if lo >= bend:
                    break
                i = block.find(b"\n", max(lo - bstart, 0))
                if i < 0:
                    # The line continues into the next block; retry there.
                    break
                line_start = bstart + i + 1
                if line_start >= size:
                    k = len(nominal)
                    break
                nl_before = newlines + block.count(b"\n", 0, i + 1)
                starts.append((line_start, nl_before + 1))
                # Later nominal cuts inside this same line collapse onto this start.
                while k < len(nominal) and nominal[k] <= line_start:
                    k += 1
            newlines += block.count(b"\n")
            pos = bend
    out: list[tuple[int, int, int]] = []
    for j, (s, no) in enumerate(starts):
        stop = starts[j + 1][0] if j + 1 < len(starts) else size
        out.append((s, stop, no))
    return out


def line_ranges(path: str, lines: Sequence[int]) -> list[tuple[int, int, int]] | None:
    """Byte ranges (start, end, first_line_no) of a plain file that hold the given physical lines,
    for re-reading a few lines (evidence) with read_lines(start=, end=, first_line_no=) without
    decoding the whole file: newlines are counted per block at C speed. Consecutive wanted lines
    share a range. None for gzip files and stdin (read them whole instead); [] for a pipe, FIFO
    or device (it cannot be read again) and when the file cannot be opened."""
    if path == "-" or not lines:
        return None
    wanted = sorted(set(lines))
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return []  # a pipe or FIFO cannot be read a second time: nothing to re-read
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
            if head[:2] == GZIP_MAGIC:
                return None
            if os.fstat(f.fileno()).st_size < REORDER_MAX_BYTES and newest_first(head):
                return None  # read in time order (io.order): its line numbers are not the file's
            f.seek(0)
            starts: dict[int, int] = {}  # line number → byte offset of its start
            need = set(wanted) | {n + 1 for n in wanted}
            last = max(need)
            line_no, pos = 1, 0
            if 1 in need:
                starts[1] = 0
            while line_no < last:
                block = f.read(_COUNT_BLOCK)
                if not block:
                    break
                count = block.count(b"\n")
                # Skip a block that holds none of the wanted line starts.
                if not any(line_no < n <= line_no + count for n in need):
                    line_no += count
                    pos += len(block)
                    continue
                i = -1
                for _ in range(count):
                    i = block.find(b"\n", i + 1)
                    line_no += 1
                    if line_no in need:
                        starts[line_no] = pos + i + 1
                    if line_no >= last:
                        break
                pos += len(block)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return []
    ranges: list[tuple[int, int, int]] = []
    for n in wanted:
        if n not in starts:
            continue
        end = starts.get(n + 1, size)
        if ranges and ranges[-1][1] == starts[n]:
            ranges[-1] = (ranges[-1][0], end, ranges[-1][2])
        else:
            ranges.append((starts[n], end, n))
    return ranges
