"""The line iterator: text bytes from a source → numbered, cleaned lines.

`read_lines` yields `Line` tuples `(physical line number, cleaned text, Wrapper | None)` and fills
a `ReadReport` with what had to be repaired. Reading never raises on content (see
`decode`); every physical line of the input yields at least one logical line.

Speed: the common line is an SGLang record (`[2026-... TP0] ...`), valid UTF-8, without `\\r`,
ANSI or NUL. For such input a whole block is decoded and split at once and each line costs a
couple of C-level checks; all repair work sits behind block-level prechecks (single-character
scans and one bytes regex), and per-line rules are written so that the result never depends on
which block a line fell into (which is what makes byte-range splitting exact).

Memory: input is read in 256 KiB blocks and only the current partial line is kept; a line that
never ends is streamed and capped, so memory does not grow with file or line size.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

from logparse.io.decode import (
    BYTES_PER_CHAR_CAP,
    COLLAPSED_MARK,
    LongLine,
    ansi_possible,
    clean,
    has_long_line,
    slow_line,
    strip_padding,
)
from logparse.io.prompts import GLUED_PROMPT_PRECHECK, split_glued_prompts
from logparse.io.readreport import Line, ReadReport
from logparse.io.sources import source_blocks
from logparse.io.wrappers import Unwrapper, bracketed_wrappers

__all__ = ["MAX_LINE_CHARS", "iter_lines", "read_lines"]

# Lines (and `\\r` segments of over-long lines) longer than this are truncated and flagged.
# Read at call time (not baked into defaults) so tests can monkeypatch it.
MAX_LINE_CHARS = 256 * 1024


def iter_lines(
    blocks: Generator[bytes, None, None], report: ReadReport, first_no: int, max_chars: int
) -> Iterator[Line]:
    no = first_no - 1
    byte_cap = BYTES_PER_CHAR_CAP * max_chars
    pending = b""
    # A line over the byte cap is streamed through a LongLine (split at its \\r segments,
    # each capped), so memory stays bounded by the cap whatever the line's length.
    long: LongLine | None = None
    unwrap = Unwrapper()
    try:
        for block in blocks:
            report.bytes_read += len(block)
            if long is not None:
                i = block.find(b"\n")
                if i < 0:
                    out = long.feed(block)
                    report.lines += len(out)
                    yield from out
                    continue
                out = long.feed(block[:i])
                out += long.finish()
                report.lines += len(out)
                yield from out
                long = None
                block = block[i + 1 :]
                if not block:
                    continue
            i = block.rfind(b"\n")
            if i < 0:
                pending += block
                if len(pending) > byte_cap:
                    no += 1
                    long = LongLine(no, report, unwrap, max_chars)
                    out = long.feed(pending)
                    pending = b""
                    report.lines += len(out)
                    yield from out
                continue
            # `pending` may exceed the cap by less than a block here: the chunk's slow path
            # gives that line to slow_line, which caps it exactly as a LongLine would.
            chunk = pending + block[: i + 1] if pending else block[: i + 1]
            pending = block[i + 1 :]

            # ---- fast path: the whole chunk decodes and has no NUL / over-long line -------
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            lines: list[str] = []
            has_cr = False
            if text and "\x00" not in text and not has_long_line(text, max_chars):
                if "\r" not in text:
                    lines = text.split("\n")
                else:
                    # A CRLF file: if every '\n' is part of a '\r\n' and there is no other
                    # '\r' (proved with single-character counts), one split does it all.
                    n_nl = text.count("\n")
                    if text.count("\r") == n_nl and len(parts := text.split("\r\n")) == n_nl + 1:
                        report.crlf += n_nl
                        lines = parts
                    else:
                        n = text.count("\r\n")
                        if n:
                            report.crlf += n
                            text = text.replace("\r\n", "\n")
                        lines = text.split("\n")
                        has_cr = "\r" in text
                lines.pop()  # the chunk ends with b'\n'
                if (" \n" in text or "\t" in text or " \r" in text):
                    # Trailing blanks and leading tabs are padding (a terminal's, an editor's),
                    # not log text. Per line, the same rule as slow_line's: the block a line is
                    # in is irrelevant.
                    lines = [strip_padding(x) for x in lines]
            if not lines:
                # Slow path: per-line bytes (bad UTF-8, NUL, over-long lines).
                for b in chunk[:-1].split(b"\n"):
                    no += 1
                    out = slow_line(b, no, report, unwrap, max_chars, False)
                    if b"@" in b:
                        out = split_glued_prompts(out, report)
                    report.lines += len(out)
                    yield from out
                continue

            # Single-character scans (memchr speed); the per-line rules use the same tests.
            collapsed = COLLAPSED_MARK in text  # a traceback header: maybe a collapsed one
            need_clean = has_cr or "<" in text or collapsed
            ansi = ansi_possible(chunk)
            # `[service]   | …` / `[pod/…/…] ` prefixes or autolinked envelopes (`[[date](tel:date):…`)
            # in this block: `[` lines need unwrapping too (rare).
            bracketed = bracketed_wrappers(text)
            if "@" in text and GLUED_PROMPT_PRECHECK.search(text) is not None:
                # A shell prompt glued after output without its final newline (rare): every
                # line gets the full cleaning, then loses its glued prompt to a line of its own.
                for s in lines:
                    no += 1
                    out = split_glued_prompts(clean(s, no, report, unwrap, ansi), report)
                    report.lines += len(out)
                    yield from out
                continue
            if bracketed and not ansi and not need_clean:
                for s in lines:
                    no += 1
                    w, s = unwrap(s)
                    if w is not None:
                        report.wrapped += 1
                    report.lines += 1
                    yield (no, s, w)
                continue
            if ansi:
                # Colour codes somewhere in the block (rare in files): full cleaning per line.
                for s in lines:
                    no += 1
                    out = clean(s, no, report, unwrap, True)
                    report.lines += len(out)
                    yield from out
                continue
            if need_clean:
                # tqdm output in the block: only lines with '\r' or '<' need the full work;
                # for the others _clean would reduce to the two branches below.
                for s in lines:
                    no += 1
                    if "\r" in s or "<" in s or (collapsed and COLLAPSED_MARK in s):
                        out = clean(s, no, report, unwrap, False)
                        report.lines += len(out)
                        yield from out
                    elif s[:1] == "[" and s[11:12] != "T" and not bracketed:
                        report.lines += 1
                        yield (no, s, None)
                    else:
                        w, s = unwrap(s)
                        if w is not None:
                            report.wrapped += 1
                        report.lines += 1
                        yield (no, s, w)
                continue

            # ---- hot loop: only wrapper prefixes are possible ----------------------------
            report.lines += len(lines)
            first = no + 1
            for no, s in enumerate(lines, first):  # `no` ends on the chunk's last line
                if s[:1] == "[" and s[11:12] != "T":
                    # An SGLang envelope (or another bracketed form): nothing to strip.
                    yield (no, s, None)
                    continue
                # Inlined _Unwrapper memo hit: a docker/Ray log repeats the same prefix.
                if s.startswith(unwrap.last_text):
                    rest = s[unwrap.last_len :]
                    # (`[service]  | ` after the memo's prefix is another wrapper: unwrap it)
                    if rest[:1] == "[" and rest[11:12] != "T" and not rest[1:2].isalpha():
                        report.wrapped += 1
                        yield (no, rest, unwrap.last_wrapper)
                        continue
                w, s = unwrap(s)
                if w is not None:
                    report.wrapped += 1
                yield (no, s, w)

        if long is not None:
            report.missing_final_newline = True
            out = long.finish()
            report.lines += len(out)
            yield from out
        elif pending:
            report.missing_final_newline = True
            no += 1
            out = slow_line(pending, no, report, unwrap, max_chars, False)
            if b"@" in pending:
                out = split_glued_prompts(out, report)
            report.lines += len(out)
            yield from out
    finally:
        report.physical_lines += no - first_no + 1
        blocks.close()  # close the file now if the consumer stopped early


def read_lines(
    path: str,
    report: ReadReport,
    *,
    start: int = 0,
    end: int | None = None,
    first_line_no: int = 1,
) -> Iterator[Line]:
    """Yield clean lines from a plain file, a .gz file (detected by magic bytes 1f 8b, not the
    name), or stdin ('-').

    start/end: a byte range of a PLAIN file for parallel workers: begin at the first line that
    starts at or after `start` (if start>0 skip the partial line: begin right after the first
    b'\\n' at offset >= start-1), and stop after the line that contains byte end-1 (lines whose
    first byte is < end). Numbering starts at first_line_no.

    Fills `report` as it goes; read it after exhausting the iterator. The source is opened on
    the first next(): opening errors raise InputError then; damage found while reading is
    recorded in report.damaged instead of raising.
    """
    ranged = start > 0 or end is not None
    if path == "-" and ranged:
        raise ValueError("byte ranges need a plain file, not stdin")
    # Not a generator itself: returning the line generator directly saves a `yield from`
    # hop per line on the hot path.
    blocks = source_blocks(path, report, start, end, ranged)
    return iter_lines(blocks, report, first_line_no, MAX_LINE_CHARS)


