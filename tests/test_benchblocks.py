"""Benchmark result assembly (logparse/parsing/benchblocks.py): corpus facts, multi-run, cut and headless blocks."""

from __future__ import annotations

import json

import pytest

from logparse.grammar.build import get_parser
from logparse.model.events import BenchOneBatchResult, BenchServingResult, Event
from logparse.parsing.benchblocks import BenchAssembler
from tests.conftest import CORPUS


def _lines(text: str) -> list[str]:
    return [line.removesuffix("\r") for line in text.split("\n")]


def assemble(lines: list[str], source: str = "test.log") -> list[Event]:
    parser = get_parser(strict=True)
    asm = BenchAssembler(source)
    out: list[Event] = []
    for no, line in enumerate(lines, 1):
        env, cls, kw = parser.parse(line)
        out += asm.feed(no, env.ts if env is not None else None, cls, kw)
    out += asm.finish()
    return out


def _serving(events: list[Event]) -> list[BenchServingResult]:
    return [e for e in events if isinstance(e, BenchServingResult)]


def _one_batch(events: list[Event]) -> list[BenchOneBatchResult]:
    return [e for e in events if isinstance(e, BenchOneBatchResult)]


# --------------------------------------------------------------------------- corpus facts


def _corpus(name: str) -> tuple[list[str], dict]:
    path = CORPUS / f"{name}.log"
    if not path.exists():
        pytest.skip(f"corpus file {path} not available")
    lines = _lines(path.read_text(encoding="utf-8"))
    labels = json.loads((CORPUS / f"{name}.labels.json").read_text(encoding="utf-8"))
    return lines, labels["facts"]


@pytest.mark.parametrize("name", ["dev-014", "dev-021", "dev-043", "dev-051"])
def test_corpus_bench_serving(name):
    lines, facts = _corpus(name)
    results = _serving(assemble(lines, name))
    assert len(results) == 1
    (result,) = results
    assert result.title == "Serving Benchmark Result"
    assert result.source == name
    expected = facts["bench"]
    assert {k: result.fields.get(k, "<missing>") for k in expected} == expected
    # every excerpt is cut before the footer
    assert result.complete is False


def test_corpus_bench_serving_types():
    lines, _facts = _corpus("dev-014")
    (result,) = _serving(assemble(lines))
    f = result.fields
    assert f["backend"] == "sglang-oai-chat"
    assert f["request_rate"] == "inf"
    assert f["max_concurrency"] is None
    assert type(f["successful_requests"]) is int
    assert type(f["total_input_vision_tokens"]) is int and f["total_input_vision_tokens"] == 769536
    assert type(f["duration_s"]) is float
    assert f["p99_ttft_ms"] == 78548.58
    assert (result.line, result.end_line) == (1, 25)


def test_corpus_bench_serving_typo_and_rate():
    lines, _facts = _corpus("dev-021")
    (result,) = _serving(assemble(lines))
    assert result.fields["request_rate"] == 128.0
    assert result.fields["max_concurrency"] == 512
    assert result.fields["total_generated_tokens_retokenized"] == 131026


def test_corpus_bench_one_batch():
    lines, facts = _corpus("dev-006")
    results = _one_batch(assemble(lines, "dev-006"))
    assert [r.fields["phase"] for r in results] == ["warmup", "benchmark"]
    bench = results[1]
    expected = facts["bench_one_batch"]
    assert {k: bench.fields.get(k, "<missing>") for k in expected} == expected
    assert bench.fields["batch_size"] == 1
    assert [s["step"] for s in bench.fields["decode_steps"]] == [0, 1, 2, 3, 4]
    assert bench.fields["decode_steps"][4] == {
        "step": 4,
        "batch_size": 1,
        "latency_s": 0.00589,
        "throughput": 169.70,
    }
    assert (bench.line, bench.end_line) == (11, 18)
    assert _serving(assemble(lines)) == []


# --------------------------------------------------------------------------- synthetic blocks


def _row(label: str, value: str) -> str:
    return f"{label + ':':<40} {value:<10}"


