"""`logdiag report`: a postmortem of one log as self-contained HTML, Markdown (+ SVG plots) or JSON.

Loaded lazily by `logparse.cli.main` (matplotlib, numpy and jinja2 are imported only here and below).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from logparse.cli.main import EXIT_INPUT, OUTPUT_ERRORS, fail, resolve_inputs
from logparse.cli.options import examples, jobs_option, no_redact_option, window_options
from logparse.cli.startup import freeze_for_exit

if TYPE_CHECKING:
    from logparse.model.window import TimeWindow

FORMATS = {
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
}


def _one(path: str, what: str) -> str:
    files = resolve_inputs((path,))
    if len(files) != 1:
        fail(f"{what} must be one log file, not a folder of {len(files)}: {path}")
    return files[0]


def _format(output: str, fmt: str | None) -> str:
    if fmt:
        return fmt
    suffix = Path(output).suffix.lower()
    if output == "-" or suffix not in FORMATS:
        fail(
            f"cannot tell the report format from '{output}': use an .html, .md or .json name, or --format"
        )
    return FORMATS[suffix]


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8", errors=OUTPUT_ERRORS, newline="\n")
    except OSError as err:
        fail(f"cannot write {path}: {err.strerror or err}", EXIT_INPUT)


def _write_markdown(out: Path, data: dict, series: dict, inputs: list[str], jobs: int) -> None:  # type: ignore[type-arg]
    """The Markdown file and its plots. Plots are written only where logdiag may (see
    render/outfiles.py); a plot an earlier report wrote and this one lacks is left alone."""
    from logparse.render.outfiles import OutputError, write_plots
    from logparse.report.markdown import plots_dir_name, render_markdown
    from logparse.report.plots import render

    plot_dir = plots_dir_name(out.name)
    svgs = render(data, series, jobs=jobs)
    if svgs:
        try:
            write_plots(out.parent / plot_dir, {f"{name}.svg": svg for name, svg in svgs.items()}, inputs)
        except OutputError as err:
            fail(str(err), EXIT_INPUT)
    _write(out, render_markdown(data, plot_dir if svgs else None))


@click.command("report", epilog=examples(
    "logdiag report run.log -o report.html",
    "logdiag report run.log -o report.md",
    "logdiag report spec.log --baseline nospec.log -o r.html",
    "logdiag report run.log -o - --format json --since 1h",
))
@click.argument("path")
@click.option(
    "--baseline",
    metavar="BASE",
    default=None,
    help="A baseline log (e.g. the same server without speculative decoding): speedup at matched "
    "concurrency, break-even acceptance, and the settings that differ.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="report.html (one self-contained file), report.md (plus report-plots/*.svg) or report.json; "
    "'-' writes HTML or JSON to stdout (with --format).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "markdown", "json"]),
    default=None,
    help="Default: from the output file's extension.",
)
@no_redact_option
@click.option(
    "--timestamp",
    is_flag=True,
    help="Print when the report was made (without it the same log gives the same bytes).",
)
@click.option(
    "--gap-threshold",
    type=click.FloatRange(min=1.0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Report unlogged gaps at least this long between timestamped lines of a rank.",
)
@jobs_option("Processes for one large plain file (byte-range split; below 8 MiB: one process) and for "
             "drawing the plots.")
@window_options
def report(
    path: str,
    baseline: str | None,
    output: str,
    fmt: str | None,
    no_redact: bool,
    timestamp: bool,
    gap_threshold: float,
    jobs: int,
    window: TimeWindow | None = None,
) -> None:
    """Write a postmortem report of one log: summary, findings with evidence, startup waterfall,
    serving and speculative-decoding plots, benchmarks, configuration, log coverage.

    PATH is a log file (plain or .gz) or - for stdin. --since/--until apply to PATH only, not to
    the --baseline run.
    """
    fmt = _format(output, fmt)
    if output == "-" and fmt == "markdown":
        fail("Markdown reports need a file name (their plots are written next to it)")
    log_file = _one(path, "PATH")
    base_file = _one(baseline, "--baseline") if baseline else None
    inputs = [f for f in (log_file, base_file) if f]
    if output != "-":
        from logparse.cli.main import refuse_overwrite

        refuse_overwrite([output], inputs)

    from logparse.engine.core import analyze
    from logparse.report.model import build_report

    analysis = analyze(log_file, jobs=jobs, window=window)
    base = analyze(base_file, jobs=jobs) if base_file else None
    # The analyses live until exit: frozen, building and rendering the report does not walk their
    # events and findings again (at 1M failure-heavy lines: 396 young and 3 full collections → 37
    # young, no full one), as `analyze` does before it renders.
    freeze_for_exit()
    generated = datetime.now(UTC).replace(microsecond=0).isoformat(sep=" ") if timestamp else None
    rep = build_report(
        analysis,
        base,
        source=path,
        baseline_source=baseline,
        gap_threshold_s=gap_threshold,
        redact=not no_redact,
        generated=generated,
    )
    if fmt == "json":
        from logparse._version import __version__

        text = (
            json.dumps(
                {"logdiag_version": __version__, **rep.data},
                indent=2,
                ensure_ascii=False,
                allow_nan=False,
            )
            + "\n"
        )
    elif fmt == "html":
        from logparse.report.html import render_html
        from logparse.report.plots import render

        text = render_html(rep.data, render(rep.data, rep.series, jobs=jobs))
    else:
        _write_markdown(Path(output), rep.data, rep.series, inputs, jobs)
        return
    if output == "-":
        click.echo(text, nl=False)
    else:
        _write(Path(output), text)
