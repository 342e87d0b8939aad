"""Time windows (--since / --until): reading bounds, the log as the clock, every line accounted
for, the same answer for every --jobs, and one-line errors (exit 2) on every command."""

from __future__ import annotations

import json
import re
from datetime import datetime, time
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.engine.core import analyze_log
from logparse.io import reader as reader_mod
from logparse.model.window import TimeWindow, WindowError, parse_bound, window_of
from logparse.parsing import pipeline as parse_mod
from logparse.parsing.pipeline import parse_file
from logparse.render.summary import file_summary
from tests.conftest import FIXTURES

SERVING = FIXTURES / "logs" / "nextn-4-serving.log"
UNTIMED = FIXTURES / "logs" / "nextn-1-topk.log"  # a traceback excerpt: no timestamp at all
LAST = datetime(2026, 4, 14, 10, 41, 37)  # SERVING's last timestamp
_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")


def run(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), input=input)


# ----------------------------------------------------------------------------- reading bounds


@pytest.mark.parametrize(("text", "seconds"), [
    ("2h", 7200), ("30m", 1800), ("1d", 86400), ("45s", 45), ("1h30m", 5400), ("1.5h", 5400), ("1w", 604800),
])
def test_relative_bounds_count_back_from_the_logs_last_timestamp(text: str, seconds: float) -> None:
    bound = parse_bound(text)
    assert (bound.kind, bound.seconds) == ("relative", seconds)
    assert (LAST - bound.resolve(LAST)).total_seconds() == seconds


@pytest.mark.parametrize(("text", "moment"), [
    ("2025-01-01 12:00:00", datetime(2025, 1, 1, 12)),
    ("[2025-01-01 12:00:00]", datetime(2025, 1, 1, 12)),  # pasted from an SGLang line
    ("2025-01-01T12:00", datetime(2025, 1, 1, 12)),
    ("2025-01-01 12:00:00,250", datetime(2025, 1, 1, 12, 0, 0, 250000)),
    ("2025-01-01", datetime(2025, 1, 1)),
    ("2025-01-01T12:00:00Z", datetime(2025, 1, 1, 12)),
    ("2025-01-01T14:00:00+02:00", datetime(2025, 1, 1, 12)),  # converted to UTC, the logs' clock
])
def test_absolute_bounds(text: str, moment: datetime) -> None:
    bound = parse_bound(text)
    assert (bound.kind, bound.moment) == ("absolute", moment)
    assert bound.resolve(LAST) == moment


def test_a_time_of_day_is_the_latest_such_moment_at_or_before_the_logs_end() -> None:
    assert parse_bound("12:00").clock == time(12)
    assert parse_bound("[10:40:00]").resolve(LAST) == datetime(2026, 4, 14, 10, 40)
    # Later in the day than the log's end: the day before (a log that ran past midnight).
    assert parse_bound("23:30").resolve(LAST) == datetime(2026, 4, 13, 23, 30)
    assert parse_bound("10:41:37").resolve(LAST) == LAST


@pytest.mark.parametrize("text", ["", "soon", "2 h", "-2h", "12:00:00+02:00", "2025-13-01", "h", "25:00"])
def test_unreadable_bounds_name_the_option(text: str) -> None:
    with pytest.raises(WindowError, match=r"^--until: "):
        parse_bound(text, "--until")


def test_since_after_until_is_an_error_before_any_log_when_it_can_be_told() -> None:
    with pytest.raises(WindowError, match="--since 1h is after --until 2h"):
        window_of("1h", "2h")
    with pytest.raises(WindowError, match="is after"):
        window_of("2025-01-02", "2025-01-01")
    assert window_of(None, None) is None
    assert window_of("2h", "1h") == TimeWindow(parse_bound("2h"), parse_bound("1h"))
    # A time of day and a relative bound: only the log can tell.
    window = window_of("10:41", "5m")
    assert window is not None
    with pytest.raises(WindowError, match="is after"):
        window.resolve(LAST)


# ----------------------------------------------------------------------------- one log


def _oracle_decode_times(lo: datetime | None, hi: datetime | None) -> list[datetime]:
    """The timestamps of the decode lines inside, read straight from the file (line numbers
    differ: the reader numbers `\r`-joined segments as lines of their own)."""
    out = []
    for segment in re.split(r"[\r\n]+", SERVING.read_text()):
        m = _TS.match(segment)
        if m and "Decode batch" in segment:
            ts = datetime.fromisoformat(m.group(1))
            if (lo is None or ts >= lo) and (hi is None or ts <= hi):
                out.append(ts)
    return out