SERVING_BLOCK = [
    "",
    "============ Serving Benchmark Result ============",
    _row("Backend", "sglang"),
    _row("Traffic request rate", "inf"),
    _row("Max request concurrency", "not set"),
    _row("Successful requests", "1000"),
    _row("Benchmark duration (s)", "61.36"),
    _row("Total input tokens", "302118"),
    _row("Total generated tokens", "195775"),
    _row("Request throughput (req/s)", "16.30"),
    _row("Output token throughput (tok/s)", "3190.59"),
    _row("Peak output token throughput (tok/s)", "6442.00"),
    _row("Peak concurrent requests", "1000"),
    _row("Concurrency", "598.83"),
    _row("Accept length", "3.12"),
    "---------------------Goodput----------------------",
    _row("SLOs (ms)", "ttft:2000 e2e:60000"),
    _row("Request goodput (req/s)", "9.81"),
    _row("SLO attainment (%)", "60.20"),
    _row("TTFT SLO attainment (%)", "71.40"),
    "----------------End-to-End Latency----------------",
    _row("Mean E2E Latency (ms)", "36745.19"),
    _row("P90 E2E Latency (ms)", "56812.90"),
    "-----Time per Output Token (excl. 1st token)------",
    _row("Median TPOT (ms)", "128.38"),
    "---------------Inter-Token Latency----------------",
    _row("P95 ITL (ms)", "306.35"),
    _row("Max ITL (ms)", "5120.77"),
    "----------------Cache Hit Details-----------------",
    _row("Total prompt tokens", "302118"),
    _row("Total cached tokens", "120334"),
    _row("  Device", "120334"),
    _row("Cache hit rate", "39.8%").rstrip(),
    _row("  Device", "100.0%").rstrip(),
    "==================================================",
]


def test_full_block_with_goodput_and_cache_sections():
    (result,) = assemble(SERVING_BLOCK)
    assert isinstance(result, BenchServingResult)
    assert result.complete is True
    assert (result.line, result.end_line) == (2, len(SERVING_BLOCK))
    assert result.fields == {
        "backend": "sglang",
        "request_rate": "inf",
        "max_concurrency": None,
        "successful_requests": 1000,
        "duration_s": 61.36,
        "total_input_tokens": 302118,
        "total_generated_tokens": 195775,
        "request_throughput": 16.30,
        "output_throughput": 3190.59,
        "peak_output_throughput": 6442.0,
        "peak_concurrent_requests": 1000,
        "concurrency": 598.83,
        "accept_length": 3.12,
        "slos_ms": {"ttft": 2000.0, "e2e": 60000.0},
        "request_goodput": 9.81,
        "slo_attainment_pct": 60.20,
        "ttft_slo_attainment_pct": 71.40,
        "mean_e2e_latency_ms": 36745.19,
        "p90_e2e_latency_ms": 56812.90,
        "median_tpot_ms": 128.38,
        "p95_itl_ms": 306.35,
        "max_itl_ms": 5120.77,
        "total_prompt_tokens": 302118,
        "total_cached_tokens": 120334,
        "cached_tokens_device": 120334,
        "cache_hit_rate_pct": 39.8,
        "cache_hit_rate_device_pct": 100.0,
    }


def test_offline_throughput_block():
    lines = [
        "====== Offline Throughput Benchmark Result =======",
        _row("Backend", "engine"),
        _row("Successful requests", "1000"),
        _row("Benchmark duration (s)", "45.12"),
        _row("Last generation throughput (tok/s)", "5123.44"),
        _row("Total token throughput (tok/s)", "11034.89"),
        "==================================================",
    ]
    (result,) = assemble(lines)
    assert result.title == "Offline Throughput Benchmark Result"
    assert result.complete is True
    assert result.fields == {
        "backend": "engine",
        "successful_requests": 1000,
        "duration_s": 45.12,
        "last_generation_throughput": 5123.44,
        "total_throughput": 11034.89,
    }


def test_two_blocks_two_results():
    second = [
        line.replace("1000      ", "500       ").replace("61.36", "30.10") for line in SERVING_BLOCK
    ]
    between = ['[2026-03-07 15:40:00] INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK']
    results = _serving(assemble(SERVING_BLOCK + between + second))
    assert len(results) == 2
    assert [r.complete for r in results] == [True, True]
    assert [r.fields["successful_requests"] for r in results] == [1000, 500]
    assert [r.fields["duration_s"] for r in results] == [61.36, 30.10]
    assert results[1].line == len(SERVING_BLOCK) + len(between) + 2


def test_two_blocks_without_footer():
    # header of the second block closes the first (cut) one
    first = SERVING_BLOCK[1:8]
    results = _serving(assemble(first + SERVING_BLOCK))
    assert [r.complete for r in results] == [False, True]
    assert results[0].fields["duration_s"] == 61.36
    assert results[0].end_line == len(first)


def test_cut_block_at_end_of_input():
    lines = SERVING_BLOCK[:10] + ["Output token throughput (tok/s):         31"]
    (result,) = assemble(lines)
    assert result.complete is False
    assert result.end_line == len(lines)
    assert result.fields["output_throughput"] == 31.0
    assert result.fields["request_throughput"] == 16.30


def test_block_cut_mid_row():
    lines = SERVING_BLOCK[1:6] + ["Benchmark duration (s):"]
    (result,) = assemble(lines)
    assert result.complete is False
    assert "duration_s" not in result.fields
    assert result.fields["successful_requests"] == 1000
    assert result.end_line == len(lines)


