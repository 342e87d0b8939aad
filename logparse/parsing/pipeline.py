"""Drive the pipeline for one log: reader → grammar → events and columns → multi-line records.

Stage 1 (per byte range, possibly in several processes): read and parse every line; hot lines
(decode/prefill stats, access lines) go straight into columns, every other line is kept as a
small parsed tuple. Stage 2 (in order, one process): build event objects, assemble tracebacks and
benchmark blocks, count coverage. Multi-line records never include hot lines (by definition, in
both the one-process and the split mode), so splitting a file by byte ranges cannot change the
result: `tests/test_parse.py` checks that jobs=1 and jobs=2 agree.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from logparse.grammar.build import get_parser
from logparse.grammar.fastpath import HOT
from logparse.grammar.transform import Envelope
from logparse.grammar.transform.envelope import FOREIGN_STYLES
from logparse.io.reader import ReadReport, line_ranges, read_lines, split_points  # noqa: F401 (re-exported for tests)
from logparse.io.wrappers import foreign_logger
from logparse.model import numbers
from logparse.model.events import DecodeBatch, Event, HttpAccess, PrefillBatch, Unparsed
from logparse.parsing import split
from logparse.parsing.benchblocks import BenchAssembler
from logparse.parsing.columns import (
    NAN,
    AccessColumns,
    HotRows,
    StatsColumns,
    decode_columns,
    epoch,
    prefill_columns,
)
from logparse.parsing.commands import CommandAssembler
from logparse.parsing.coverage import Coverage, line_hit
from logparse.parsing.linetexts import LineTexts
from logparse.parsing.records import TracebackAssembler, opening_spacing

if TYPE_CHECKING:
    from logparse.model.window import TimeWindow

# Below this size a second process costs more (start-up, pickling) than it saves.
PARALLEL_MIN_BYTES = 8 * 1024 * 1024
MAX_TEXT_CHARS = 64 * 1024 * 1024
# Envelope styles whose rank tags are SGLang's own (not torch's '[rankN]:' or old '[gpu_id=N]').
RANK_STYLES = frozenset({"sglang", "time", "cut", "diffusion"})
MAX_EVIDENCE_LINE = 4096
# The most stage-2 items held while the opening lines decide a paste's spacing (records.opening_spacing
# needs 2 x OPENING_SPACED_LINES + 1; the rest allows leading blank lines).
_OPENING_MAX_ITEMS = 64
_MAX_SHARED_TEXTS = 100_000  # distinct kept texts remembered for sharing (stage 2)
_ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "FATAL"})

# (line number, text, wrapper, envelope, event class, fields)
Rest = tuple[int, str, Any, Envelope | None, type, dict[str, Any]]


@dataclass
class ParsedLog:
    """Everything parsed from one log file."""

    path: str
    report: ReadReport
    events: list[Event] = field(default_factory=list)
    decode: StatsColumns = field(default_factory=decode_columns)
    prefill: StatsColumns = field(default_factory=prefill_columns)
    access: AccessColumns = field(default_factory=AccessColumns)
    coverage: Coverage = field(default_factory=Coverage)
    # Cleaned text of every non-hot line (evidence for findings), bounded by MAX_TEXT_CHARS; a
    # mapping of line number → text in flat columns (`parsing/linetexts.py`: ~16 bytes a line).
    texts: MutableMapping[int, str] = field(default_factory=LineTexts)
    text_chars: int = 0
    # Rank tags printed inside SGLang envelopes on any non-hot line (hot lines: the columns' ranks).
    ranks_seen: set[str] = field(default_factory=set)
    # The wrapper's log level (ERROR, CRITICAL, FATAL) of unparsed lines: they become no event, so
    # without this a wrapper-formatted error record cut before its message would lose its level.
    error_levels: dict[int, str] = field(default_factory=dict)
    # Those of them that are another program's records (`io.wrappers.foreign_logger`: Xinference's
    # `xinference.core.worker … ERROR Failed to load model …`): the traceback `logger.exception`
    # prints right after such a record is that program's, not a server process's.
    foreign_errors: set[int] = field(default_factory=set)
    # Kept lines that nothing anchors: the grammar knew neither an envelope nor a message, no
    # capture tool's prefix stood before them (a paste's `> ` quote is no capture) and no record
    # (traceback, pasted command) took them. Native output (no envelope) or the paste's own text:
    # `parsing/quoting.py` tells which from the paste's structure, for the rules' catalog lookups.
    unanchored: set[int] = field(default_factory=set)

    # Facts derived from the events and kept with them (the run model: `run.model.run_of`).
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # Events by exact class, with their positions, built once (`of` is called ~1,200 times per
    # analysis; a scan each time made analysis superlinear). Rebuilt when `events` is replaced or
    # changes length; `reindex()` after reordering it in place.
    _index: dict[type, tuple[list[Event], array[int]]] | None = field(default=None, repr=False, compare=False)
    _indexed: tuple[int, int] = field(default=(0, -1), repr=False, compare=False)
    # `shared(*classes)` answers, valid with the index (a launch asks for the same classes once per
    # attempt: a merge of the whole log's positions each time was O(attempts × events log events)).
    _shared: dict[tuple[type, ...], list[Event]] = field(default_factory=dict, repr=False, compare=False)

    def of(self, *classes: type[Event]) -> list[Any]:
        """The (non-hot) events of the given classes (subclasses included), in file order."""
        events = self.events
        if self._index is None or self._indexed != (id(events), len(events)):
            self.reindex()
        index = self._index
        assert index is not None
        hits = [entry for cls, entry in index.items() if issubclass(cls, classes)]
        if not hits:
            return []
        if len(hits) == 1:
            return list(hits[0][0])
        return [events[i] for i in sorted(i for _, positions in hits for i in positions)]

    def shared(self, *classes: type[Event]) -> list[Any]:
        """What `of(*classes)` returns, but one list kept with the index and shared by every caller
        (one class: the index's own list; several: their merge, kept): for readers that only
        slice it (`run.launches.within`), never change it."""
        events = self.events
        if self._index is None or self._indexed != (id(events), len(events)):
            self.reindex()
        out = self._shared.get(classes)
        if out is None:
            index = self._index
            assert index is not None
            hits = [entry for cls, entry in index.items() if issubclass(cls, classes)]
            # One class: the index's own list (no copy kept beside it); several: their merge.
            out = self._shared[classes] = hits[0][0] if len(hits) == 1 else self.of(*classes)
        return out

    def reindex(self) -> None:
        """Rebuild the by-class index."""
        self._shared = {}
        # Positions as machine ints (8 bytes each, not a 28-byte int object per event).
        index: dict[type, tuple[list[Event], array[int]]] = {}
        for i, e in enumerate(self.events):
            entry = index.get(type(e))
            if entry is None:
                entry = index[type(e)] = ([], array("q"))
            entry[0].append(e)
            entry[1].append(i)
        self._index, self._indexed = index, (id(self.events), len(self.events))


class TimeCache:
    """Timestamp text → datetime (and → epoch seconds). Consecutive lines mostly share a second."""

    def __init__(self) -> None:
        self._cache: dict[str, datetime | None] = {}
        self._epochs: dict[str | None, float] = {None: NAN}
        self._days: dict[str, float] = {}

    def epoch(self, text: str | None) -> float:
        try:
            return self._epochs[text]
        except KeyError:
            pass
        if len(self._epochs) > 100_000:
            self._epochs.clear()
            self._epochs[None] = NAN
        value = self._epochs[text] = self._epoch(text)  # type: ignore[arg-type]
        return value

    def _epoch(self, text: str) -> float:
        # 'YYYY-MM-DD HH:MM:SS[.fff]': the day's epoch (cached) plus seconds, without a datetime.
        if len(text) >= 19 and text[4] == "-" and text[13] == ":" and text[16] == ":":
            day = self._days.get(text[:10])
            if day is None:
                day = self._days[text[:10]] = epoch(self.get(text[:10] + " 00:00:00"))
            try:
                secs = int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19])
                frac = float("0" + text[19:].replace(",", ".")) if len(text) > 19 else 0.0
            except ValueError:
                return epoch(self.get(text))
            return NAN if math.isnan(day) else day + secs + frac
        return epoch(self.get(text))

    def get(self, text: str | None) -> datetime | None:
        if text is None:
            return None
        try:
            return self._cache[text]
        except KeyError:
            pass
        if len(self._cache) > 100_000:
            self._cache.clear()
        value = self._cache[text] = _parse_ts(text)
        return value


def _parse_ts(text: str) -> datetime | None:
    try:
        if len(text) >= 19 and text[4] == "-":
            return datetime.fromisoformat(text.replace(",", "."))
        if len(text) == 8 and text[2] == ":":  # 0.2.15–0.3.3: time only
            return datetime.fromisoformat(f"1900-01-01 {text}")
        if len(text) >= 14 and text[2] == "-":  # MM-DD HH:MM:SS (diffusion, vLLM, torch)
            return datetime.fromisoformat(f"1900-{text[:14]}")
    except ValueError:
        return None
    return None


@dataclass
class _Part:
    """What stage 1 returns for one byte range."""

    report: ReadReport
    decode: StatsColumns
    prefill: StatsColumns
    access: AccessColumns
    rest: list[Rest]
    lines: int


def _envelope_ts(env: Envelope | None, wrapper: Any, times: TimeCache) -> datetime | None:
    if env is not None and env.ts is not None:
        return times.get(env.ts)
    if wrapper is not None and wrapper.ts:
        return times.get(wrapper.ts)
    return None


def _stage1(lines: Iterable[tuple[int, str, Any]], part: _Part, keep_rest: bool) -> Iterator[Rest]:
    """Parse lines; hot ones into columns; yield the rest (or collect it when keep_rest)."""
    parser = get_parser()
    # The fast path directly (one call less per line); LALR only where it cannot decide. Lines
    # of a learned stats or access shape go straight into the columns (`HotRows`): HOT back.
    fast = parser.fast.parse_hot if parser.fast is not None else None
    lalr = parser.parse_lalr
    times = TimeCache()
    epochs = times._epochs  # hot: most lines repeat the previous second (a dict hit, no call)
    rows = HotRows(part.decode, part.prefill, part.access, times.epoch)
    adds = {DecodeBatch: part.decode.add, PrefillBatch: part.prefill.add, HttpAccess: part.access.add}
    hot = adds.get
    n = 0
    for no, text, wrapper in lines:
        n += 1
        out = fast(text, no, wrapper, rows) if fast is not None else None
        if out is HOT:
            continue
        env, cls, kw = out if out is not None else lalr(text)
        add = hot(cls)
        if add is not None:
            if env is not None and env.ts is not None:
                stamp = env.ts
            else:
                stamp = wrapper.ts if wrapper is not None else None
            ts = epochs.get(stamp)
            if ts is None:
                ts = times.epoch(stamp)
            add(no, ts, env.rank if env is not None else None, kw)
            continue
        item = (no, text, wrapper, env, cls, kw)
        if keep_rest:
            part.rest.append(item)
        else:
            yield item
    part.lines = n


def _new_part(path: str) -> _Part:
    return _Part(ReadReport(path=path), decode_columns(), prefill_columns(), AccessColumns(), [], 0)


def _stream_range(queue: Any, path: str, start: int, end: int) -> None:
    """Stage 1 in a worker process, its kept tuples sent back in chunks as they are parsed."""

    def produce(send: Any) -> _Part:
        part = _new_part(path)
        damaged = numbers.damaged()
        lines = read_lines(path, part.report, start=start, end=end, first_line_no=split.first_line_no(path, start))
        chunk: list[Rest] = []
        # What each unparsed message is (`coverage.line_hit`: the classifier, the template) is
        # computed here, beside the parse, and sent with the chunk: stage 2 in the main process
        # only looks it up (it was ~half of stage 2 there on logs of mostly foreign text).
        hits: dict[str, tuple[str | None, str | None]] = {}
        known: dict[str, tuple[str | None, str | None]] = {}
        for item in _stage1(lines, part, False):
            chunk.append(item)
            if item[4] is Unparsed:
                msg = item[5]["text"]
                if msg and msg not in hits:
                    hit = known.get(msg)
                    if hit is None:
                        hit = line_hit(msg)
                        if len(known) >= _WORKER_MEMO:
                            known.clear()
                        known[msg] = hit
                    hits[msg] = hit
            if len(chunk) >= split.CHUNK_LINES:
                send((chunk, hits))
                chunk, hits = [], {}
        if chunk:
            send((chunk, hits))
        part.report.damaged_numbers += numbers.damaged() - damaged
        return part

    split.report(queue, produce)


# Distinct unparsed messages a worker remembers the `line_hit` of (bounded like the coverage memo).
_WORKER_MEMO = 8192


# Prefixes a paste adds, not a program capturing output: a markdown quote, a terminal's `^C` echo.
_PASTE_WRAPPERS = frozenset({"markdown-quote", "tty-interrupt"})


class _Stage2:
    """Events, records and coverage from the non-hot lines, in file order."""

    def __init__(self, log: ParsedLog) -> None:
        self.log = log
        self.times = TimeCache()
        self.tracebacks = TracebackAssembler(log.path)
        self.bench = BenchAssembler(log.path)
        self.commands = CommandAssembler()
        self.launch: Event | None = None
        # Kept texts repeat (every rank's traceback frames, a warning per request): identical
        # lines share one string. Bounded: a log of distinct lines only fills it and starts over.
        self._texts_seen: dict[str, str] = {}
        # The opening lines, held until they say whether the paste is double-spaced (a bounded
        # look-ahead: at most _OPENING_MAX_ITEMS items); None once decided.
        self._opening: list[Rest] | None = []
        self._opening_blanks: list[bool] = []

    def feed(self, item: Rest) -> None:
        opening = self._opening
        if opening is None:
            self._feed(item)
            return
        opening.append(item)
        cls, kw = item[4], item[5]
        self._opening_blanks.append(cls is Unparsed and item[3] is None and not str(kw.get("text", "")).strip())
        decided = opening_spacing(self._opening_blanks, at_end=False)
        if decided is None and len(opening) >= _OPENING_MAX_ITEMS:
            decided = False  # (a run of leading blanks decides nothing: the hold stays bounded)
        if decided is not None:
            self._release(decided)

    def _release(self, double_spaced: bool) -> None:
        opening = self._opening or []
        self._opening = None
        self._opening_blanks = []
        if double_spaced:
            self.tracebacks.assume_double_spaced()
        for held in opening:
            self._feed(held)

    def _feed(self, item: Rest) -> None:
        no, text, wrapper, env, cls, kw = item
        log = self.log
        # Blank lines are not kept (millions of them cost memory, they are no evidence); the
        # segments of one physical line are joined only up to one evidence line (not quadratic).
        if text and log.text_chars < MAX_TEXT_CHARS:
            shown = text[:MAX_EVIDENCE_LINE]
            seen = self._texts_seen
            same = seen.get(shown)
            if same is None:
                if len(seen) >= _MAX_SHARED_TEXTS:
                    seen.clear()
                same = seen[shown] = shown
            shown = same
            prev = log.texts.get(no)
            if prev is None:
                log.texts[no] = shown
            elif len(prev) < MAX_EVIDENCE_LINE:
                log.texts[no] = f"{prev} ⏎ {shown}"
            log.text_chars += len(shown)
        ts = _envelope_ts(env, wrapper, self.times)
        rank = env.rank if env is not None else None
        if rank is not None and env.style in RANK_STYLES:  # type: ignore[union-attr]
            log.ranks_seen.add(rank)
        stream = wrapper.stream if wrapper is not None else ""
        if not stream and env is not None and env.style == "torch-rank":
            stream = f"rank:{rank}"
        # A wrapper's timestamp is not an envelope: wrapped traceback lines are still continuation lines.
        enveloped = env is not None and env.style != "torch-rank"
        if cls is Unparsed:
            msg = kw["text"]
            level = getattr(wrapper, "level", None) if wrapper is not None else None
            if level and str(level).upper() in _ERROR_LEVELS:
                log.error_levels[no] = str(level).upper()
            if not msg and env is None:
                # A blank line is a known shape (tracebacks and benchmark blocks end with one), not
                # a gap in the grammar; the record assemblers still see it.
                log.coverage.add_blank(no)
                log.events.extend(self.commands.feed(stream, no, None, msg)[0])
                done = self.tracebacks.feed(no, stream, rank, ts, cls, kw, msg, enveloped=enveloped)
            else:
                # Another program's record by its envelope or its wrapper's logger name.
                foreign = (env.style in FOREIGN_STYLES if env is not None
                           else wrapper is not None and foreign_logger(wrapper))
                log.coverage.add_unparsed(no, msg, env is not None or bool(level), foreign)
                if foreign and no in log.error_levels:
                    log.foreign_errors.add(no)
                # A line after a `\` continues the pasted command, whatever it holds.
                emitted, absorbed = self.commands.feed(stream, no, None, msg)
                log.events.extend(emitted)
                before = self.tracebacks.claimed()
                done = self.tracebacks.feed(no, stream, rank, ts, cls, kw, msg, enveloped=enveloped)
                if absorbed or self.tracebacks.claimed() != before:
                    log.coverage.reclaim(no, msg)
                elif env is None and (wrapper is None or wrapper.kind in _PASTE_WRAPPERS) and no in log.texts:
                    log.unanchored.add(no)
        else:
            log.coverage.recognized += 1
            event = cls(line=no, end_line=no, ts=ts, rank=rank, source=log.path, wrapper=wrapper, **kw)
            # Shell lines are held until their command is complete (several lines → one event).
            log.events.extend(self.commands.feed(stream, no, event, text)[0])
            done = self.tracebacks.feed(no, stream, rank, ts, cls, kw, text, enveloped=enveloped)
        if done:
            log.events.extend(done)
        finished = self.bench.feed(no, ts, cls, kw)
        if finished:
            log.events.extend(finished)

    def finish(self) -> None:
        if self._opening is not None:
            self._release(bool(opening_spacing(self._opening_blanks, at_end=True)))
        self.log.events.extend(self.commands.finish())
        self.log.events.extend(self.tracebacks.finish())
        self.log.events.extend(self.bench.finish())
        # Records are appended when they complete; keep the list in file order.
        self.log.events.sort(key=lambda e: (e.line, e.end_line))
        self.log.reindex()


def parse_file(path: str, *, jobs: int = 1, window: TimeWindow | None = None) -> ParsedLog:
    """Parse one log (plain, .gz or '-' for stdin). jobs > 1 splits a large plain file by byte
    ranges across processes. With a time window (`--since`/`--until`), only the lines inside it
    become events; the others are counted in `coverage.outside_window` (`parsing/window.py`)."""
    # One part for a small, gzip or non-regular source (a FIFO is opened once, by read_lines).
    ranges = split.plan(path, jobs, PARALLEL_MIN_BYTES)
    log = ParsedLog(path=path, report=ReadReport(path=path))
    damaged = numbers.damaged()  # this process's share; workers report theirs in their part
    stage2 = _Stage2(log)
    if len(ranges) > 1:
        # The first range is parsed here while the workers parse the others (parsing/split.py);
        # their kept lines arrive in chunks, in order, and their columns at the end.
        workers = [split.Worker(_stream_range, path, s, e) for s, e in ranges[1:]]
        try:
            rest = _parse_here(path, log, stage2, window, end=ranges[0][1])
            for worker in workers:
                for kind, payload in worker.messages():
                    if kind == "part":
                        _merge_part(log, payload)
                        continue
                    items, hits = payload
                    if window is None:
                        log.coverage.primed = hits
                        for item in items:
                            stage2.feed(item)
                        log.coverage.primed = {}
                    else:
                        rest.extend(items)
        finally:
            for worker in workers:
                worker.close()
    else:
        rest = _parse_here(path, log, stage2, window)
    if window is not None:
        _feed_window(log, stage2, window, rest)
    stage2.finish()
    log.report.damaged_numbers += numbers.damaged() - damaged
    hot = len(log.decode) + len(log.prefill) + len(log.access)
    cov = log.coverage
    # Lines whose kind their neighbours tell (a cut last line, a wrap's rest: parsing/continuations.py).
    cov.settle(log.texts, log.report.physical_lines if log.text_chars < MAX_TEXT_CHARS else None)
    cov.recognized += hot
    cov.total = cov.recognized + cov.unparsed + cov.outside_window
    return log


def _parse_here(path: str, log: ParsedLog, stage2: _Stage2, window: TimeWindow | None, end: int | None = None) -> list[Rest]:
    """Stages 1 and 2 in this process, as the lines are read (the whole file, or its first
    `end` bytes); with a window, the stage-1 tuples kept for it instead."""
    part = _new_part(path)
    part.report = log.report
    # A window needs the log's last timestamp before it can decide: keep the lines first.
    lines = read_lines(path, log.report) if end is None else read_lines(path, log.report, start=0, end=end, first_line_no=1)
    for item in _stage1(lines, part, window is not None):
        stage2.feed(item)
    _merge_part(log, part, report=False)
    return part.rest


def _feed_window(log: ParsedLog, stage2: _Stage2, window: TimeWindow, rest: list[Rest]) -> None:
    from logparse.parsing.window import apply_window

    inside = apply_window(window, log.path, rest, log.decode, log.prefill, log.access, stage2.times)
    log.decode, log.prefill, log.access = inside.decode, inside.prefill, inside.access
    log.coverage.outside_window = inside.outside
    log.coverage.window = {**window.as_dict(), "from": inside.since, "to": inside.until}
    for item in inside.rest:
        stage2.feed(item)
    rest.clear()


def _merge_part(log: ParsedLog, part: _Part, *, report: bool = True) -> None:
    # The first part's columns are taken over, not copied: a copy held the hot columns twice at
    # the end of stage 1 (the peak RSS of a serving-heavy log), and the part's reference is
    # dropped so that a merged part's columns are freed at once.
    if len(log.decode):
        log.decode.extend(part.decode)
    else:
        log.decode = part.decode
    if len(log.prefill):
        log.prefill.extend(part.prefill)
    else:
        log.prefill = part.prefill
    if len(log.access):
        log.access.extend(part.access)
    else:
        log.access = part.access
    part.decode, part.prefill, part.access = decode_columns(), prefill_columns(), AccessColumns()
    if report:
        _merge_report(log.report, part.report)


def _merge_report(into: ReadReport, other: ReadReport) -> None:
    into.merge(other)  # counters add up; flagged keeps the first MAX_FLAGGED, as one process would


def fetch_lines(log: ParsedLog, numbers: Iterable[int]) -> dict[int, str]:
    """The cleaned text of the given lines: kept non-hot lines, else a second read of the file
    (hot lines are not kept; stdin cannot be read twice, so those come back missing)."""
    wanted = set(numbers)
    out = {n: log.texts[n] for n in wanted if n in log.texts}
    missing = wanted - out.keys()
    if missing and log.path != "-":
        ranges = line_ranges(log.path, sorted(missing))
        report = ReadReport(path=log.path)
        if ranges is None:  # gzip: read from the start up to the last wanted line
            ranges = [(0, -1, 1)]
        last = max(missing)  # once: per range it made evidence quadratic (a range per traceback)
        for start, end, first in ranges:
            source = read_lines(log.path, report) if end < 0 else read_lines(
                log.path, report, start=start, end=end, first_line_no=first)
            for no, text, _wrapper in source:
                if no in missing:
                    shown = text[:MAX_EVIDENCE_LINE]
                    out[no] = shown if no not in out else f"{out[no]} ⏎ {shown}"
                if no > last:
                    break
    return out
