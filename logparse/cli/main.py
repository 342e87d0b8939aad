"""The `logdiag` command line. Every command is thin: parse options, call the API, render.

Exit codes: 0 ok; 1 findings at or above --fail-on (check); 2 usage or input error;
3 internal error (a bug in logdiag: rerun with LOGDIAG_DEBUG=1 for the traceback).
"""

from __future__ import annotations

# First, before click and the rest: the garbage collector stays off while the CLI's modules load
# (cli/startup.py; the imports below come after this call on purpose, hence E402).
from logparse.cli.startup import command_done, command_starts, freeze_for_exit, pause_gc, resume_gc

pause_gc()

import codecs  # noqa: E402
import errno  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import TYPE_CHECKING, Any, NoReturn  # noqa: E402

import click  # noqa: E402

from logparse._version import __version__  # noqa: E402
from logparse.cli.options import (  # noqa: E402
    examples,
    jobs_option,
    no_redact_option,
    paths_argument,
    resolve_inputs,  # re-exported: the other command modules import it from here
    window_options,
)
from logparse.cli.textopts import text_layout, text_options  # noqa: E402
from logparse.io.reader import InputError  # noqa: E402

if TYPE_CHECKING:
    from logparse.model.window import TimeWindow

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

# Encoding error handler for every output (stdout, -o files): a file name that is not UTF-8
# reaches us surrogate-escaped; it is written as U+FFFD, which stays valid in text, JSON, SARIF,
# XML and HTML alike, instead of failing the run.
OUTPUT_ERRORS = "logdiag-replace"


def _replace_unencodable(err: UnicodeError) -> tuple[bytes, int]:
    if isinstance(err, UnicodeEncodeError):
        # Bytes: CPython's UTF-8 encoder accepts only ASCII *text* from a handler.
        return "\ufffd".encode(err.encoding, "replace") * (err.end - err.start), err.end
    raise err


codecs.register_error(OUTPUT_ERRORS, _replace_unencodable)


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    from logparse.render.neutral import one_line
    from logparse.render.redact import redact_text

    # One line whatever the message holds (a file name with a newline must not start a CI command);
    # an exception's message can quote the log, so secrets are masked here too.
    click.echo(f"logdiag: {one_line(redact_text(message))}", err=True)
    sys.exit(code)


def refuse_overwrite(outputs: list[str], inputs: list[str]) -> None:
    """Exit 2 before any work when an output file is one of the inputs (also through a link)."""
    from logparse.render.outfiles import overwritten_input

    for out in outputs:
        hit = overwritten_input(out, inputs)
        if hit is not None:
            fail(f"refusing to write {out}: it is the input {hit}")


class _ClosedStream(io.TextIOBase):
    """Stands in for a stdout that was closed before start (`>&-`): writing is an error, not
    silently nothing."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")


def _silence_stdout() -> None:
    # Whatever is still buffered cannot be written: point fd 1 at /dev/null so the interpreter's
    # final flush neither fails again nor changes the exit code.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _output_failed(err: OSError) -> NoReturn:
    _silence_stdout()
    fail(f"cannot write output: {err.strerror or err}")


def _usage_line(err: click.UsageError) -> str:
    """A usage error as one line: the problem and where to read more."""
    names: list[str] = []
    ctx = err.ctx
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    command = " ".join(["logdiag", *reversed(names)])
    return f"{err.format_message()} (see: {command} --help)"


# click >= 8.2 raises this for a bare `logdiag` (8.1 prints the help itself).
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(click.Group):
    """Turns unexpected exceptions into one line (exit 3) instead of a traceback, and every usage,
    input and environment problem (a closed or full stdout, a bad option) into one line, exit 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        if sys.stdout is None:
            sys.stdout = _ClosedStream()
        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors=OUTPUT_ERRORS)
        kwargs["standalone_mode"] = False
        command_starts()
        try:
            code = super().main(*args, **kwargs)
        except _NO_ARGS_IS_HELP as err:
            click.echo(err.ctx.get_help() if err.ctx is not None else err.format_message(), err=True)
            code = EXIT_INPUT
        except click.UsageError as err:
            fail(_usage_line(err))
        except click.ClickException as err:
            fail(err.format_message())
        except click.exceptions.Abort:
            fail("interrupted", 130)
        except SystemExit as done:
            code = done.code
        finally:
            command_done()
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        except OSError as err:
            _output_failed(err)
        sys.exit(code if isinstance(code, int) else EXIT_OK)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name not in SHORT_RUN_COMMANDS:
            resume_gc()  # it does not tell cli/startup.py its inputs: no pause for it
        return name, command, rest

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except InputError as err:
            fail(str(err))
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except BrokenPipeError:
            _silence_stdout()
            sys.exit(EXIT_OK)
        except OSError as err:
            # Input errors arrive as InputError; an OSError here is the environment: stdout full
            # (/dev/full), closed, or a write that failed.
            _output_failed(err)
        except Exception as err:
            if os.environ.get("LOGDIAG_DEBUG"):
                raise
            fail(f"internal error: {type(err).__name__}: {err} (rerun with LOGDIAG_DEBUG=1 for details)", EXIT_INTERNAL)


