"""`logdiag export`: every event table of many logs, findings and launch runs, as a dataset folder."""

from __future__ import annotations

from pathlib import Path

import click

from logparse.cli.main import EXIT_INPUT, fail, resolve_inputs


def _table_kinds() -> list[str]:
    from logparse.export.schema import table_kinds

    return table_kinds()


@click.command("export")
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", "output", required=True, metavar="DIR",
              help="Folder for the dataset: one file per table and manifest.json.")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]), default="parquet",
              show_default=True)
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only these tables (repeatable): an event kind, findings or runs. `--kind list` shows all.")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Processes for one large plain file (byte-range split).")
@click.option("--no-redact", is_flag=True, help="Keep API keys, tokens and passwords (redacted by default).")
def export(paths: tuple[str, ...], output: str, fmt: str, kinds: tuple[str, ...], jobs: int,
           no_redact: bool = False) -> None:
    """Export logs as a dataset: one table per event kind, plus findings and runs (one row per
    launch attempt), with run, file, launch and line columns to join them (schema: docs/export.md).

    PATHS are files (plain or .gz), directories (every *.log, *.log.gz, *.txt inside) or - for stdin.
    An input that fails is listed in manifest.json and the exit code is 2.
    """
    known = _table_kinds()
    if "list" in kinds:
        click.echo("\n".join(known))
        return
    unknown = [k for k in kinds if k not in known]
    if unknown:
        fail(f"unknown table '{unknown[0]}' (see: logdiag export --kind list)")
    files = resolve_inputs(paths)
    from logparse.export.tables import ExportOptions, export_file
    from logparse.export.write import write_dataset
    from logparse.render.outfiles import OutputError

    options = ExportOptions(kinds=tuple(dict.fromkeys(kinds)) or None, redact=not no_redact, jobs=jobs)
    results = (export_file(f, options) for f in files)
    try:
        manifest = write_dataset(results, Path(output), fmt, kinds=options.kinds, inputs=files,
                                 redact=not no_redact)
    except OutputError as err:
        fail(str(err))
    from logparse.render.neutral import one_line

    for item in manifest.failed:
        click.echo(one_line(f"logdiag: {item['file']}: {'; '.join(item.get('errors', []))}"), err=True)
    if manifest.failed:
        fail(f"{len(manifest.failed)} of {len(manifest.inputs)} inputs failed (listed in "
             f"{Path(output) / 'manifest.json'})", EXIT_INPUT)
