"""Open log sources and turn their bytes into clean, numbered lines.

This is the only module that touches files. Everything downstream sees `Line` tuples
`(physical line number, cleaned text, Wrapper | None)` and a `ReadReport` that says what had
to be repaired on the way.

Real logs are damaged (see DESIGN.md "Reader"), so reading never raises on content: invalid
UTF-8 is replaced and counted, NUL bytes are dropped, CRLF endings, tqdm `\\r` refreshes, ANSI
colour codes (also with the escape byte already lost), progress bars glued to a log record,
over-long lines, a missing final newline and truncated gzip streams are all repaired or flagged,
and every physical line of the input yields at least one logical line.

Speed: the common line is an SGLang record (`[2026-... TP0] ...`), valid UTF-8, without `\\r`,
ANSI or NUL. For such input a whole block is decoded and split at once and each line costs a
couple of C-level checks; all repair work sits behind block-level prechecks (single-character
scans and one bytes regex), and per-line rules are written so that the result never depends on which block a line
fell into (which is what makes byte-range splitting exact).

Memory: input is read in 256 KiB blocks and only the current partial line is kept; a line that
never ends is capped, so memory does not grow with file or line size.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from logparse.model.numbers import to_int

__all__ = [
    "MAX_LINE_CHARS",
    "InputError",
    "Line",
    "ReadReport",
    "Wrapper",
    "check_readable",
    "expand_paths",
    "read_lines",
    "split_points",
]

# Lines longer than this are truncated and flagged. Read at call time (not baked into
# defaults) so tests can monkeypatch it.
MAX_LINE_CHARS = 256 * 1024

# A line is capped at this many *bytes* before decoding (4 bytes per character is the UTF-8
# maximum, so a line over the byte cap is always over the character cap too). Expressed as a
# multiple so it follows a patched MAX_LINE_CHARS.
_BYTES_PER_CHAR_CAP = 4

# Read size. Large enough to amortise per-block work, small enough that the decoded block and
# its ~2000 line objects stay in cache: measured ~20% faster than 1 MiB blocks.
BLOCK_SIZE = 256 * 1024
SPLIT_MIN_BYTES = 4 << 20  # files smaller than this are never split (not worth a process)
_COUNT_BLOCK = 4 << 20  # newline counting in split_points
_SNIFF_BYTES = 64 * 1024  # check_readable looks at this much (decompressed) text
_MAX_FLAGGED = 200
_GZIP_MAGIC = b"\x1f\x8b"
_REPLACEMENT_UTF8 = "\ufffd".encode()

_LOG_SUFFIXES = (".log", ".log.gz", ".txt", ".txt.gz")


class InputError(Exception):
    """Bad input: its str() is one clear line for the user, e.g. 'cannot read run.log: Permission denied'."""


@dataclass(frozen=True, slots=True)
class Wrapper:
    """What a log-capturing tool (docker-compose, Ray, k8s, a log shipper, another logger) said
    in the prefix it put before the line. For nested prefixes the innermost statement of each
    field wins (it is the most specific about the writing process)."""

    kind: str
    ts: str | None
    container: str | None
    pid: int | None
    actor: str | None
    ip: str | None
    level: str | None
    logger: str | None
    stream: str


@dataclass(slots=True)
class ReadReport:
    """What reading one source found and repaired. Filled while `read_lines` iterates."""

    path: str
    physical_lines: int = 0
    lines: int = 0
    bytes_read: int = 0
    bad_utf8: int = 0
    nul_bytes: int = 0
    crlf: int = 0
    cr_segments: int = 0
    glued_splits: int = 0
    ansi_stripped: int = 0
    wrapped: int = 0
    long_lines: int = 0
    # Numeric fields the grammar expected but could not use (inf, nan, 400 digits…): the line is
    # kept, the field left out (logparse.model.numbers); counted by the pipeline.
    damaged_numbers: int = 0
    flagged: list[tuple[int, str]] = field(default_factory=list)
    missing_final_newline: bool = False
    damaged: str | None = None

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly copy (tuples become lists)."""
        return {
            "path": self.path,
            "physical_lines": self.physical_lines,
            "lines": self.lines,
            "bytes_read": self.bytes_read,
            "bad_utf8": self.bad_utf8,
            "nul_bytes": self.nul_bytes,
            "crlf": self.crlf,
            "cr_segments": self.cr_segments,
            "glued_splits": self.glued_splits,
            "ansi_stripped": self.ansi_stripped,
            "wrapped": self.wrapped,
            "long_lines": self.long_lines,
            "damaged_numbers": self.damaged_numbers,
            "flagged": [[no, reason] for no, reason in self.flagged],
            "missing_final_newline": self.missing_final_newline,
            "damaged": self.damaged,
        }

    def flag(self, line_no: int, reason: str) -> None:
        """Record a noteworthy line; the list is capped, the counters carry the totals."""
        if len(self.flagged) < _MAX_FLAGGED:
            self.flagged.append((line_no, reason))


