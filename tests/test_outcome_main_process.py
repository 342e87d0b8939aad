"""Outcome of a traceback that reached the launching program's top level (issue 9).

A main-process traceback (outermost frame `<module>` or runpy's `_run_module_as_main`, no process
header, no rank, no server process's frames) cut before its exception line: the main program died
on an exception. Before the server was up nothing else runs at that level, so the attempt crashed
at start-up; after it was up, or for a Ctrl-C, it did not.

Real occurrences (dev corpus, read verbatim): f-014 (sgl-project/sglang#7009: SGLang's test
harness launching `python3.10 -m sglang.launch_server`, runpy frame cut), g-006 (`<frozen runpy>`
-> launch_server.py), g-007 / d-042 (FastChat's sglang_worker under `python -m`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from tests.conftest import FIXTURES

DEV = FIXTURES / "corpus" / "dev"


@pytest.mark.parametrize("name", ["f-014", "g-006", "g-007", "d-042"])
def test_cut_main_process_traceback_is_a_startup_crash(name: str) -> None:
    a = analyze(str(DEV / f"{name}.log"))
    assert a.outcome == "crashed-at-startup", name
    assert a.root_cause is None, name  # the exception is not shown: no root is guessed
    assert a.facts.get("ready") is False, name


_RUNPY_CUT = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
    "    return _run_code(code, main_globals, None,\n"
    '  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code\n'
    "    exec(code, run_globals)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/launch_server.py", line 14, in <module>\n'
    "    launch_server(server_args)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/server.py", line 4'
)


def _write(tmp_path: Path, text: str) -> str:
    log = tmp_path / "x.log"
    log.write_text(text, encoding="utf-8")
    return str(log)


def test_same_traceback_after_the_server_was_up_is_not_a_startup_crash(tmp_path: Path) -> None:
    # Near miss: the ready marker came first, so the main process was not starting any more.
    text = ("[2025-05-14 12:00:01] The server is fired up and ready to roll!\n"
            '[2025-05-14 12:00:05] INFO:     127.0.0.1:50000 - "POST /generate HTTP/1.1" 200 OK\n' + _RUNPY_CUT + "\n")
    assert analyze(_write(tmp_path, text)).outcome != "crashed-at-startup"


def test_ctrl_c_at_the_top_level_is_not_a_crash(tmp_path: Path) -> None:
    # Near miss: the same frames ending in KeyboardInterrupt are someone stopping the program.
    text = _RUNPY_CUT.rsplit("\n", 1)[0] + "\nKeyboardInterrupt\n"
    a = analyze(_write(tmp_path, text))
    assert a.outcome not in ("crashed-at-startup", "crashed-while-serving")


def test_benchmark_clients_top_level_traceback_is_no_server_outcome(tmp_path: Path) -> None:
    # Near miss: `python -m sglang.bench_serving` dying at its top level is a client, not a server.
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
        "    return _run_code(code, main_globals, None,\n"
        '  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code\n'
        "    exec(code, run_globals)\n"
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/bench_serving.py", line 1520, in <module>\n'
        "    run_benchmark(args)\n"
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/bench_serving.py", line 1290, in run_benchmark\n'
        "    return asyncio.run("
    )
    assert analyze(_write(tmp_path, text + "\n")).outcome is None
