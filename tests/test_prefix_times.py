"""The hot lines' SGLang prefix -> (epoch, rank) by its parts (`parsing.prefix_times`): the same
float64, bit for bit, and the same rank as the general path (envelope callback, then
`TimeCache.epoch`), and the envelope is read once per rank tail, not once per second."""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from logparse.grammar.transform.envelope import EnvelopeCallbacks
from logparse.parsing import columns, pipeline, prefix_times

_CALLBACKS = EnvelopeCallbacks()
_TAILS = (" DP0 TP3] ", " TP0] ", "] ", " TP5 EP5] INFO scheduler.py:12: ", " ATTN_CP3 TP1] ",
          " DP1 TP1 Mode.DECODE] ", " encode_server] ")


def _envelope(prefix: str, text: str) -> Any:
    return _CALLBACKS.sglang_prefix([text])


def _bits(hit: tuple[float | None, str | None]) -> tuple[bytes | None, str | None]:
    ts, rank = hit
    return (None if ts is None else struct.pack("<d", ts), rank)


def _compare(texts: list[str]) -> None:
    general = prefix_times.general_resolver(prefix_times.PLAIN_PREFIX, _envelope, pipeline.TimeCache().epoch)
    split = prefix_times.split_resolver(prefix_times.PLAIN_PREFIX, _envelope, pipeline.TimeCache().epoch)
    for text in texts:
        assert _bits(split(text)) == _bits(general(text)), text


def _day(start: datetime) -> list[datetime]:
    return [start + timedelta(seconds=s) for s in range(86_400)]


def test_every_second_of_dst_and_leap_days_is_bit_identical() -> None:
    # The stamps are naive and read as UTC; the days of European / US clock changes, a leap day
    # and a year's turn, every second, plain and with milliseconds ('.' and ',').
    days = [datetime(2025, 3, 30), datetime(2025, 10, 26), datetime(2025, 3, 9), datetime(2025, 11, 2),
            datetime(2024, 2, 29), datetime(2024, 12, 31)]
    for d, start in enumerate(days):
        tail = _TAILS[d % len(_TAILS)]
        texts = []
        for i, t in enumerate(_day(start)):
            stamp = t.strftime("%Y-%m-%d %H:%M:%S")
            texts.append(f"[{stamp}{tail}")
            if i % 3 == 0:
                texts.append(f"[{stamp}{'.,'[i % 2]}{i * 7 % 1000:03d}{_TAILS[i % len(_TAILS)]}")
        _compare(texts)


def test_far_dates_and_unreal_stamps_match_the_general_path() -> None:
    # Far years, the epoch's own day, a date that does not exist (NaN), seconds past 59 (the
    # arithmetic adds them as printed), and non-ASCII digits the regex's \d lets through.
    texts = [f"[{y:04d}-01-01 00:00:{s:02d} TP0] " for y in (1, 1969, 1970, 2038, 9999) for s in (0, 1, 59)]
    texts += ["[2025-02-30 12:00:00 TP0] ", "[2025-02-30 12:00:01.500 TP0] ", "[2025-06-18 12:34:60 TP0] ",
              "[2025-06-18 12:34:99 DP0 TP3] ", "[2025-06-18 12:34:\u0665\u0666 TP0] ",
              "[2025-06-18 12:34:56.999 TP0] ", "[2025-06-18 23:59:59,001] "]
    _compare(texts)
    epoch = datetime(2025, 6, 18, 12, 34, 56, tzinfo=UTC).timestamp()
    split = prefix_times.split_resolver(prefix_times.PLAIN_PREFIX, _envelope, pipeline.TimeCache().epoch)
    assert split("[2025-06-18 12:34:56 DP0 TP3] ") == (epoch, "DP0 TP3")


def test_envelope_read_once_per_rank_tail() -> None:
    # Ten minutes of lines on two ranks: 1,200 distinct prefixes, two rank tails, ten minutes.
    calls: list[str] = []

    def envelope(prefix: str, text: str) -> Any:
        calls.append(text)
        return _envelope(prefix, text)

    epochs: list[str | None] = []
    times = pipeline.TimeCache()

    def epoch(text: str | None) -> float:
        epochs.append(text)
        return times.epoch(text)

    rows = columns.HotRows(columns.decode_columns(), columns.prefill_columns(), columns.AccessColumns(), epoch)
    cache, resolve = rows._resolver(prefix_times.PLAIN_PREFIX, envelope)
    start = datetime(2026, 4, 14, 10, 0, 0)
    for s in range(600):
        stamp = (start + timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S")
        for tail in (" DP0 TP0] ", " DP0 TP1] "):
            text = f"[{stamp}{tail}"
            assert cache.get(text) is None
            assert _bits(resolve(text)) == _bits((times.epoch(stamp), tail[1:-2]))
            assert cache[text] == resolve(text)
    assert len(calls) == 2
    assert len(epochs) == 10
