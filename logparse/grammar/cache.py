"""The per-user cache of the grammar's derived data: lark's parse tables, the fast path's data and
the message catalog's parsed TOML (`read_data`/`write_data`: JSON, keyed by the sources' content).

Only a folder and files owned by the user and not writable by others are read (lark's cache is a
pickle: loading a planted one would run code); the key covers the grammar text, the installed lark
and logdiag's own code, so another logdiag never reads this one's cache.

The key is made of *contents*, never of file dates: reinstalling the same logdiag (a new wheel, a
fresh checkout, `touch`) keeps its cache, so the first run after an install does not rebuild lark's
tables (which cost 20–90 s while lark still ran its collision check, see `build.build_lark`)."""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# Bump when FastPathData changes shape: the per-user cache is keyed by it.
FASTPATH_FORMAT = 6  # 4: JSON instead of a pickle; 5: open_firsts; 6: required literals
# The modules whose code shapes the cached data: a change to any of them is a new key.
_KEYED_MODULES = ("build.py", "fastpath.py", "patterns.py", "cache.py")


def _private_folder() -> str | None:
    """The per-user cache folder, only when it is safe to read from: owned by this user and not
    writable by group or others (then nobody else can plant or swap a file in it). Not the shared
    temp directory: another user could plant a cache file there."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "logdiag")  # os.path, not pathlib: pathlib costs start-up
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder)
    except OSError:
        return None
    if not _owned_and_private(st) or not os.access(folder, os.W_OK):
        return None
    return folder


def _owned_and_private(st: os.stat_result) -> bool:
    """Owned by the current user (where the platform has users) and not group/world-writable."""
    getuid = getattr(os, "getuid", None)
    if getuid is not None and st.st_uid != getuid():
        return False
    return not st.st_mode & 0o022


def _safe_to_load(path: str) -> bool:
    """A cache file may be read: a regular file (not a symlink), ours, not writable by others."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and _owned_and_private(st)


def content_key(parts: Iterable[bytes]) -> str:
    """A checksum of `parts` (in order) for naming cache entries: CRC-32 and Adler-32 side by side
    plus the total length, 64+ bits. Not a security boundary (the folder is private, see
    `_private_folder`), only a name that changes with the content; zlib is already loaded by the
    reader (gzip inputs), while hashlib would load OpenSSL (~10 ms of a short run's start-up)."""
    crc, adler, size = 0, 1, 0
    for part in parts:
        # Each part's length goes in too, so moving bytes from one part to the next is another key.
        head = f"{len(part)}:".encode()
        crc = zlib.crc32(part, zlib.crc32(head, crc))
        adler = zlib.adler32(part, zlib.adler32(head, adler))
        size += len(part)
    return f"{crc:08x}{adler:08x}{size:x}"


def files_key(tag: str, paths: Sequence[str], parts: Callable[[], Iterable[bytes]]) -> str:
    """`content_key(parts())` for data derived from the files at `paths`, without reading them when
    they have not changed since a run computed it: the files' identity and change stamps (size,
    mtime, ctime, inode: what any edit, copy or reinstall changes) name a small entry that holds
    the content key. The content stays the key (a reinstall of the same files computes the same
    one, so the derived data is kept); the stamps only spare reading ~1 MB of templates on each
    run's first unparsed line (~6 ms of a 150 ms run). A file that cannot be stat'ed, or no cache
    folder, means reading the contents as before."""
    stamps: list[bytes] = [tag.encode()]
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return content_key(parts())
        stamps.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}"
                      .encode("utf-8", "surrogatepass"))
    fingerprint = content_key(stamps)
    known = read_data("filekeys", fingerprint)
    if isinstance(known, str) and known:
        return known
    key = content_key(parts())
    write_data("filekeys", fingerprint, key)
    return key


def _read_bytes(file: str) -> bytes:
    try:
        with open(file, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _cache_path(text: str, strict: bool) -> str | None:
    """The per-user cache file stem for this grammar, lark and logdiag (2–3× faster start-up)."""
    folder = _private_folder()
    if folder is None:
        return None
    # Key the cache by the installed lark and by logdiag itself (its version and the code of the
    # modules that shape the data), without importing lark (that is what the cache saves): lark's
    # `__init__.py` holds its version. Contents, not paths or dates, so that reinstalling the same
    # code keeps the cache (lark checks its own pickle's grammar, options and version on load).
    import importlib.util

    from logparse._version import __version__

    spec = importlib.util.find_spec("lark")
    origin = spec.origin if spec is not None and spec.origin else ""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = [f"{FASTPATH_FORMAT}|{__version__}|{strict}".encode(), _read_bytes(origin) if origin else b""]
    parts += [_read_bytes(os.path.join(here, name)) for name in _KEYED_MODULES]
    parts.append(text.encode("utf-8", "surrogatepass"))
    return os.path.join(folder, f"grammar-{content_key(parts)[:20]}.lark-cache")


def _data_path(folder: str, name: str, key: str) -> str:
    # One file per key (its first 20 characters in the name): two checkouts with different
    # sources each keep their own instead of overwriting each other's on every run.
    return os.path.join(folder, f"{name}-{key[:20]}.json")


def read_data(name: str, key: str) -> Any:
    """The JSON value cached under `name` for `key` (a hex digest of the sources), or None (no
    cache, another key, damage). Data only: reading it runs no code; a file someone else could
    have written is not read."""
    import json

    folder = _private_folder()
    if folder is None:
        return None
    path = _data_path(folder, name, key)
    if not _safe_to_load(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.loads(fh.read(1 << 24))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    return doc.get("data")


def write_data(name: str, key: str, data: Any) -> None:
    """Cache a JSON value under `name` for `key`. Best effort: a value JSON cannot hold or an
    unwritable folder only costs speed. Files of the same name written over a week ago are removed
    (each edit of the sources makes a new key)."""
    import json

    folder = _private_folder()
    if folder is None:
        return
    path = _data_path(folder, name, key)
    _prune(folder, name)
    try:
        text = json.dumps({"key": key, "data": data})
    except (TypeError, ValueError):
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


_PRUNE_AFTER_S = 7 * 24 * 3600


def _prune(folder: str, name: str) -> None:
    import time

    cutoff = time.time() - _PRUNE_AFTER_S
    try:
        files = [os.path.join(folder, n) for n in os.listdir(folder)
                 if n.startswith(f"{name}-") and n.endswith(".json")]
    except OSError:
        return
    for path in files:
        try:
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            pass
