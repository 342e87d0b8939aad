"""The fast path: flat grammar alternatives compiled into regexes, dispatched like lark's lexer.

Every *flat* alternative (terminals only) of the `prefix` and `message` rules becomes one regex made
of lark's own terminal patterns, each in an atomic group (lark's lexer never backtracks into a
token). A line is dispatched the way lark's contextual lexer would: the first terminal is found by
trying the acceptable terminals in lark's own order, then only the alternatives that start with that
terminal are tried, and the captured tokens go to the same Transformer callbacks. Frequent
(prefix, alternative) combinations become one-regex shapes; stats lines get fused shapes.
`tests/test_fast_path.py` proves the fast path and LALR give identical events."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logparse.grammar.cache import FASTPATH_FORMAT
from logparse.grammar.patterns import _first_chars, _lexer_order, _literal_prefix, required_literal
from logparse.model import numbers
from logparse.model.events import NO_FIELDS

if TYPE_CHECKING:
    from lark import Lark


class FastToken(str):
    """A token of the fast path: its text, and `.type` (the terminal name) like lark's Token.
    lark itself is imported only when a line needs the LALR parser (start-up matters: a short
    log should not pay for loading the whole grammar)."""

    __slots__ = ("type",)
    type: str

    def __new__(cls, type_: str, value: str) -> FastToken:  # noqa: PYI034 — FastToken is final
        tok = str.__new__(cls, value)
        tok.type = type_
        return tok


_token = FastToken

# A parsed line: (envelope, event class, field values); see logparse.grammar.transform.
ParsedLine = tuple[Any, type, dict[str, Any]]

# What `FastPath.parse_hot` returns for a line it appended to the stage's columns itself.
HOT: Any = ("hot",)
# Serial numbers of learned shapes: a stage's appenders are keyed by them (`HotRows.adders`).
_SERIALS = itertools.count(1)


@dataclass(slots=True)
class _Alternative:
    """One flat rule alternative as a regex, compiled when a line first reaches it (alternatives
    are tried in order: a short log never compiles those after the ones its lines match)."""

    regex: re.Pattern[str] | None
    kept: tuple[tuple[str, str], ...]  # (regex group name, terminal name) of the tokens passed on
    callback: Callable[[list[Any]], Any]
    name: str
    plain: bool = False  # the callback reads token texts only: pass str, not FastToken
    src: str = ""
    # A literal every match contains (patterns.required_literal): a line without it is ruled out
    # before the regex is compiled or run.
    needle: str = ""

    def fullmatch(self, text: str, pos: int) -> re.Match[str] | None:
        if self.needle and text.find(self.needle, pos) < 0:
            return None
        regex = self.regex
        if regex is None:
            regex = self.regex = re.compile(self.src)
        return regex.fullmatch(text, pos)


# Compiled terminal patterns, shared by all dispatchers (a terminal is compiled at most once).
_PATTERNS: dict[str, re.Pattern[str]] = {}
# After this many lines starting with the same character, that character's candidates are
# compiled into one alternation: long logs get one C-level match per line, short logs compile
# only the terminals they meet. The alternation of '[' (every prefix) takes ~15 ms to compile and
# saves ~1 µs a line: a 1,000-line log should not pay for it.
_PROMOTE_AFTER = 1024


class _Dispatcher:
    """Finds the first terminal at a position the way lark's lexer does: among the acceptable
    terminals, the first in lark's order that matches (exactly what lark's own alternation of
    named groups returns). Candidates are split by first character and ruled out by their literal
    prefix; regexes are compiled lazily, so a short log compiles only the terminals it meets."""

    def __init__(self, ordered: list[tuple[str, str]], firsts: dict[str, frozenset[str] | None],
                 lits: dict[str, str], needles: dict[str, str] | None = None) -> None:
        self._ordered = ordered  # (terminal name, regexp) in lark's lexer order
        self._firsts = {name: firsts.get(name) for name, _ in ordered}
        self._chars = set().union(*(f for f in self._firsts.values() if f is not None))
        self._lits = {name: lits.get(name, "") for name, _ in ordered}
        # A literal every match of the terminal contains, beyond its prefix: absent from the rest
        # of the line, the terminal cannot match there (no compile, no match).
        self._needles = {name: (needles or {}).get(name, "") for name, _ in ordered}
        self._cands: dict[str, list[tuple[str, str, str, str]]] = {}
        self._hits: dict[str, int] = {}
        self._alt: dict[str, re.Pattern[str] | None] = {}

    def _candidates(self, char: str) -> list[tuple[str, str, str, str]]:
        if not char or char >= "\x80":
            # First-character sets describe ASCII only: anything else meets every terminal.
            chosen = self._ordered
        elif char in self._chars:
            chosen = [t for t in self._ordered if self._firsts[t[0]] is None or char in self._firsts[t[0]]]  # type: ignore[operator]
        else:
            chosen = [t for t in self._ordered if self._firsts[t[0]] is None]
        cands = [(name, regexp, self._lits[name], self._needles[name]) for name, regexp in chosen]
        self._cands[char] = cands
        return cands

    def earlier(self, char: str, name: str, only: frozenset[str] | None = None) -> list[str]:
        """Regexps of the candidates for `char` that lark tries before terminal `name` (those in
        `only` when given)."""
        cands = self._cands.get(char) or self._candidates(char)
        out: list[str] = []
        for n, regexp, _, _ in cands:
            if n == name:
                return out
            if only is None or n in only:
                out.append(regexp)
        return out

    def match(self, text: str, pos: int) -> tuple[str, str, int] | None:
        """(terminal name, matched text, end) of the token lark would lex at `pos`, or None."""
        char = text[pos : pos + 1]
        if not char:
            # At the end of the text no terminal matches: lark's lexer rejects zero-width
            # terminals. Without this a blank line tried every terminal of the grammar (~0.5 ms)
            # and, after 1,024 of them, compiled their alternation (all terminals at once).
            return None
        alt = self._alt.get(char)
        if alt is not None:
            m = alt.match(text, pos)
            return None if m is None else (m.lastgroup, m.group(), m.end())  # type: ignore[return-value]
        cands = self._cands.get(char)
        if cands is None:
            cands = self._candidates(char)
        hits = self._hits[char] = self._hits.get(char, 0) + 1
        if hits > _PROMOTE_AFTER and cands:
            self._alt[char] = re.compile("|".join(f"(?P<{name}>{regexp})" for name, regexp, _, _ in cands))
            return self.match(text, pos)
        for name, regexp, lit, needle in cands:
            if lit and not text.startswith(lit, pos):
                continue
            if needle and text.find(needle, pos) < 0:
                continue
            pattern = _PATTERNS.get(regexp)
            if pattern is None:
                pattern = _PATTERNS[regexp] = re.compile(regexp)
            m = pattern.match(text, pos)
            if m is not None:
                return name, m.group(), m.end()
        return None


def _s(value: Any) -> str:
    """A str from cached JSON, or TypeError (a damaged or foreign cache is rejected whole)."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _pairs(value: Any) -> list[tuple[str, str]]:
    return [(_s(a), _s(b)) for a, b in value]


