"""Reports about a failure that are not the failure: a wrapper's verdict on the server's start-up,
and tracebacks that echo an error shown elsewhere.

A program that starts SGLang and waits for it (a CI harness's `popen_launch_server`, SGLang's own
`launch_server_process`, slime's and verl's rollout engines, `sgl.Runtime`) says what it saw when the
wait ends badly: the server was not ready in time (`TimeoutError: Server failed to start within the
timeout period`) or its process died first (`Exception: Server process terminated unexpectedly.`).
That is evidence about readiness and the outcome (the run model and the engine read it here), and
the traceback the wrapper raises with it is the wrapper's, never a crash of a server process.

Likewise a traceback whose exception — or the log record that introduced it — says the real error
is shown elsewhere (`Initialization failed. Please see the error messages above.`) is the parent's
consequence of a failure, never its root.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from logparse.model.events import Traceback, TracebackFrame, TracebackSource
from logparse.model.record import Record, record
from logparse.parsing.candidates import message_candidates
from logparse.run.spacing import text_before

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# Catalog codes (grammars/messages/) of a wrapper's verdict, by what it says of the server.
NOT_READY_CODES = ("server-not-ready-in-time",)
DIED_CODES = ("server-died-starting", "parent-echo")
# The real error is shown elsewhere (above, in the server's own log).
ECHO_CODE = "parent-echo"


@record(kw_only=False)
class StartupVerdict(Record):
    """One line where a wrapper says how the server's start-up ended."""

    line: int
    died: bool  # True: the server process died before it was healthy; False: not ready in time
    text: str


def _matches(codes: tuple[str, ...], text: str) -> bool:
    from logparse.grammar.messages import catalog

    cat = catalog()
    return any(cat[c].match(text) is not None for c in codes)


def _all_verdicts(log: ParsedLog) -> list[StartupVerdict]:
    """Every verdict line of the log, in file order (computed once per parsed log). A traceback's
    frame and source lines are code (`raise Exception("Server process terminated …")`), not a report."""
    cached = log.derived.get("startup_verdicts")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    code_lines = {e.line for e in log.shared(TracebackFrame, TracebackSource)}
    index = message_candidates(log)  # the catalog's needle prefilter, shared with the rules
    texts = {no: text for code in DIED_CODES + NOT_READY_CODES for no, text in index.get(code, ())
             if no not in code_lines}
    out: list[StartupVerdict] = []
    for no, text in texts.items():
        if _matches(DIED_CODES, text):
            out.append(StartupVerdict(no, True, text))
        elif _matches(NOT_READY_CODES, text):
            out.append(StartupVerdict(no, False, text))
    out.sort(key=lambda v: v.line)
    log.derived["startup_verdicts"] = out
    return out


def startup_verdicts(log: ParsedLog, start: int, end: int) -> list[StartupVerdict]:
    """The wrapper verdicts on lines start..end (one launch attempt), in file order."""
    found = _all_verdicts(log)
    lo = bisect_left(found, start, key=lambda v: v.line)
    hi = bisect_right(found, end, key=lambda v: v.line)
    return found[lo:hi]


def _raised(tb: Traceback) -> list[str]:
    """`Type: message` of each exception a traceback shows (its chain first, the last one last)."""
    out = [f"{t}: {m}" for t, m in tb.chain]
    if tb.exc_type:
        out.append(f"{tb.exc_type}: {tb.message}")
    return out


def is_wrapper_verdict(tb: Traceback) -> bool:
    """A traceback that raises a wrapper's verdict on the server's start-up (any exception of its
    chain): the wrapper's own traceback, not a server process crashing. One printed under a server
    process's crash header or rank tag is that process's, whatever it ends in."""
    if tb.process or tb.rank:
        return False
    return any(_matches(NOT_READY_CODES + DIED_CODES, text) for text in _raised(tb))


def echoes_failure_elsewhere(log: ParsedLog, tb: Traceback) -> bool:
    """A traceback that reports a failure shown elsewhere: its exception says the real error is
    above (`Initialization failed. Please see the error messages above.`), or so does the record
    that printed it — the text before `Traceback (most recent call last):` on its first line or the
    line before it (`logger.exception`'s message: `… error: … Please see the error messages above.`)."""
    if any(_matches((ECHO_CODE,), text) for text in _raised(tb)):
        return True
    intro = [log.texts.get(tb.line, "")]
    if not tb.headless:  # a headless traceback's previous line is not its header's record
        intro.append(text_before(log, tb.line))  # past a double-spaced paste's blank line
    return any(text and _matches((ECHO_CODE,), text) for text in intro)
