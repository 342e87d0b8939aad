"""`logdiag compare BASELINE CANDIDATE [MORE...]`: is the baseline comparable, and what did the
change buy. Loaded lazily by `logparse.cli.main`."""

from __future__ import annotations

import sys

import click

from logparse.cli.main import EXIT_FINDINGS, EXIT_OK, fail, resolve_inputs
from logparse.cli.options import examples, no_redact_option

EPILOG = examples(
    "logdiag compare BASELINE.log CANDIDATE.log --vary speculative",
    "logdiag compare base.log steps1.log steps3.log --vary speculative",
    "logdiag compare base.log cand.log --vary nccl --allow mem-fraction-static --format md",
) + """

\b
Exit codes:
  0  comparable: every difference lies inside the declared factors (--vary) or is --allow'ed
  1  not comparable: a setting differs outside them (each is listed as key: baseline → candidate)
  2  bad input: an unreadable log, a folder, an unknown factor name
  3  internal error
\b
Factors: speculative, cuda-graph, nccl, attention-backend, moe-backend, quantization, or any
server argument (mem-fraction-static) or environment variable (NCCL_PROTO). A setting one log
does not state is unknown, never equal; random_seed is never a difference."""


def _one(path: str) -> str:
    files = resolve_inputs((path,))
    if len(files) != 1:
        fail(f"each run must be one log file, not a folder of {len(files)}: {path}")
    return files[0]


@click.command("compare", epilog=EPILOG)
@click.argument("baseline", metavar="BASELINE")
@click.argument("candidates", nargs=-1, required=True, metavar="CANDIDATE [MORE...]")
@click.option("--vary", multiple=True, metavar="FACTOR",
              help="What the comparison is about: differences inside it are expected (repeatable).")
@click.option("--allow", multiple=True, metavar="KEY", help="Accept a difference in this setting (repeatable).")
@click.option("--format", "fmt", type=click.Choice(("text", "json", "md")), default="text", show_default=True)
@no_redact_option
def compare(baseline: str, candidates: tuple[str, ...], vary: tuple[str, ...], allow: tuple[str, ...],
            fmt: str, no_redact: bool = False) -> None:
    """Compare a BASELINE run with one or more CANDIDATE runs: the comparability verdict first
    (every setting that differs, what is unknown), then what the change bought (benchmark results
    and decode throughput side by side at matched concurrency, ratios, noise, speculative speedup).
    """
    from logparse.compare.factors import FactorError, resolve

    try:
        resolve(vary)
        from logparse.compare.factors import key_of

        for key in allow:
            key_of(key)
    except FactorError as err:
        fail(str(err))
    paths = [_one(baseline), *(_one(c) for c in candidates)]
    if len(set(paths)) < len(paths) and "-" in paths:
        fail("stdin (-) can be read only once")

    from logparse.compare.comparison import compare_runs
    from logparse.compare.render import render
    from logparse.compare.settings import load
    from logparse.render.sanitize import Sanitizer, clean_document

    base = load(paths[0], "baseline", baseline)
    runs = [load(p, "candidate", src) for p, src in zip(paths[1:], candidates, strict=True)]
    result = compare_runs(base, runs, vary, allow)
    if fmt == "json":
        doc, masked = clean_document(result.as_dict(), redact=not no_redact)
        import json

        from logparse._version import __version__

        text = json.dumps({"logdiag_version": __version__, **doc, "redactions": masked}, indent=2,
                          ensure_ascii=False, allow_nan=False, default=str) + "\n"
    else:
        s = Sanitizer(not no_redact)
        text = "\n".join(s.lines(render(result, fmt).split("\n")))
    click.echo(text, nl=False)
    sys.exit(EXIT_OK if result.comparable else EXIT_FINDINGS)


def baseline_run_gate(baseline: str, files: list[str], vary: tuple[str, ...] = ()) -> list[str]:
    """`check --baseline-run BASE.log`: one line per checked log that is not comparable with the
    baseline run (empty when all are), each naming the differences."""
    from logparse.compare.comparison import compare_runs
    from logparse.compare.factors import FactorError
    from logparse.compare.render import difference_text
    from logparse.compare.settings import load
    from logparse.render.sanitize import Sanitizer

    s = Sanitizer()
    base_file = _one(baseline)
    base = load(base_file, "baseline", baseline)
    out = []
    for path in files:
        if path == base_file:
            continue
        try:
            result = compare_runs(base, [load(path, "candidate")], vary)
        except FactorError as err:
            fail(str(err))
        blocking = result.pairs[0].verdict.blocking
        if blocking:
            out.append(s.text(f"{path}: not comparable with baseline run {baseline}: "
                              + "; ".join(difference_text(d) for d in blocking)))
    return out
