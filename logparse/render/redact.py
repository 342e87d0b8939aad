"""Secret redaction for every output: one regex scan per string, counted by kind.

Logs carry credentials (launch commands, server-args reprs, environment dumps, HTTP headers in
tracebacks) and every output of logdiag (text, JSON, SARIF and annotations uploaded by CI, CSV,
reports) must mask them by default. `Redactor.text` masks the secret-shaped parts of a string
with ONE scan of ONE combined regex; `Redactor.data` walks a JSON-like value and also masks the
whole value of any key whose name says it holds a secret (`api_key`, `--hf-token`, `HF_TOKEN`).

Linear time is a design rule, not an accident: every alternative starts at a literal or at a
word start (lookbehind), its leading repeats are bounded, and after the anchor nothing can fail
after an unbounded scan (an unclosed quote or PEM block runs to the end of the string instead of
failing), so no input makes the engine rescan a line from every position.

The names are anchored so that SGLang's many harmless `token` words (`#token: 4772`,
`max_total_num_tokens=396288`, `--max-total-tokens`) are left alone.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from math import isfinite
from typing import Any

from logparse.model.lazyre import lazy_compile

MASK = "[REDACTED]"

# A value after `name=` / `name: `: quoted (an unclosed quote runs to the end of the line rather
# than failing, which would cost a rescan) or one unquoted word.
_QUOTED = r"""'[^'\n]*'?|"[^"\n]*"?"""
_BARE = r"""[^\s,;'"&)\]}<>]+"""
_VALUE = rf"(?:{_QUOTED}|{_BARE})"
_SEP = r"""(?![\w-])['"]?[ \t]{0,8}[:=][ \t]{0,8}"""


def _after(word: str, quals: list[str], seps: str = "_-") -> str:
    """`word` preceded by one of the qualifiers and a separator (or none, with "" in `seps`): one
    fixed-width lookbehind per qualifier length (a small pattern compiles fast)."""
    by_len: dict[int, list[str]] = {}
    for q in quals:
        by_len.setdefault(len(q), []).append(q)
    parts = []
    for qs in by_len.values():
        alt = "|".join(qs)
        chars = "".join(c for c in seps if c)
        if chars:
            parts.append(f"(?<=(?:{alt})[{re.escape(chars)}]{word})")
        if "" in seps or not seps:
            parts.append(f"(?<=(?:{alt}){word})")
    return word + "(?:" + "|".join(parts) + ")"


def _starts_word(word: str, before: str = "a-z0-9") -> str:
    """`word` not preceded by a letter or digit (the check runs after the literal)."""
    return f"{word}(?<![{before}]{word})"


# Every alternative starts with a literal character, so that the regex engine skips ahead to the
# next possible start in C (tens of times faster than trying every alternative at every
# position); anchors on the word boundary are lookbehinds placed after that literal. The
# case-insensitive alternatives run on a lower-cased copy of the text (same length, see _lower).
_KEY_QUALS = ["api", "access", "secret", "private", "wandb", "wandb_api", "auth", "encryption", "signing"]
_TOKEN_QUALS = ["api", "access", "auth", "refresh", "session", "security", "id", "bearer", "hf", "hub", "face",
                "github", "gh", "gitlab", "slack", "npm", "oauth", "bot", "personal", "pat", "service", "app"]
