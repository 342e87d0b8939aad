"""The reader's public face: open log sources and turn their bytes into clean, numbered lines.

The work is done by one module per job in `logparse.io` (the only package that opens input
files): `sources` (plain / gzip / stdin / FIFO sources and byte ranges), `gunzip` (damage-tolerant
gzip), `decode` (bytes → text repairs), `wrappers` (prefix stripping), `lines` (the line
iterator), `ranges` (split points and line offsets), `paths` (expansion and up-front checks),
`limits` (size and ratio limits), `readreport` (what reading reports). This module re-exports
their public names so `from logparse.io.reader import read_lines` keeps working.

Everything downstream sees `Line` tuples `(physical line number, cleaned text, Wrapper | None)`
and a `ReadReport` that says what had to be repaired on the way.
"""

from __future__ import annotations

from logparse.io.limits import max_input_bytes, max_ratio, parse_size
from logparse.io.lines import MAX_LINE_CHARS, read_lines
from logparse.io.paths import LOG_SUFFIXES, check_readable, expand_paths
from logparse.io.ranges import SPLIT_MIN_BYTES, line_ranges, split_points
from logparse.io.readreport import MAX_FLAGGED, InputError, Line, ReadReport
from logparse.io.sources import BLOCK_SIZE
from logparse.io.wrappers import Wrapper

__all__ = [
    "BLOCK_SIZE",
    "LOG_SUFFIXES",
    "MAX_FLAGGED",
    "MAX_LINE_CHARS",
    "SPLIT_MIN_BYTES",
    "InputError",
    "Line",
    "ReadReport",
    "Wrapper",
    "check_readable",
    "expand_paths",
    "line_ranges",
    "max_input_bytes",
    "max_ratio",
    "parse_size",
    "read_lines",
    "split_points",
]
