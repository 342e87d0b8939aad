"""0.1.x–0.2.x launch_server prints the traceback a child process sent instead of "init ok" behind
`router init state: ` (0.1.x) or `Initialization failed. router_init_state: ` / `controller_init_state: `
/ `detoken_init_state: ` (sglang.txt templates), then exits: a traceback header whose process failed
to initialise, so the crash is a start-up crash even when the frames are cut."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Traceback
from logparse.parsing.pipeline import parse_file

REPO = Path(__file__).resolve().parents[1]
_MGR = "/venv/lib/python3.10/site-packages/sglang/srt/managers"


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "x.log"
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_router_init_state_cut_traceback_is_a_startup_crash() -> None:
    # dev case g-019 (0.1.13): the frame is cut inside `start_router_process`.
    path = str(REPO / "fixtures/corpus/dev/g-019.log")
    assert any(t.process == "router init" for t in parse_file(path).of(Traceback))
    a = analyze(path)
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome == "crashed-at-startup"


def test_controller_init_state_with_its_exception(tmp_path: Path) -> None:
    text = ("[2024-07-30 10:00:00] Initialization failed. controller_init_state: Traceback (most recent call last):\n"
            f'  File "{_MGR}/controller/manager_single.py", line 150, in start_controller_process\n'
            "    controller = ControllerSingle(\n"
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n")
    log = parse_file(_write(tmp_path, text))
    tbs = log.of(Traceback)
    assert [(t.process, t.exc_type) for t in tbs] == [("controller init", "RuntimeError")]


def test_near_miss_init_ok_is_no_header(tmp_path: Path) -> None:
    # The success report of the same print is not a traceback header.
    log = parse_file(_write(tmp_path, "detoken init state: init ok\n"))
    assert not log.of(Traceback)
