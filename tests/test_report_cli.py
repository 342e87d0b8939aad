"""`logdiag report` through click's CliRunner: outputs, determinism, exit codes, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from logparse._version import __version__
from logparse.cli.main import main
from logparse.report.plots import PLOTS
from tests.conftest import CORPUS, REPO

HEALTHY = str(REPO / "fixtures" / "logs" / "spec-serving-healthy.log")
BASELINE = str(REPO / "fixtures" / "logs" / "baseline-cuda-graph-false.log")
CRASH = str(REPO / "fixtures" / "logs" / "eagle3-kv-pool.log")


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_report_is_listed() -> None:
    r = run("--help")
    assert r.exit_code == 0 and "report" in r.stdout
    r = run("report", "--help")
    assert r.exit_code == 0 and "--baseline" in r.stdout and "--no-redact" in r.stdout


def test_html_report_file(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    r = run("report", HEALTHY, "-o", str(out))
    assert r.exit_code == 0, r.output
    assert r.stdout == "" and r.stderr == ""
    html = out.read_text(encoding="utf-8")
    # Every plot but the baseline comparison (no --baseline here), inline.
    assert html.count("<svg") == len(PLOTS) - 1 and "baseline-speedup" not in html
    assert f"logdiag {__version__}" in html


def test_markdown_report_writes_plots_next_to_it(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    r = run("report", HEALTHY, "--baseline", BASELINE, "-o", str(out))
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    folder = tmp_path / "report-plots"
    files = sorted(p.name for p in folder.iterdir() if p.suffix == ".svg")
    assert files == sorted(f"{p.name}.svg" for p in PLOTS)
    assert (folder / ".logdiag-plots.json").is_file()  # what logdiag wrote there (may replace)
    for name in files:
        assert f"](report-plots/{name})" in text
        assert (folder / name).read_text(encoding="utf-8").startswith("<svg")
    for heading in (
        "## Summary",
        "## Findings",
        "## Startup",
        "## Serving",
        "## Speculative decoding",
        "## Benchmarks",
        "## Configuration",
        "## Log coverage",
    ):
        assert heading in text
    # A second report without a baseline no longer shows the plot it lacks; the file an earlier
    # run wrote stays (logdiag deletes nothing it did not write in this run).
    r = run("report", HEALTHY, "-o", str(out))
    assert r.exit_code == 0
    assert (folder / "baseline-speedup.svg").exists()
    assert "baseline-speedup" not in out.read_text(encoding="utf-8")


def test_json_report(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = run("report", CRASH, "-o", str(out))
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["logdiag_version"] == __version__
    assert doc["summary"]["outcome"] == "crashed-at-startup"
    assert doc["redaction"]["enabled"] is True
    for key in (
        "summary",
        "findings",
        "timing",
        "serving",
        "speculative",
        "benchmarks",
        "configuration",
        "coverage",
    ):
        assert key in doc


def test_same_input_same_bytes(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert run("report", HEALTHY, "-o", str(tmp_path / f"{name}.html")).exit_code == 0
        (tmp_path / name).mkdir()
        assert run("report", HEALTHY, "-o", str(tmp_path / name / "r.md")).exit_code == 0
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    for p in (tmp_path / "a").rglob("*"):
        if p.is_file():
            assert (
                p.read_bytes() == (tmp_path / "b" / p.relative_to(tmp_path / "a")).read_bytes()
            ), p.name


def test_timestamp_only_when_asked(tmp_path: Path) -> None:
    plain, stamped = tmp_path / "p.html", tmp_path / "s.html"
    assert run("report", CRASH, "-o", str(plain)).exit_code == 0
    assert run("report", CRASH, "-o", str(stamped), "--timestamp").exit_code == 0
    assert f"logdiag {__version__} on 20" in stamped.read_text(encoding="utf-8")
    assert f"logdiag {__version__} on" not in plain.read_text(encoding="utf-8")


def test_stdout_needs_a_format() -> None:
    r = run("report", CRASH, "-o", "-", "--format", "html")
    assert r.exit_code == 0
    assert r.stdout.startswith("<!DOCTYPE html>")
    r = run("report", CRASH, "-o", "-")
    assert r.exit_code == 2 and "format" in r.stderr
    r = run("report", CRASH, "-o", "-", "--format", "markdown")
    assert r.exit_code == 2 and "Markdown" in r.stderr


def test_bad_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    cases = [
        ("report", str(tmp_path / "missing.log"), "-o", str(tmp_path / "r.html")),
        (
            "report",
            HEALTHY,
            "--baseline",
            str(tmp_path / "missing.log"),
            "-o",
            str(tmp_path / "r.html"),
        ),
        ("report", HEALTHY, "-o", str(tmp_path / "r.txt")),
        ("report", str(CORPUS), "-o", str(tmp_path / "r.html")),
        ("report", HEALTHY, "-o", str(tmp_path / "no" / "such" / "dir" / "r.html")),
    ]
    for args in cases:
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stdout == ""
        assert r.stderr.startswith("logdiag: ") and r.stderr.count("\n") == 1, r.stderr
        assert "Traceback" not in r.stderr


def test_analyze_does_not_import_the_report_stack() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from logparse.cli.main import main\n"
        f"r = CliRunner().invoke(main, ['analyze', {str(CORPUS / 'dev-041.log')!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "import logparse.report\n"
        "print(sorted(m for m in ('matplotlib', 'numpy', 'pandas', 'jinja2') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
