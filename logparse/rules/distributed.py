"""Rules of the 'distributed' family (see shared/diagnoses.md): NCCL collective timeouts and errors,
custom all-reduce availability, and failures that a rank reports about its peers."""

from __future__ import annotations

import re
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
    UvicornLifecycle,
)
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule

# --------------------------------------------------------------------------- nccl-timeout

_WD_TEXT = lazy_compile(r"Watchdog caught collective operation timeout")
_WORK = lazy_compile(r"(SeqNum|OpType|NumelIn|NumelOut|Timeout\(ms\))=([\w.]+)(?=[,)])")
_RAN = lazy_compile(r"ran for (\d+) milliseconds")
_RANK = lazy_compile(r"\bRank (\d+)\]")
_LAST = lazy_compile(r"last completed NCCL work: (\d+)")
_TIMEOUT_TEXT = lazy_compile(
    r"Watchdog caught collective operation timeout|checkTimeout|Timeout at NCCL work|"
    r"collective operation timeout|NCCL timeout|timed out after \d+ ?ms",
    re.IGNORECASE,
)


def _timeout_fields(ctx: RuleContext, e: Event) -> tuple[dict[str, Any], list[Event]]:
    """op / seq / timeout_ms / ran_ms / rank of a watchdog timeout, completing a hard-wrapped line from
    its tail (`nccl-watchdog-tail`) and the following `[PG …] … last completed NCCL work` lines."""
    out: dict[str, Any] = {}
    extra: list[Event] = []
    if isinstance(e, NcclWatchdogTimeout):
        for key, attr in (
            ("op", "op"),
            ("seq", "seq"),
            ("timeout_ms", "timeout_ms"),
            ("ran_ms", "ran_ms"),
            ("rank", "nccl_rank"),
        ):
            v = getattr(e, attr)
            if v is not None:
                out[key] = v
    text = ctx.text(e.line)
    for key, value in _WORK.findall(text):
        k = {
            "SeqNum": "seq",
            "OpType": "op",
            "Timeout(ms)": "timeout_ms",
            "NumelIn": "numel_in",
            "NumelOut": "numel_out",
        }[key]
        if k not in out:
            out[k] = value if k == "op" else int(value) if value.isdigit() else None
    if "ran_ms" not in out and (m := _RAN.search(text)):
        out["ran_ms"] = int(m.group(1))
    if "rank" not in out and (m := _RANK.search(text)):
        out["rank"] = int(m.group(1))
    following = [x for x in ctx.log.events if e.line < x.line <= e.line + 6]
    for x in following:
        if isinstance(x, KnownMessage) and x.code == "nccl-watchdog-tail":
            extra.append(x)
            for k in ("timeout_ms", "ran_ms"):
                if k not in out and x.fields.get(k) is not None:
                    out[k] = x.fields[k]
        elif isinstance(x, C10dLog) and ("NCCL work" in x.text or "watchdog" in x.text.lower()):
            extra.append(x)
            if m := _LAST.search(x.text):
                out.setdefault("last_completed", int(m.group(1)))
    # Lines the grammar kept as text only (a wrapped tail, a c10d line cut mid-word).
    for n in range(e.line + 1, e.line + 7):
        t = ctx.text(n)
        if not t:
            continue
        if "timeout_ms" not in out and (m := re.search(r"Timeout\(ms\)=(\d+)\)", t)):
            out["timeout_ms"] = int(m.group(1))
        if "ran_ms" not in out and (m := _RAN.search(t)):
            out["ran_ms"] = int(m.group(1))
        if "last_completed" not in out and (m := re.search(r"last completed NCCL work: (\d+)", t)):
            out["last_completed"] = int(m.group(1))
    return {k: v for k, v in out.items() if v is not None}, extra


