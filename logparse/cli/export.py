"""`logdiag export`: every event table of many logs, findings and launch runs, as a dataset."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from logparse.cli.main import EXIT_INPUT, fail
from logparse.cli.options import (
    examples,
    expand_inputs,
    jobs_option,
    no_redact_option,
    paths_argument,
    unreadable,
    window_options,
)
from logparse.fleet.target import DASK_HELP

if TYPE_CHECKING:
    from logparse.export.tables import ExportOptions, FileTables
    from logparse.model.window import TimeWindow


def _exported(files: list[str], options: ExportOptions, dask: str | None,
              unreadable: dict[str, str] | None = None) -> Iterator[FileTables]:
    """Each file's tables: one by one here, or as they finish on Dask (`--dask`: the writer puts
    them back in input order, so the dataset's bytes are the same). A file the up-front check
    refused (`unreadable`: path -> its error) comes back failed, without being read."""
    from itertools import chain

    from logparse.export.tables import FileTables, export_file

    refused = unreadable or {}
    failed = [FileTables(path=f, errors=[refused[f]]) for f in files if f in refused]
    files = [f for f in files if f not in refused]
    if dask is None:
        return chain(failed, (export_file(f, options) for f in files))
    from functools import partial

    from logparse.fleet import imap_files

    # One file, one worker process: a worker does not split a file over processes of its own.
    per_file = partial(export_file, options=replace(options, jobs=1))
    return chain(failed, (tables for _, tables in imap_files(
        per_file, files, dask=dask,
        on_failure=lambda failed: FileTables(path=failed.path, errors=[failed.message]))))


def _table_kinds() -> list[str]:
    from logparse.export.schema import table_kinds

    return table_kinds()


EPILOG = examples(
    "logdiag export logs/ -o dataset/",
    "logdiag export logs/ -o dataset/ --kind decode_batch --kind runs",
    "logdiag export run.log -o out/ --format csv --since 2h",
    "logdiag export --kind list",
    more="Schema (versioned, every column typed): docs/export.md.",
)


@click.command("export", epilog=EPILOG)
@paths_argument(required=False)
@click.option(
    "-o",
    "--output",
    "output",
    metavar="DIR",
    default=None,
    help="Folder for the dataset: one file per table and manifest.json.  [required]",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "csv", "jsonl"]),
    default="parquet",
    show_default=True,
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    metavar="KIND",
    help="Only these tables (repeatable): an event kind, findings or runs. "
    "`--kind list` shows all.",
)
@jobs_option(
    "Processes for one large plain file (byte-range split; below 8 MiB it stays in one process)."
)
@click.option("--dask", metavar="ADDRESS", default=None, help=DASK_HELP)
@no_redact_option
@window_options
def export(
    paths: tuple[str, ...],
    output: str | None,
    fmt: str,
    kinds: tuple[str, ...],
    jobs: int,
    no_redact: bool = False,
    window: TimeWindow | None = None,
    dask: str | None = None,
) -> None:
    """Export logs as a dataset: one table per event kind, plus findings and runs (one row per
    launch attempt), with run, file, launch and line columns to join them (schema: docs/export.md).

    PATHS are files (plain or .gz), directories (every *.log, *.log.gz, *.txt inside, recursively),
    glob patterns or - for stdin. An input that fails is listed in manifest.json and the exit
    code is 2.
    """
    known = _table_kinds()
    if "list" in kinds:
        click.echo("\n".join(known))
        return
    unknown = [k for k in kinds if k not in known]
    if unknown:
        fail(f"unknown table '{unknown[0]}' (see: logdiag export --kind list)")
    if not paths:
        fail("missing PATHS: the logs to export (see: logdiag export --help)")
    if output is None:
        fail("missing -o DIR: the folder to write the dataset into (see: logdiag export --help)")
    if dask is not None:
        from logparse.fleet import check_dask

        check_dask(dask)  # a bad value or no dask extra: one line, exit 2, before any work
    files = expand_inputs(paths)
    # An empty, binary or unreadable file among others is listed as failed in the manifest and
    # the rest is exported (one bad log must not stop a day's export); when none can be read,
    # there is nothing to write: one line, exit 2, as every command says it.
    refused = {f: error for f in files if (error := unreadable(f)) is not None}
    if len(refused) == len(files):
        fail(refused[files[0]])
    from logparse.export.tables import ExportOptions
    from logparse.export.write import write_dataset
    from logparse.render.neutral import one_line
    from logparse.render.outfiles import OutputError

    options = ExportOptions(
        kinds=tuple(dict.fromkeys(kinds)) or None, redact=not no_redact, window=window, jobs=jobs
    )
    results = _exported(files, options, dask, refused)
    try:
        manifest = write_dataset(
            results, Path(output), fmt, kinds=options.kinds, inputs=files, redact=not no_redact
        )
    except OutputError as err:
        fail(str(err))
    for item in manifest.failed:
        for error in item.get("errors", []):  # each names its file
            click.echo(one_line(f"logdiag: {error}"), err=True)
    if manifest.failed:
        fail(
            f"{len(manifest.failed)} of {len(manifest.inputs)} inputs failed (listed in "
            f"{Path(output) / 'manifest.json'})",
            EXIT_INPUT,
        )