Line = tuple[int, str, Wrapper | None]


# --------------------------------------------------------------------------------------------
# Paths and up-front checks
# --------------------------------------------------------------------------------------------


def _os_message(path: str, err: OSError) -> str:
    reason = err.strerror or type(err).__name__
    return f"cannot read {path}: {reason}"


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
            for root, dirs, files in os.walk(p):
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


# Bytes that do not occur in text logs. \t \n \v \f \r, ESC (ANSI) and BS (some tools
# backspace over progress output) are allowed.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in (8, 9, 10, 11, 12, 13, 27)) + b"\x7f"


def check_readable(path: str) -> None:
    """Raise InputError with one line for: missing file, permission denied, a directory, an
    empty file ('X is empty'), a binary file ('X is not a text log (binary data)': more than 10%
    NUL or control bytes in the first 64 KiB, after gzip decompression if gz), a gzip file that
    is corrupt from the start ('X: not a valid gzip file'). '-' (stdin) is not checked: looking
    would consume it."""
    if path == "-":
        return
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(_os_message(path, e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot read {path}: Is a directory")
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below, errors mapped to InputError
    except OSError as e:
        raise InputError(_os_message(path, e)) from None
    with f:
        if not stat.S_ISREG(st.st_mode):
            return  # a FIFO or device: reading ahead would consume it
        try:
            head = f.read(_SNIFF_BYTES)
            if head[:2] == _GZIP_MAGIC:
                text = _gunzip_head(head, f.read)
                if text is None:
                    raise InputError(f"{path}: not a valid gzip file")
                head = text
        except OSError as e:
            raise InputError(_os_message(path, e)) from None
    if not head:
        raise InputError(f"{path} is empty")
    bad = len(head) - len(head.translate(None, _CONTROL_BYTES))
    if bad * 10 > len(head):
        raise InputError(f"{path} is not a text log (binary data)")


def _gunzip_head(first: bytes, read: Callable[[int], bytes]) -> bytes | None:
    """Up to 64 KiB of decompressed text, or None when the stream is corrupt before the first
    byte of output (a truncated stream that yields text is fine: read_lines reports it)."""
    d = zlib.decompressobj(31)
    data = first
    out = b""
    fed = len(first)
    try:
        while len(out) < _SNIFF_BYTES:
            if not data:
                # Stop at the end of the first member, or when 1 MiB of input gave too little
                # text to judge (an odd stream; read_lines will still read it all).
                if d.eof or fed > 16 * _SNIFF_BYTES:
                    break
                data = read(_SNIFF_BYTES)
                if not data:
                    break
                fed += len(data)
            out += d.decompress(data, _SNIFF_BYTES - len(out))
            data = d.unconsumed_tail
    except zlib.error:
        return out or None
    if not out and not d.eof:
        return None  # e.g. only the magic bytes: nothing can be decoded
    return out


# --------------------------------------------------------------------------------------------
# Byte sources: each yields raw blocks of text bytes
# --------------------------------------------------------------------------------------------


def _gunzip_blocks(
    first: bytes, read: Callable[[int], bytes], report: ReadReport
) -> Iterator[bytes]:
    """Decompress a (possibly multi-member) gzip stream. Output is bounded per call so a
    highly compressed file cannot blow up memory; damage stops the stream and is recorded in
    report.damaged instead of raising (the text before the damage is still good)."""
    d = zlib.decompressobj(31)
    data = first
    produced = 0
    member_has_input = bool(data)
    while True:
        if not data:
            data = read(BLOCK_SIZE)
            if not data:
                # Input is exhausted, but zlib may still hold output held back by max_length.
                try:
                    while not d.eof:
                        out = d.decompress(b"", BLOCK_SIZE)
                        if not out:
                            break
                        produced += len(out)
                        yield out
                except zlib.error as e:
                    report.damaged = f"gzip stream corrupt after {produced} bytes ({e})"
                    return
                if member_has_input and not d.eof:
                    report.damaged = f"gzip stream truncated after {produced} bytes"
                return
            member_has_input = True
        try:
            out = d.decompress(data, BLOCK_SIZE)
        except zlib.error as e:
            report.damaged = f"gzip stream corrupt after {produced} bytes ({e})"
            return
        data = d.unconsumed_tail
        if out:
            produced += len(out)
            yield out
        if d.eof:
            rest = d.unused_data
            # Another member may follow (concatenated gzip, e.g. rotated logs `cat`-ed).
            while len(rest) < 2:
                more = read(BLOCK_SIZE)
                if not more:
                    break
                rest += more
            if not rest.strip(b"\x00"):
                return  # end, or zero padding as written by some tape/block tools
            if rest[:2] != _GZIP_MAGIC:
                report.damaged = f"trailing data after gzip stream ignored (after {produced} bytes)"
                return
            d = zlib.decompressobj(31)
            data = rest
            member_has_input = True


def _plain_blocks(f: BinaryIO, first: bytes, start: int, end: int | None) -> Iterator[bytes]:
    """Blocks of a plain file restricted to the lines owned by the byte range [start, end):
    lines whose first byte is in the range. `first` is what was already read at `start`
    (only used when start == 0)."""
    pos = start
    buf = first
    if start > 0:
        # Skip the partial line: begin right after the first b'\n' at offset >= start-1, so
        # a line starting exactly at `start` is ours, and one straddling it is the previous
        # worker's. The skipped bytes are never accumulated.
        f.seek(start - 1)
        pos = start - 1
        while True:
            buf = f.read(BLOCK_SIZE)
            if not buf:
                return
            i = buf.find(b"\n")
            if i >= 0:
                pos += i + 1
                buf = buf[i + 1 :]
                break
            pos += len(buf)
    if end is None:
        if buf:
            yield buf
        while True:
            buf = f.read(BLOCK_SIZE)
            if not buf:
                return
            yield buf
    if pos >= end:
        return
    last = b"\n"
    while pos < end:
        if not buf:
            buf = f.read(BLOCK_SIZE)
            if not buf:
                return
        take = buf[: end - pos]
        buf = buf[len(take) :]
        pos += len(take)
        last = take[-1:]
        yield take
    if last == b"\n":
        return  # the range ends exactly at a line end
    # Finish the line that contains byte end-1.
    while True:
        if not buf:
            buf = f.read(BLOCK_SIZE)
            if not buf:
                return
        i = buf.find(b"\n")
        if i >= 0:
            yield buf[: i + 1]
            return
        yield buf
        buf = b""


# --------------------------------------------------------------------------------------------
# Cleaning regexes
# --------------------------------------------------------------------------------------------

# ANSI SGR/cursor codes with ESC, and the remnant form whose ESC was lost in copy-paste
# (`[1;33m`, `[0m`). The remnant needs at least one digit: `[m` alone would eat the start of
# `[model_runner.py:313]`; `[2026-…` and `[rank0]` never match.
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[\d{1,3}(?:;\d{1,3})*m")
# Block-level precheck on raw bytes: a superset of the remnant shape, and the cheapest form
# for the regex engine (bytes, a literal '[' prefix, possessive so `[2026-` fails without
# backtracking): ~3x faster than running the exact pattern over the block.
_ANSI_PRECHECK_RE = re.compile(rb"\[[0-9][0-9;]*+m")

# A log envelope glued right after a tqdm tail. A bar with a known total always ends in
# `[elapsed<remaining, rate]` (`[00:00<?, ?it/s]`, `[00:01<00:00,  1.23s/it]`, `MB/s]`), so the
# '<' is required: it is a single-character (memchr) precheck for a whole block, and the same
# rule is applied per line so results never depend on how lines fall into blocks.
_GLUED_RE = re.compile(
    r"<[^\[\]<]*(?:it/s|s/it|B/s)\](?=\[(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}[ \]])"
)

_LEVELS = r"DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|TRACE|NOTICE"
# A dotted module name (`flashinfer.jit`) – the only kind of name we trust to be a logger.
_DOTTED = r"[A-Za-z_]\w*(?:\.\w+)+"

_DOCKER_RE = re.compile(r"([A-Za-z0-9_][\w.-]{0,62}) +\|(?: |$)")
_RAY_RE = re.compile(r"\((?:(\w+) )?pid=(\d+)(?:, ip=([0-9A-Fa-f.:]+))?\) ?")
_KIBANA_RE = re.compile(
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (\d{1,2}), (\d{4}) @ "
    r"(\d{2}:\d{2}:\d{2})(?:\.(\d+))? +"
)
_ISO = r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?"
# Rust `tracing` (dynamo): `TS  INFO target: msg` (level right-aligned in 5 columns). A line
# cut right after the target has no ': '.
_RUST_RE = re.compile(_ISO + r" +(TRACE|DEBUG|INFO|WARN|ERROR) +(?:([\w.:-]+?): |(?=[\w.:-]+$))")
_ISO_RE = re.compile(_ISO + r"(?: +|$)")
_BRACKET_ISO_RE = re.compile(r"\[" + _ISO + r"\](?: +(?:(\S+) >> ?)?|$)")
_DATE = r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})"
# `2025-02-26 15:44:36,973 - INFO - flashinfer.jit: msg` / `… - INFO - Command: …`
_PYLOG_A_RE = re.compile(_DATE + r",(\d{3}) - (" + _LEVELS + r") - (?:(" + _DOTTED + r"): )?")
# `2025-02-26 15:44:36,973 - flashinfer.jit - INFO - msg` (the logging cookbook format)
_PYLOG_B_RE = re.compile(_DATE + r",(\d{3}) - ([\w.]+) - (" + _LEVELS + r") - ")
# `2026-06-07 10:59:31,659 [INFO] sglang.srt.managers.scheduler_metrics_mixin: msg`
_PYLOG_C_RE = re.compile(
    _DATE + r"(?:,(\d{3}))? \[(" + _LEVELS + r")\] (?:(" + _DOTTED + r"|__main__|root): )?"
)
# `2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] msg`
_CUSTOM_RE = re.compile(_DATE + r"(?:,(\d{3}))? (" + _LEVELS + r") (\d+) \[([\w.-]+:\d+)\] ?")
# `INFO - flashinfer.  jit: msg` (copy-mangled, no date): only with a dotted name.
_MANGLED_RE = re.compile(r"(" + _LEVELS + r") - ([A-Za-z_]\w*(?:\. *\w+)+): ")

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    )
}
_DIGITS = frozenset("0123456789")
# Kinds after which the rest is the message itself (no further wrapper can follow).
_TERMINAL_KINDS = frozenset({"python-logging", "custom-logging", "rust-tracing"})
# Kinds whose lines are padded with trailing spaces by the tool, not by the writer.
_RSTRIP_KINDS = frozenset({"kibana", "rust-tracing"})


