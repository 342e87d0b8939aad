"""A disk cache of compiled regular expressions, for start-up.

`re.compile` spends almost all its time in the pure-Python parser and code generator of the `re`
package; the C engine only receives a list of opcodes. The grammar's fast path compiles a few
hundred patterns (terminals, rule alternatives, dispatch alternations) and a short log pays for
that on every run. This module keeps the opcode lists of the patterns compiled by earlier runs
(in the per-user cache directory, keyed by the exact Python build) and rebuilds a pattern from
them with the C constructor, which takes microseconds.

It relies on CPython internals (`re._parser`, `re._compiler`, `_sre.compile`); every use is
guarded, and any mismatch falls back to `re.compile`. `tests/test_recache.py` checks that cached
patterns behave exactly like freshly compiled ones.
"""

from __future__ import annotations

import atexit
import os
import pickle
import re
import sys
from pathlib import Path
from typing import Any

MAX_ENTRIES = 20_000

_cache: dict[tuple[str, int], tuple[Any, ...]] | None = None
_dirty = False
_disabled = os.environ.get("LOGDIAG_NO_RECACHE") == "1"


def _path() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    try:
        import _sre

        magic = getattr(_sre, "MAGIC", 0)
    except ImportError:
        return None
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{magic}"
    return Path(base) / "logdiag" / f"regex-{tag}.pickle"


def _load() -> dict[tuple[str, int], tuple[Any, ...]]:
    global _cache
    if _cache is None:
        _cache = {}
        path = _path()
        if path is not None and path.exists():
            try:
                with open(path, "rb") as fh:
                    data = pickle.load(fh)
                if isinstance(data, dict):
                    _cache = data
            except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
                _cache = {}
        atexit.register(save)
    return _cache


def save() -> None:
    """Write new entries to disk (atomically); called at exit."""
    global _dirty
    if not _dirty or _cache is None:
        return
    path = _path()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as fh:
                pickle.dump(_cache, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
            _dirty = False
        finally:
            if tmp.exists():
                tmp.unlink()
    except (OSError, pickle.PickleError, TypeError):
        pass  # a cache that cannot be written costs only speed


def _entry(pattern: str, flags: int) -> tuple[Any, ...]:
    """What re._compiler.compile hands to _sre.compile, for `pattern`."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    # The opcodes are int subclasses (re's named constants) that do not pickle: keep plain ints.
    code = [int(c) for c in _compiler._code(parsed, flags)]
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (pattern, flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex, tuple(indexgroup))


def compile_cached(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, rebuilt from the disk cache when an earlier run compiled it."""
    global _dirty
    if _disabled:
        return re.compile(pattern, flags)
    cache = _load()
    key = (pattern, flags)
    entry = cache.get(key)
    if entry is None:
        try:
            entry = _entry(pattern, flags)
        except Exception:  # noqa: BLE001 — any internal-API mismatch: use the public API
            return re.compile(pattern, flags)
        if len(cache) >= MAX_ENTRIES:
            cache.clear()
        cache[key] = entry
        _dirty = True
    try:
        import _sre

        return _sre.compile(*entry)  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001
        cache.pop(key, None)
        return re.compile(pattern, flags)
