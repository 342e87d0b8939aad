"""docker compose's own report that a container ended (`sglang-1 exited with code 1`, no service
prefix: compose prints it, not the container) is shell output, and its code is the run's exit code."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.parsing.classify import classify

# sgl-project/sglang#203 (dev/p-018): the service's traceback tail, then compose's line
LOG = """outlines-server-1  | ImportError: cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema' (/usr/local/lib/python3.11/site-packages/outlines/fsm/json_schema.py)
outlines-server-1 exited with code 1
"""


def test_composes_exit_line_is_shell_output_with_the_exit_code(tmp_path: Path) -> None:
    assert classify("outlines-server-1 exited with code 1") == "shell-output"
    assert classify("sglang_1 exited with code 137") == "shell-output"
    log = tmp_path / "run.log"
    log.write_text(LOG)
    a = analyze(str(log))
    assert a.views.facts()["exit_code"] == 1
    assert a.log.coverage.unparsed == 0


def test_a_sentence_about_an_exit_is_not(tmp_path: Path) -> None:
    assert classify("the worker process exited with code 1 after the OOM") is None
    log = tmp_path / "run.log"
    log.write_text("the worker process exited with code 1 after the OOM\n")
    assert "exit_code" not in analyze(str(log)).views.facts()
