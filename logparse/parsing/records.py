"""Assemble multi-line records (Python tracebacks) from the line events, in file order.

The driver feeds every line, recognised or not, to `TracebackAssembler.feed`; completed `Traceback`
events come back as soon as they are known to be complete, the rest at `finish()`.

Grouping follows DESIGN.md ("group by what can be proven, never by guessing across ranks"):

* Records are kept per **stream** (the writing process when the reader knew it: a Ray pid, a
  docker service, a `[rankN]: ` torch prefix, or '' for the bare log). Lines of one stream never
  touch the records of another.
* A record opens at an `ExceptionHeader` (`Scheduler hit an exception: …`, `Initialization failed.
  warmup error: …`), a `ProcessHeader` (`Process SpawnProcess-1:`, `Exception in ControllerSingle:`),
  a `TracebackStart`, or *headless* at a frame / exception line / chain marker with no open record
  (the excerpt starts inside a traceback). Indented source lines alone only open a *tentative*
  record, which becomes real if a frame, exception line or chain marker follows and is dropped
  otherwise (pasted command continuations and `warnings` follow-up lines are indented too).
* Inside the traceback body, lines that are not traceback syntax are other processes' output
  (interleaving): they are skipped and do not close the record.
* After the exception line, unprefixed `Unparsed` lines of the same stream continue a multi-line
  message (`Possible solutions:` …) until a blank line, a prefixed line, or traceback syntax.
* A chain marker (`During handling of the above exception …`) pushes the exception so far into
  `chain` and keeps the record open; so does a frame right after an exception line (Ray prints the
  remote traceback inside the `RayTaskError` message). `exc_type` is the last exception raised;
  `root_exception()` gives the original cause.
* A prefixed exception line (`[ts TP3] KeyError: …`: a record logged on one line) is a record of
  its own; prefixed lines never join an open unprefixed body.
* A pasted shell line (a prompt, an `export`, a typed command, a launch command) ends the stream's
  record in any state: the shell had its prompt back, so the process that printed the traceback is
  done, and the exception message never swallows `root@host:/workspace# …`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from logparse.model.events import (
    Event,
    ExceptionChain,
    ExceptionHeader,
    ExceptionLine,
    Frame,
    KnownMessage,
    LaunchCommand,
    ProcessHeader,
    PythonReplInput,
    PythonWarning,
    ShellCommand,
    ShellExport,
    ShellPrompt,
    Traceback,
    TracebackFrame,
    TracebackSource,
    TracebackStart,
    Unparsed,
)

__all__ = ["TracebackAssembler", "root_exception"]

# Record states.
_BODY = 0  # collecting frames and source lines; no exception line yet
_MESSAGE = 1  # exception line seen; unprefixed unparsed lines continue its message
_ENDED = 2  # exception line and a blank line seen; only a chain marker can continue the record

# Known messages that are printed as continuation lines of an exception message (they are also
# recognised on their own when logged): `RuntimeError: Prefill out of memory. …\nTry to allocate N tokens.`,
# and the hints torch appends to every `CUDA error: …` message (grammars/notices.lark).
CONTINUATION_CODES = frozenset({"try-allocate-tokens", "cuda-async-error-hint", "cuda-launch-blocking-hint",
                                "cuda-dsa-hint", "cuda-dsa-not-enabled", "cuda-error-doc-hint"})
# A faulthandler dump (`Thread 0x… (most recent call first):` + frames) after a native crash.
_FAULTHANDLER = "faulthandler-thread"
# A message continuation longer than this is not a message: close the record there.
MAX_CONTINUATION_LINES = 64


@dataclass(slots=True)
class _Record:
    line: int
    end_line: int
    ts: datetime | None
    rank: str | None
    process: str | None = None
    headless: bool = False
    tentative: bool = False
    faulthandler: bool = False
    awaiting_traceback: bool = False  # a header was seen, its `Traceback (…):` not yet
    # The last traceback line was a frame: an unindented unknown line next is its source line
    # (a paste that stripped the indentation), as is a caret line under that source.
    after_frame: int = 0  # 1: a frame was the last traceback line; 2: then its stripped source line
    state: int = _BODY
    exc_type: str | None = None
    message: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    chain: list[tuple[str, str]] = field(default_factory=list)


def root_exception(tb: Traceback) -> tuple[str | None, str]:
    """The original cause of a (possibly chained) traceback: the first exception of the chain,
    else the traceback's own exception; `(None, "")` when the excerpt shows no exception line.

    This is what the corpus labels call `exception_type`: for `tvm.error.InternalError …` /
    `During handling …` / a second traceback cut before its exception line, the root is the
    InternalError; for Ray's `RayTaskError(OutOfMemoryError)` followed by the remote traceback it is
    the RayTaskError as printed."""
    if tb.chain:
        return tb.chain[0]
    if tb.exc_type is not None:
        return tb.exc_type, tb.message
    return None, ""


class TracebackAssembler:
    """Stateful, O(1) per line; holds only the records still open (one per stream at most)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._open: dict[str, _Record] = {}
        self._after_warning: set[str] = set()
        self._claimed = 0
        # Double-spaced paste detection (a blank line between every two lines): how many
        # non-blank lines in a row came right after exactly one blank line.
        self._blank_run = 0
        self._spaced = 0
        self._opening = False  # spacing assumed from the opening lines, first line not yet seen

    # ------------------------------------------------------------------ public API

    def feed(
        self,
        line_no: int,
        stream: str,
        env_rank: str | None,
        ts: datetime | None,
        cls: type,
        kw: dict[str, Any],
        text: str,
        *,
        enveloped: bool | None = None,
    ) -> list[Event]:
        """Called for EVERY line (recognised or Unparsed), in file order. Returns the Traceback
        events completed by this line.

        `enveloped`: whether the line carries a log envelope of its own (`[ts TP0] `, vLLM, c10d,
        `[gpu_id=0] `), i.e. it is a one-line record and never a continuation line. A `[rankN]: `
        torch prefix does not count: torch prefixes every line of a traceback with it (its stream
        is `rank:N`). Pass `env is not None and env.style != "torch-rank"`. When None it is inferred
        from `ts`/`env_rank`, which is right only if `ts` comes from the envelope, not from a
        wrapper (k8s/Kibana timestamps would make every line look enveloped)."""
        out: list[Event] = []
        rec = self._open.get(stream)
        self._spacing(cls is Unparsed and not text.strip())
        if enveloped is None:
            enveloped = ts is not None or (env_rank is not None and not env_rank.startswith("rank"))

        # Source lines right after a `warnings` line are its follow-up (`  warnings.warn(`).
        if cls is TracebackSource and stream in self._after_warning and rec is None:
            return out
        if cls is Unparsed and stream in self._after_warning and rec is None and text.strip():
            # The same line with its indentation stripped by the paste (`warnings.warn(`):
            # Python prints one source line under a warning, so the unknown line is that.
            self._after_warning.discard(stream)
            self._claimed += 1
            return out
        self._after_warning.discard(stream)

        if cls in _SHELL_CLASSES or (cls is LaunchCommand and kw.get("program")):
            self._close(stream, out)
            return out
        if cls is ExceptionHeader or cls is ProcessHeader:
            self._close(stream, out)
            if cls is ExceptionHeader:
                process = kw.get("process") or None
                awaiting = "Traceback" not in kw.get("rest", "")
            else:
                process = kw.get("name") or None
                awaiting = True
            self._open[stream] = _Record(
                line_no, line_no, ts, env_rank, process=process, awaiting_traceback=awaiting
            )
        elif cls is KnownMessage and kw.get("code") == _FAULTHANDLER:
            self._close(stream, out)
            self._open[stream] = _Record(
                line_no, line_no, ts, env_rank, process="faulthandler", faulthandler=True
            )
        elif cls is TracebackStart:
            if rec is not None and not rec.tentative and rec.awaiting_traceback:
                rec.awaiting_traceback = False
                rec.end_line = line_no
            else:
                self._close(stream, out)
                self._open[stream] = _Record(line_no, line_no, ts, env_rank)
        elif cls in _BODY_CLASSES and enveloped:
            self._prefixed_element(line_no, stream, env_rank, ts, cls, kw, rec, out)
        elif cls is TracebackFrame:
            self._frame(line_no, stream, env_rank, ts, kw, rec, out)
        elif cls is TracebackSource:
            self._source(line_no, stream, env_rank, ts, kw, rec, out)
        elif cls is ExceptionLine:
            self._exception(line_no, stream, env_rank, ts, kw, rec, out)
        elif cls is ExceptionChain:
            self._chain(line_no, stream, env_rank, ts, rec, out)
        elif rec is not None:
            self._other(line_no, stream, cls, kw, text, enveloped, rec, out)
        if cls is PythonWarning:
            self._after_warning.add(stream)
        return out

    @property
    def double_spaced(self) -> bool:
        """Whether the paste puts a blank line between every two lines (the last few did)."""
        return self._spaced >= _DOUBLE_SPACED_RUN

    def assume_double_spaced(self) -> None:
        """The paste's opening lines showed it double-spaced (`opening_spacing`): read its first
        lines that way instead of waiting for the run of lines that establishes it."""
        self._spaced = max(self._spaced, _DOUBLE_SPACED_RUN)
        self._opening = True

    def _spacing(self, blank: bool) -> None:
        if self._opening:
            # Blanks before the first line are not the paste's; its first line starts the run.
            if not blank:
                self._opening = False
                self._blank_run = 0
            return
        self._count_spacing(blank)

    def _count_spacing(self, blank: bool) -> None:
        if blank:
            self._blank_run += 1
            return
        if self._blank_run == 1:
            self._spaced += 1
        elif self._blank_run == 0 or self._blank_run > 2:
            self._spaced = 0
        self._blank_run = 0

    def claimed(self) -> int:
        """How many Unparsed lines were absorbed into a traceback (as exception-message continuation lines)."""
        return self._claimed

    def pending(self) -> int:
        """How many records are open right now (at most one per stream)."""
        return len(self._open)

    def finish(self) -> list[Event]:
        """Close all open records at end of input (a record without its exception line is `cut`)."""
        out: list[Event] = []
        for stream in list(self._open):
            self._close(stream, out)
        self._after_warning.clear()
        out.sort(key=lambda e: e.line)
        return out

    # ------------------------------------------------------------------ per line kind

    def _frame(
        self,
        line_no: int,
        stream: str,
        env_rank: str | None,
        ts: datetime | None,
        kw: dict[str, Any],
        rec: _Record | None,
        out: list[Event],
    ) -> None:
        frame = Frame(kw.get("path", ""), kw.get("lineno"), kw.get("func"))
        if rec is not None and (rec.state == _MESSAGE or (rec.state == _ENDED and self.double_spaced)):
            # A frame right after the exception line: the message carries a traceback (Ray's
            # RayTaskError prints the remote one). The printed exception becomes the chain's head.
            # In a double-spaced paste the blank line between them is the paste's, not an end.
            self._push_chain(rec)
        elif rec is not None and rec.state == _ENDED:
            self._close(stream, out)
            rec = None
        if rec is None:
            rec = self._open[stream] = _Record(line_no, line_no, ts, env_rank, headless=True)
        rec.tentative = False
        rec.awaiting_traceback = False
        rec.frames.append(frame)
        rec.after_frame = 1
        self._touch(rec, line_no, env_rank)

    def _source(
        self,
        line_no: int,
        stream: str,
        env_rank: str | None,
        ts: datetime | None,
        kw: dict[str, Any],
        rec: _Record | None,
        out: list[Event],
    ) -> None:
        if rec is not None and rec.state == _MESSAGE and not rec.faulthandler:
            # Indented continuation of a multi-line message (pydantic errors, …).
            self._continue_message(rec, line_no, kw.get("text", ""))
            return
        if rec is not None and rec.state == _ENDED:
            self._close(stream, out)
            rec = None
        if rec is None:
            self._open[stream] = _Record(
                line_no, line_no, ts, env_rank, headless=True, tentative=True
            )
            return
        rec.after_frame = 0
        self._touch(rec, line_no, env_rank)

    def _exception(
        self,
        line_no: int,
        stream: str,
        env_rank: str | None,
        ts: datetime | None,
        kw: dict[str, Any],
        rec: _Record | None,
        out: list[Event],
    ) -> None:
        if rec is not None and (rec.state != _BODY or rec.faulthandler):
            self._close(stream, out)
            rec = None
        if rec is None:
            rec = self._open[stream] = _Record(line_no, line_no, ts, env_rank, headless=True)
        rec.tentative = False
        rec.awaiting_traceback = False
        rec.exc_type = kw.get("exc_type") or None
        rec.message = [kw.get("message", "")]
        rec.state = _MESSAGE
        rec.after_frame = 0
        self._touch(rec, line_no, env_rank)

    def _chain(
        self,
        line_no: int,
        stream: str,
        env_rank: str | None,
        ts: datetime | None,
        rec: _Record | None,
        out: list[Event],
    ) -> None:
        if rec is not None and (rec.tentative or rec.faulthandler):
            self._close(stream, out)
            rec = None
        if rec is None:
            rec = self._open[stream] = _Record(line_no, line_no, ts, env_rank, headless=True)
        self._push_chain(rec)
        rec.awaiting_traceback = True
        self._touch(rec, line_no, env_rank)

    def _prefixed_element(
        self,
        line_no: int,
        stream: str,
        env_rank: str | None,
        ts: datetime | None,
        cls: type,
        kw: dict[str, Any],
        rec: _Record | None,
        out: list[Event],
    ) -> None:
        """A frame / source / exception / chain line that carries an envelope of its own: it was
        logged as one record, so it never joins an unprefixed body. An exception line alone is a
        (headless, frameless) traceback of its own; the other shapes are ignored."""
        if rec is not None and (rec.state != _BODY or rec.tentative or rec.faulthandler):
            self._close(stream, out)
        if cls is ExceptionLine:
            single = _Record(line_no, line_no, ts, env_rank, headless=True)
            single.exc_type = kw.get("exc_type") or None
            single.message = [kw.get("message", "")]
            out.append(self._event(single))

    def _other(
        self,
        line_no: int,
        stream: str,
        cls: type,
        kw: dict[str, Any],
        text: str,
        prefixed: bool,
        rec: _Record,
        out: list[Event],
    ) -> None:
        """Any line that is not traceback syntax, with a record open in its stream."""
        blank = cls is Unparsed and not kw.get("text", text).strip()
        if blank and (rec.tentative or (self.double_spaced and rec.state != _MESSAGE)):
            # Indented lines then a blank stay tentative (a double-spaced paste's first lines);
            # in a double-spaced paste a blank line is the paste's spacing: the next line decides.
            return
        if rec.tentative:
            del self._open[stream]  # indented lines that were not a traceback after all
            return
        if rec.faulthandler:
            # A dump's thread listing ends at the next line that is not a frame; a blank line
            # alone does not end it (a double-spaced paste puts one after every line, and a
            # tripled blank resets the paste's spacing count).
            if not blank:
                self._close(stream, out)
            return
        if rec.state == _BODY:
            body = kw.get("text", text)
            if rec.after_frame and cls is Unparsed and not prefixed and not blank and (
                rec.after_frame == 1 or _is_caret_line(body)
            ):
                # The frame's source line (then its caret line) with the indentation stripped.
                rec.after_frame = 2 if rec.after_frame == 1 and not _is_caret_line(body) else 0
                rec.end_line = line_no
                self._claimed += 1
            elif not blank:
                rec.after_frame = 0
            return  # else another process's output between frames
        if rec.state == _ENDED:
            if (not prefixed and rec.exc_type is not None and cls is KnownMessage
                    and kw.get("code") in CONTINUATION_CODES):
                # torch's hints are part of the exception's message: a blank line before one is
                # the paste's spacing (a double-spaced paste, before its spacing is established).
                rec.state = _MESSAGE
                self._continue_message(rec, line_no, kw.get("text", text))
            elif not blank:
                self._close(stream, out)
            return
        # _MESSAGE
        if blank:
            if self.double_spaced and self._blank_run == 1:
                return  # the paste's spacing; a second blank in a row (the message's own end) ends it
            rec.state = _ENDED
        elif prefixed:
            self._close(stream, out)
        elif cls is Unparsed:
            self._continue_message(rec, line_no, kw.get("text", text))
            self._claimed += 1
        elif cls is KnownMessage and kw.get("code") in CONTINUATION_CODES:
            self._continue_message(rec, line_no, kw.get("text", text))
        else:
            self._close(stream, out)

    # ------------------------------------------------------------------ helpers

    def _continue_message(self, rec: _Record, line_no: int, text: str) -> None:
        rec.message.append(text)
        rec.end_line = line_no
        if len(rec.message) > MAX_CONTINUATION_LINES:
            rec.state = _ENDED

    @staticmethod
    def _touch(rec: _Record, line_no: int, env_rank: str | None) -> None:
        rec.end_line = line_no
        if rec.rank is None and env_rank is not None:
            rec.rank = env_rank

    @staticmethod
    def _push_chain(rec: _Record) -> None:
        if rec.exc_type is not None:
            rec.chain.append((rec.exc_type, "\n".join(rec.message)))
        rec.exc_type = None
        rec.message = []
        rec.state = _BODY

    def _close(self, stream: str, out: list[Event]) -> None:
        rec = self._open.pop(stream, None)
        if rec is not None and not rec.tentative:
            out.append(self._event(rec))

    def _event(self, rec: _Record) -> Traceback:
        return Traceback(
            line=rec.line,
            end_line=rec.end_line,
            ts=rec.ts,
            rank=rec.rank,
            source=self.source,
            process=rec.process,
            exc_type=rec.exc_type,
            message="\n".join(rec.message),
            # faulthandler lists a thread's frames innermost first ("most recent call first"); a
            # Traceback's frames are outermost first whatever printed them, so every consumer's
            # "innermost frame" (the last one) is the crashing frame of a dump too.
            frames=tuple(reversed(rec.frames)) if rec.faulthandler else tuple(rec.frames),
            chain=tuple(rec.chain),
            cut=rec.exc_type is None and not rec.faulthandler,
            headless=rec.headless,
        )


