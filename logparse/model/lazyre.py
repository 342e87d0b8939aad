"""Regex patterns compiled on first use.

The rule catalog and the callbacks define ~150 module-level patterns; compiling them all at import
cost a measurable share of the start-up of a short run, though most runs use few of them.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """Behaves like the compiled pattern (`.search`, `.match`, `.sub`, `.pattern`, ...)."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(*self._args)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._args[0]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile`, deferred to the first use (typed as a Pattern for callers)."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]
