"""other-rank-failed: a rank reports that a peer failed; the real error is on another rank or node."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import C10dLog, Event, KnownMessage, Severity, UvicornLifecycle
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.errors import event_at
from logparse.rules.registry import rule
from logparse.run.ranks import rank_range
from logparse.run.vocab import SHUTDOWN_CODES, SHUTDOWN_STAGES

_REMEDY = "look at the log of the rank / node named here for the first error; this line is only its consequence"
_PEER_KEYS = ("peer", "peer_check", "peer_failed", "peer_logs")


def _peer(fields: dict[str, Any]) -> int | None:
    return next((fields[k] for k in _PEER_KEYS if isinstance(fields.get(k), int)), None)


@rule(
    code="DIST004",
    name="other-rank-failed",
    family="distributed",
    severity=Severity.INFO,
    needs=("events",),
    follow_on=True,
)
def other_rank_failed(ctx: RuleContext) -> Iterator[Finding]:
    """A rank reports that a peer failed: the real error is on another rank or node.

    **What it means**
    This rank did nothing wrong itself; it noticed that a peer is gone: `TP rank N could finish the
    model loading, but there are other ranks that didn't`, a Gloo `monitoredBarrier` that `received
    errors while waiting for send/recv from rank 0` (`Please check rank 0 logs`), the TCPStore
    connection reset by its server (rank 0's node went away), a `DistBackendError` saying the
    NCCL unique id could not be fetched from rank N's key-value store (rank N died first), or the
    store's server on rank 0 timing out with only some ranks joined (`DistStoreError: Timed out after
    N seconds waiting for clients. J/M clients joined.`: the others never reached the rendezvous).

    **Why it matters**
    These lines are consequences and never the root cause. When they are the only failure in a log,
    the log of the named rank or of the master node holds the error to fix.

    **Example**
    ```
    [rank8]:[W516 12:46:57.499514954 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer
    ```

    **Fix**
    Read the log of the rank or node it points at (rank 0 / the node at `--dist-init-addr` for the
    TCPStore) and fix the first error there.
    """
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen:
            continue
        if (loaded := ctx.match("peer-ranks-not-loaded", r.text)) is not None:
            seen.add(r.event.line)
            me = loaded.get("rank")
            yield ctx.finding(
                "other-rank-failed",
                f"TP rank {me if me is not None else '?'} finished loading the model but other ranks did not: the real "
                "error is on another rank or node (its log shows the first traceback — e.g. a rank that ran "
                "out of memory or could not read the checkpoint); this log only shows the consequence",
                "read the other ranks' / nodes' logs for the first error (on multi-node runs, every node's "
                "log); this error is only the consequence",
                events=[r.event],
                consequence=True,
                data={"reporting_rank": me, "look_at": "other ranks"},
            )
        elif (barrier := ctx.match("barrier-peer-failed", r.text)) is not None:
            seen.add(r.event.line)
            yield _barrier(ctx, [r.event], [], _peer(barrier))
        elif (store := ctx.match("nccl-unique-id-unreachable", r.text)) is not None:
            seen.add(r.event.line)
            yield _unique_id(ctx, r.event, store)
        elif (missing := ctx.match("store-clients-missing", r.text)) is not None:
            seen.add(r.event.line)
            yield _clients_missing(ctx, r.event, missing)
    for hit in ctx.message_lines("barrier-peer-failed"):
        yield _barrier(ctx, [], [(hit.line, hit.line)], _peer(hit.fields))
    yield from _tcpstore(ctx)


def _tcpstore(ctx: RuleContext) -> Iterator[Finding]:
    """TCPStore connections lost before any graceful shutdown: the store's server (rank 0) went away.
    After a graceful shutdown (SIGTERM, uvicorn's "Shutting down") the store's server exits first
    and the other ranks' resets are only teardown noise."""
    shutdown = _graceful_shutdown_line(ctx)
    tcp = [h for h in ctx.message_lines("tcpstore-lost") if shutdown is None or h.line < shutdown]
    if not tcp:
        return
    ranks: set[int] = set()
    for h in tcp:
        ev = event_at(ctx, h.line)
        if isinstance(ev, C10dLog) and ev.torch_rank is not None:
            ranks.add(ev.torch_rank)
        for tag in ctx.occurrences("torch-rank-tag", ctx.text(h.line)):
            rank = tag.get("rank", tag.get("rank_prefix"))
            if isinstance(rank, int):
                ranks.add(rank)
    rank_list = sorted(ranks)
    who = (f"ranks {rank_range(f'rank{r}' for r in rank_list).replace('rank', '')}" if rank_list
           else "this node's ranks")
    first = tcp[0].fields
    reason = str(first.get("error") or first.get("reason") or "connection lost").strip()
    yield ctx.finding(
        "other-rank-failed",
        f"The TCPStore connection was lost on {who} ({reason}): its server runs with "
        "global rank 0 on the master node (`--dist-init-addr`), which went away first. The real error "
        "is on another node: look at the log of the node that hosts rank 0",
        "read the master node's (rank 0) log for the first error; this is only the consequence",
        lines=[(h.line, h.line) for h in tcp[:32]],
        consequence=True,
        data={"lost_ranks": rank_list, "look_at": "rank 0 / master node"},
        ranks=[f"rank{r}" for r in rank_list],
    )


def _graceful_shutdown_line(ctx: RuleContext) -> int | None:
    for e in ctx.log.events:
        if isinstance(e, UvicornLifecycle) and e.stage in SHUTDOWN_STAGES:
            return e.line
        if isinstance(e, KnownMessage) and e.code in SHUTDOWN_CODES:
            return e.line
    return None


def _unique_id(ctx: RuleContext, event: Event, store: dict[str, Any]) -> Finding:
    """A rank could not read the NCCL unique id from the store of the rank that creates it: that
    rank failed (or its node went away) before publishing it — its log holds the error."""
    peer = store.get("peer")
    who = f"rank {peer}" if isinstance(peer, int) else "the rank that creates it"
    error = str(store.get("error") or "").strip()
    return ctx.finding(
        "other-rank-failed",
        f"Setting up the NCCL communicator failed because the NCCL unique id could not be fetched from {who}'s "
        f"key-value store ({error or 'no answer'}): {who} failed or went away first — the real error is in its log",
        f"read the log of {who} (global rank numbering; on multi-node runs, the node that hosts it) for the first "
        "error; this error is only the consequence",
        events=[event],
        consequence=True,
        data={"look_at": who, "store_error": error or None},
    )


def _clients_missing(ctx: RuleContext, event: Event, store: dict[str, Any]) -> Finding:
    """The TCPStore server (the rendezvous of global rank 0, at `--dist-init-addr` on multi-node runs)
    timed out waiting for the other ranks: they never reached `init_process_group`. Rank 0 only sees
    that they are absent — they failed or hung before it, or their node cannot reach this address."""
    joined, expected, seconds = store.get("joined"), store.get("expected"), store.get("seconds")
    count = f"{joined}/{expected}" if isinstance(joined, int) and isinstance(expected, int) else "not all"
    after = f" after {seconds} s" if isinstance(seconds, int) else ""
    return ctx.finding(
        "other-rank-failed",
        f"The torch.distributed rendezvous gave up{after} with only {count} ranks joined: the store's server "
        "(global rank 0) waited for the others, which never connected — they failed or hung before "
        "`init_process_group`, or (multi-node) their node cannot reach this node's `--dist-init-addr` port",
        "read the other ranks' / nodes' logs for the first error; on multi-node runs start every node with the "
        "same `--nnodes` and `--dist-init-addr` (a distinct `--node-rank` each) and open that port between the "
        "nodes; this error is only the consequence",
        events=[event],
        consequence=True,
        data={"look_at": "the ranks that did not join", "joined": joined, "expected": expected,
              "timeout_s": seconds},
    )


def _barrier(ctx: RuleContext, events: list[Event], lines: list[tuple[int, int]], peer: int | None) -> Finding:
    who = f"rank {peer}" if peer is not None else "a peer rank"
    return ctx.finding(
        "other-rank-failed",
        f"A barrier on this rank received errors from {who}: the real error is on {who} — check its log",
        _REMEDY,
        events=events,
        lines=lines,
        consequence=True,
        data={"look_at": who},
    )