def _times(epochs: object) -> list[datetime]:
    from logparse.parsing.columns import from_epoch

    return [t for t in (from_epoch(e) for e in epochs) if t is not None]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("since", "until", "lo", "hi"), [
    ("5m", None, datetime(2026, 4, 14, 10, 36, 37), None),
    (None, "1m", None, datetime(2026, 4, 14, 10, 40, 37)),
    ("10:40:00", "2026-04-14 10:41:00", datetime(2026, 4, 14, 10, 40), datetime(2026, 4, 14, 10, 41)),
])
def test_hot_lines_are_kept_by_their_timestamp(since: str | None, until: str | None, lo: datetime | None,
                                               hi: datetime | None) -> None:
    log = parse_file(str(SERVING), window=window_of(since, until))
    assert _times(log.decode.ts) == _oracle_decode_times(lo, hi)
    cov = log.coverage
    assert cov.recognized + cov.unparsed + cov.outside_window == cov.total == log.report.lines
    assert cov.outside_window > 0
    whole = parse_file(str(SERVING)).coverage
    assert cov.total == whole.total


def test_untimestamped_lines_belong_to_the_timestamped_line_before_them(tmp_path: Path) -> None:
    path = tmp_path / "tb.log"
    path.write_text(
        "python -m sglang.launch_server --model-path m\n"  # before any timestamp: with the first
        "[2025-01-01 12:00:00 TP0] Load weight begin. avail mem=10.00 GB\n"
        "[2025-01-01 12:10:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/x/scheduler.py", line 1, in run\n'
        "    foo()\n"
        "RuntimeError: boom\n"
        "[2025-01-01 12:20:00 TP0] gpu-exporter: scrape ok\n"
    )
    late = parse_file(str(path), window=window_of("12:05", None))
    assert late.coverage.outside_window == 2  # the command and the weight-load line
    [tb] = [e for e in late.events if e.kind == "traceback"]
    assert (tb.line, tb.end_line, tb.exc_type) == (3, 6, "RuntimeError")
    early = parse_file(str(path), window=window_of(None, "12:05"))
    assert early.coverage.outside_window == 5  # the traceback's body goes with its first line
    assert not [e for e in early.events if e.kind == "traceback"]
    assert {e.line for e in early.events} <= {1, 2}
    for log in (late, early):
        cov = log.coverage
        assert cov.recognized + cov.unparsed + cov.outside_window == cov.total == 7


