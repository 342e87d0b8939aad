"""The one CLI convention: how every command takes its inputs and its shared options.

- Inputs (`resolve_inputs`): files (plain or .gz), directories (every *.log, *.log.gz, *.txt,
  *.txt.gz inside, recursively), glob patterns expanded by logdiag itself (so a quoted
  'logs/**/*.log' works, as does an unquoted one), and `-` for stdin. A missing, unreadable,
  binary or empty input — an empty file and an empty stdin alike — is one line, exit 2: a log with
  no line in it is nearly always the wrong file or a server that never started writing.
- `--jobs N` (`jobs_option`): at most N processes; the default is the same everywhere, 2 on a
  machine with 2+ cores, else 1. Work below 8 MiB (one small file, or several small files in
  total) stays in one process, because a worker's start-up costs more than it saves.
- `--since` / `--until` (`window_options`): a time window, `model/window.py`.
- `--no-redact` (`no_redact_option`), and an "Examples:" block in every command's `--help`
  (`examples`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from logparse.model.window import TimeWindow

__all__ = [
    "effective_jobs",
    "examples",
    "expand_globs",
    "expand_inputs",
    "jobs_default",
    "jobs_option",
    "no_redact_option",
    "paths_argument",
    "resolve_inputs",
    "unreadable",
    "window_from",
    "window_options",
]

F = TypeVar("F", bound=Callable[..., Any])

INPUTS_HELP = ("PATHS are files (plain or .gz), directories (every *.log, *.log.gz, *.txt inside, "
               "recursively), glob patterns (expanded by logdiag, so quoted globs work) or - for stdin.")
JOBS_DEFAULT_TEXT = "2 on 2+ cores"
# The same threshold as the byte-range split (parsing/pipeline.py PARALLEL_MIN_BYTES).
_POOL_MIN_BYTES = 8 * 1024 * 1024


def _fail(message: str) -> Any:
    from logparse.cli.main import fail

    fail(message)


def expand_globs(paths: Sequence[str]) -> list[str]:
    """Expand glob patterns ourselves (a quoted glob reaches us unexpanded); an existing path
    is taken literally even if it contains glob characters. A pattern matching nothing is exit 2."""
    import glob  # only here: start-up of a short `analyze` pays for every import

    out: list[str] = []
    for p in paths:
        if p == "-" or os.path.exists(p) or not glob.has_magic(p):
            out.append(p)
            continue
        matches = sorted(glob.glob(p, recursive=True))
        if not matches:
            _fail(f"no files match {p}")
        out.extend(matches)
    return out


def expand_inputs(paths: Sequence[str]) -> list[str]:
    """Globs, then directories, without looking inside the files; one line and exit 2 when a
    path names nothing (a pattern matching nothing, a missing path, a folder without logs)."""
    from logparse.cli.startup import inputs_known
    from logparse.io.reader import InputError, expand_paths

    try:
        files = expand_paths(expand_globs(paths))
    except InputError as err:
        return _fail(str(err))  # type: ignore[no-any-return]
    inputs_known(files)  # a long run gets the garbage collector back before any line is read
    return files


def unreadable(path: str) -> str | None:
    """Why one expanded input cannot be read (empty, binary, permission, corrupt gzip, too
    large: the reader's one line), or None."""
    from logparse.io.reader import InputError, check_readable

    try:
        check_readable(path)
    except InputError as err:
        return str(err)
    return None


def resolve_inputs(paths: Sequence[str]) -> list[str]:
    """Globs, then directories; check every file; one clear line and exit 2 on the first bad
    input. The one owner of "which files does this command read" for every command."""
    files = expand_inputs(paths)
    for f in files:
        error = unreadable(f)
        if error is not None:
            _fail(error)
    return files


def paths_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("paths", nargs=-1, required=required, metavar="PATHS...")


def jobs_default() -> int:
    """The one --jobs default: 2 on a machine with 2+ cores, else 1."""
    return max(1, min(2, os.cpu_count() or 1))


def jobs_option(help_text: str = "Processes: several files in parallel; one large plain file is "
                "split by byte ranges (work below 8 MiB stays in one process).") -> Callable[[F], F]:
    return click.option("--jobs", type=click.IntRange(1, 64), default=jobs_default,
                        show_default=JOBS_DEFAULT_TEXT, help=help_text)


def effective_jobs(jobs: int, files: Sequence[str]) -> int:
    """--jobs for a pool across files: 1 when the files are small in total (a worker's start-up
    would cost more than it saves; the result is the same either way)."""
    if jobs <= 1:
        return 1
    total = 0
    for f in files:
        try:
            total += os.path.getsize(f) if f != "-" else 0
        except OSError:
            continue
        if total >= _POOL_MIN_BYTES:
            return jobs
    return 1


def no_redact_option(f: F) -> F:
    return click.option("--no-redact", is_flag=True,
                        help="Keep API keys, tokens and passwords (redacted by default).")(f)


def window_from(since: str | None, until: str | None) -> TimeWindow | None:
    """The window of --since/--until (None: neither given); a bad value is one line, exit 2."""
    if since is None and until is None:
        return None
    from logparse.model.window import WindowError, window_of

    try:
        return window_of(since, until)
    except WindowError as err:
        return _fail(str(err))  # type: ignore[no-any-return]


WINDOW_HELP = (
    "Only lines at or after TIME: 2025-01-01 12:00:00 (as SGLang prints it, [brackets] and a zone "
    "allowed), 12:00 (that time of day, the latest at or before the log's end), or relative to the "
    "log's LAST timestamp (not now): 2h, 30m, 1d, 1h30m. Untimestamped lines go with the line "
    "before them; lines outside are counted, not dropped silently.")


def window_options(f: F) -> F:
    """--since / --until; the command receives `window` (a TimeWindow or None) instead."""

    @functools.wraps(f)
    def wrapper(*args: Any, since: str | None = None, until: str | None = None, **kwargs: Any) -> Any:
        return f(*args, window=window_from(since, until), **kwargs)

    wrapper = click.option("--until", "until", metavar="TIME", default=None,
                           help="Only lines at or before TIME (same forms as --since; 30m = the "
                                "log's last 30 minutes left out).")(wrapper)
    wrapper = click.option("--since", "since", metavar="TIME", default=None, help=WINDOW_HELP)(wrapper)
    return wrapper  # type: ignore[return-value]


def examples(*lines: str, more: str = "") -> str:
    """A `--help` epilog: an "Examples:" block click prints as written (one command a line)."""
    body = "\n".join(f"  {line}" for line in lines)
    return "\b\nExamples:\n" + body + (f"\n\n{more}" if more else "")