@dataclass
class FastPathData:
    """What the fast path needs from the grammar, as plain (picklable) data: extracted from lark
    once and cached per grammar, so that a run whose lines all take the fast path never imports
    lark at all."""

    prefix: dict[str, str]  # prefix terminal → callback name
    start: list[tuple[str, str]]  # terminals acceptable at the start of a line, lark's order
    after_prefix: list[tuple[str, str]]  # terminals acceptable after a prefix, lark's order
    firsts: dict[str, frozenset[str] | None]
    literal_prefixes: dict[str, str]
    # first terminal → flat alternatives: (regex source, kept (group, terminal), callback name)
    alternatives: dict[str, list[tuple[str, tuple[tuple[str, str], ...], str]]]
    # every terminal's regexp (the fused stats shapes need the body terminal's)
    terminal_patterns: dict[str, str] | None = None
    # First terminals of `message` that also start a rule the fast path does not compile (not
    # flat). A line whose first message terminal is not among them and that no flat alternative
    # matches fails `line` in LALR too: the fast path decides it as `unparsed_line` at once.
    open_firsts: frozenset[str] = frozenset()
    # First terminal of an alternative, with a literal prefix L → the terminals that could match at
    # a position where the text starts with L (`_compatible`). A shape's negative lookahead needs
    # only these: the others cannot be what lark's lexer picks there. None: keep every one.
    compatible: dict[str, frozenset[str]] | None = None
    # Terminal → a literal every match contains (`patterns.required_literal`; '' when none), and
    # per first terminal the same for each of its alternatives (in `alternatives`' order).
    needles: dict[str, str] | None = None
    alternative_needles: dict[str, list[str]] | None = None

    def to_json(self) -> str:
        """The data as JSON (sets as sorted lists): a cache format that cannot run code."""
        import json

        firsts = {k: (sorted(v) if v is not None else None) for k, v in self.firsts.items()}
        alternatives = {k: [[src, [list(p) for p in kept], cb] for src, kept, cb in alts]
                        for k, alts in self.alternatives.items()}
        return json.dumps({"format": FASTPATH_FORMAT, "prefix": self.prefix, "start": self.start,
                           "after_prefix": self.after_prefix, "firsts": firsts,
                           "literal_prefixes": self.literal_prefixes, "alternatives": alternatives,
                           "terminal_patterns": self.terminal_patterns,
                           "open_firsts": sorted(self.open_firsts),
                           "compatible": {k: sorted(v) for k, v in self.compatible.items()}
                           if self.compatible is not None else None,
                           "needles": self.needles, "alternative_needles": self.alternative_needles})

    @classmethod
    def from_json(cls, text: str) -> FastPathData | None:
        """The data from `to_json`, or None for anything else (another format, damage, tampering)."""
        import json

        try:
            doc = json.loads(text)
            if not isinstance(doc, dict) or doc.get("format") != FASTPATH_FORMAT:
                return None
            tp = doc["terminal_patterns"]
            return cls(
                prefix={_s(k): _s(v) for k, v in doc["prefix"].items()},
                start=_pairs(doc["start"]),
                after_prefix=_pairs(doc["after_prefix"]),
                firsts={_s(k): (frozenset(_s(c) for c in v) if v is not None else None)
                        for k, v in doc["firsts"].items()},
                literal_prefixes={_s(k): _s(v) for k, v in doc["literal_prefixes"].items()},
                alternatives={_s(k): [(_s(src), tuple(_pairs(kept)), _s(cb)) for src, kept, cb in alts]
                              for k, alts in doc["alternatives"].items()},
                terminal_patterns={_s(k): _s(v) for k, v in tp.items()} if tp is not None else None,
                open_firsts=frozenset(_s(n) for n in doc["open_firsts"]),
                compatible={_s(k): frozenset(_s(n) for n in v) for k, v in doc["compatible"].items()}
                if doc.get("compatible") is not None else None,
                needles={_s(k): _s(v) for k, v in doc["needles"].items()} if doc.get("needles") is not None else None,
                alternative_needles={_s(k): [_s(n) for n in v] for k, v in doc["alternative_needles"].items()}
                if doc.get("alternative_needles") is not None else None,
            )
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None

    @classmethod
    def from_lark(cls, lark: Lark) -> FastPathData:
        terminals = {t.name: t for t in lark.terminals}
        rules_by_origin: dict[str, list[Any]] = defaultdict(list)
        for rule in lark.rules:
            rules_by_origin[rule.origin.name].append(rule)
        first = _first_sets(rules_by_origin)
        prefix = {}
        for rule in rules_by_origin["prefix"]:
            (sym,) = rule.expansion
            prefix[str(sym.name)] = str(rule.alias or rule.origin.name)
        msg_first = first["message"]

        def ordered(names: set[str]) -> list[tuple[str, str]]:
            return [(str(t.name), str(t.pattern.to_regexp())) for t in sorted((terminals[n] for n in names), key=_lexer_order)]

        alternatives: dict[str, list[tuple[str, tuple[tuple[str, str], ...], str]]] = defaultdict(list)
        for rule in _flat_rules(rules_by_origin, "message"):
            alternatives[str(rule.expansion[0].name)].append(_alternative_source(rule, terminals))
        lits = {str(t.name): _literal_prefix(t.pattern.to_regexp()) for t in lark.terminals}
        patterns = {str(t.name): str(t.pattern.to_regexp()) for t in lark.terminals}
        after_prefix = ordered(msg_first)
        needles = {name: _needle(regexp, lits.get(name, "")) for name, regexp in patterns.items()}
        alt_needles = {k: [required_literal(src) for src, _, _ in alts] for k, alts in alternatives.items()}
        return cls(prefix, ordered(set(prefix) | msg_first), after_prefix, first_char_table(lark), lits,
                   dict(alternatives), patterns, frozenset(_open_firsts(rules_by_origin, "message", first)),
                   _compatible(set(alternatives), after_prefix + ordered(set(prefix) | msg_first), lits),
                   needles, alt_needles)