def _frac(f: str | None) -> str:
    return "." + f[:6] if f else ""


def _iso_ts(date: str, time: str, frac: str | None) -> str:
    # Wall-clock time as printed; a UTC offset is dropped, not applied (the grammar compares
    # against SGLang's own naive timestamps, and the offset is not ours to apply).
    return f"{date} {time}{_frac(frac)}"


# One parsed prefix: (kind, ts, container, pid, actor, ip, level, logger, end offset).
_Prefix = tuple[
    str, str | None, str | None, int | None, str | None, str | None, str | None, str | None, int
]


def _match_prefix(s: str) -> _Prefix | None:
    """Recognise one wrapper prefix at the start of `s`, dispatching on the first character
    so that the typical non-wrapped line (traceback, bar, bare message) costs one or two
    failed anchored matches."""
    c = s[:1]
    if not c:
        return None
    if c == "(":
        m = _RAY_RE.match(s)
        if m:
            # A damaged pid (thousands of digits) is None: the line keeps its other metadata.
            return ("ray", None, None, to_int(m[2]), m[1], m[3], None, None, m.end())
        return None
    if c == "[":
        if s[11:12] != "T":
            return None
        m = _BRACKET_ISO_RE.match(s)
        if m:
            host = m[5]
            kind = "k8s" if host else "iso-timestamp"
            return (kind, _iso_ts(m[1], m[2], m[3]), host, None, None, None, None, None, m.end())
        return None
    if c in _DIGITS:
        sep = s[10:11]
        if sep == "T":
            m = _RUST_RE.match(s)
            if m:
                return (
                    "rust-tracing",
                    _iso_ts(m[1], m[2], m[3]),
                    None,
                    None,
                    None,
                    None,
                    m[5],
                    m[6],
                    m.end(),
                )
            m = _ISO_RE.match(s)
            if m:
                # kubectl --timestamps prints RFC3339Nano in UTC: 9 fraction digits + Z.
                kind = "k8s" if m[4] == "Z" and m[3] and len(m[3]) == 9 else "iso-timestamp"
                return (
                    kind,
                    _iso_ts(m[1], m[2], m[3]),
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    m.end(),
                )
        elif sep == " " and s[4:5] == "-":
            m = _PYLOG_A_RE.match(s)
            if m:
                return (
                    "python-logging",
                    f"{m[1]} {m[2]}.{m[3]}",
                    None,
                    None,
                    None,
                    None,
                    m[4],
                    m[5],
                    m.end(),
                )
            m = _PYLOG_C_RE.match(s)
            if m:
                return (
                    "python-logging",
                    f"{m[1]} {m[2]}{_frac(m[3])}",
                    None,
                    None,
                    None,
                    None,
                    m[4],
                    m[5],
                    m.end(),
                )
            m = _CUSTOM_RE.match(s)
            if m:
                return (
                    "custom-logging",
                    f"{m[1]} {m[2]}{_frac(m[3])}",
                    None,
                    to_int(m[5]),
                    None,
                    None,
                    m[4],
                    m[6],
                    m.end(),
                )
            m = _PYLOG_B_RE.match(s)
            if m:
                return (
                    "python-logging",
                    f"{m[1]} {m[2]}.{m[3]}",
                    None,
                    None,
                    None,
                    None,
                    m[5],
                    m[4],
                    m.end(),
                )
    elif c.isupper():
        mon = _MONTHS.get(s[:3])
        if mon is not None:
            m = _KIBANA_RE.match(s)
            if m:
                ts = f"{m[3]}-{mon:02d}-{int(m[2]):02d} {m[4]}{_frac(m[5])}"
                return ("kibana", ts, None, None, None, None, None, None, m.end())
        m = _MANGLED_RE.match(s)
        if m:
            logger = m[2].replace(" ", "")
            return ("python-logging", None, None, None, None, None, m[1], logger, m.end())
    m = _DOCKER_RE.match(s)
    if m:
        return ("docker-compose", None, m[1], None, None, None, None, None, m.end())
    return None


