"""`tail -F` as bytes blocks: a growing file (waits for it, survives truncation and rotation) or a pipe.

The blocks go straight into the reader's own line iterator (`logparse.io.lines.iter_lines`), which
holds a partly written last line back until its newline arrives and cleans lines exactly as
`analyze` does. One `blocks()` generator is one *generation* of the input: it ends when the file
is truncated or replaced (a new inode at the path), so that the caller restarts line numbering
from 1, as a fresh `analyze` of the new file would. A partial last line of the old generation is
closed with a newline first, so it is never glued to the new file's first bytes.

Pipes and stdin are read with `select` and `os.read` (never a blocking `read()` that waits for a
full buffer); everything read from them is also copied to a spool file on disk, because a crash
diagnosis re-runs the real analysis on what was read, and a pipe cannot be read twice.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from typing import IO

from logparse.io.readreport import InputError, os_message

BLOCK = 256 * 1024


class Tail:
    """Follow `path` ('-' for stdin). `tick()` is called whenever the source had nothing new and
    after every block (it may raise to stop following); `poll` is the wait between checks."""

    def __init__(self, path: str, *, poll: float, tick: Callable[[], None]) -> None:
        self.path = path
        self.poll = poll
        self.tick = tick
        self.stream = path == "-"
        self.eof = False  # a pipe ended (the writer closed it)
        self.restarted = ""  # why the last generation ended: "truncated", "rotated" or ""
        self.generation = 0
        self.opened = False  # the source has been opened at least once (a file has appeared)
        self.spool: IO[bytes] | None = None
        self._fd: int | None = None
        self._ino: tuple[int, int] | None = None
        self._offset = 0

    # ------------------------------------------------------------------ public

    @property
    def analysis_path(self) -> str:
        """The file a full analysis should read: the followed file, or the spool of a pipe."""
        if self.spool is not None:
            self.spool.flush()
            return self.spool.name
        return self.path

    def blocks(self) -> Generator[bytes, None, None]:
        """The bytes of one generation of the input, as they arrive."""
        self.generation += 1
        self.restarted = ""
        if self._fd is None:
            self._open()
        if self.stream:
            yield from self._stream_blocks()
        else:
            yield from self._file_blocks()

    def close(self) -> None:
        if self._fd is not None and not (self.path == "-" and self._fd == 0):
            os.close(self._fd)
        self._fd = None
        if self.spool is not None:
            name = self.spool.name
            self.spool.close()
            try:
                os.unlink(name)
            except OSError:
                pass
            self.spool = None

    # ------------------------------------------------------------------ opening

    def _open(self) -> None:
        """Open the source, waiting for a file that does not exist yet."""
        if self.path == "-":
            try:
                self._fd = sys.stdin.fileno()
            except (AttributeError, ValueError, OSError):  # None, closed, or not a real descriptor
                raise InputError("cannot read stdin: it is closed") from None
            self._start_spool()
            self.opened = True
            return
        while True:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
                break
            except FileNotFoundError:
                self.tick()
                time.sleep(self.poll)
            except OSError as err:  # permission denied, a name too long, …: one clear line, exit 2
                raise InputError(os_message(self.path, err)) from None
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            os.close(fd)
            raise IsADirectoryError(self.path)
        if stat.S_ISREG(st.st_mode):
            os.set_blocking(fd, True)  # regular files never block; EOF is just "nothing yet"
        else:  # a FIFO or a character device: read as a stream
            self.stream = True
            self._start_spool()
        self._fd, self._ino, self._offset = fd, (st.st_dev, st.st_ino), 0
        self.opened = True

    def _start_spool(self) -> None:
        # Removed by close(); delete=False so that the analysis can open it by name meanwhile.
        self.spool = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix="logdiag-follow-", suffix=".log", delete=False
        )

    # ------------------------------------------------------------------ reading

    def _stream_blocks(self) -> Generator[bytes, None, None]:
        fd = self._fd
        assert fd is not None
        while True:
            ready, _, _ = select.select([fd], [], [], self.poll)
            if not ready:
                self.tick()
                continue
            try:
                block = os.read(fd, BLOCK)
            except BlockingIOError:
                continue
            if not block:
                self.eof = True
                return
            if self.spool is not None:
                self.spool.write(block)
            yield block
            self.tick()

    def _file_blocks(self) -> Generator[bytes, None, None]:
        fd = self._fd
        assert fd is not None
        last = b"\n"
        while True:
            block = os.read(fd, BLOCK)
            if block:
                self._offset += len(block)
                last = block[-1:]
                yield block
                self.tick()
                continue
            why = self._replaced(fd)
            if why:
                if last != b"\n":
                    yield b"\n"  # close the old generation's partial line
                os.close(fd)
                self._fd = None
                self.restarted = why
                return
            self.tick()
            time.sleep(self.poll)

    def _replaced(self, fd: int) -> str:
        """'truncated' or 'rotated' when the path no longer shows what `fd` has read, else ''."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return ""  # renamed away and not yet re-created: keep reading the old file
        if (st.st_dev, st.st_ino) != self._ino:
            # Drain what the writer appended to the old file before it was replaced.
            return "" if os.fstat(fd).st_size > self._offset else "rotated"
        if st.st_size < self._offset:
            return "truncated"
        return ""
