"""`analyze --run`: the per-rank files of one run merged by timestamp into one Run."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

from click.testing import CliRunner

from logparse.cli.main import main
from logparse.engine.core import analyze_log
from logparse.parsing.pipeline import parse_file
from logparse.run.merge import merge_logs
from tests.conftest import FIXTURES

SOURCE = FIXTURES / "logs" / "nextn-4-serving.log"
NODE1 = re.compile(r" TP[4-7]\]")


def _split(tmp_path: Path) -> tuple[Path, Path]:
    """node0: the main process and TP0–TP3; node1: TP4–TP7, cut before the server got ready."""
    lines = SOURCE.read_text().splitlines(keepends=True)
    ready = next(i for i, line in enumerate(lines) if "Uvicorn running" in line)
    node0 = tmp_path / "node0.log"
    node1 = tmp_path / "node1.log"
    node0.write_text("".join(x for x in lines if not NODE1.search(x)))
    node1.write_text("".join(x for i, x in enumerate(lines) if NODE1.search(x) and i < ready))
    return node0, node1


def _analyze(*args: str) -> dict:  # type: ignore[type-arg]
    res = CliRunner().invoke(main, ["analyze", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def test_a_node_that_ends_before_readiness_is_ready_in_the_merged_run(tmp_path: Path) -> None:
    node0, node1 = _split(tmp_path)
    alone = _analyze(str(node1))["files"][0]
    assert alone["startup"]["ready"] is False and alone["outcome"] == "incomplete"
    (run,) = _analyze(str(node0), str(node1), "--run")["files"]
    assert run["files"] == [str(node0), str(node1)]
    assert run["outcome"] == "serving" and run["startup"]["ready"] is True
    assert len(run["launches"]) == 1  # each file's server_args= line is the same attempt
    ranks = set(run["startup"]["ranks"])
    assert {f"TP{i}" for i in range(8)} <= ranks
    assert run["startup"]["ready_file"] == str(node0)
    # The same answers as the unsplit log.
    whole = _analyze(str(SOURCE))["files"][0]
    assert run["facts"]["ready"] is True and whole["outcome"] == run["outcome"]
    own = _analyze(str(node0))["files"][0]["lines"]["total"] + alone["lines"]["total"]
    assert run["lines"]["total"] == own


def test_evidence_keeps_file_and_line(tmp_path: Path) -> None:
    node0, node1 = _split(tmp_path)
    (run,) = _analyze(str(node0), str(node1), "--run")["files"]
    texts = {str(node0): node0.read_text().splitlines(), str(node1): node1.read_text().splitlines()}
    evidence = [ev for f in run["findings"] for ev in f["evidence"]]
    assert evidence and {ev["file"] for ev in evidence} == {str(node0), str(node1)}
    for ev in evidence:
        assert texts[ev["file"]][ev["line"] - 1].startswith(ev["text"].rstrip("…")[:40])


def test_merged_lines_follow_timestamps_and_keep_each_file_in_order(tmp_path: Path) -> None:
    node0, node1 = _split(tmp_path)
    parts = [parse_file(str(node0)), parse_file(str(node1))]
    merged = merge_logs(parts)
    origins = merged.derived["origins"]
    dated = [e for e in merged.events if e.ts is not None and e.ts.year > 1900]
    switches = [(a, b) for a, b in pairwise(dated) if a.source != b.source]
    assert switches and all(a.ts <= b.ts for a, b in switches)  # files interleave by time
    for part in parts:
        back = [origins.locate(e.line) for e in merged.events if e.source == part.path]
        assert back == sorted(back) and all(p == part.path for p, _ in back)  # type: ignore[misc]
    a = analyze_log(merged)
    assert a.outcome == "serving" and len(a.attempts) == 1


def test_without_run_the_files_stay_separate(tmp_path: Path) -> None:
    node0, node1 = _split(tmp_path)
    doc = _analyze(str(node0), str(node1))
    assert [f["path"] for f in doc["files"]] == [str(node0), str(node1)]
    assert "files" not in doc["files"][0]
