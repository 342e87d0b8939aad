"""A launching program that cannot import a dependency while it loads (its traceback reaches the
module level, ImportError / ModuleNotFoundError) ran no server process: `launcher-exception`
reports it as a warning naming the module, with no guessed root cause, and `scheduler-crash` does
not fire. A server process's import error (a scheduler's header or rank tag) stays a crash."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

# sgl-project/sglang#203 (dev/p-018), without its compose prefix
MAIN = """Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/usr/local/lib/python3.11/site-packages/sglang/launch_server.py", line 3, in <module>
    from sglang.srt.server import ServerArgs, launch_server
  File "/usr/local/lib/python3.11/site-packages/sglang/srt/constrained/__init__.py", line 4, in <module>
    from outlines.fsm.json_schema import build_regex_from_object
ImportError: cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema' (/usr/local/lib/python3.11/site-packages/outlines/fsm/json_schema.py)
"""
# pzs19/TokenSelect#2 (dev/p-022): a serve script importing SGLang's modules
SCRIPT = """Traceback (most recent call last):
  File "/home/user/app/TokenSelect-main/benchmark/serve.py", line 34, in <module>
    patch_model(sgl_conf)
  File "/home/user/.local/lib/python3.11/site-packages/sglang/srt/constrained/__init__.py", line 25, in <module>
    from outlines.fsm.regex import FSMInfo, make_byte_level_fsm, make_deterministic_fsm
ModuleNotFoundError: No module named 'outlines.fsm.regex'
"""
SCHEDULER = """[2025-03-10 05:43:42 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2582, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
ModuleNotFoundError: No module named 'outlines.fsm.regex'
"""


def _analysis(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "run.log"
    log.write_text(text)
    return analyze(str(log))


def test_the_main_programs_import_failure_has_no_guessed_root(tmp_path: Path) -> None:
    for text, module in ((MAIN, "outlines.fsm.json_schema"), (SCRIPT, "outlines.fsm.regex")):
        a = _analysis(tmp_path, text)
        assert a.root_cause is None
        assert "scheduler-crash" not in a.fired()
        [f] = [f for f in a.findings if f.name == "launcher-exception"]
        assert f.severity.value == "warning" and f.data["module"] == module
        assert "`outlines`" in f.remedy and a.outcome == "crashed-at-startup"


def test_a_server_process_import_failure_stays_a_crash(tmp_path: Path) -> None:
    a = _analysis(tmp_path, SCHEDULER)
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert "launcher-exception" not in a.fired()
