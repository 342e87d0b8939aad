"""Benchmark tool lines (grammars/bench.lark, formats §7): one real line → the expected event."""

from __future__ import annotations

import pytest

from logparse.grammar.build import get_parser
from logparse.grammar.transform import Envelope
from logparse.model.events import BenchBanner, BenchRow, KnownMessage, OneBatchLine
from logparse.parsing.benchblocks import SERVING_FIELDS


@pytest.fixture(scope="module")
def parser():
    return get_parser(strict=True)


def _row(label: str, value: str) -> str:
    """A row as bench_serving prints it: label+colon in 40 columns, a space, value in 10."""
    return f"{label + ':':<40} {value:<10}"


# --------------------------------------------------------------------------- banners

BANNERS = [
    ("============ Serving Benchmark Result ============", "Serving Benchmark Result", "="),
    (
        "====== Offline Throughput Benchmark Result =======",
        "Offline Throughput Benchmark Result",
        "=",
    ),
    ("----------------End-to-End Latency----------------", "End-to-End Latency", "-"),
    ("---------------Time to First Token----------------", "Time to First Token", "-"),
    (
        "-----Time per Output Token (excl. 1st token)------",
        "Time per Output Token (excl. 1st token)",
        "-",
    ),
    ("---------------Inter-Token Latency----------------", "Inter-Token Latency", "-"),
    ("---------------------Goodput----------------------", "Goodput", "-"),
    ("----------------Cache Hit Details-----------------", "Cache Hit Details", "-"),
    ("==================================================", "", "="),
    ("==================================================  ", "", "="),
    # bench_one_batch correctness mode
    ("========== Prompt 0 ==========", "Prompt 0", "="),
]


@pytest.mark.parametrize(("line", "title", "rule"), BANNERS)
def test_banner(parser, line, title, rule):
    env, cls, kw = parser.parse(line)
    assert env is None
    assert cls is BenchBanner
    assert kw == {"title": title, "rule": rule}
    assert parser.parse(line) == parser.parse_lalr(line)


# --------------------------------------------------------------------------- rows

# Every row label of §7.1/§7.2 (all releases) with a value of its kind.
_VALUES = {
    "Backend": "sglang",
    "Traffic request rate": "inf",
    "Max request concurrency": "not set",
    "Max reqeuest concurrency": "512",
    "SLOs (ms)": "ttft:2000 e2e:60000",
    "Cache hit rate": "39.8%",
}
ALL_LABELS = sorted(SERVING_FIELDS)


@pytest.mark.parametrize("label", ALL_LABELS)
def test_every_row_label_padded(parser, label):
    value = _VALUES.get(label, "61.36")
    line = _row(label, value)
    assert parser.parse(line) == (None, BenchRow, {"label": label, "value": value})
    assert parser.parse(line) == parser.parse_lalr(line)


@pytest.mark.parametrize("label", ALL_LABELS)
def test_every_row_label_unpadded(parser, label):
    # 0.4.x (corpus dev-021): no trailing spaces after the value
    line = _row(label, "1000").rstrip()
    assert parser.parse(line) == (None, BenchRow, {"label": label, "value": "1000"})
    assert parser.parse(line) == parser.parse_lalr(line)


ROWS = [
    # corpus dev-014 / dev-021 / dev-043 / dev-051 and formats §7.1/§7.2
    ("Backend:                                 sglang-oai-chat", "Backend", "sglang-oai-chat"),
    ("Backend:                                 engine    ", "Backend", "engine"),
    ("Traffic request rate:                    inf       ", "Traffic request rate", "inf"),
    ("Traffic request rate:                    128.0", "Traffic request rate", "128.0"),
    ("Traffic request rate:                    trace     ", "Traffic request rate", "trace"),
    ("Max request concurrency:                 not set   ", "Max request concurrency", "not set"),
    ("Max reqeuest concurrency:                512", "Max reqeuest concurrency", "512"),
    ("Successful requests:                     1000      ", "Successful requests", "1000"),
    ("Benchmark duration (s):                  61.36     ", "Benchmark duration (s)", "61.36"),
    (
        "Total generated tokens (retokenized):    195503    ",
        "Total generated tokens (retokenized)",
        "195503",
    ),
    (
        "Peak output token throughput (tok/s):    6442.00   ",
        "Peak output token throughput (tok/s)",
        "6442.00",
    ),
    (
        "Last generation throughput (tok/s):      5123.44   ",
        "Last generation throughput (tok/s)",
        "5123.44",
    ),
    ("Accept length:                           2.14      ", "Accept length", "2.14"),
    (
        "SLOs (ms):                               ttft:2000 e2e:60000",
        "SLOs (ms)",
        "ttft:2000 e2e:60000",
    ),
    ("SLO attainment (%):                      60.20     ", "SLO attainment (%)", "60.20"),
    ("TTFT SLO attainment (%):                 71.40     ", "TTFT SLO attainment (%)", "71.40"),
    ("Max ITL (ms):                            5120.77   ", "Max ITL (ms)", "5120.77"),
    ("Mean TPOT (ms):                          122.81    ", "Mean TPOT (ms)", "122.81"),
    ("Total cached tokens:                     120334    ", "Total cached tokens", "120334"),
    ("  Device:                                120334    ", "  Device", "120334"),
    ("Cache hit rate:                          39.8%", "Cache hit rate", "39.8%"),
    ("  Device:                                100.0%", "  Device", "100.0%"),
    ("  Host:                                  12.5%", "  Host", "12.5%"),
    # long value shifts nothing; collapsed padding (pasted through a tool) still a row
    ("Backend: sglang", "Backend", "sglang"),
    # cut at the end of an excerpt: label only, or label and padding
    ("Mean ITL (ms):", "Mean ITL (ms)", ""),
    ("Mean ITL (ms):            ", "Mean ITL (ms)", ""),
]


