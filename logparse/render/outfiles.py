"""Writing outputs without surprises on disk: never over an input, never through a symlink, never
over or deleting a file logdiag did not write.

A Markdown report's plots go to `NAME-plots/`, a folder that may hold the user's own files. logdiag
records what it wrote there (name and sha256) in `NAME-plots/.logdiag-plots.json` and overwrites
a plot only when the file on disk is still exactly what it recorded; everything else (a user's
file, a symlink, an edited plot) is refused, never replaced. Nothing is ever deleted except this
run's own temporary files: a plot an earlier report wrote and this one does not need stays
(the report no longer refers to it; it stays recorded as logdiag's, so a later run may replace it).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

MANIFEST = ".logdiag-plots.json"


class OutputError(Exception):
    """An output that would overwrite or delete what logdiag must not touch (exit 2)."""


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def overwritten_input(output: str, inputs: Iterable[str]) -> str | None:
    """The input file that writing `output` would overwrite (the same file, also through links),
    or None."""
    out = _identity(output)
    if out is None:
        return None
    for path in inputs:
        if path != "-" and _identity(path) == out:
            return path
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_manifest(folder: Path) -> dict[str, str]:
    """{file name: sha256} of what logdiag wrote into the folder; empty when absent or not ours."""
    path = folder / MANIFEST
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 1 << 20:
            return {}
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str) and "/" not in k}


def file_digest(path: Path) -> str | None:
    """The sha256 of a regular file (not following a symlink), None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 16):
            h.update(chunk)
        return h.hexdigest()
    finally:
        os.close(fd)


def _write_new(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename: the target, if any, is replaced, never written
    through (a symlink planted after the checks would be replaced, its target untouched)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)  # this run's own temporary file
        except OSError:
            pass
        raise


def make_output_folder(folder: Path, what: str) -> None:
    """Create `folder` for logdiag's output files (`what`: plots, a dataset), refusing a symlink
    or a non-folder in its place (OutputError, nothing written)."""
    if folder.is_symlink():
        raise OutputError(f"{folder} is a symbolic link: logdiag writes {what} only into a real folder")
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(f"cannot create {folder}: {err.strerror or err}") from err


def write_plots(folder: Path, files: Mapping[str, str], inputs: Iterable[str] = ()) -> None:
    """Write `files` ({file name: text}) into `folder`, recording them in its manifest. Raises
    OutputError before writing anything when a target is not logdiag's to replace."""
    inputs = list(inputs)
    make_output_folder(folder, "plots")
    manifest = _read_manifest(folder)
    encoded = {name: text.encode("utf-8") for name, text in files.items()}
    for name in encoded:
        target = folder / name
        if not os.path.lexists(target):
            continue
        if target.is_symlink():
            raise OutputError(f"refusing to replace the symbolic link {target}")
        if overwritten_input(str(target), inputs):
            raise OutputError(f"refusing to overwrite the input {target}")
        digest = file_digest(target)
        if digest is None or manifest.get(name) != digest:
            raise OutputError(
                f"refusing to overwrite {target}: logdiag did not write it (or it was changed since); "
                "remove it or choose another -o"
            )
    for name, data in encoded.items():
        try:
            _write_new(folder / name, data)
        except OSError as err:
            raise OutputError(f"cannot write {folder / name}: {err.strerror or err}") from err
        manifest[name] = _sha256(data)
    doc = json.dumps({"written_by": "logdiag", "files": dict(sorted(manifest.items()))}, indent=2) + "\n"
    mpath = folder / MANIFEST
    if os.path.lexists(mpath) and (mpath.is_symlink() or not mpath.is_file()):
        raise OutputError(f"refusing to replace {mpath}: not a regular file")
    try:
        _write_new(mpath, doc.encode("utf-8"))
    except OSError as err:
        raise OutputError(f"cannot write {mpath}: {err.strerror or err}") from err
