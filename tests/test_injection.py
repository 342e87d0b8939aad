"""No output of logdiag can act on what reads it: log lines and file names carrying CI workflow
commands (`::error …` at a line start, legacy `##[error]` anywhere) are defused in every format of
every command and in error messages; CSV cells never start a spreadsheet formula; messages with a
file name stay on one line."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.render.neutral import ZWSP, csv_cell, neutralize, neutralize_data, one_line

HEAD = "$ python3 -m sglang.launch_server --model-path m/x --port 30000\n"
TB = (
    "[2026-04-14 10:09:20 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3301, '
    "in run_scheduler_process\n"
    "    scheduler = Scheduler(\n"
)
PAYLOADS = [
    "::error file=x.py,line=1::pwned",
    "  ::set-output name=x::y",
    "##[error]legacy command",
    "text ##[warning]in the middle",
    "::add-mask::x",
]
FORMULAS = ['=HYPERLINK("http://evil","x")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)"]
# A command line (the runner trims leading whitespace before `::`) or a legacy command anywhere.
COMMAND = re.compile(r"^\s*::|##\[", re.MULTILINE)


def _hostile_log(tmp_path: Path) -> Path:
    lines = [HEAD, *[p + "\n" for p in PAYLOADS], *[f + "\n" for f in FORMULAS], TB]
    lines.append("ValueError: ::error::boom ##[error]x\n")
    path = tmp_path / "hostile.log"
    path.write_text("".join(lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the functions


@pytest.mark.parametrize("payload", PAYLOADS + ["a\n::error::b", "a\r::warning::b", "\u00a0::notice::x"])
def test_neutralize_defuses_every_command_shape(payload: str) -> None:
    out = neutralize(payload)
    assert not COMMAND.search(out.replace("\r", "\n")), out
    assert neutralize(out) == out  # idempotent
    assert out.replace(ZWSP, "") == payload  # only a zero-width space is added: the text reads the same


@pytest.mark.parametrize("text", ["std::vector<int>", "a :: b", "ns::f() failed", "#[derive]", "## heading"])
def test_neutralize_leaves_ordinary_text_alone(text: str) -> None:
    assert neutralize(text) == text


def test_neutralize_data_walks_keys_and_values() -> None:
    out = neutralize_data({"::k": ["##[x", {"v": "::error::y"}], "n": 3})
    assert not COMMAND.search(json.dumps(out, ensure_ascii=False)) and out["n"] == 3


@pytest.mark.parametrize("value", [*FORMULAS, "\tx", "\rx"])
def test_csv_cells_never_start_a_formula(value: str) -> None:
    cell = csv_cell(value)
    assert cell == "'" + value and not cell.startswith(("=", "+", "-", "@", "\t", "\r"))


@pytest.mark.parametrize("value", [-3, -1.5, 0, "plain", "", None, "a=b"])
def test_csv_cells_otherwise_untouched(value: object) -> None:
    assert csv_cell(value) == value


def test_one_line_escapes_controls_and_undecodable_bytes() -> None:
    name = "run\n::error file=a::x\x1b[31m\udcff.log"
    out = one_line(name)
    assert "\n" not in out and "\x1b" not in out and "\udcff" not in out
    assert "\\n" in out and "\\x1b" in out and "\\udcff" in out
    out.encode("utf-8")  # printable whatever the file name's bytes were


# --------------------------------------------------------------------------- every output


def _outputs(tmp_path: Path, log: Path) -> dict[str, str]:
    runner = CliRunner()
    runs = {
        "analyze-text": ["analyze", str(log)],
        "analyze-json": ["analyze", str(log), "--format", "json"],
        **{f"check-{f}": ["check", str(log), "--exit-zero", "--format", f] for f in ("text", "json", "sarif", "junit", "github")},
        "report-json": ["report", str(log), "-o", "-", "--format", "json"],
        "report-html": ["report", str(log), "-o", "-", "--format", "html"],
        **{f"events-{k}-{f}": ["events", str(log), "--kind", k, "--format", f]
           for k in ("traceback", "launch_command") for f in ("csv", "jsonl")},
    }
    out = {}
    for name, args in runs.items():
        r = runner.invoke(main, args)
        assert r.exit_code == 0, (name, r.output)
        out[name] = r.stdout
    md = tmp_path / "r.md"
    assert runner.invoke(main, ["report", str(log), "-o", str(md)]).exit_code == 0
    out["report-md"] = md.read_text(encoding="utf-8")
    return out


def test_no_output_carries_a_workflow_command(tmp_path: Path) -> None:
    outputs = _outputs(tmp_path, _hostile_log(tmp_path))
    for name, text in outputs.items():
        if name == "check-github":
            # logdiag's own annotations are the only commands; what they carry is escaped data.
            for line in text.splitlines():
                assert re.match(r"::(error|warning|notice) file=[^:]*::", line), line
                assert not COMMAND.search(line.split("::", 2)[2]), line
            continue
        assert not COMMAND.search(text), (name, COMMAND.search(text))
    # Not vacuous: the payloads did reach the outputs, defused.
    assert f"{ZWSP}::error" in outputs["analyze-text"] or f"#{ZWSP}#[" in outputs["analyze-text"]
    assert f"#{ZWSP}#[" in outputs["check-sarif"] and f"#{ZWSP}#[" in outputs["check-junit"]
    assert f"#{ZWSP}#[" in outputs["check-json"]


def test_csv_export_has_no_formula_cells(tmp_path: Path) -> None:
    log = tmp_path / "f.log"
    log.write_text(HEAD + TB + '=HYPERLINK("http://evil")\n' + "ValueError: =cmd|' /C calc'!A0\n", encoding="utf-8")
    runner = CliRunner()
    for kind in ("traceback", "launch_command", "exception_line", "exception_header"):
        r = runner.invoke(main, ["events", str(log), "--kind", kind, "--format", "csv"])
        assert r.exit_code == 0, r.output
        for row in csv.reader(io.StringIO(r.stdout)):
            for cell in row:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (kind, cell)
    r = runner.invoke(main, ["events", str(log), "--kind", "traceback", "--format", "csv"])
    assert "'=cmd" in r.stdout  # the cell is there, escaped


# --------------------------------------------------------------------------- file names and errors


def test_file_name_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "run\n::error file=a::pwned.log"
    bad.write_text(HEAD + TB + "ValueError: boom\n", encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(main, ["analyze", str(bad)])
    assert r.exit_code == 0 and not COMMAND.search(r.stdout)
    assert "\\n" in r.stdout.splitlines()[0]  # the header names the file, escaped
    for fmt in ("text", "github", "junit"):
        r = runner.invoke(main, ["check", str(bad), "--exit-zero", "--format", fmt])
        assert r.exit_code == 0
        for line in r.stdout.splitlines():
            if fmt == "github":
                assert re.match(r"::(error|warning|notice) file=", line), line
            else:
                assert not COMMAND.search(line), line


def test_error_messages_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = str(tmp_path / "gone\n::error::pwned\x1b[2J.log")
    r = runner.invoke(main, ["analyze", missing])
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1 and not COMMAND.search(r.stderr) and "\x1b" not in r.stderr
    empty = tmp_path / "e\n##[error]x.log"
    empty.write_text("", encoding="utf-8")
    r = runner.invoke(main, ["check", str(empty)])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "##[" not in r.stderr
