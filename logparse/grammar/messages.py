"""The message catalog: SGLang (and torch/NCCL/CUDA) message families inside free text, with typed captures.

The lark grammar specifies line *shapes*. Many diagnoses hinge on a message that appears inside free
text the grammar keeps whole — an exception message, a hard-wrapped warning, a line from another
logger. Those families are specified here, as data, in `grammars/messages/*.toml` (one file per
family), so that the rules hold no second parser: a rule asks for a message *code* and reads typed
*fields*; it never matches log text itself.

An entry (see grammars/messages/README.md for the full format):

    [[message]]
    code = "cuda-oom"                       # kebab-case, unique over the catalog
    summary = "torch's CUDA caching allocator could not allocate"
    source = "c10/cuda/CUDACachingAllocator.cpp; all torch releases SGLang supports"
    needles = ["out of memory"]             # case-insensitive literals; every match contains one
    patterns = ['CUDA out of memory\\. Tried to allocate (?P<tried>[\\d.]+) (?P<tried_unit>[KMG]iB)']
    ignore_case = false
    fields = { tried = "float", tried_unit = "str" }
    samples = ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 ..."]

`needles` make the catalog cheap: a substring test per needle on the lowered text selects the few
entries worth trying (`tests/test_message_catalog.py` proves every sample contains a needle of its
entry, so the prefilter never hides a match). Field conversions are total: a damaged number is
`None`, never an exception.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import field
from functools import cache, lru_cache
from typing import Any

from logparse.grammar.resources import grammar_folder
from logparse.grammar.wordtrie import trie_regex as _trie_regex
from logparse.model.record import Record, record

FIELD_TYPES = ("str", "int", "float")
# Digits beyond this are not a count or a size any log prints: such a field is damaged (None), and
# int() of a 5,000-digit string would hit Python's int-string limit.
MAX_DIGITS = 30


def _to_int(text: str) -> int | None:
    text = text.strip().replace(",", "")
    digits = text.lstrip("+-")
    if not digits.isdigit() or len(digits) > MAX_DIGITS:
        return None
    return int(text)


def _to_float(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if len(text) > 2 * MAX_DIGITS:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


_CONVERT = {"str": lambda s: s, "int": _to_int, "float": _to_float}


# A record, not a @dataclass: the same frozen contract without generating its methods at import.
@record
class MessageSpec(Record):
    """One message family: its wordings across releases and the typed fields they capture."""

    code: str
    family: str  # the catalog file it came from (memory, distributed, ...)
    summary: str
    source: str
    needles: tuple[str, ...]
    patterns: tuple[str, ...]
    ignore_case: bool
    fields: dict[str, str] = field(default_factory=dict)
    samples: tuple[str, ...] = ()

    @property
    def compiled(self) -> tuple[re.Pattern[str], ...]:
        return _compiled(self.patterns, self.ignore_case)

    def convert(self, groups: dict[str, str | None]) -> dict[str, Any]:
        """Typed fields from a match's named groups; absent groups are left out, damaged numbers None."""
        out: dict[str, Any] = {}
        for name, value in groups.items():
            if value is None:
                continue
            out[name] = _CONVERT[self.fields.get(name, "str")](value)
        return out

    def match(self, text: str) -> dict[str, Any] | None:
        """The fields of the first wording that occurs in `text`, or None."""
        for pattern in self.compiled:
            m = pattern.search(text)
            if m is not None:
                return self.convert(m.groupdict())
        return None

    def collect(self, text: str) -> dict[str, Any] | None:
        """The fields of every wording that occurs in `text`, merged (first occurrence wins), or None:
        for families whose numbers are spread over several clauses of one message."""
        out: dict[str, Any] = {}
        found = False
        for pattern in self.compiled:
            m = pattern.search(text)
            if m is not None:
                found = True
                for k, v in self.convert(m.groupdict()).items():
                    out.setdefault(k, v)
        return out if found else None

    def finditer(self, text: str) -> Iterator[dict[str, Any]]:
        """The fields of every occurrence of any wording in `text` (a line holding several)."""
        for pattern in self.compiled:
            for m in pattern.finditer(text):
                yield self.convert(m.groupdict())


