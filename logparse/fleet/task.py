"""What runs on a worker for one file: the caller's settings applied, bad input caught as a
`FileFailure` (reported, never retried or dropped), everything else left to raise."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from logparse.io.readreport import InputError

# The caller's LOGDIAG_* settings (input-size limits, plugins...) travel with every task: a remote
# worker's environment is not ours, and a local one was started before --max-input-size set them.
ENV_PREFIX = "LOGDIAG_"
# Test hook: a marker file path. The first task to create it kills its worker process (os._exit),
# so the tests can prove that a file whose worker died is retried and still reported once.
CRASH_ONCE_ENV = "LOGDIAG_FLEET_CRASH_ONCE"


@dataclass(frozen=True)
class FileFailure:
    """A file that could not be read: `message` is the one-line reason (`cannot read x: ...`)."""

    path: str
    message: str


class FilesFailed(InputError):
    """Some files failed: every one is in `failures` (input order); str() is one line."""

    def __init__(self, failures: Sequence[FileFailure]) -> None:
        self.failures = list(failures)
        first = self.failures[0].message if self.failures else "no file failed"
        more = len(self.failures) - 1
        super().__init__(first + (f" (and {more} more file{'s' if more != 1 else ''} failed)"
                                  if more > 0 else ""))


@dataclass(frozen=True)
class TaskContext:
    """The caller's working directory and settings, so relative paths and limits mean the same."""

    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)
    crash_marker: str | None = None

    @classmethod
    def here(cls) -> TaskContext:
        env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIX) and k != CRASH_ONCE_ENV}
        return cls(cwd=os.getcwd(), env=env, crash_marker=os.environ.get(CRASH_ONCE_ENV) or None)


def _apply(context: TaskContext) -> None:
    for key in [k for k in os.environ if k.startswith(ENV_PREFIX) and k not in context.env]:
        del os.environ[key]
    os.environ.update(context.env)
    # Why chdir: the caller's relative paths must name the same files (a shared filesystem is
    # assumed; on the worker host a missing directory leaves the cwd and the read fails cleanly).
    try:
        here = os.getcwd()
    except OSError:  # the directory an earlier call left us in was removed
        here = ""
    if here != context.cwd and os.path.isdir(context.cwd):
        os.chdir(context.cwd)


def _crash_once(marker: str) -> None:
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(17)  # a worker dying mid-task, as an OOM kill would


def run_task(fn: Callable[[str], Any], path: str, context: TaskContext) -> Any:
    """Run `fn(path)` on a worker; bad input comes back as a `FileFailure`."""
    _apply(context)
    if context.crash_marker:
        _crash_once(context.crash_marker)
    try:
        return fn(path)
    except InputError as err:
        return FileFailure(path=path, message=str(err))
