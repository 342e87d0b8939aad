"""A cut traceback that starts in SGLang's HTTP server launcher (`http_server.launch_server`, which
runs only in the main process) is the main process's: reported as a warning, no root guessed
(dev case g-009, PD prefill server whose `uvicorn.run(` failed)."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Severity

REPO = Path(__file__).resolve().parents[1]
_HTTP = "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py"


def _crashes(path: str) -> list[Severity]:
    a = analyze(path)
    assert not a.rule_errors, a.rule_errors
    return [f.severity for f in a.all_findings() if f.name == "scheduler-crash"]


def test_launcher_traceback_is_the_main_process() -> None:
    path = str(REPO / "fixtures/corpus/dev/g-009.log")
    assert _crashes(path) == [Severity.WARNING]
    assert analyze(path).root_cause is None


def test_near_miss_a_ranked_traceback_through_the_same_file_is_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("[2025-06-04 17:51:38 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
                 f'[2025-06-04 17:51:38 TP0]   File "{_HTTP}", line 783, in launch_server\n'
                 "[2025-06-04 17:51:38 TP0]     uvicorn.run(\n", encoding="utf-8")
    assert _crashes(str(p)) == [Severity.ERROR]


def test_near_miss_another_programs_launch_server_is_not_sglangs(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("Traceback (most recent call last):\n"
                 '  File "/srv/app/deploy.py", line 12, in launch_server\n'
                 "    start()\n"
                 '  File "/usr/local/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 9, in f\n',
                 encoding="utf-8")
    assert _crashes(str(p)) == [Severity.ERROR]
