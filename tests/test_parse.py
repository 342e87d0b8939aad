"""The pipeline for one file: accounting, and one process vs a byte-range split agree exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from logparse.engine.core import analyze_log
from logparse.io import reader as reader_mod
from logparse.parsing import pipeline as parse_mod
from logparse.parsing.pipeline import parse_file
from logparse.render.summary import file_summary
from tests.conftest import corpus_logs


def _summary(path: str, jobs: int) -> dict:  # type: ignore[type-arg]
    entry = file_summary(analyze_log(parse_file(path, jobs=jobs)))
    entry.pop("read")  # byte counters of the parts differ only in how they were summed
    return entry


def test_every_line_accounted_for_in_the_corpus() -> None:
    for path in corpus_logs():
        log = parse_file(str(path))
        cov = log.coverage
        assert cov.total == cov.recognized + cov.unparsed == log.report.lines, path.name
        assert cov.total >= len(path.read_bytes().splitlines()), path.name


def test_split_equals_single_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file built from every corpus excerpt, repeated: tracebacks, bench blocks, stats, wrappers.
    body = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in corpus_logs())
    big = tmp_path / "big.log"
    big.write_bytes(body * 6)
    monkeypatch.setattr(parse_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader_mod, "SPLIT_MIN_BYTES", 0)
    one = _summary(str(big), 1)
    two = _summary(str(big), 2)
    assert one["lines"]["total"] > 10_000 // 10
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_unparsed_templates_mask_numbers(tmp_path: Path) -> None:
    path = tmp_path / "noise.log"
    path.write_text(
        "[2026-03-07 15:31:10 TP0] gpu-exporter: node3 scrape ok gpus=8 duration_ms=12\n"
        "[2026-03-07 15:31:11 TP1] gpu-exporter: node4 scrape ok gpus=8 duration_ms=15\n"
        "xgrammar cache at /tmp/a/b/c.bin hit 0x7f3a 10.0.0.7:8080\n"
        "\n"
    )
    log = parse_file(str(path))
    top = log.coverage.top(50)
    assert [t["count"] for t in top] == [2, 1]
    assert top[0]["first_line"] == 1
    assert top[0]["template"] == "gpu-exporter: node<n> scrape ok gpus=<n> duration_ms=<n>"
    assert top[1]["template"] == "xgrammar cache at <path> hit <hex> <ip>"
    for t in top:
        assert not re.search(r"\d", re.sub(r"<\w+>", "", t["template"])), t
    assert log.coverage.recognized == 1  # the blank line


def test_fetch_lines_rereads_exactly_the_wanted_lines(tmp_path: Path) -> None:
    """Evidence for hot lines is re-read by byte range; it must equal a full read."""
    from logparse.io.reader import ReadReport, read_lines
    from logparse.parsing.pipeline import fetch_lines

    body = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in corpus_logs()[:20]) * 3
    path = tmp_path / "ev.log"
    path.write_bytes(body)
    log = parse_file(str(path))
    log.texts.clear()  # force the re-read for every line
    total = log.report.physical_lines
    wanted = [1, 2, 3, total // 2, total // 2 + 1, total - 1, total]
    full: dict[int, str] = {}
    for no, text, _ in read_lines(str(path), ReadReport(path=str(path))):
        if no in wanted:
            full[no] = text if no not in full else f"{full[no]} ⏎ {text}"
    got = fetch_lines(log, wanted)
    assert got.keys() == full.keys()
    for n in wanted:
        assert got[n] == full[n][:4096]