def _needle(regexp: str, prefix: str) -> str:
    """A terminal's required literal, unless the literal prefix (tested first) already is it."""
    needle = required_literal(regexp)
    return "" if not needle or needle in prefix else needle


# Constructs that partial matching might judge at the end of a literal prefix differently from the
# longer text a real line has: a terminal holding one is always kept in a shape's lookahead.
_CONTEXT_SENSITIVE = ("(?=", "(?!", "(?<", "\\b", "\\B", "$", "\\Z", "\\A", "\\G")


def _compatible(firsts: set[str], terminals: list[tuple[str, str]], lits: dict[str, str]) -> dict[str, frozenset[str]]:
    """For every first terminal H of an alternative with a literal prefix L (every match of H starts
    with L): the terminals T that could match at a position where the text starts with L. T cannot
    when the `regex` package's partial matching says that no match of T is a prefix of L and L is
    the prefix of no match of T (`regex.match(T, L, partial=True)` is None); then T never matches
    where H does, and a shape's lookahead `(?!T)` there is always true. Computed once per grammar
    (with the cache), so `regex` is not imported at run time."""
    import regex

    out: dict[str, frozenset[str]] = {}
    for first in sorted(firsts):
        lit = lits.get(first, "")
        if not lit:
            continue
        keep: set[str] = set()
        for name, regexp in terminals:
            if name == first or name in keep:
                continue
            if any(c in regexp for c in _CONTEXT_SENSITIVE):
                keep.add(name)
                continue
            try:
                if regex.match(regexp, lit, partial=True) is not None:
                    keep.add(name)
            except (regex.error, re.error, RecursionError, OverflowError):
                keep.add(name)
        out[first] = frozenset(keep)
    return out


