"""`logdiag check`: the CI gate — analyze logs, fail on findings at or above a severity.

Thin like every command: options and configuration in, `engine.analyze` per file (a process pool
across files), `render/check_json.build_report` to score, one renderer out, an exit code.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import click

from logparse.cli.options import (
    effective_jobs,
    examples,
    jobs_option,
    no_redact_option,
    paths_argument,
    window_options,
)
from logparse.cli.textopts import text_layout, text_options
from logparse.fleet.target import DASK_HELP
from logparse.gate.baseline import Baseline, BaselineError, load_baseline
from logparse.gate.config import (
    FAIL_ON,
    Config,
    ConfigError,
    load_config,
    split_selectors,
    validate_selectors,
)
from logparse.gate.report import CheckReport, FileResult, build_report
from logparse.io.readreport import InputError
from logparse.render.check_json import display_path

if TYPE_CHECKING:
    from logparse.model.window import TimeWindow

FORMATS = ("text", "json", "sarif", "junit", "github")
EXIT_OK, EXIT_FINDINGS = 0, 1  # as in logparse.cli.main (2: input errors through cli.fail)


# logparse.cli.main imports this module to register the command: import it lazily, so that either
# module can be imported first.
def fail(message: str) -> NoReturn:
    from logparse.cli.main import fail as cli_fail

    cli_fail(message)


def resolve_inputs(paths: tuple[str, ...]) -> list[str]:
    from logparse.cli.main import resolve_inputs as cli_resolve

    return cli_resolve(paths)

HELP = """Check logs for problems; exit 1 if any finding is at or above --fail-on (for CI).

PATHS are files (plain or .gz), directories (every *.log, *.log.gz, *.txt inside, recursively),
glob patterns (expanded by logdiag too, so quoted globs such as 'logs/**/*.log' work) or - for
stdin.

\b
Exit codes:
  0  no finding at or above --fail-on (or --exit-zero, --fail-on never,
     --write-baseline)
  1  findings at or above --fail-on that are not in the baseline, or a log
     that is not comparable with --baseline-run BASE.log (logdiag compare)
  2  usage, input, configuration or baseline error (one line on stderr)
  3  internal error (a bug in logdiag)

\b
Configuration: [tool.logdiag] in the nearest pyproject.toml from the
current directory up to the repository root or home (or a logdiag.toml,
or --config FILE; the summary line names it), e.g.
  [tool.logdiag]
  select = ["memory", "SPEC"]
  ignore = ["deprecated-entrypoint"]
  fail-on = "warning"
  baseline = "logdiag-baseline.json"
  severity = { kv-cache-saturated = "error" }
  thresholds.spec-low-acceptance.min_accept_len = 1.8
Command-line --select replaces the configured select; --ignore adds to it.