_NAME_ALTS: list[tuple[str, str]] = [
    ("secret-value", _after("key", _KEY_QUALS, "_- ") + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", "key(?<=apikey)" + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", _after("token", _TOKEN_QUALS) + _SEP + f"(?P<v>{_VALUE})"),
    ("token-value", _starts_word("token", r"a-z0-9_#.\-") + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", _starts_word("secret") + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", _starts_word("password") + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", _starts_word("passwd") + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", _starts_word("passphrase") + _SEP + f"(?P<v>{_VALUE})"),
    ("secret-value", _starts_word("credential") + "s?" + _SEP + f"(?P<v>{_VALUE})"),
]
_FLAG_NAMES = r"api-key|token|secret|password|passwd|passphrase|secret-key|access-key|private-key"
_QUERY_NAMES = (
    r"access[_-]?token|refresh[_-]?token|id[_-]?token|token|api[_-]?key|apikey|key|secret|"
    r"client[_-]?secret|password|passwd|sig|signature|x-amz-signature|x-amz-security-token|"
    r"x-amz-credential"
)
_TOKEN_START = r"a-z0-9_\-"
# On the lower-cased text. (kind, source with a value group `v`; the auth header also `s`.)
_FOLDED: list[tuple[str, str]] = [
    (
        "private-key",
        (
            r"-----begin[a-z0-9 ]{0,40}private key(?: block)?-----[\s\S]*?"
            r"(?:-----end[a-z0-9 ]{0,40}private key(?: block)?-----|\Z)"
        ),
    ),
    (
        "auth-header",
        _starts_word("authorization")
        + r"""['"]?[ \t]{0,8}[:=][ \t]{0,8}['"]?"""
        + r"(?:(?P<s>bearer|basic|token|digest|apikey|negotiate)[ \t]+)?(?P<v>[^\s'\",;]+)",
    ),
    ("bearer-token", _starts_word("bearer") + r"""[ \t]+(?P<v>[a-z0-9._~+/=\-]{6,}[^\s'",;]*)"""),
    ("url-password", r"""://[^\s/?#@:'"<>]{0,256}:(?!//)(?P<v>[^\s'"<>]{1,256})(?=@)"""),
    *[("url-secret", rf"\{c}(?:{_QUERY_NAMES})=(?P<v>[^\s&#'\"<>]+)") for c in "?&;"],
    # A flag starts a word: '--' after a space, quote, bracket, comma or '=' (or at the start), so
    # that a rule of dashes glued to a title ('-----Inter-Token Latency-----') is no '--…-token'.
    ("secret-flag", rf"-(?<![^\s'\"\[(,=]-)-(?:[a-z0-9]+-){{0,6}}(?:{_FLAG_NAMES})(?![\w-])(?:[ \t]+|=)(?!--)(?P<v>{_VALUE})"),
    *_NAME_ALTS,
    ("hf-token", rf"{_starts_word('hf_', _TOKEN_START)}[a-z0-9]{{16,}}"),
    ("github-token", rf"{_starts_word('gh', _TOKEN_START)}[pousr]_[a-z0-9]{{20,}}"),
    ("github-token", rf"{_starts_word('github_pat_', _TOKEN_START)}[a-z0-9_]{{20,}}"),
    ("gitlab-token", rf"{_starts_word('glpat-', _TOKEN_START)}[a-z0-9_\-]{{20,}}"),
    ("slack-token", rf"{_starts_word('xox', _TOKEN_START)}[abposre]-[a-z0-9\-]{{10,}}"),
    ("slack-token", rf"{_starts_word('xapp-', _TOKEN_START)}[a-z0-9\-]{{10,}}"),
    ("openai-key", rf"{_starts_word('sk-', _TOKEN_START)}[a-z0-9_\-]{{16,}}"),
    ("stripe-key", rf"{_starts_word('sk_', _TOKEN_START)}(?:live|test)_[a-z0-9]{{16,}}"),
    ("stripe-key", rf"{_starts_word('rk_', _TOKEN_START)}(?:live|test)_[a-z0-9]{{16,}}"),
    ("npm-token", rf"{_starts_word('npm_', _TOKEN_START)}[a-z0-9]{{30,}}"),
]
_ENV_SUFFIX = r"TOKEN|SECRET|PASSWORD|PASSWD|PASS|API_?KEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|AUTH_KEY|CREDENTIALS?"
# On the text as it is (these shapes are case-sensitive).
_CASED: list[tuple[str, str]] = [
    (
        "env-secret",
        rf"_(?<=[A-Z0-9]_)(?:{_ENV_SUFFIX})(?![A-Za-z0-9_])[ \t]{{0,4}}=[ \t]{{0,4}}(?P<v>{_VALUE})",
    ),
    (
        "aws-access-key-id",
        # 16 characters after the prefix in a real key ID; more when a paste glued the next word on
        # (`…EXAMPLEError`), which must not let the key through.
        r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA)[0-9A-Z]{16}[0-9A-Za-z]*",
    ),
    ("google-api-key", r"A(?<![A-Za-z0-9_\-]A)Iza[0-9A-Za-z_\-]{30,}"),
    ("jwt", r"e(?<![A-Za-z0-9_\-]e)yJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
]
# Needles: a short pattern (on the lower-cased text) that every match of an alternative above
# also matches. A string with none of them cannot hold a secret, so it skips both full scans (most
# output strings: numbers, ranks, phase names, traceback frames, and SGLang's many `token` words).
# Keep in step with the alternatives: `tests/test_redaction.py` generates matches of each one.
_SECRET_NAMES = r"key|secret|pass|passwd|password|passphrase|credentials?|sig|signature"
# A bare number (digits and dots, one digit at least) as the whole value: what token-value leaves
# alone (`_mask`). The needle of a free-standing `token` skips it, so that SGLang's own wording
# (`token usage: 0.12`, `bytes per token = 14054 tokens`) does not cost the full scans.
_BARE_NUMBER = r"""[0-9.]*[0-9][0-9.]*(?:[\s,;'"&)\]}<>]|\Z)"""
_NEEDLES = (
    # a secret's name before its value: `name=`, `name: `, `"name": ` (the values of secret-value,
    # env-secret, url-secret), or a flag's `-name value` / `-name=value`
    rf"(?:{_SECRET_NAMES})['\"]?[ \t]{{0,8}}[:=]",
    # `token` after a qualifier (secret-value `api_token`/`apitoken`, env-secret, url-secret
    # `access_token=`), a URL query's `?token=`, and a free-standing `token` (token-value, the
    # only one left) unless its value is a bare number
    r"""[a-z_-]token['"]?[ \t]{0,8}[:=]""", "[?&;]token=",
    rf"""(?<![a-z0-9_#.\-])token['"]?[ \t]{{0,8}}+[:=][ \t]{{0,8}}+(?!{_BARE_NUMBER})""",
    r"-(?:key|token|secret|passwd|password|passphrase)[ \t=]",
    # headers, PEM blocks, a URL's user:password@ (the alternative's own bounds: 256 + 1 + 256)
    "authorization", "bearer", "private key", r"://[^\s'\"<>]{0,513}@",
    # vendor token prefixes
    "hf_", "gh[pousr]_", "github_pat_", "glpat-", "xox[abposre]-", "xapp-", "sk[-_]", "rk_", "npm_",
    # AWS key IDs, Google API keys, JWTs (case-sensitive shapes; their lower-cased prefix)
    "a(?:kia|sia|bia|cca|gpa|ida|roa|ipa|npa|nva|pka)", "aiza", "eyj",
)
KINDS: tuple[str, ...] = tuple(dict.fromkeys(
    [k for k, _ in _FOLDED] + [k for k, _ in _CASED] + ["bearer-token", "basic-auth", "secret-field"]))