def _max_input_size(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Validate --max-input-size and hand it to the reader through the environment (worker
    processes inherit it)."""
    if value is None:
        return None
    from logparse.io.limits import MAX_INPUT_ENV, parse_size

    try:
        parse_size(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None
    os.environ[MAX_INPUT_ENV] = value
    return value


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="logdiag", message="%(prog)s %(version)s")
@click.option("--max-input-size", metavar="SIZE", callback=_max_input_size, expose_value=False,
              help="Stop with exit 2 on an input (decompressed) larger than SIZE, e.g. 64G; 0: no limit. "
                   "[default: 16G, or LOGDIAG_MAX_INPUT_SIZE]")
def main() -> None:
    """logdiag: read SGLang server logs and say what happened.

    \b
    Exit codes: 0 ok; 1 findings at or above --fail-on (check);
    2 usage or input error; 3 internal error.
    """


@main.command(epilog=examples(
    "logdiag analyze run.log",
    "logdiag analyze run.log --format json",
    "logdiag analyze run.log --wide",
    "logdiag analyze logs/ other.log.gz -",
    "logdiag analyze 'logs/**/*.log' --since 2h",
    "logdiag analyze node0.log node1.log --run",
))
@paths_argument()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@jobs_option()
@no_redact_option
@click.option("--run", "one_run", is_flag=True,
              help="The files are one run (per node or per rank): merge them by timestamp and analyze them as one.")
@window_options
@text_options
def analyze(paths: tuple[str, ...], fmt: str, jobs: int, no_redact: bool = False, one_run: bool = False,
            window: TimeWindow | None = None, wide: bool = False, color: bool | None = None) -> None:
    """Analyze logs: outcome, root cause, startup, serving, benchmarks, coverage.

    PATHS are files (plain or .gz), directories (every *.log, *.log.gz, *.txt inside, recursively),
    glob patterns (expanded by logdiag, so quoted globs work) or - for stdin.
    """
    from logparse.engine.core import analyze as run

    files = resolve_inputs(paths)
    if one_run and len(files) > 1:
        from logparse.engine.core import analyze_log
        from logparse.parsing.pipeline import parse_file
        from logparse.run.merge import merge_logs

        if window is not None and window.needs_clock:
            # The run is the clock: `--since 3m` is the run's last 3 minutes on every node, not
            # each file's own (a node that went quiet after start-up kept its start-up).
            from logparse.parsing.window import last_moment

            moments = [m for f in files if (m := last_moment(parse_file(f, jobs=jobs))) is not None]
            if moments:
                from logparse.model.window import WindowError

                try:
                    window = window.anchored(max(moments))
                except WindowError as err:
                    fail(str(err))
        analyses = [analyze_log(merge_logs([parse_file(f, jobs=jobs, window=window) for f in files]))]
    else:
        analyses = [run(f, jobs=jobs, window=window) for f in files]
    freeze_for_exit()
    if fmt == "json":
        from logparse.render.json import write

        # Streamed: the whole text of a large log's document is never held at once.
        # sys.stdout is the stream `main` gave the OUTPUT_ERRORS handler (click.echo writes there too).
        write(analyses, sys.stdout, redact=not no_redact)
        sys.stdout.flush()
    else:
        from logparse.render.text import render as render_text

        width, paint = text_layout(wide, color)
        click.echo(render_text(analyses, redact=not no_redact, width=width, color=paint),
                   nl=False, color=paint or None)  # click strips colour off a non-terminal


def _event_kinds() -> list[str]:
    from logparse.model.events import EVENT_CLASSES

    return sorted(EVENT_CLASSES)


def _rows(path: str, kind: str, jobs: int, window: TimeWindow | None = None) -> Iterator[dict[str, Any]]:
    from logparse.parsing.pipeline import parse_file

    log = parse_file(path, jobs=jobs, window=window)
    columns: dict[str, Any] = {"decode_batch": log.decode, "prefill_batch": log.prefill, "http_access": log.access}
    if kind in columns:
        for e in columns[kind].iter_events(log.path):
            yield e.as_dict()
        return
    for e in log.events:
        if e.kind == kind:
            yield e.as_dict()


def _flatten(row: dict[str, Any]) -> dict[str, Any]:
    import json

    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = json.dumps(v2) if isinstance(v2, (dict, list)) else v2
        elif isinstance(v, list):
            out[k] = json.dumps(v, default=str)
        else:
            out[k] = v
    return out


@main.command(epilog=examples(
    "logdiag events run.log --kind decode_batch --format csv",
    "logdiag events logs/ --kind traceback --format jsonl",
    "logdiag events run.log --kind decode_batch --since '2025-01-01 12:00:00' --until 12:30",
    "logdiag events --kind list",
))
@paths_argument(required=False)
@click.option("--kind", required=True, help="Event kind, e.g. decode_batch, prefill_batch, http_access, traceback, "
              "capture_end, weight_load_end, bench_serving_result. `--kind list` shows all (no PATHS needed).")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True)
@jobs_option()
@no_redact_option
@window_options
def events(paths: tuple[str, ...], kind: str, fmt: str, jobs: int, no_redact: bool = False,
           window: TimeWindow | None = None) -> None:
    """Export one event table of logs as CSV or JSON lines (secrets redacted; CSV cells never
    start a spreadsheet formula). Every row names its source file.

    PATHS are files (plain or .gz), directories (every *.log, *.log.gz, *.txt inside, recursively),
    glob patterns (expanded by logdiag, so quoted globs work) or - for stdin.
    """
    import csv
    import io
    import json

    kinds = _event_kinds()
    if kind == "list":
        click.echo("\n".join(kinds))
        return
    if kind not in kinds:
        fail(f"unknown event kind '{kind}' (see: logdiag events --kind list)")
    if not paths:
        fail("missing PATHS: the logs to export (see: logdiag events --help)")
    # A directory: every log in it (each row names its source), never just the first one.
    files = resolve_inputs(paths)
    from itertools import chain

    from logparse.render.sanitize import clean_rows

    found = chain.from_iterable(_rows(file, kind, jobs, window) for file in files)
    rows = clean_rows((_flatten(r) if fmt == "csv" else r for r in found),
                      redact=not no_redact, csv=fmt == "csv")
    out = sys.stdout
    if fmt == "jsonl":
        for r in rows:
            out.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        return
    buf = list(rows)
    fields: list[str] = []
    for r in buf:
        for k in r:
            if k not in fields:
                fields.append(k)
    sio = io.StringIO()
    writer = csv.DictWriter(sio, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in buf:
        writer.writerow(r)
    out.write(sio.getvalue())


# Commands defined in other modules, imported only when used: `logdiag analyze` must not pay
# for importing the rule catalog's documentation tools, the CI gate or the report renderer.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "rules": ("logparse.cli.rules", "rules_command"),
    "rule": ("logparse.cli.rules", "rule_command"),
    "check": ("logparse.cli.check", "check"),
    "report": ("logparse.cli.report", "report"),
    "follow": ("logparse.cli.follow", "follow"),
    "compare": ("logparse.cli.compare", "compare"),
    "export": ("logparse.cli.export", "export"),
}


def _lazy_command(name: str) -> click.Command | None:
    import importlib

    module, attr = LAZY_COMMANDS[name]
    try:
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
    except (ImportError, AttributeError):
        return None


_base_list, _base_get = main.list_commands, main.get_command


def _list_commands(ctx: click.Context) -> list[str]:
    names = set(_base_list(ctx))
    names.update(n for n in LAZY_COMMANDS if _module_exists(LAZY_COMMANDS[n][0]))
    return sorted(names)


def _get_command(ctx: click.Context, name: str) -> click.Command | None:
    command = _base_get(ctx, name)
    if command is None and name in LAZY_COMMANDS:
        command = _lazy_command(name)
    return command


def _module_exists(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


main.list_commands = _list_commands  # type: ignore[method-assign]
main.get_command = _get_command  # type: ignore[method-assign, assignment]

# Commands whose inputs go through cli/options.py expand_inputs, which switches the collector back
# on for anything but a short run (cli/startup.py); every other command gets it back at once.
SHORT_RUN_COMMANDS = frozenset({"analyze", "events", "check", "report", "compare", "export"})

# Imported, not run (tests, the API): the collector is back on; `main` pauses it again for a run.
resume_gc()

if __name__ == "__main__":
    main()