def _stream_of(kind: str, container: str | None, pid: int | None) -> str:
    if kind == "ray":
        return f"ray:{pid}"
    if kind == "docker-compose":
        return f"docker:{container}"
    if pid is not None:
        return f"pid:{pid}"
    return ""


# Kinds whose prefix text is the same on every line of one writer (no timestamp): safe to
# recognise again by plain string comparison.
_REPEATING_KINDS = frozenset({"docker-compose", "ray"})


class _Unwrapper:
    """Strips wrapper prefixes for one read. Per-read state: a cache of merged Wrappers by
    prefix text (so identical prefixes share one object) and the last repeating prefix, which
    lets a docker/Ray-wrapped log skip the regexes: their patterns never look past the prefix
    text, so a line starting with the same text parses the same way."""

    __slots__ = ("_cache", "last_len", "last_text", "last_wrapper")

    def __init__(self) -> None:
        self._cache: dict[str, tuple[Wrapper, bool]] = {}
        self.last_text = "\x00"  # cleaned lines never contain NUL: matches nothing
        self.last_len = 1
        self.last_wrapper: Wrapper | None = None

    def __call__(self, s: str) -> tuple[Wrapper | None, str]:
        """Strip (possibly nested) prefixes; return the merged Wrapper and the rest."""
        if s.startswith(self.last_text):
            rest = s[self.last_len :]
            if rest[:1] == "[" and rest[11:12] != "T":
                return self.last_wrapper, rest
        first = _match_prefix(s)
        if first is None:
            return None, s
        prefixes = [first]
        pos = first[8]
        kind = first[0]
        while kind not in _TERMINAL_KINDS and len(prefixes) < 6:
            rest = s[pos:]
            if rest[:1] == "[" and rest[11:12] != "T":
                break  # an SGLang envelope (or `[rank0]:`…): the grammar takes it from here
            nxt = _match_prefix(rest)
            # docker-compose is always outermost; inside another wrapper `word  | ` is message
            # text (a table, a bar), not a prefix.
            if nxt is None or nxt[8] == 0 or nxt[0] == "docker-compose":
                break
            prefixes.append(nxt)
            pos += nxt[8]
            kind = nxt[0]
        key = s[:pos]
        hit = self._cache.get(key)
        if hit is None:
            strip = any(p[0] in _RSTRIP_KINDS for p in prefixes)
            hit = (_merge(prefixes), strip)
            if len(self._cache) > 4096:
                self._cache.clear()  # bounded: timestamped prefixes rarely repeat
            self._cache[key] = hit
        w, strip = hit
        if len(prefixes) == 1 and first[0] in _REPEATING_KINDS:
            self.last_text, self.last_len, self.last_wrapper = key, pos, w
        rest = s[pos:]
        return w, (rest.rstrip() if strip else rest)