@cache
def _compiled(patterns: tuple[str, ...], ignore_case: bool) -> tuple[re.Pattern[str], ...]:
    flags = re.IGNORECASE if ignore_case else 0
    return tuple(re.compile(p, flags) for p in patterns)


# Calls of `Catalog.candidates` after which the whole needles' trie is compiled (see _prefilter).
_FULL_TRIE_AFTER = 2_000


# Maximal runs of ASCII digits (what `Catalog.candidates_masked` masks), and its memo's bound.
_DIGIT_RUNS = re.compile(r"[0-9]+")
# Long hex runs standing alone in the digit-masked lowered text (request ids, hashes, comm ids,
# their digit runs already `0`): also masked, as one `0`. A needle can overlap such a run only if it
# (or its anchor) is all hex, holds 8 hex characters, or starts (ends) with hex characters next to
# a character that is neither a digit nor a letter (the run's edge): `_touches_hex`.
_HEX_RUNS = re.compile(r"(?<![0-9a-z])[0-9a-f]{8,}(?![0-9a-z])")
# Any masked run holds 8 hex characters: this search (~5x cheaper than the masking scan, whose
# lookbehind runs at every position) tells most texts have none.
_HEX_8 = re.compile(r"[0-9a-f]{8}")
_HEX_TOUCH = re.compile(r"[0-9a-f]+\Z|[0-9a-f]+[^0-9a-z]|.*[^0-9a-z][0-9a-f]+\Z|.*[0-9a-f]{8}", re.DOTALL)


def _touches_hex(needle: str) -> bool:
    """Whether an occurrence of the lowered `needle`, or of its anchor in a digit-masked text, can
    overlap a `_HEX_RUNS` run."""
    return _HEX_TOUCH.match(needle) is not None or _HEX_TOUCH.match(_DIGIT_RUNS.sub("0", needle)) is not None


_MASKED_MEMO = 50_000
_UNSEEN = object()
# The masked prefilter: trie regex, and per first three characters the words (codes; None: an
# anchor). Every word has 3+ characters (a needle has 3+, and an anchor too: checked where built).
_Masked = tuple[re.Pattern[str], dict[str, list[tuple[str, "tuple[str, ...] | None"]]]]


def _scan_masked(masked: _Masked, low: str) -> frozenset[str] | None:
    """The codes of the digit-free needles in a lowered masked text, or None when it holds an
    anchor (the text must then be prefiltered as it is)."""
    union, by_head = masked
    out: set[str] = set()
    pos = 0
    while True:
        m = union.search(low, pos)
        if m is None:
            return frozenset(out)
        start = m.start()
        # Only the words that start with the three characters here: keyed by the first character
        # alone, a hit on a common letter confirmed ~40 words (a 400-character request line: ~110
        # startswith calls, most of the run model's catalog pass on a long-running log).
        for word, codes in by_head.get(low[start : start + 3], ()):
            if low.startswith(word, start):
                if codes is None:
                    return None
                out.update(codes)
        pos = start + 1


class CatalogError(ValueError):
    """A catalog file is malformed (a bug in logdiag's data, caught by the tests)."""


