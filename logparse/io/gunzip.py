"""Gzip decoding that keeps every recoverable byte and says what was damaged.

zlib's gzip mode (wbits=31) raises on a bad CRC or size trailer and throws away the output of
that call (up to a whole block: a small log came out empty). So the member header is parsed
here, the deflate data is inflated raw (wbits=-15) and the trailer is checked here: a bad
trailer only adds a note to `ReadReport.damaged`. A corrupt deflate stream is salvaged up to
the last good byte by replaying the failing input piece in smaller steps from a copy of the
decompressor. Output is bounded per call (a bomb cannot blow up memory) and the expansion
ratio is limited (`limits.max_ratio`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator

from logparse.io.limits import RATIO_FLOOR, max_ratio
from logparse.io.readreport import InputError, ReadReport

__all__ = ["GZIP_MAGIC", "gunzip_blocks", "gunzip_head"]

GZIP_MAGIC = b"\x1f\x8b"
OUT_BLOCK = 256 * 1024  # bound on the output of one inflate call
_IN_PIECE = 16 * 1024  # input fed per call: a failing call is replayed over at most this much
_MAX_HEADER = 64 * 1024  # a longer member header (file name, comment) is not a gzip header
_FEXTRA, _FNAME, _FCOMMENT, _FHCRC = 4, 8, 16, 2


def _header_length(buf: bytes) -> int:
    """Length of the gzip member header at the start of `buf`: > 0 when complete, 0 when more
    bytes are needed, -1 when it is not a valid header."""
    if len(buf) < 10:
        return 0 if GZIP_MAGIC.startswith(buf[:2]) else -1
    if buf[:2] != GZIP_MAGIC or buf[2] != 8 or buf[3] & 0xE0:
        return -1
    flags = buf[3]
    pos = 10
    if flags & _FEXTRA:
        if len(buf) < pos + 2:
            return 0
        pos += 2 + int.from_bytes(buf[pos : pos + 2], "little")
    for bit in (_FNAME, _FCOMMENT):
        if flags & bit:
            end = buf.find(b"\x00", pos)
            if end < 0:
                return 0 if len(buf) < _MAX_HEADER else -1
            pos = end + 1
    if flags & _FHCRC:
        pos += 2
    return pos if len(buf) >= pos else 0


class _Member:
    """Inflate state of one member, with the output checks the trailer needs."""

    __slots__ = ("crc", "d", "size")

    def __init__(self) -> None:
        self.d = zlib.decompressobj(-15)
        self.crc = 0
        self.size = 0


def gunzip_blocks(first: bytes, read: Callable[[int], bytes], report: ReadReport,
                  name: str = "") -> Iterator[bytes]:
    """Decompress a (possibly multi-member) gzip stream whose first bytes are `first`.
    Damage is recorded in report.damaged (the text before it is kept); expanding beyond the
    ratio limit raises InputError."""
    ratio = max_ratio()
    src = name or report.path
    data = first
    fed = len(first)  # compressed bytes read so far
    produced = 0
    member_no = 0

    def more() -> bytes:
        nonlocal fed
        chunk = read(OUT_BLOCK)
        fed += len(chunk)
        return chunk

    while True:
        # ---- member header ----------------------------------------------------------------
        while (hlen := _header_length(data)) == 0:
            chunk = more()
            if not chunk:
                break
            data += chunk
        if hlen <= 0:
            if member_no == 0:
                report.damaged = "not a valid gzip stream"
            elif data.strip(b"\x00"):
                report.damaged = (f"trailing data after gzip stream ignored (after {produced} bytes)"
                                  if hlen < 0 else f"gzip stream truncated after {produced} bytes")
            return
        member_no += 1
        data = data[hlen:]
        m = _Member()
        # ---- deflate data ---------------------------------------------------------------
        while not m.d.eof:
            if not data:
                data = m.d.unconsumed_tail or more()
                if not data:
                    # Input ended: drain what zlib still holds, then it is truncated.
                    report.damaged = f"gzip stream truncated after {produced} bytes"
                    return
            piece, data = data[:_IN_PIECE], data[_IN_PIECE:]
            saved = m.d.copy()
            try:
                out = m.d.decompress(piece, OUT_BLOCK)
            except zlib.error as err:
                for out in _salvage(saved, piece):
                    produced += len(out)
                    yield out
                report.damaged = f"gzip stream corrupt after {produced} bytes ({err})"
                return
            # An output-bounded call leaves input behind: feed it before new input. At the end of
            # the member the rest is unused_data (unconsumed_tail may still hold a stale copy).
            data = (m.d.unused_data if m.d.eof else m.d.unconsumed_tail) + data
            if out:
                m.crc = zlib.crc32(out, m.crc)
                m.size += len(out)
                produced += len(out)
                # Judged on the input consumed so far, before the block is passed on: a bomb
                # stops before its first line is parsed.
                if ratio is not None and produced > RATIO_FLOOR and produced > ratio * (fed - len(data)):
                    raise InputError(
                        f"{src}: gzip data expands more than {ratio:g}x (a decompression bomb?); "
                        f"raise the limit with LOGDIAG_MAX_GZIP_RATIO=N (0: no limit)")
                yield out
        # ---- trailer: CRC-32 and size mod 2**32 ---------------------------------------------
        while len(data) < 8:
            chunk = more()
            if not chunk:
                break
            data += chunk
        if len(data) < 8:
            report.damaged = f"gzip trailer missing (stream truncated after {produced} bytes)"
            return
        crc = int.from_bytes(data[:4], "little")
        size = int.from_bytes(data[4:8], "little")
        if crc != m.crc or size != m.size & 0xFFFFFFFF:
            what = "CRC" if crc != m.crc else "size"
            # The bytes are kept: either the trailer alone is damaged or the text is, and the
            # text is still the best evidence there is.
            report.damaged = f"gzip member {member_no}: {what} check failed (data may be damaged; {produced} bytes read)"
        data = data[8:]
        # Another member may follow (rotated logs `cat`-ed together); zero padding ends it.
        while len(data) < 2:
            chunk = more()
            if not chunk:
                break
            data += chunk
        if not data.strip(b"\x00"):
            while chunk := more():  # padding to the end is fine; anything else is noted
                if chunk.strip(b"\x00"):
                    report.damaged = f"trailing data after gzip stream ignored (after {produced} bytes)"
                    return
            return


def _salvage(saved: zlib._Decompress, piece: bytes) -> Iterator[bytes]:
    """Replay `piece` from the state before the failing call, in ever smaller steps, and
    yield every byte of output produced before the corrupt input byte."""
    d = saved
    pos = 0
    for step in (1024, 1):
        while pos < len(piece):
            attempt = d.copy()
            outs: list[bytes] = []
            try:
                outs.append(attempt.decompress(piece[pos : pos + step], OUT_BLOCK))
                while attempt.unconsumed_tail and not attempt.eof:
                    outs.append(attempt.decompress(attempt.unconsumed_tail, OUT_BLOCK))
            except zlib.error:
                break  # this step holds the damage: retry it in smaller steps
            yield from (o for o in outs if o)
            d = attempt
            pos += step
            if d.eof:
                return


def gunzip_head(first: bytes, read: Callable[[int], bytes], limit: int, name: str = "") -> bytes | None:
    """Up to `limit` bytes of decompressed text, or None when nothing can be decoded (not gzip,
    or corrupt before the first byte of output)."""
    report = ReadReport(path=name)
    out = bytearray()
    for block in gunzip_blocks(first, read, report):  # a bomb raises InputError here already
        out += block
        if len(out) >= limit:
            break
    if not out and report.damaged:
        return None
    return bytes(out[:limit])