def test_a_window_gives_the_same_result_for_every_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serving = SERVING.read_bytes()
    body = serving + (FIXTURES / "logs" / "spec-serving-healthy.log").read_bytes() + serving
    big = tmp_path / "big.log"
    big.write_bytes(body * 3)
    monkeypatch.setattr(parse_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(reader_mod, "SPLIT_MIN_BYTES", 0)
    window = window_of("2026-04-14 10:38:00", "3m")

    def summary(jobs: int) -> str:
        entry = file_summary(analyze_log(parse_file(str(big), jobs=jobs, window=window)))
        entry.pop("read")  # byte counters of the parts differ only in how they were summed
        return json.dumps(entry, sort_keys=True, default=str)

    one, two = summary(1), summary(2)
    assert one == two
    lines = json.loads(one)["lines"]
    assert lines["outside_window"] > 0 and lines["recognized"] > 0
    assert lines["recognized"] + lines["unparsed"] + lines["outside_window"] == lines["total"]


# ----------------------------------------------------------------------------- the commands


def test_analyze_json_and_text_count_the_lines_outside() -> None:
    r = run("analyze", str(SERVING), "--since", "2m", "--format", "json")
    assert r.exit_code == 0, r.output
    entry = json.loads(r.stdout)["files"][0]
    lines, cov = entry["lines"], entry["coverage"]
    assert lines["outside_window"] == cov["outside_window"] > 0
    assert lines["recognized"] + lines["unparsed"] + lines["outside_window"] == lines["total"]
    assert cov["window"] == {"since": "2m", "until": None, "from": "2026-04-14 10:39:37", "to": None}
    text = run("analyze", str(SERVING), "--since", "2m", "--wide").stdout
    assert f"{cov['outside_window']:,} of {lines['total']:,} lines outside it (--since 2m = 2026-04-14 10:39:37)" in text
    # Without a window the JSON is as before: no window keys.
    plain = json.loads(run("analyze", str(SERVING), "--format", "json").stdout)["files"][0]
    assert "outside_window" not in plain["lines"] and "window" not in plain["coverage"]


def test_a_window_changes_the_answer_as_it_should() -> None:
    """Start-up only (the first minute) is a log cut during start-up; the last minute is serving."""
    first = json.loads(run("analyze", str(SERVING), "--until", "10:32", "--format", "json").stdout)
    last = json.loads(run("analyze", str(SERVING), "--since", "1m", "--format", "json").stdout)
    assert last["files"][0]["outcome"] == "serving"
    assert first["files"][0]["outcome"] != "serving"


def test_events_check_and_report_take_the_window(tmp_path: Path) -> None:
    r = run("events", str(SERVING), "--kind", "decode_batch", "--format", "jsonl", "--since", "5m")
    assert r.exit_code == 0, r.output
    assert [datetime.fromisoformat(json.loads(x)["ts"]) for x in r.stdout.splitlines()] == \
        _oracle_decode_times(datetime(2026, 4, 14, 10, 36, 37), None)
    r = run("check", str(SERVING), "--since", "1m", "--format", "json", "--fail-on", "never")
    assert r.exit_code == 0, r.output
    whole = run("check", str(SERVING), "--format", "json", "--fail-on", "never")
    assert len(json.loads(r.stdout)["findings"]) < len(json.loads(whole.stdout)["findings"])
    r = run("report", str(SERVING), "-o", "-", "--format", "json", "--until", "30m")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["coverage"]["window"]["to"] == "2026-04-14 10:11:37"


@pytest.mark.parametrize("command", [
    ["analyze"], ["check"], ["events", "--kind", "decode_batch"], ["report", "-o", "-", "--format", "json"],
])
@pytest.mark.parametrize(("args", "message"), [
    (["--since", "yesterday"], "logdiag: --since: cannot read 'yesterday' as a time"),
    (["--since", "1h", "--until", "2h"], "logdiag: --since 1h is after --until 2h\n"),
    (["--since", "10:41", "--until", "5m"], "is after --until 5m (2026-04-14 10:36:37)\n"),
])
def test_bad_windows_are_one_line_exit_2(command: list[str], args: list[str], message: str) -> None:
    r = run(*command, str(SERVING), *args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert message in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_a_log_without_timestamps_cannot_take_a_window() -> None:
    r = run("analyze", str(UNTIMED), "--since", "1h")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"logdiag: {UNTIMED} has no timestamped line: --since/--until cannot apply\n"


def test_stdin_takes_a_window() -> None:
    r = run("analyze", "-", "--since", "2m", "--format", "json", input=SERVING.read_text())
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["files"][0]["lines"]["outside_window"] > 0


def test_a_window_with_no_line_in_it_is_an_answer_not_an_error() -> None:
    r = run("analyze", str(SERVING), "--since", "2027-01-01", "--format", "json")
    assert r.exit_code == 0, r.output
    entry = json.loads(r.stdout)["files"][0]
    assert entry["lines"] == {"total": 1433, "recognized": 0, "unparsed": 0, "outside_window": 1433}
    # Nothing from outside the window leaks into the facts (the ranks of dropped stats lines).
    assert "ranks_seen" not in entry["facts"] and entry["outcome"] is None


def test_logs_without_a_year_or_a_date_compare_on_what_they_print() -> None:
    time_only = datetime(1900, 1, 1, 10, 41, 37)  # how the parser dates an 'HH:MM:SS' log
    assert parse_bound("2025-03-07 10:00:00").resolve(time_only) == datetime(1900, 1, 1, 10)
    no_year = datetime(1900, 3, 7, 10, 41, 37)  # an 'MM-DD HH:MM:SS' log
    assert parse_bound("2025-03-07 10:00:00").resolve(no_year) == datetime(1900, 3, 7, 10)
    assert parse_bound("2025-03-07 10:00:00").resolve(LAST) == datetime(2025, 3, 7, 10)


def test_a_time_only_log_takes_a_window(tmp_path: Path) -> None:
    path = tmp_path / "old.log"
    path.write_text("".join(f"[10:{m:02d}:00 TP0] Load weight begin. avail mem=10.00 GB\n" for m in range(10)))
    log = parse_file(str(path), window=window_of("5m", None))
    assert (log.coverage.recognized, log.coverage.outside_window) == (6, 4)  # 10:04 … 10:09


def test_the_check_summary_names_the_window() -> None:
    r = run("check", str(SERVING), "--since", "1m", "--until", "10s")
    assert r.exit_code == 0, r.output
    assert r.stderr.rstrip("\n").endswith("(config: none) (window: --since 1m, --until 10s)")