def _merge(prefixes: list[_Prefix]) -> Wrapper:
    # Innermost statement of each field wins; the stream comes from the innermost wrapper
    # that identifies a writer.
    kind, ts, container, pid, actor, ip, level, logger = prefixes[-1][:8]
    stream = _stream_of(kind, container, pid)
    for p in reversed(prefixes[:-1]):
        ts = ts if ts is not None else p[1]
        container = container if container is not None else p[2]
        pid = pid if pid is not None else p[3]
        actor = actor if actor is not None else p[4]
        ip = ip if ip is not None else p[5]
        level = level if level is not None else p[6]
        logger = logger if logger is not None else p[7]
        if not stream:
            stream = _stream_of(p[0], p[2], p[3])
    return Wrapper(kind, ts, container, pid, actor, ip, level, logger, stream)


# --------------------------------------------------------------------------------------------
# Line cleaning
# --------------------------------------------------------------------------------------------


def _clean(s: str, no: int, report: ReadReport, unwrap: _Unwrapper, ansi: bool) -> list[Line]:
    """Full cleaning of one physical line that has already been decoded, stripped of its
    line ending and NULs: ANSI, wrapper, `\\r` segments, glued bars. `ansi` says whether the
    chunk precheck found anything ANSI-like."""
    if ansi and ("\x1b" in s or "m" in s):
        s2, n = _ANSI_RE.subn("", s)
        if n:
            report.ansi_stripped += 1
            s = s2
    w: Wrapper | None = None
    if s[:1] != "[" or s[11:12] == "T":
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
    return _unglue(s, no, w, report)


