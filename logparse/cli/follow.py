"""`logdiag follow LOG`: follow a server log live until it is ready, crashes or times out.

Exit codes: 0 ready (or stopped cleanly with --until exit); 1 crashed (the root cause printed) or
the input ended before the server was ready; 2 usage or input error; 3 internal error; 4 timeout.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

import click


def _health_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.BadParameter(f"not an http(s) URL: {value}")
    return value


def _check_input(path: str) -> None:
    """Exit 2 now for what cannot be followed: a directory, an unreadable or binary file, gzip (a
    compressed file does not grow line by line). A file that does not exist yet is waited for; an
    empty one is fine (just created)."""
    from logparse.cli.main import fail
    from logparse.io.gunzip import GZIP_MAGIC
    from logparse.io.reader import InputError, check_readable

    if path == "-" or not os.path.exists(path):
        return
    if os.path.isdir(path):
        fail(f"cannot follow {path}: it is a directory")
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        try:
            check_readable(path)
            with open(path, "rb") as f:
                if f.read(2) == GZIP_MAGIC:
                    fail(
                        f"cannot follow {path}: a gzip file does not grow line by line (use logdiag analyze)"
                    )
        except InputError as err:
            fail(str(err))
        except OSError as err:
            fail(f"cannot read {path}: {err.strerror or err}")


@click.command("follow", epilog="""\b
Examples:
  logdiag follow server.log --timeout 900
  python -m sglang.launch_server ... 2>&1 | logdiag follow -
  logdiag follow server.log --health http://localhost:30000/health
  logdiag follow server.log --until exit --format json""")
@click.argument("path")
@click.option(
    "--until",
    type=click.Choice(["ready", "exit"]),
    default="ready",
    show_default=True,
    help="ready: exit 0 once the server is ready; exit: keep following while it serves, until it stops.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Give up after SECONDS (exit 4), saying where each rank is and how long it has been silent.",
)
@click.option(
    "--health",
    metavar="URL",
    callback=_health_url,
    default=None,
    help="Also require URL to answer 200 (polled once the log shows the HTTP server started).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: live lines on a terminal, plain lines otherwise; json: one JSON object per event.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0.01, max=60),
    default=0.25,
    show_default=True,
    metavar="SECONDS",
    help="How often to check a file for new lines.",
)
def follow(
    path: str, until: str, timeout: float | None, health: str | None, fmt: str, poll: float
) -> None:
    """Follow LOG (a file, which may not exist yet, or - for stdin) as it grows and exit with an
    answer: 0 ready, 1 crashed (with the root cause and fix), 4 timed out. (--until here is when
    to stop, not a time window: follow reads a live log from its start.)
    """
    from logparse.follow.render import JsonRenderer, PlainRenderer, TtyRenderer
    from logparse.follow.session import Options, Session

    _check_input(path)
    out = sys.stdout
    renderer: JsonRenderer
    if fmt == "json":
        renderer = JsonRenderer(out)
    elif out.isatty() and os.environ.get("TERM") != "dumb" and not os.environ.get("CI"):
        import shutil

        renderer = TtyRenderer(out, shutil.get_terminal_size((100, 24)).columns)
    else:
        renderer = PlainRenderer(out)
    session = Session(
        path, Options(until=until, timeout=timeout, health=health, poll=poll), renderer
    )
    code = session.run()
    stdout, stderr = sys.__stdout__, sys.__stderr__
    if stdout is not None and stderr is not None and sys.stdout is stdout and sys.stderr is stderr:
        # The answer is out; skip the interpreter's finalization (0.1-0.2 s of module and object
        # teardown), because the caller is waiting on this exit to go on. Only in a real process
        # (not under click's CliRunner), and only after everything written is flushed.
        try:
            stdout.flush()
            stderr.flush()
        except OSError:
            pass
        else:
            os._exit(code)
    sys.exit(code)
