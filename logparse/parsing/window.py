"""Apply a time window (`model/window.py`) to one parsed log, between stage 1 and stage 2.

Every line gets a time: its own timestamp, else that of the nearest timestamped line before it
(a traceback body belongs to the line that started it), else — before the first timestamp, such
as a pasted launch command — the first timestamp. Lines outside the window are not parsed into
events; they are counted (`Coverage.outside_window`), so recognized + unparsed + outside_window
is every line. The decision reads only the stage-1 output (kept lines in file order, hot columns
in file order), which a byte-range split produces identically, so the result does not depend on
`--jobs`.

Before comparing, a line that prints no year (vLLM's `INFO 03-07 …`, torch's `[E307 …]`) in a log
whose other lines do takes the year of the dated line before it, a time-only log that crosses
midnight gets a day added after each midnight, and an untimestamped traceback body takes the time
of the line that opened it (another rank's line interleaved in the body does not cut it).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from logparse.io.reader import InputError
from logparse.model.events import (
    ExceptionChain,
    ExceptionHeader,
    ExceptionLine,
    ProcessHeader,
    TracebackFrame,
    TracebackSource,
    TracebackStart,
    Unparsed,
)
from logparse.model.window import TimeWindow, WindowError
from logparse.parsing.columns import AccessColumns, BaseColumn, Interner, StatsColumns, epoch, from_epoch

_NO_YEAR = 1900  # how the parser dates a log that prints no year (model/window.py)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from logparse.parsing.pipeline import ParsedLog, Rest, TimeCache

__all__ = ["Windowed", "apply_window", "last_moment"]


@dataclass
class Windowed:
    """What stays inside the window, and how many lines did not."""

    rest: list[Any]
    decode: StatsColumns
    prefill: StatsColumns
    access: AccessColumns
    outside: int
    since: str | None  # the resolved bounds, as the log prints times
    until: str | None


def _ts_text(item: Rest) -> str | None:
    # The same choice as the pipeline: the envelope's timestamp, else the wrapper's.
    env, wrapper = item[3], item[2]
    if env is not None and env.ts is not None:
        return str(env.ts)
    if wrapper is not None and getattr(wrapper, "ts", None):
        return str(wrapper.ts)
    return None


def _np_of(values: array[Any] | BaseColumn, dtype: str) -> npt.NDArray[Any]:
    import numpy as np

    if isinstance(values, BaseColumn):
        return values.numpy()
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


def _array(code: str, values: npt.NDArray[Any]) -> array[Any]:
    out = array(code)
    out.frombytes(values.tobytes())
    return out


def _ranks(cols: StatsColumns | AccessColumns, idx: npt.NDArray[np.int64]) -> tuple[Interner, array[int]]:
    """The kept rows' rank codes in a new interner: its values are what the run model reads as
    "ranks seen", so a rank printed only outside the window must not be in it. Codes follow the
    first appearance, as one process would give them (the same for every --jobs)."""
    import numpy as np

    old = _np_of(cols.rank, "int32")[idx]
    ranks = Interner()
    remap = np.zeros(len(cols.ranks.values), dtype="int32")
    if len(old):
        codes, first = np.unique(old, return_index=True)
        for code in codes[np.argsort(first, kind="stable")]:
            remap[code] = ranks.code(cols.ranks.values[code])
    return ranks, _array("i", remap[old])


def _select_stats(cols: StatsColumns, keep: npt.NDArray[np.bool_]) -> StatsColumns:
    import numpy as np

    if keep.all():
        return cols
    idx = np.nonzero(keep)[0]
    out = StatsColumns(cols.event_cls, cols.fields)
    out.ranks, ranks = _ranks(cols, idx)
    out.rank.extend(ranks)
    out.line.extend(_array("q", _np_of(cols.line, "int64")[idx]))
    out.ts.extend(_array("d", _np_of(cols.ts, "float64")[idx]))
    for name in cols.fields:
        out._cols[name].extend(_array("d", _np_of(cols.column(name), "float64")[idx]))
    new_row = np.full(len(keep), -1, dtype="int64")
    new_row[idx] = np.arange(len(idx), dtype="int64")
    for name, (rows, values) in cols.extra.items():
        r = _np_of(rows, "int64")
        inside = keep[r]
        if inside.any():
            out.extra[name] = (_array("q", new_row[r[inside]]),
                               _array("d", _np_of(values, "float64")[inside]))
    return out


def _select_access(cols: AccessColumns, keep: npt.NDArray[np.bool_]) -> AccessColumns:
    import numpy as np

    if keep.all():
        return cols
    idx = np.nonzero(keep)[0]
    out = AccessColumns()
    out.ranks, ranks = _ranks(cols, idx)
    out.rank.extend(ranks)
    out.strings = cols.strings  # decoded per row only: sharing it changes no answer
    out.line.extend(_array("q", _np_of(cols.line, "int64")[idx]))
    out.ts.extend(_array("d", _np_of(cols.ts, "float64")[idx]))
    for name in ("status", "method", "path", "client"):
        setattr(out, name, _array("i", _np_of(getattr(cols, name), "int32")[idx]))
    return out


_DAY = 86400.0
# A time-only log ('HH:MM:SS', dated 1900-01-01 by the parser) that goes back by more than this
# has crossed midnight; processes' clocks disagree by seconds, never by half a day.
_ROLLOVER = _DAY / 2
# The classes that continue an open traceback when the line carries no timestamp of its own.
_OPENERS = (ExceptionHeader, ProcessHeader, TracebackStart)
_BODY = (TracebackFrame, TracebackSource, ExceptionLine, ExceptionChain, TracebackStart)


def _time_only(stamps: npt.NDArray[np.float64]) -> bool:
    """Whether every timestamp is on the parser's date for a log that prints only the time."""
    start = epoch(datetime(_NO_YEAR, 1, 1))
    return bool(len(stamps)) and bool(stamps.min() >= start) and bool(stamps.max() < start + _DAY)