def _combined(alternatives: list[tuple[str, str]], base: int) -> tuple[re.Pattern[str], dict[str, str]]:
    """Alternatives in one regex: group `aN` is alternative N (opened after its first literal, so
    that every branch still starts with a literal: the fast skip), `aNv` its value when the
    value is not the whole match."""
    parts: list[str] = []
    kinds: dict[str, str] = {}
    for n, (kind, source) in enumerate(alternatives, base):
        source = source.replace("(?P<v>", f"(?P<a{n}v>").replace("(?P<s>", f"(?P<a{n}s>")
        lit = 2 if source.startswith("\\") else 1
        parts.append(f"{source[:lit]}(?P<a{n}>{source[lit:]})")
        kinds[f"a{n}"] = kind
    return re.compile("|".join(parts)), kinds


_SCANNERS: tuple[re.Pattern[str], re.Pattern[str]] | None = None
_NEEDLE: re.Pattern[str] | None = None
_GROUP_KIND: dict[str, str] = {}
# The redaction memo: strings up to this length, this many distinct ones (bounds its memory).
_MEMO_LENGTH = 4096
_MEMO_SIZE = 50_000
_NOTHING = object()  # an exhausted iterator's mark (`items`)
_PEM_END = lazy_compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE)
_NOT_SECRET = frozenset({"", "''", '""', "none", "null", "true", "false", "nil", "undefined", MASK.lower()})
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
# A line that is only base64 (a PEM body line on its own: an unparsed line, a template). Mixed
# case and a digit are required (a 64-character PEM line without a digit is a 1-in-50,000
# chance), so that words, paths and hex digests are left alone.
_PEM_BODY = re.compile(r"[ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*")