class Catalog:
    """The message families by code (a plain class: it caches its prefilter in its __dict__)."""

    def __init__(self, specs: dict[str, MessageSpec] | None = None) -> None:
        self.specs: dict[str, MessageSpec] = {} if specs is None else specs

    def __getitem__(self, code: str) -> MessageSpec:
        try:
            return self.specs[code]
        except KeyError:
            raise KeyError(f"no message '{code}' in the catalog (grammars/messages/)") from None

    def __contains__(self, code: object) -> bool:
        return code in self.specs

    def codes(self) -> list[str]:
        return sorted(self.specs)

    @property
    def _prefilter(self) -> tuple[re.Pattern[str], dict[str, tuple[tuple[str, tuple[str, ...]], ...]]]:
        cached = self.__dict__.get("_pf")
        if cached is None:
            by_needle: dict[str, list[str]] = {}
            for spec in self.specs.values():
                for needle in spec.needles:
                    by_needle.setdefault(needle.lower(), []).append(spec.code)
            # Needles by their first three characters (every needle has 3+): at a hit, the needles
            # that start at that position.
            heads: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
            for needle, codes in by_needle.items():
                heads.setdefault(needle[:3], []).append((needle, tuple(codes)))
            # First a trie of the heads only: ~6x cheaper to compile than the trie of whole needles
            # (~3 ms against ~15 ms, a short run classifies a few hundred texts) but ~1.7x slower a
            # call (more hits to confirm). After _FULL_TRIE_AFTER calls the whole needles' trie
            # replaces it. Both find every position where a needle starts: the same candidates.
            self.__dict__["_pf_needles"] = list(by_needle)
            self.__dict__["_pf_calls"] = 0
            cached = self.__dict__["_pf"] = (_trie_regex(heads), {k: tuple(v) for k, v in heads.items()})
        return cached  # type: ignore[no-any-return]

    def _union(self) -> tuple[re.Pattern[str], dict[str, tuple[tuple[str, tuple[str, ...]], ...]]]:
        union, heads = self._prefilter
        calls = self.__dict__["_pf_calls"] = self.__dict__["_pf_calls"] + 1
        if calls == _FULL_TRIE_AFTER:
            union = _trie_regex(self.__dict__["_pf_needles"])
            self.__dict__["_pf"] = (union, heads)
        return union, heads

    def candidates(self, text: str) -> set[str]:
        """Codes whose needles occur in `text` (case-insensitive): the only entries worth trying.
        One scan of the lowered text with a trie-shaped regex of all needles (shared prefixes
        factored out: measured 3.4x faster than a substring test per needle, which was itself 2.5x
        faster than a flat alternation); at each hit, the needles starting there are confirmed."""
        union, heads = self._union()
        low = text.lower()
        out: set[str] = set()
        pos = 0
        while True:
            m = union.search(low, pos)
            if m is None:
                return out
            start = m.start()
            for needle, codes in heads.get(low[start : start + 3], ()):
                if low.startswith(needle, start):
                    out.update(codes)
            pos = start + 1

    def candidates_masked(self, text: str) -> set[str]:
        """`candidates(text)`, the same set, remembered per *digit-masked* text: kept lines differ
        mostly in their numbers (timestamps, ranks, ports, sizes; a startup-heavy log's 84k
        distinct kept texts are 7k once masked), and the prefilter scan is the cost.

        Why it is the same set: every maximal run of ASCII digits becomes one `0` (lowering
        neither makes nor changes ASCII digits). A needle without a digit occurs in the lowered
        text exactly when it occurs in the masked one (an occurrence holds no digit, so masking
        leaves it as it is, and adds none). A needle with a digit can occur only where its own
        masked form (its *anchor*) occurs in the masked text: when the masked text holds an
        anchor, the text is prefiltered as it is.

        Then long standalone hex runs of the masked text become `0` too (a request line's id
        made every one distinct: 55k kept texts, 55k masked ones on a long-running log). A needle
        that cannot overlap such a run (not `_touches_hex`: nor can its anchor) occurs in the
        digit-masked text exactly when it occurs with the runs masked (the `0` lies between
        non-alphanumerics, so it joins no digit run), and its anchor as well. The few that can
        are looked for in the lowered text itself when a run was masked (the scan of the masked
        text finds no false one of them: a digit-free occurrence there lies in text the masks
        left as it was, and an anchor sends the text to `candidates`).

        The memo is keyed by the fully masked text; a digit-masked text without runs is its own
        key, so most texts look for runs once per digit-masked form."""
        masked = self._masked_prefilter()
        if masked is None:
            return self.candidates(text)
        low = text.lower()
        key = _DIGIT_RUNS.sub("0", low)
        memo: dict[str, frozenset[str] | None] = self.__dict__.setdefault("_masked_memo", {})
        found = memo.get(key, _UNSEEN)
        runs = 0
        if found is _UNSEEN and _HEX_8.search(key) is not None:
            # (a text with runs is not remembered by its digit-masked form: that is an id's own)
            key, runs = _HEX_RUNS.subn("0", key)
            if runs:
                found = memo.get(key, _UNSEEN)
        if found is _UNSEEN:
            if len(memo) >= _MASKED_MEMO:
                memo.clear()
            scans = self.__dict__["_masked_scans"] = self.__dict__["_masked_scans"] + 1
            if scans == _FULL_TRIE_AFTER:
                # As `_union`: the whole words' trie once the scans are many (see _masked_prefilter).
                masked = self.__dict__["_masked"] = (_trie_regex(self.__dict__["_masked_words"]), masked[1])
            found = memo[key] = _scan_masked(masked, key)
        if found is None:
            return self.candidates(text)
        out = set(found)
        if runs:
            for needle, codes in self.__dict__["_masked_direct"]:
                if needle in low:
                    out.update(codes)
        return out

    def _masked_prefilter(self) -> _Masked | None:
        """The digit-free needles' and the anchors' trie, and at each first three characters the
        words (a needle's codes; None for an anchor) to confirm; None for an empty catalog."""
        if "_masked" in self.__dict__:
            return self.__dict__["_masked"]  # type: ignore[no-any-return]
        by_needle: dict[str, set[str]] = {}
        for spec in self.specs.values():
            for needle in spec.needles:
                by_needle.setdefault(needle.lower(), set()).add(spec.code)
        # A needle's anchor is its own masked form: where the needle occurs, each of its digit
        # runs lies inside one of the text's, so the masked text holds the masked needle.
        # Needles that may overlap a masked hex run are also tested as they are when a run was
        # masked (see candidates_masked).
        direct = [(n, tuple(sorted(codes))) for n, codes in by_needle.items() if _touches_hex(n)]
        anchors = {_DIGIT_RUNS.sub("0", n) for n in by_needle if _DIGIT_RUNS.search(n) is not None}
        words: dict[str, tuple[str, ...] | None] = dict.fromkeys(anchors)  # None: an anchor
        for needle, codes in by_needle.items():
            if needle not in anchors and _DIGIT_RUNS.search(needle) is None:
                words[needle] = tuple(sorted(codes))
        by_head: dict[str, list[tuple[str, tuple[str, ...] | None]]] = {}
        for word, found in words.items():
            by_head.setdefault(word[:3], []).append((word, found))
        if any(len(word) < 3 for word in words):
            # An anchor shorter than three characters (a needle like "1234" masks to "0") would
            # not be found by its head: then no masked prefilter (None: `candidates` for every
            # text, always right). Today's catalog has none.
            words = {}
        # First a trie of the words' first three characters, as `_prefilter` does (~1.3 ms to
        # compile against ~5 ms for the whole words): it stops at every position where a word
        # starts, and _scan_masked confirms each word there, so the answers are the same.
        built: _Masked | None = (_trie_regex({w[:3] for w in words}), by_head) if words else None
        self.__dict__["_masked_words"] = list(words)
        self.__dict__["_masked_direct"] = direct
        self.__dict__["_masked_scans"] = 0
        self.__dict__["_masked"] = built
        return built

    def classify(self, text: str) -> dict[str, list[dict[str, Any]]]:
        """Every catalog message in `text`: code → the fields of each occurrence."""
        out: dict[str, list[dict[str, Any]]] = {}
        for code in sorted(self.candidates(text)):
            found = list(self.specs[code].finditer(text))
            if found:
                out[code] = found
        return out