def _timeout_message(f: dict[str, Any]) -> str:
    op = f.get("op", "a collective")
    seq = f" (SeqNum={f['seq']})" if "seq" in f else ""
    ran = f" ran {f['ran_ms']} ms" if "ran_ms" in f else " did not complete"
    limit = f" against Timeout(ms)={f['timeout_ms']}" if "timeout_ms" in f else ""
    last = (
        f"; the last completed work on this rank is {f['last_completed']}"
        if "last_completed" in f
        else ""
    )
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
    `DistBackendError` naming the timeout. The finding reports the collective, its sequence number
    and the timeout.

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
    fields: dict[str, Any]
    for e in ctx.log.of(NcclWatchdogTimeout):
        fields, extra = _timeout_fields(ctx, e)
        found = True
        yield ctx.finding(
            "nccl-timeout",
            _timeout_message(fields),
            _timeout_remedy(fields),
            events=[e, *extra],
            data={"nccl_timeout": fields},
            fingerprint=f"nccl-timeout|{fields.get('op')}|{fields.get('seq')}",
        )
    if not found:
        # A watchdog line the grammar did not recognise (markdown, wrapping): match the text.
        for no, _m in list(ctx.texts_matching(_WD_TEXT)):
            fake = Event(line=no, end_line=no)
            fields, extra = _timeout_fields(ctx, fake)
            found = True
            yield ctx.finding(
                "nccl-timeout",
                _timeout_message(fields),
                _timeout_remedy(fields),
                events=extra,
                lines=[(no, no)],
                data={"nccl_timeout": fields},
                fingerprint=f"nccl-timeout|{fields.get('op')}|{fields.get('seq')}",
            )
    # The C++ side: `checkTimeout` stack and the DistBackendError terminate.
    stack: list[CppStack] = [
        e
        for e in ctx.unclaimed(ctx.log.of(CppStack))
        if "checkTimeout" in e.text or "watchdogHandler" in e.text or "ncclCommWatchdog" in e.text
    ]
    terms: list[CppTerminate] = ctx.unclaimed(ctx.log.of(CppTerminate))
    timeout_terms = [
        t
        for t in terms
        if _TIMEOUT_TEXT.search(t.what)
        or (
            stack and "DistBackendError" in (t.exc_type or "") and 0 < t.line - stack[-1].line <= 12
        )
    ]
    # `what():` on the line after the terminate belongs to it.
    for t in list(timeout_terms):
        timeout_terms.extend(
            x for x in terms if x.line == t.line + 1 and not x.exc_type and x not in timeout_terms
        )
    if stack or timeout_terms:
        evs: list[Event] = [*stack, *timeout_terms]
        if found:
            # Already reported from the watchdog line: the C++ abort is its tail, claim it quietly.
            ctx.claimed.update(n for e in evs for n in range(e.line, (e.end_line or e.line) + 1))
            return
        what = " ".join(t.what for t in timeout_terms if t.what)
        fields = {}
        if m := _RANK.search(what):
            fields["rank"] = int(m.group(1))
        for key, value in _WORK.findall(what):
            if key == "SeqNum" and value.isdigit():
                fields["seq"] = int(value)
            elif key == "OpType":
                fields["op"] = value
            elif key == "Timeout(ms)" and value.isdigit():
                fields["timeout_ms"] = int(value)
        where = f" on NCCL rank {fields['rank']}" if "rank" in fields else ""
        message = (
            f"The NCCL watchdog aborted the process{where}: `checkTimeout` raised c10::DistBackendError (a "
            "collective timed out"
            + (f": {fields['op']} SeqNum={fields['seq']}" if "seq" in fields else "")
            + "); the watchdog line with the collective is not in the excerpt"
        )
        yield ctx.finding(
            "nccl-timeout",
            message,
            _timeout_remedy(fields),
            events=evs,
            data={"nccl_timeout": fields},
        )
        return
    for r in ctx.raised():
        if r.event.line in ctx.claimed:
            continue
        if ("DistBackendError" in r.exc_type or "NCCL" in r.text) and _TIMEOUT_TEXT.search(r.text):
            fields = {}
            yield ctx.finding(
                "nccl-timeout",
                f"NCCL collective timed out: {r.exc_type}: {r.message.strip()[:200]}",
                _timeout_remedy(fields),
                events=[r.event],
                data={"nccl_timeout": fields},
            )


