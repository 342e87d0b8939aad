"""Build the lark LALR parser once per process, and the fast path compiled from the same grammar
(`fastpath.py`; its pattern analysis in `patterns.py`, the per-user cache in `cache.py`).

The grammar (grammars/*.lark) is the single source of truth for line shapes. Pure lark LALR tops
out around 30k lines/s per core, so at start-up every *flat* alternative (terminals only) of the
`prefix` and `message` rules is compiled into one regex made of lark's own terminal patterns, each
in an atomic group (lark's lexer never backtracks into a token). A line is dispatched the way
lark's contextual lexer would: the first terminal is found by trying the acceptable terminals in
lark's own order, then only the alternatives that start with that terminal are tried, and the
captured tokens go to the same Transformer callbacks. Whatever the fast path cannot decide goes
through the real LALR parser; `tests/test_fast_path.py` proves both give identical events.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from logparse.grammar.cache import FASTPATH_FORMAT, _cache_path, _safe_to_load
from logparse.grammar.fastpath import FastPath, FastPathData, FastToken, ParsedLine
from logparse.grammar.resources import grammar_text

if TYPE_CHECKING:
    from lark import Lark

START_SYMBOLS = ["line", "unparsed_line"]
__all__ = ["FASTPATH_FORMAT", "FastToken", "LineParser", "ParsedLine", "build_lark", "get_parser"]


def build_lark(transformer: Any, *, strict: bool = False, cache: bool = True, text: str | None = None) -> Lark:
    """The LALR parser with the transformer applied during parsing (no tree is built), from `text`
    (default: the grammar files as they are now)."""
    from lark import Lark

    if text is None:
        text = grammar_text()
    cache_file = _cache_path(text, strict) if cache else None
    # lark's cache is a pickle (loading one runs code): let lark read it only when it is ours
    # and nobody else could have written it; otherwise build without a cache.
    if cache_file and os.path.lexists(cache_file) and not _safe_to_load(cache_file):
        cache_file = None
    with _collision_check(strict):
        return Lark(
            text,
            parser="lalr",
            lexer="contextual",
            start=START_SYMBOLS,
            transformer=transformer,
            strict=strict,
            maybe_placeholders=False,
            cache=cache_file or False,
        )


_BUILD_LOCK = threading.Lock()


@contextmanager
def _collision_check(strict: bool) -> Iterator[None]:
    """Let lark compare terminals for overlaps (interegular) only in a strict build.

    With interegular installed, lark checks every pair of terminals of every lexer state for a
    common match, on every build: ~30 s of CPU for this grammar (20–90 s of wall time), which made
    the first run after any grammar or code change, and the first run after an install, that slow.
    Only a strict build acts on the result (a collision is an error: the tests build strict, so a
    colliding grammar never ships); a non-strict build only logs it to lark's logger, which lark
    keeps at CRITICAL. So a non-strict build turns the check off for its duration (lark's
    `has_interegular` switch; a lark without it just runs the check). Builds are serialized so a
    concurrent strict build in another thread never runs with the check off."""
    with _BUILD_LOCK:
        import lark.lexer

        if strict or not getattr(lark.lexer, "has_interegular", False):
            yield
            return
        lark.lexer.has_interegular = False
        try:
            yield
        finally:
            lark.lexer.has_interegular = True


class LineParser:
    """Parse one line into (envelope, event class, fields): fast path first, then LALR, then the
    `unparsed_line` fallback that keeps the envelope of a line no message rule knows. The LALR
    parser is built on first need (or at once with strict=True, which is what the strict check is for)."""

    def __init__(self, transformer: Any, *, strict: bool = False, fast: bool = True) -> None:
        self._transformer = transformer
        self._strict = strict
        self._lark: Lark | None = None
        # The grammar is read once: lark, the fast path's data and their cache key all come from this
        # text. Reading the files again for the key let a grammar edited in between (a checkout being
        # worked on while tests run) store the old grammar's data under the new grammar's key.
        self._text = grammar_text()
        if strict or not fast:
            self._lark = build_lark(transformer, strict=strict, text=self._text)
        self.fast = FastPath(_cached_fast_data(self, strict, self._text), transformer) if fast else None

    @property
    def lark(self) -> Lark:
        if self._lark is None:
            self._lark = build_lark(self._transformer, strict=self._strict, text=self._text)
        return self._lark

    def parse(self, text: str) -> ParsedLine:
        if self.fast is not None:
            out = self.fast.parse(text)
            if out is not None:
                return out  # type: ignore[no-any-return]
        return self.parse_lalr(text)

    def parse_lalr(self, text: str) -> ParsedLine:
        from lark.exceptions import LarkError

        parse = self.lark.parse
        try:
            return parse(text, start="line")  # type: ignore[return-value]
        except LarkError:
            return parse(text, start="unparsed_line")  # type: ignore[return-value]


def _cached_fast_data(parser: LineParser, strict: bool, text: str | None = None) -> FastPathData:
    """The fast path's data, from the per-user cache when this very logdiag made it from this very
    grammar (`text`: the one the parser's lark was built from). The cache is JSON (data only: reading
    it runs no code, and a file from another version or a damaged one is ignored and rewritten, never
    fatal)."""
    cache = _cache_path(text if text is not None else grammar_text(), strict)
    path = f"{cache}.fastpath.json" if cache else None
    if path and _safe_to_load(path):
        try:
            with open(path, encoding="utf-8") as fh:
                data = FastPathData.from_json(fh.read(1 << 24))
            if data is not None:
                return data
        except (OSError, UnicodeDecodeError):
            pass
    data = FastPathData.from_lark(parser.lark)
    if path:
        try:
            tmp = f"{path}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data.to_json())
            os.replace(tmp, path)
        except OSError:
            pass
    return data


_PARSERS: dict[tuple[bool, bool], LineParser] = {}


def get_parser(*, strict: bool = False, fast: bool = True) -> LineParser:
    """The process-wide parser (building it costs ~0.1–0.5 s, so do it once)."""
    key = (strict, fast)
    parser = _PARSERS.get(key)
    if parser is None:
        from logparse.grammar.transform import LineTransformer

        parser = _PARSERS[key] = LineParser(LineTransformer(), strict=strict, fast=fast)
    return parser
