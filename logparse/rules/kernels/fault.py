"""illegal-memory-access: a GPU kernel fault (illegal address, device assert, launch failure) that
no more specific rule explains, with the backend its traceback goes through; an Ascend NPU's AI Core /
vector core fault is the same diagnosis."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import mask_numbers, short
from logparse.rules.context import RuleContext
from logparse.rules.errors import Found, find_message
from logparse.rules.frames import echo_after, first_sglang_frame, in_graph_capture, traceback_after
from logparse.rules.registry import rule

# The backends a fault's traceback can go through, most specific first: (name, the flag that
# switches away from it, alternatives — each a set of words that must occur on one line of the
# traceback's text, lower-cased: file and function names of that backend).
BACKENDS: tuple[tuple[str, str, tuple[tuple[str, ...], ...]], ...] = (
    ("DeepGEMM", "`SGLANG_ENABLE_JIT_DEEPGEMM=0`", (("deep_gemm",), ("deepgemm",))),
    ("FlashInfer sampling", "`--sampling-backend pytorch`",
     (("flashinfer", "sampling"), ("sampling_from_probs",), ("top_k_top_p",))),
    ("custom all-reduce", "`--disable-custom-all-reduce`", (("custom_all_reduce",), ("custom_ar",))),
    ("FlashInfer", "`--attention-backend triton` (or `fa3` on Hopper)", (("flashinfer",),)),
    ("FlashAttention", "`--attention-backend flashinfer`", (("flashattention",), ("flash_attn",), ("fa3",))),
    ("Triton attention", "`--attention-backend flashinfer`",
     (("triton_backend",), ("triton_ops",), ("extend_attention",), ("decode_attention",))),
    ("MoE runner", "`--moe-runner-backend triton`", (("fused_moe",), ("moe_runner",), ("cutlass_moe",))),
    ("CUDA graph replay", "`--disable-cuda-graph` (to confirm)", (("cuda_graph_runner",), ("graph_runner",))),
)
MAX_LONE_EVIDENCE = 16  # device asserts print once per faulting thread: cite the first few
# CANN prints one device error report as a block: the EZ9999 header, the core's error line, an indented
# "TraceBack" of detail lines, torch_npu's "[Error]: The … execution is abnormal." Hits of one report
# are at most this many lines apart; a farther hit starts another report.
NPU_REPORT_GAP = 8


def backend_of(text: str) -> tuple[str, str] | None:
    """(backend, flag) of the first backend whose names occur in the fault's text."""
    low = text.lower()
    lines: list[str] | None = None
    for name, flag, alternatives in BACKENDS:
        # Words that all occur on one line occur in the text: only alternatives whose words the
        # whole text holds are looked for line by line (most tracebacks name no backend at all).
        present = [words for words in alternatives if all(word in low for word in words)]
        if not present:
            continue
        if lines is None:
            lines = low.splitlines()
        if any(all(word in line for word in words) for line in lines for words in present):
            return name, flag
    return None


def _reported_by(ctx: RuleContext, hit: Found) -> Traceback | None:
    """The scheduler traceback printed right after a lone fault line (a kernel's own CUDA message):
    the same failure seen from Python — cut before its exception line, or ending in a CUDA error."""
    tb = traceback_after(ctx, hit.line, 3, hit.rank)
    if tb is None or tb.line in ctx.claimed:
        return None
    if tb.exc_type is None or ctx.match("cuda-runtime-error", f"{tb.exc_type}: {tb.message}") is not None:
        return tb
    return None


def _fault(hit: Found) -> str:
    return str(hit.fields.get("fault") or hit.text)


@rule(code="KRN003", name="illegal-memory-access", family="kernels", severity=Severity.ERROR,
      needs=("tracebacks",), fallback=True, follow_on=True,
      crash=True)  # a kernel fault is a sticky CUDA error: the context is lost and the process with it