\b
Baselines: --write-baseline FILE records today's findings (a --format json
document); --baseline FILE then counts only findings not in it. Findings
match by rule name and evidence text with timestamps, numbers, hex and
paths masked, so they survive reruns and line shifts.
"""


# --------------------------------------------------------------------------------------------
# Analysis (runs in worker processes: module-level and picklable)
# --------------------------------------------------------------------------------------------


def analyze_file(path: str, thresholds: dict[str, dict[str, Any]] | None = None, jobs: int = 1,
                 window: TimeWindow | None = None) -> FileResult:
    """Analyze one file and keep only what check needs (the parsed log stays in the worker).
    `thresholds` ({rule name: {key: value}}) reach the rules as `ctx.threshold(rule, key, default)`;
    `window` is --since/--until (picklable: it travels to the workers)."""
    from logparse.engine import core as engine
    windowed = {"window": window} if window is not None else {}  # an engine without windows
    analysis = engine.analyze(path, jobs=jobs, config=thresholds or None, **windowed)
    return FileResult(path=path, findings=list(analysis.findings), outcome=analysis.outcome,
                      root_cause=analysis.root_cause, rule_errors=list(getattr(analysis, "rule_errors", [])))


class Progress:
    """`[3/40] logs/x.log` on one refreshed stderr line, only when stderr is a terminal."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.width = 0
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.enabled = tty and total > 1

    def tick(self, path: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        name = display_path(path)
        if len(name) > 60:
            name = "…" + name[-59:]
        text = f"logdiag: [{self.done}/{self.total}] {name}"
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(text))

    def finish(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def run_all(files: Sequence[str], thresholds: dict[str, dict[str, Any]], jobs: int,
            progress: Progress | None = None, dask: str | None = None,
            window: TimeWindow | None = None) -> list[FileResult]:
    """Analyze every file, in input order: in this process, a process pool across files when
    jobs > 1, or a Dask cluster (`--dask`, logparse.fleet). Stdin is read in this process (a
    worker cannot take it over)."""
    from logparse.fleet import map_files

    progress = progress or Progress(0)
    results: list[FileResult | None] = [None] * len(files)
    pooled = [k for k, f in enumerate(files) if f != "-"]
    # One file alone (no cluster) may use the jobs to split itself by byte ranges.
    inner = jobs if len(files) == 1 and dask is None else 1
    # The window is passed only when set: analyze_file stand-ins (tests, plugins) need not know it.
    windowed = {"window": window} if window is not None else {}
    done = map_files(partial(analyze_file, thresholds=thresholds, jobs=inner, **windowed),
                     [files[k] for k in pooled], dask=dask, jobs=jobs,
                     on_done=lambda i: progress.tick(files[pooled[i]]))
    for k, res in zip(pooled, done, strict=True):
        results[k] = res
    for k, f in enumerate(files):
        if f == "-":
            results[k] = analyze_file(f, thresholds, **windowed)
            progress.tick(f)
    progress.finish()
    return [r for r in results if r is not None]


# --------------------------------------------------------------------------------------------
# Inputs and options
# --------------------------------------------------------------------------------------------


def _settings(config_file: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
              fail_on: str | None) -> tuple[Config, str]:
    try:
        config = load_config(config_file)
        cli_select = split_selectors(select)
        cli_ignore = split_selectors(ignore)
        validate_selectors(cli_select, "--select")
        validate_selectors(cli_ignore, "--ignore")
    except ConfigError as err:
        fail(str(err))
    if cli_select:
        config.select = cli_select
    config.ignore = [*config.ignore, *cli_ignore]
    return config, fail_on or config.fail_on or "error"


def _load_baseline(path: str | None) -> Baseline | None:
    if not path:
        return None
    try:
        return load_baseline(path)
    except BaselineError as err:
        fail(str(err))


def _dask_target(value: str | None) -> str | None:
    """Validate --dask before any work (a bad value is exit 2); the cluster starts in run_all."""
    if value is None:
        return None
    from logparse.fleet import TargetError, parse_target, require_dask

    try:
        target = parse_target(value).describe()
        require_dask()
    except (TargetError, InputError) as err:
        fail(str(err))
    return target


def _run_reported(*args: Any, **kwargs: Any) -> list[FileResult]:
    """run_all, with every file that failed on a cluster named on its own line (exit 2)."""
    from logparse.fleet import FilesFailed

    try:
        return run_all(*args, **kwargs)
    except FilesFailed as err:
        for failure in err.failures[:-1]:
            _say(failure.message)
        fail(err.failures[-1].message)


def _say(message: str) -> None:
    from logparse.render.neutral import one_line
    from logparse.render.redact import redact_text

    click.echo(f"logdiag: {one_line(redact_text(message))}", err=True)


def _write(path: str, text: str, what: str) -> None:
    try:
        from logparse.cli.main import OUTPUT_ERRORS

        with open(path, "w", encoding="utf-8", errors=OUTPUT_ERRORS, newline="\n") as f:
            f.write(text)
    except OSError as err:
        fail(f"cannot write {what} {path}: {err.strerror or err}")


def _warn_rule_errors(results: Sequence[FileResult]) -> None:
    """A rule that crashed leaves the analysis incomplete: say so (stderr), do not hide it."""
    from logparse.render.neutral import one_line
    from logparse.render.redact import redact_text

    for res in results:
        for err in res.rule_errors:
            err = one_line(redact_text(err))  # an exception message can quote the log
            click.echo(f"logdiag: warning: {display_path(res.path)}: rule {err} (a bug in logdiag; "
                       "rerun with LOGDIAG_DEBUG=1 for the traceback)", err=True)


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def render_text(report: CheckReport, width: int | None = None, color: bool = False) -> str:
    """One block per finding, `path:line: severity CODE name: message`, as compilers print.
    With a baseline, only the new findings are printed in full; the accepted ones are a count
    and one title line each at the end (the reader is looking for what changed). Lines are
    wrapped to `width` with a hanging indent (None: every line whole), never cut."""
    from logparse.render.layout import Doc, Paint
    from logparse.render.text import Shown, add_evidence, add_remedy

    doc = Doc(width, Paint(color))
    fixes = Shown()
    style = {"error": "red", "warning": "yellow"}
    for item in report.items:
        if item.baselined:
            continue
        where = display_path(item.path) + (f":{item.line}" if item.line is not None else "")
        tags = []
        if item.root_cause:
            tags.append("root cause")
        if item.consequence:
            if item.cause and item.cause == item.name:
                tags.append("consequence: the same failure after the root cause")
            else:
                tags.append(f"consequence of {item.cause}" if item.cause else "consequence")
        tag = f" [{'; '.join(tags)}]" if tags else ""
        doc.add(f"{where}: {item.severity} {item.code} {item.name}{tag}: {item.message}", "", "    ",
                style=style.get(str(item.severity)))
        # analyze's layout: the fix as bullets (a long one printed once per output: the same
        # warning in a second launch attempt or file points back to it), evidence in log order
        # with repeated lines sharing a row
        fixes.path = where
        if add_remedy(doc, {"name": item.name, "remedy": item.remedy}, "    ", fixes):
            doc.add(f"why, and the full fix: logdiag rule {item.name}", "    ")
        add_evidence(doc, [{"line": n, "text": t} for ev in item.evidence for n, t in ev.lines], "    ", 3)
    for line in _baselined_titles(report):
        indent = line[: len(line) - len(line.lstrip())]
        doc.add(line.lstrip(), indent, indent + "    ")
    from logparse.render.neutral import neutralize

    return neutralize(doc.text())  # again: wrapping can start a line with a message's `::`


BASELINED_SHOWN = 20


def _baselined_titles(report: CheckReport) -> list[str]:
    old = [item for item in report.items if item.baselined]
    if not old:
        return []
    n = len(old)
    out = [f"{n} finding{'s' if n != 1 else ''} in the baseline (accepted, not shown in full):"]
    for item in old[:BASELINED_SHOWN]:
        where = display_path(item.path) + (f":{item.line}" if item.line is not None else "")
        tag = " [root cause]" if item.root_cause else " [consequence]" if item.consequence else ""
        out.append(f"    {where}: {item.severity} {item.code} {item.name}{tag}")
    if n > BASELINED_SHOWN:
        out.append(f"    … {n - BASELINED_SHOWN} more (--format json lists them all)")
    return out


def render(report: CheckReport, fmt: str, width: int | None = None, color: bool = False) -> str:
    if fmt == "json":
        from logparse.render.check_json import render as render_json

        return render_json(report)
    if fmt == "sarif":
        from logparse.render.sarif import render as render_sarif

        return render_sarif(report)
    if fmt == "junit":
        from logparse.render.junit import render as render_junit

        return render_junit(report)
    if fmt == "github":
        from logparse.render.github import render as render_github

        return render_github(report)
    return render_text(report, width, color)


def summary_line(report: CheckReport, seconds: float) -> str:
    counts = report.counts()
    total = sum(counts.values())
    n = len(report.files)
    parts = ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info"))
    line = f"logdiag: {n} file{'s' if n != 1 else ''}, {total} finding{'s' if total != 1 else ''} ({parts})"
    baselined = sum(i.baselined for i in report.items)
    if report.baseline is not None:
        line += f", {baselined} in the baseline"
    failing = len(report.failing)
    if report.fail_on == "never":
        line += "; --fail-on never"
    else:
        line += f"; {failing} at or above --fail-on {report.fail_on}"
    # Which configuration decided the gate: a file found by walking up must never act unseen.
    config = display_path(report.config_file) if report.config_file else "none"
    return line + f" in {seconds:.1f}s (config: {config})"


# --------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------


EPILOG = examples(
    "logdiag check logs/ --format sarif --output logdiag.sarif",
    "logdiag check 'logs/**/*.log' --fail-on warning --jobs 2",
    "logdiag check run.log --format github",
    "logdiag check logs/ --write-baseline logdiag-baseline.json",
    "logdiag check logs/ --baseline logdiag-baseline.json",
    "logdiag check run.log --since 1h",
)


@click.command("check", help=HELP, epilog=EPILOG,
               short_help="Check logs for problems; exit 1 on findings (for CI).")
@paths_argument()
@click.option("--fail-on", type=click.Choice(FAIL_ON), default=None,
              help="Lowest severity that fails the run.  [default: error, or the configured fail-on]")
@click.option("--select", multiple=True, metavar="RULES",
              help="Only these rules: names, codes, code prefixes or families; comma lists; repeatable.")
@click.option("--ignore", multiple=True, metavar="RULES", help="Skip these rules (same forms as --select).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even with failing findings (input errors still exit 2).")
@jobs_option("Processes: files are analyzed in parallel (one file alone is split by byte ranges); "
             "files below 8 MiB in total stay in one process.")
@click.option("--dask", metavar="ADDRESS", default=None, help=DASK_HELP)
@click.option("--config", "config_file", metavar="FILE",
              help="A pyproject.toml ([tool.logdiag]) or logdiag.toml instead of the discovered one.")
@click.option("--baseline", "baseline_file", metavar="FILE",
              help="Accepted findings (a previous --format json output): they do not fail the run.")
@click.option("--write-baseline", metavar="FILE", help="Write all findings as a baseline to FILE, exit 0.")
@no_redact_option
@click.option("--baseline-run", metavar="BASE.log",
              help="Also fail (exit 1) when a log is not comparable with this baseline run (logdiag compare).")
@click.option("--vary", multiple=True, metavar="FACTOR", help="With --baseline-run: a declared factor (repeatable).")
@window_options
@text_options
def check(paths: tuple[str, ...], fail_on: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
          fmt: str, output: str | None, exit_zero: bool, jobs: int, config_file: str | None,
          baseline_file: str | None, write_baseline: str | None, no_redact: bool = False,
          baseline_run: str | None = None, vary: tuple[str, ...] = (), dask: str | None = None,
          window: TimeWindow | None = None, wide: bool = False, color: bool | None = None) -> None:
    started = time.monotonic()
    dask_target = _dask_target(dask)
    config, threshold = _settings(config_file, select, ignore, fail_on)
    baseline_path = baseline_file or config.baseline
    if write_baseline and baseline_path and not os.path.exists(baseline_path):
        baseline_path = None  # creating the configured baseline for the first time
    baseline = _load_baseline(baseline_path)
    files = resolve_inputs(paths)
    from logparse.cli.main import refuse_overwrite

    refuse_overwrite([p for p in (output, write_baseline) if p and p != "-"], files)

    pool = jobs if len(files) == 1 else effective_jobs(jobs, files)  # one file: split by bytes
    results = _run_reported(files, config.thresholds, pool, Progress(len(files)), dask=dask_target,
                            window=window)
    _warn_rule_errors(results)
    from logparse.render.sanitize import clean_check

    report = clean_check(build_report(results, config, threshold, baseline), redact=not no_redact)

    width, paint = text_layout(wide, color, to_file=bool(output and output != "-"))
    text = render(report, fmt, width, paint and fmt == "text")
    if write_baseline:  # first: a baseline that cannot be written is exit 2 before any output
        from logparse.render.check_json import render as render_json

        _write(write_baseline, render_json(report), "baseline")
    if output and output != "-":
        _write(output, text, "report")
    else:
        click.echo(text, nl=False, color=paint or None)  # click strips colour off a non-terminal
    if fmt == "text" or (output and output != "-") or write_baseline:
        line = summary_line(report, time.monotonic() - started)
        if window is not None:  # a window decides the gate too: never unseen
            from logparse.render.neutral import one_line

            line += one_line(" (window: " + ", ".join(f"--{k} {v}" for k, v in window.as_dict().items() if v) + ")")
        click.echo(line, err=True)
    if write_baseline:
        from logparse.render.neutral import one_line

        click.echo(f"logdiag: wrote {len(report.items)} findings to baseline {one_line(write_baseline)}", err=True)
        sys.exit(EXIT_OK)
    incomparable: list[str] = []
    if baseline_run:
        from logparse.cli.compare import baseline_run_gate

        incomparable = baseline_run_gate(baseline_run, files, vary)
        for line in incomparable:
            click.echo(f"logdiag: {line}", err=True)
    if (report.failing or incomparable) and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)
