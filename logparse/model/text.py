"""Text helpers shared by every layer: number masking (finding identity), short excerpts, and the
dated timestamps of a line the grammar kept as text only."""

from __future__ import annotations

from datetime import datetime

from logparse.model.lazyre import lazy_compile

# A hex address or a decimal number (an integer or a decimal fraction).
_NUMBER = lazy_compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")
# A quoted request id / hash ('d4424f3eb90345f0a863068978c0f17c').
_QUOTED_ID = lazy_compile(r"'[0-9a-f]{16,}'")


def mask_numbers(text: str) -> str:
    """The text with every number (and hex address, quoted request id) replaced by '#', so that the
    same message on another rank or for another request compares equal.

    The one masking for *finding identity* (rule fingerprints, the engine's grouping of repeats).
    Two other maskings exist on purpose and are not this one: coverage templates
    (`parsing/coverage.template_of`) keep the kind of what they mask (`<n>`, `<hex>`, `<ip>`,
    `<path>`) because people read them, and baseline fingerprints (`gate/baseline.normalize`) also
    mask timestamps, UUIDs and paths so that a finding stays the same across reruns and installs."""
    return _NUMBER.sub("#", _QUOTED_ID.sub("'#'", text))


def short(text: str, n: int = 200) -> str:
    """The text on one line (whitespace runs collapsed), cut to at most `n` characters with an
    ellipsis — at a space, so a flag or variable name is never cut mid-way (`SGLANG_ENABL…`
    named a variable that does not exist); only a text without a space in its second half is
    cut inside a word."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[: n - 1]
    if text[n - 1] == " ":  # the cut falls between two words
        return cut + "…"
    space = cut.rfind(" ")
    if space > n // 2:
        return cut[:space] + " …"
    return cut + "…"


# A dated timestamp as loggers print it (`2025-03-07 09:20:03`, ISO `2025-03-07T09:20:03`).
_DATED_TS = lazy_compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\b")


def dated_timestamps(text: str) -> list[datetime]:
    """Every valid dated timestamp in a line of text (impossible dates are skipped)."""
    out = []
    for m in _DATED_TS.finditer(text):
        try:
            out.append(datetime.fromisoformat(m.group(0).replace("T", " ")))
        except ValueError:
            pass
    return out