def _unglue(s: str, no: int, w: Wrapper | None, report: ReadReport) -> list[Line]:
    """Split a log record glued right after a tqdm bar into its own logical line."""
    if "<" not in s or ("/s]" not in s and "s/it]" not in s):
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


def _slow_line(
    b: bytes, no: int, report: ReadReport, unwrap: _Unwrapper, max_chars: int, truncated: bool
) -> list[Line]:
    """Reference semantics for one physical line given as bytes (without its b'\\n').
    `truncated` means the line was already cut at the byte cap while reading."""
    byte_cap = _BYTES_PER_CHAR_CAP * max_chars
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
    s = _decode(b, no, report)
    if len(s) > max_chars:
        s = s[:max_chars]
        truncated = True
    if truncated:
        report.long_lines += 1
        report.flag(no, f"line longer than {max_chars} characters, truncated")
    return _clean(s, no, report, unwrap, True)


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


def _has_long_line(text: str, limit: int) -> bool:
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


def _ansi_possible(chunk: bytes) -> bool:
    if b"\x1b" in chunk:  # memchr
        return True
    return _ANSI_PRECHECK_RE.search(chunk) is not None


# --------------------------------------------------------------------------------------------
# The reading loop
# --------------------------------------------------------------------------------------------


def _iter_lines(
    blocks: Generator[bytes, None, None], report: ReadReport, first_no: int, max_chars: int
) -> Iterator[Line]:
    no = first_no - 1
    byte_cap = _BYTES_PER_CHAR_CAP * max_chars
    pending = b""
    discarding = False  # inside an over-long line: drop bytes until its newline
    unwrap = _Unwrapper()
    try:
        for block in blocks:
            report.bytes_read += len(block)
            if discarding:
                i = block.find(b"\n")
                if i < 0:
                    continue
                no += 1
                out = _slow_line(pending, no, report, unwrap, max_chars, True)
                report.lines += len(out)
                yield from out
                pending = b""
                discarding = False
                block = block[i + 1 :]
                if not block:
                    continue
            i = block.rfind(b"\n")
            if i < 0:
                pending += block
                if len(pending) > byte_cap:
                    pending = pending[:byte_cap]
                    discarding = True
                continue
            chunk = pending + block[: i + 1] if pending else block[: i + 1]
            pending = block[i + 1 :]
            if len(pending) > byte_cap:
                pending = pending[:byte_cap]
                discarding = True

            # ---- fast path: the whole chunk decodes and has no NUL / over-long line -------
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            lines: list[str] = []
            has_cr = False
            if text and "\x00" not in text and not _has_long_line(text, max_chars):
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
            if not lines:
                # Slow path: per-line bytes (bad UTF-8, NUL, over-long lines).
                for b in chunk[:-1].split(b"\n"):
                    no += 1
                    out = _slow_line(b, no, report, unwrap, max_chars, False)
                    report.lines += len(out)
                    yield from out
                continue

            # Single-character scans (memchr speed); the per-line rules use the same tests.
            need_clean = has_cr or "<" in text
            ansi = _ansi_possible(chunk)
            if ansi:
                # Colour codes somewhere in the block (rare in files): full cleaning per line.
                for s in lines:
                    no += 1
                    out = _clean(s, no, report, unwrap, True)
                    report.lines += len(out)
                    yield from out
                continue
            if need_clean:
                # tqdm output in the block: only lines with '\r' or '<' need the full work;
                # for the others _clean would reduce to the two branches below.
                for s in lines:
                    no += 1
                    if "\r" in s or "<" in s:
                        out = _clean(s, no, report, unwrap, False)
                        report.lines += len(out)
                        yield from out
                    elif s[:1] == "[" and s[11:12] != "T":
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
                    if rest[:1] == "[" and rest[11:12] != "T":
                        report.wrapped += 1
                        yield (no, rest, unwrap.last_wrapper)
                        continue
                w, s = unwrap(s)
                if w is not None:
                    report.wrapped += 1
                yield (no, s, w)

        if pending or discarding:
            report.missing_final_newline = True
            no += 1
            out = _slow_line(pending, no, report, unwrap, max_chars, discarding)
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
    blocks = _source_blocks(path, report, start, end, ranged)
    return _iter_lines(blocks, report, first_line_no, MAX_LINE_CHARS)