@pytest.mark.parametrize(("line", "label", "value"), ROWS)
def test_row(parser, line, label, value):
    assert parser.parse(line) == (None, BenchRow, {"label": label, "value": value})
    assert parser.parse(line) == parser.parse_lalr(line)


def test_row_with_envelope(parser):
    line = "[2026-03-07 15:31:10] Successful requests:                     1000      "
    env, cls, kw = parser.parse(line)
    assert env == Envelope("2026-03-07 15:31:10", None, None, "sglang")
    assert (cls, kw) == (BenchRow, {"label": "Successful requests", "value": "1000"})
    assert parser.parse(line) == parser.parse_lalr(line)


# --------------------------------------------------------------------------- bench_one_batch

ONE_BATCH = [
    (
        "Prefill. latency: 0.03617 s, throughput:  28311.86 token/s",
        {"stage": "prefill", "latency_s": 0.03617, "throughput": 28311.86},
    ),
    (
        "Decode 0. Batch size: 1, latency: 0.00705 s, throughput:    141.84 token/s",
        {
            "stage": "decode-step",
            "step": 0,
            "batch_size": 1,
            "latency_s": 0.00705,
            "throughput": 141.84,
        },
    ),
    (
        "Decode 127. Batch size: 64, latency: 0.01234 s, throughput:   5186.39 token/s",
        {
            "stage": "decode-step",
            "step": 127,
            "batch_size": 64,
            "latency_s": 0.01234,
            "throughput": 5186.39,
        },
    ),
    (
        "Decode.  median latency: 0.00687 s, median throughput:    145.56 token/s",
        {"stage": "decode-median", "latency_s": 0.00687, "throughput": 145.56},
    ),
    (
        "Total. latency:  0.905 s, throughput:   1272.88 token/s",
        {"stage": "total", "latency_s": 0.905, "throughput": 1272.88},
    ),
]


@pytest.mark.parametrize(("line", "fields"), ONE_BATCH)
def test_one_batch_line(parser, line, fields):
    assert parser.parse(line) == (None, OneBatchLine, fields)
    assert parser.parse(line) == parser.parse_lalr(line)


def test_one_batch_line_with_rank_prefix(parser):
    line = "[2026-03-07 15:31:10 TP0] Prefill. latency: 0.01014 s, throughput:   5916.43 token/s"
    env, cls, kw = parser.parse(line)
    assert env == Envelope("2026-03-07 15:31:10", "TP0", None, "sglang")
    assert cls is OneBatchLine and kw["latency_s"] == 0.01014
    assert parser.parse(line) == parser.parse_lalr(line)


# --------------------------------------------------------------------------- known messages

KNOWN = [
    ("Warmup ...", "one-batch-warmup", {}),
    ("Benchmark ...", "one-batch-benchmark", {}),
    (
        "skipping (64, 1024, 8) due to max batch size limit",
        "one-batch-skip",
        {"batch_size": 64, "input_len": 1024, "output_len": 8},
    ),
    ("acc_length=3.12", "send-one-acc-length", {"acc_length": 3.12}),
    ("acc_length=1.00", "send-one-acc-length", {"acc_length": 1.0}),
    ("speed=123.45 token/s", "send-one-speed", {"speed": 123.45}),
]


@pytest.mark.parametrize(("line", "code", "fields"), KNOWN)
def test_known(parser, line, code, fields):
    env, cls, kw = parser.parse(line)
    assert env is None
    assert cls is KnownMessage
    assert kw == {"code": code, "text": line, "fields": fields}
    assert parser.parse(line) == parser.parse_lalr(line)


# --------------------------------------------------------------------------- near misses

_BENCH_CODES = {code for _line, code, _f in KNOWN}

NEAR_MISSES = [
    "Example: sglang serve",
    "RuntimeError: x",
    "ValueError: Backend: foo",
    "Backend sglang",
    "Backends:                                sglang",
    "backend:                                 sglang",
    # (an indented block, pasted inside a markdown list, is a block: tests/test_paste_shapes.py)
    "Device:                                  120334",
    "Total tokens:                            5",
    "Mean TTFT:                               5",
    "Concurrency",
    "Decode batch. #running-req: 8, #token: 5120, token usage: 0.03, gen throughput (token/s): 812.33, #queue-req: 0",
    "Prefill batch. #new-seq: 1, #new-token: 1024, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0",
    "Prefill. latency: fast",
    "Total. latency: 0.905 s",
    "Decode 0. Batch size: 1",
    "Warmup",
    "Warmup done",
    "speed=fast",
    "acc_length=",
    "=====",
    "-----",
    "--------------------------------------------------",
    "=== not a banner",
    "+-------------+--------+------------+-----------------+",
    "",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss(parser, line):
    _env, cls, kw = parser.parse(line)
    assert cls not in (BenchRow, BenchBanner, OneBatchLine)
    if cls is KnownMessage:
        assert kw["code"] not in _BENCH_CODES
    assert parser.parse(line) == parser.parse_lalr(line)
