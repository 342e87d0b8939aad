"""The --jobs split (parsing/split.py): this process parses the first byte range itself, the
workers the others; the cuts are line starts found without reading the file up to them, and each
worker numbers its lines from the newlines it counts itself."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from logparse.io.ranges import split_points
from logparse.parsing import pipeline, split


def _log(path: Path, lines: int) -> None:
    with path.open("w") as fh:
        for i in range(lines):
            if i % 7 == 3:
                fh.write(f"[2026-04-14 09:15:{i % 60:02d} TP{i % 4}] Load weight begin. avail mem={i % 80}.5 GB\n")
            else:
                fh.write(f"[2026-04-14 09:15:{i % 60:02d} TP{i % 4}] Decode batch, #running-req: {i % 9}, "
                         f"#token: {i}, token usage: 0.{i % 10}, gen throughput (token/s): 1.{i % 10}, #queue-req: 0\n")


@pytest.mark.parametrize("jobs", [2, 3, 4])
def test_ranges_are_line_aligned_cover_the_file_and_the_first_is_smaller(tmp_path: Path, jobs: int) -> None:
    path = tmp_path / "a.log"
    _log(path, 3000)
    data = path.read_bytes()
    ranges = split.plan(str(path), jobs, 1)
    assert len(ranges) == jobs
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    for (_s, e), (s2, _e2) in zip(ranges, ranges[1:], strict=False):
        assert e == s2 and data[s2 - 1 : s2] == b"\n"
    sizes = [e - s for s, e in ranges]
    assert sizes[0] < min(sizes[1:])  # this process also runs stage 2 on the way
    # A worker's first line number is the one the whole-file count gives that line.
    for s, _e in ranges[1:]:
        assert split.first_line_no(str(path), s) == data[:s].count(b"\n") + 1
    # The same numbering as split_points' for its own cuts.
    for s, _e, no in split_points(str(path), jobs, 1)[1:]:
        assert split.first_line_no(str(path), s) == no


def test_what_is_not_split(tmp_path: Path) -> None:
    small = tmp_path / "small.log"
    _log(small, 50)
    assert split.plan(str(small), 2, 1 << 20) == []  # below the floor
    assert split.plan(str(small), 1, 1) == []
    assert split.plan("-", 2, 1) == []
    gz = tmp_path / "a.log.gz"
    gz.write_bytes(gzip.compress(small.read_bytes()))
    assert split.plan(str(gz), 2, 1) == []
    one = tmp_path / "one.log"
    one.write_text("x" * 100_000 + "\n")  # one line across every cut: one range
    assert split.plan(str(one), 3, 1) == [(0, 100_001)]


def test_this_process_parses_the_first_range_and_one_part_comes_back(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """jobs=2: one worker part is pickled back and merged (the old pool parsed both ranges in
    workers and sent both back), and the result is the one-process result."""
    path = tmp_path / "a.log"
    _log(path, 6000)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1)
    merged: list[bool] = []
    real = pipeline._merge_part

    def spy(log: Any, part: Any, *, report: bool = True) -> None:
        merged.append(report)
        real(log, part, report=report)

    monkeypatch.setattr(pipeline, "_merge_part", spy)
    split_log = pipeline.parse_file(str(path), jobs=2)
    assert merged == [False, True]  # this process's own part, then the worker's
    merged.clear()
    one = pipeline.parse_file(str(path), jobs=1)
    assert merged == [False]
    for kind in ("decode", "prefill", "access"):
        a, b = getattr(split_log, kind), getattr(one, kind)
        assert list(a.line) == list(b.line) and list(a.ts) == list(b.ts)
    assert [(type(e).__name__, e.line) for e in split_log.events] == [(type(e).__name__, e.line) for e in one.events]
    assert split_log.coverage.total == one.coverage.total == 6000


def test_worker_lines_arrive_in_chunks_before_its_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker sends its kept lines as it parses them (stage 2 runs on them here meanwhile),
    its columns last; the result is still the one-process result."""
    path = tmp_path / "a.log"
    _log(path, 6000)  # one kept line in 7: ~430 in the worker's range
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(split, "CHUNK_LINES", 50)  # the worker is forked: it sees this too
    kinds: list[str] = []
    real = split.Worker.messages

    def spy(self: split.Worker) -> Any:
        for kind, payload in real(self):
            kinds.append(kind)
            yield kind, payload

    monkeypatch.setattr(split.Worker, "messages", spy)
    got = pipeline.parse_file(str(path), jobs=2)
    assert kinds[-1] == "part" and kinds.count("part") == 1 and kinds.count("rest") >= 5
    one = pipeline.parse_file(str(path), jobs=1)
    assert [(type(e).__name__, e.line) for e in got.events] == [(type(e).__name__, e.line) for e in one.events]


