"""A cut traceback that starts in SGLang's HTTP server launcher (`http_server.launch_server`, which
runs only in the main process) is the main process's: `launcher-exception`, a warning, no root
guessed (dev case g-009, PD prefill server whose `uvicorn.run(` failed). A launcher's exception that
carries a child's traceback in its message is that server process's crash."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Severity

REPO = Path(__file__).resolve().parents[1]
_HTTP = "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py"


def _crashes(path: str, name: str = "scheduler-crash") -> list[Severity]:
    a = analyze(path)
    assert not a.rule_errors, a.rule_errors
    return [f.severity for f in a.all_findings() if f.name == name]


def test_launcher_traceback_is_the_main_process() -> None:
    path = str(REPO / "fixtures/corpus/dev/g-009.log")
    assert _crashes(path, "launcher-exception") == [Severity.WARNING]
    assert _crashes(path) == []
    assert analyze(path).root_cause is None


def test_a_launchers_exception_carrying_a_childs_traceback_is_the_childs_crash(tmp_path: Path) -> None:
    # The 2024 launcher re-raising its controller's failure with the controller's traceback in the
    # message, cut inside it (sglang 0.1.x/0.2.x `launch_server`: `Initialization failed.
    # controller_init_state: …`).
    p = tmp_path / "x.log"
    p.write_text("Traceback (most recent call last):\n"
                 '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
                 "    return _run_code(code, main_globals, None,\n"
                 '  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code\n'
                 "    exec(code, run_globals)\n"
                 '  File "/opt/sglang/python/sglang/launch_server.py", line 17, in <module>\n'
                 "    launch_server(server_args)\n"
                 '  File "/opt/sglang/python/sglang/srt/server.py", line 365, in launch_server\n'
                 "    raise RuntimeError(\n"
                 "RuntimeError: Initialization failed. controller_init_state: Traceback (most recent call last):\n"
                 '  File "/opt/sglang/python/sglang/srt/managers/controller/manager_single.py", line 9',
                 encoding="utf-8")
    assert _crashes(str(p)) == [Severity.ERROR]
    assert _crashes(str(p), "launcher-exception") == []


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
