"""Input hardening (issue 11, part 2): nothing lost, everything bounded, identical for every --jobs.

Damaged gzip members are read to the last recoverable byte; pipes, FIFOs and stdin are opened
once and read from their first byte; CR-only text is split, not cut; a directory means every
file; endless and exploding inputs stop with a clear error. Pipes, FIFOs and devices are tested
with real subprocesses, each bounded by a timeout.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.io import limits
from logparse.io import lines as reader_lines
from logparse.io import sources as reader_sources
from logparse.io.gunzip import gunzip_blocks
from logparse.io.reader import (
    InputError,
    Line,
    ReadReport,
    check_readable,
    expand_paths,
    read_lines,
    split_points,
)
from logparse.parsing import pipeline

ROOT = Path(__file__).resolve().parents[1]
CRASH_LOG = ROOT / "fixtures" / "logs" / "nextn-3-killed.log"  # crashed at start-up: check exits 1
TIMEOUT = 180  # generous: CI machines and this one are shared


def read_all(path: Path | str) -> tuple[list[Line], ReadReport]:
    rep = ReadReport(str(path))
    return list(read_lines(str(path), rep)), rep


def cli(*args: str, stdin: object = None, cwd: Path | None = None, env: dict[str, str] | None = None,
        shell: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run logdiag in a real process (or a bash command line that calls `$LOGDIAG`)."""
    full_env = {**os.environ, **(env or {}), "LOGDIAG": f"{sys.executable} -m logparse"}
    cmd: list[str] = ["bash", "-c", shell] if shell else [sys.executable, "-m", "logparse", *args]
    return subprocess.run(cmd, stdin=stdin, capture_output=True, text=True, cwd=cwd, env=full_env,  # type: ignore[call-overload]
                          timeout=TIMEOUT, check=False)


def json_lines(stdout: str) -> dict[str, int]:
    return json.loads(stdout)["files"][0]["lines"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------
# gzip: every recoverable byte, damage reported
# ------------------------------------------------------------------------------------------


def _damage_trailer(data: bytes, offset: int) -> bytes:
    b = bytearray(data)
    b[offset] ^= 0xFF
    return bytes(b)


@pytest.mark.parametrize(("offset", "what"), [(-8, "CRC"), (-1, "size")])
def test_bad_gzip_trailer_keeps_every_line(tmp_path: Path, offset: int, what: str) -> None:
    text = CRASH_LOG.read_bytes()
    p = tmp_path / "run.log.gz"
    p.write_bytes(_damage_trailer(gzip.compress(text), offset))
    check_readable(str(p))  # not "not a valid gzip file": the text is all there
    lines, rep = read_all(p)
    plain, _ = read_all(CRASH_LOG)
    assert lines == plain
    assert rep.damaged is not None and what in rep.damaged


def test_bad_gzip_trailer_of_a_multi_block_log(tmp_path: Path) -> None:
    # 64-256 KiB logs used to come out empty: the failing call's whole output block was lost.
    text = b"".join(b"[2026-03-07 15:31:%02d TP0] Load weight end. line %d\n" % (i % 60, i) for i in range(4000))
    assert 64 * 1024 < len(text) < 256 * 1024
    p = tmp_path / "mid.log.gz"
    p.write_bytes(_damage_trailer(gzip.compress(text), -8))
    lines, rep = read_all(p)
    assert len(lines) == 4000 and lines[-1][1].endswith("line 3999")
    assert rep.bytes_read == len(text)


def test_bad_gzip_trailer_check_still_fails_on_the_crash(tmp_path: Path) -> None:
    p = tmp_path / "crash.log.gz"
    p.write_bytes(_damage_trailer(gzip.compress(CRASH_LOG.read_bytes()), -8))
    r = cli("check", str(p))
    assert r.returncode == 1, r.stderr


def _recoverable_prefix(member: bytes) -> bytes:
    """Oracle: what raw inflate gives when fed one byte at a time until the damage."""
    d = zlib.decompressobj(-15)
    out = bytearray()
    for i in range(10, len(member)):
        try:
            out += d.decompress(member[i : i + 1])
        except zlib.error:
            break
        if d.eof:
            break
    return bytes(out)


def test_corrupt_deflate_is_salvaged_to_the_last_good_byte() -> None:
    import random
    import struct

    rng = random.Random(7)
    text = b"".join(b"[2026-03-07 15:31:10 TP%d] Decode batch, #running-req: %d, #token: %d\n"
                    % (rng.randrange(8), rng.randrange(64), rng.randrange(99999)) for _ in range(20000))
    half = len(text) // 2
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    good = c.compress(text[:half]) + c.flush(zlib.Z_FULL_FLUSH)  # a block boundary here
    rest = c.compress(text[half:]) + c.flush()
    # 0x07 starts a block of the reserved type 3: inflate must reject it, in the middle of a
    # read piece whose earlier output the old reader threw away with the exception.
    z = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + good + b"\x07" + rest
         + struct.pack("<II", zlib.crc32(text), len(text)))
    oracle = _recoverable_prefix(z)
    assert oracle == text[:half]
    rep = ReadReport("x")
    got = b"".join(gunzip_blocks(z, lambda n: b"", rep))
    assert got == oracle  # every byte the stream still yields, nothing invented
    assert rep.damaged is not None and "corrupt" in rep.damaged


