"""illegal-memory-access: a GPU kernel fault (illegal address, device assert, launch failure) that
no more specific rule explains, with the backend its traceback goes through."""

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
    graphs, it says so (phase `cuda-graph-capture`).

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
    `CUDA_LAUNCH_BLOCKING=1` to locate the kernel, and report it upstream with the traceback.
    """
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
