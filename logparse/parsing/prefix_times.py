"""An SGLang envelope prefix's (epoch time, rank) without re-reading the whole prefix.

`[2025-06-18 12:34:56 DP0 TP3] ` changes on ~40 % of hot lines (the seconds tick), so a cache
keyed by the whole prefix misses that often, and each miss re-read the envelope and the
timestamp text. The plain form splits into the date-time (`YYYY-MM-DD HH:MM:SS`, optionally
`.fff` / `,fff`) and the tail after it (rank tags, `] `, level ...): the tail repeats, so its rank
is cached; the minute repeats for 60 s, so its epoch is cached and the seconds (and fraction)
are added.

Exactness: `TimeCache.epoch` computes a plain stamp as `day + (h*3600 + m*60 + s) + frac`,
where `day` is a whole number of seconds: every partial sum is an integer below 2**53, so
`epoch(minute + ':00') + s + frac` is the same float64 (tests/test_prefix_times.py checks every
second of days around DST changes and leap days). A tail is trusted only after the general
path (the envelope callback) read a prefix with it and returned exactly the date-time text
this module cuts out; anything else goes through the general path every time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

# The one prefix terminal whose callback (`EnvelopeCallbacks.sglang_prefix`) reads the
# date-time at a fixed place and the rank from the text after it only.
PLAIN_PREFIX = "SGLANG_PREFIX"
_TAILS_MAX = 4096
_MINUTES_MAX = 4096
_UNTRUSTED = object()  # a tail the general path does not read as `date-time + rank tags`
_MISSING = object()

Resolved = tuple[float | None, str | None]


def general_resolver(prefix: str, envelope: Callable[[str, str], Any],
                     epoch: Callable[[str | None], float]) -> Callable[[str], Resolved]:
    """Any prefix: the envelope callback, then the timestamp text's epoch."""

    def resolve(text: str) -> Resolved:
        env = envelope(prefix, text)
        return (None if env.ts is None else epoch(env.ts), env.rank)

    return resolve


def split_resolver(prefix: str, envelope: Callable[[str, str], Any],
                   epoch: Callable[[str | None], float]) -> Callable[[str], Resolved]:
    """The plain SGLang prefix by its parts (see the module doc); the general path otherwise."""
    general = general_resolver(prefix, envelope, epoch)
    if prefix != PLAIN_PREFIX:
        return general
    tails: dict[str, Any] = {}  # text after the date-time (and fraction) -> rank text | _UNTRUSTED
    minutes: dict[str, float] = {}  # 'YYYY-MM-DD HH:MM' -> epoch of its second 0

    def resolve(text: str) -> Resolved:
        # `[YYYY-MM-DD HH:MM:SS` then ' ' / ']' (plain) or '.fff' / ',fff' (milliseconds).
        if len(text) < 21 or text[0] != "[":
            return general(text)
        mark = text[20]
        if mark == " " or mark == "]":
            cut, frac = 20, None
        elif mark == "." or mark == ",":
            cut, frac = 24, text[21:24]
        else:
            return general(text)
        tail = text[cut:]
        rank = tails.get(tail, _MISSING)
        if rank is _MISSING:
            if len(tails) >= _TAILS_MAX:
                tails.clear()
            env = envelope(prefix, text)
            stamp = text[1:20] if frac is None else f"{text[1:20]}.{frac}"
            rank = tails[tail] = env.rank if env.ts == stamp else _UNTRUSTED
        if rank is _UNTRUSTED:
            return general(text)
        minute = text[1:17]
        base = minutes.get(minute)
        if base is None:
            if len(minutes) >= _MINUTES_MAX:
                minutes.clear()
            base = minutes[minute] = epoch(minute + ":00")
        if base != base:
            return (math.nan, rank)
        try:
            seconds = int(text[18:20])
        except ValueError:
            return general(text)
        if frac is None:
            return (base + seconds, rank)
        return (base + seconds + float("0." + frac), rank)

    return resolve