def _pem_body(text: str) -> bool:
    return (
        len(text) >= 40
        and _PEM_BODY.fullmatch(text) is not None
        and any(c.isdigit() for c in text)
        and any(c.isupper() for c in text)
        and any(c.islower() for c in text)
    )


def scanners() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(the regex for the lower-cased text, the regex for the text as is), compiled on first use
    (outputs only; never on the per-line hot path)."""
    global _SCANNERS
    if _SCANNERS is None:
        folded, kinds = _combined(_FOLDED, 0)
        cased, kinds2 = _combined(_CASED, len(_FOLDED))
        _GROUP_KIND.update(kinds)
        _GROUP_KIND.update(kinds2)
        _SCANNERS = (folded, cased)
    return _SCANNERS


def needle() -> re.Pattern[str]:
    """The prefilter of `_NEEDLES` (on the lower-cased text), compiled on first use."""
    global _NEEDLE
    if _NEEDLE is None:
        _NEEDLE = re.compile("|".join(_NEEDLES))
    return _NEEDLE


def _lower(text: str) -> str:
    """A lower-cased copy with the same length (offsets map 1:1 back to the text)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _unquote(value: str) -> tuple[str, str, str]:
    """(opening quote, inner text, closing quote) of a value."""
    if value[:1] in ("'", '"'):
        q = value[0]
        if len(value) >= 2 and value.endswith(q):
            return q, value[1:-1], q
        return q, value[1:], ""
    return "", value, ""