def _source_blocks(
    path: str, report: ReadReport, start: int, end: int | None, ranged: bool
) -> Generator[bytes, None, None]:
    """Blocks of text bytes from a path or stdin, gunzipping when the magic says so. Opens
    lazily and closes on exhaustion or close()."""
    if path == "-":
        yield from _stream_blocks(sys.stdin.buffer, report, 0, None, False)
        return
    try:
        f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed in finally
    except OSError as e:
        raise InputError(_os_message(path, e)) from None
    try:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"cannot read {path}: Is a directory")
        if ranged and start <= 0 and end is not None and end >= st.st_size:
            # The range is the whole file (split_points' single part, also for .gz).
            ranged = False
        yield from _stream_blocks(f, report, start, end, ranged)
    finally:
        f.close()


def _stream_blocks(
    f: BinaryIO, report: ReadReport, start: int, end: int | None, ranged: bool
) -> Iterator[bytes]:
    """Blocks of text bytes from an open binary stream, gunzipping when the magic says so."""
    try:
        if ranged:
            head = f.read(2)
            if head == _GZIP_MAGIC:
                raise ValueError(f"byte ranges need a plain file, {report.path} is gzip")
            if start > 0:
                yield from _plain_blocks(f, b"", start, end)
            else:
                yield from _plain_blocks(f, head, 0, end)
            return
        first = f.read(BLOCK_SIZE)
        # Unbuffered and pipe reads can be short; make sure the magic check sees 2 bytes.
        while 0 < len(first) < 2:
            more = f.read(BLOCK_SIZE)
            if not more:
                break
            first += more
        if first[:2] == _GZIP_MAGIC:
            yield from _gunzip_blocks(first, f.read, report)
            return
        if first:
            yield first
        while True:
            b = f.read(BLOCK_SIZE)
            if not b:
                return
            yield b
    except OSError as e:
        # A read error mid-way (EIO, a vanished network file): keep what was read.
        report.damaged = f"read error after {report.bytes_read} bytes: {e.strerror or e}"


def split_points(path: str, parts: int) -> list[tuple[int, int, int]]:
    """For a plain file, return up to `parts` (start, end, first_line_no) byte ranges aligned
    to line starts covering the whole file, suitable for read_lines(start=, end=,
    first_line_no=). A file below SPLIT_MIN_BYTES (4 MiB), a gzip file, or parts <= 1 gives
    one part; ranges that would be empty (a single huge line spanning several nominal
    parts) are merged, so fewer than `parts` may come back."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            gz = f.read(2) == _GZIP_MAGIC
    except OSError as e:
        raise InputError(_os_message(path, e)) from None
    if parts <= 1 or size < SPLIT_MIN_BYTES or gz:
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
    share a range. None for gzip files and stdin (read them whole instead)."""
    if path == "-" or not lines:
        return None
    wanted = sorted(set(lines))
    try:
        with open(path, "rb") as f:
            if f.read(2) == _GZIP_MAGIC:
                return None
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
        return None
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
