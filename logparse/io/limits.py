"""Input limits: how much text one source may produce and how far a gzip stream may expand.

Endless or exploding inputs (a `yes |` pipe, a gzip bomb of empty lines) must end with a clear
error instead of eating memory and time. Both limits are read from the environment at read time
(the CLI's `--max-input-size` sets the variable, so worker processes inherit it).
"""

from __future__ import annotations

import math
import os
import re

from logparse.model.lazyre import lazy_compile

__all__ = [
    "DEFAULT_MAX_INPUT",
    "DEFAULT_MAX_RATIO",
    "MAX_INPUT_ENV",
    "MAX_RATIO_ENV",
    "RATIO_FLOOR",
    "max_input_bytes",
    "max_ratio",
    "parse_size",
]

MAX_INPUT_ENV = "LOGDIAG_MAX_INPUT_SIZE"
MAX_RATIO_ENV = "LOGDIAG_MAX_GZIP_RATIO"
# 16 GiB of (decompressed) text: far above a real run's log, far below "never finishes".
DEFAULT_MAX_INPUT = 16 << 30
# Real SGLang logs gzip 5-30x (timestamps and numbers differ per line); deflate's maximum is
# ~1030x, reached only by runs of identical bytes such as a bomb of empty lines.
DEFAULT_MAX_RATIO = 250.0
# The ratio is judged only after this much output (a tiny, very regular file is not a bomb);
# small, because parsing a megabyte of empty lines alone takes many seconds.
RATIO_FLOOR = 64 << 10

_SIZE_RE = lazy_compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(text: str) -> int:
    """'123', '64M', '16G', '1.5GiB' → bytes; '0' means no limit. ValueError otherwise."""
    m = _SIZE_RE.fullmatch(text)
    if not m or len(m[1]) > 20:
        raise ValueError(f"not a size: {text!r} (e.g. 500M, 16G)")
    return int(float(m[1]) * _UNITS[m[2].lower()])


def max_input_bytes() -> int | None:
    """The limit on text bytes per source (None: unlimited). A bad variable is a ValueError."""
    raw = os.environ.get(MAX_INPUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_INPUT
    value = parse_size(raw)
    return value or None


def max_ratio() -> float | None:
    """The limit on decompressed/compressed size of a gzip source (None: unlimited)."""
    raw = os.environ.get(MAX_RATIO_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_RATIO
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{MAX_RATIO_ENV} must be a number, not {raw!r}") from None
    if math.isnan(value) or value < 0:
        raise ValueError(f"{MAX_RATIO_ENV} must be a number >= 0, not {raw!r}")
    return value or None
