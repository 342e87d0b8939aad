"""Paste shapes (issue 9): rank tags in any order, envelopes that lost their start, double-spaced
pastes, tracebacks whose indentation was stripped, CRI / FastChat / colour-damaged Ray wrappers.

Lines are quoted from public threads (each checked against the excluded list, dev split) or are
real corpus excerpts transformed the way a paste transforms them (a blank line after every line,
leading spaces removed); the transformed log must give the same records as the original.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logparse.grammar.build import get_parser
from logparse.model.events import (
    DecodeBatch,
    ExceptionHeader,
    HttpAccess,
    KnownMessage,
    PrefillBatch,
    Traceback,
    WeightLoadBegin,
)
from logparse.parsing.pipeline import parse_file
from tests.conftest import CORPUS

# ---------------------------------------------------------------- rank tags, any order and subset

RANKED = [
    # sgl-project/sglang#9805 (PP + EP + DP attention, 0.5.x order DP TP EP PP)
    ("[2025-08-29 20:35:50 DP0 TP0 EP0 PP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, "
     "token usage: 0.00, #running-req: 0, #queue-req: 0, ", PrefillBatch, "DP0 TP0 EP0 PP0"),
    ("[2025-08-29 20:35:50 DP2 TP2 EP2 PP0] Scheduler hit an exception: Traceback (most recent call last):",
     ExceptionHeader, "DP2 TP2 EP2 PP0"),
    # sgl-project/sglang#27510 (DP attention + EP)
    ("[2026-06-07 23:44:18 DP7 TP7 EP7] Scheduler hit an exception: Traceback (most recent call last):",
     ExceptionHeader, "DP7 TP7 EP7"),
    # sgl-project/sglang#17985 (PP before TP: 0.5.6+ order); the message is not this test's subject
    ("[2026-01-30 20:54:54 PP1 TP0] Beginning to load weights", None, "PP1 TP0"),
    # dev/j-009: a build that prints a mode enum's str() among the tags (a tag, not a rank)
    ("[2025-12-02 07:04:51 DisaggregationMode.IGPUDECODE TP1] Allocating 40.00 GB host memory for "
     "hierarchical KV cache.", KnownMessage, "TP1"),
    ("[2025-12-02 07:04:51 DisaggregationMode.DECODE DP1 TP1] Scheduler hit an exception: Traceback "
     "(most recent call last):", ExceptionHeader, "DP1 TP1"),
]


@pytest.mark.parametrize(("line", "cls", "rank"), RANKED)
def test_rank_tags_in_any_order(line: str, cls: type | None, rank: str) -> None:
    env, got, _kw = get_parser(strict=True).parse(line)
    assert cls is None or got is cls
    assert env is not None and env.rank == rank and env.style == "sglang"


@pytest.mark.parametrize("tags", ["DP0 PP0", "PP1 TP1", "DP0 TP0 EP0", "DP1 ATTN_CP1 TP1", "MOE_DP1 TP3 EP3", "CP1 TP1"])
def test_any_subset_of_rank_names(tags: str) -> None:
    env, cls, _ = get_parser(strict=True).parse(f"[2025-05-14 12:00:01 {tags}] Load weight begin. avail mem=78.31 GB")
    assert cls is WeightLoadBegin and env is not None and env.rank == tags


# ---------------------------------------------------------------- envelopes that lost their start

# What is left of `[2025-05-14 12:00:03 TP0] ` after the paste lost 1, 2, … characters, and the
# timestamp the line still states (the year comes from the dated line before it).
CUT = [
    ("2025-05-14 12:00:03 TP0] ", "2025-05-14 12:00:03"),
    ("025-05-14 12:00:03 TP0] ", "05-14 12:00:03"),  # issue 9's example: the leading `[2` lost
    ("5-05-14 12:00:03 TP0] ", "05-14 12:00:03"),
    ("-05-14 12:00:03 TP0] ", "05-14 12:00:03"),
    ("05-14 12:00:03 TP0] ", "05-14 12:00:03"),
    ("14 12:00:03 TP0] ", None),  # the month is gone: no timestamp, still the envelope
    ("12:00:03 TP0] ", "12:00:03"),
    (":00:03 TP0] ", None),
]


@pytest.mark.parametrize(("prefix", "ts"), CUT)
def test_envelope_that_lost_its_start(prefix: str, ts: str | None) -> None:
    env, cls, kw = get_parser(strict=True).parse(prefix + "Load weight begin. avail mem=78.31 GB")
    assert cls is WeightLoadBegin and kw["avail_mem_gb"] == 78.31
    assert env is not None and env.style == "cut" and env.rank == "TP0" and env.ts == ts


def test_cut_envelope_of_a_real_decode_line() -> None:
    # shared corpus: a Decode line whose leading '[' was lost (hybrid SWA model).
    env, cls, _ = get_parser(strict=True).parse(
        "2026-05-24 03:51:44 TP0] Decode batch, #running-req: 4, #full token: 2642688, full token usage: 1.00, "
        "#swa token: 14592, swa token usage: 0.06, cuda graph: True, gen throughput (token/s): 40.12, #queue-req: 0")
    assert cls is DecodeBatch and env is not None and env.ts == "2026-05-24 03:51:44" and env.rank == "TP0"


@pytest.mark.parametrize(("line", "cls", "rank"), [
    # sgl-project/sglang#16974: the reporter cut the timestamps and kept the rank tags
    ("[DP0 TP0] Decode batch, accept len: 2.20, accept rate: 0.73, cuda graph: True", DecodeBatch, "DP0 TP0"),
    # kvcache-ai/Mooncake#1088: an empty timestamp before the rank
    ("[ TP2] Connect to Mooncake store successfully.  ", None, "TP2"),
])
def test_envelope_with_rank_tags_only(line: str, cls: type | None, rank: str) -> None:
    env, got, _ = get_parser(strict=True).parse(line)
    assert (cls is None or got is cls) and env is not None and env.rank == rank and env.ts is None


def test_access_line_cut_after_the_request() -> None:
    env, cls, kw = get_parser(strict=True).parse(
        '[2026-05-28 02:59:59] INFO:     127.0.0.1:37664 - "POST /v1/completions HTTP/1.1"')
    assert cls is HttpAccess and kw["method"] == "POST" and kw["path"] == "/v1/completions" and kw["status"] == 0


# ---------------------------------------------------------------- double-spaced / unindented pastes

def _records(path: Path) -> list[tuple[str | None, str, tuple[str | None, ...], tuple[str, ...]]]:
    log = parse_file(str(path))
    return [(t.exc_type, t.message, tuple(f.func for f in t.frames), tuple(e for e, _ in t.chain))
            for t in log.of(Traceback)]


def _transformed(tmp_path: Path, source: Path, how: str) -> Path:
    lines = source.read_text(encoding="utf-8").split("\n")
    if how == "double":
        text = "\n\n".join(lines)
    else:
        text = "\n".join(line.lstrip(" ") for line in lines)
    out = tmp_path / f"{how}-{source.name}"
    out.write_text(text, encoding="utf-8")
    return out


# Real excerpts with tracebacks: a Ray RayTaskError whose message carries the remote traceback
# (dev-011), a scheduler traceback (dev-036) and a warmup failure (dev-018, docker-compose).
TRACEBACK_LOGS = ["dev-011.log", "dev-036.log", "dev-018.log"]


@pytest.mark.parametrize("name", TRACEBACK_LOGS)
def test_double_spaced_paste_gives_the_same_tracebacks(tmp_path: Path, name: str) -> None:
    source = CORPUS / name
    assert _records(_transformed(tmp_path, source, "double")) == _records(source)


@pytest.mark.parametrize("name", TRACEBACK_LOGS)
def test_unindented_traceback_gives_the_same_records_and_every_line_is_recognized(tmp_path: Path, name: str) -> None:
    source = CORPUS / name
    stripped = _transformed(tmp_path, source, "strip")
    assert _records(stripped) == _records(source)
    before, after = parse_file(str(source)).coverage, parse_file(str(stripped)).coverage
    # Source and caret lines without their indentation are still the traceback's lines.
    assert after.unparsed <= before.unparsed


def test_double_spaced_watchdog_line_keeps_its_wrapped_tail(tmp_path: Path) -> None:
    # dev-027: a torch NCCL watchdog line hard-wrapped by the paste; double-spaced, the tail is two lines on.
    from logparse.engine.core import analyze

    source = CORPUS / "dev-027.log"
    want = analyze(str(source)).facts["nccl_timeout"]
    assert want.get("timeout_ms") == 600000
    assert analyze(str(_transformed(tmp_path, source, "double"))).facts["nccl_timeout"] == want


# ---------------------------------------------------------------- wrappers

def test_cri_log_lines_are_unwrapped(tmp_path: Path) -> None:
    # containerd/CRI-O log file lines (a Kubernetes node's /var/log/pods): timestamp, stream, F|P.
    log = tmp_path / "cri.log"
    log.write_text(
        '2026-06-24T17:38:03.765641375+02:00 stderr F [2026-06-24 15:38:03 TP0] Scheduler hit an exception: '
        'Traceback (most recent call last):\n'
        '2026-06-24T17:38:03.765642788+02:00 stderr F   File "/sgl-workspace/sglang/python/sglang/srt/layers/'
        'rotary_embedding/base.py", line 374, in forward_cuda\n'
        "2026-06-24T17:38:03.765642788+02:00 stderr F     q_rope = query.view(batch_size, -1, self.head_size)\n"
        "2026-06-24T17:38:03.765644284+02:00 stderr F RuntimeError: shape '[8, -1, 128]' is invalid for input of size 1000\n",
        encoding="utf-8")
    parsed = parse_file(str(log))
    (tb,) = parsed.of(Traceback)
    assert tb.exc_type == "RuntimeError" and tb.rank == "TP0" and [f.func for f in tb.frames] == ["forward_cuda"]
    assert parsed.coverage.unparsed == 0


def test_fastchat_logger_and_colour_damaged_ray_prefix(tmp_path: Path) -> None:
    log = tmp_path / "wrapped.log"
    log.write_text(
        # FastChat's worker logger around SGLang 0.1.x output
        "2024-02-15 16:04:21 | INFO | stdout |   File \"/venv/lib/python3.11/site-packages/sglang/srt/managers/"
        "router/manager.py\", line 68, in start_router_process\n"
        # a Ray prefix whose colour code lost its `ESC[36` (the paste began inside it)
        "m(WorkerDict pid=3432, ip=192.168.10.98)\x1b[0m [2025-09-03 03:56:08 TP1] TpModelWorkerClient hit an "
        "exception: Traceback (most recent call last):\n",
        encoding="utf-8")
    parsed = parse_file(str(log))
    assert parsed.coverage.unparsed == 0
    (header,) = parsed.of(ExceptionHeader)
    assert header.rank == "TP1" and header.wrapper is not None and header.wrapper.pid == 3432


def test_markdown_quoted_log_is_unwrapped(tmp_path: Path) -> None:
    # fixtures/corpus/dev/b-026 (a watchdog timeout pasted inside a markdown quote)
    log = tmp_path / "quoted.log"
    log.write_text(
        '> [2025-07-11 17:40:04] INFO:     100.125.183.82:43204 - "GET /metrics HTTP/1.1" 200 OK\n'
        "> [2025-07-11 17:40:14 DP0 TP2] Pyspy failed to dump PID 546. Error: /bin/sh: 1: py-spy: not found\n"
        "> \n"
        "> [2025-07-11 17:40:14 DP0 TP2] Watchdog timeout (self.watchdog_timeout=300)\n"
        ">\n", encoding="utf-8")
    parsed = parse_file(str(log))
    assert parsed.coverage.unparsed == 0
    assert "DP0 TP2" in parsed.ranks_seen


def test_bracketed_compose_service_prefix(tmp_path: Path) -> None:
    # fixtures/corpus/dev/c-014: `[service]   | ` before every SGLang line, a tqdm bar between them
    log = tmp_path / "svc.log"
    log.write_text(
        "[sglang]     | [2026-06-24 11:50:37] Load weight end. elapsed=4.58 s, type=Qwen3_5ForConditionalGeneration, "
        "quant=fp8, fmt=e4m3, avail mem=60.12 GB, mem usage=28.54 GB.\n"
        "Multi-thread loading shards: 100% Completed | 66/66 [00:03<00:00, 17.24it/s]\n"
        "[sglang]     | [2026-06-24 11:50:38 TP0] Load weight begin. avail mem=78.31 GB\n", encoding="utf-8")
    parsed = parse_file(str(log))
    begin = parsed.of(WeightLoadBegin)
    assert len(begin) == 1 and begin[0].rank == "TP0" and begin[0].wrapper is not None
    assert begin[0].wrapper.container == "sglang"


@pytest.mark.parametrize("line", [
    # fixtures/corpus/dev/b-022 and b-036: NCCL ≥ 2.19 prints the source location before `NCCL WARN`
    "node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned "
    "113(No route to host) errno 115(Operation now in progress)",
    "h100-15:139:1092 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to 10.0.0.82<38455> failed : "
    "Software caused connection abort",
])
def test_nccl_line_with_source_location(line: str) -> None:
    from logparse.model.events import NcclLog

    _env, cls, kw = get_parser(strict=True).parse(line)
    assert cls is NcclLog and kw["level"] == "WARN" and isinstance(kw["device"], int)


def test_watchdog_line_wrapped_right_after_the_timeout_label(tmp_path: Path) -> None:
    # fixtures/corpus/dev/b-053 (hard-wrapped at `Timeout(ms)=`, padded with spaces)
    from logparse.engine.core import analyze

    log = tmp_path / "wrapped.log"
    log.write_text(
        "[rank4]:[E210 02:06:33.321131395 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1522789, OpType=_ALLGATHER_BASE, NumelIn=298960, NumelOut=4783360, Timeout(ms)=\n"
        "600000) ran for 600022 milliseconds before timing out.                                       \n",
        encoding="utf-8")
    assert analyze(str(log)).facts["nccl_timeout"] == {
        "op": "_ALLGATHER_BASE", "timeout_ms": 600000, "seq": 1522789, "rank": 4}


@pytest.mark.parametrize(("text", "cls"), [
    ("[2025-12-17 05:10:47] Decode batch", DecodeBatch),  # fixtures/corpus/dev/a-001, the excerpt's last line
    ("Prefill b", PrefillBatch),  # fixtures/corpus/dev/a-005
    # fixtures/corpus/dev/b-038: cut right after the last key's colon
    ("[2025-10-15 14:44:31 DP4 TP4 EP4] Prefill batch. #new-seq: 3, #new-token: 512, #cached-token: 0, token usage: "
     "0.01, #unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 2, input throughput (token/s):", PrefillBatch),
])
def test_stats_line_cut_short_still_counts(text: str, cls: type) -> None:
    assert get_parser(strict=True).parse(text)[1] is cls


def test_coverage_classifies_lines_by_structure() -> None:
    from logparse.parsing.classify import classify

    assert classify("Cache flushed successfully!") == "sglang-source"  # shared corpus dev-049
    assert classify("Registering 595 cuda graph addresses") == "sglang-source"  # dev-048 (custom all-reduce)
    assert classify("Requirement already satisfied: sglang in /usr/local/lib/python3.12/dist-packages (0.5.2)") == "pip"
    assert classify("```bash") == "markdown"
    assert classify("+-----------------------------------------------------------------------------------------+") == "shell-output"
    assert classify("I1120 11:09:23.594488 203018 pybind_client.cpp:218] Mounting segment: 17179869184 bytes") == "foreign-logger"
    # glog ≥ 0.7 prints the year (dev k-009: Mooncake's transfer engine beside SGLang 0.4.6.post4)
    assert classify("I20250516 09:00:52.199445 45697 transfer_engine.cpp:44] Transfer Engine starting. Server: "
                    "10.8.59.192, Metadata: P2PHANDSHAKE, ip_or_host_name: , rpc_port: 0") == "foreign-logger"
    assert classify("W20250516 09:00:52.240088 45697 topology.cpp:55] No RDMA devices found") == "foreign-logger"
    assert classify("Ignore import error when lo") == "cut-line"  # an excerpt cut inside SGLang's message
    assert classify("[2025-") == "cut-line"
    # Not classified: text that is none of these (it stays a visible gap).
    assert classify("Before this PR：") is None
    assert classify("the model answered something unexpected here") is None


@pytest.mark.parametrize("joiner", [" ", "\\n"])
def test_traceback_collapsed_onto_one_line(tmp_path: Path, joiner: str) -> None:
    # The scheduler traceback of shared corpus dev-036 (from its `Exception in ControllerSingle:`
    # header on), pasted as one paragraph (newlines → spaces, as GitHub renders a traceback outside
    # a code block) or with literal `\n` escapes, behind a Ray prefix.
    lines = (CORPUS / "dev-036.log").read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Traceback"))
    body = [line for line in lines[start:] if line.strip()]
    intact = tmp_path / "intact.log"
    intact.write_text("\n".join(body) + "\nRuntimeError: boom\n", encoding="utf-8")
    one = tmp_path / "one.log"
    one.write_text("(TpModelWorker pid=4242) " + joiner.join(body + ["RuntimeError: boom"]) + "\n", encoding="utf-8")
    want, got = _records(intact), _records(one)
    assert got == want and want[0][0] == "RuntimeError"
    assert parse_file(str(one)).coverage.unparsed == 0


@pytest.mark.parametrize("text", [
    "INFO:     11.251.218.2",  # an access line cut after the client's address
    "ERROR 12-01 12:00:00 tp_worker_overlap_",  # vLLM's envelope cut inside the file name
    "[rank4]:[E304 12:54:52.123710302 ProcessGroup",  # shared corpus dev-027: torch's envelope cut
    "Loading safetensors checkpoint shards:",  # a bar cut before its percentage
    "[2025-10-06 20:05:27 DP5 TP5]",  # an envelope and nothing after it
])
def test_cut_heads_are_cut_lines(text: str) -> None:
    from logparse.parsing.classify import classify

    assert classify(text) == "cut-line"


def test_printed_result_dict_is_data() -> None:
    from logparse.parsing.classify import classify

    # fixtures/corpus/dev/a-038 (bench_offline_throughput's result dict)
    assert classify("{'run_name': 'before', 'total_input_tokens': 131072, 'total_latency': 12.5, "
                    "'total_output_tokens': 16384, 'throughput': 1310.7}") == "data"


def test_bench_block_indented_as_a_whole() -> None:
    # fixtures/corpus/dev/b-025: a bench_serving result block pasted inside a markdown list
    from logparse.engine.core import analyze

    facts = analyze(str(Path(__file__).resolve().parents[1] / "fixtures/corpus/dev/b-025.log")).facts
    assert facts["bench"]["successful_requests"] == 512 and facts["bench"]["mean_itl_ms"] == 52.85


# ---------------------------------------------------------------- capture tools' prefixes, padding

WRAPPED = [
    # Ray's system processes carry no pid (`(raylet, ip=…)`, `(raylet)`)
    ("(raylet, ip=10.0.0.1) [2025-05-14 12:00:01 TP0] Load weight begin. avail mem=78.31 GB",
     "ray", "ray:raylet"),
    ("(raylet) [2025-05-14 12:00:01 TP0] Load weight begin. avail mem=78.31 GB", "ray", "ray:raylet"),
    # journalctl's short format
    ("Dec 02 01:02:03 gpu-node-3 python[123]: [2025-05-14 12:00:01 TP0] Load weight begin. avail mem=78.31 GB",
     "journald", "pid:123"),
    # a markdown quote around a docker-compose capture
    ("> sglang-1  | [2025-05-14 12:00:01 TP0] Load weight begin. avail mem=78.31 GB",
     "docker-compose", "docker:sglang-1"),
]


@pytest.mark.parametrize(("line", "kind", "stream"), WRAPPED)
def test_capture_tool_prefixes(line: str, kind: str, stream: str) -> None:
    from logparse.io.wrappers import Unwrapper

    w, rest = Unwrapper()(line)
    assert w is not None and w.kind == kind and w.stream == stream
    assert rest == "[2025-05-14 12:00:01 TP0] Load weight begin. avail mem=78.31 GB"


def test_iso_timestamp_keeps_the_lines_indentation() -> None:
    from logparse.io.wrappers import Unwrapper

    w, rest = Unwrapper()('2025-07-25T07:53:08.217502420Z   File "x.py", line 1, in f')
    assert w is not None and rest == '  File "x.py", line 1, in f'


def test_markdown_quote_is_not_a_ps2_prompt() -> None:
    from logparse.io.wrappers import Unwrapper

    u = Unwrapper()
    assert u('>   File "x.py", line 1, in f')[1] == '  File "x.py", line 1, in f'
    assert u("> --tp 8 \\")[0] is None  # bash's continuation prompt stays for commands.py


def _lines(tmp_path: Path, data: bytes) -> list[str]:
    from logparse.io.lines import read_lines
    from logparse.io.readreport import ReadReport

    p = tmp_path / "x.log"
    p.write_bytes(data)
    return [text for _no, text, _w in read_lines(str(p), ReadReport(str(p)))]


def test_bom_padding_and_tabs_are_the_pastes(tmp_path: Path) -> None:
    got = _lines(tmp_path, "\ufeff[2025-05-14 12:00:01 TP0] Load weight begin.   \n"
                           "Traceback (most recent call last):\t\n"
                           "\tFile \"x.py\", line 1, in f\n"
                           "[15:31:10 TP0] Decode batch, #running-req: 1, token usage: 0.00,    \n".encode())
    assert got == ["[2025-05-14 12:00:01 TP0] Load weight begin.", "Traceback (most recent call last):",
                   '    File "x.py", line 1, in f',
                   "[15:31:10 TP0] Decode batch, #running-req: 1, token usage: 0.00, "]


def test_log_indented_as_a_code_block(tmp_path: Path) -> None:
    body = ["[2025-05-14 12:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):",
            '  File "/sglang/srt/managers/scheduler.py", line 3, in run_scheduler_process',
            "    scheduler.event_loop()",
            "RuntimeError: boom"]
    got = _lines(tmp_path, "".join("    " + line + "\n" for line in body).encode())
    assert got == body


# ---------------------------------------------------------------- autolinked envelopes (dev/h-025)

_ENVELOPE_HEAD = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2})(?=:\d{2}:\d{2})")


@pytest.mark.parametrize("name", ["dev-002.log", "dev-026.log", "dev-041.log", "dev-047.log"])
def test_envelopes_autolinked_by_a_chat_client_parse_as_before(tmp_path: Path, name: str) -> None:
    # A chat client took each envelope's date and hour for a phone number:
    # `[2025-11-19 14:41:27] …` became `[[2025-11-19 14](tel:2025-11-19 14):41:27] …`.
    source = CORPUS / name
    lines = source.read_text(encoding="utf-8").split("\n")
    linked = [_ENVELOPE_HEAD.sub(lambda m: f"[[{m[1]}](tel:{m[1]})", line) for line in lines]
    assert linked != lines
    out = tmp_path / f"linked-{name}"
    out.write_text("\n".join(linked), encoding="utf-8")
    before, after = parse_file(str(source)), parse_file(str(out))
    assert [type(e).__name__ for e in after.events] == [type(e).__name__ for e in before.events]
    assert after.coverage.unparsed == before.coverage.unparsed
