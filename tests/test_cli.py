"""The command line through click's CliRunner: exit codes, stdout and stderr separately."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse._version import __version__
from logparse.cli.main import main
from tests.conftest import CORPUS, REPO

LOG = CORPUS / "dev-041.log"


def run(*args: str, input: bytes | str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), input=input)


def test_version() -> None:
    r = run("--version")
    assert r.exit_code == 0
    assert r.stdout.strip() == f"logdiag {__version__}"


def test_analyze_text_leads_with_what_matters() -> None:
    r = run("analyze", str(LOG))
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert "startup: ready" in r.stdout
    assert "coverage:" in r.stdout
    assert "TP3" in r.stdout


def test_analyze_json_shape() -> None:
    r = run("analyze", str(LOG), "--format", "json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["logdiag_version"] == __version__
    (entry,) = doc["files"]
    assert entry["path"] == str(LOG)
    lines = entry["lines"]
    assert lines["total"] == lines["recognized"] + lines["unparsed"] == 89
    assert entry["facts"]["tp_size"] == 4
    assert entry["facts"]["ready"] is True


def test_json_is_deterministic() -> None:
    assert run("analyze", str(LOG), "--format", "json").stdout == run("analyze", str(LOG), "--format", "json").stdout


def test_stdin() -> None:
    r = run("analyze", "-", "--format", "json", input=LOG.read_bytes())
    assert r.exit_code == 0
    entry = json.loads(r.stdout)["files"][0]
    assert entry["path"] == "-"
    assert entry["lines"]["total"] == 89


def test_directory_and_gzip(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(LOG.read_bytes())
    with gzip.open(tmp_path / "b.log.gz", "wb") as fh:
        fh.write(LOG.read_bytes())
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    r = run("analyze", str(tmp_path), "--format", "json")
    assert r.exit_code == 0, r.output
    files = json.loads(r.stdout)["files"]
    assert [Path(f["path"]).name for f in files] == ["a.log", "b.log.gz"]
    assert files[0]["facts"] == files[1]["facts"]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda d: d / "missing.log", "No such file"),
        (lambda d: d, "no log files"),
        (lambda d: (d / "empty.log").write_bytes(b"") and None or d / "empty.log", "empty"),
        (lambda d: (d / "bin.log").write_bytes(bytes(range(256)) * 300) and None or d / "bin.log", "binary"),
        (lambda d: (d / "bad.log.gz").write_bytes(b"\x1f\x8b\x08\x00garbage-not-deflate") and None or d / "bad.log.gz",
         "gzip"),
    ],
    ids=["missing", "empty-dir", "empty-file", "binary", "corrupt-gzip"],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, make, expected: str) -> None:  # type: ignore[no-untyped-def]
    target = make(tmp_path)
    r = run("analyze", str(target))
    assert r.exit_code == 2
    assert r.stdout == ""
    err = r.stderr.strip()
    assert err.startswith("logdiag: ")
    assert "\n" not in err, "one line only"
    assert expected.lower() in err.lower()
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable(tmp_path: Path) -> None:
    p = tmp_path / "secret.log"
    p.write_text("x\n")
    p.chmod(0)
    r = run("analyze", str(p))
    assert r.exit_code == 2
    assert "Permission denied" in r.stderr


def test_truncated_gzip_is_analyzed_as_far_as_it_goes(tmp_path: Path) -> None:
    data = gzip.compress(LOG.read_bytes() * 50)
    p = tmp_path / "cut.log.gz"
    p.write_bytes(data[: len(data) // 2])
    r = run("analyze", str(p), "--format", "json")
    assert r.exit_code == 0, r.output
    entry = json.loads(r.stdout)["files"][0]
    assert entry["read"]["damaged"]
    assert 0 < entry["lines"]["total"] < 89 * 50
    text = run("analyze", str(p))
    assert "input damage" in text.stdout


def test_events_csv_and_jsonl() -> None:
    r = run("events", str(CORPUS / "dev-031.log"), "--kind", "decode_batch")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == 3
    assert [float(x["accept_len"]) for x in rows] == [2.10, 2.60, 2.77]
    r = run("events", str(CORPUS / "dev-031.log"), "--kind", "decode_batch", "--format", "jsonl")
    items = [json.loads(x) for x in r.stdout.splitlines()]
    assert [i["line"] for i in items] == [int(x["line"]) for x in rows]
    assert items[0]["rank"] == "DP2 TP2"


def test_events_unknown_kind() -> None:
    r = run("events", str(LOG), "--kind", "nonsense")
    assert r.exit_code == 2
    assert "unknown event kind" in r.stderr
    listed = run("events", str(LOG), "--kind", "list")
    assert "decode_batch" in listed.stdout.split()


def test_python_dash_m() -> None:
    out = subprocess.run([sys.executable, "-m", "logparse", "--version"], capture_output=True, text=True, cwd=REPO, check=False)
    assert out.returncode == 0
    assert out.stdout.strip() == f"logdiag {__version__}"