def test_non_row_line_closes_block():
    lines = SERVING_BLOCK[1:6] + [
        (
            "[2026-03-07 15:40:00] Prefill batch, #new-seq: 1, #new-token: 1024, #cached-token: 0, "
            "token usage: 0.01, #running-req: 0, #queue-req: 0"
        ),
        _row("Mean E2E Latency (ms)", "36745.19"),
    ]
    results = _serving(assemble(lines))
    assert len(results) == 2
    assert results[0].complete is False and results[0].end_line == 5
    assert results[0].fields["successful_requests"] == 1000
    # the stray row after it becomes a headless block of its own
    assert results[1].title == "" and results[1].fields == {"mean_e2e_latency_ms": 36745.19}


def test_blank_lines_and_header_gap_do_not_close():
    lines = [
        "============ Serving Benchmark Result ============",
        "some interleaved line before any row",
        _row("Backend", "sglang"),
        "",
        _row("Successful requests", "12"),
        "==================================================",
    ]
    (result,) = assemble(lines)
    assert result.complete is True
    assert result.fields == {"backend": "sglang", "successful_requests": 12}


def test_headless_block():
    # the excerpt starts inside a block: rows, then the footer
    lines = SERVING_BLOCK[20:]
    (result,) = assemble(lines)
    assert result.title == ""
    assert result.complete is True
    assert result.line == 1
    assert result.fields["mean_e2e_latency_ms"] == 36745.19
    assert result.fields["cache_hit_rate_device_pct"] == 100.0


def test_headless_block_at_rows():
    lines = SERVING_BLOCK[6:10]
    (result,) = assemble(lines)
    assert result.title == "" and result.complete is False
    assert result.fields == {
        "duration_s": 61.36,
        "total_input_tokens": 302118,
        "total_generated_tokens": 195775,
        "request_throughput": 16.30,
    }


def test_repeated_row_starts_a_new_headless_block():
    rows = SERVING_BLOCK[3:8]
    results = _serving(assemble(rows + rows))
    assert len(results) == 2
    assert results[0].fields == results[1].fields
    assert results[1].line == len(rows) + 1


def test_stray_footer_and_unknown_banner():
    lines = ["==================================================", "========== Prompt 0 =========="]
    assert assemble(lines) == []


def test_header_only_at_end():
    (result,) = assemble(["============ Serving Benchmark Result ============"])
    assert result.title == "Serving Benchmark Result"
    assert result.fields == {} and result.complete is False


# --------------------------------------------------------------------------- bench_one_batch runs

ONE_BATCH_RUN = [
    "Prefill. latency: 0.03617 s, throughput:  28311.86 token/s",
    "Decode 0. Batch size: 8, latency: 0.00705 s, throughput:   1134.75 token/s",
    "Decode 1. Batch size: 8, latency: 0.00699 s, throughput:   1144.49 token/s",
    "Decode.  median latency: 0.00687 s, median throughput:   1164.48 token/s",
    "Total. latency:  0.905 s, throughput:   1272.88 token/s",
]


def test_one_batch_runs_without_markers():
    results = _one_batch(assemble(ONE_BATCH_RUN + ONE_BATCH_RUN))
    assert len(results) == 2
    r = results[0]
    assert r.fields["phase"] is None
    assert r.fields["prefill_latency_s"] == 0.03617
    assert r.fields["prefill_throughput"] == 28311.86
    assert r.fields["decode_median_latency_s"] == 0.00687
    assert r.fields["decode_median_throughput"] == 1164.48
    assert r.fields["total_latency_s"] == 0.905
    assert r.fields["total_throughput"] == 1272.88
    assert r.fields["batch_size"] == 8
    assert len(r.fields["decode_steps"]) == 2
    assert (results[1].line, results[1].end_line) == (6, 10)


def test_one_batch_cut_run_and_skip():
    lines = [
        "Benchmark ...",
        "skipping (512, 1024, 8) due to max batch size limit",
        *ONE_BATCH_RUN[:3],
        "[2026-03-07 15:31:10 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    ]
    (result,) = _one_batch(assemble(lines))
    assert result.fields["phase"] == "benchmark"
    assert "total_latency_s" not in result.fields
    assert result.fields["prefill_latency_s"] == 0.03617
    assert (result.line, result.end_line) == (3, 5)


def test_one_batch_new_prefill_closes_cut_run():
    lines = ["Warmup ...", *ONE_BATCH_RUN[:2], "Benchmark ...", *ONE_BATCH_RUN]
    results = _one_batch(assemble(lines))
    assert [r.fields["phase"] for r in results] == ["warmup", "benchmark"]
    assert "total_throughput" not in results[0].fields
    assert results[1].fields["total_throughput"] == 1272.88


def test_one_batch_line_closes_serving_block():
    lines = SERVING_BLOCK[1:5] + ONE_BATCH_RUN
    events = assemble(lines)
    assert [type(e) for e in events] == [BenchServingResult, BenchOneBatchResult]
    assert events[0].complete is False