def _dated(stamps: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Timestamps in file order, where a line that prints no year (`INFO 03-07 15:31:20` from
    vLLM, torch's `[E307 15:31:30…]`: dated 1900 by the parser) in a log whose other lines print
    one takes its year from the nearest dated line before it (after it, at the start), and a time
    alone (1900-01-01) that line's date, so a window compares them with the rest (a watchdog
    timeout printed by torch was outside every window of a dated log). Returned unchanged when
    every line or none prints a year."""
    import numpy as np

    dated = stamps >= epoch(datetime(_NO_YEAR + 1, 1, 1))
    if dated.all() or not dated.any():
        return stamps
    idx = np.maximum.accumulate(np.where(dated, np.arange(len(stamps)), -1))
    idx[idx < 0] = int(np.argmax(dated))
    out = stamps.copy()
    for i in np.nonzero(~dated)[0]:
        near = from_epoch(float(stamps[idx[i]]))
        own = from_epoch(float(stamps[i]))
        if near is None or own is None:
            continue
        if (own.month, own.day) == (1, 1):  # a time of day alone: the neighbour's date
            moment = datetime.combine(near.date(), own.time())
        else:
            moment = own.replace(year=near.year)
            if (moment - near).days > 182:  # 12-31 printed after a January line: the year before
                moment = moment.replace(year=near.year - 1)
            elif (near - moment).days > 182:  # 01-01 printed after a December line
                moment = moment.replace(year=near.year + 1)
        out[i] = epoch(moment)
    return out


def _rolled(stamps: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Timestamps of a time-only log in file order, with a day added after each midnight (and
    taken back when a late line of the day before follows), so that the window and the log's last
    moment see the order the log was written in. Other logs are returned unchanged."""
    import numpy as np

    timed = stamps[~np.isnan(stamps)]
    if not _time_only(timed):
        return stamps
    steps = np.diff(timed, prepend=timed[0])
    days = np.cumsum(np.where(steps < -_ROLLOVER, 1, np.where(steps > _ROLLOVER, -1, 0)))
    if not days.any():
        return stamps
    out = stamps.copy()
    out[~np.isnan(stamps)] = timed + days * _DAY
    return out


def _record_owners(rest: list[Rest], rest_ts: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """For each kept line, the index (in `rest`) of the line whose time it takes: itself, or, for
    an untimestamped line of an open traceback (a frame, a source line, the exception, a chain
    marker, the message after it, the blank line that ends it), the line that opened the record,
    so that another process's timestamped line interleaved in the body does not cut it in two.
    Records are followed per stream, as `parsing/records.py` assembles them."""
    import numpy as np

    owners = np.arange(len(rest), dtype="int64")
    open_at: dict[str, int] = {}  # stream -> index of the line that opened its record
    after_exception: set[str] = set()
    for i, (_, text, wrapper, env, cls, _kw) in enumerate(rest):
        stream = getattr(wrapper, "stream", "") or ""
        if not stream and env is not None and env.style == "torch-rank":
            stream = f"rank:{env.rank}"
        opener = open_at.get(stream)
        timed = not np.isnan(rest_ts[i])
        if timed:
            if issubclass(cls, _OPENERS):
                open_at[stream] = i
                after_exception.discard(stream)
            continue
        if opener is not None and (issubclass(cls, _BODY) or (
                cls is Unparsed and stream in after_exception)):
            owners[i] = opener
            if cls is ExceptionLine:
                after_exception.add(stream)
            if cls is Unparsed and not text:  # the blank line that ends the record
                del open_at[stream]
                after_exception.discard(stream)
            continue
        open_at.pop(stream, None)
        after_exception.discard(stream)
        if issubclass(cls, _OPENERS):  # an unprefixed 'Traceback (most recent call last):'
            open_at[stream] = i
    return owners


def apply_window(window: TimeWindow, path: str, rest: list[Rest], decode: StatsColumns,
                 prefill: StatsColumns, access: AccessColumns, times: TimeCache) -> Windowed:
    """Keep the lines inside `window`; InputError (one line) when the log has no timestamp or
    the window is empty in this log (--since after --until once resolved)."""
    import numpy as np

    name = "stdin" if path == "-" else path
    rest_lines = np.fromiter((item[0] for item in rest), dtype="int64", count=len(rest))
    rest_ts = np.fromiter((times.epoch(_ts_text(item)) for item in rest), dtype="float64",
                          count=len(rest))
    hot = [(_np_of(c.line, "int64"), _np_of(c.ts, "float64")) for c in (decode, prefill, access)]
    lines = np.concatenate([rest_lines, *(h[0] for h in hot)])
    stamps = np.concatenate([rest_ts, *(h[1] for h in hot)])
    timed = ~np.isnan(stamps)
    if not timed.any():
        raise InputError(f"{name} has no timestamped line: --since/--until cannot apply")
    order = np.argsort(lines[timed], kind="stable")
    clock_lines, raw = lines[timed][order], stamps[timed][order]
    clock_ts = _rolled(_dated(raw))
    time_only = _time_only(raw)
    if clock_ts is not raw:  # years borrowed or midnights crossed: every row sees the new stamps
        stamps = stamps.copy()
        stamps[np.nonzero(timed)[0][order]] = clock_ts
        parts = np.split(stamps, np.cumsum([len(rest_ts), *(len(h[0]) for h in hot[:-1])]))
        rest_ts = parts[0]
        hot = [(h[0], part) for h, part in zip(hot, parts[1:], strict=True)]
    last = from_epoch(float(clock_ts.max()))
    assert last is not None
    try:
        lo, hi = window.resolve(last, time_only=time_only)
    except WindowError as err:
        raise InputError(f"{name}: {err}") from None
    lo_e = epoch(lo) if lo is not None else -np.inf
    hi_e = epoch(hi) if hi is not None else np.inf

    def inside(at: npt.NDArray[np.int64], ts: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        missing = np.isnan(ts)
        if missing.any():
            # The nearest timestamped line strictly before; before the first one: the first.
            owner = np.searchsorted(clock_lines, at[missing], side="left") - 1
            ts = ts.copy()
            ts[missing] = clock_ts[np.maximum(owner, 0)]
        return (ts >= lo_e) & (ts <= hi_e)  # type: ignore[no-any-return]

    owners = _record_owners(rest, rest_ts)
    keep_rest = inside(rest_lines, rest_ts)[owners] if len(rest) else inside(rest_lines, rest_ts)
    keeps = [inside(*h) for h in hot]
    outside = int(len(keep_rest) - keep_rest.sum()) + sum(int(len(k) - k.sum()) for k in keeps)
    kept = rest if keep_rest.all() else [item for item, k in zip(rest, keep_rest, strict=True) if k]
    fmt = "%H:%M:%S" if time_only else (
        "%Y-%m-%d %H:%M:%S" if last.year != _NO_YEAR else "%m-%d %H:%M:%S")
    return Windowed(
        rest=kept,
        decode=_select_stats(decode, keeps[0]),
        prefill=_select_stats(prefill, keeps[1]),
        access=_select_access(access, keeps[2]),
        outside=outside,
        since=lo.strftime(fmt) if lo is not None else None,
        until=hi.strftime(fmt) if hi is not None else None,
    )


def last_moment(log: ParsedLog) -> datetime | None:
    """The latest timestamp of a parsed log (events and stats or access rows), or None."""
    import numpy as np

    stamps = [e.ts for e in log.events if e.ts is not None]
    hot = [float(np.nanmax(_np_of(c.ts, "float64"))) for c in (log.decode, log.prefill, log.access)
           if len(c.ts) and not np.isnan(_np_of(c.ts, "float64")).all()]
    if hot:
        moment = from_epoch(max(hot))
        if moment is not None:
            stamps.append(moment)
    return max(stamps) if stamps else None