def test_gzip_members_padding_and_garbage(tmp_path: Path) -> None:
    a, b = b"first line\n", b"second line\n"
    p = tmp_path / "cat.log.gz"
    p.write_bytes(gzip.compress(a) + gzip.compress(b) + b"\x00" * 512)
    lines, rep = read_all(p)
    assert [t for _, t, _ in lines] == ["first line", "second line"] and rep.damaged is None
    p.write_bytes(gzip.compress(a) + b"garbage after the stream")
    lines, rep = read_all(p)
    assert [t for _, t, _ in lines] == ["first line"]
    assert rep.damaged is not None and "trailing data" in rep.damaged


def test_gzip_bomb_stops_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "bomb.log.gz"
    p.write_bytes(gzip.compress(b"\n" * (2 << 20), 9))  # ~1000x
    monkeypatch.delenv(limits.MAX_RATIO_ENV, raising=False)
    with pytest.raises(InputError, match="expands more than 250x"):
        check_readable(str(p))
    with pytest.raises(InputError, match="LOGDIAG_MAX_GZIP_RATIO"):
        read_all(p)
    monkeypatch.setenv(limits.MAX_RATIO_ENV, "0")  # the documented escape hatch
    _lines, rep = read_all(p)
    assert rep.physical_lines == 2 << 20 and rep.damaged is None


def test_gzip_bomb_is_exit_2_quickly(tmp_path: Path) -> None:
    p = tmp_path / "bomb.log.gz"
    p.write_bytes(gzip.compress(b"[2026-01-01 00:00:00] x\n" + b"\n" * (48 << 20), 9))
    started = time.monotonic()
    r = cli("analyze", str(p))
    assert r.returncode == 2 and "expands more than" in r.stderr
    assert r.stderr.count("\n") == 1
    assert time.monotonic() - started < 30


# ------------------------------------------------------------------------------------------
# Pipes, FIFOs, stdin: opened once, read from the first byte, whatever --jobs is
# ------------------------------------------------------------------------------------------


def _expected_lines() -> dict[str, int]:
    return json_lines(cli("analyze", str(CRASH_LOG), "--format", "json", "--jobs", "1").stdout)


@pytest.mark.parametrize("jobs", ["1", "2", "3"])
def test_process_substitution_reads_from_the_first_byte(jobs: str) -> None:
    want = _expected_lines()
    r = cli(shell=f'$LOGDIAG analyze <(cat "{CRASH_LOG}") --format json --jobs {jobs}')
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout) == want


