"""Tests for logparse.io.reader: cleaning rules, wrappers, sources, byte ranges and checks.

Sample lines are copied from the development corpus (shared/corpus/dev-*.log) so the rules
are tested against what real captures look like; only `test_corpus_reads_cleanly` reads the
corpus itself.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import json
import os
import sys
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.io import lines as reader_lines
from logparse.io import ranges as reader_ranges
from logparse.io import sources as reader_sources
from logparse.io.reader import (
    InputError,
    Line,
    ReadReport,
    Wrapper,
    check_readable,
    expand_paths,
    read_lines,
    split_points,
)
from tests.conftest import CORPUS


def read_bytes(tmp_path: Path, data: bytes, name: str = "run.log") -> tuple[list[Line], ReadReport]:
    p = tmp_path / name
    p.write_bytes(data)
    rep = ReadReport(str(p))
    return list(read_lines(str(p), rep)), rep


def texts(lines: list[Line]) -> list[str]:
    return [t for _, t, _ in lines]


def numbered(lines: list[Line]) -> list[tuple[int, str]]:
    return [(n, t) for n, t, _ in lines]


def physical_count(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@contextmanager
def patched(**values: Any) -> Iterator[None]:
    """Patch reader constants (usable inside hypothesis tests, unlike monkeypatch)."""
    homes = {"MAX_LINE_CHARS": reader_lines, "BLOCK_SIZE": reader_sources}
    with contextlib.ExitStack() as stack:
        for name, value in values.items():
            stack.enter_context(mock.patch.object(homes[name], name, value))
        yield


# ------------------------------------------------------------------------------------------
# Basic lines, numbering, counters
# ------------------------------------------------------------------------------------------


def test_plain_envelope_lines_pass_through(tmp_path: Path) -> None:
    data = (
        b"[2026-03-07 15:31:10 TP4] Init torch distributed begin.\n"
        b"[2026-03-07 15:31:40] INFO:     Started server process [1889]\n"
        b"[15:31:10 TP0] Decode batch, #running-req: 1, #token: 227, token usage: 0.00, \n"
    )
    lines, rep = read_bytes(tmp_path, data)
    assert lines == [
        (1, "[2026-03-07 15:31:10 TP4] Init torch distributed begin.", None),
        (2, "[2026-03-07 15:31:40] INFO:     Started server process [1889]", None),
        # trailing ", " of stats lines is meaningful and kept
        (3, "[15:31:10 TP0] Decode batch, #running-req: 1, #token: 227, token usage: 0.00, ", None),
    ]
    assert rep.physical_lines == 3
    assert rep.lines == 3
    assert rep.bytes_read == len(data)
    assert rep.missing_final_newline is False
    assert rep.damaged is None
    assert rep.wrapped == rep.crlf == rep.bad_utf8 == rep.nul_bytes == 0


def test_first_line_no_offsets_numbering(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(b"a\nb\n")
    rep = ReadReport(str(p))
    assert numbered(list(read_lines(str(p), rep, first_line_no=41))) == [(41, "a"), (42, "b")]
    assert rep.physical_lines == 2


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    lines, rep = read_bytes(tmp_path, b"")
    assert lines == []
    assert rep.physical_lines == 0
    assert rep.missing_final_newline is False


def test_empty_lines_are_kept(tmp_path: Path) -> None:
    lines, rep = read_bytes(tmp_path, b"a\n\n\nb\n")
    assert numbered(lines) == [(1, "a"), (2, ""), (3, ""), (4, "b")]
    assert rep.physical_lines == 4


def test_missing_final_newline(tmp_path: Path) -> None:
    lines, rep = read_bytes(
        tmp_path, b"[2026-03-07 15:31:10 TP0] one\n[2026-03-07 15:31:11 TP0] two"
    )
    assert numbered(lines) == [
        (1, "[2026-03-07 15:31:10 TP0] one"),
        (2, "[2026-03-07 15:31:11 TP0] two"),
    ]
    assert rep.missing_final_newline is True
    assert rep.physical_lines == 2


def test_bad_utf8_replaced_and_counted(tmp_path: Path) -> None:
    data = (
        b"[2026-03-07 15:31:10 TP0] caf\xe9 ok\n"  # one invalid byte
        b"fine \xef\xbf\xbd already a replacement char\n"  # a real U+FFFD is not an error
        b"two \xff and \xc3\n"  # two invalid sequences (one is a truncated 2-byte char)
    )
    lines, rep = read_bytes(tmp_path, data)
    assert texts(lines) == [
        "[2026-03-07 15:31:10 TP0] caf\ufffd ok",
        "fine \ufffd already a replacement char",
        "two \ufffd and \ufffd",
    ]
    assert rep.bad_utf8 == 3
    assert (1, "1 invalid UTF-8 sequence replaced") in rep.flagged
    assert (3, "2 invalid UTF-8 sequences replaced") in rep.flagged


def test_valid_multibyte_text_is_not_counted(tmp_path: Path) -> None:
    # dev-003: a fullwidth colon; dev-013: tqdm block characters
    data = "Before this PR：\nCapturing batches (bs=1 avail_mem=38.07 GB): 100%|██████████|\n"
    lines, rep = read_bytes(tmp_path, data.encode())
    assert texts(lines) == data.splitlines()
    assert rep.bad_utf8 == 0


def test_nul_bytes_removed(tmp_path: Path) -> None:
    lines, rep = read_bytes(tmp_path, b"\x00\x00[2026-03-07 15:31:10 TP0] a\x00b\n")
    assert texts(lines) == ["[2026-03-07 15:31:10 TP0] ab"]
    assert rep.nul_bytes == 3
    assert rep.flagged == [(1, "3 NUL bytes removed")]


def test_crlf_stripped_and_counted(tmp_path: Path) -> None:
    lines, rep = read_bytes(tmp_path, b"[2026-03-07 15:31:10 TP0] a\r\nplain\nlast\r\n")
    assert numbered(lines) == [(1, "[2026-03-07 15:31:10 TP0] a"), (2, "plain"), (3, "last")]
    assert rep.crlf == 2
    assert rep.cr_segments == 0
    assert rep.physical_lines == 3


def test_cr_segments_share_the_physical_line_number(tmp_path: Path) -> None:
    bar = (
        b"\r  0%|          | 0/4 [00:00<?, ?it/s]"
        b"\rCapturing batches (bs=8 avail_mem=70.12 GB):   0%|          | 0/4 [00:00<?, ?it/s]"
        b"\rCapturing batches (bs=1 avail_mem=70.12 GB): 100%|##########| 4/4 [00:00<00:00, 49.52it/s]"
    )
    data = b"[2026-03-07 15:31:10 TP0] Capture cuda graph begin.\n" + bar + b"\n\r\r\nend\n"
    lines, rep = read_bytes(tmp_path, data)
    assert numbered(lines) == [
        (1, "[2026-03-07 15:31:10 TP0] Capture cuda graph begin."),
        (2, "  0%|          | 0/4 [00:00<?, ?it/s]"),
        (2, "Capturing batches (bs=8 avail_mem=70.12 GB):   0%|          | 0/4 [00:00<?, ?it/s]"),
        (
            2,
            "Capturing batches (bs=1 avail_mem=70.12 GB): 100%|##########| 4/4 [00:00<00:00, 49.52it/s]",
        ),
        (3, ""),  # only '\r's (one stripped as CRLF): still accounted for as one empty line
        (4, "end"),
    ]
    assert rep.cr_segments == 2
    assert rep.crlf == 1
    assert rep.physical_lines == 4
    assert rep.lines == 6


# (bar, record): the physical line is bar + record, exactly as in the corpus files.
GLUED_CASES = [
    pytest.param(  # dev-041 line 62
        "  0%|" + " " * 204 + "| 0/13 [00:00<?, ?it/s]",
        "[2025-03-08 12:29:21 TP1] Capture cuda graph begin. This can take up to several minutes. "
        "avail mem=1.45 GB",
        id="dev-041",
    ),
    pytest.param(  # dev-030 line 6
        "Capturing batches (bs=10 avail_mem=11.99 GB):   0%|"
        + " " * 165
        + "| 0/5 [00:00<?, ?it/s]",
        "[2026-06-08 07:21:05 TP1] Using MoE kernel config from /root/.virtualenvs/sglang-0.5.6/lib/"
        "python3.10/site-packages/torchada/triton/autotune/fused_moe/configs/triton_3_2_0/E=128,"
        "N=384,device_name=MTT_S5000,dtype=fp8_w8a8,block_shape=[128, 128].json.",
        id="dev-030",
    ),
    pytest.param(  # seconds-per-iteration rate and a time-only envelope
        "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.23s/it]",
        "[15:31:10 TP0] Load weight end.",
        id="s-per-it",
    ),
]


@pytest.mark.parametrize(("bar", "record"), GLUED_CASES)
def test_glued_bar_is_split(tmp_path: Path, bar: str, record: str) -> None:
    lines, rep = read_bytes(tmp_path, b"first\n" + (bar + record).encode() + b"\n")
    assert numbered(lines) == [(1, "first"), (2, bar), (2, record)]
    assert rep.glued_splits == 1
    assert rep.lines == 3
    assert rep.physical_lines == 2


@pytest.mark.parametrize(
    "line",
    [
        "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
        "Capturing batches (bs=1 avail_mem=37.08 GB): 100%|██████████| 36/36 [00:05<00:00,  6.31it/s]",
        # a bracket after a rate that is not a log envelope
        "x 1/2 [00:01<00:01, 1.2it/s][not a timestamp]",
        "[2026-03-07 15:31:10 TP0] rates: 12it/s][2026 not glued without '<'",
    ],
)
def test_bars_without_glued_record_are_untouched(tmp_path: Path, line: str) -> None:
    lines, rep = read_bytes(tmp_path, line.encode() + b"\n")
    assert texts(lines) == [line]
    assert rep.glued_splits == 0


ANSI_CASES = [
    pytest.param(
        "[2026-03-07 15:31:10] \x1b[1;33mThe command line argument '--enable-dp-attention' is "
        "deprecated and will be removed in future versions.\x1b[0m",
        "[2026-03-07 15:31:10] The command line argument '--enable-dp-attention' is deprecated "
        "and will be removed in future versions.",
        id="esc-sgr",
    ),
    pytest.param(
        "[2026-03-07 15:31:10] [1;33mThe command line argument '--enable-dp-attention' is "
        "deprecated and will be removed in future versions.[0m",
        "[2026-03-07 15:31:10] The command line argument '--enable-dp-attention' is deprecated "
        "and will be removed in future versions.",
        id="remnant-sgr",
    ),
    pytest.param(
        "[91m[12-16 14:27:08] Rank 0 scheduler is dead. Please check if there are relevant logs.[0m",
        "[12-16 14:27:08] Rank 0 scheduler is dead. Please check if there are relevant logs.",
        id="remnant-whole-line",
    ),
    pytest.param(
        '\x1b[32mINFO\x1b[0m:     127.0.0.1:43092 - "GET /health HTTP/1.1" \x1b[32m200 OK\x1b[0m',
        'INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK',
        id="uvicorn-colour",
    ),
    pytest.param("\x1b[?25lhidden cursor\x1b[?25h\x1b[2K", "hidden cursor", id="cursor-codes"),
]


@pytest.mark.parametrize(("line", "expected"), ANSI_CASES)
def test_ansi_codes_removed(tmp_path: Path, line: str, expected: str) -> None:
    lines, rep = read_bytes(tmp_path, line.encode() + b"\n")
    assert texts(lines) == [expected]
    assert rep.ansi_stripped == 1


@pytest.mark.parametrize(
    "line",
    [
        "[2026-03-07 15:31:10 TP4] Load weight begin. avail mem=78.31 GB",
        "[2025-04-13 14:53:45] see [model_runner.py:313] and [m for details",
        "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught",
        "Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64]",
        "array[30] mask [0;1] but [m is not a code, nor [1234m",
    ],
)
@pytest.mark.parametrize(
    ("neighbour", "stripped"),
    [
        pytest.param(b"", 0, id="alone"),
        pytest.param(b"[0m\n", 1, id="block-with-ansi"),  # block precheck fires
        pytest.param(b"\xff\n", 0, id="slow-path"),  # per-line bytes path
    ],
)
def test_text_that_looks_like_ansi_is_untouched(
    tmp_path: Path, line: str, neighbour: bytes, stripped: int
) -> None:
    lines, rep = read_bytes(tmp_path, neighbour + line.encode() + b"\n")
    assert lines[-1] == (lines[-1][0], line, None)
    assert rep.ansi_stripped == stripped


# ------------------------------------------------------------------------------------------
# Wrapper prefixes
# ------------------------------------------------------------------------------------------


def W(kind: str, **kw: Any) -> Wrapper:
    fields: dict[str, Any] = {
        "ts": None,
        "container": None,
        "pid": None,
        "actor": None,
        "ip": None,
        "level": None,
        "logger": None,
        "stream": "",
    }
    fields.update(kw)
    return Wrapper(kind=kind, **fields)


HOST = "leihaodi-qwen3-8b-rl-eagle3-20251218-162008s-3da56-cfcd2"

WRAPPED = [
    pytest.param(  # dev-018
        "sglang  | [2026-05-19 00:09:18 TP5 EP5] Scheduler hit an exception: Traceback (most recent call last):",
        "[2026-05-19 00:09:18 TP5 EP5] Scheduler hit an exception: Traceback (most recent call last):",
        W("docker-compose", container="sglang", stream="docker:sglang"),
        id="docker",
    ),
    pytest.param(  # dev-018 continuation: indentation of the traceback is kept
        'sglang  |   File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 405, in from_pretrained',
        '  File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 405, in from_pretrained',
        W("docker-compose", container="sglang", stream="docker:sglang"),
        id="docker-traceback",
    ),
    pytest.param(  # dev-035
        "llm0-1  | [2025-07-19 23:29:33] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail mem=21.49 GB, mem usage=17.51 GB.",
        "[2025-07-19 23:29:33] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail mem=21.49 GB, mem usage=17.51 GB.",
        W("docker-compose", container="llm0-1", stream="docker:llm0-1"),
        id="docker-compose-v2",
    ),
    pytest.param(  # docker-compose colours the service name on a TTY
        "\x1b[36msglang-1  |\x1b[0m [2026-03-07 15:31:10 TP0] Load weight begin. avail mem=78.31 GB",
        "[2026-03-07 15:31:10 TP0] Load weight begin. avail mem=78.31 GB",
        W("docker-compose", container="sglang-1", stream="docker:sglang-1"),
        id="docker-coloured",
    ),
    pytest.param(  # dev-031 (kibana pads lines with 4 spaces)
        'May 16, 2026 @ 20:44:54.728    INFO:     10.8.102.203:4396 - "POST /v1/chat/completions HTTP/1.1" 200 OK    ',
        'INFO:     10.8.102.203:4396 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
        W("kibana", ts="2026-05-16 20:44:54.728"),
        id="kibana-uvicorn",
    ),
    pytest.param(  # dev-031
        'May 16, 2026 @ 20:46:57.892    [rank8]:[W516 12:46:57.499514954 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer    ',
        '[rank8]:[W516 12:46:57.499514954 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer',
        W("kibana", ts="2026-05-16 20:46:57.892"),
        id="kibana-torch",
    ),
    pytest.param(  # dev-045: k8s timestamp + host, then Ray
        f"[2025-12-18T16:24:02+08:00] {HOST} >> (SGLangEngine pid=3111) [2025-12-18 08:24:01 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        "[2025-12-18 08:24:01 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        W(
            "ray",
            ts="2025-12-18 16:24:02",
            container=HOST,
            pid=3111,
            actor="SGLangEngine",
            stream="ray:3111",
        ),
        id="k8s-host-ray",
    ),
    pytest.param(  # dev-045 continuation
        f'[2025-12-18T16:24:02+08:00] {HOST} >> (SGLangEngine pid=3111)   File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2683, in run_scheduler_process',
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2683, in run_scheduler_process',
        W(
            "ray",
            ts="2025-12-18 16:24:02",
            container=HOST,
            pid=3111,
            actor="SGLangEngine",
            stream="ray:3111",
        ),
        id="k8s-host-ray-traceback",
    ),
    pytest.param(  # dev-012
        "(WorkerDict pid=3944349)     scheduler.event_loop_overlap()",
        "    scheduler.event_loop_overlap()",
        W("ray", pid=3944349, actor="WorkerDict", stream="ray:3944349"),
        id="ray",
    ),
    pytest.param(
        "(SchedulerActor pid=123, ip=10.0.0.1) [2026-03-07 15:31:10 TP0] Init torch distributed begin.",
        "[2026-03-07 15:31:10 TP0] Init torch distributed begin.",
        W("ray", pid=123, actor="SchedulerActor", ip="10.0.0.1", stream="ray:123"),
        id="ray-ip",
    ),
    pytest.param(  # kubectl logs --timestamps
        "2025-12-18T16:24:02.123456789Z [2025-12-18 16:24:02 TP0] Memory pool end. avail mem=12.05 GB",
        "[2025-12-18 16:24:02 TP0] Memory pool end. avail mem=12.05 GB",
        W("k8s", ts="2025-12-18 16:24:02.123456"),
        id="k8s-nanos",
    ),
    pytest.param(
        "2025-12-18T16:24:02+08:00 Traceback (most recent call last):",
        "Traceback (most recent call last):",
        W("iso-timestamp", ts="2025-12-18 16:24:02"),
        id="iso-offset",
    ),
    pytest.param(  # `kubectl logs --prefix` (kubernetes/kubernetes#76471)
        "[pod/sglang-7cfd7bf68f-nk5kr/sglang] [2026-01-01 00:00:00 TP0] Load weight begin. avail mem=78.31 GB",
        "[2026-01-01 00:00:00 TP0] Load weight begin. avail mem=78.31 GB",
        W("kubectl", container="sglang-7cfd7bf68f-nk5kr/sglang", stream="k8s:sglang-7cfd7bf68f-nk5kr/sglang"),
        id="kubectl-prefix",
    ),
    pytest.param(  # `kubectl logs --prefix --timestamps`
        '[pod/sglang-0/sglang] 2026-01-01T00:00:00.123456789Z   File "x.py", line 1, in f',
        '  File "x.py", line 1, in f',
        W("k8s", ts="2026-01-01 00:00:00.123456", container="sglang-0/sglang", stream="k8s:sglang-0/sglang"),
        id="kubectl-prefix-timestamps",
    ),
    pytest.param(  # `journalctl -o short-iso`
        "2025-07-01T00:57:53+0800 gpu-node-3 python3[1234]: [2025-07-01 00:57:53 TP0] Load weight begin. avail mem=78.31 GB",
        "[2025-07-01 00:57:53 TP0] Load weight begin. avail mem=78.31 GB",
        W("journald", ts="2025-07-01 00:57:53", container="gpu-node-3", pid=1234, actor="python3", stream="pid:1234"),
        id="journald-short-iso",
    ),
    pytest.param(  # `journalctl -o short-iso-precise`
        '2025-07-01T00:57:53.123456+08:00 gpu-node-3 python3[1234]:   File "x.py", line 3, in f',
        '  File "x.py", line 3, in f',
        W("journald", ts="2025-07-01 00:57:53.123456", container="gpu-node-3", pid=1234, actor="python3",
          stream="pid:1234"),
        id="journald-short-iso-precise",
    ),
    pytest.param(  # no pid: a message's own words after a stamp, not journald's
        "2025-07-01T00:57:53Z gpu-node-3 python3: x",
        "gpu-node-3 python3: x",
        W("iso-timestamp", ts="2025-07-01 00:57:53"),
        id="iso-then-words",
    ),
    pytest.param(  # dev/h-031: the quote marker glued to the envelope
        ">[2025-07-22 20:38:44] Scheduler hit an exception: Traceback (most recent call last):",
        "[2025-07-22 20:38:44] Scheduler hit an exception: Traceback (most recent call last):",
        W("markdown-quote"),
        id="quote-without-space",
    ),
    pytest.param(  # dev/k-008 (kubernetes-sigs/lws#377): a log quoted in a diff keeps the added lines' `+`
        '+[2025-02-11 09:06:55] INFO:     Uvicorn running on http://0.0.0.0:40000 (Press CTRL+C to quit)',
        '[2025-02-11 09:06:55] INFO:     Uvicorn running on http://0.0.0.0:40000 (Press CTRL+C to quit)',
        W("diff-added"),
        id="diff-added-line",
    ),
    pytest.param(  # dev/h-019: the paste's blanks between the quote and vLLM's prefix
        ">  INFO 02-18 09:33:49 __init__.py:190] Automatically detected platform cuda.",
        "INFO 02-18 09:33:49 __init__.py:190] Automatically detected platform cuda.",
        W("markdown-quote"),
        id="quote-blanks-before-a-record",
    ),
    pytest.param(  # a frame's own indentation inside the quote is kept
        '>   File "/sgl/python/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process',
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process',
        W("markdown-quote"),
        id="quote-keeps-frame-indentation",
    ),
    pytest.param(  # dev/a-026: a narrow terminal's bar, cut before its counts, glued to a record
        "  0%|                                                                            [2026-05-28 02:59:50 TP0] Prefill batch, #new-seq: 1, #new-token: 896, #queue-req: 28, ",
        "[2026-05-28 02:59:50 TP0] Prefill batch, #new-seq: 1, #new-token: 896, #queue-req: 28, ",
        W("progress-bar"),
        id="glued-bar-without-rate",
    ),
    pytest.param(
        "Capturing batches (bs=160 avail_mem=6.28 GB):  45%|████▌     | 10/22[2026-05-28 02:59:50 TP0] Registering 1 cuda graph addresses",
        "[2026-05-28 02:59:50 TP0] Registering 1 cuda graph addresses",
        W("progress-bar"),
        id="glued-bar-with-desc-and-count",
    ),
    pytest.param(
        "Loading safetensors checkpoint shards:  50% Completed |█████     [2026-05-28 02:59:50.123 TP1] Load weight end.",
        "[2026-05-28 02:59:50.123 TP1] Load weight end.",
        W("progress-bar"),
        id="glued-sglang-bar",
    ),
    pytest.param(  # dev/i-027: a log viewer's export, stamp and a tab
        "2025-07-01T00:57:53+08:00\t  File \"/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py\", line 2311, in run_scheduler_process",
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process',
        W("iso-timestamp", ts="2025-07-01 00:57:53"),
        id="iso-offset-tab",
    ),
    pytest.param(
        "2025-07-01T00:57:53.123Z\t[2025-07-01 00:57:53 TP0] Load weight begin. avail mem=78.31 GB",
        "[2025-07-01 00:57:53 TP0] Load weight begin. avail mem=78.31 GB",
        W("iso-timestamp", ts="2025-07-01 00:57:53.123"),
        id="iso-millis-zulu-tab",
    ),
    pytest.param(  # `date --rfc-3339=ns`-like stamps: a space between date and time, then the zone
        "2025-07-01 00:57:53.123456789+08:00 [2025-06-30 16:57:53 DP7 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        "[2025-06-30 16:57:53 DP7 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        W("iso-timestamp", ts="2025-07-01 00:57:53.123456"),
        id="iso-spaced-offset",
    ),
    pytest.param(
        "2025-07-01 00:57:53Z\tTraceback (most recent call last):",
        "Traceback (most recent call last):",
        W("iso-timestamp", ts="2025-07-01 00:57:53"),
        id="iso-spaced-zulu-tab",
    ),
    pytest.param(
        "2025-07-01 00:57:53 +0800 Traceback (most recent call last):",
        "Traceback (most recent call last):",
        W("iso-timestamp", ts="2025-07-01 00:57:53"),
        id="iso-spaced-compact-offset",
    ),
    pytest.param(  # dev-048 (rust tracing pads with 3 spaces)
        "2025-11-05T01:56:54.281615Z  INFO model_runner.init_device_graphs: Capture cuda graph end. Time elapsed: 12.80 s. mem usage=4.69 GB. avail mem=20.31 GB.   ",
        "Capture cuda graph end. Time elapsed: 12.80 s. mem usage=4.69 GB. avail mem=20.31 GB.",
        W(
            "rust-tracing",
            ts="2025-11-05 01:56:54.281615",
            level="INFO",
            logger="model_runner.init_device_graphs",
        ),
        id="rust-tracing",
    ),
    pytest.param(  # dev-048 last line, cut mid-target: keep the text
        "2025-11-05T01:56:54.292138Z ERROR scheduler.run_sch",
        "scheduler.run_sch",
        W("rust-tracing", ts="2025-11-05 01:56:54.292138", level="ERROR"),
        id="rust-tracing-cut",
    ),
    pytest.param(  # dev-022
        "2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Loading JIT ops: cascade",
        "Loading JIT ops: cascade",
        W("python-logging", ts="2025-02-26 15:44:36.973", level="INFO", logger="flashinfer.jit"),
        id="pylog-dash",
    ),
    pytest.param(  # dev-020: 'Command' is not a dotted logger name
        "2026-07-04 05:00:55,178 - INFO - Command: python3 -m sglang.bench_serving --host 127.0.0.1 --port 20066",
        "Command: python3 -m sglang.bench_serving --host 127.0.0.1 --port 20066",
        W("python-logging", ts="2026-07-04 05:00:55.178", level="INFO"),
        id="pylog-dash-no-logger",
    ),
    pytest.param(  # logging-cookbook order: name before level
        "2025-02-26 15:44:36,973 - flashinfer.jit - WARNING - Loading JIT ops: cascade",
        "Loading JIT ops: cascade",
        W("python-logging", ts="2025-02-26 15:44:36.973", level="WARNING", logger="flashinfer.jit"),
        id="pylog-cookbook",
    ),
    pytest.param(  # dev-017
        "2026-06-07 10:59:31,659 [INFO] sglang.srt.managers.scheduler_metrics_mixin: Decode batch, #running-req: 1, #token: 227, token usage: 0.00, cuda graph: True, gen throughput (token/s): 126.29, #queue-req: 0,",
        "Decode batch, #running-req: 1, #token: 227, token usage: 0.00, cuda graph: True, gen throughput (token/s): 126.29, #queue-req: 0,",
        W(
            "python-logging",
            ts="2026-06-07 10:59:31.659",
            level="INFO",
            logger="sglang.srt.managers.scheduler_metrics_mixin",
        ),
        id="pylog-bracket-level",
    ),
    pytest.param(  # dev-003 (trailing ', ' kept)
        "2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Decode batch. #running-req: 48, #token: 3894, token usage: 0.00, accept len: 1.00, accept rate: 0.11, cuda graph: False, gen throughput (token/s): 5452.63, #queue-req: 0, ",
        "Decode batch. #running-req: 48, #token: 3894, token usage: 0.00, accept len: 1.00, accept rate: 0.11, cuda graph: False, gen throughput (token/s): 5452.63, #queue-req: 0, ",
        W(
            "custom-logging",
            ts="2025-12-04 20:35:53",
            pid=151972,
            level="INFO",
            logger="scheduler_metrics_mixin.py:287",
            stream="pid:151972",
        ),
        id="custom-logging",
    ),
    pytest.param(  # dev-032
        "2025-04-13 14:53:43 WARNING 509 [custom_all_reduce.py:185] Custom allreduce is disabled because this process group spans across nodes.",
        "Custom allreduce is disabled because this process group spans across nodes.",
        W(
            "custom-logging",
            ts="2025-04-13 14:53:43",
            pid=509,
            level="WARNING",
            logger="custom_all_reduce.py:185",
            stream="pid:509",
        ),
        id="custom-logging-warning",
    ),
    pytest.param(  # dev-023: copy-mangled, no date
        "INFO - flashinfer.  jit: Loading JIT ops: cascade",
        "Loading JIT ops: cascade",
        W("python-logging", level="INFO", logger="flashinfer.jit"),
        id="pylog-mangled",
    ),
    pytest.param(  # docker outside a foreign logging format: stream from docker, rest from inside
        "sglang  | 2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Loading JIT ops: cascade",
        "Loading JIT ops: cascade",
        W(
            "python-logging",
            ts="2025-02-26 15:44:36.973",
            container="sglang",
            level="INFO",
            logger="flashinfer.jit",
            stream="docker:sglang",
        ),
        id="docker-pylog",
    ),
    pytest.param(  # an empty docker line
        "sglang  |",
        "",
        W("docker-compose", container="sglang", stream="docker:sglang"),
        id="docker-empty",
    ),
]


@pytest.mark.parametrize(("line", "text", "wrapper"), WRAPPED)
def test_wrapper_prefix_stripped(tmp_path: Path, line: str, text: str, wrapper: Wrapper) -> None:
    lines, rep = read_bytes(tmp_path, line.encode() + b"\n")
    assert lines == [(1, text, wrapper)]
    assert rep.wrapped == 1


NOT_WRAPPED = [
    "[2026-03-07 15:31:10 TP4] Init torch distributed begin.",
    "[15:31:10 TP0] Decode batch, #running-req: 1",
    'INFO:     127.0.0.1:49272 - "POST /v1/audio/speech HTTP/1.1" 200 OK',  # dev-017 uvicorn
    "INFO 03-07 12:29:02 __init__.py:190] Automatically detected platform cuda.",  # dev-041 vLLM
    "INFO 05-29 00:32:17 [__init__.py:243] Automatically detected platform cuda.",
    "sglang-0:534:1763 [3] NCCL INFO NVLS comm 0x7f19 headRank 3 nHeads 4",
    "[rank4]:[E304 12:46:57.499514954 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank 4] timeout",
    "[rank0]: Traceback (most recent call last):",
    "Traceback (most recent call last):",
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2683, in run',
    "  0%|          | 0/4 [00:00<?, ?it/s]",
    "Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:00<00:01,  2.32it/s]",
    "| Backend | Successful requests |",
    "Backend:                                 sglang-oai-chat",
    "[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
    "ray.exceptions.RayTaskError(OutOfMemoryError): ray::main_task() (pid=508648, ip=10.1.200.6)",
    "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py:71: UserWarning: 'python -m' is still supported",
    "Killed",
    "May I ask why this fails?",
    "WARNING - something without a logger name",
    "[2025-11-11 15:55:06] WARNING model_config.py:707: mxfp4 quantization is not fully optimized yet.",
    # a date and time without a zone is a logger's own stamp (kept for the grammar and classifier)
    "2025-10-07 23:32:33  INFO sglang_router_rs::server: starting server",
    "2026-03-18 05:25:02",
    # a bar whose text names an envelope-like stamp is not glued to a record
    "  0%|          | 0/4 [00:00<?, ?it/s] (started [2026-05-28 02:59:50])",
    "Progress 50%| done",
    ">[not an envelope] quoted text",
    "[pod/sglang-0] not kubectl's prefix: no container",
    # bash's xtrace (`set -x`) and a `+` before other text are no diff wrapper: only `+[date …`
    "+ python3 -m sglang.launch_server --model-path /model --port 30000",
    "+[not an envelope] added text",
]


@pytest.mark.parametrize("line", NOT_WRAPPED)
def test_not_a_wrapper(tmp_path: Path, line: str) -> None:
    lines, rep = read_bytes(tmp_path, line.encode() + b"\n")
    assert lines == [(1, line, None)]
    assert rep.wrapped == 0


# A line alone, or after a neighbour that puts its block on each of the reader's paths (the hot
# loop, the tqdm cleaning, ANSI cleaning, per-line bytes): a repair must not depend on the path.
BLOCK_NEIGHBOURS = [
    pytest.param(b"", id="alone"),
    pytest.param(b"[2025-11-19 14:41:26 TP0] Init torch distributed begin.\n", id="fast"),
    pytest.param(b"x 1/2 [00:01<00:01, 1.2it/s]\n", id="tqdm"),
    pytest.param(b"[0m\n", id="ansi"),
    pytest.param(b"bad \xff\n", id="slow"),
]

AUTOLINKED = [
    pytest.param(  # dev/h-025: a chat client's tel: link around the date and the hour
        "[[2025-11-19 14](tel:2025-11-19 14):41:27] INFO:     Application startup complete.",
        "[2025-11-19 14:41:27] INFO:     Application startup complete.",
        id="tel-same-text",
    ),
    pytest.param(  # clients that keep only the number in the link's target
        "[[2025-11-19 14:41:27](tel:+20251119144127) TP0] Load weight begin. avail mem=78.31 GB",
        "[2025-11-19 14:41:27 TP0] Load weight begin. avail mem=78.31 GB",
        id="tel-digits-target",
    ),
    pytest.param(
        "[[2025-11-19](http://2025-11-19) 14:41:27 DP0 TP0] Decode batch, #running-req: 1",
        "[2025-11-19 14:41:27 DP0 TP0] Decode batch, #running-req: 1",
        id="http-autolink",
    ),
    pytest.param(  # a second autolink in the message goes with the first
        "[[2025-11-19 14](tel:2025-11-19 14):41:27] INFO:     Uvicorn running on [http://0.0.0.0:8011](http://0.0.0.0:8011) (Press CTRL+C to quit)",
        "[2025-11-19 14:41:27] INFO:     Uvicorn running on http://0.0.0.0:8011 (Press CTRL+C to quit)",
        id="tel-and-url",
    ),
    pytest.param(  # dev/h-025's last line: cut inside the link's text
        "[[2025-11-1",
        "[2025-11-1",
        id="cut-inside-the-link",
    ),
    pytest.param(  # a link whose target says something else is the writer's: kept
        "[[2025-11-19 14](tel:555-0100):41:27] x",
        "[[2025-11-19 14](tel:555-0100):41:27] x",
        id="other-target",
    ),
    pytest.param(
        "[[1, 2]](http://example.com) nested list",
        "[[1, 2]](http://example.com) nested list",
        id="not-a-link-of-itself",
    ),
]


@pytest.mark.parametrize(("line", "text"), AUTOLINKED)
@pytest.mark.parametrize("neighbour", BLOCK_NEIGHBOURS)
def test_autolinked_envelope_is_repaired(tmp_path: Path, line: str, text: str, neighbour: bytes) -> None:
    lines, _ = read_bytes(tmp_path, neighbour + line.encode() + b"\n")
    assert lines[-1][1:] == (text, None)


GLUED_PROMPTS = [
    pytest.param(  # dev/j-006: curl's JSON answer without its final newline, then the next prompt
        '{"text":"","meta_info":{"e2e_latency":0.07976341247558594}}root@hd19nh7b2md0c7iunpfng-77c96f889b-7hls2:/# tail -f prefiller.log',
        ['{"text":"","meta_info":{"e2e_latency":0.07976341247558594}}',
         "root@hd19nh7b2md0c7iunpfng-77c96f889b-7hls2:/# tail -f prefiller.log"],
        id="json-then-prompt",
    ),
    pytest.param(
        '["a", "b"](base) user@node-3:~/sglang$ python -m sglang.launch_server --model-path x',
        ['["a", "b"]', "(base) user@node-3:~/sglang$ python -m sglang.launch_server --model-path x"],
        id="list-then-conda-prompt",
    ),
    pytest.param(
        '{"ok": true}[user@gpu01 ~]$ ls',
        ['{"ok": true}', "[user@gpu01 ~]$ ls"],
        id="rhel-prompt",
    ),
    pytest.param(  # a prompt-like text inside a string is the string's
        '{"cmd": "root@host:/# ls"}',
        ['{"cmd": "root@host:/# ls"}'],
        id="inside-a-string",
    ),
]


@pytest.mark.parametrize(("line", "expected"), GLUED_PROMPTS)
@pytest.mark.parametrize("neighbour", BLOCK_NEIGHBOURS)
@pytest.mark.parametrize("final_newline", [True, False])
def test_glued_prompt_is_split_off(tmp_path: Path, line: str, expected: list[str], neighbour: bytes,
                                   final_newline: bool) -> None:
    data = neighbour + line.encode() + (b"\n" if final_newline else b"")
    lines, rep = read_bytes(tmp_path, data)
    last = lines[-1][0]
    assert [t for n, t, _ in lines if n == last] == expected
    assert rep.glued_splits == len(expected) - 1


def test_code_block_indentation_is_learned_from_a_vllm_line(tmp_path: Path) -> None:
    # vLLM's logger prefix is never indented by its writer: the blanks are the code block's.
    data = (b"    INFO 02-18 09:33:49 __init__.py:190] Automatically detected platform cuda.\n"
            b"      File \"/x.py\", line 3, in f\n")
    lines, _ = read_bytes(tmp_path, data)
    assert texts(lines) == ["INFO 02-18 09:33:49 __init__.py:190] Automatically detected platform cuda.",
                            '  File "/x.py", line 3, in f']


def test_wrapper_inside_ray_does_not_eat_message_text(tmp_path: Path) -> None:
    # docker-compose is only ever the outermost prefix; inside Ray `Backend | x` is text.
    lines, _ = read_bytes(tmp_path, b"(WorkerDict pid=7) Backend  | sglang\n")
    assert lines == [(1, "Backend  | sglang", W("ray", pid=7, actor="WorkerDict", stream="ray:7"))]


def test_wrapper_applies_to_every_cr_segment_and_glued_record(tmp_path: Path) -> None:
    line = (
        b"sglang  | \rCapturing batches (bs=10 avail_mem=11.99 GB):   0%|    | 0/5 [00:00<?, ?it/s]"
        b"[2026-06-08 07:21:05 TP1] Using MoE kernel config\rdone\n"
    )
    lines, rep = read_bytes(tmp_path, line)
    w = W("docker-compose", container="sglang", stream="docker:sglang")
    assert lines == [
        (1, "Capturing batches (bs=10 avail_mem=11.99 GB):   0%|    | 0/5 [00:00<?, ?it/s]", w),
        (1, "[2026-06-08 07:21:05 TP1] Using MoE kernel config", w),
        (1, "done", w),
    ]
    assert (rep.wrapped, rep.cr_segments, rep.glued_splits, rep.lines) == (1, 1, 1, 3)


def test_identical_prefixes_share_one_wrapper_object(tmp_path: Path) -> None:
    lines, _ = read_bytes(tmp_path, b"sglang  | a\nsglang  | b\n")
    assert lines[0][2] is lines[1][2]


def test_wrapper_is_frozen() -> None:
    w = W("ray", pid=1, stream="ray:1")
    with pytest.raises(AttributeError):
        w.pid = 2  # type: ignore[misc]


# ------------------------------------------------------------------------------------------
# Long lines and memory
# ------------------------------------------------------------------------------------------


def test_long_line_without_newline_is_truncated_and_reading_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_lines, "MAX_LINE_CHARS", 1000)
    data = b"[2026-03-07 15:31:10 TP0] before\n" + b"x" * 3_000_000 + b"\nnext line\n"
    lines, rep = read_bytes(tmp_path, data)
    assert [(n, len(t)) for n, t, _ in lines] == [(1, 32), (2, 1000), (3, 9)]
    assert lines[1][1] == "x" * 1000
    assert lines[2] == (3, "next line", None)
    assert rep.long_lines == 1
    assert rep.flagged == [(2, "line longer than 1000 characters, truncated")]
    assert rep.physical_lines == 3
    assert rep.bytes_read == len(data)


def test_long_last_line_without_final_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_lines, "MAX_LINE_CHARS", 10)
    lines, rep = read_bytes(tmp_path, b"ok\n" + b"y" * 5000)
    assert numbered(lines) == [(1, "ok"), (2, "y" * 10)]
    assert rep.missing_final_newline is True
    assert rep.long_lines == 1


def test_long_line_inside_a_block_is_truncated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_lines, "MAX_LINE_CHARS", 10)
    lines, rep = read_bytes(tmp_path, b"short\n" + b"z" * 25 + b"\r\nafter\n")
    assert numbered(lines) == [(1, "short"), (2, "z" * 10), (3, "after")]
    assert rep.long_lines == 1


def test_truncation_does_not_split_a_multibyte_character(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_lines, "MAX_LINE_CHARS", 4)  # byte cap is 16
    lines, rep = read_bytes(tmp_path, "é".encode() * 50 + b"\n")
    assert texts(lines) == ["éééé"]
    assert rep.bad_utf8 == 0


def test_memory_does_not_grow_with_an_endless_line(tmp_path: Path) -> None:
    p = tmp_path / "big.log"
    with open(p, "wb") as f:
        f.write(b"[2026-03-07 15:31:10 TP0] start\n")
        chunk = b"A" * (1 << 20)
        f.writelines(chunk for _ in range(40))  # a 40 MiB line without a newline
        f.write(b"\n[2026-03-07 15:31:11 TP0] end\n")
    rep = ReadReport(str(p))
    tracemalloc.start()
    try:
        out = [(n, len(t)) for n, t, _ in read_lines(str(p), rep)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == [(1, 31), (2, reader_lines.MAX_LINE_CHARS), (3, 29)]
    assert peak < 12 * (1 << 20), f"peak {peak / (1 << 20):.1f} MiB"


# ------------------------------------------------------------------------------------------
# Sources: gzip and stdin
# ------------------------------------------------------------------------------------------

SAMPLE = (
    b"[2026-03-07 15:31:10 TP0] Load weight begin. avail mem=78.31 GB\n"
    b"sglang  | [2026-03-07 15:31:11 TP0] Load weight end.\n"
    b"bad \xff byte\r\n"
    b"\r  0%|   | 0/4 [00:00<?, ?it/s]\rdone\n"
)


def test_gzip_detected_by_magic_not_name(tmp_path: Path) -> None:
    plain, _ = read_bytes(tmp_path, SAMPLE, "plain.log")
    gz, grep = read_bytes(tmp_path, gzip.compress(SAMPLE), "looks-plain.txt")
    assert gz == plain
    assert len(gz) == 5
    assert grep.bytes_read == len(SAMPLE)  # decompressed text bytes
    assert (grep.bad_utf8, grep.crlf, grep.cr_segments, grep.wrapped) == (1, 1, 1, 1)
    assert grep.damaged is None


def test_multi_member_gzip(tmp_path: Path) -> None:
    data = gzip.compress(b"one\ntwo\n") + gzip.compress(b"three\n")
    lines, rep = read_bytes(tmp_path, data, "rotated.log.gz")
    assert numbered(lines) == [(1, "one"), (2, "two"), (3, "three")]
    assert rep.damaged is None


def test_large_gzip_streams_in_bounded_blocks(tmp_path: Path) -> None:
    text = b"".join(b"[2026-03-07 15:31:10 TP0] line %d\n" % i for i in range(200_000))
    lines, rep = read_bytes(tmp_path, gzip.compress(text), "big.log.gz")
    assert len(lines) == 200_000
    assert lines[-1] == (200_000, "[2026-03-07 15:31:10 TP0] line 199999", None)
    assert rep.damaged is None


def test_truncated_gzip_yields_readable_part_and_reports_damage(tmp_path: Path) -> None:
    text = b"".join(b"[2026-03-07 15:31:10 TP0] record number %06d\n" % i for i in range(20_000))
    data = gzip.compress(text)
    cut = data[: len(data) // 2]
    lines, rep = read_bytes(tmp_path, cut, "cut.log.gz")
    assert rep.damaged is not None
    assert rep.damaged.startswith("gzip stream truncated after ")
    assert 1000 < len(lines) < 20_000
    full = text.decode().split("\n")
    # every complete line read is the original line; only the last one may be cut short
    for no, t, _ in lines[:-1]:
        assert t == full[no - 1]
    assert full[len(lines) - 1].startswith(lines[-1][1])


def test_corrupt_gzip_midway_reports_damage(tmp_path: Path) -> None:
    text = b"".join(b"[2026-03-07 15:31:10 TP0] record %06d\n" % i for i in range(50_000))
    data = bytearray(gzip.compress(text))
    mid = len(data) // 2
    data[mid : mid + 64] = b"\x00" * 64
    lines, rep = read_bytes(tmp_path, bytes(data), "bad.log.gz")
    # Inflate either rejects the zeros (corrupt) or decodes them into wrong text (CRC check).
    assert rep.damaged is not None and ("gzip stream" in rep.damaged or "check failed" in rep.damaged)
    assert len(lines) > 0


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", mock.Mock(buffer=io.BytesIO(b"a\r\nb\n\nc")))
    rep = ReadReport("-")
    assert numbered(list(read_lines("-", rep))) == [(1, "a"), (2, "b"), (3, ""), (4, "c")]
    assert rep.crlf == 1
    assert rep.missing_final_newline is True


def test_stdin_gzip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", mock.Mock(buffer=io.BytesIO(gzip.compress(SAMPLE))))
    rep = ReadReport("-")
    lines = list(read_lines("-", rep))
    assert texts(lines)[0] == "[2026-03-07 15:31:10 TP0] Load weight begin. avail mem=78.31 GB"
    assert rep.physical_lines == 4


def test_stdin_rejects_byte_ranges() -> None:
    with pytest.raises(ValueError):
        read_lines("-", ReadReport("-"), start=10)


def test_read_lines_missing_file_raises_input_error(tmp_path: Path) -> None:
    p = str(tmp_path / "nope.log")
    with pytest.raises(InputError) as ei:
        list(read_lines(p, ReadReport(p)))
    assert str(ei.value) == f"cannot read {p}: No such file or directory"


def test_read_lines_directory_raises_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as ei:
        list(read_lines(str(tmp_path), ReadReport(str(tmp_path))))
    assert str(ei.value) == f"cannot read {tmp_path}: Is a directory"


def test_stopping_early_closes_the_file(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(b"a\nb\nc\n")
    it = read_lines(str(p), ReadReport(str(p)))
    assert next(it)[1] == "a"
    it.close()  # type: ignore[attr-defined]
    # the file can be replaced/removed freely (no lingering handle on any platform)
    p.unlink()


# ------------------------------------------------------------------------------------------
# Byte ranges and split points
# ------------------------------------------------------------------------------------------


def _read_parts(
    path: str, parts: list[tuple[int, int, int]]
) -> tuple[list[Line], list[ReadReport]]:
    out: list[Line] = []
    reps = []
    for start, end, first in parts:
        rep = ReadReport(path)
        out.extend(read_lines(path, rep, start=start, end=end, first_line_no=first))
        reps.append(rep)
    return out, reps


def _mixed_log(n: int, final_newline: bool) -> bytes:
    rows = []
    for i in range(n):
        k = i % 7
        if k == 0:
            rows.append(
                b"[2026-03-07 15:31:%02d TP%d] Decode batch, #running-req: %d, "
                % (i % 60, i % 8, i)
            )
        elif k == 1:
            rows.append(b"sglang  | [2026-03-07 15:31:10 TP0] wrapped %d" % i)
        elif k == 2:
            rows.append(b"crlf line %d\r" % i)
        elif k == 3:
            rows.append(b"\r  0%%|   | 0/4 [00:00<?, ?it/s]\rbar %d" % i)
        elif k == 4:
            rows.append(b"bad \xff utf8 %d \x00" % i)
        elif k == 5:
            rows.append(b"")
        else:
            rows.append(b"L" * (i % 5000))  # some lines longer than the patched cap
    data = b"\n".join(rows)
    return data + b"\n" if final_newline else data


@pytest.mark.parametrize("final_newline", [True, False])
@pytest.mark.parametrize("parts", [1, 2, 3, 5, 8, 13])
def test_split_points_reassemble_to_a_single_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: int, final_newline: bool
) -> None:
    monkeypatch.setattr(reader_ranges, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(reader_ranges, "_COUNT_BLOCK", 4096)  # several newline-count blocks
    monkeypatch.setattr(reader_sources, "BLOCK_SIZE", 3001)  # block edges fall anywhere in lines
    monkeypatch.setattr(reader_lines, "MAX_LINE_CHARS", 700)
    data = _mixed_log(3000, final_newline)
    p = tmp_path / "run.log"
    p.write_bytes(data)
    whole_rep = ReadReport(str(p))
    whole = list(read_lines(str(p), whole_rep))

    points = split_points(str(p), parts)
    assert len(points) == parts
    assert points[0][0] == 0 and points[0][2] == 1
    assert points[-1][1] == len(data)
    for (_, e0, _), (s1, _, n1) in itertools.pairwise(points):
        assert e0 == s1  # contiguous
        assert data[s1 - 1 : s1] == b"\n"  # aligned to a line start
        assert n1 == data[:s1].count(b"\n") + 1

    got, reps = _read_parts(str(p), points)
    assert got == whole
    assert sum(r.physical_lines for r in reps) == whole_rep.physical_lines == physical_count(data)
    for counter in (
        "lines",
        "bad_utf8",
        "nul_bytes",
        "crlf",
        "cr_segments",
        "wrapped",
        "long_lines",
    ):
        assert sum(getattr(r, counter) for r in reps) == getattr(whole_rep, counter), counter
    assert sum(r.bytes_read for r in reps) == len(data)
    assert [r.missing_final_newline for r in reps][-1] is (not final_newline)


def test_split_points_small_file_is_one_part(tmp_path: Path) -> None:
    p = tmp_path / "small.log"
    p.write_bytes(b"a\n" * 1000)
    assert split_points(str(p), 8) == [(0, 2000, 1)]


def test_split_points_gzip_is_one_part_and_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_ranges, "SPLIT_MIN_BYTES", 1)
    p = tmp_path / "a.log.gz"
    p.write_bytes(gzip.compress(b"x\n" * 5000))
    points = split_points(str(p), 4)
    assert points == [(0, p.stat().st_size, 1)]
    got, _ = _read_parts(str(p), points)
    assert len(got) == 5000


def test_split_points_one_huge_line_merges_empty_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader_ranges, "SPLIT_MIN_BYTES", 1)
    data = b"head\n" + b"h" * 10_000 + b"\ntail\n"
    p = tmp_path / "a.log"
    p.write_bytes(data)
    points = split_points(str(p), 8)
    assert points == [(0, 10_006, 1), (10_006, len(data), 3)]


def test_split_points_real_4mib_threshold(tmp_path: Path) -> None:
    row = (
        b"[2026-03-07 15:31:10 TP0] Decode batch, #running-req: 1, #token: 227, token usage: 0.00\n"
    )
    data = row * ((5 << 20) // len(row))
    p = tmp_path / "big.log"
    p.write_bytes(data)
    points = split_points(str(p), 4)
    assert len(points) == 4
    got, _ = _read_parts(str(p), points)
    assert len(got) == data.count(b"\n")
    assert [n for n, _, _ in got] == list(range(1, len(got) + 1))


def test_byte_range_semantics(tmp_path: Path) -> None:
    data = b"aaaa\nbbbb\ncccc\n"  # lines start at 0, 5, 10
    p = tmp_path / "r.log"
    p.write_bytes(data)

    def rng(start: int, end: int | None, first: int = 1) -> list[str]:
        return texts(
            list(read_lines(str(p), ReadReport(str(p)), start=start, end=end, first_line_no=first))
        )

    assert rng(0, 5) == ["aaaa"]  # byte 4 is the '\n' of line 1: line 2 starts at 5 = end
    assert rng(0, 6) == ["aaaa", "bbbb"]  # line 2's first byte (5) is < 6
    assert rng(5, 10) == ["bbbb"]  # a line starting exactly at `start` is ours
    assert rng(6, 10) == []  # line 2 straddles 6 and belongs to the previous range
    assert rng(6, 11) == ["cccc"]
    assert rng(1, None) == ["bbbb", "cccc"]
    assert rng(14, None) == []


# ------------------------------------------------------------------------------------------
# expand_paths and check_readable
# ------------------------------------------------------------------------------------------


def test_expand_paths_recurses_and_sorts(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "deep").mkdir(parents=True)
    for rel in [
        "z.log",
        "b/y.txt",
        "a/deep/x.log.gz",
        "a/w.txt.gz",
        "a/notes.json",
        "b/skip.log.bak",
    ]:
        (tmp_path / rel).write_bytes(b"x\n")
    single = tmp_path / "single.out"
    single.write_bytes(b"x\n")
    got = expand_paths(["-", str(tmp_path), str(single)])
    assert got == [
        "-",
        str(tmp_path / "a" / "deep" / "x.log.gz"),
        str(tmp_path / "a" / "w.txt.gz"),
        str(tmp_path / "b" / "y.txt"),
        str(tmp_path / "z.log"),
        str(single),  # an explicit file is taken whatever its name
    ]


def test_expand_paths_drops_duplicates(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_bytes(b"x\n")
    assert expand_paths([str(f), str(tmp_path), str(f)]) == [str(f)]


def test_expand_paths_missing(tmp_path: Path) -> None:
    p = str(tmp_path / "missing.log")
    with pytest.raises(InputError) as ei:
        expand_paths([p])
    assert str(ei.value) == f"cannot read {p}: No such file or directory"


def test_expand_paths_directory_without_logs(tmp_path: Path) -> None:
    (tmp_path / "readme.md").write_text("hi")
    with pytest.raises(InputError) as ei:
        expand_paths([str(tmp_path)])
    assert str(ei.value) == f"no log files in {tmp_path} (looked for *.log, *.log.gz, *.txt)"


def _check_error(path: Path | str) -> str:
    with pytest.raises(InputError) as ei:
        check_readable(str(path))
    return str(ei.value)


def test_check_readable_accepts_text_and_gzip(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(SAMPLE)
    (tmp_path / "a.log.gz").write_bytes(gzip.compress(SAMPLE))
    (tmp_path / "ansi.log").write_bytes(b"\x1b[32mINFO\x1b[0m:  ok\r\n" * 50)
    check_readable(str(tmp_path / "a.log"))
    check_readable(str(tmp_path / "a.log.gz"))
    check_readable(str(tmp_path / "ansi.log"))
    check_readable("-")  # stdin is never sniffed


def test_check_readable_missing(tmp_path: Path) -> None:
    p = tmp_path / "missing.log"
    assert _check_error(p) == f"cannot read {p}: No such file or directory"


def test_check_readable_directory(tmp_path: Path) -> None:
    assert _check_error(tmp_path) == f"cannot read {tmp_path}: Is a directory"


def test_check_readable_empty(tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    assert _check_error(p) == f"{p} is empty"
    gz = tmp_path / "empty.log.gz"
    gz.write_bytes(gzip.compress(b""))
    assert _check_error(gz) == f"{gz} is empty"


def test_check_readable_binary(tmp_path: Path) -> None:
    p = tmp_path / "model.bin"
    p.write_bytes(bytes(range(256)) * 100)
    assert _check_error(p) == f"{p} is not a text log (binary data)"
    gz = tmp_path / "model.log.gz"
    gz.write_bytes(gzip.compress(b"\x00\x01\x02\x03" * 1000))
    assert _check_error(gz) == f"{gz} is not a text log (binary data)"


def test_check_readable_a_few_nuls_are_fine(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    p.write_bytes(b"\x00" * 5 + b"[2026-03-07 15:31:10 TP0] text\n" * 20)
    check_readable(str(p))


def test_check_readable_invalid_gzip(tmp_path: Path) -> None:
    p = tmp_path / "a.log.gz"
    p.write_bytes(b"\x1f\x8b" + b"garbage that is not deflate" * 10)
    assert _check_error(p) == f"{p}: not a valid gzip file"
    q = tmp_path / "magic-only.log"
    q.write_bytes(b"\x1f\x8b")
    assert _check_error(q) == f"{q}: not a valid gzip file"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read anything")
def test_check_readable_permission_denied(tmp_path: Path) -> None:
    p = tmp_path / "secret.log"
    p.write_bytes(b"x\n")
    p.chmod(0)
    try:
        assert _check_error(p) == f"cannot read {p}: Permission denied"
    finally:
        p.chmod(0o644)


def test_input_error_is_one_line(tmp_path: Path) -> None:
    msg = _check_error(tmp_path / "x.log")
    assert "\n" not in msg


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def test_report_as_dict_is_json(tmp_path: Path) -> None:
    _, rep = read_bytes(tmp_path, b"bad \xff\nmissing newline")
    d = rep.as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["flagged"] == [[1, "1 invalid UTF-8 sequence replaced"]]
    assert d["missing_final_newline"] is True
    assert set(d) == {
        "path",
        "physical_lines",
        "lines",
        "bytes_read",
        "bad_utf8",
        "nul_bytes",
        "crlf",
        "cr_segments",
        "glued_splits",
        "ansi_stripped",
        "wrapped",
        "long_lines",
        "damaged_numbers",
        "flagged",
        "missing_final_newline",
        "damaged",
    }


def test_flagged_is_capped_but_counters_are_not(tmp_path: Path) -> None:
    _, rep = read_bytes(tmp_path, b"bad \xff\n" * 300)
    assert rep.bad_utf8 == 300
    assert len(rep.flagged) == 200
    assert rep.flagged[-1] == (200, "1 invalid UTF-8 sequence replaced")


def test_line_result_does_not_depend_on_its_neighbours(tmp_path: Path) -> None:
    # A bad byte elsewhere sends the whole block down the slow path; results must not change.
    body = (
        b"sglang  | [2026-03-07 15:31:10 TP0] a\r\n"
        b"[1;33mwarn[0m\n"
        b"x 1/2 [00:01<00:01, 1.2it/s][2026-03-07 15:31:10 TP1] glued\n"
        b"\rseg1\rseg2\n"
    )
    clean, _ = read_bytes(tmp_path, body, "clean.log")
    dirty, _ = read_bytes(tmp_path, body + b"\xff\n", "dirty.log")
    assert dirty[: len(clean)] == clean
    assert numbered(clean) == [
        (1, "[2026-03-07 15:31:10 TP0] a"),
        (2, "warn"),
        (3, "x 1/2 [00:01<00:01, 1.2it/s]"),
        (3, "[2026-03-07 15:31:10 TP1] glued"),
        (4, "seg1"),
        (4, "seg2"),
    ]
    assert dirty[-1] == (5, "\ufffd", None)


@pytest.mark.parametrize(
    "neighbour",
    [
        pytest.param(b"bad \xff\n", id="slow-bytes-path"),
        pytest.param(b"nul \x00\n", id="nul-path"),
        pytest.param(b"[0m\n", id="ansi-path"),
        pytest.param(b"x 1/2 [00:01<00:01, 1.2it/s]\n", id="tqdm-path"),
        pytest.param(b"\rbar\rbar\n", id="cr-path"),
        pytest.param(b"crlf\r\n", id="crlf-block"),
    ],
)
def test_every_sample_line_reads_the_same_on_every_block_path(
    tmp_path: Path, neighbour: bytes
) -> None:
    # Each sample shares its block with a neighbour that forces one processing path; the
    # sample must come out exactly as when read alone (the fast path for most of them).
    samples = (
        [p.values[0] for p in WRAPPED]
        + NOT_WRAPPED
        + [p.values[0] + p.values[1] for p in GLUED_CASES]
    )
    for line in samples:
        alone, _ = read_bytes(tmp_path, line.encode() + b"\n", "one.log")
        mixed, _ = read_bytes(tmp_path, neighbour + line.encode() + b"\n", "mixed.log")
        assert [(t, w) for n, t, w in mixed if n == 2] == [(t, w) for _, t, w in alone], line


# ------------------------------------------------------------------------------------------
# Properties
# ------------------------------------------------------------------------------------------

PIECES = [
    b"\n",
    b"\r",
    b"\r\n",
    b"\x00",
    b"\x1b",
    b"\x1b[0m",
    b"[1;33m",
    b"\xff",
    b"\xe2\x96",
    b"\xe2\x96\x88",
    b"[2026-03-07 15:31:10 TP0] ",
    b"sglang  | ",
    b"(WorkerDict pid=1) ",
    b" 0/4 [00:00<?, ?it/s]",
    b"May 16, 2026 @ 20:44:54.728    ",
    b"2025-11-05T01:56:54.281615Z  INFO a.b: ",
    b"a",
    b" ",
    b"|",
    b"\x1f\x8b",
]
damaged_bytes = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join),
)


def _check_numbering(lines: list[Line], data: bytes) -> None:
    n_phys = physical_count(data)
    nos = [n for n, _, _ in lines]
    assert all(1 <= n <= n_phys for n in nos)
    assert nos == sorted(nos)
    assert set(nos) == set(range(1, n_phys + 1))  # every physical line accounted for
    for _, t, _ in lines:
        assert "\n" not in t and "\r" not in t and "\x00" not in t


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=damaged_bytes,
    cap=st.sampled_from([4, 16, 256 * 1024]),
    block=st.sampled_from([1, 5, 64, 1 << 20]),
)
def test_property_never_raises_and_accounts_for_every_line(
    tmp_path: Path, data: bytes, cap: int, block: int
) -> None:
    p = tmp_path / "prop.log"
    p.write_bytes(data)
    rep = ReadReport(str(p))
    with patched(MAX_LINE_CHARS=cap, BLOCK_SIZE=block):
        lines = list(read_lines(str(p), rep))
    if data[:2] == b"\x1f\x8b":
        return  # read as a (damaged) gzip stream: numbering relates to the decompressed text
    _check_numbering(lines, data)
    assert rep.physical_lines == physical_count(data)
    assert rep.lines == len(lines)
    assert rep.bytes_read == len(data)
    assert all(len(t) <= cap for _, t, _ in lines)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=damaged_bytes.filter(lambda b: b[:2] != b"\x1f\x8b"),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=5),
    cap=st.sampled_from([4, 16, 256 * 1024]),
    block=st.sampled_from([1, 3, 64, 1 << 20]),
)
def test_property_any_byte_ranges_reassemble(
    tmp_path: Path, data: bytes, cuts: list[int], cap: int, block: int
) -> None:
    p = tmp_path / "ranges.log"
    p.write_bytes(data)
    with patched(MAX_LINE_CHARS=cap, BLOCK_SIZE=block):
        whole = list(read_lines(str(p), ReadReport(str(p))))
        bounds = sorted({c for c in cuts if 0 < c < len(data)})
        edges = [0, *bounds, None]
        got: list[Line] = []
        for start, end in itertools.pairwise(edges):
            # where the range really begins: after the first '\n' at offset >= start-1
            if start == 0:
                real = 0
            else:
                j = data.find(b"\n", start - 1)
                real = len(data) if j < 0 else j + 1
            first = data[:real].count(b"\n") + 1
            got.extend(
                read_lines(str(p), ReadReport(str(p)), start=start, end=end, first_line_no=first)
            )
    assert got == whole


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=damaged_bytes.filter(lambda b: b[:2] != b"\x1f\x8b"))
def test_property_gzip_reads_like_plain(tmp_path: Path, data: bytes) -> None:
    plain, _ = read_bytes(tmp_path, data, "p.log")
    gz, rep = read_bytes(tmp_path, gzip.compress(data), "p.log.gz")
    assert gz == plain
    assert rep.damaged is None


# ------------------------------------------------------------------------------------------
# The real corpus
# ------------------------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_reads_cleanly() -> None:
    files = sorted(CORPUS.rglob("*.log"))
    assert len(files) >= 50
    for f in files:
        data = f.read_bytes()
        rep = ReadReport(str(f))
        lines = list(read_lines(str(f), rep))
        assert rep.lines >= rep.physical_lines == physical_count(data), f.name
        assert rep.damaged is None, f.name
        _check_numbering(lines, data)
