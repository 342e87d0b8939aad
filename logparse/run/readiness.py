"""Readiness, traffic, shutdown and start-up evidence of a span of lines (one launch attempt).

The single definition of "was the server ready", "did it serve anyone" and "was it starting":
the engine's outcome, the facts, the text/JSON summary and the report all read these (through
`run.model.Run`), so they cannot disagree.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from logparse.model.events import (
    Event,
    JitCompile,
    KnownMessage,
    NcclLog,
    ProcessHeader,
    ProgressBar,
    PythonWarning,
    Retraction,
    ServerReady,
    Traceback,
    TracebackFrame,
    TracebackSource,
    TracebackStart,
    UvicornLifecycle,
)
from logparse.parsing.candidates import candidates_in
from logparse.run.launches import within
from logparse.run.spacing import holds_text, text_before
from logparse.run.stage import traceback_phase
from logparse.run.vocab import (
    INFRA_PATHS,
    READY_STAGES,
    REQUEST_CODES,
    SHUTDOWN_CODES,
    SHUTDOWN_STAGES,
    STARTUP_CODES,
    STARTUP_EVENTS,
    WARMUP_PROMPT,
)
from logparse.run.warmup import is_warmup_request

# Progress-bar kinds (model.events.ProgressBar.bar_kind) that only a starting server prints.
STARTUP_BARS = frozenset({"checkpoint-load", "capture", "piecewise", "prefill-capture"})

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


def ready_marker(log: ParsedLog, start: int, end: int) -> Event | None:
    """SGLang's own ready marker (`The server is fired up and ready to roll!`) in the range: printed
    only once the warmup request came back, unlike uvicorn's start-up lines."""
    marker = within(log.shared(ServerReady), start, end)
    return marker[0] if marker else None  # type: ignore[no-any-return]


def ready_event(log: ParsedLog, start: int, end: int) -> Event | None:
    """The line that shows the server was ready: SGLang's ready marker, else uvicorn running /
    application startup complete (releases and excerpts without the marker)."""
    marker = ready_marker(log, start, end)
    if marker is not None:
        return marker
    for e in within(log.shared(UvicornLifecycle), start, end):
        if e.stage in READY_STAGES:
            return e  # type: ignore[no-any-return]
    return None


def ready_line(log: ParsedLog, start: int, end: int) -> int | None:
    """The line number of `ready_event`."""
    e = ready_event(log, start, end)
    return e.line if e is not None else None


def traffic_line(log: ParsedLog, start: int, end: int) -> int | None:
    """The first line that shows real (user) traffic: decode stats, prefill stats beyond SGLang's
    single warmup prefill (a second one, or one that is busy, reuses cached tokens or holds more
    than one request), a retraction, a request to a user endpoint, a response body printed by a
    client, a logged user request. The warmup request's own lines never count."""
    found: list[int] = []
    d = log.decode
    i = bisect_left(d.line, start)  # stats columns are in file order
    if i < len(d) and d.line[i] <= end:
        found.append(d.line[i])
    p = log.prefill
    lo, hi = bisect_left(p.line, start), bisect_right(p.line, end)
    # The warmup is one prefill per data-parallel rank (DP attention sends one request to each): a
    # second prefill line of the same DP rank is someone else's request.
    seen: set[str | None] = set()
    ranks = p.ranks.values
    for k in range(lo, hi):
        key = _dp_key(ranks[p.rank[k]])
        if key in seen:
            found.append(p.line[k])
            break
        seen.add(key)
    # SGLang prints its ready marker only after the warmup request came back (`_wait_and_warmup`;
    # with --skip-server-warmup there is none): a prefill batch after the marker is someone else's
    # request (a PD prefill server shows its traffic only as prefill lines). Uvicorn's start-up
    # lines are not this marker: the warmup runs after them.
    marker = ready_marker(log, start, end)
    if marker is not None:
        after = bisect_right(p.line, marker.line, lo, hi)
        if after < hi:
            found.append(p.line[after])
    # SGLang's warmup is one request alone: a prefill batch with another request already running or
    # queued is user traffic, even when it is the only prefill line the excerpt kept.
    running, queue = p.column("running", lo, hi), p.column("queue", lo, hi)
    busy = next((p.line[k] for k in range(lo, hi) if _pos(running[k - lo]) or _pos(queue[k - lo])), None)
    if busy is not None:
        found.append(busy)
    # Nor does the warmup batch reuse cached tokens (it is the first request on an empty prefix
    # cache) or hold more than its one request: a batch that does is someone else's.
    cached, seqs = p.column("cached_token", lo, hi), p.column("new_seq", lo, hi)
    reused = next((p.line[k] for k in range(lo, hi) if _pos(cached[k - lo]) or _pos(seqs[k - lo] - 1)), None)
    if reused is not None:
        found.append(reused)
    found.extend(e.line for e in within(log.shared(Retraction), start, end)[:1])
    a = log.access
    strings = a.strings.values
    generate = 0
    for k in range(bisect_left(a.line, start), bisect_right(a.line, end)):
        path = strings[a.path[k]] or ""
        if path in INFRA_PATHS:
            continue
        if path == "/generate":
            generate += 1
            if generate < 2:
                continue  # the first POST /generate is SGLang's own warmup request
        found.append(a.line[k])
        break
    answer = answered_request_line(log, start, end)
    if answer is not None:
        found.append(answer)
    for e in within(log.shared(KnownMessage), start, end):
        if e.code in REQUEST_CODES and WARMUP_PROMPT not in e.text:
            found.append(e.line)
            break
        if e.code == "cache-not-flushed" and _flush_refused_for_requests(e.text):
            found.append(e.line)
            break
    # A Python warning raised in the OpenAI-compatible API's request handlers (`serving_chat.py:642:
    # DeprecationWarning: max_tokens is deprecated …`): a client's /v1 request being served (SGLang's
    # own warmup posts to /generate, which never runs these handlers).
    found.extend(e.line for e in within(log.shared(PythonWarning), start, end)
                 if _OPENAI_HANDLERS in e.path.replace("\\", "/"))
    return min(found) if found else None


