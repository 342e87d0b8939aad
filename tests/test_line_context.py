"""Lines whose kind only their neighbours tell (parsing/continuations.py, counted by
`Coverage.settle`): an excerpt's cut last line and a hard-wrapped line's rest are recognized; a
complete last line, a line in the middle of a log and a record of its own are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.parsing.continuations import is_cut_end, is_cut_repeat
from logparse.parsing.pipeline import parse_file

FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 3293, in run_scheduler_process\n'
    "    scheduler.run_event_loop()\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/layers/matmul.py", line 315, in matmul_persistent\n'
    "    return _matmul_persistent_triton(a=a, b=b, bias=bias)\n"
)
ASSERTS = ('Assertion failed: /usr/local/lib/python3.12/dist-packages/deep_gemm/include/deep_gemm/comm/barrier.cuh:45, '
           'condition: false and "Grid sync timeout"\n') * 2
FLUSHED = "".join(f"(SGLangEngine pid=516714) [2026-01-27 06:50:01 TP{i}] Cache flushed successfully!\n" for i in range(3))
# torch's ProcessGroupNCCL watchdog line, hard-wrapped at a web page's width (quoted from a real excerpt)
NCCL_WRAPPED = (
    "[rank4]:[E210 02:06:33.321682548 ProcessGroupNCCL.cpp:630] [Rank 4] Some NCCL operations have failed or "
    "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupt\n"
    "ed/incomplete data.\n"
)


def _classified(tmp_path: Path, text: str) -> dict[str, int]:
    path = tmp_path / "x.log"
    path.write_text(text, encoding="utf-8")
    cov = parse_file(str(path)).coverage
    assert cov.recognized + cov.unparsed == cov.total
    return dict(cov.classified)


@pytest.mark.parametrize("text", [
    FRAMES + "Fil\n",  # a frame line cut after three letters
    FRAMES + "Fil",  # (no final newline)
    FRAMES + "Fil\n\n\n",  # blank lines after it: still the last line
    ASSERTS + "Assertio\n",
    FLUSHED + "(SGLan\n",
    FRAMES + "Fil\n```\n",  # the last line of a markdown code block
    FRAMES + "Fil\nroot@node-1:/workspace# nvidia-smi\n",  # the last line before a shell prompt
])
def test_cut_last_line(tmp_path: Path, text: str) -> None:
    assert _classified(tmp_path, text).get("cut-line") == 1


@pytest.mark.parametrize("text", [
    FRAMES + "Fil\nmore output\n",  # not the last line
    # a serving stats line (a hot line, kept in columns, not as text) after it
    FRAMES + "Fil\n[2025-01-01 00:00:00 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.00, "
    "gen throughput (token/s): 1.00, #queue-req: 0\n",
    FLUSHED + "Killed\n",
    FLUSHED + "Aborted (core dumped)\n",
    FLUSHED + "All workers stopped normally\n",  # ends in whole words
    FLUSHED + "All workers stopped 12\n",  # ends in a number: a whole one, as far as anyone can tell
    FRAMES + "RuntimeError: CUDA error: out of memory\n",
])
def test_not_a_cut_last_line(tmp_path: Path, text: str) -> None:
    assert "cut-line" not in _classified(tmp_path, text)


def test_a_real_error_on_the_last_line_stays_an_exception(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text(FRAMES + "RuntimeError: CUDA error: out of memory\n", encoding="utf-8")
    log = parse_file(str(path))
    assert any("out of memory" in str(getattr(e, "message", "")) for e in log.events)


def test_a_line_repeated_after_its_cut(tmp_path: Path) -> None:
    text = ("[2025-11-06 16:56:13 TP0] [[req_idx=0, Extend finished. Rid 6847fb46232249c986ee4d64d34efd34] prev: INIT\n"
            "[2025-11-06 16:56:17 TP0] [[req_idx=0, Extend finished. Rid 6847fb4623224\n"
            "[2025-11-06 16:56:18 TP0] Cache flushed successfully!\n")
    assert _classified(tmp_path, text).get("cut-line") == 1


@pytest.mark.parametrize(("text", "neighbour", "cut"), [
    ("Extend finished. Rid 6847fb", "[2025-11-06 16:56:13 TP0] Extend finished. Rid 6847fb4623", True),
    ("Extend finished.", "Extend finished. Rid 6847fb4623", False),  # ends at a word's end
    ("Extend finished. Rid 6847fb", "Extend finished. Rid 6847fb", False),  # the same line
    ("Extend", "Extended", False),  # too short to tell
    ("nished. Rid 6847fb", "Extend finished. Rid 6847fb4623", False),  # not where a line starts
])
def test_cut_repeat(text: str, neighbour: str, cut: bool) -> None:
    assert is_cut_repeat(text, neighbour) is cut


@pytest.mark.parametrize(("text", "neighbour", "cut"), [
    ("D", "[2024-11-08 04:44:04 TP1] Detected errors during sampling! NaN in the logits.", True),
    ("D", "[2024-11-08 04:44:04 TP1] Some Detected errors", False),  # not where the message starts
    ("Killed", "[2024-11-08 04:44:04 TP1] Killed process 12", False),  # a whole word of it
])
def test_a_short_cut_repeat_at_the_message_start(text: str, neighbour: str, cut: bool) -> None:
    assert is_cut_repeat(text, neighbour, 1) is cut


def test_a_last_line_cut_after_one_letter(tmp_path: Path) -> None:
    text = ("[2024-11-08 04:44:04 TP1] Detected errors during sampling! NaN in the logits.\n"
            "[2024-11-08 04:44:04 TP1] Detected errors during sampling! NaN in the logits.\nD\n")
    assert _classified(tmp_path, text).get("cut-line") == 1


@pytest.mark.parametrize(("text", "near", "cut"), [
    ("Assertio", {"Assertion", "failed"}, True),
    ("Assertion", {"Assertion", "failed"}, False),
    ("Killed", set(), False),  # a whole word of the templates
    ("zqxw", set(), False),  # starts no known word
])
def test_cut_end(text: str, near: set[str], cut: bool) -> None:
    assert is_cut_end(text, near) is cut


@pytest.mark.parametrize("text", [
    NCCL_WRAPPED,
    # a command wrapped inside a hash (a web page's width)
    "python3 -m sglang.launch_server --trust-remote-code --model-path /home/u/.cache/huggingface/hub/models--google--"
    "gemma-3n-E2B-it/snapshots/5e092ebca197cdcd8d8\nb195040accf22693501bc/\n",
    # a repr cut inside a name and then inside the brackets it opened
    "warnings: the device parameters have been replaced in torch.logspace, torch.randint, torch.hann_window, torch.Ten\n"
    "sor.new_full, torch.Tensor.new_zeros(\n",
])
def test_wrapped_continuation(tmp_path: Path, text: str) -> None:
    assert _classified(tmp_path, text + FLUSHED).get("wrapped-continuation") == 1


@pytest.mark.parametrize("text", [
    "Some GPU operations might run on corrupt\ned/incomplete data.\n",  # too short a line for a wrap
    NCCL_WRAPPED.replace("corrupt\n", "corrupt.\n"),  # it ended a sentence
    # a frame's source line after its location line (the indentation lost in the paste)
    'File "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", line 120, in decorate_context\n'
    "return func(*args, **kwargs)\n",
    NCCL_WRAPPED.replace("ed/incomplete", "Ed/incomplete"),  # a capital: a line of its own
    NCCL_WRAPPED.replace("ed/incomplete", "[2024-12-06 16:07:02] ed/incomplete"),  # an envelope: a record
])
def test_not_a_wrapped_continuation(tmp_path: Path, text: str) -> None:
    assert "wrapped-continuation" not in _classified(tmp_path, text + FLUSHED)


def test_wrapped_continuation_in_a_double_spaced_paste(tmp_path: Path) -> None:
    text = "".join(line + "\n\n" for line in (NCCL_WRAPPED + FLUSHED).splitlines())
    assert _classified(tmp_path, text).get("wrapped-continuation") == 1


def test_a_blank_line_ends_a_line(tmp_path: Path) -> None:
    # one blank line after a long line, in a paste that is not double-spaced: no wrap fell there
    text = ('$ sglang generate --model-path Wan-AI/Wan2.1-T2V-1.3B-Diffusers     --prompt "A curious raccoon"'
            "     --save-output\n\nn\"     --save-output\n" + FLUSHED)
    assert "wrapped-continuation" not in _classified(tmp_path, text)


SERVER_ARGS = (
    "[2025-01-01 00:00:00] server_args=ServerArgs(model_path='/models/Qwen2-7B', tokenizer_mode='auto', "
    "trust_remote_code=False, enable_dp_attention=False, enable_ep_moe=False, log_requests=False, "
    "log_requests_level=0, json_model_override_args='{}', chunked_prefill_size=8192, disable_radix_cache=False, "
    "mem_fraction_static=0.88, tp_size=8, dp_size=1, random_seed=42, watchdog_timeout=300, dist_init_addr=None, "
    "enable_torch_compile=False, cuda_graph_max_bs=160)"
)
LOAD = "[2025-01-01 00:00:01] Load weight begin. avail mem=70.00 GB\n"


@pytest.mark.parametrize("width", [80, 120, 200])
def test_a_wrapped_server_args_dump_is_recognized(tmp_path: Path, width: int) -> None:
    # a terminal's fixed width: pieces start with a capital (`None, …`), a brace or a dot inside the repr
    pieces = [SERVER_ARGS[i:i + width] for i in range(0, len(SERVER_ARGS), width)]
    path = tmp_path / "x.log"
    path.write_text("\n".join(pieces) + "\n" + LOAD, encoding="utf-8")
    cov = parse_file(str(path)).coverage
    assert cov.unparsed == 0
    assert cov.classified.get("wrapped-continuation", 0) >= 1


def test_an_open_bracket_does_not_take_the_next_record(tmp_path: Path) -> None:
    head = SERVER_ARGS[:150]  # left open
    text = f"{head}\n\nNone of the workers answered in time\n" + LOAD
    assert "wrapped-continuation" not in _classified(tmp_path, text)