def test_a_worker_failure_is_raised_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.log"
    _log(path, 3000)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1)

    def broken(*_args: Any, **_kw: Any) -> Any:
        raise ValueError("stage 1 broke in the worker")

    monkeypatch.setattr(pipeline, "_stream_range", lambda queue, *a: split.report(queue, broken))
    with pytest.raises(ValueError, match="broke in the worker"):
        pipeline.parse_file(str(path), jobs=2)


def test_a_worker_that_dies_is_an_error_not_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    path = tmp_path / "a.log"
    _log(path, 3000)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(pipeline, "_stream_range", lambda *_a: os._exit(3))
    with pytest.raises(RuntimeError, match="exit code 3"):
        pipeline.parse_file(str(path), jobs=2)


def test_the_worker_classifies_its_unparsed_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an unparsed message is (classifier, template) is computed by the process that parsed
    the line: this process computes none of the worker's, and the coverage is the one-process one."""
    from logparse.parsing import coverage

    path = tmp_path / "a.log"
    path.write_text("".join(f"some text no program prints, number {i}\n" for i in range(4000))
                    + "".join(f"another unknown sentence of the second half {i}\n" for i in range(4000)))
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1)
    seen: list[str] = []
    real = coverage.line_hit

    def spy(text: str) -> Any:
        seen.append(text)
        return real(text)

    # (the worker, forked inside parse_file, inherits the spy, but its calls land in its own copy
    # of `seen`: this list holds this process's calls only)
    monkeypatch.setattr(pipeline, "line_hit", spy)
    monkeypatch.setattr(coverage, "line_hit", spy)
    split_log = pipeline.parse_file(str(path), jobs=2)
    assert seen and not any(t.startswith("another unknown") for t in seen)
    one = pipeline.parse_file(str(path), jobs=1)
    for attr in ("recognized", "unparsed", "total"):
        assert getattr(split_log.coverage, attr) == getattr(one.coverage, attr)
    assert split_log.coverage.templates == one.coverage.templates


def test_this_process_takes_less_of_a_log_it_will_run_much_stage_2_for(tmp_path: Path) -> None:
    """The first range shrinks with the share of lines that are not stats or access lines (stage 2
    of every range runs here); a log of nothing but stats lines is shared evenly."""
    hot, cold = tmp_path / "hot.log", tmp_path / "cold.log"
    stats = ("[2026-04-14 09:15:00 TP0] Decode batch, #running-req: 4, #token: 9, token usage: 0.1, "
             "gen throughput (token/s): 1.0, #queue-req: 0\n")
    hot.write_text(stats * 4000)
    cold.write_text("".join(f"a line no program prints, number {i:06d} of the test log here\n" for i in range(4000)))
    for path in (hot, cold):
        sizes = [e - s for s, e in split.plan(str(path), 2, 1)]
        assert len(sizes) == 2
        if path is hot:
            assert abs(sizes[0] - sizes[1]) <= len(stats)  # even
        else:
            assert sizes[0] < 0.6 * sizes[1]  # this process keeps its time for the stage 2 of both
    assert split.main_share(0.0, 2) == 1.0
    assert split.main_share(0.5, 2) < split.main_share(0.2, 2) < 1.0
    assert split.main_share(1.0, 4) > 0  # always some bytes of its own