# The request handlers of SGLang's OpenAI-compatible API (`entrypoints/openai/serving_chat.py`,
# `serving_completions.py`, …; 0.4.7+); its `protocol.py` also defines module-level models.
_OPENAI_HANDLERS = "/entrypoints/openai/serving_"


def answered_request_line(log: ParsedLog, start: int, end: int) -> int | None:
    """The first line that is a generation endpoint's response body printed on its own (catalog
    generation-answer: curl's output, a client printing `response.json()`), an answer or an error
    answer alike: the server took a request and answered it. SGLang's own warmup never prints its
    answer as a bare line, and a traceback's source line is code, not an answer."""
    from logparse.grammar.messages import catalog

    spec = catalog()[ANSWER_CODE]
    code = {e.line for e in within(log.shared(TracebackFrame, TracebackSource), start, end)}
    for no, text in candidates_in(log, ANSWER_CODE, start, end):
        if no not in code and spec.match(text) is not None:
            return no
    return None


# Catalog code of a response body printed on a line of its own.
ANSWER_CODE = "generation-answer"


def _flush_refused_for_requests(text: str) -> bool:
    """`Cache not flushed because there are pending requests. #queue-req: Q, #running-req: R` with a
    request queued or running: a client called /flush_cache (SGLang never does while starting) while
    someone's request was in flight — the server was up and serving."""
    from logparse.grammar.messages import catalog

    fields = catalog()["cache-not-flushed-counts"].match(text) or {}
    return any(isinstance(fields.get(k), int) and fields[k] > 0 for k in ("queue", "running"))


def warmup_answered_line(log: ParsedLog, start: int, end: int) -> int | None:
    """The access line of a `POST /generate` answered 2xx: SGLang's own warmup request (or a user's)
    came back, and SGLang declares itself ready as soon as its warmup returns — so the server was up
    from that line on, even when the excerpt stops before the ready marker."""
    a = log.access
    strings = a.strings.values
    for k in range(bisect_left(a.line, start), bisect_right(a.line, end)):
        if strings[a.path[k]] == "/generate" and 200 <= a.status[k] < 300:
            return int(a.line[k])
    return None


def http_answered_line(log: ParsedLog, start: int, end: int) -> int | None:
    """The first access line answered 2xx, on any path (`/metrics`, `/health`, `/model_info`): the
    HTTP server was up — what uvicorn's own `Uvicorn running` line says, in excerpts without it."""
    a = log.access
    for k in range(bisect_left(a.line, start), bisect_right(a.line, end)):
        if 200 <= a.status[k] < 300:
            return int(a.line[k])
    return None


def _dp_key(rank: str | None) -> str | None:
    """The data-parallel part of a rank tag (`DP1 TP1 EP1` → `DP1`); None without DP."""
    if not rank:
        return None
    return next((part for part in rank.split() if part.startswith("DP")), None)


def _pos(v: float) -> bool:
    return not math.isnan(v) and v > 0