# --------------------------------------------------------------------------- nccl-error

_NCCL_ERR = lazy_compile(
    r"NCCL error|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclInvalidUsage|"
    r"ncclRemoteError|ncclInvalidArgument|unhandled system error|unhandled cuda error|"
    r"ncclCommInitRank\w* failed|Failed to (?:initialize|init) NCCL|NCCL communicator was aborted|"
    r"NCCL WARN .*(?:failed|error)",
    re.IGNORECASE,
)


def _nccl_kind(text: str) -> tuple[str, str]:
    t = text.lower()
    if "unhandled system error" in t or "ncclsystemerror" in t:
        return "system", (
            "a system call failed inside NCCL: often /dev/shm too small in a container (docker "
            "`--shm-size 16g` or `--ipc=host`), the wrong network interface (`NCCL_SOCKET_IFNAME=<iface>`) "
            "or a broken InfiniBand setup (test with `NCCL_IB_DISABLE=1`)"
        )
    if "unhandled cuda error" in t or "ncclunhandledcudaerror" in t:
        return "cuda", (
            "a CUDA call failed inside NCCL: P2P between these GPUs may be broken (test with "
            "`NCCL_P2P_DISABLE=1`), or the driver / NCCL versions do not match"
        )
    if "remote" in t or "connection" in t or "socket" in t:
        return "remote", (
            "a peer went away or the network failed: check the other node's log first, then "
            "`NCCL_SOCKET_IFNAME` and firewalls"
        )
    if "internal error" in t or "ncclinternalerror" in t:
        return (
            "internal",
            "an NCCL internal error: check that every rank runs the same NCCL version",
        )
    if "invalid usage" in t or "ncclinvalidusage" in t:
        return (
            "usage",
            "NCCL was called inconsistently across ranks (mismatched collectives or device ids)",
        )
    return "unknown", "the log does not say which NCCL call failed"


@rule(
    code="DIST002",
    name="nccl-error",
    family="distributed",
    severity=Severity.ERROR,
    needs=("tracebacks",),
    follow_on=True,
)
def nccl_error(ctx: RuleContext) -> Iterator[Finding]:
    """NCCL reported an error: communicator init failed or a collective failed (not a timeout).

    **What it means**
    An NCCL call returned an error: `NCCL error … unhandled system error` / `unhandled cuda error`,
    `ncclSystemError`, `ncclInternalError`, `ncclRemoteError`, a failing `ncclCommInitRank`, or a
    `DistBackendError` that is not a watchdog timeout.

    **Why it matters**
    Tensor-parallel ranks cannot talk to each other, so the server cannot start (init failures) or
    dies mid-run. The message alone rarely says why; NCCL's own debug output does.

    **Example**
    ```
    torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
    ```

    **Fix**
    Run with `NCCL_DEBUG=INFO` to see the failing call; then, by kind: shared memory (`--shm-size` /
    `--ipc=host` in containers), the network interface (`NCCL_SOCKET_IFNAME`), InfiniBand
    (`NCCL_IB_DISABLE=1` to test) or P2P (`NCCL_P2P_DISABLE=1` to test).
    """
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen or r.event.line in ctx.claimed or not _NCCL_ERR.search(r.text):
            continue
        if _TIMEOUT_TEXT.search(r.text):
            continue  # nccl-timeout's
        seen.add(r.event.line)
        kind, why = _nccl_kind(r.text)
        m = re.search(r"NCCL version ([\d.]+)", r.text)
        data: dict[str, Any] = {"kind": kind, "exception_type": r.exc_type}
        if m:
            data["nccl_version"] = m.group(1).rstrip(".")
        yield ctx.finding(
            "nccl-error",
            f"NCCL error ({kind}): {r.exc_type}: {r.message.strip()[:220]}",
            f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}",
            events=[r.event],
            data=data,
        )
    for t in ctx.unclaimed(ctx.log.of(CppTerminate)):
        if "DistBackendError" in (t.exc_type or "") or _NCCL_ERR.search(t.what):
            nxt = [x for x in ctx.log.of(CppTerminate) if x.line == t.line + 1 and not x.exc_type]
            text = " ".join([t.what] + [x.what for x in nxt])
            if _TIMEOUT_TEXT.search(text):
                continue
            kind, why = _nccl_kind(text)
            yield ctx.finding(
                "nccl-error",
                f"NCCL error ({kind}): the process aborted with {t.exc_type or 'an exception'}"
                + (f": {text.strip()[:200]}" if text.strip() else ""),
                f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}",
                events=[t, *nxt],
                data={"kind": kind},
            )
    for no, _m in list(ctx.texts_matching(_NCCL_ERR)):
        text = ctx.text(no)
        if _TIMEOUT_TEXT.search(text) or "NCCL INFO" in text:
            continue
        kind, why = _nccl_kind(text)
        yield ctx.finding(
            "nccl-error",
            f"NCCL error ({kind}): {text.strip()[:220]}",
            f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}",
            lines=[(no, no)],
            data={"kind": kind},
        )