class Redactor:
    """Masks secrets in strings and JSON-like values; `counts` says how many of each kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.mask_keys = True  # mask the whole value of secret-named keys in `data`
        # Regex scans made: two per non-empty string (three for a bare base64 line), whatever its
        # length and content; the tests count them to prove the bounded number of passes.
        self.scans = 0
        self._pem_open = False  # inside a PEM block that an earlier line of the same list opened
        self._flow = 0  # > 0 while walking the lines of a list (the only place a PEM block spans)
        # Also make the copy JSON-safe as `render.summary.clean` does (NaN and infinities → None,
        # keys → str), so that an output document is walked once, not cleaned and then redacted.
        self.json_safe = False
        # string → (redacted, kinds masked, PEM block left open) for strings seen outside a PEM block
        self._memo: dict[str, tuple[str, tuple[str, ...], bool]] = {}
        # The same for what `text` returns (a subclass's too: the sanitizer also defuses), with the
        # counts it adds, so that `data` answers a repeated string or key with one dict lookup: a
        # document's values are ~1.3M scalars and strings of ~16k distinct texts (1M lines), and the
        # call chain per value, not the regex scans, was the cost of redaction.
        self._done: dict[str, tuple[str, tuple[tuple[str, int], ...], bool]] = {}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def _mask(self, m: re.Match[str], text: str) -> tuple[int, int, str, str] | None:
        """(start, end, replacement, kind) in `text` for one match, or None when it holds no secret."""
        group = m.lastgroup or ""
        kind = _GROUP_KIND.get(group, "secret")
        vgroup = f"{group}v"
        start, end = m.span(vgroup) if vgroup in m.re.groupindex else m.span()
        value = text[start:end]
        if kind == "private-key":
            begin = value.index("-----", 5) + 5
            closed = _PEM_END.search(value, begin)
            self._pem_open = closed is None
            return start, end, value[:begin] + MASK + (closed.group(0) if closed else ""), kind
        open_q, inner, close_q = _unquote(value)
        if inner.strip().lower() in _NOT_SECRET or inner.startswith(MASK[:-1]):  # idempotent
            return None
        if kind == "token-value" and (len(inner) < 8 or inner.replace(".", "").isdigit()):
            return None  # `token: 4772`-like counters, not credentials
        if kind == "auth-header":
            scheme = (m.group(f"{group}s") or "") if f"{group}s" in m.re.groupindex else ""
            kind = {"bearer": "bearer-token", "basic": "basic-auth"}.get(scheme.lower(), kind)
        return start, end, f"{open_q}{MASK}{close_q}", kind

    def text(self, value: str) -> str:
        """The string with every secret-shaped part replaced by [REDACTED]: two regex scans (the
        case-insensitive shapes on a lower-cased copy, the case-sensitive ones on the text)
        whatever the length, each skipping in C to the next literal that can start a secret."""
        out = self._scan(value)
        if not self._flow:
            self._pem_open = False  # a string on its own: a PEM block it opens ends with it
        return out

    def _scan(self, value: str) -> str:
        if not value:
            return value
        if self._pem_open:  # the body (or the end) of a PEM block opened by an earlier line
            closed = _PEM_END.search(value)
            if closed is None:
                return MASK  # counted once, at its BEGIN line
            self._pem_open = False
            value = (MASK if value[: closed.start()].strip() else "") + value[closed.start() :]
            out, kinds = self._redact(value)
        else:
            # Outside a PEM block the result is a function of the string alone (its text, the
            # kinds it masks, whether it leaves a PEM block open), and output documents repeat
            # strings by the thousand (keys, ranks, exception types, the same traceback on every
            # rank): each distinct string is scanned once per redactor.
            memo = self._memo.get(value)
            if memo is None:
                out, kinds = self._redact(value)
                if len(value) <= _MEMO_LENGTH:
                    if len(self._memo) >= _MEMO_SIZE:
                        self._memo.clear()
                    self._memo[value] = (out, kinds, self._pem_open)
            else:
                out, kinds, self._pem_open = memo
        for kind in kinds:
            self.counts[kind] += 1
        return out

    def _redact(self, value: str) -> tuple[str, tuple[str, ...]]:
        """(the string with its secrets masked, the kind of each mask); may open a PEM block."""
        spans = self._spans(value)
        if not spans:
            if _pem_body(value):
                self.scans += 1
                return MASK, ("private-key",)
            return value, ()
        out: list[str] = []
        pos = 0
        for start, end, repl, _kind in spans:
            out.append(value[pos:start])
            out.append(repl)
            pos = end
        out.append(value[pos:])
        return "".join(out), tuple(span[3] for span in spans)

    def _spans(self, value: str) -> list[tuple[int, int, str, str]]:
        """The secrets in `value` as sorted, non-overlapping (start, end, replacement, kind)."""
        low = _lower(value)
        self.scans += 1
        if needle().search(low) is None:
            return []
        folded, cased = scanners()
        self.scans += 2
        spans: list[tuple[int, int, str, str]] = []
        for pattern, subject in ((folded, low), (cased, value)):
            for m in pattern.finditer(subject):
                hit = self._mask(m, value)
                if hit is not None:
                    spans.append(hit)
        spans.sort(key=lambda s: (s[0], -s[1]))
        kept: list[tuple[int, int, str, str]] = []
        pos = 0
        for span in spans:
            if span[0] < pos:  # inside a secret already masked (the two scans overlap)
                continue
            kept.append(span)
            pos = span[1]
        return kept

    def _words(self, items: list[Any], done: list[Any]) -> list[Any]:
        """A list of strings is often one text split into words (a command line's argv, a flag's
        values): `Bearer` in one item and the token in the next, `--api-key` and its value. Items
        the one-by-one pass left alone are masked where a secret of the text they were split from,
        joined by spaces, covers them. One more pair of scans for the whole list: still linear."""
        if len(items) < 2 or not all(isinstance(v, str) for v in items):
            return done
        joined = " ".join(items)
        saved = self._pem_open
        spans = self._spans(joined)
        self._pem_open = saved
        if not spans:
            return done
        out = list(done)
        starts: list[int] = []
        pos = 0
        for v in items:
            starts.append(pos)
            pos += len(v) + 1
        for start, end, _repl, kind in spans:
            first = bisect.bisect_right(starts, start) - 1
            last = bisect.bisect_right(starts, max(start, end - 1)) - 1
            masked = False
            for i in range(max(first, 0), last + 1):
                if out[i] != items[i]:
                    continue  # the item's own pass masked it already
                lo, hi = max(start - starts[i], 0), min(end - starts[i], len(items[i]))
                if lo >= hi:
                    continue
                out[i] = items[i][:lo] + MASK + items[i][hi:]
                masked = True
            if masked:
                self.counts[kind] += 1
        return out

    def lines(self, values: list[str]) -> list[str]:
        """Consecutive lines of one log region: a PEM block opened on one line masks the next ones."""
        saved, self._pem_open = self._pem_open, False
        self._flow += 1
        try:
            return [self.text(v) for v in values]
        finally:
            self._flow -= 1
            self._pem_open = saved

    def _key(self, key: str) -> str:
        """A dict key is redacted too, but is never part of a PEM block the values carry."""
        saved, self._pem_open = self._pem_open, False
        try:
            return self._string(key)
        finally:
            self._pem_open = saved

    def _string(self, value: str) -> str:
        """`text(value)` outside a PEM block, remembered per string with the counts it adds and
        the PEM state it leaves (the same answer: outside a PEM block `text` depends on the string
        alone)."""
        if self._pem_open or len(value) > _MEMO_LENGTH:
            return self.text(value)
        done = self._done.get(value)
        if done is None:
            return self._remember(value)
        out, added, pem = done
        for kind, n in added:
            self.counts[kind] += n
        if pem and self._flow:
            self._pem_open = True
        return out

    def _remember(self, value: str) -> str:
        before = dict(self.counts)
        flow, self._flow = self._flow, 1  # keep the PEM state `text` leaves (it resets it outside a list)
        try:
            out = self.text(value)
        finally:
            self._flow = flow
        pem = self._pem_open
        if not flow:
            self._pem_open = False
        added = tuple((k, n - before.get(k, 0)) for k, n in self.counts.items() if n != before.get(k, 0))
        if len(self._done) >= _MEMO_SIZE:
            self._done.clear()
        self._done[value] = (out, added, pem)
        return out

    def _masked(self, value: Any) -> str:
        if value != MASK:
            self.counts["secret-field"] += 1
        return MASK

    def data(self, value: Any, key: str | None = None) -> Any:
        """A copy of a JSON-like value with every string redacted and secret-named keys masked."""
        # Exact JSON types first (one type check each); anything else (subclasses) the general way.
        cls = type(value)
        if cls is dict:
            return self._dict(value)
        if cls is float and self.json_safe and not isfinite(value):
            return None
        if cls is str or cls is float or cls is int or cls is bool or value is None:
            if key is not None and self.mask_keys and is_secret_key(key) and not _empty(value):
                return self._masked(value)
            return self._string(value) if cls is str else value
        if cls is list or cls is tuple:
            return self._list(value)
        return self._data_any(value, key)

    def _dict(self, value: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        name, field = self.name, self.field
        for k, v in value.items():
            if type(k) is not str:
                if not self.json_safe:
                    out[self._key(k) if isinstance(k, str) else k] = self.data(v, k if isinstance(k, str) else None)
                    continue
                k = str(k)
            out[name(k)] = field(k, v)
        return out

    def name(self, key: str) -> str:
        """A str key of a dict as `data` gives it back (redacted, remembered per key)."""
        hit = self._done.get(key)
        if hit is None:
            return self._key(key)
        for kind, n in hit[1]:
            self.counts[kind] += n
        return hit[0]

    def field(self, key: str, value: Any) -> Any:
        """A dict item's value as `data` gives it back under str `key` (a secret-named key masks it)."""
        cls = type(value)
        if cls is float or cls is int or value is None or cls is bool:
            if self.json_safe and cls is float and not isfinite(value):
                value = None
            return self._masked(value) if self.mask_keys and is_secret_key(key) and not _empty(value) else value
        return self.data(value, key)

    def items(self, values: Iterable[Any]) -> Iterator[Any]:
        """The items of a list, each as `data` gives it back inside the list, one at a time (a
        writer can drop each before the next is made). Only a list of strings is redacted as a
        whole (`_words`: a secret split over items), so one whose first item is a string is
        taken whole."""
        it = iter(values)
        first = next(it, _NOTHING)
        if first is _NOTHING:
            return
        if isinstance(first, str):
            yield from self._list([first, *it])
            return
        saved, self._pem_open = self._pem_open, False
        self._flow += 1
        try:
            yield self.data(first)
            for v in it:
                yield self.data(v)
        finally:
            self._flow -= 1
            self._pem_open = saved

    def _list(self, value: list[Any] | tuple[Any, ...]) -> list[Any]:
        saved, self._pem_open = self._pem_open, False
        self._flow += 1
        try:
            return self._words(list(value), [self.data(v) for v in value])
        finally:
            self._flow -= 1
            self._pem_open = saved

    def _data_any(self, value: Any, key: str | None) -> Any:
        """`data` for values that are not exactly a JSON type (str, dict, list subclasses…)."""
        if self.json_safe and isinstance(value, float) and not isfinite(value):
            return None
        if (
            self.mask_keys
            and key is not None
            and not isinstance(value, (dict, list, tuple))
            and not _empty(value)
            and is_secret_key(key)
        ):
            return self._masked(value)
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return self._dict(value)
        if isinstance(value, (list, tuple)):
            return self._list(value)
        return value


