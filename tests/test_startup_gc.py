"""The CLI starts with the garbage collector paused (cli/startup.py), and gives it back for
anything but a short run. Counted (collections, the collector's state), never timed."""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli import startup
from logparse.cli.main import SHORT_RUN_COMMANDS, main

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "logs"


@pytest.fixture
def paused() -> Iterator[None]:
    assert gc.isenabled()
    startup.pause_gc()
    try:
        yield
    finally:
        startup.resume_gc()
        assert gc.isenabled()


def _a_log() -> Path:
    return sorted(FIXTURE.glob("*.log"))[0]


def test_a_small_plain_input_keeps_the_collector_paused(paused: None) -> None:
    startup.inputs_known([str(_a_log())])
    assert not gc.isenabled() and startup.gc_paused()


def test_a_large_input_gives_the_collector_back(paused: None, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with open(big, "wb") as fh:
        fh.truncate(startup.SMALL_INPUT_BYTES)  # sparse: the size is what counts
    startup.inputs_known([str(big)])
    assert gc.isenabled() and not startup.gc_paused()


def test_small_inputs_add_up(paused: None, tmp_path: Path) -> None:
    """`compare` announces its paths one at a time: the total decides, not each file."""
    half = tmp_path / "half.log"
    with open(half, "wb") as fh:
        fh.truncate(startup.SMALL_INPUT_BYTES // 2 + 1)
    startup.inputs_known([str(half)])
    assert not gc.isenabled()
    startup.inputs_known([str(half)])
    assert gc.isenabled()


@pytest.mark.parametrize("kind", ["stdin", "gzip", "missing"])
def test_an_input_of_unknown_size_gives_the_collector_back(paused: None, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.log"  # a gzip stream under a plain name: found by its magic, not its name
    if kind == "gzip":
        path.write_bytes(gzip.compress(b"line\n"))
    name = "-" if kind == "stdin" else str(path)
    startup.inputs_known([name])
    assert gc.isenabled()


def test_a_collector_switched_off_by_someone_else_stays_off() -> None:
    gc.disable()
    try:
        startup.pause_gc()
        startup.resume_gc()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_command_that_does_not_announce_its_inputs_runs_with_the_collector(paused: None) -> None:
    ctx = main.make_context("logdiag", ["rules"])
    name, command, _ = main.resolve_command(ctx, ["rules"])
    assert name == "rules" and command is not None
    assert gc.isenabled()


def test_a_short_run_command_waits_for_its_inputs(paused: None) -> None:
    ctx = main.make_context("logdiag", ["analyze", "x.log"])
    main.resolve_command(ctx, ["analyze", "x.log"])
    assert not gc.isenabled()


def test_every_short_run_command_exists() -> None:
    ctx = main.make_context("logdiag", ["analyze", "x.log"])
    assert SHORT_RUN_COMMANDS <= set(main.list_commands(ctx))


def test_an_in_process_run_gives_the_collector_back() -> None:
    result = CliRunner().invoke(main, ["analyze", str(_a_log()), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled()
    result = CliRunner().invoke(main, ["analyze", "/nonexistent/x.log"])
    assert result.exit_code == 2
    assert gc.isenabled()


_PROBE = """
import gc, json, sys
import logparse.cli.startup as startup
# Counted from the CLI's first line on (compiling a changed module before it may collect).
started, pause = [], startup.pause_gc
def first_line():
    started.append(True)
    if sys.argv[2] != "no-pause":
        pause()
startup.pause_gc = first_line
seen = []
gc.callbacks.append(lambda phase, info: seen.append(info["generation"]) if phase == "start" and started else None)
from logparse.cli.main import main
args = ["logdiag", *json.loads(sys.argv[1])]
runs = []
for _ in range(int(sys.argv[3])):
    sys.argv = args
    try:
        main()
    except SystemExit as done:
        code = done.code
    runs.append(seen[:])
    seen.clear()
print(json.dumps({"code": code, "collections": runs[0], "later": runs[1:], "enabled": gc.isenabled(),
                  "frozen": gc.get_freeze_count()}), file=sys.stderr)
"""


def _probe(args: list[str], mode: str = "normal", runs: int = 1) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args), mode, str(runs)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, check=False)
    doc: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return doc


def test_a_short_analyze_runs_no_collection() -> None:
    """Without the pause a short analyze makes ~60 collections (importing, parsing, rendering)."""
    doc = _probe(["analyze", str(_a_log()), "--format", "json"])
    assert doc["code"] in (0, None)
    assert doc["collections"] == []
    assert doc["enabled"] is True
    assert doc["frozen"] > 0  # the interpreter's final collection skips the run's objects


def test_the_probe_sees_collections() -> None:
    """The probe is not blind: the same run without the pause collects."""
    doc = _probe(["analyze", str(_a_log()), "--format", "json"], "no-pause")
    assert doc["code"] in (0, None)
    assert len(doc["collections"]) > 10  # type: ignore[arg-type]


def test_only_a_process_first_command_is_paused() -> None:
    """A process that runs several commands (tests do, in-process) runs the later ones with the
    collector as usual, and what the first one froze is given back to the collector."""
    doc = _probe(["analyze", str(_a_log()), "--format", "json"], runs=3)
    assert doc["collections"] == []
    assert all(len(later) > 0 for later in doc["later"])  # type: ignore[union-attr]
    assert doc["frozen"] == 0
