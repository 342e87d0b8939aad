"""Newest-first exports (`logparse/io/order.py`): a log viewer's export that lists the most recent
line first is read in time order, decided from the input's structure (stamps going down,
tracebacks on their head), and nothing else is ever reordered."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from logparse.io import order, sources
from logparse.io.order import REORDER_NOTE, newest_first, oldest_first
from logparse.io.ranges import line_ranges
from logparse.io.reader import ReadReport, read_lines
from tests.corpus_score import SPLITS
from tests.test_paste_invariance import _baseline, _docker_wrapped, _every, _log_lines, _summary

ROOT = Path(__file__).resolve().parent.parent

FORWARD = [
    "[2025-06-30 16:57:50 TP0] Load weight begin. avail mem=78.31 GB",
    "[2025-06-30 16:57:51 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB",
    "[2025-06-30 16:57:52 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2311, in run_scheduler_process',
    "    scheduler.event_loop_overlap()",
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1645, in prepare_dp_attn_batch',
    "    batch, _ = self.prepare_dp_attn_batch(batch)",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "[2025-06-30 16:57:53] Received sigquit from a child process. It usually means the child failed.",
]


def _text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _viewer_export(lines: list[str]) -> str:
    """A console's export: newest line first, each behind its own ISO stamp with offset and a tab."""
    t0 = datetime(2025, 7, 1, 0, 57, 53)
    n = len(lines)
    stamped = [
        (t0 + timedelta(milliseconds=7 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+08:00\t" + line
        for i, line in enumerate(lines)
    ]
    assert len(stamped) == n
    return "".join(line + "\n" for line in reversed(stamped))


def test_reversed_log_reads_newest_first() -> None:
    assert newest_first(_text(FORWARD[::-1]))
    assert not newest_first(_text(FORWARD))


@pytest.mark.parametrize(
    "lines",
    [
        # two logs concatenated, the second one older: one step back among many forward
        pytest.param(FORWARD[:2] + ["[2025-06-29 10:00:00 TP0] Load weight begin."] + FORWARD[2:], id="cat"),
        # a clock stepped back once (NTP) in a log without a traceback
        pytest.param(["[2025-06-30 16:57:50] a", "[2025-06-30 16:57:40] b", "[2025-06-30 16:57:41] c"], id="ntp"),
        # a lone traceback with its header cut off: no header to read the order from
        pytest.param(FORWARD[3:8], id="headless"),
        # one stamp in the whole text
        pytest.param(FORWARD[2:8], id="one-stamp"),
    ],
)
def test_forward_logs_are_not_newest_first(lines: list[str]) -> None:
    assert not newest_first(_text(lines))


def test_upside_down_traceback_and_a_step_back_are_enough() -> None:
    # dev/i-027's evidence: one reversed traceback, one stamp going down, nothing going up.
    text = [
        '2025-07-01T00:57:53+08:00\t  File "/sgl/scheduler.py", line 1645, in prepare_dp_attn_batch',
        '2025-07-01T00:57:53+08:00\t  File "/sgl/scheduler.py", line 2311, in run_scheduler_process',
        "2025-07-01T00:57:53+08:00\t[2025-06-30 16:57:53 DP7 TP7] Scheduler hit an exception: Traceback (most recent call last):",
        "2025-07-01T00:57:49+08:00\tExtension modules: numpy._core._multiarray_umath",
    ]
    assert newest_first(_text(text))
    assert not newest_first(_text(text[:3]))  # the traceback alone is not enough


def test_oldest_first_reverses_lines() -> None:
    assert oldest_first(b"c\nb\na\n") == b"a\nb\nc\n"
    assert oldest_first(b"c\r\nb\r\na") == b"a\nb\r\nc\r\n"


def test_export_is_read_in_time_order_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "export.log"
    path.write_text(_viewer_export(FORWARD))
    report = ReadReport(path=str(path))
    lines = list(read_lines(str(path), report))
    assert [text for _, text, _ in lines] == FORWARD
    assert [no for no, _, _ in lines] == list(range(1, len(FORWARD) + 1))
    assert report.flagged == [(1, REORDER_NOTE)]
    # Evidence is re-read from the start (in time order), not by the file's byte offsets.
    assert line_ranges(str(path), [2]) is None


def test_stdin_export_is_read_in_time_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    stdin = io.TextIOWrapper(io.BytesIO(_viewer_export(FORWARD).encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert [text for _, text, _ in read_lines("-", ReadReport(path="-"))] == FORWARD


def test_a_large_export_is_read_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Too large to reorder means large enough to be split into byte ranges: read in file order.
    path = tmp_path / "export.log"
    export = _viewer_export(FORWARD)
    path.write_text(export)
    monkeypatch.setattr(sources, "REORDER_MAX_BYTES", len(export))
    monkeypatch.setattr(order, "REORDER_MAX_BYTES", len(export))
    report = ReadReport(path=str(path))
    assert [text for _, text, _ in read_lines(str(path), report)] == FORWARD[::-1]
    assert report.flagged == []


def _corpus_and_fixture_logs() -> dict[str, Path]:
    logs = {f"{split}/{p.name}": p for split in ("shared", "dev") for p in sorted(SPLITS[split].glob("*.log"))}
    return logs | {str(p.relative_to(ROOT)): p for p in sorted((ROOT / "fixtures").glob("rules/*/*.log"))}


def test_no_other_log_reads_newest_first() -> None:
    # The only newest-first input among the corpus and rule fixtures is the console export.
    logs = _corpus_and_fixture_logs()
    assert len(logs) > 300
    found = {key for key, p in logs.items() if newest_first(p.read_bytes()[: order.HEAD_BYTES])}
    assert found == {"dev/i-027.log"}


# Every 4th corpus case (shared + dev): the export shape of each must analyse like the log.
_SAMPLE = [key for i, key in enumerate(sorted(_every())) if i % 4 == 0]


@pytest.mark.parametrize("key", _SAMPLE)
def test_viewer_export_analyses_like_the_log(key: str, tmp_path: Path) -> None:
    case = _every()[key]
    lines = _log_lines(case)
    if _docker_wrapped(lines):
        pytest.skip("a docker-compose capture is the outermost wrapper")
    if sum(1 for line in lines if line.strip()) <= order._MIN_VOTES:
        # Three stamps going down are the least evidence of the order: fewer lines cannot tell.
        pytest.skip("too few lines to tell the order from")
    path = tmp_path / f"{case.name}.export.log"
    path.write_bytes(_viewer_export(lines).encode("utf-8", errors="surrogateescape"))
    base, got = _baseline(case.log), _summary(path)
    assert (got.root, got.fired, got.outcome) == (base.root, base.fired, base.outcome)
    assert abs(got.unrecognized - base.unrecognized) <= max(1, 0.02 * base.total)


def test_a_file_small_enough_to_reorder_is_never_split() -> None:
    # A reordered file read in byte ranges would give other line numbers than read whole.
    from logparse.io.ranges import SPLIT_MIN_BYTES
    from logparse.parsing.pipeline import PARALLEL_MIN_BYTES

    assert PARALLEL_MIN_BYTES >= order.REORDER_MAX_BYTES
    assert SPLIT_MIN_BYTES >= order.REORDER_MAX_BYTES
