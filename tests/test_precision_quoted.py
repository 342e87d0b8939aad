"""Precision across rules: a catalog message inside a pasted command as typed (`grep '…' log`) or
inside the server's dump of a request (the client's prompt) is quoted, not raised — while the
same line printed by the process still fires its rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import analyze_text

# (rule, a line the process prints) — wordings as SGLang / torch print them.
_PRINTED = [
    ("watchdog-timeout", "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)"),
    ("quant-block-misaligned",
     "ValueError: Weight output_partition_size = 576 is not divisible by weight quantization block_n = 128."),
    ("nccl-timeout",
     "[rank0]:[E1019 01:04:03.356947152 ProcessGroupNCCL.cpp:1413] [PG 3 Rank 0] Heartbeat monitor timed out! "
     "Process will be terminated after dumping debug info. workMetaList_.size()=0"),
    ("unsupported-gpu-arch",
     "RuntimeError: TopKTopPSamplingFromProbs failed with error code no kernel image is available for execution "
     "on the device"),
]


def _grep(line: str) -> str:
    return f"root@pod-7f9c:/workspace# grep -n '{line.replace(chr(39), '')}' /tmp/server.log\n"


def _prompt(line: str) -> str:
    quoted = line.replace('"', "'")
    return (f'[2026-01-01 10:00:00] Receive: obj=GenerateReqInput(text=["My server printed: {quoted} What does '
            'it mean?"], sampling_params={"max_new_tokens": 64, "temperature": 0.0}, rid="9a1c")\n')


@pytest.mark.parametrize(("rule", "line"), _PRINTED, ids=[r for r, _ in _PRINTED])
def test_the_printed_line_fires_its_rule(tmp_path: Path, rule: str, line: str) -> None:
    assert rule in analyze_text(tmp_path, line + "\n").fired()


@pytest.mark.parametrize(("rule", "line"), _PRINTED, ids=[r for r, _ in _PRINTED])
def test_the_line_in_a_typed_grep_command_is_quoted(tmp_path: Path, rule: str, line: str) -> None:
    assert rule not in analyze_text(tmp_path, _grep(line)).fired()


@pytest.mark.parametrize(("rule", "line"), _PRINTED, ids=[r for r, _ in _PRINTED])
def test_the_line_in_a_clients_prompt_is_quoted(tmp_path: Path, rule: str, line: str) -> None:
    assert rule not in analyze_text(tmp_path, _prompt(line)).fired()


def _args_dump(line: str) -> str:
    quoted = line.replace("'", '"')
    return (f"[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=8, "
            f"json_model_override_args='{{\"note\": \"{quoted}\"}}', watchdog_timeout=300)\n")


@pytest.mark.parametrize(("rule", "line"), _PRINTED, ids=[r for r, _ in _PRINTED])
def test_the_line_as_a_value_in_the_server_args_dump_is_quoted(tmp_path: Path, rule: str, line: str) -> None:
    assert rule not in analyze_text(tmp_path, _args_dump(line)).fired()