# Non-blank lines in a row after exactly one blank line that make a paste double-spaced.
_DOUBLE_SPACED_RUN = 4
# How many non-blank opening lines, each followed by exactly one blank, decide a paste double-spaced
# before the assembler's own run count would (`opening_spacing`).
OPENING_SPACED_LINES = 8


def opening_spacing(blanks: list[bool], at_end: bool) -> bool | None:
    """Whether a log's opening lines (True = blank) show a double-spaced paste: every non-blank
    line followed by exactly one blank. None while undecided (more lines are needed).

    A short excerpt (two lines, a blank after each) never reaches the assembler's run of
    `_DOUBLE_SPACED_RUN`, so its message continuation lines would read as separate lines; the
    whole excerpt alternating is the evidence instead. Leading blanks are not the paste's."""
    lines = 0
    prev_blank = True
    started = False
    for blank in blanks:
        if not started:
            if blank:
                continue
            started = True
        if blank and prev_blank:
            return False  # two blanks in a row: the log's own spacing
        if not blank and not prev_blank:
            return False  # two lines in a row: not double-spaced
        if not blank:
            lines += 1
            if lines > OPENING_SPACED_LINES:
                return True
        prev_blank = blank
    if not at_end:
        return None
    # At the end of input: a whole excerpt alternating. Two lines need the paste's blank after
    # the second as well (one blank between two lines is as likely the author's).
    return lines >= 3 or (lines == 2 and prev_blank)


def _is_caret_line(text: str) -> bool:
    """`^^^^^^` / `~~~^^^~~` (Python 3.11+ position markers), whatever the indentation."""
    body = text.strip()
    return bool(body) and not body.strip("^~")


# Pasted shell lines: they end the stream's record (see the module docstring).
_SHELL_CLASSES = frozenset({ShellPrompt, ShellCommand, ShellExport, PythonReplInput})
# Traceback syntax that belongs to an unprefixed body (a prefixed one is a record of its own).
_BODY_CLASSES = frozenset({TracebackFrame, TracebackSource, ExceptionLine, ExceptionChain})
