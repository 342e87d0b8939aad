"""Build the lark LALR parser once per process, and the fast path compiled from the same grammar.

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

import hashlib
import os
import re
import re._constants as sre_c  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError

from logparse.resources import grammar_text

START_SYMBOLS = ["line", "unparsed_line"]

# lark's Token constructor without the deprecated-keyword check of Token.__new__ (hot path).
_token = Token._future_new

# A parsed line: (envelope, event class, field values); see logparse.transform.
ParsedLine = tuple[Any, type, dict[str, Any]]


def _cache_path(text: str, strict: bool) -> str | None:
    """A per-user cache file for lark's grammar analysis (2–3× faster start-up). Not the shared
    temp directory: another user could plant a cache file there."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "logdiag"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    if not os.access(folder, os.W_OK):
        return None
    import lark

    digest = hashlib.sha256(f"{lark.__version__}|{strict}|{text}".encode()).hexdigest()[:20]
    return str(folder / f"grammar-{digest}.lark-cache")


def build_lark(transformer: Transformer | None, *, strict: bool = False, cache: bool = True) -> Lark:
    """The LALR parser with the transformer applied during parsing (no tree is built)."""
    text = grammar_text()
    cache_file = _cache_path(text, strict) if cache else None
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


# --------------------------------------------------------------------------- fast path compiler


def _lexer_order(term: Any) -> tuple[int, int, int, str]:
    """The order in which lark's lexer tries terminals (lark.lexer.BasicLexer._build_scanner)."""
    return (-term.priority, -term.pattern.max_width, -len(term.pattern.value), term.name)


def _first_chars(regexp: str) -> frozenset[str] | None:
    """The set of characters a match of `regexp` can start with, or None when it is not a small
    known set (then the terminal is tried for every first character)."""
    try:
        parsed = sre_parse.parse(regexp)
    except re.error:
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    return _first_of_seq(list(parsed))


def _first_of_seq(items: list[Any]) -> frozenset[str] | None:
    for op, av in items:
        if op is sre_c.AT:
            continue
        return _first_of_op(op, av)
    return None


def _first_of_op(op: Any, av: Any) -> frozenset[str] | None:
    if op is sre_c.LITERAL:
        return frozenset(chr(av))
    if op is sre_c.IN:
        chars: set[str] = set()
        for iop, iav in av:
            if iop is sre_c.LITERAL:
                chars.add(chr(iav))
            elif iop is sre_c.RANGE and iav[1] - iav[0] <= 128:
                chars.update(chr(c) for c in range(iav[0], iav[1] + 1))
            elif iop is sre_c.CATEGORY and iav is sre_c.CATEGORY_DIGIT:
                chars.update("0123456789")
            else:
                return None
        return frozenset(chars)
    if op is sre_c.SUBPATTERN:
        return _first_of_seq(list(av[-1]))
    if op is sre_c.ATOMIC_GROUP:
        return _first_of_seq(list(av))
    if op is sre_c.BRANCH:
        out: set[str] = set()
        for branch in av[1]:
            sub = _first_of_seq(list(branch))
            if sub is None:
                return None
            out |= sub
        return frozenset(out)
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
        lo, _hi, item = av
        if lo == 0:
            return None
        return _first_of_seq(list(item))
    if op is sre_c.CATEGORY and av is sre_c.CATEGORY_DIGIT:
        return frozenset("0123456789")
    return None


@dataclass(slots=True)
class _Alternative:
    """One flat rule alternative compiled to a regex."""

    regex: re.Pattern[str]
    kept: tuple[tuple[str, str], ...]  # (regex group name, terminal name) of the tokens passed on
    callback: Callable[[list[Any]], Any]
    name: str


class _Dispatcher:
    """Finds the first terminal at a position the way lark's lexer does: among the acceptable
    terminals, the first in lark's order that matches. Split by first character for speed, and
    compiled lazily: a log uses a small part of the grammar, and compiling all of it up front
    would dominate the start-up of a short run."""

    def __init__(self, terms: list[Any], firsts: dict[str, frozenset[str] | None]) -> None:
        self._ordered = sorted(terms, key=_lexer_order)
        self._firsts = {t.name: firsts.get(t.name) for t in self._ordered}
        self._chars = set().union(*(f for f in self._firsts.values() if f is not None))
        self._by_char: dict[str, re.Pattern[str] | None] = {}
        self._default = self._compile([t for t in self._ordered if self._firsts[t.name] is None])

    @staticmethod
    def _compile(terms: list[Any]) -> re.Pattern[str] | None:
        if not terms:
            return None
        return re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms))

    def scanner(self, char: str) -> re.Pattern[str] | None:
        try:
            return self._by_char[char]
        except KeyError:
            pass
        if char in self._chars:
            terms = [t for t in self._ordered if self._firsts[t.name] is None or char in self._firsts[t.name]]  # type: ignore[operator]
            scanner = self._compile(terms)
        else:
            scanner = self._default
        self._by_char[char] = scanner
        return scanner