def _alternative_source(rule: Any, terminals: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...], str]:
    """One flat rule as a regex: lark's terminal patterns in atomic groups (lark's lexer never
    backtracks into a token); the kept tokens are named groups."""
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
            kept.append((group, str(sym.name)))
        else:
            parts.append(f"(?>{pattern})")
    # Plain str everywhere: lark's names can be lark Tokens, which would make the cached data
    # import lark when unpickled.
    return "".join(parts), tuple(kept), str(rule.alias or rule.origin.name)


# In `open_firsts`: an empty rule under `message` (no terminal name is empty).
ALL_OPEN = ""

# A (prefix, alternative) combination seen this many times gets its own one-regex shape. A shape
# takes 3–10 ms to compile (negative lookaheads for every earlier terminal) and saves a few µs a
# line, so it pays back only after ~1,000 lines: at 16, a 1,000-line log compiled nine shapes
# for start-up lines that never came back.
_SHAPE_AFTER = 128
# Shapes are kept per first character of the line (every shape starts with `(?=c)`, so it can match
# only lines starting with c): a line tries only its character's shapes, and a log with many
# frequent kinds (traceback frames, source and caret lines, NCCL INFO, warnings beside the stats
# and access lines) keeps them all without slowing the hot lines. Up to this many per character,
# and _MAX_SHAPES_TOTAL in all (each costs a compile; an evicted shape is compiled again).
_MAX_SHAPES = 6
_MAX_SHAPES_TOTAL = 24
# Parsed non-hot lines remembered by text: traceback frames, source and caret lines repeat on every
# rank and in every traceback, warnings and NCCL lines on every request or rank. A parse is a pure
# function of the text (the transformer callbacks keep no state), so a repeated text gets the same
# (envelope, class, fields); only results whose field values are immutable are shared. Bounded: a
# log of distinct lines fills it and starts over.
_MEMO_SIZE = 8192
# (and a known message's shared empty fields, which refuse changes: `model.events.NO_FIELDS`)
_IMMUTABLE = frozenset({str, int, float, bool, type(None), FastToken, type(NO_FIELDS)})


# The stats body terminal (grammars/runtime.lark STATS_BODY) for which `_tight_signature` is proved.
PROVED_STATS_BODY = r"#?[A-Za-z][^:,]*: [^,]*(?:, #?[A-Za-z][^:,]*: [^,]*)*(?:, [^,:]*:?)?,? ?"
_BODY_KEY = re.compile(r"#?[A-Za-z][^:,]*")


def _tight_signature(keys: list[str], body_src: str) -> str | None:
    """A signature regex that needs no body lookahead in a fused shape, or None.

    The fused shape proves lark's body token with `(?=(?>BODY)\\Z)` before the signature
    `k1: ([^,]*), …, kn: ([^,]*?)[, ]*` captures the values; the lookahead costs as much as the
    capture. This regex matches a subset of those bodies, with the same captures, on which the
    lookahead is always true, so it can go: the last value is empty or ends in neither ',' nor
    ' ' and only '', ', ', ',' or ' ' follows it (then the lazy value of the signature is the
    same text: a shorter one would leave a character outside [, ]). For STATS_BODY (proved for
    this text only) and keys matching its key pattern `#?[A-Za-z][^:,]*` (no ':' or ','), the
    all-greedy path of BODY — which is its first match, what the atomic group keeps — reads
    each key up to its ':', each value up to the next ',' and the tail through its optional
    parts, ending at the end of the line. A body outside the subset (',,' after the last value,
    a value ending in blanks) misses this shape and takes the plain shape: still exact."""
    if body_src != PROVED_STATS_BODY or not keys or not all(_BODY_KEY.fullmatch(k) for k in keys):
        return None
    parts = [f"{re.escape(k)}: ([^,]*)" for k in keys[:-1]] + [f"{re.escape(keys[-1])}: ((?:[^,]*[^, ])?)(?:, |,| )?"]
    return "(?:" + ", ".join(parts) + ")"


@dataclass(slots=True)
class _Shape:
    regex: re.Pattern[str]
    prefix: str | None
    alt: _Alternative
    hits: int = 0
    parts: str = ""  # the regex source before the alternative (line start, prefix, lookaheads)
    counts: dict[int, int] | None = None  # stats signatures seen on this shape (id → count)
    # An access line's shape whose callback is the transformer's own `http_access`: `parse_hot`
    # appends its rows straight to the access columns (the group of the ACCESS token).
    access_group: str | None = None
    serial: int = 0
    char: str = ""  # the first character of every line it can match