# A key name (server arg, flag, env var, dict key) that holds a secret: the last word of the name.
_SECRET_KEY = re.compile(
    r"(?:^|[_-])(?:api[_-]?key|apikey|secret|secret[_-]?key|password|passwd|passphrase|access[_-]?key|"
    r"private[_-]?key|authorization|credentials?|(?:hf|hub|access|auth|api|bearer|github|gh|refresh|"
    r"session|security|id|hf[_-]hub)[_-]token)$|^token$",
    re.IGNORECASE,
)
_SECRET_ENV = re.compile(r"^[A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|PASSWORD|PASSWD|KEY)$")


@lru_cache(maxsize=4096)  # a document's keys are a few hundred names, asked thousands of times
def is_secret_key(name: str) -> bool:
    """Whether a key name (server arg, flag, env var; `env.HF_TOKEN` as flattened for CSV) names a secret."""
    name = name.rsplit(".", 1)[-1].lstrip("-").strip()
    return bool(_SECRET_KEY.search(name) or _SECRET_ENV.match(name))


def _empty(value: Any) -> bool:
    return value is None or value is False or value is True or value in ("", "None", "null", "[]", "{}")


def redact_text(text: str) -> str:
    """The text with every secret-shaped substring replaced by [REDACTED]."""
    return Redactor().text(text)


def redact_data(value: Any) -> tuple[Any, int]:
    """(the value with every secret masked, how many secrets were masked)."""
    r = Redactor()
    out = r.data(value)
    return out, r.total


def redact_coverage(cov: dict[str, Any], texts: Any, redactor: Redactor, template_of: Callable[[str], str]) -> dict[str, Any]:
    """Coverage templates mask a line's digits, which can hide a secret's shape: a template whose
    first line holds a secret is rebuilt from the redacted line (the rest is redacted as text)."""
    top = []
    for item in cov.get("top_unparsed", []):
        raw = texts.get(item.get("first_line")) if texts is not None else None
        if isinstance(raw, str):
            probe = Redactor()
            cleaned = probe.text(raw)
            if probe.total:
                redactor.counts.update(probe.counts)
                item = item | {"template": template_of(cleaned)}
        top.append(item)
    return cov | {"top_unparsed": top}