class FastPath:
    """Regexes for the flat alternatives of `prefix` and `message`, dispatched like lark's lexer."""

    def __init__(self, lark: Lark, transformer: Transformer, firsts: dict[str, frozenset[str] | None] | None = None) -> None:
        terminals = {t.name: t for t in lark.terminals}
        self._terminals = terminals
        rules_by_origin: dict[str, list[Any]] = defaultdict(list)
        for rule in lark.rules:
            rules_by_origin[rule.origin.name].append(rule)
        self._callback = lambda name: getattr(transformer, name)
        if firsts is None:
            firsts = first_char_table(lark)
        self.firsts = firsts

        first = _first_sets(rules_by_origin)
        self._line = getattr(transformer, "line")
        unparsed = getattr(transformer, "unparsed_line")
        # unparsed_line's children: the envelope (when a prefix was read), then TEXT (when non-empty).
        self._unparsed = lambda env, rest: unparsed(
            [c for c in (env, _token("TEXT", rest) if rest else None) if c is not None])
        # prefix: one terminal per alternative, each with an alias.
        self._prefix: dict[str, Callable[[list[Any]], Any]] = {}
        for rule in rules_by_origin["prefix"]:
            (sym,) = rule.expansion
            self._prefix[sym.name] = self._callback(rule.alias or rule.origin.name)
        msg_first = first["message"]
        self._start = _Dispatcher([terminals[n] for n in set(self._prefix) | msg_first], firsts)
        self._after_prefix = _Dispatcher([terminals[n] for n in msg_first], firsts)
        # Flat rules by first terminal; compiled on first use (see _Dispatcher).
        self._rules: dict[str, list[Any]] = defaultdict(list)
        for rule in _flat_rules(rules_by_origin, "message"):
            self._rules[rule.expansion[0].name].append(rule)
        self._alts: dict[str, list[_Alternative]] = {}
        self.alternatives = sum(len(v) for v in self._rules.values())
        self._env_cache: dict[str, Any] = {}

    def compile_all(self) -> None:
        """Compile every alternative now (tests use it to check that all of them compile)."""
        for name in self._rules:
            self._alternatives(name)

    def _alternatives(self, name: str) -> list[_Alternative]:
        alts = self._alts.get(name)
        if alts is None:
            alts = self._alts[name] = [self._compile(r, self._terminals) for r in self._rules.get(name, ())]
        return alts

    def _compile(self, rule: Any, terminals: dict[str, Any]) -> _Alternative:
        if rule.options.empty_indices:
            raise ValueError(f"rule {rule} uses [x] placeholders; write x? instead")
        parts: list[str] = []
        kept: list[tuple[str, str]] = []
        keep_all = rule.options.keep_all_tokens
        for i, sym in enumerate(rule.expansion):
            pattern = terminals[sym.name].pattern.to_regexp()
            if keep_all or not sym.filter_out:
                group = f"k{i}"
                parts.append(f"(?>(?P<{group}>{pattern}))")
                kept.append((group, sym.name))
            else:
                parts.append(f"(?>{pattern})")
        name = rule.alias or rule.origin.name
        return _Alternative(re.compile("".join(parts)), tuple(kept), self._callback(name), name)

    def parse(self, text: str) -> Any:
        """The transformed `line`, or None when the fast path cannot decide (use LALR then)."""
        scanner = self._start.scanner(text[:1])
        m = scanner.match(text) if scanner is not None else None
        if m is None:
            # No terminal lark's lexer could start the line with: `line` fails to lex at 0 and
            # `unparsed_line` takes the whole line as TEXT. Decide it here; LALR would do the same.
            return self._unparsed(None, text)
        name = m.lastgroup
        env = None
        pos = 0
        if name in self._prefix:
            # Envelope callbacks are pure functions of the prefix text, which repeats a lot (same
            # second, same rank): cache them. A cleared cache costs only speed.
            value = m.group(name)
            env = self._env_cache.get(value)
            if env is None:
                if len(self._env_cache) > 50_000:
                    self._env_cache.clear()
                env = self._env_cache[value] = self._prefix[name]([_token(name, value)])
            pos = m.end()
            scanner = self._after_prefix.scanner(text[pos : pos + 1])
            m = scanner.match(text, pos) if scanner is not None else None
            if m is None:
                # No message can start here: the lexer of `line` fails right after the prefix.
                return self._unparsed(env, text[pos:])
            name = m.lastgroup
        alts = self._alts.get(name)  # type: ignore[arg-type]
        if alts is None:
            alts = self._alternatives(name)  # type: ignore[arg-type]
        for alt in alts:
            mm = alt.regex.fullmatch(text, pos)
            if mm is not None:
                partial = alt.callback([_token(t, mm.group(g)) for g, t in alt.kept])
                return self._line([env, partial] if pos else [partial])
        return None


