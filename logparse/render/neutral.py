"""Neutralize log text that would act on what reads the output: CI workflow commands, CSV formulas,
control characters in one-line messages.

CI runners execute workflow commands printed to a job's log: GitHub Actions a line that starts
(after leading whitespace) with `::`, and the legacy `##[command]` anywhere in a line. A log line
copied into logdiag's output (evidence, messages, templates, file names) must not become one.
A zero-width space breaks the command syntax and keeps the text readable. Spreadsheet programs
run a CSV cell starting with `=`, `+`, `-`, `@` (or tab / CR) as a formula: such text cells get a
leading apostrophe (OWASP's advice); numbers are left alone.
"""

from __future__ import annotations

import re
from typing import Any

from logparse.model.lazyre import lazy_compile

ZWSP = "\u200b"

# `::` at the start of a line (after whitespace; `\r` also ends a line for some viewers) or
# `##[` anywhere.
_WORKFLOW = lazy_compile(r"(?:^|(?<=\r))([^\S\r\n]*)::|##\[", re.MULTILINE)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CONTROL = lazy_compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _defuse(m: re.Match[str]) -> str:
    if m.group(0) == "##[":
        return f"#{ZWSP}#["
    return f"{m.group(1)}{ZWSP}::"


def neutralize(text: str) -> str:
    """The text with every workflow command defused (idempotent)."""
    if "::" not in text and "##[" not in text:
        return text
    return _WORKFLOW.sub(_defuse, text)


def _escape_control(m: re.Match[str]) -> str:
    c = m.group(0)
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """For messages and file names printed on one line: control characters (newlines included),
    lone surrogates (undecodable file-name bytes) escaped as `\\n`, `\\x1b`, `\\udcff`; commands defused."""
    return neutralize(_CONTROL.sub(_escape_control, text))


def csv_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula (text cells only; numbers stay numbers)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def neutralize_data(value: Any) -> Any:
    """A copy of a JSON-like value with every string (keys too) neutralized."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, dict):
        return {(neutralize(k) if isinstance(k, str) else k): neutralize_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [neutralize_data(v) for v in value]
    return value
