"""How a `--jobs N` parse shares one plain file: this process parses the first byte range itself
(stages 1 and 2 as it reads, like a one-process run), N-1 worker processes parse the others
(stage 1 only) and send back what they keep for stage 2 in chunks as they go, their columns at
the end; everything is merged in file order.

Three choices keep the serial part small:
- nothing is read before the workers start: a cut is moved to the next line start by reading a
  few bytes there, and each worker counts the newlines before its own range (its first line
  number) itself, in parallel with this process's parsing (counting them all up front read
  half the file, ~0.2 s at 1M lines, before any worker began);
- this process does not wait idle for parts to come back pickled: it parses the first range,
  so one part fewer is pickled, and runs stage 2 of the workers' chunks while they still read;
- its range is smaller by about what stage 2 of all ranges costs it (`main_share`, from the share
  of lines that are not stats or access lines where the cut falls), so that it and the workers
  end together; what is left serial is the rules and the rendering.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import Any

from logparse.io.gunzip import GZIP_MAGIC

_BLOCK = 1 << 20
# This process's share of the bytes, relative to one worker's, comes from what stage 2 will cost
# it: stage 2 runs here for every range, on the lines that are not stats or access lines (a
# serving-heavy log has next to none, one of mostly start-up or foreign text ~half its lines).
# The share of such "cold" lines is sampled where the first cut will fall (`_SAMPLE` bytes, a few
# thousand lines); each costs stage 2 about STAGE2_WEIGHT of a line's whole parse (measured at 1M
# lines: unrecognized and startup-heavy logs, the classifier running in the workers). Only how the
# work is shared depends on it, never what is parsed.
STAGE2_WEIGHT = 0.65
_SAMPLE = 1 << 18
_HOT_MARKERS = (b"Decode batch", b"Prefill batch", b'HTTP/1.1"')
# This process keeps at least this share of the first cut's bytes (a log of nothing but cold lines).
_MIN_FIRST = 0.1


def _cold_share(fh: object, size: int, at: int) -> float:
    """The share of lines around byte `at` that are neither stats nor access lines."""
    fh.seek(max(0, at - _SAMPLE // 2))  # type: ignore[attr-defined]
    block: bytes = fh.read(_SAMPLE)  # type: ignore[attr-defined]
    lines = block.split(b"\n")[1:-1]  # the first and last may be cut
    if not lines:
        return 0.0
    return sum(1 for line in lines if not any(m in line for m in _HOT_MARKERS)) / len(lines)


def main_share(cold: float, jobs: int) -> float:
    """This process's bytes relative to one worker's, so that it and the workers end together:
    it parses its range whole (cost 1 a byte) and runs stage 2 of every other range (r = cold x
    STAGE2_WEIGHT a byte), a worker parses its range (cost ~1 a byte, the classifier included)."""
    r = cold * STAGE2_WEIGHT
    w = 1.0 / (jobs - 1)
    first = max(_MIN_FIRST * w, (w - r) / (1.0 - r + w))  # this process's fraction of the file
    return first * (jobs - 1) / (1.0 - first)


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
            share = main_share(_cold_share(fh, size, size // jobs), jobs)
            weights = [share] + [1.0] * (jobs - 1)
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


# A worker sends its kept tuples in chunks of this many lines as it parses them, so that this
# process runs their stage 2 while the worker still reads, instead of all of it at the end.
CHUNK_LINES = 8192


class Worker:
    """One worker process and the queue it reports on: ("rest", chunk) as many times as it
    has chunks, then ("part", part) or ("error", exception)."""

    def __init__(self, target: Callable[..., None], *args: Any) -> None:
        import multiprocessing  # only a split run pays for it

        self.queue: Any = multiprocessing.Queue()
        self.process = multiprocessing.Process(target=target, args=(self.queue, *args), daemon=True)
        self.process.start()

    def messages(self) -> Iterator[tuple[str, Any]]:
        """The worker's chunks, then its part; its exception is raised here, as the pool did."""
        import queue as queues

        try:
            while True:
                try:
                    kind, payload = self.queue.get(timeout=1.0)
                except queues.Empty:
                    if not self.process.is_alive():
                        raise RuntimeError(f"a parsing worker ended without a result (exit code {self.process.exitcode})") from None
                    continue
                if kind == "error":
                    raise payload
                yield kind, payload
                if kind == "part":
                    return
        finally:
            self.close()

    def close(self) -> None:
        if self.process.is_alive():
            self.process.join(timeout=5.0)
            if self.process.is_alive():
                self.process.terminate()
        self.queue.close()


def report(queue: Any, produce: Callable[[Callable[[list[Any]], None]], Any]) -> None:
    """A worker's body: `produce(send)` parses, calling `send(chunk)` on the way, and returns the part."""
    try:
        queue.put(("part", produce(lambda chunk: queue.put(("rest", chunk)))))
    except BaseException as err:  # noqa: BLE001 - every failure goes back to be raised there
        queue.put(("error", err))
    finally:
        queue.close()
        queue.join_thread()  # everything is sent before the process ends
