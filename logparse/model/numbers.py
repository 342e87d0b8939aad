"""Total number parsers for log text: every conversion returns a bounded value or "not a number".

Log text is hostile or damaged (`#running-req: inf`, a 5,000-digit rank tag, two lines glued into
one field); `int()`/`float()` on it raise, overflow or hit Python's int-string limit. Every place
where matched log text becomes a number goes through these functions instead: they never raise,
never look at more than a few dozen characters, and count each numeric field that was expected but
unusable, so that the pipeline can report it (`read.damaged_numbers`) while the line is kept.

Conventions: `to_int`/`to_count`/`to_float_or_none` give None for a damaged field (callers then
leave the field out, so the event's default applies); `to_float` gives NaN (the column stores'
"not printed"). `probe_float` is for text that may legitimately not be a number (it counts only
non-finite or oversized numbers as damage). The stats hot path (grammar/transform/runtime.py)
inlines the finite/count bounds in its generated builders (without the length bound: float() is
linear in the text and raises nothing but ValueError).

The counter is per process; `parsing.pipeline.parse_file` attributes the difference around one
parse to that log (`read.damaged_numbers`), worker processes report theirs with their part.
"""

from __future__ import annotations

import math
from typing import Any

NAN = math.nan
# Longest integer text accepted (sign included): far above any count, id or port a log prints,
# far below Python's 4,300-digit int-string limit.
MAX_INT_CHARS = 31
# Longest float text accepted: '-1.2345678901234567e-308' is 24; leave room for long decimals.
MAX_FLOAT_CHARS = 64
# Counts (requests, tokens, pids) beyond this are damage: keeps them exact in float64 columns.
MAX_COUNT = 2**53

_damaged = 0


def damaged() -> int:
    """How many numeric fields were damaged in this process so far (a monotonic counter: callers
    take the difference around the work they attribute)."""
    return _damaged


def note_damage() -> None:
    """Count one damaged numeric field (for converters outside this module, e.g. generated code)."""
    global _damaged
    _damaged += 1


def to_int(text: str | None) -> int | None:
    """An integer printed as integer text ('42', '-3', ' 7 '), or None (counted as damage) when the
    text is empty, not an integer or longer than MAX_INT_CHARS. None in, None out (not damage)."""
    global _damaged
    if text is None:
        return None
    if len(text) <= MAX_INT_CHARS * 4:  # surrounding blanks are fine; a huge field is not
        t = text.strip()
        if 0 < len(t) <= MAX_INT_CHARS:
            try:
                return int(t)
            except ValueError:
                pass
    _damaged += 1
    return None


def to_float_or_none(text: str | None) -> float | None:
    """A finite float, or None (counted as damage) for non-numbers, inf, nan and oversized text."""
    global _damaged
    if text is None:
        return None
    if len(text) <= MAX_FLOAT_CHARS * 4:
        t = text.strip()
        if 0 < len(t) <= MAX_FLOAT_CHARS:
            try:
                v = float(t)
            except ValueError:
                pass
            else:
                if v - v == 0.0:  # false for inf, -inf and nan
                    return v
    _damaged += 1
    return None


def to_float(text: str | None) -> float:
    """Like `to_float_or_none`, with NaN for "not a number" (what the column stores hold)."""
    v = to_float_or_none(text)
    return NAN if v is None else v


def to_count(text: str | None) -> int | None:
    """A count printed as an integer or a float ('5', '5.0', '1e3'): int when finite and at most
    MAX_COUNT in size, else None (counted as damage). Fractions are truncated, as int() does."""
    global _damaged
    v = to_float_or_none(text)
    if v is None:
        return None
    if -MAX_COUNT <= v <= MAX_COUNT:
        return int(v)
    _damaged += 1
    return None


def probe_float(text: str) -> float | None:
    """A finite float if the text is one, else None. Text that is not a number at all is not
    damage (callers probe fields whose values may be words); inf, nan and oversized digit runs
    are."""
    global _damaged
    t = text.strip()
    if not t or len(t) > MAX_FLOAT_CHARS:
        if t[:1].isdigit() or t[:2].lstrip("+-")[:1].isdigit():
            _damaged += 1
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    if v - v == 0.0:
        return v
    _damaged += 1
    return None


def present(**fields: Any) -> dict[str, Any]:
    """The keyword fields that are not None: a damaged field is left out, so the event's default
    applies (never a None where a number is expected)."""
    return {k: v for k, v in fields.items() if v is not None}


_INT_BOUND = 10**MAX_INT_CHARS


def bound_literal(value: Any, depth: int = 0) -> Any:
    """A Python literal read from a log (`ServerArgs(...)`'s values through `ast.literal_eval`)
    with every int bounded: one of more than MAX_INT_CHARS digits (float() of it overflows)
    becomes NaN, counted as damage (floats are floats already, inf included); containers are walked (to a
    bounded depth: deeper ones are returned as they are, they hold no field a rule reads)."""
    global _damaged
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if -_INT_BOUND < value < _INT_BOUND:
            return value
        _damaged += 1
        return NAN
    if isinstance(value, float):
        return value  # inf is a value SGLang prints itself (`max_total_tokens=inf`); float ops take it
    if depth >= 8:
        return value
    if isinstance(value, list):
        return [bound_literal(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(bound_literal(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return {k: bound_literal(v, depth + 1) for k, v in value.items()}
    return value