def first_char_table(lark: Lark) -> dict[str, frozenset[str] | None]:
    """First characters of every terminal (regex analysis; cached on disk with the grammar)."""
    return {t.name: _first_chars(t.pattern.to_regexp()) for t in lark.terminals}


def _first_sets(rules_by_origin: dict[str, list[Any]]) -> dict[str, set[str]]:
    """FIRST sets of the nonterminals (the grammar has no empty message rules)."""
    first: dict[str, set[str]] = defaultdict(set)
    changed = True
    while changed:
        changed = False
        for origin, rules in rules_by_origin.items():
            for rule in rules:
                if not rule.expansion:
                    continue
                sym = rule.expansion[0]
                add = {sym.name} if sym.is_term else first[sym.name]
                if not add <= first[origin]:
                    first[origin] |= add
                    changed = True
    return first


def _flat_rules(rules_by_origin: dict[str, list[Any]], origin: str) -> list[Any]:
    """Flat rules reachable from `origin` through inlined (`?rule`) single-symbol alternatives."""
    out: list[Any] = []
    for rule in rules_by_origin[origin]:
        exp = rule.expansion
        if all(s.is_term for s in exp) and exp:
            out.append(rule)
        elif len(exp) == 1 and (rule.options.expand1 or exp[0].name.startswith("_")):
            out.extend(_flat_rules(rules_by_origin, exp[0].name))
    return out


class LineParser:
    """Parse one line into (envelope, event class, fields): fast path first, then LALR, then the
    `unparsed_line` fallback that keeps the envelope of a line no message rule knows."""

    def __init__(self, transformer: Transformer, *, strict: bool = False, fast: bool = True) -> None:
        self.lark = build_lark(transformer, strict=strict)
        self.fast = FastPath(self.lark, transformer, _cached_firsts(self.lark, strict)) if fast else None
        self._parse = self.lark.parse

    def parse(self, text: str) -> ParsedLine:
        if self.fast is not None:
            out = self.fast.parse(text)
            if out is not None:
                return out  # type: ignore[no-any-return]
        return self.parse_lalr(text)

    def parse_lalr(self, text: str) -> ParsedLine:
        try:
            return self._parse(text, start="line")  # type: ignore[no-any-return]
        except LarkError:
            return self._parse(text, start="unparsed_line")  # type: ignore[no-any-return]


def _cached_firsts(lark: Lark, strict: bool) -> dict[str, frozenset[str] | None]:
    """The first-character table, from the per-user cache when it matches this grammar."""
    import pickle

    cache = _cache_path(grammar_text(), strict)
    path = f"{cache}.firsts" if cache else None
    if path and os.path.exists(path):
        try:
            with open(path, "rb") as fh:
                table = pickle.load(fh)
            if isinstance(table, dict) and set(table) == {t.name for t in lark.terminals}:
                return table
        except (OSError, pickle.PickleError, EOFError, AttributeError):
            pass
    table = first_char_table(lark)
    if path:
        try:
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                pickle.dump(table, fh)
            os.replace(tmp, path)
        except OSError:
            pass
    return table


_PARSERS: dict[tuple[bool, bool], LineParser] = {}


def get_parser(*, strict: bool = False, fast: bool = True) -> LineParser:
    """The process-wide parser (building it costs ~0.1–0.5 s, so do it once)."""
    key = (strict, fast)
    parser = _PARSERS.get(key)
    if parser is None:
        from logparse.transform import LineTransformer

        parser = _PARSERS[key] = LineParser(LineTransformer(), strict=strict, fast=fast)
    return parser
