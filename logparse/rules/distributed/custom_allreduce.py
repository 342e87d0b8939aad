"""custom-allreduce-unavailable: SGLang's custom all-reduce cannot be used (peer access fails, or the
topology rules it out)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, KnownMessage, Severity
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.rules.registry import rule

# The notices SGLang prints when it switches the custom all-reduce off (formats §4 W15–W18): the
# grammar's known-message codes, which are also the catalog codes of the same sentences.
_AR_CODES = ("custom-ar-pcie", "custom-ar-no-p2p", "custom-ar-world-size", "custom-ar-setup-failed")
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
    crash=True,  # its errors are a failed peer access, which kills the process (its info notices are not failures)
)
def custom_allreduce_unavailable(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang's custom all-reduce kernel cannot be used: peer access fails (error) or the topology rules it out (info).

    **What it means**
    SGLang's custom all-reduce needs CUDA peer access (P2P) between the GPUs of a TP group. An error
    means it was set up anyway and peer access failed (`peer access is not supported between these
    two devices`, raised by torch or — in 0.1.x/0.2.x — printed by the kernel itself as `Failed:
    Cuda error …/custom_all_reduce.cuh:307 'peer access is not supported between these two
    devices'`). The info-level form is SGLang switching it off by itself: `Custom allreduce is
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
    yield from _peer_access(ctx)
    yield from _disabled(ctx)


def _peer_access(ctx: RuleContext) -> Iterator[Finding]:
    """Peer access failed: an exception, or (0.1.x/0.2.x) the kernel's own `Failed: Cuda error` line.

    Not SGLang's own `Setup Custom allreduce failed with CUDA error: peer access is not supported …`
    (0.4.6+, formats §4 W18): a WARNING after which it falls back to NCCL and the server goes on —
    `_disabled` reports it (info). The 0.1.x–0.2.x kernel line is the CUDACHECK macro's, which exits
    the process right after printing it: an error."""
    for hit in find_message(ctx, "peer-access-unsupported", include_claimed=True):
        if hit.traceback is None and _setup_fallback(ctx, hit.line):
            continue
        in_kernel = ctx.match("custom-ar-source", hit.text) is not None
        shown = short(hit.text, 200)
        message = (f"Peer (P2P) access between the GPUs failed: {shown} — the custom all-reduce cannot work on this "
                   "topology")
        if in_kernel and hit.traceback is None:
            message = (f"The custom all-reduce kernel failed: {shown} — CUDA peer (P2P) access between these GPUs "
                       "is not possible")
        yield ctx.finding(
            "custom-allreduce-unavailable",
            message,
            "`--disable-custom-all-reduce` (all-reduce then goes through NCCL); `--enable-p2p-check` makes "
            "SGLang test P2P before using it",
            events=[hit.event],
            data={"reason": "peer-access"},
            # The kernel's own line comes from its buffer set-up (IPC handles opened when the process
            # group is built, graph buffers registered after capture): both while the server starts.
            stage="startup" if in_kernel and hit.traceback is None else None,
        )


def _setup_fallback(ctx: RuleContext, line: int) -> bool:
    """Line `line` is SGLang's W18 setup-failed warning (its grammar code, or the catalog's for a line
    the grammar kept as text)."""
    at = [e for e in ctx.log.of(KnownMessage) if e.line == line]
    if at:
        return any(e.code == "custom-ar-setup-failed" for e in at)
    return ctx.match("custom-ar-setup-failed", ctx.text(line)) is not None


def _disabled(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang switched the custom all-reduce off itself (info)."""
    tp = ctx.views.tp_size
    by_code: dict[str, list[Event]] = {}
    known_lines = set()
    for e in ctx.log.of(KnownMessage):
        known_lines.add(e.line)
        if e.code in _AR_CODES:
            by_code.setdefault(e.code, []).append(e)
    world: int | None = None
    for code in _AR_CODES:
        if code in by_code:
            continue
        # Lines the grammar kept as text (inside a wrapper it does not know): the catalog finds them.
        hits = [h for h in ctx.message_lines(code) if h.line not in known_lines]
        if hits:
            by_code[code] = [Event(line=h.line, end_line=h.line) for h in hits]
            world = world or hits[0].fields.get("world_size")
    for code, events in by_code.items():
        real = [e for e in events if e.source]
        spans = [(e.line, e.line) for e in events if not e.source]
        size = f"{tp} " if tp else ""
        data: dict[str, Any] = {"reason": code.removeprefix("custom-ar-")}
        if tp:
            data["tp_size"] = tp
        if code == "custom-ar-pcie":
            data["topology"] = "pcie-only"
            message = (f"Custom all-reduce is disabled: more than two PCIe-only GPUs (no NVLink) in the TP group of "
                       f"{size}GPUs, so tensor-parallel all-reduce goes through NCCL over PCIe")
            remedy = PCIE_NCCL_HINT
        elif code == "custom-ar-no-p2p":
            message = ("Custom all-reduce is disabled: the GPUs lack P2P capability or the P2P test failed; NCCL does "
                       "the all-reduce")
            remedy = ("nothing to fix for correctness; `--disable-custom-all-reduce` silences it; check that the GPUs "
                      "are not split across VMs/containers without P2P (`nvidia-smi topo -p2p r`)")
        elif code == "custom-ar-world-size":
            size_of = next((e.fields.get("world_size") for e in real if isinstance(e, KnownMessage)
                            and isinstance(e.fields.get("world_size"), int)), None)
            if size_of is None:
                size_of = world or (ctx.match(code, ctx.text(events[0].line)) or {}).get("world_size")
            if size_of is not None:
                data["world_size"] = size_of
            message = (f"Custom all-reduce is disabled for world size {data.get('world_size', '?')} (supported: 2, 4, "
                       "6, 8); NCCL does the all-reduce")
            remedy = "a TP size of 2, 4, 6 or 8 to use it; otherwise `--disable-custom-all-reduce` silences the warning"
        else:
            message = "Custom all-reduce setup failed; SGLang falls back to NCCL"
            remedy = "`--disable-custom-all-reduce` silences it; the error in the message says why the setup failed"
        for e in real:
            yield ctx.finding("custom-allreduce-unavailable", message, remedy, events=[e], data=dict(data),
                              severity=Severity.INFO, fingerprint=f"car|{code}")
        for span in spans:
            yield ctx.finding("custom-allreduce-unavailable", message, remedy, lines=[span], data=dict(data),
                              severity=Severity.INFO, fingerprint=f"car|{code}")
