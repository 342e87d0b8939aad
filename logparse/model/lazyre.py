"""Regex patterns compiled on first use.

The rule catalog and the callbacks define ~150 module-level patterns; compiling them all at import
cost a measurable share of the start-up of a short run, though most runs use few of them.
"""

from __future__ import annotations

import re
from typing import Any

# What callers read from a pattern: bound to the instance at the first use, so that later reads
# are plain attribute reads (no Python-level call per `.match` on a per-line path).
_FORWARDED = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
              "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """Behaves like the compiled pattern (`.search`, `.match`, `.sub`, `.pattern`, ...)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the instance does not hold yet: the first use, or a rare attribute.
        if name.startswith("__") or name == "_args":
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(*self._args)
            self.__dict__["_compiled"] = compiled
            for attr in _FORWARDED:
                self.__dict__[attr] = getattr(compiled, attr)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._args[0]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile`, deferred to the first use (typed as a Pattern for callers)."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]
