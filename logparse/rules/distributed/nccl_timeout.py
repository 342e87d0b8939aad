"""nccl-timeout: an NCCL collective did not complete within the process-group timeout."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any

from logparse.model.events import (
    C10dLog,
    CppStack,
    CppTerminate,
    Event,
    KnownMessage,
    NcclWatchdogTimeout,
    Severity,
)
from logparse.model.findings import Finding
from logparse.rules.context import MessageHit, Raised, RuleContext
from logparse.rules.errors import event_at
from logparse.rules.frames import is_command_line
from logparse.rules.registry import rule
from logparse.run.ranks import rank_range

# The catalog's WorkNCCL fields, under the names the finding reports.
_WORK_KEYS = ("seq", "op", "numel_in", "numel_out", "timeout_ms", "ran_ms", "rank", "last_completed", "last_enqueued")
# How far after a watchdog line its continuation (a hard-wrapped tail, the `[PG …]` lines) reaches.
_TAIL = 6


def _work(ctx: RuleContext, text: str) -> dict[str, Any]:
    got = ctx.collect("nccl-work-fields", text) or {}
    return {k: got[k] for k in _WORK_KEYS if got.get(k) is not None}


def _timeout_fields(ctx: RuleContext, e: Event) -> tuple[dict[str, Any], list[Event]]:
    """op / seq / timeout_ms / ran_ms / rank of a watchdog timeout, completing a hard-wrapped line from
    its tail (`nccl-watchdog-tail`) and the following `[PG …] … last completed NCCL work` lines."""
    out: dict[str, Any] = {}
    extra: list[Event] = []
    if isinstance(e, NcclWatchdogTimeout):
        for key, attr in (("op", "op"), ("seq", "seq"), ("timeout_ms", "timeout_ms"), ("ran_ms", "ran_ms"),
                          ("rank", "nccl_rank"), ("numel_in", "numel_in"), ("numel_out", "numel_out")):
            v = getattr(e, attr)
            if v is not None:
                out[key] = v
    for k, v in _work(ctx, ctx.text(e.line)).items():
        out.setdefault(k, v)
    covered = {e.line}
    events = ctx.log.events
    for i in range(bisect_right(events, e.line, key=lambda ev: ev.line), len(events)):
        x = events[i]
        if x.line > e.line + _TAIL:
            break
        if isinstance(x, KnownMessage) and x.code == "nccl-watchdog-tail":
            extra.append(x)
            for k in ("timeout_ms", "ran_ms"):
                if x.fields.get(k) is not None:
                    out.setdefault(k, x.fields[k])
        elif isinstance(x, C10dLog) and ("NCCL work" in x.text or "watchdog" in x.text.lower()):
            extra.append(x)
            covered.add(x.line)
            if (last := _work(ctx, x.text).get("last_completed")) is not None:
                out.setdefault("last_completed", last)
    # Lines the grammar kept as text only (a wrapped tail, a c10d line cut mid-word).
    for n in range(e.line + 1, e.line + _TAIL + 1):
        if n in covered or not (t := ctx.text(n)):
            continue
        for k, v in _work(ctx, t).items():
            if k in ("timeout_ms", "ran_ms", "last_completed"):
                out.setdefault(k, v)
    return out, extra


def _timeout_message(f: dict[str, Any]) -> str:
    op = f.get("op", "a collective")
    seq = f" (SeqNum={f['seq']})" if "seq" in f else ""
    ran = f" ran {f['ran_ms']} ms" if "ran_ms" in f else " did not complete"
    limit = f" against Timeout(ms)={f['timeout_ms']}" if "timeout_ms" in f else ""
    last = f"; the last completed work on this rank is {f['last_completed']}" if "last_completed" in f else ""
    return f"NCCL {op}{seq}{ran}{limit}: the torch NCCL watchdog took the process down{last}"


def _timeout_remedy(f: dict[str, Any]) -> str:
    seq = f" SeqNum={f['seq']}" if "seq" in f else ""
    if "timeout_ms" in f:
        new = max(60, 2 * f["timeout_ms"] // 1000)
        raise_it = f"`--dist-timeout {new}` (seconds; it was {f['timeout_ms'] // 1000})"
    else:
        raise_it = "a higher `--dist-timeout`"
    return (
        f"find the rank that never joined the collective{seq}: its log shows the first error or where it hangs "
        f"(a dead or stuck peer, a slow network); {raise_it} only if the operation is legitimately slow; "
        "`NCCL_DEBUG=INFO` shows the transport"
    )


def _fingerprint(f: dict[str, Any]) -> str:
    return f"nccl-timeout|{f.get('op')}|{f.get('seq')}"


@rule(
    code="DIST001",
    name="nccl-timeout",
    family="distributed",
    severity=Severity.ERROR,
    needs=("events",),
    hang=True,
    follow_on=True,
)
def nccl_timeout(ctx: RuleContext) -> Iterator[Finding]:
    """An NCCL collective did not complete within the process-group timeout.

    **What it means**
    torch's ProcessGroupNCCL watchdog saw a collective (all-reduce, all-gather, …) run past its
    timeout: `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=…, OpType=…, …,
    Timeout(ms)=…) ran for … milliseconds`, followed by `terminate called after throwing an instance
    of 'c10::DistBackendError'` (a C++ stack through `checkTimeout` / `watchdogHandler`), or a
    `DistBackendError` naming the timeout. Newer torch also (or only) prints its flight recorder's
    `Received a dump signal due to a collective timeout from this local rank | rank N … Last
    enqueued NCCL work: …, last completed NCCL work: …` on every rank of every node (a rank that only
    saw another's signal prints `Observed flight recorder dump signal from another rank via
    TCPStore`). Without these, torch's `Timeout at NCCL work: N` names the work, and the heartbeat
    monitor's `Heartbeat monitor timed out!` / `ProcessGroupNCCL's watchdog got stuck for N seconds`
    say the watchdog itself hung in a collective or CUDA call. The finding reports the collective,
    its sequence number and the timeout.

    **Why it matters**
    One rank waited for peers that never arrived: a peer crashed, hangs, or is far slower (a network
    problem, a rank stuck in a JIT compile or a long load). The watchdog then aborts the process, so
    the run hangs for the whole timeout and then dies.

    **Example**
    ```
    [rank4]:[E304 12:54:52.122900428 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=151721, OpType=_ALLGATHER_BASE, NumelIn=8080, NumelOut=129280, Timeout(ms)=600000) ran for 600049 milliseconds before timing out.
    ```

    **Fix**
    Find the peer that did not join (its log shows the first error); raise `--dist-timeout` only when
    the operation is legitimately slow; check the network and run with `NCCL_DEBUG=INFO`.
    """
    found = False
    for e in ctx.log.of(NcclWatchdogTimeout):
        fields, extra = _timeout_fields(ctx, e)
        found = True
        yield ctx.finding("nccl-timeout", _timeout_message(fields), _timeout_remedy(fields), events=[e, *extra],
                          data={"nccl_timeout": fields}, fingerprint=_fingerprint(fields))
    if not found:
        # A watchdog line the grammar did not recognise (markdown, wrapping): the catalog finds it.
        for hit in ctx.message_lines("nccl-watchdog-caught"):
            fields, extra = _timeout_fields(ctx, Event(line=hit.line, end_line=hit.line))
            found = True
            yield ctx.finding("nccl-timeout", _timeout_message(fields), _timeout_remedy(fields), events=extra,
                              lines=[(hit.line, hit.line)], data={"nccl_timeout": fields},
                              fingerprint=_fingerprint(fields))
    dumps = list(_dump_signals(ctx))
    if dumps and not found:
        found = True
        yield _dump_finding(ctx, dumps)
    elif dumps:
        ctx.claimed.update(line for line, _f, _r in dumps)  # the same timeout, told by the flight recorder
    if not found:
        # The heartbeat monitor's lines (`Heartbeat monitor timed out!`, `watchdog got stuck for N
        # seconds`) kept as text: the NCCL watchdog itself hung in a collective or a CUDA call.
        hang = [h for h in ctx.message_lines("nccl-watchdog-hang") if not is_command_line(ctx, h.line)]
        if hang:
            found = True
            yield _heartbeat_finding(ctx, hang)
    if not found:
        # `Timeout at NCCL work: N` without the WorkNCCL line (cut, or another torch release's order).
        work = [h for h in ctx.message_lines("nccl-work-timeout") if not is_command_line(ctx, h.line)]
        if work:
            found = True
            yield _work_timeout_finding(ctx, work)
    yield from _native_abort(ctx, found)


def _work_timeout_finding(ctx: RuleContext, hits: list[MessageHit]) -> Finding:
    """One finding for torch's `Timeout at NCCL work: N` lines: the work's sequence number and rank."""
    first = hits[0]
    fields: dict[str, Any] = {"seq": first.fields["seq"]}
    for k, v in _work(ctx, ctx.text(first.line)).items():
        if k in ("rank", "last_completed", "last_enqueued"):
            fields.setdefault(k, v)
    ev = event_at(ctx, first.line)
    if isinstance(ev, C10dLog) and ev.torch_rank is not None:
        fields.setdefault("rank", ev.torch_rank)
    on = f" on rank {fields['rank']}" if "rank" in fields else ""
    last = f"; the last completed work is {fields['last_completed']}" if "last_completed" in fields else ""
    message = (f"NCCL work SeqNum={fields['seq']} timed out{on}: torch's NCCL watchdog reports `Timeout at NCCL "
               f"work`{last} (the WorkNCCL line with the collective is not in the excerpt)")
    return ctx.finding("nccl-timeout", message, _timeout_remedy(fields), lines=[(h.line, h.line) for h in hits[:32]],
                       data={"nccl_timeout": fields}, fingerprint=_fingerprint(fields))


def _heartbeat_finding(ctx: RuleContext, hits: list[MessageHit]) -> Finding:
    """One finding for the watchdog-hang lines of every rank: which ranks, and how long it was stuck."""
    ranks: set[int] = set()
    stuck = [h.fields["stuck_s"] for h in hits if isinstance(h.fields.get("stuck_s"), int)]
    for h in hits:
        ev = event_at(ctx, h.line)
        rank = ev.torch_rank if isinstance(ev, C10dLog) else _work(ctx, ctx.text(h.line)).get("rank")
        if isinstance(rank, int):
            ranks.add(rank)
    fields: dict[str, Any] = {"watchdog_ranks": sorted(ranks)}
    if stuck:
        fields["stuck_s"] = max(stuck)
    who = (f"rank {ranks.pop()}" if len(ranks) == 1 else
           f"ranks {rank_range(f'rank{r}' for r in sorted(ranks)).replace('rank', '')}" if ranks else "this process")
    how = f" for {max(stuck)} s" if stuck else ""
    message = (f"torch's NCCL watchdog stopped making progress{how} on {who} (heartbeat monitor timed out): a "
               "collective or a CUDA call hung, and the process is terminated after its debug dump")
    remedy = _timeout_remedy(fields) + ("; the heartbeat budget is `TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC` (raise it only "
                                        "if the wait is legitimate)")
    return ctx.finding("nccl-timeout", message, remedy, lines=[(h.line, h.line) for h in hits[:32]],
                       data={"nccl_timeout": fields}, ranks=[f"rank{r}" for r in fields["watchdog_ranks"]],
                       fingerprint="nccl-timeout|heartbeat")


def _dump_signals(ctx: RuleContext) -> Iterator[tuple[int, dict[str, Any], int | None]]:
    """(line, fields, global rank) of every flight-recorder dump-signal line."""
    for hit in ctx.message_lines("nccl-dump-signal"):
        fields = dict(hit.fields)
        fields.update(_work(ctx, ctx.text(hit.line)))
        ev = event_at(ctx, hit.line)
        rank = ev.torch_rank if isinstance(ev, C10dLog) and ev.torch_rank is not None else fields.get("rank")
        yield hit.line, fields, rank


def _dump_finding(ctx: RuleContext, dumps: list[tuple[int, dict[str, Any], int | None]]) -> Finding:
    """One finding for the dump-signal lines of every rank (of every node): which rank timed out
    first (the `from rank N` they name, or the ranks that saw it locally) and the NCCL work reached."""
    ranks = sorted({r for _, _, r in dumps if r is not None})
    local = sorted({r for _, f, r in dumps if ("local" in f or "local_cut" in f) and r is not None})
    named = sorted({f["from_rank"] for _, f, _ in dumps if f.get("from_rank") is not None})
    completed = [f["last_completed"] for _, f, _ in dumps if f.get("last_completed") is not None]
    enqueued = [f["last_enqueued"] for _, f, _ in dumps if f.get("last_enqueued") is not None]
    fields: dict[str, Any] = {"dump_signal_ranks": ranks}
    if named or local:
        fields["timed_out_ranks"] = sorted(set(named) | set(local))
    if completed:
        fields["last_completed"] = min(completed)
    if enqueued:
        fields["last_enqueued"] = max(enqueued)
    noun = "rank" if len(ranks) == 1 else "ranks"
    who = f"{noun} {rank_range(f'rank{r}' for r in ranks).replace('rank', '')}" if ranks else "this process"
    origin = ""
    if fields.get("timed_out_ranks"):
        origin = f"; the timeout was first seen on rank(s) {', '.join(map(str, fields['timed_out_ranks']))}"
    elif any("remote" in f for _, f, _ in dumps):
        # `Observed flight recorder dump signal from another rank`: the peer that timed out set the
        # TCPStore's dump key; its own log (another node, often) names the collective.
        origin = "; it was signalled by another rank through the TCPStore (that rank's log shows the collective)"
    work = ""
    if completed:
        work = f"; last completed NCCL work {min(completed)}" + (f", last enqueued {max(enqueued)}" if enqueued else "")
    message = (f"A collective timed out: torch's NCCL flight recorder on {who} received a dump signal due to a "
               f"collective timeout{origin}{work}")
    return ctx.finding("nccl-timeout", message, _timeout_remedy(fields), lines=[(n, n) for n, _, _ in dumps[:32]],
                       data={"nccl_timeout": fields}, ranks=[f"rank{r}" for r in ranks],
                       fingerprint="nccl-timeout|dump-signal")


# How far after its watchdog stack (`Exception raised from checkTimeout …` and its frames) the
# `terminate called after throwing … DistBackendError` line comes.
_STACK_TO_TERMINATE = 12


def _after_watchdog_stack(t: CppTerminate, stack_lines: list[int]) -> bool:
    """Whether a terminate follows one of the watchdog stacks (their lines, sorted): every rank
    that aborts prints its own stack and terminate, so each terminate is matched to the stack
    before it, not to the last. Bisected: a scan of every stack per terminate was quadratic."""
    k = bisect_left(stack_lines, t.line - _STACK_TO_TERMINATE)
    return k < len(stack_lines) and stack_lines[k] < t.line


# The message families only NCCL's process group prints (beside nccl-error): its watchdog's
# collective timeout and its work counter ('Timeout at NCCL work: N').
_NCCL_ONLY_CODES = ("nccl-error", "nccl-watchdog-caught", "nccl-work-timeout")


def _is_nccl_exception(ctx: RuleContext, r: Raised) -> bool:
    """Whether an exception is NCCL's: torch raises NCCL failures as DistBackendError (torch ≥ 2.1),
    the message is one only ProcessGroupNCCL prints, or it was raised in torch's distributed code.
    (Not the word NCCL in the text: `NCCL_DEBUG` or `NCCL_TIMEOUT` in another timeout's message.)"""
    if "DistBackendError" in r.exc_type or any(ctx.match(code, r.text) is not None for code in _NCCL_ONLY_CODES):
        return True
    return r.traceback is not None and any("torch/distributed/" in f.path.replace("\\", "/") for f in r.traceback.frames)


def _native_abort(ctx: RuleContext, found: bool) -> Iterator[Finding]:
    """The C++ side (`checkTimeout` stack, the DistBackendError terminate), then a Python exception
    naming the timeout, when no watchdog line told it."""
    stack: list[CppStack] = [e for e in ctx.unclaimed(ctx.log.of(CppStack))
                             if ctx.match("nccl-watchdog-frame", e.text) is not None]
    terms: list[CppTerminate] = ctx.unclaimed(ctx.log.of(CppTerminate))
    stack_lines = sorted(s.line for s in stack)
    timeout_terms = [
        t for t in terms
        if ctx.match("nccl-collective-timeout", t.what) is not None
        or ("DistBackendError" in (t.exc_type or "") and _after_watchdog_stack(t, stack_lines))
    ]
    # `what():` on the line after the terminate belongs to it.
    # By line (a scan of every terminate per terminate, and a list membership test, made this
    # quadratic on a log of many aborts); "already taken" compares only within the line, since
    # equal events have equal lines.
    by_line: dict[int, list[CppTerminate]] = {}
    for x in terms:
        by_line.setdefault(x.line, []).append(x)
    taken: dict[int, list[CppTerminate]] = {}
    for t in timeout_terms:
        taken.setdefault(t.line, []).append(t)
    for t in list(timeout_terms):
        for x in by_line.get(t.line + 1, ()):
            if not x.exc_type and x not in taken.get(x.line, ()):
                timeout_terms.append(x)
                taken.setdefault(x.line, []).append(x)
    if stack or timeout_terms:
        evs: list[Event] = [*stack, *timeout_terms]
        if found:
            # Already reported from the watchdog line: the C++ abort is its tail, claim it quietly.
            ctx.claimed.update(n for e in evs for n in range(e.line, (e.end_line or e.line) + 1))
            return
        fields = _work(ctx, " ".join(t.what for t in timeout_terms if t.what))
        where = f" on NCCL rank {fields['rank']}" if "rank" in fields else ""
        message = (
            f"The NCCL watchdog aborted the process{where}: `checkTimeout` raised c10::DistBackendError (a "
            "collective timed out" + (f": {fields.get('op', '?')} SeqNum={fields['seq']}" if "seq" in fields else "")
            + "); the watchdog line with the collective is not in the excerpt"
        )
        yield ctx.finding("nccl-timeout", message, _timeout_remedy(fields), events=evs, data={"nccl_timeout": fields})
        return
    for r in ctx.raised():
        if r.event.line in ctx.claimed:
            continue
        if _is_nccl_exception(ctx, r) and ctx.match("nccl-collective-timeout", r.text) is not None:
            fields = _work(ctx, r.text)
            yield ctx.finding("nccl-timeout", f"NCCL collective timed out: {r.exc_type}: {r.message.strip()[:200]}",
                              _timeout_remedy(fields), events=[r.event], data={"nccl_timeout": fields})