def shutdown_after(log: ParsedLog, line: int, end: int) -> int | None:
    """The first line after `line` (up to `end`) that shows the server shutting down."""
    found = [e.line for e in within(log.shared(UvicornLifecycle), line + 1, end) if e.stage in SHUTDOWN_STAGES][:1]
    found += [e.line for e in within(log.shared(KnownMessage), line + 1, end) if e.code in SHUTDOWN_CODES][:1]
    # Ctrl-C in the terminal: the interpreter's KeyboardInterrupt traceback is someone stopping it.
    found += [e.line for e in within(log.shared(Traceback), line + 1, end) if user_interrupt(log, e)][:1]
    return min(found) if found else None


# Exceptions that stop a process on purpose (Ctrl-C, sys.exit), not failures.
INTERRUPTS = frozenset({"KeyboardInterrupt", "SystemExit"})


def is_interrupt(tb: Traceback) -> bool:
    """A traceback that ends in KeyboardInterrupt or SystemExit (also printed as the last of a chain)."""
    return tb.exc_type in INTERRUPTS or bool(tb.chain and tb.chain[-1][0] in INTERRUPTS and not tb.exc_type)


def user_interrupt(log: ParsedLog, tb: Traceback) -> bool:
    """A traceback of someone stopping the program: it ends in KeyboardInterrupt or SystemExit, or
    it is cut before its exception line right where the terminal echoed Ctrl-C: `^C` glued before
    its first line or before the `Process …:` headers printed together with it, or alone on the
    line before. Each process Ctrl-C reaches prints its KeyboardInterrupt traceback, often through a
    blocking call it was waiting in (`^CProcess Process-2:` / `Process Process-3:` / `Traceback …`)."""
    if is_interrupt(tb):
        return True
    if tb.exc_type is not None:
        return False  # the exception is shown, and it is not an interrupt
    lo = tb.line
    headers = within(log.shared(ProcessHeader, TracebackStart), max(1, tb.line - _HEADER_RUN), tb.line + 1)
    for e in reversed(headers):  # the run of header lines that ends at this traceback's start
        if e.line < lo and holds_text(log, (e.end_line or e.line) + 1, lo - 1):
            break  # something between: not the run (blank lines are: a double-spaced paste)
        lo = min(lo, e.line)
        if e.wrapper is not None and e.wrapper.kind == "tty-interrupt":
            return True
    return text_before(log, lo).strip() == "^C"


# How many `Process …:` header lines in a row (one per interrupted process) may precede a traceback.
_HEADER_RUN = 8


def startup_evidence(log: ParsedLog, start: int, end: int) -> bool:
    """Whether the span shows a server being started (phases, server args, start-up messages or a
    start-up traceback)."""
    if within(log.shared(*STARTUP_EVENTS), start, end):
        return True
    # SGLang's own start-up progress bars (checkpoint shards, graph capture): a log of nothing but
    # them is a server loading its weights or capturing, whether or not a log line came with them.
    if any(b.bar_kind in STARTUP_BARS for b in within(log.shared(ProgressBar), start, end)):
        return True
    if any(e.code in STARTUP_CODES or is_warmup_request(e) for e in within(log.shared(KnownMessage), start, end)):
        return True
    # DeepGEMM's JIT pre-compile session runs while the model loads (flashinfer's JIT may also run
    # on a serving server's first requests, so only this one counts).
    if any(e.library == "deepgemm" and e.stage == "begin" for e in within(log.shared(JitCompile), start, end)):
        return True
    # NCCL creating a communicator (`ncclCommInitRank comm 0x… rank 10 nranks 16 … - Init START`,
    # NCCL_DEBUG=INFO): SGLang creates its communicators while its processes start (distributed
    # init, then the first collectives of the warmup and the graph capture).
    if any(_INIT_CALL in e.text for e in within(log.shared(NcclLog), start, end)):
        return True
    # uvicorn starting SGLang's HTTP server (`Started server process [N]`, `Waiting for application
    # startup.`): the last start-up phase, printed once the schedulers are up and before readiness.
    if any(e.stage in _HTTP_STARTING for e in within(log.shared(UvicornLifecycle), start, end)):
        return True
    return any(traceback_phase(tb) == "startup" for tb in within(log.shared(Traceback), start, end))


# NCCL's communicator-creation call, as its INFO lines name it (every NCCL 2.x release).
_INIT_CALL = "ncclCommInitRank"

# uvicorn's lifecycle stages before its `Application startup complete.`
_HTTP_STARTING = frozenset({"started", "waiting-startup"})