def test_fifo_with_a_live_writer_is_opened_once(tmp_path: Path) -> None:
    want = _expected_lines()
    fifo = tmp_path / "live.fifo"
    os.mkfifo(fifo)
    data = CRASH_LOG.read_bytes()
    for _ in range(4):
        # The writer blocks until logdiag opens the FIFO; a second open would find no writer.
        def write() -> None:
            with open(fifo, "wb") as f:
                for k in range(0, len(data), 4096):
                    f.write(data[k : k + 4096])
                    f.flush()
                    time.sleep(0.005)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        r = cli("analyze", str(fifo), "--format", "json", "--jobs", "2")
        writer.join(timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        assert json_lines(r.stdout) == want


def test_check_readable_does_not_open_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "idle.fifo"
    os.mkfifo(fifo)
    # Opening a FIFO without a writer blocks: a subprocess with a timeout proves it is not opened.
    code = f"from logparse.io.reader import check_readable; check_readable({str(fifo)!r}); print('ok')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_stdin_pipe_is_read_whole(jobs: str) -> None:
    want = _expected_lines()
    with open(CRASH_LOG, "rb") as f:
        r = cli(shell=f"cat | $LOGDIAG analyze - --format json --jobs {jobs}", stdin=f)
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout) == want


# ------------------------------------------------------------------------------------------
# Devices and endless inputs: refused or bounded, exit 2 with one line
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_character_devices_are_refused(device: str) -> None:
    r = cli("analyze", device)
    assert r.returncode == 2 and "device" in r.stderr and r.stderr.count("\n") == 1
    with pytest.raises(InputError, match="device"):
        check_readable(device)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_binary_stdin_is_refused_while_streaming(device: str) -> None:
    with open(device, "rb") as f:
        r = cli("analyze", "-", stdin=f)
    assert r.returncode == 2 and "not a text log" in r.stderr


def test_endless_text_stdin_stops_at_the_size_limit() -> None:
    r = cli(shell="yes '[2026-01-01 00:00:00] hello' | $LOGDIAG --max-input-size 2M analyze -")
    assert r.returncode == 2 and "larger than" in r.stderr and "--max-input-size" in r.stderr


def test_size_limit_applies_to_files_and_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = b"".join(b"[2026-01-01 00:00:%02d] line %d of a log\n" % (i % 60, i * 7919) for i in range(5000))
    plain = tmp_path / "a.log"
    plain.write_bytes(text)
    gz = tmp_path / "a.log.gz"
    gz.write_bytes(gzip.compress(text))
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "64K")
    with pytest.raises(InputError, match="larger than 65536 bytes"):
        check_readable(str(plain))
    with pytest.raises(InputError, match="larger than 65536 bytes"):
        read_all(gz)
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "0")  # no limit
    assert len(read_all(gz)[0]) == 5000


def test_parse_size() -> None:
    assert limits.parse_size("64M") == 64 << 20
    assert limits.parse_size("1.5G") == 3 << 29
    assert limits.parse_size("16GiB") == 16 << 30
    assert limits.parse_size("0") == 0
    for bad in ("", "x", "-1", "12Q", "1" * 40):
        with pytest.raises(ValueError):
            limits.parse_size(bad)


# ------------------------------------------------------------------------------------------
# CR-only text: split like any other, never cut
# ------------------------------------------------------------------------------------------


def test_cr_only_file_is_split_not_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    segs = [f"[2026-01-01 00:00:{i % 60:02d}] progress {i}" for i in range(30000)]
    p = tmp_path / "cr.log"
    p.write_bytes("\r".join(segs).encode())  # ~1 MiB with no '\n' at all: over the 256 Ki cap
    lines, rep = read_all(p)
    assert [t for _, t, _ in lines] == segs
    assert rep.long_lines == 0 and rep.cr_segments == len(segs) - 1
    assert rep.physical_lines == 1 and rep.lines == len(segs)


def test_cr_segment_over_the_cap_is_cut_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_lines, "MAX_LINE_CHARS", 10)
    monkeypatch.setattr(reader_sources, "BLOCK_SIZE", 7)
    p = tmp_path / "cr.log"
    p.write_bytes(b"short\r" + b"y" * 100 + b"\rtail\r" + b"z" * 50 + b"\n" + b"next\n")
    lines, rep = read_all(p)
    assert [(n, t) for n, t, _ in lines] == [(1, "short"), (1, "y" * 10), (1, "tail"), (1, "z" * 10), (2, "next")]
    assert rep.long_lines == 1 and rep.physical_lines == 2