@dataclass(slots=True)
class _StatsShape:
    """A shape of a stats line fused with the stats body's key signature: one regex proves the
    grammar's tokens (the body token as a lookahead) and captures every field value, and the
    signature's generated builder turns them into fields — the body is scanned once."""

    regex: re.Pattern[str]
    prefix: str | None
    offset: int  # index in m.groups() of the first signature value
    build: Callable[[tuple[str, ...]], dict[str, Any]]
    fields: Callable[[str, dict[str, Any]], tuple[type, dict[str, Any]]]
    hits: int = 0
    cls: type = object  # DecodeBatch or PrefillBatch
    plan: tuple[tuple[str, str], ...] = ()  # the signature's `_Signature.plan`
    serial: int = 0
    char: str = ""  # the first character of every line it can match


class FastPath:
    """Regexes for the flat alternatives of `prefix` and `message`, dispatched like lark's lexer."""

    def __init__(self, data: FastPathData, transformer: Any) -> None:
        self.data = data
        self._transformer = transformer
        self._line = transformer.line
        # The shapes return `line`'s result themselves when `line` is the plain one (it only
        # unpacks its children): one call and one list less per hot line.
        from logparse.grammar.transform.envelope import EnvelopeCallbacks

        self._line_is_plain = getattr(type(transformer), "line", None) is EnvelopeCallbacks.line
        unparsed = transformer.unparsed_line
        # unparsed_line's children: the envelope (when a prefix was read), then TEXT (when non-empty).
        self._unparsed = lambda env, rest: unparsed(
            [c for c in (env, _token("TEXT", rest) if rest else None) if c is not None])
        # The prefix callbacks read their token's text only (transform/envelope.py): plain str.
        self._prefix = {name: getattr(transformer, cb) for name, cb in data.prefix.items()}
        self._start = _Dispatcher(data.start, data.firsts, data.literal_prefixes, data.needles)
        self._after_prefix = _Dispatcher(data.after_prefix, data.firsts, data.literal_prefixes, data.needles)
        self._alts: dict[str, list[_Alternative]] = {}
        # Callbacks that read only the token texts get plain strings (no token object per token).
        self._plain: frozenset[str] = frozenset(getattr(transformer, "PLAIN_TOKEN_CALLBACKS", ()))
        self.alternatives = sum(len(v) for v in data.alternatives.values())
        self._env_cache: dict[str, Any] = {}
        self._prefix_regexp = {name: regexp for name, regexp in data.start if name in data.prefix}
        self._shapes: list[_Shape] = []
        self._stats_shapes: list[_StatsShape] = []
        # The same shapes by first character, most used first (`_index_shapes`).
        self._shapes_at: dict[str, list[_Shape]] = {}
        self._stats_at: dict[str, list[_StatsShape]] = {}
        self._memo: dict[str, ParsedLine] = {}
        self._mark = 0  # the damage counter when the line being parsed started (`_remember`)
        self._stats_callbacks: dict[str, Any] = dict(getattr(transformer, "STATS_CALLBACKS", {}))
        # Stats and access lines are not remembered: their texts do not repeat (times, values),
        # and their shapes must still be learned from them.
        self._unshared = frozenset(self._stats_callbacks) | {"http_access"}
        # `parse_hot` splits access lines itself only when `http_access` is the runtime's own.
        from logparse.grammar.transform.runtime import RuntimeCallbacks, access_fields

        self._access_split = access_fields if getattr(type(transformer), "http_access", None) is \
            RuntimeCallbacks.http_access else None
        self._seen: dict[tuple[str, str | None, str, int], int] = {}
        self._parsed = 0
        self._any_prefix: re.Pattern[str] | None = None

    def _learn(self, char0: str, prefix: str | None, char_msg: str, first: str, alt: _Alternative) -> None:
        """Count a (line start, prefix, message start, alternative) combination; a frequent one
        becomes a shape: ONE regex that proves, exactly as lark's lexer would decide, that the
        prefix and then the alternative's first terminal are the tokens lark picks (no earlier
        candidate matches: negative lookaheads), and matches the whole alternative."""
        key = (char0, prefix, char_msg, id(alt))
        n = self._seen[key] = self._seen.get(key, 0) + 1
        if n % _SHAPE_AFTER:
            return
        # Full: a combination that keeps coming back replaces the least used shape (startup
        # lines repeated on every rank must not keep the serving lines out for good).
        if not _make_room(self._shapes, char0, n):
            return
        compatible = self.data.compatible
        only = compatible.get(first) if compatible is not None else None
        parts = [f"(?={re.escape(char0)})"]
        if prefix is not None:
            earlier = self._start.earlier(char0, prefix)
            if earlier:
                parts.append(f"(?!{'|'.join(earlier)})")
            # Atomic, like lark's lexer (and `_parse`): the prefix token is its first match; the
            # message is never tried after a shorter or longer prefix.
            parts.append(f"(?>(?P<pfx>{self._prefix_regexp[prefix]}))(?={re.escape(char_msg)})")
            earlier = self._after_prefix.earlier(char_msg, first, only)
        else:
            earlier = self._start.earlier(char0, first, only)
        if earlier:
            parts.append(f"(?!{'|'.join(earlier)})")
        head = "".join(parts)
        parts.append(alt.src)
        # A new shape starts with the count that earned it, or the next hot combination would
        # evict it at once as "least used".
        access = alt.kept[-1][0] if alt.name == "http_access" and self._access_split is not None else None
        self._shapes.append(_Shape(re.compile("".join(parts)), prefix, alt, hits=n, parts=head,
                                   access_group=access, serial=next(_SERIALS), char=char0))
        self._index_shapes()

    def compile_all(self) -> None:
        """Compile every alternative now (tests use it to check that all of them compile)."""
        for name in self.data.alternatives:
            for alt in self._alternatives(name):
                alt.regex = alt.regex or re.compile(alt.src)

    def _alternatives(self, name: str) -> list[_Alternative]:
        alts = self._alts.get(name)
        if alts is None:
            needles = (self.data.alternative_needles or {}).get(name) or []
            alts = self._alts[name] = [
                _Alternative(None, kept, getattr(self._transformer, cb), cb, cb in self._plain, src,
                             needles[i] if i < len(needles) else "")
                for i, (src, kept, cb) in enumerate(self.data.alternatives.get(name, ()))
            ]
        return alts

    def parse(self, text: str) -> Any:
        """The transformed `line`, or None when the fast path cannot decide (use LALR then)."""
        self._parsed += 1
        if not self._parsed & 2047:
            self._decay()
        char = text[:1]
        for fused in self._stats_at.get(char, ()):
            m = fused.regex.fullmatch(text)
            if m is not None:
                return self._from_stats_shape(fused, m)
        for shape in self._shapes_at.get(char, ()):
            m = shape.regex.fullmatch(text)
            if m is not None:
                return self._shaped(shape, m, text)
        known = self._memo.get(text)
        return known if known is not None else self._parse(text)

    def parse_hot(self, text: str, no: int, wrapper: Any, rows: Any) -> Any:
        """`parse`, except that a line matched by a fused stats shape or an access shape goes
        straight into the stage's columns (`rows`: `parsing.columns.HotRows`) and HOT is returned:
        no fields dict, no event tuple. The rows equal those of `parse` + `StatsColumns.add`."""
        self._parsed += 1
        if not self._parsed & 2047:
            self._decay()
        char = text[:1]
        for fused in self._stats_at.get(char, ()):
            m = fused.regex.fullmatch(text)
            if m is not None:
                fused.hits += 1
                add = rows.adders.get(fused.serial)
                if add is None:
                    index = {name: i - 1 for name, i in fused.regex.groupindex.items()}
                    add = rows.stats_adder(fused.serial, fused.cls, fused.plan, fused.fields, index,
                                           fused.offset, fused.prefix, self.envelope)
                add(no, wrapper, m.groups())
                return HOT
        for shape in self._shapes_at.get(char, ()):
            m = shape.regex.fullmatch(text)
            if m is not None:
                if shape.access_group is None:
                    return self._shaped(shape, m, text)
                shape.hits += 1
                add = rows.adders.get(shape.serial)
                if add is None:
                    index = {name: i - 1 for name, i in shape.regex.groupindex.items()}
                    add = rows.access_adder(shape.serial, index, shape.access_group, shape.prefix,
                                            self.envelope, self._access_split)
                add(no, wrapper, m.groups())
                return HOT
        # The memo is asked only here and for non-hot shapes: a hot line's text is never hashed.
        known = self._memo.get(text)
        return known if known is not None else self._parse(text)

    def _shaped(self, shape: _Shape, m: re.Match[str], text: str) -> Any:
        """A line matched by a (non-hot) shape: its remembered result, else the shape's."""
        if shape.alt.name in self._unshared:
            return self._from_shape(shape, m)
        known = self._memo.get(text)
        if known is not None:
            return known
        self._mark = numbers.damaged()
        return self._remember(text, self._from_shape(shape, m))

    def envelope(self, prefix: str, value: str) -> Any:
        """The Envelope of a prefix token (cached: a pure function of the text)."""
        env = self._env_cache.get(value)
        return env if env is not None else self._new_envelope(prefix, value)

    def _new_envelope(self, prefix: str, value: str) -> Any:
        """A prefix's Envelope, kept for its text unless reading it counted damage (a 5,000-digit
        rank tag): a cache hit skips the conversion, and each occurrence of a damaged field must
        be counted (`model/numbers.py`), in this run and in the next one of the same process."""
        before = numbers.damaged()
        env = self._prefix[prefix]([value])
        if numbers.damaged() == before:
            if len(self._env_cache) > 50_000:
                self._env_cache.clear()
            self._env_cache[value] = env
        return env

    def _decay(self) -> None:
        """Every 2048 lines: halve all usage counts, so that shapes reflect what the log prints
        now (a startup line repeated on every rank must not hold a slot while serving lines
        wait), and try the most used shapes first."""
        for s in self._shapes:
            s.hits >>= 1
            if s.counts:
                s.counts = {k: v >> 1 for k, v in s.counts.items() if v > 1}
        for f in self._stats_shapes:
            f.hits >>= 1
        self._seen = {k: v >> 1 for k, v in self._seen.items() if v > 1}
        self._shapes.sort(key=lambda s: -s.hits)
        self._stats_shapes.sort(key=lambda s: -s.hits)
        self._index_shapes()

    def _index_shapes(self) -> None:
        """The shapes by first character, in the order of the lists (most used first)."""
        shapes: dict[str, list[_Shape]] = {}
        for shape in self._shapes:
            shapes.setdefault(shape.char, []).append(shape)
        stats: dict[str, list[_StatsShape]] = {}
        for fused in self._stats_shapes:
            stats.setdefault(fused.char, []).append(fused)
        self._shapes_at, self._stats_at = shapes, stats

    def _remember(self, text: str, out: Any) -> Any:
        """Keep a parsed line's result for its text (`_MEMO_SIZE`), when it can be shared and
        reading it counted no damage since `_mark` (a hit skips the conversions: a damaged field
        repeated, or read again by the next run of this process, must be counted each time)."""
        if numbers.damaged() != self._mark:
            return out
        if type(out) is tuple and len(out) == 3 and type(out[2]) is dict:
            immutable = _IMMUTABLE
            for value in out[2].values():
                if type(value) not in immutable:
                    return out
            memo = self._memo
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[text] = out
        return out

    def _from_shape(self, shape: _Shape, m: re.Match[str]) -> Any:
        shape.hits += 1
        env = None
        if shape.prefix is not None:
            value = m.group("pfx")
            env = self._env_cache.get(value)
            if env is None:
                env = self._new_envelope(shape.prefix, value)
        alt = shape.alt
        if alt.plain:
            tokens = [m.group(g) for g, _ in alt.kept]
            partial = alt.callback(tokens)
            if alt.name in self._stats_callbacks:
                self._learn_stats(shape, tokens)
        else:
            partial = alt.callback([_token(t, m.group(g)) for g, t in alt.kept])
        if self._line_is_plain:
            return env, partial[0], partial[1]
        return self._line([env, partial] if env is not None else [partial])

    def _learn_stats(self, shape: _Shape, tokens: list[str]) -> None:
        """Count the stats signature of this line on its shape; a frequent one gets a fused shape."""
        from logparse.grammar.transform.runtime import stats_signature

        known, fields, cls = self._stats_callbacks[shape.alt.name]
        head_src, body_src = self._head_and_body(shape.alt)
        if head_src is None:
            return
        sig = stats_signature(tokens[-1], known)
        if sig is None:
            return
        counts = shape.counts = shape.counts or {}
        n = counts[id(sig)] = counts.get(id(sig), 0) + 1
        if n % _SHAPE_AFTER:
            return
        if not _make_room(self._stats_shapes, shape.char, n):
            return
        tight = _tight_signature(sig.keys, body_src)
        if tight is not None:
            source = f"{shape.parts}(?>(?P<k0>{head_src})){tight}"
        else:
            source = (f"{shape.parts}(?>(?P<k0>{head_src}))(?=(?>{body_src})\\Z)(?:{sig.regex.pattern})")
        regex = re.compile(source)
        self._stats_shapes.append(
            _StatsShape(regex, shape.prefix, regex.groups - sig.regex.groups, sig.build, fields, hits=n,
                        cls=cls, plan=sig.plan, serial=next(_SERIALS), char=shape.char))
        self._index_shapes()

    def _head_and_body(self, alt: _Alternative) -> tuple[str | None, str]:
        """The head and body terminal patterns of a two-token stats alternative."""
        if len(alt.kept) != 2:
            return None, ""
        regexps = dict(self.data.start) | dict(self.data.after_prefix)
        head = regexps.get(alt.kept[0][1])
        body = self.data.terminal_patterns.get(alt.kept[1][1]) if self.data.terminal_patterns else None
        return (head, body) if head is not None and body is not None else (None, "")

    def _from_stats_shape(self, fused: _StatsShape, m: re.Match[str]) -> Any:
        fused.hits += 1
        env = None
        if fused.prefix is not None:
            value = m.group("pfx")
            env = self._env_cache.get(value)
            if env is None:
                env = self._new_envelope(fused.prefix, value)
        cls, kw = fused.fields(m.group("k0"), fused.build(m.groups()[fused.offset :]))
        if self._line_is_plain:
            return env, cls, kw  # what `line` returns, without building its children list
        return self._line([env, (cls, kw)] if env is not None else [(cls, kw)])

    def _parse(self, text: str) -> Any:
        self._mark = numbers.damaged()  # `_remember` keeps only results that counted no damage
        hit = self._start.match(text, 0)
        if hit is None:
            # No terminal lark's lexer could start the line with: `line` fails to lex at 0 and
            # `unparsed_line` takes the whole line as TEXT. Decide it here; LALR would do the same.
            return self._remember(text, self._unparsed(None, text))
        name, value, pos = hit
        env = None
        prefix = None
        if name in self._prefix:
            prefix = name
            # Envelope callbacks are pure functions of the prefix text, which repeats a lot (same
            # second, same rank): cache them. A cleared cache costs only speed.
            env = self._env_cache.get(value)
            if env is None:
                env = self._new_envelope(name, value)
            hit = self._after_prefix.match(text, pos)
            if hit is None:
                # No message can start here: the lexer of `line` fails right after the prefix.
                return self._remember(text, self._unparsed(env, text[pos:]))
            name = hit[0]
        else:
            pos = 0
        alts = self._alts.get(name)
        if alts is None:
            alts = self._alternatives(name)
        for alt in alts:
            mm = alt.fullmatch(text, pos)
            if mm is not None:
                if alt.plain:
                    partial = alt.callback([mm.group(g) for g, _ in alt.kept])
                else:
                    partial = alt.callback([_token(t, mm.group(g)) for g, t in alt.kept])
                self._learn(text[:1], prefix, text[pos : pos + 1], name, alt)
                out = self._line([env, partial] if env is not None else [partial])
                return out if alt.name in self._unshared else self._remember(text, out)
        if name in self.data.open_firsts or ALL_OPEN in self.data.open_firsts:
            return None  # a rule the fast path does not compile may still take it: LALR decides
        # Only flat rules start with this terminal and none matches: `line` fails in LALR too, and
        # `unparsed_line` keeps the prefix (its start state has the same prefix terminals, TEXT
        # last). Without a prefix, lark's `line` lexed a message terminal at 0, but `unparsed_line`
        # would lex a prefix there if one matches: leave that rare case to LALR.
        if prefix is None and self._prefix_at_start(text):
            return None
        return self._remember(text, self._unparsed(env, text[pos:]))

    def _prefix_at_start(self, text: str) -> bool:
        """Does any prefix terminal match at the start of the line?"""
        regex = self._any_prefix
        if regex is None:
            regex = self._any_prefix = re.compile("|".join(f"(?:{r})" for r in self._prefix_regexp.values()))
        return regex.match(text) is not None


