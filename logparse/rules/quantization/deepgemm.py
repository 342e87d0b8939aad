"""deepgemm-scale-format: DeepGEMM runs an FP8 checkpoint whose block scales are not UE8M0 (the
warning, or the scale-pack assert and the launch failure it causes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, ExceptionLine, KnownMessage, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import Found, find_message
from logparse.rules.frames import traceback_after
from logparse.rules.registry import rule

_REMEDY = (
    "disable DeepGEMM for this checkpoint (`SGLANG_ENABLE_JIT_DEEPGEMM=0`, or e.g. `--fp8-gemm-backend "
    "triton` where available), or use a checkpoint whose FP8 block scales are UE8M0 "
    "(`\"scale_fmt\": \"ue8m0\"` in its quantization_config)"
)
# Lines after the assert within which a launch failure / traceback is its consequence.
_FOLLOW = 6


@rule(
    code="QNT001",
    name="deepgemm-scale-format",
    family="quantization",
    severity=Severity.WARNING,
    needs=("events", "tracebacks"),
)
def deepgemm_scale_format(ctx: RuleContext) -> Iterator[Finding]:
    """DeepGEMM runs an FP8 checkpoint whose block scales are not in the UE8M0 format it expects.

    **What it means**
    On Blackwell, DeepGEMM packs FP8 block scales as UE8M0 (powers of two). SGLang warns `DeepGemm is
    enabled but the scale_fmt of checkpoint is not ue8m0`; when a scale is not a power of two the
    kernel's pack check fails (`Assertion failed: …smxx_layout.cuh…, condition: (values[j] &
    0x807fffffu) == 0`) and the launch fails (`CUDA_ERROR_LAUNCH_FAILED`).

    **Why it matters**
    The warning means a silent accuracy risk (scales are rounded); the assert is a crash. The
    launch failure after the assert is explained by it, not an independent illegal memory access.

    **Example**
    ```
    Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & 0x807fffffu) == 0
    tvm.error.InternalError: CUDA driver error (jit_kernels/impls/smxx_layout.hpp:72): 719 (CUDA_ERROR_LAUNCH_FAILED)
    ```

    **Fix**
    Disable DeepGEMM for this checkpoint (`SGLANG_ENABLE_JIT_DEEPGEMM=0`) or use a checkpoint with
    `"scale_fmt": "ue8m0"` scales.
    """
    for hit in find_message(ctx, "deepgemm-ue8m0-assert"):
        yield _assert_finding(ctx, hit)
    warns: list[Event] = [e for e in ctx.log.of(KnownMessage) if e.code == "deepgemm-scale-fmt"]
    if not warns:
        warns = [Event(line=h.line, end_line=h.line)
                 for h in ctx.messages("deepgemm-scale-fmt-warning", unclaimed=False)]
    if warns:
        ranks = sorted({e.rank for e in warns if e.rank})
        message = ("DeepGEMM is enabled but the checkpoint's scale_fmt is not ue8m0: FP8 block scales are rounded to "
                   "powers of two on Blackwell (silent accuracy degradation)")
        if len(warns) > 1:
            message += f" — printed {len(warns)} times"
        yield ctx.finding("deepgemm-scale-format", message, _REMEDY, events=warns[:16], ranks=ranks,
                          data={"warnings": len(warns)}, fingerprint="deepgemm-scale-format|warning")


def _launch_failures(ctx: RuleContext, line: int) -> list[Event]:
    """The launch failures (a lone line or a traceback) right after the assert: its consequences."""
    out: list[Event] = []
    for e in ctx.log.events:
        if e.line > line + _FOLLOW:
            break
        if e.line <= line or not isinstance(e, (Traceback, ExceptionLine)) or e.line in ctx.claimed:
            continue
        said = f"{ctx.text(e.line)}\n{getattr(e, 'message', '')}"
        if ctx.match("deepgemm-launch-failure", said) is not None:
            out.append(e)
    return out


def _assert_finding(ctx: RuleContext, hit: Found) -> Finding:
    events: list[Event] = [hit.event, *_launch_failures(ctx, hit.line)]
    tb = hit.traceback or traceback_after(ctx, hit.line, _FOLLOW)
    if tb is not None and tb not in events and tb.line not in ctx.claimed:
        events.append(tb)
    cond = hit.fields.get("condition")
    data: dict[str, Any] = {"assert": cond.strip() if cond else short(hit.text, 120)}
    launch = ctx.collect("deepgemm-launch-failure", "\n".join(ctx.text(e.line) for e in events)) or {}
    if launch.get("cuda_error"):
        data["cuda_error"] = launch["cuda_error"]
    message = ("DeepGEMM's UE8M0 scale-pack check failed"
               + (f" ({data['assert']})" if cond else "")
               + ": the checkpoint's FP8 block scales are not powers of two (not UE8M0)"
               + (f", and the kernel launch then failed ({data['cuda_error']})" if "cuda_error" in data else ""))
    return ctx.finding("deepgemm-scale-format", message, _REMEDY, events=events, data=data, severity=Severity.ERROR)
