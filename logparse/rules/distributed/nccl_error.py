"""nccl-error: NCCL reported an error (communicator init or a collective failed; not a timeout)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import CppTerminate, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import MessageHit, RuleContext
from logparse.rules.errors import first_match
from logparse.rules.frames import FAULTHANDLER, file_name, native_crash
from logparse.rules.registry import rule

# The NCCL result families (grammars/messages/distributed.toml), most specific first, with the kind
# they report and what to check.
_KINDS: tuple[tuple[str, str, str], ...] = (
    ("nccl-error-system", "system", (
        "a system call failed inside NCCL: often /dev/shm too small in a container (docker "
        "`--shm-size 16g` or `--ipc=host`), the wrong network interface (`NCCL_SOCKET_IFNAME=<iface>`) "
        "or a broken InfiniBand setup (test with `NCCL_IB_DISABLE=1`)")),
    ("nccl-error-cuda", "cuda", (
        "a CUDA call failed inside NCCL: P2P between these GPUs may be broken (test with "
        "`NCCL_P2P_DISABLE=1`), or the driver / NCCL versions do not match")),
    ("nccl-error-remote", "remote", (
        "a peer went away or the network failed: check the other node's log first, then "
        "`NCCL_SOCKET_IFNAME` and firewalls")),
    ("nccl-error-gloo", "gloo", (
        "the CPU (Gloo) process group could not connect the ranks: set `GLOO_SOCKET_IFNAME=<iface>` (and "
        "`NCCL_SOCKET_IFNAME`) to the interface the nodes reach each other on, and open the ports between them")),
    ("nccl-error-internal", "internal", "an NCCL internal error: check that every rank runs the same NCCL version"),
    ("nccl-error-usage", "usage", "NCCL was called inconsistently across ranks (mismatched collectives or device ids)"),
)
_CODES = tuple(code for code, _, _ in _KINDS)


def _nccl_kind(ctx: RuleContext, text: str) -> tuple[str, str]:
    m = first_match(ctx, _CODES, text)
    if m is None:
        return "unknown", "the log does not say which NCCL call failed"
    kind, why = next((k, w) for c, k, w in _KINDS if c == m[0])
    return kind, why


# NCCL result codes (nccl.h) → the kind of failure they report.
_RESULT_KINDS = {1: "nccl-error-cuda", 2: "nccl-error-system", 3: "nccl-error-internal", 4: "nccl-error-usage",
                 5: "nccl-error-usage", 6: "nccl-error-remote"}
_RESULT_NAMES = {1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError", 4: "ncclInvalidArgument",
                 5: "ncclInvalidUsage", 6: "ncclRemoteError"}
# How far NCCL's WARN line (what failed) may precede the first `-> N` line of its return path, and
# the widest gap inside one path (other ranks' lines interleave).
_WARN_BEFORE = 4
# NCCL source files of communicator creation (ncclCommInitRank and its bootstrap), all NCCL 2.x.
_INIT_FILES = frozenset({"init.cc", "bootstrap.cc"})
_CHAIN_GAP = 3


def _return_chains(ctx: RuleContext) -> Iterator[Finding]:
    """NCCL's error return path (`file.cc:N -> 2` on each function the error passes through, printed
    only for a failing result) with the WARN line before it: an NCCL call failed, whatever the
    WARN's words — the result code says which kind."""
    hits = ctx.message_lines("nccl-return-code")
    warns = {h.line: h for h in ctx.message_lines("nccl-warn-line")}
    chains: list[list[MessageHit]] = []
    for h in hits:
        if chains and h.line - chains[-1][-1].line <= _CHAIN_GAP:
            chains[-1].append(h)
        else:
            chains.append([h])
    for chain in chains:
        first = chain[0].line
        before = [warns[n] for n in range(first - _WARN_BEFORE, first) if n in warns and n not in ctx.claimed]
        result = int(chain[0].fields["result"])
        kind, why = next((k, w) for c, k, w in _KINDS if c == _RESULT_KINDS[result])
        said = str(before[-1].fields.get("warning") or "") if before else ""
        data: dict[str, Any] = {"kind": kind, "nccl_result": _RESULT_NAMES[result], "return_path_lines": len(chain)}
        if said:
            data["warning"] = short(said, 200)
        what = f"NCCL WARN {short(said, 160)}" if said else f"an NCCL call returned {_RESULT_NAMES[result]}"
        message = f"NCCL error ({kind}): {what}; the error returned through {len(chain)} NCCL function(s) ({_RESULT_NAMES[result]})"
        lines = [(w.line, w.line) for w in before] + [(h.line, h.line) for h in chain]
        # The path names NCCL's source files: through init.cc / bootstrap.cc the error came from
        # creating a communicator (ncclCommInitRank), which SGLang does while its processes start.
        files = {str(h.fields.get("file") or "").rsplit("/", 1)[-1] for h in chain}
        stage = "startup" if files & _INIT_FILES else None
        if stage:
            data["during"] = "communicator-init"
        yield ctx.finding("nccl-error", message, f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}",
                          lines=lines, data=data, stage=stage)