# --------------------------------------------------------------------------- custom-allreduce-unavailable

_PEER_ACCESS = lazy_compile(
    r"peer access is not supported|cudaErrorPeerAccessUnsupported|P2P access is not supported|"
    r"peer mapping resources exhausted|cudaErrorPeerAccess",
    re.IGNORECASE,
)
_AR_TEXTS = {
    "custom-ar-pcie": re.compile(
        r"Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs"
    ),
    "custom-ar-no-p2p": re.compile(
        r"Custom allreduce is disabled because your platform lacks GPU P2P capability"
    ),
    "custom-ar-world-size": re.compile(
        r"Custom allreduce is disabled due to an unsupported world size: (\d+)"
    ),
    "custom-ar-setup-failed": re.compile(r"Setup Custom allreduce failed with (.*?)\. To silence"),
}
# Why the NCCL knobs are worth trying on PCIe-only nodes (the finding's remedy).
PCIE_NCCL_HINT = (
    "all-reduce now goes through NCCL over PCIe, so its bandwidth and NCCL's choices decide the decode latency at this "
    "TP size; worth trying (measure each): `NCCL_P2P_LEVEL=SYS` (NCCL may refuse P2P across PCIe switches or the CPU "
    "root complex — `nvidia-smi topo -m` shows PHB/SYS paths — and fall back to slower host copies), `NCCL_ALGO=Ring` "
    "with `NCCL_PROTO=Simple` or `LL128` (the tree/LL defaults are tuned for NVLink; on PCIe the bandwidth-bound ring "
    "often wins for large messages), `NCCL_MIN_NCHANNELS=4` to `8` (more channels keep more PCIe lanes busy); "
    "`--disable-custom-all-reduce` silences the warning"
)