def _make_room(shapes: list[Any], char: str, n: int) -> bool:
    """Make room for a new shape of first character `char` earned by `n` lines: when its character
    (or the whole list) is full, the least used shape there goes, unless it is used at least as
    much as the newcomer (then False: no room)."""
    same = [s for s in shapes if s.char == char]
    pool = same if len(same) >= _MAX_SHAPES else shapes if len(shapes) >= _MAX_SHAPES_TOTAL else None
    if pool is None:
        return True
    weakest = min(pool, key=lambda s: s.hits)
    if weakest.hits >= n:
        return False
    shapes.remove(weakest)
    return True


def first_char_table(lark: Lark) -> dict[str, frozenset[str] | None]:
    """First characters of every terminal (regex analysis; cached on disk with the grammar)."""
    return {str(t.name): _first_chars(t.pattern.to_regexp()) for t in lark.terminals}


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


def _open_firsts(rules_by_origin: dict[str, list[Any]], origin: str, first: dict[str, set[str]]) -> set[str]:
    """FIRST terminals of the rules reachable from `origin` that `_flat_rules` does not compile:
    only after one of these can LALR succeed where every flat alternative failed. An empty rule
    (a message of no tokens) would let any line succeed: it is marked by ALL_OPEN."""
    out: set[str] = set()
    for rule in rules_by_origin[origin]:
        exp = rule.expansion
        if not exp:
            out.add(ALL_OPEN)
        elif all(s.is_term for s in exp):
            continue
        if len(exp) == 1 and (rule.options.expand1 or exp[0].name.startswith("_")):
            out |= _open_firsts(rules_by_origin, exp[0].name, first)
        else:
            out |= {str(exp[0].name)} if exp[0].is_term else {str(n) for n in first[exp[0].name]}
    return out


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