# SGLang's (and vLLM's) ctypes binding of libnccl: each NCCL call is a method named after the C
# function (`ncclCommInitRank`, `ncclAllReduce`, …) in this file, in every release.
_PYNCCL_BINDING = "pynccl_wrapper.py"
# The calls that create a communicator (SGLang makes them while its processes start).
_INIT_CALLS = frozenset({"ncclGetUniqueId", "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll"})


def _native_crashes(ctx: RuleContext) -> Iterator[Finding]:
    """A faulthandler dump (`Fatal Python error: Segmentation fault` / `Current thread 0x… (most
    recent call first):`) whose innermost frame is a call of the NCCL binding: the process died
    inside libnccl — whatever signal, and with no Python exception to read."""
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if tb.process != FAULTHANDLER or not tb.frames:
            continue
        inner = tb.frames[-1]  # the crashing frame (records store a dump outermost first)
        func = inner.func or ""
        if file_name(inner.path) != _PYNCCL_BINDING or not func.startswith("nccl"):
            continue
        # Only the thread that received the fatal signal crashed: another thread's listing, or a
        # dump with no `Fatal Python error:` before it (a SIGUSR1 snapshot of a hang), is no crash.
        signal = native_crash(ctx, tb)
        if signal is None:
            continue
        data: dict[str, Any] = {"kind": "native-crash", "nccl_call": func}
        stage = None
        if func in _INIT_CALLS:
            data["during"] = "communicator-init"
            stage = "startup"
        yield ctx.finding(
            "nccl-error",
            f"NCCL error (native crash): the process died inside the NCCL call {func} "
            f"({signal.text.strip()}; faulthandler dump, no Python exception)",
            "run with `NCCL_DEBUG=INFO` to see where NCCL fails; a crash while creating the communicator is "
            "usually the GPU or driver environment (a vGPU or container without P2P / IPC support: test with "
            "`NCCL_P2P_DISABLE=1`, `NCCL_SHM_DISABLE=1`) or an NCCL library that does not match the driver",
            events=[signal, tb], data=data, stage=stage)


def _is_timeout(ctx: RuleContext, text: str) -> bool:
    return ctx.match("nccl-collective-timeout", text) is not None  # nccl-timeout's


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
    `ncclSystemError`, `ncclInternalError`, `ncclRemoteError`, a failing `ncclCommInitRank`, a
    `DistBackendError` that is not a watchdog timeout, or NCCL's own debug output: a `NCCL WARN` line
    followed by the error's return path (`NCCL INFO init.cc:1534 -> 2`, one line per function; the
    number is the result, 2 = ncclSystemError). Through init.cc / bootstrap.cc it failed while
    creating the communicator, i.e. at start-up.

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
    yield from _return_chains(ctx)
    yield from _native_crashes(ctx)
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen or r.event.line in ctx.claimed or ctx.match("nccl-error", r.text) is None:
            continue
        if _is_timeout(ctx, r.text):
            continue
        seen.add(r.event.line)
        kind, why = _nccl_kind(ctx, r.text)
        data: dict[str, Any] = {"kind": kind, "exception_type": r.exc_type}
        if version := (ctx.match("nccl-version", r.text) or {}).get("version"):
            data["nccl_version"] = version
        yield ctx.finding("nccl-error", f"NCCL error ({kind}): {r.exc_type}: {r.message.strip()[:220]}",
                          f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}", events=[r.event], data=data)
    for t in ctx.unclaimed(ctx.log.of(CppTerminate)):
        if "DistBackendError" in (t.exc_type or "") or ctx.match("nccl-error", t.what) is not None:
            nxt = [x for x in ctx.log.of(CppTerminate) if x.line == t.line + 1 and not x.exc_type]
            text = " ".join([t.what] + [x.what for x in nxt])
            if _is_timeout(ctx, text):
                continue
            kind, why = _nccl_kind(ctx, text)
            yield ctx.finding(
                "nccl-error",
                f"NCCL error ({kind}): the process aborted with {t.exc_type or 'an exception'}"
                + (f": {text.strip()[:200]}" if text.strip() else ""),
                f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}",
                events=[t, *nxt],
                data={"kind": kind},
            )
    for hit in ctx.message_lines("nccl-error"):
        text = ctx.text(hit.line)
        if _is_timeout(ctx, text) or ctx.match("nccl-info-line", text) is not None:
            continue
        kind, why = _nccl_kind(ctx, text)
        yield ctx.finding("nccl-error", f"NCCL error ({kind}): {text.strip()[:220]}",
                          f"run with `NCCL_DEBUG=INFO` to see the failing call; {why}", lines=[(hit.line, hit.line)],
                          data={"kind": kind})
