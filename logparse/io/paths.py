"""Paths and up-front checks: which files a command reads (`expand_paths`) and whether each is
a readable text log (`check_readable`), so bad input is one clear line before any work."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from logparse.io.gunzip import GZIP_MAGIC, gunzip_head
from logparse.io.limits import MAX_INPUT_ENV, max_input_bytes
from logparse.io.readreport import InputError, os_message
from logparse.io.sources import SNIFF_BYTES, binary_reason, refuse_device

__all__ = ["LOG_SUFFIXES", "check_readable", "expand_paths"]

LOG_SUFFIXES = (".log", ".log.gz", ".txt", ".txt.gz")
_LOG_SUFFIXES = LOG_SUFFIXES


def _walk_error(err: OSError) -> None:
    # A subdirectory that cannot be listed would silently drop its logs: fail instead.
    raise InputError(os_message(err.filename or "?", err))


def expand_paths(paths: Sequence[str]) -> list[str]:
    """'-' stays '-'; a directory becomes every *.log, *.log.gz, *.txt, *.txt.gz inside it
    (recursive, sorted); a missing path raises InputError('cannot read X: No such file or
    directory'); a directory with no logs raises InputError('no log files in DIR (looked for
    *.log, *.log.gz, *.txt)'). Exact duplicates are dropped (reading a file twice would
    double every count)."""
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        if p not in seen:
            seen.add(p)
            out.append(p)

    for p in paths:
        if p == "-":
            add(p)
            continue
        if os.path.isdir(p):
            found: list[str] = []
            for root, dirs, files in os.walk(p, onerror=_walk_error):
                dirs.sort()
                for name in files:
                    if name.endswith(_LOG_SUFFIXES):
                        found.append(os.path.join(root, name))
            if not found:
                raise InputError(f"no log files in {p} (looked for *.log, *.log.gz, *.txt)")
            for f in sorted(found):
                add(f)
            continue
        if not os.path.exists(p):
            raise InputError(f"cannot read {p}: No such file or directory")
        add(p)
    return out




def check_readable(path: str) -> None:
    """Raise InputError with one line for: missing file, permission denied, a directory, a
    device, a file over the input size limit, an empty file ('X is empty'), a binary file
    ('X is not a text log (binary data)': more than 10% NUL or control bytes or invalid
    UTF-8 in the first 64 KiB, after gzip decompression if gz), a gzip file that is corrupt
    from the start ('X: not a valid gzip file'). '-' (stdin), FIFOs and pipes are not read
    here: looking would consume them (the reader sniffs them as they stream)."""
    if path == "-":
        return
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(os_message(path, e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot read {path}: Is a directory")
    refuse_device(path, st)
    if not stat.S_ISREG(st.st_mode):
        # A FIFO or pipe (`<(cat run.log)`): opening it here would meet the writer twice.
        if not os.access(path, os.R_OK):
            raise InputError(f"cannot read {path}: Permission denied")
        return
    try:
        limit = max_input_bytes()
    except ValueError as err:
        raise InputError(f"{MAX_INPUT_ENV}: {err}") from None
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
            if head[:2] == GZIP_MAGIC:
                text = gunzip_head(head, f.read, SNIFF_BYTES, path)
                if text is None:
                    raise InputError(f"{path}: not a valid gzip file")
                head = text
            elif limit is not None and st.st_size > limit:
                raise InputError(f"{path} is larger than {limit} bytes of text; raise the limit "
                                 f"with --max-input-size or {MAX_INPUT_ENV} (0: no limit)")
    except OSError as e:
        raise InputError(os_message(path, e)) from None
    if not head:
        raise InputError(f"{path} is empty")
    reason = binary_reason(head)
    if reason:
        raise InputError(f"{path} is not a text log ({reason})")