@rule(
    code="DIST003",
    name="custom-allreduce-unavailable",
    family="distributed",
    severity=Severity.ERROR,
    needs=("events", "tracebacks"),
)
def custom_allreduce_unavailable(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang's custom all-reduce kernel cannot be used: peer access fails (error) or the topology rules it out (info).

    **What it means**
    SGLang's custom all-reduce needs CUDA peer access (P2P) between the GPUs of a TP group. An error
    means it was set up anyway and peer access failed (`peer access is not supported between these
    two devices`). The info-level form is SGLang switching it off by itself: `Custom allreduce is
    disabled because it's not supported on more than two PCIe-only GPUs` (a PCIe-only node with no
    NVLink), the P2P test failed, or the world size is unsupported.

    **Why it matters**
    The error kills the scheduler at startup. The info form is a topology hint: every TP all-reduce
    now goes through NCCL over PCIe, which dominates decode latency, and NCCL's protocol / algorithm /
    P2P settings decide how fast that is.

    **Example**
    ```
    [2025-03-08 12:29:12 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.
    ```

    **Fix**
    Error: `--disable-custom-all-reduce` (NCCL does the all-reduce). PCIe-only: nothing is broken;
    tune NCCL for PCIe (`NCCL_P2P_LEVEL`, `NCCL_ALGO`, `NCCL_PROTO`, `NCCL_MIN_NCHANNELS`) and measure.
    """
    tp = ctx.views.tp_size
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen or not _PEER_ACCESS.search(r.text):
            continue
        seen.add(r.event.line)
        yield ctx.finding(
            "custom-allreduce-unavailable",
            f"Peer (P2P) access between the GPUs failed: {r.exc_type}: "
            f"{r.message.strip()[:200]} — the custom all-reduce cannot work on this topology",
            "`--disable-custom-all-reduce` (all-reduce then goes through NCCL); `--enable-p2p-check` makes "
            "SGLang test P2P before using it",
            events=[r.event],
            data={"reason": "peer-access"},
        )
    by_code: dict[str, list[Event]] = {}
    for e in ctx.log.of(KnownMessage):
        if e.code in _AR_TEXTS:
            by_code.setdefault(e.code, []).append(e)
    for code, pattern in _AR_TEXTS.items():
        if code not in by_code:
            lines = [no for no, _ in ctx.texts_matching(pattern)]
            if lines:
                by_code[code] = [Event(line=n, end_line=n) for n in lines]
    for code, events in by_code.items():
        real = [e for e in events if e.source]
        spans = [(e.line, e.line) for e in events if not e.source]
        size = f"{tp} " if tp else ""
        data: dict[str, Any] = {"reason": code.removeprefix("custom-ar-")}
        if tp:
            data["tp_size"] = tp
        if code == "custom-ar-pcie":
            data["topology"] = "pcie-only"
            message = (
                f"Custom all-reduce is disabled: more than two PCIe-only GPUs (no NVLink) in the TP group of "
                f"{size}GPUs, so tensor-parallel all-reduce goes through NCCL over PCIe"
            )
            remedy = PCIE_NCCL_HINT
        elif code == "custom-ar-no-p2p":
            message = "Custom all-reduce is disabled: the GPUs lack P2P capability or the P2P test failed; NCCL does the all-reduce"
            remedy = (
                "nothing to fix for correctness; `--disable-custom-all-reduce` silences it; check that the GPUs "
                "are not split across VMs/containers without P2P (`nvidia-smi topo -p2p r`)"
            )
        elif code == "custom-ar-world-size":
            m = re.search(r"world size: (\d+)", " ".join(ctx.text(e.line) for e in events))
            if m:
                data["world_size"] = int(m.group(1))
            message = (
                f"Custom all-reduce is disabled for world size {data.get('world_size', '?')} (supported: 2, 4, 6, 8); "
                "NCCL does the all-reduce"
            )
            remedy = "a TP size of 2, 4, 6 or 8 to use it; otherwise `--disable-custom-all-reduce` silences the warning"
        else:
            message = "Custom all-reduce setup failed; SGLang falls back to NCCL"
            remedy = "`--disable-custom-all-reduce` silences it; the error in the message says why the setup failed"
        for e in real:
            yield ctx.finding(
                "custom-allreduce-unavailable",
                message,
                remedy,
                events=[e],
                data=dict(data),
                severity=Severity.INFO,
                fingerprint=f"car|{code}",
            )
        for span in spans:
            yield ctx.finding(
                "custom-allreduce-unavailable",
                message,
                remedy,
                lines=[span],
                data=dict(data),
                severity=Severity.INFO,
                fingerprint=f"car|{code}",
            )


# --------------------------------------------------------------------------- other-rank-failed

_PEER_LOADING = lazy_compile(
    r"TP rank (\d+) could finish the model loading, but there are other ranks"
)
_BARRIER = lazy_compile(
    r"monitoredBarrier.*?(?:from rank (\d+)|check rank (\d+))|Please check rank (\d+) logs",
    re.IGNORECASE,
)
_TCPSTORE = lazy_compile(
    r"TCPStore.*?(Connection reset by peer|Broken pipe|Connection refused|connection closed|"
    r"recvValue failed|Socket Timeout|shut down too early)",
    re.IGNORECASE,
)
_RANK_TAG = lazy_compile(r"\[rank(\d+)\]|\bRank (\d+)\b")


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
    errors while waiting for send/recv from rank 0` (`Please check rank 0 logs`), or the TCPStore
    connection reset by its server (rank 0's node went away).

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
    remedy = "look at the log of the rank / node named here for the first error; this line is only its consequence"
    for r in ctx.raised():
        if r.event.line in seen:
            continue
        if m := _PEER_LOADING.search(r.text):
            seen.add(r.event.line)
            me = int(m.group(1))
            yield ctx.finding(
                "other-rank-failed",
                f"TP rank {me} finished loading the model but other ranks did not: the real "
                "error is on another rank or node (its log shows the first traceback — e.g. a rank that ran "
                "out of memory or could not read the checkpoint); this log only shows the consequence",
                "read the other ranks' / nodes' logs for the first error (on multi-node runs, every node's "
                "log); this error is only the consequence",
                events=[r.event],
                consequence=True,
                data={"reporting_rank": me, "look_at": "other ranks"},
            )
        elif m := _BARRIER.search(r.text):
            seen.add(r.event.line)
            peer = next(g for g in m.groups() if g)
            yield _barrier(ctx, [r.event], [], int(peer), remedy)
    for no, m in list(ctx.texts_matching(_BARRIER)):
        peer = next((g for g in m.groups() if g), None)
        yield _barrier(ctx, [], [(no, no)], int(peer) if peer else None, remedy)
    # After a graceful shutdown (SIGTERM, uvicorn's "Shutting down") the store's server exits first
    # and the other ranks' resets are only teardown noise.
    shutdown = _graceful_shutdown_line(ctx)
    tcp = [(no, m) for no, m in ctx.texts_matching(_TCPSTORE) if shutdown is None or no < shutdown]
    if tcp:
        ranks = []
        for no, _m in tcp:
            for g in _RANK_TAG.findall(ctx.text(no)):
                ranks.append(int(next(x for x in g if x)))
        rank_list = sorted(set(ranks))
        from logparse.engine.core import rank_range

        who = (
            f"ranks {rank_range(f'rank{r}' for r in rank_list).replace('rank', '')}"
            if rank_list
            else "this node's ranks"
        )
        first = ctx.text(tcp[0][0])
        stated = re.search(r"with error: ([^,\n]+)", first)
        reason = (stated.group(1) if stated else tcp[0][1].group(1)).strip()
        yield ctx.finding(
            "other-rank-failed",
            f"The TCPStore connection was lost on {who} ({reason}): its server runs with "
            "global rank 0 on the master node (`--dist-init-addr`), which went away first. The real error "
            "is on another node: look at the log of the node that hosts rank 0",
            "read the master node's (rank 0) log for the first error; this is only the consequence",
            lines=[(no, no) for no, _ in tcp[:32]],
            consequence=True,
            data={"lost_ranks": rank_list, "look_at": "rank 0 / master node"},
            ranks=[f"rank{r}" for r in rank_list],
        )


def _graceful_shutdown_line(ctx: RuleContext) -> int | None:
    from logparse.engine.core import SHUTDOWN_CODES, SHUTDOWN_STAGES

    for e in ctx.log.events:
        if isinstance(e, UvicornLifecycle) and e.stage in SHUTDOWN_STAGES:
            return e.line
        if isinstance(e, KnownMessage) and e.code in SHUTDOWN_CODES:
            return e.line
    return None


def _barrier(
    ctx: RuleContext,
    events: list[Event],
    lines: list[tuple[int, int]],
    peer: int | None,
    remedy: str,
) -> Finding:
    who = f"rank {peer}" if peer is not None else "a peer rank"
    return ctx.finding(
        "other-rank-failed",
        f"A barrier on this rank received errors from {who}: the real error is on "
        f"{who} — check its log",
        remedy,
        events=events,
        lines=lines,
        consequence=True,
        data={"look_at": who},
    )