def _spec(family: str, raw: dict[str, Any]) -> MessageSpec:
    code = raw.get("code")
    if not isinstance(code, str) or not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", code):
        raise CatalogError(f"{family}: bad or missing code {code!r}")
    patterns = raw.get("patterns") or ([raw["pattern"]] if "pattern" in raw else [])
    needles = raw.get("needles") or []
    if not patterns or not needles:
        raise CatalogError(f"{family}/{code}: needs 'patterns' and 'needles'")
    if any(len(str(n)) < 3 for n in needles):
        raise CatalogError(f"{family}/{code}: needles must be at least 3 characters")
    fields = dict(raw.get("fields") or {})
    for name, kind in fields.items():
        if kind not in FIELD_TYPES:
            raise CatalogError(f"{family}/{code}: field {name} has unknown type {kind!r}")
    known = {"code", "summary", "source", "needles", "patterns", "pattern", "ignore_case", "fields", "samples"}
    extra = set(raw) - known
    if extra:
        raise CatalogError(f"{family}/{code}: unknown keys {sorted(extra)}")
    return MessageSpec(
        code=code,
        family=family,
        summary=str(raw.get("summary", "")),
        source=str(raw.get("source", "")),
        needles=tuple(str(n) for n in needles),
        patterns=tuple(str(p) for p in patterns),
        ignore_case=bool(raw.get("ignore_case", False)),
        fields=fields,
        samples=tuple(str(s) for s in raw.get("samples") or ()),
    )