def illegal_memory_access(ctx: RuleContext) -> Iterator[Finding]:
    """A GPU kernel faulted (illegal memory access, device-side assert, launch failure).

    **What it means**
    A kernel accessed memory it does not own or hit a device assertion: `CUDA error: an illegal memory
    access was encountered`, `device-side assert triggered`, `CUDA_ERROR_LAUNCH_FAILED`, a DeepGEMM /
    DeepEP device assert (`Assertion failed: ….cuh:N, condition: …`). This rule reports the faults
    that no more specific rule (e.g. `deepgemm-scale-format`) explains; raised while capturing CUDA
    graphs, it says so (phase `cuda-graph-capture`). On Ascend NPUs the same fault is CANN's device
    error report (`there is an exception of aivec error`, `Kernel task happen error, … [vector core
    exception]`, torch_npu's `The aicore execution is abnormal.`, error codes 507015 / 507035): one
    finding per report, with the device's error string and the faulting kernel where printed.

    **Why it matters**
    The CUDA context is unusable after such a fault: the scheduler dies and the server with it. CUDA
    reports errors asynchronously, so the frame shown may not be the faulty kernel.

    **Example**
    ```
    RuntimeError: CUDA error: an illegal memory access was encountered
    CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
    For debugging consider passing CUDA_LAUNCH_BLOCKING=1
    ```

    **Fix**
    Switch the backend named in the traceback (attention / MoE / sampling backend), rerun with
    `CUDA_LAUNCH_BLOCKING=1` (on an NPU `ASCEND_LAUNCH_BLOCKING=1`) to locate the kernel, and report
    it upstream with the traceback.
    """
    yield from _npu_faults(ctx)
    hits = find_message(ctx, "cuda-kernel-fault")
    # Lone lines (torch prints a device assert once per faulting thread): one finding per message.
    lone: dict[str, list[Found]] = {}
    for hit in hits:
        if hit.traceback is None:
            lone.setdefault(mask_numbers(_fault(hit)), []).append(hit)
    firsts = {id(group[0]) for group in lone.values()}
    for hit in hits:
        if hit.traceback is None and id(hit) not in firsts:
            continue
        if hit.event.line in ctx.claimed:
            continue  # the traceback an earlier lone fault line was reported with
        tb = hit.traceback
        blob = hit.text + "\n" + (ctx.traceback_text(tb) if tb is not None else "")
        found = backend_of(blob)
        data: dict[str, Any] = {"fault": _fault(hit)}
        if in_graph_capture(ctx, tb):
            data["phase"] = "cuda-graph-capture"  # the fault came from a forward pass being captured
            if found is not None and found[0] == "CUDA graph replay":
                found = ("CUDA graph capture", found[1])
        where = first_sglang_frame(tb)
        if found:
            backend, flag = found
            data["backend"] = backend
            remedy = (f"switch away from {backend}: {flag}; rerun with `CUDA_LAUNCH_BLOCKING=1` to confirm the kernel "
                      "and report it upstream with this traceback")
        else:
            attn = ctx.views.arg("attention_backend")
            data["backend"] = None
            remedy = ("rerun with `CUDA_LAUNCH_BLOCKING=1` to find the faulting kernel (the traceback does not name a "
                      "backend), then switch that backend (e.g. `--attention-backend "
                      f"{'triton' if attn != 'triton' else 'flashinfer'}`) and report it upstream")
        message = f"GPU kernel fault: {short(_fault(hit), 120)}" + (f" in {where}" if where else "")
        if found:
            message += f" (the traceback goes through {found[0]})"
        events: list[Event] = [hit.event]
        if tb is not None and (echo := echo_after(ctx, tb)) is not None:
            # The scheduler's own traceback of the same fault (the overlap thread raised it, the
            # event loop re-raises), cut before its exception line: the same failure, not a second.
            events.append(echo)
        if tb is None:
            group = lone[mask_numbers(_fault(hit))]
            events = [h.event for h in group[:MAX_LONE_EVIDENCE]]
            if len(group) > 1:
                data["lines"] = len(group)
            after = _reported_by(ctx, group[-1])
            if after is not None:
                events.append(after)
        yield ctx.finding("illegal-memory-access", message, remedy, events=events, data=data)


def _npu_reports(hits: list[Found]) -> list[list[Found]]:
    """The hits grouped into device reports: per rank, consecutive hits at most NPU_REPORT_GAP lines
    apart (every line of a CANN report is one hit or near one; a report is never split by rank)."""
    reports: list[list[Found]] = []
    open_by_rank: dict[str | None, list[Found]] = {}
    for hit in hits:
        cur = open_by_rank.get(hit.rank)
        if cur is not None and hit.line - cur[-1].line <= NPU_REPORT_GAP:
            cur.append(hit)
            continue
        open_by_rank[hit.rank] = [hit]
        reports.append(open_by_rank[hit.rank])
    return reports


def _npu_detail(ctx: RuleContext, report: list[Found]) -> dict[str, Any]:
    """The fields of a report: the core and fault kinds, the error code, and from its detail lines
    (within the report's span) the device's error string and the faulting kernel's name."""
    fields: dict[str, Any] = {}
    for hit in report:
        for key, value in hit.fields.items():
            if value is not None:
                fields.setdefault(key, value)
    first, last = report[0].line, report[-1].line + NPU_REPORT_GAP
    for h in ctx.message_lines("npu-kernel-fault-detail", unclaimed=False):
        if first <= h.line <= last:
            for key, value in h.fields.items():
                if value is not None:
                    fields.setdefault(key, value)
    return fields


def _npu_faults(ctx: RuleContext) -> Iterator[Finding]:
    """One finding per Ascend device error report (the same report repeated — torch_npu prints it
    again for every API call that syncs the device — is one finding with a count)."""
    hits = find_message(ctx, "npu-kernel-fault")
    if not hits:
        return
    grouped: dict[str, list[tuple[list[Found], dict[str, Any]]]] = {}
    for report in _npu_reports(hits):
        fields = _npu_detail(ctx, report)
        what = " ".join(str(fields.get(k) or "") for k in ("core", "fault", "error", "kernel"))
        grouped.setdefault(mask_numbers(what), []).append((report, fields))
    for same in grouped.values():
        report, fields = same[0]
        kind = fields.get("fault") or fields.get("core") or "AI Core"
        error = fields.get("error")
        kernel = fields.get("kernel")
        data: dict[str, Any] = {"fault": str(kind), "device": "npu", "backend": None}
        for key in ("error", "kernel", "code", "retcode"):
            if fields.get(key) is not None:
                data[key] = fields[key]
        if len(same) > 1:
            data["reports"] = len(same)
        message = f"NPU kernel fault ({kind})" + (f": {short(str(error), 120)}" if error else "")
        if kernel:
            message += f" in kernel {kernel}"
        remedy = ("rerun with `ASCEND_LAUNCH_BLOCKING=1` to find the faulting operator (the device reports "
                  "the fault asynchronously), read the device log (plog) for the kernel, and report it to "
                  "the kernel's owner (sgl-kernel-npu / torch_npu / CANN) with this report")
        # The report's whole block is the evidence: its detail lines sit between the hits.
        span = (report[0].line, report[-1].line)
        yield ctx.finding("illegal-memory-access", message, remedy, lines=[span], data=data,
                          ranks=sorted({h.rank for h in report if h.rank is not None}) or None)