_crlf_bytes = st.lists(
    st.sampled_from([b"a", b"bb", b"\r", b"\n", b"\r\n", b"\x00", b"\xff", b"\xe2\x82\xac", b"x" * 30,
                     b"\x1b[0m", b"web  | ", b"(pid=12) ", b"<00:01, 1.2it/s][2026-01-01 00:00:00] x"]),
    max_size=60,
).map(b"".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_crlf_bytes, cap=st.sampled_from([4, 16, 64]))
def test_property_cr_results_do_not_depend_on_blocks(tmp_path: Path, data: bytes, cap: int) -> None:
    p = tmp_path / "blocks.log"
    p.write_bytes(data)
    seen: list[tuple[list[Line], dict[str, object]]] = []
    for block in (1, 3, 64, 1 << 20):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(reader_lines, "MAX_LINE_CHARS", cap)
            mp.setattr(reader_sources, "BLOCK_SIZE", block)
            lines, rep = read_all(p)
        seen.append((lines, rep.as_dict()))
        assert all(len(t) <= cap for _, t, _ in lines)
    assert all(s == seen[0] for s in seen[1:])


# ------------------------------------------------------------------------------------------
# Directories: every file or fail; --jobs never changes a result
# ------------------------------------------------------------------------------------------


def test_events_of_a_directory_exports_every_file(tmp_path: Path) -> None:
    logs = ROOT / "fixtures" / "logs"
    per_file = 0
    for f in sorted(logs.glob("*.log")):
        r = cli("events", str(f), "--kind", "decode_batch", "--format", "jsonl")
        assert r.returncode == 0, r.stderr
        per_file += len(r.stdout.splitlines())
    r = cli("events", str(logs), "--kind", "decode_batch", "--format", "jsonl")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert per_file > 0 and len(rows) == per_file
    assert len({row["source"] for row in rows}) > 1


def test_directory_walk_error_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.log").write_text("x\n")

    def walk(top: str, onerror: object = None) -> object:
        assert callable(onerror)
        onerror(PermissionError(13, "Permission denied", str(tmp_path / "sub")))
        yield str(tmp_path), [], ["a.log"]

    monkeypatch.setattr(os, "walk", walk)
    with pytest.raises(InputError, match="sub: Permission denied"):
        expand_paths([str(tmp_path)])


def _flagged_log(path: Path) -> None:
    good = b"[2026-03-07 15:31:10 TP0] Decode batch, #running-req: 1, #token: 227, token usage: 0.00, \n"
    bad = b"[2026-03-07 15:31:10 TP1] Load weight\x00 end.\n"
    path.write_bytes((good * 20 + bad) * 300)  # 300 flagged lines spread over the file


def test_flagged_is_bounded_and_identical_for_every_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "nul.log"
    _flagged_log(p)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    assert len(split_points(str(p), 3, 0)) == 3
    reports = []
    for jobs in (1, 2, 3):
        log = pipeline.parse_file(str(p), jobs=jobs)
        reports.append(log.report.as_dict())
    assert len(reports[0]["flagged"]) == 200  # type: ignore[arg-type]
    assert reports[0]["nul_bytes"] == 300
    assert reports[1] == reports[0] and reports[2] == reports[0]


def test_analysis_identical_for_jobs_1_2_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.engine.core import analyze
    from logparse.render.json import render

    p = tmp_path / "run.log"
    p.write_bytes(CRASH_LOG.read_bytes() * 3)  # several launches and crashes: records across cuts
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    assert len(split_points(str(p), 3, 0)) == 3  # really split, in three processes
    outs = [render([analyze(str(p), jobs=jobs)]) for jobs in (1, 2, 3)]
    assert outs[1] == outs[0] and outs[2] == outs[0]


def test_blank_lines_keep_no_text(tmp_path: Path) -> None:
    p = tmp_path / "blank.log"
    p.write_bytes(b"[2026-01-01 00:00:00] start\n" + b"\n" * 50000)
    log = pipeline.parse_file(str(p))
    assert log.coverage.total == 50001
    assert len(log.texts) == 1  # a gzip bomb of empty lines once held a dict entry per line
