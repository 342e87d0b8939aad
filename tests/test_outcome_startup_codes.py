"""A log cut during start-up is `incomplete` whatever start-up message it stops after (regression: the
start-up evidence once listed three codes the grammar never emits)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main

CASES = {
    "attention backend default": "[2026-05-07 10:00:00] Attention backend not specified. Use fa3 backend by default.\n",
    "vLLM platform (old releases)": "INFO 05-01 10:00:00 __init__.py:190] Automatically detected platform cuda.\n",
    "DeepGEMM JIT session": (
        "[2025-05-01 10:00:01] Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically "
        "10-20 mins) if you have not run `sglang.compile_deep_gemm`.\n"
    ),
    "Run:ai model streamer": (
        "[01-19 11:47:29] [RunAI Streamer] Overall time to stream 21.2 GiB of all files to cpu: 8.03s, 2.6 GiB/s\n"
    ),
    "vLLM weight format (old releases)": (
        "INFO 02-19 15:51:07 weight_utils.py:164] Using model weights format ['*.safetensors']\n"
    ),
    "0.1.x rpyc TP worker": "server started on [0.0.0.0]:10004\n",
    # dev g-011 (PD transfer engine, 0.4.x wording); HiCache's Mooncake store (0.5.x wording)
    "Mooncake configuration (PD transfer engine)": (
        "[2025-06-16 07:25:02 DP4 TP4] Mooncake Configuration loaded successfully.\n"
    ),
    "Mooncake configuration (HiCache store)": (
        "[2025-09-01 10:00:00 TP0] Mooncake Configuration loaded from extra_config successfully.\n"
    ),
    # dev k-009 (Mooncake#257, 0.4.6.post4 PD prefill): uvicorn started, its application startup not complete
    "uvicorn waiting for application startup": (
        "[2025-05-16 09:00:52] INFO:     Started server process [45012]\n"
        "[2025-05-16 09:00:52] INFO:     Waiting for application startup.\n"
    ),
    "checkpoint shards bar only": (
        "Loading safetensors checkpoint shards:  98% Completed | 159/163 [31:48<00:40, 10.19s/it]\n"
    ),
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_a_log_cut_after_a_startup_message_is_incomplete(tmp_path: Path, text: str) -> None:
    log = tmp_path / "cut.log"
    log.write_text(text)
    res = CliRunner().invoke(main, ["analyze", str(log), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["files"][0]["outcome"] == "incomplete"


def test_a_line_that_shows_nothing_of_a_startup_is_not_incomplete(tmp_path: Path) -> None:
    log = tmp_path / "other.log"
    log.write_text("hello world\n")
    res = CliRunner().invoke(main, ["analyze", str(log), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["files"][0]["outcome"] is None