def _parse_toml(family: str, text: str) -> dict[str, Any]:
    import tomllib  # only when the parsed catalog is not cached: tomllib costs start-up

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CatalogError(f"{family}: {err}") from None


def _from_docs(docs: Iterable[tuple[str, dict[str, Any]]]) -> Catalog:
    """A catalog from (family, parsed TOML document) pairs, every entry checked."""
    cat = Catalog()
    for family, doc in docs:
        for raw in doc.get("message", []):
            spec = _spec(family, raw)
            if spec.code in cat.specs:
                raise CatalogError(f"message code {spec.code} defined twice ({cat.specs[spec.code].family}, {family})")
            cat.specs[spec.code] = spec
    return cat


def load_catalog(texts: Iterable[tuple[str, str]]) -> Catalog:
    """A catalog from (family, TOML text) pairs."""
    return _from_docs((family, _parse_toml(family, text)) for family, text in texts)


# Bump when the cached form of the parsed catalog changes.
_CACHE_FORMAT = 1


def _load_cached(texts: list[tuple[str, str]]) -> Catalog:
    """The catalog of these TOML texts, from their parsed form in the per-user cache when it was
    made from these very texts (parsing the TOML took ~30 ms of a short run's start-up; loading
    JSON ~1 ms). The key is the content, not a file date: an edit is always seen. The entries are
    checked again on every load (`_from_docs`); a cached form that fails the checks is ignored."""
    from logparse.grammar.cache import content_key, read_data, write_data

    parts = [str(_CACHE_FORMAT).encode()]
    for family, text in texts:
        parts += [family.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass")]
    key = content_key(parts)
    cached = read_data("messages", key)
    if isinstance(cached, list) and len(cached) == len(texts):
        try:
            docs = [(str(family), doc) for family, doc in cached]
            if [f for f, _ in docs] == [f for f, _ in texts] and all(isinstance(d, dict) for _, d in docs):
                return _from_docs(docs)
        except (CatalogError, TypeError, ValueError, KeyError, AttributeError):
            pass  # damaged: parse the TOML again and rewrite the cache
    docs = [(family, _parse_toml(family, text)) for family, text in texts]
    cat = _from_docs(docs)  # a malformed catalog raises here and is never cached
    write_data("messages", key, [[family, doc] for family, doc in docs])
    return cat


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    """The shipped catalog (grammars/messages/*.toml), loaded once."""
    folder = os.path.join(grammar_folder(), "messages")  # os.path: no pathlib at start-up
    names = sorted(n for n in os.listdir(folder) if n.endswith(".toml")) if os.path.isdir(folder) else []
    texts = []
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            texts.append((name[: -len(".toml")], fh.read()))
    return _load_cached(texts)
