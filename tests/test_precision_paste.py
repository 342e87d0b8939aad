"""Precision across rules: a catalog message in the text a person pasted around a log — prose
between fenced blocks, a markdown inline code span or emphasised field name, an issue template's field, a
Python statement or source line, an `echo`/`grep` typed without a prompt, a sentence that quotes a
whole record — is quoted, not raised (`parsing/quoting.py`). The same line printed by a program
(with its envelope, or native output that has none, or inside a fenced block) still fires."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import analyze_text

# (rule, a line a program prints) — wordings as SGLang / FlashInfer / torch print them.
_NATIVE = ("illegal-memory-access",
           "CUDA Error: an illegal memory access was encountered (CUDA Error: 700) "
           "(/opt/conda/lib/python3.10/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh: line 2349)")
_RECORD = ("watchdog-timeout", "[2025-06-22 16:13:55 TP0] Watchdog timeout (self.watchdog_timeout=300)")
_PORT = ("port-in-use", "[2026-02-26 16:40:41] Port is already in use. dist_init_port=30005 port_base=30000 "
         "detokenizer_port=30001 nccl_port=30003 scheduler_input_port=30002")
_PRINTED = [_NATIVE, _RECORD, _PORT]
_IDS = [r for r, _ in _PRINTED]


def _fired(tmp_path: Path, text: str) -> set[str]:
    return set(analyze_text(tmp_path, text).fired())


def _fenced(line: str) -> str:
    return f"### Describe the bug\n\nThe server dies.\n\n```log\n{line}\n```\n"


def _quotings(line: str) -> dict[str, str]:
    plain = line.replace('"', "'")
    return {
        # prose between the fenced blocks of an issue: the log is in the block, not the sentence
        "prose-outside-fences": (f"I started it as usual and then saw {line} in the output.\n\n"
                                 "```bash\npython -m sglang.launch_server --model-path m\n```\n"),
        "inline-code": f"I see `{line}` after a few minutes.\n",
        "template-field": f"**Describe the bug** {line}\n",
        "python-call": f'logger.error("{plain}")\n',
        "python-raise": f'raise RuntimeError("{plain}")\n',
        "echo": f'echo "{plain}" >> /tmp/notes.txt\n',
        "grep": f"grep -c '{plain}' server.log\n",
    }


@pytest.mark.parametrize(("rule", "line"), _PRINTED, ids=_IDS)
def test_the_printed_line_fires_alone_and_inside_a_fenced_block(tmp_path: Path, rule: str, line: str) -> None:
    assert rule in _fired(tmp_path, line + "\n")
    assert rule in _fired(tmp_path, _fenced(line))


@pytest.mark.parametrize("how", list(_quotings("x")))
@pytest.mark.parametrize(("rule", "line"), _PRINTED, ids=_IDS)
def test_the_line_quoted_in_the_paste_does_not_fire(tmp_path: Path, rule: str, line: str, how: str) -> None:
    assert rule not in _fired(tmp_path, _quotings(line)[how])


@pytest.mark.parametrize(("rule", "line"), [_RECORD, _PORT], ids=["watchdog-timeout", "port-in-use"])
def test_a_sentence_that_quotes_a_whole_record_does_not_fire(tmp_path: Path, rule: str, line: str) -> None:
    # a record starts its line (or follows its writer's prefix): after words, it is quoted
    assert rule not in _fired(tmp_path, f"The server crashes with {line}\n")


def test_an_exception_line_quoted_in_a_sentence_does_not_fire(tmp_path: Path) -> None:
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert "illegal-memory-access" in _fired(tmp_path, line + "\n")
    assert "illegal-memory-access" not in _fired(tmp_path, f"Hi, when I run the server I get: {line}\n")


def test_a_python_source_line_is_code_not_the_message(tmp_path: Path) -> None:
    # a source line quoted alone (indented, as a traceback prints it) that names an error
    text = '    if "CUDA Error: an illegal memory access was encountered" in str(e):\n'
    assert "illegal-memory-access" not in _fired(tmp_path, text)


def test_an_excerpt_that_starts_inside_a_block_is_read_as_log(tmp_path: Path) -> None:
    # the paste's opening fence was cut: the first fence closes the block the log is in
    line = _NATIVE[1]
    text = f"{line}\n```\n\nThanks for looking.\n\n```bash\nnvidia-smi\n```\n"
    assert "illegal-memory-access" in _fired(tmp_path, text)


def test_another_loggers_record_holding_an_exception_still_fires(tmp_path: Path) -> None:
    # `… - name - LEVEL - msg` is a writer's envelope (classify: foreign-logger), not prose
    text = "2025-03-08 12:29:12,123 - sglang_router - ERROR - RuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert "illegal-memory-access" in _fired(tmp_path, text)
