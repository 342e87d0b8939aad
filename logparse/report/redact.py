"""Secret redaction for every report output: API keys, HF tokens, bearer tokens, URL passwords.

Reports are attached to issues and chats; server args, pasted launch commands and environment
dumps can carry credentials. Two layers: `redact_text` masks secret-shaped substrings of any
string (log lines, commands), and `redact_data` walks the report's data model, masking every
string with `redact_text` and the whole value of any key whose name says it holds a secret
(`api_key`, `--hf-token`, `HF_TOKEN`, `ssl_keyfile_password`, ...).

The patterns are anchored on names so that the many harmless `token` words of SGLang's output
(`#token: 4772`, `max_total_num_tokens=396288`, `--max-total-tokens`) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MASK = "[REDACTED]"

# A key name (server arg, flag, env var, dict key) that holds a secret: the last word of the name.
# `token` alone is too common in SGLang's vocabulary (`new_token`, `cached_token`, `#token`): only
# the names of credentials count, and upper-case environment names ending in _TOKEN.
_SECRET_KEY = re.compile(
    r"(?:^|[_-])(?:api[_-]?key|apikey|secret|secret[_-]?key|password|passwd|access[_-]?key|authorization|"
    r"credentials?|(?:hf|hub|access|auth|api|bearer|github|gh|refresh|session|hf[_-]hub)[_-]token)$|^token$",
    re.IGNORECASE,
)
_SECRET_ENV = re.compile(r"^[A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|PASSWORD|PASSWD|KEY)$")

_VALUE = r"""(?:'[^'\n]*'|"[^"\n]*"|[^\s,;)'"&]+)"""
_SUBS: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # Authorization: Bearer xyz / Basic xyz (headers, curl -H lines); a lone `Bearer xyz`.
    (
        re.compile(
            r"(\bAuthorization\s*[:=]\s*['\"]?)(?:(Bearer|Basic|Token)\s+)?([^\s'\",;]+)",
            re.IGNORECASE,
        ),
        lambda m: f"{m.group(1)}{m.group(2) + ' ' if m.group(2) else ''}{MASK}",
    ),
    (
        re.compile(r"\b(Bearer\s+)(?!\[REDACTED\])([A-Za-z0-9._~+/=<>-]{6,}[^\s'\",;]*)"),
        rf"\1{MASK}",
    ),
    # scheme://user:password@host
    (re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@'\"]+:)([^\s@/'\"]+)(@)"), rf"\1{MASK}\3"),
    # --api-key X, --api-key=X, --hf-token X, --admin-api-key X, --password X (not --max-total-tokens)
    (
        re.compile(
            r"(--(?:[\w-]*-)?(?:api-key|token|secret|password|passwd)(?![\w-]))(\s+|=)(?!-)("
            + _VALUE
            + ")",
            re.IGNORECASE,
        ),
        rf"\1\2{MASK}",
    ),
    # api_key='…' / admin_api_key="…" / api_key=… / token=… / password=… (dataclass reprs, URLs);
    # 'api_key': '…' (dict reprs, JSON).
    (
        re.compile(
            r"(\b[\w-]*(?:api[_-]?key|apikey|(?<![\w-])token|secret|password|passwd)\s*=\s*)(?!None\b)("
            + _VALUE
            + ")",
            re.IGNORECASE,
        ),
        lambda m: (
            m.group(0) if m.group(2) in ("''", '""') else f"{m.group(1)}{_quoted(m.group(2))}"
        ),
    ),
    (
        re.compile(
            r"""((['"])[\w-]*(?:api[_-]?key|secret|password|passwd|token)\2\s*:\s*)(?!None\b|null\b)("""
            + _VALUE
            + ")",
            re.IGNORECASE,
        ),
        lambda m: (
            m.group(0) if m.group(3) in ("''", '""') else f"{m.group(1)}{_quoted(m.group(3))}"
        ),
    ),
    # NAME_TOKEN=…, HF_TOKEN=…, OPENAI_API_KEY=…, AWS_SECRET_ACCESS_KEY=… (environment dumps).
    (
        re.compile(
            r"\b([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|SECRET_KEY)\s*=\s*)("
            + _VALUE
            + ")"
        ),
        lambda m: f"{m.group(1)}{_quoted(m.group(2))}",
    ),
    # Bare token shapes: Hugging Face (hf_…), OpenAI-style (sk-…), GitHub (ghp_…).
    # (`<n>`/`<hex>` too: coverage templates mask the digits of a line before it gets here.)
    (re.compile(r"\bhf_[A-Za-z0-9<>]{16,}"), MASK),
    (re.compile(r"\bsk-[A-Za-z0-9_<>-]{16,}"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"), MASK),
]


def _quoted(value: str) -> str:
    """Keep the quotes of a quoted value: api_key='sk-…' → api_key='[REDACTED]'."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return f"{value[0]}{MASK}{value[0]}"
    return MASK


def redact_text(text: str) -> str:
    """The text with every secret-shaped substring replaced by [REDACTED]."""
    if not text:
        return text
    for pattern, repl in _SUBS:
        text = pattern.sub(repl, text)
    return text


def is_secret_key(name: str) -> bool:
    """Whether a key name (server arg, flag, env var) names a secret."""
    name = name.lstrip("-").strip()
    return bool(_SECRET_KEY.search(name) or _SECRET_ENV.match(name))


def _empty(value: Any) -> bool:
    return (
        value is None
        or value is False
        or value in ("", "None", "null", "[]", "{}")
        or value == []
        or value == {}
    )


class Redactor:
    """Walks a JSON-like value; counts what it masked (the report says how many)."""

    def __init__(self) -> None:
        self.count = 0

    def text(self, value: str) -> str:
        out = redact_text(value)
        if out != value:
            self.count += out.count(MASK) - value.count(MASK) or 1
        return out

    def data(self, value: Any, key: str | None = None) -> Any:
        if (
            key is not None
            and is_secret_key(key)
            and not _empty(value)
            and not isinstance(value, (dict, list))
        ):
            if value != MASK:
                self.count += 1
            return MASK
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.data(
                    v, k if isinstance(k, str) else None
                )
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


def redact_data(value: Any) -> tuple[Any, int]:
    """(the value with every secret masked, how many secrets were masked)."""
    r = Redactor()
    out = r.data(value)
    return out, r.count
