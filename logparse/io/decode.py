"""Bytes → clean text, one physical line at a time: UTF-8 repair, NUL removal, CRLF, ANSI colour
codes, tqdm `\\r` refreshes, progress bars glued to a record, over-long lines; then the wrapper
prefix is stripped (`wrappers.Unwrapper`).

Every rule is applied per physical line (or per `\\r` segment of one), never per block, so the
result cannot depend on how lines fell into read blocks or byte ranges.
"""

from __future__ import annotations

import re

from logparse.io.collapsed import split_collapsed_traceback
from logparse.io.readreport import Line, ReadReport
from logparse.io.wrappers import Unwrapper, Wrapper
from logparse.model.lazyre import lazy_compile

# A line is capped at this many *bytes* before decoding (4 bytes per character is the UTF-8
# maximum, so a line over the byte cap is always over the character cap too). Expressed as a
# multiple so it follows a patched MAX_LINE_CHARS.
BYTES_PER_CHAR_CAP = 4
# A line holding this may be a traceback whose newlines a paste collapsed (io/collapsed.py). Checked
# per block first (one substring scan), so common blocks pay nothing.
COLLAPSED_MARK = "(most recent call last):"
_REPLACEMENT_UTF8 = "\ufffd".encode()

# ANSI SGR/cursor codes with ESC, and the remnant form whose ESC was lost in copy-paste
# (`[1;33m`, `[0m`). The remnant needs at least one digit: `[m` alone would eat the start of
# `[model_runner.py:313]`; `[2026-…` and `[rank0]` never match.
_ANSI_RE = lazy_compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[\d{1,3}(?:;\d{1,3})*m")
# Block-level precheck on raw bytes: a superset of the remnant shape, and the cheapest form
# for the regex engine (bytes, a literal '[' prefix, possessive so `[2026-` fails without
# backtracking): ~3x faster than running the exact pattern over the block.
_ANSI_PRECHECK_RE = re.compile(rb"\[[0-9][0-9;]*+m")

# A log envelope glued right after a tqdm tail. A bar with a known total always ends in
# `[elapsed<remaining, rate]` (`[00:00<?, ?it/s]`, `[00:01<00:00,  1.23s/it]`, `MB/s]`, any unit: `?profile/s]`), so the
# '<' is required: it is a single-character (memchr) precheck for a whole block, and the same
# rule is applied per line so results never depend on how lines fall into blocks.
_GLUED_RE = re.compile(
    r"<[^\[\]<]*(?:it/s|s/it|B/s|/s|s/\w+)\](?=\[(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}[ \]])"
)


def clean(s: str, no: int, report: ReadReport, unwrap: Unwrapper, ansi: bool) -> list[Line]:
    """Full cleaning of one physical line that has already been decoded, stripped of its
    line ending and NULs: ANSI, wrapper, `\\r` segments, glued bars. `ansi` says whether the
    chunk precheck found anything ANSI-like."""
    if ansi and ("\x1b" in s or "m" in s):
        s2, n = _ANSI_RE.subn("", s)
        if n:
            report.ansi_stripped += 1
            s = s2
    w: Wrapper | None = None
    if (
        s[:1] != "["
        or s[11:12] == "T"
        or s[1:2].isalpha()  # `[sglang]   | …`: a bracketed service
        # Tags that always hold a '<' (so their lines are cleaned here): Open MPI's
        # `[1,0]<stderr>:` (no date) and a launcher's `[date time] [prog@<node,rank>]:`.
        or s[5:6] != "-"
        or s[20:23] == "] ["
        or s.find("][", 20, 28) > 0  # a `[date][LEVEL]: ` logging format
    ):
        w, s = unwrap(s)
        if w is not None:
            report.wrapped += 1
    if "\r" in s:
        segs = [x for x in s.split("\r") if x]
        if not segs:
            return [(no, "", w)]
        report.cr_segments += len(segs) - 1
        if w is None:
            # The capture tool prefixes physical lines, so a wrapper after a `\r` is unusual,
            # but costs nothing to honour: wrap each segment independently.
            out: list[Line] = []
            for seg in segs:
                sw, seg = unwrap(seg)
                if sw is not None:
                    report.wrapped += 1
                out.extend(_unglue(seg, no, sw, report))
            return out
        out = []
        for seg in segs:
            out.extend(_unglue(seg, no, w, report))
        return out
    if COLLAPSED_MARK in s:
        pieces = split_collapsed_traceback(s)
        if pieces is not None:
            report.glued_splits += len(pieces) - 1  # one physical line, several logical ones
            return [(no, piece, w) for piece in pieces]
    return _unglue(s, no, w, report)


def _unglue(s: str, no: int, w: Wrapper | None, report: ReadReport) -> list[Line]:
    """Split a log record glued right after a tqdm bar into its own logical line."""
    if "<" not in s or ("/s]" not in s and "s/" not in s):
        return [(no, s, w)]
    cuts = [m.end() for m in _GLUED_RE.finditer(s)]  # split after the bar's ']'
    if not cuts:
        return [(no, s, w)]
    report.glued_splits += len(cuts)
    out: list[Line] = []
    prev = 0
    for c in cuts:
        out.append((no, s[prev:c], w))
        prev = c
    out.append((no, s[prev:], w))
    return out


def _decode(b: bytes, no: int, report: ReadReport) -> str:
    """Decode one line's bytes, replacing and counting invalid sequences exactly: every
    U+FFFD in the result that was not an encoded U+FFFD in the input is a replacement
    (EF BF BD always decodes as itself, it cannot be part of an invalid sequence)."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        s = b.decode("utf-8", "replace")
        n = s.count("\ufffd") - b.count(_REPLACEMENT_UTF8)
        report.bad_utf8 += n
        report.flag(no, f"{n} invalid UTF-8 sequence{'s' if n != 1 else ''} replaced")
        return s


def slow_line(
    b: bytes, no: int, report: ReadReport, unwrap: Unwrapper, max_chars: int, truncated: bool
) -> list[Line]:
    """Reference semantics for one physical line given as bytes (without its b'\\n').
    `truncated` means the line was already cut at the byte cap while reading. An over-long
    line with `\\r` segments (a CR-only file, an endless tqdm bar) is capped per segment
    (`LongLine`), so nothing is cut that fits."""
    byte_cap = BYTES_PER_CHAR_CAP * max_chars
    # Over the cap (bytes, or decoded characters like the plain case) with `\r` segments.
    if (not truncated and len(b) > max_chars and b"\r" in b.rstrip(b"\r")
            and (len(b) > byte_cap or len(b.decode("utf-8", "replace")) > max_chars)):
        long = LongLine(no, report, unwrap, max_chars)
        return long.feed(b) + long.finish()
    if len(b) > byte_cap:
        b = b[:byte_cap]
        truncated = True
    if truncated:
        # Do not cut a multibyte character in half (that would invent a bad-UTF-8 count).
        b = _trim_partial_utf8(b)
    elif b[-1:] == b"\r":
        b = b[:-1]
        report.crlf += 1
    if b"\x00" in b:
        n = b.count(b"\x00")
        report.nul_bytes += n
        report.flag(no, f"{n} NUL byte{'s' if n != 1 else ''} removed")
        b = b.replace(b"\x00", b"")
    s = strip_padding(_decode(b, no, report))  # the same rule as lines.py's fast path
    if len(s) > max_chars:
        s = s[:max_chars]
        truncated = True
    if truncated:
        report.long_lines += 1
        report.flag(no, f"line longer than {max_chars} characters, truncated")
    return clean(s, no, report, unwrap, True)


# Width of a leading tab: editors that re-indent a pasted log use 4 (Python's own indent step).
TAB_WIDTH = 4


def strip_padding(s: str) -> str:
    """`s` without the blanks a terminal, an editor or a paste put around its text: trailing
    blanks dropped (a stats line's own `, ` separator before the end, `… #queue-req: 0, `, is
    the writer's and kept), leading tabs expanded to spaces (the grammar reads indentation as
    spaces: a traceback's frames and source lines, a benchmark block in a code block)."""
    if s[:1] == "\t":
        body = s.lstrip(" \t")
        s = s[: len(s) - len(body)].expandtabs(TAB_WIDTH) + body
    t = s.rstrip(" \t")
    if t[-1:] == "," and len(t) < len(s):
        return t + " "
    return t


def _trim_partial_utf8(b: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the very end of `b` (left by a byte cut)."""
    for back in range(1, min(4, len(b)) + 1):
        c = b[-back]
        if c < 0x80:
            return b  # ASCII: nothing cut
        if c >= 0xC0:  # a lead byte: complete if enough continuation bytes follow
            need = 2 if c < 0xE0 else 3 if c < 0xF0 else 4
            return b if back >= need else b[:-back]
    return b


def has_long_line(text: str, limit: int) -> bool:
    """Whether some line of `text` (which ends with '\n') is longer than `limit`, without
    splitting: hop from newline to newline in windows of limit+1 characters."""
    n = len(text)
    pos = 0
    while n - pos > limit + 1:
        j = text.rfind("\n", pos, pos + limit + 1)
        if j < 0:
            return True  # limit+1 characters without a newline
        pos = j + 1
    return False


def ansi_possible(chunk: bytes) -> bool:
    if b"\x1b" in chunk:  # memchr
        return True
    return _ANSI_PRECHECK_RE.search(chunk) is not None



class LongLine:
    """One physical line longer than the cap, fed in pieces (it never has to fit in memory).

    Its `\\r` segments are lines of their own (same physical line number) and each is capped
    separately: a CR-only file or an hour of tqdm refreshes is split, not cut. Without `\\r` the
    result equals `slow_line` on the truncated line. Counters and flags are added once per
    physical line at `finish`, as `slow_line` does."""

    __slots__ = ("_ansi", "_bad", "_byte_cap", "_first", "_max_chars", "_no", "_nonempty", "_nul",
                 "_report", "_seg", "_seg_cut", "_truncated", "_unwrap", "_wrapper")

    def __init__(self, no: int, report: ReadReport, unwrap: Unwrapper, max_chars: int) -> None:
        self._no = no
        self._report = report
        self._unwrap = unwrap
        self._max_chars = max_chars
        self._byte_cap = BYTES_PER_CHAR_CAP * max_chars
        self._seg = bytearray()
        self._seg_cut = False  # the current segment went over the byte cap
        self._truncated = False  # some segment was cut
        self._first = True
        self._wrapper: Wrapper | None = None
        self._nonempty = 0
        self._ansi = self._nul = self._bad = 0

    def feed(self, data: bytes) -> list[Line]:
        """Add bytes of the line (no b'\\n'); return the segments they completed."""
        out: list[Line] = []
        start = 0
        while True:
            j = data.find(b"\r", start)
            if j < 0:
                self._add(data, start, len(data))
                return out
            self._add(data, start, j)
            out.extend(self._end_segment())
            start = j + 1

    def finish(self) -> list[Line]:
        """The last segment; then the line's counters and flags."""
        out = self._end_segment()
        report, no = self._report, self._no
        if not self._nonempty:
            out.append((no, "", self._wrapper))
        else:
            report.cr_segments += self._nonempty - 1
        if self._ansi:
            report.ansi_stripped += 1
        if self._nul:
            report.nul_bytes += self._nul
            report.flag(no, f"{self._nul} NUL byte{'s' if self._nul != 1 else ''} removed")
        if self._bad:
            report.bad_utf8 += self._bad
            report.flag(no, f"{self._bad} invalid UTF-8 sequence{'s' if self._bad != 1 else ''} replaced")
        if self._truncated:
            report.long_lines += 1
            report.flag(no, f"line longer than {self._max_chars} characters, truncated")
        return out

    def _add(self, data: bytes, start: int, end: int) -> None:
        room = self._byte_cap - len(self._seg)
        if end - start > room:
            if room > 0:
                self._seg += data[start : start + room]
            self._seg_cut = True
        else:
            self._seg += data[start:end]

    def _end_segment(self) -> list[Line]:
        b = bytes(self._seg)
        cut = self._seg_cut
        self._seg = bytearray()
        self._seg_cut = False
        if cut:
            b = _trim_partial_utf8(b)
        if b"\x00" in b:
            self._nul += b.count(b"\x00")
            b = b.replace(b"\x00", b"")
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            s = b.decode("utf-8", "replace")
            self._bad += s.count("\ufffd") - b.count(_REPLACEMENT_UTF8)
        if len(s) > self._max_chars:
            s = s[: self._max_chars]
            cut = True
        self._truncated = self._truncated or cut
        if "\x1b" in s or "m" in s:
            s2, n = _ANSI_RE.subn("", s)
            if n:
                self._ansi = 1
                s = s2
        w = self._wrapper
        if self._first:
            self._first = False
            if s[:1] != "[" or s[11:12] == "T":
                w, s = self._unwrap(s)
                if w is not None:
                    self._report.wrapped += 1
                self._wrapper = w
        elif w is None:
            w, s = self._unwrap(s)
            if w is not None:
                self._report.wrapped += 1
        if not s:
            return []
        self._nonempty += 1
        return _unglue(s, self._no, w, self._report)
