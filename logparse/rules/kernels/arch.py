"""unsupported-gpu-arch: a kernel, backend or wheel refused the GPU architecture it runs on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.rules.frames import echo_after, first_sglang_frame, traceback_after
from logparse.rules.registry import rule

# Kernel and library names a message or a frame may carry, most specific first (for the remedy).
_KERNEL_NAMES = ("TllmGen", "TRTLLM", "trtllm_mha", "trtllm_mla", "CuteDSL", "MXFP4", "FlashAttention3", "fa3",
                 "fp8e4nv", "NVFP4", "DeepGEMM", "deep_gemm", "FlashInfer", "flashinfer", "triton")


def kernel_of(ctx: RuleContext, text: str, tb: Traceback | None) -> str:
    """The kernel or library the message names (FlashInfer's `Error in function 'X'`, sgl-kernel's
    `X failed with error code`), else a known name in the message or the frames."""
    named = ctx.match("kernel-named", text)
    if named and named.get("kernel"):
        return str(named["kernel"])
    if ctx.match("gpu-arch-backend-list", text) is not None:
        backend = ctx.views.arg("attention_backend")
        return f"the {backend} attention backend" if backend else "the chosen attention backend"
    low = text.lower()
    frames = " ".join(f"{f.path} {f.func}" for f in tb.frames).lower() if tb is not None else ""
    for key in _KERNEL_NAMES:
        if key.lower() in low or key.lower() in frames:
            return key
    return "a kernel"


def gpu_sm(ctx: RuleContext, text: str) -> int | None:
    """The compute capability a message names (sm_120, SM100, capability 12.1), as an SM number."""
    found = ctx.match("gpu-sm", text)
    if not found:
        return None
    if isinstance(found.get("sm"), int):
        return int(found["sm"])
    major, minor = found.get("major"), found.get("minor")
    if isinstance(major, int) and isinstance(minor, int):
        return major * 10 + minor
    return None


def arch_remedy(ctx: RuleContext, text: str, kernel: str) -> tuple[str, dict[str, Any]]:
    """The backend flag or install that works on this GPU, from what failed."""
    data: dict[str, Any] = {}
    attn = ctx.views.arg("attention_backend")
    moe = ctx.views.arg("moe_runner_backend")
    # Which check it is: the catalog's gpu-arch-kind fields (the words are its patterns, not ours).
    kind = ctx.collect("gpu-arch-kind", text) or {}
    listed = ctx.match("gpu-arch-backend-list", text)
    if listed is not None:
        data["flag"] = "--attention-backend"
        backends = str(listed.get("backends") or "").strip()
        models = f" for {listed['models']} models" if listed.get("models") else ""
        return (f"on {listed.get('arch', 'this GPU')}{models} only these attention backends work: {backends} — set "
                f"`--attention-backend` to one of them{f' (now {attn})' if attn else ''}"), data
    if "no_bf16" in kind:
        data["flag"] = "--dtype"
        return "this GPU has no bfloat16 (it needs SM80+): `--dtype half` (float16), or an Ampere or newer GPU", data
    if "fa2" in kind:
        data["flag"] = "--attention-backend"
        return ("FlashAttention-2 needs Ampere (SM80) or newer: use `--attention-backend triton` (or `flashinfer`) on "
                "this GPU"), data
    if ctx.match("kernel-trtllm-gen", text) is not None or ctx.match("kernel-trtllm-gen", kernel) is not None:
        if ctx.match("kernel-moe", text) is not None:
            data["flag"] = "--moe-runner-backend"
            return ("TRT-LLM-gen MoE kernels are built for SM100 (B200/GB200) only: use `--moe-runner-backend triton` "
                    f"(or `cutlass`){f' instead of {moe}' if moe else ''}"), data
        data["flag"] = "--attention-backend"
        return ("TRT-LLM-gen attention kernels (TllmGenFmhaRunner) run on SM100 only, not on SM120/consumer Blackwell "
                f"or Hopper: use `--attention-backend flashinfer` (or `triton`){f' instead of {attn}' if attn else ''}, "
                "and no `--prefill-attention-backend/--decode-attention-backend trtllm_*`"), data
    if kernel == "MXFP4":
        data["flag"] = "--moe-runner-backend"
        return "the FlashInfer MXFP4 MoE kernel needs SM100: use `--moe-runner-backend triton_kernel`", data
    if "fa3" in kind:
        data["flag"] = "--attention-backend"
        return "FlashAttention-3 runs on Hopper (SM90) only: use `--attention-backend flashinfer` (or `triton`)", data
    if "fp8e4nv" in kind:
        return ("FP8 (e4m3) Triton kernels need SM89+ (Ada/Hopper): use a BF16/FP16, AWQ or GPTQ checkpoint on this GPU "
                "or a newer GPU"), data
    if "nvfp4" in kind:
        return "NVFP4 needs Blackwell (SM100/SM120): use an FP8/BF16 checkpoint on this GPU, or a Blackwell GPU", data
    if "cutedsl" in kind:
        data["flag"] = "--attention-backend"
        return "CuteDSL MLA runs on SM100 only: use `--attention-backend flashinfer` or `triton`", data
    if "no_image" in kind:
        named = (ctx.match("kernel-library-name", text) or {}).get("library")
        lib = str(named).replace("_", "-") if named and named != "torch" else "sgl-kernel / FlashInfer"
        what = "kernel" if kernel == "a kernel" else f"{kernel} kernel"
        return (f"the installed {lib} (and/or torch) wheel has no {what} compiled for this GPU's architecture: install "
                f"a build that includes it (the wheel for your CUDA version and SM, e.g. cu128 for Blackwell), or run on "
                f"a GPU the wheel supports"), data
    need = (ctx.match("gpu-arch-requirement", text) or {}).get("need")
    need = str(need).strip() if need else "another architecture"
    return f"this kernel needs {need}: choose a backend flag that supports this GPU (see the message) or that GPU", data


@rule(code="KRN001", name="unsupported-gpu-arch", family="kernels", severity=Severity.ERROR,
      needs=("tracebacks", "events"))
def unsupported_gpu_arch(ctx: RuleContext) -> Iterator[Finding]:
    """A kernel was built for another GPU architecture than the one it runs on.

    **What it means**
    A kernel or backend refused the GPU: `no kernel image is available for execution on the device`
    (the wheel was not compiled for this SM), `Unsupported architecture` from FlashInfer's TRT-LLM-gen
    runners (SM100-only kernels on SM120 / Hopper), `… is only supported on Blackwell/Hopper …`,
    `fp8e4nv not supported` (FP8 Triton kernels on pre-Ada GPUs).

    **Why it matters**
    The server cannot run the chosen kernel on this GPU at all; retrying does not help. Often another
    backend flag is all that is needed.

    **Example**
    ```
    tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture
    ```

    **Fix**
    Pick the backend that supports this architecture (`--attention-backend flashinfer|triton`,
    `--moe-runner-backend triton|triton_kernel`), install the wheel built for this GPU, or use the GPU
    the kernel needs.
    """
    for hit in find_message(ctx, "gpu-arch-unsupported"):
        tb = hit.traceback
        kernel = kernel_of(ctx, hit.text, tb)
        remedy, data = arch_remedy(ctx, hit.text, kernel)
        data["kernel"] = kernel
        sm = gpu_sm(ctx, hit.text)
        if sm is not None:
            data["gpu_sm"] = sm
        where = first_sglang_frame(tb)
        data["exception"] = hit.text.split(":", 1)[0] if tb is not None else None
        message = (f"{kernel} does not support this GPU architecture: {short(hit.text, 220)}"
                   + (f" (raised in {where})" if where else ""))
        events = [hit.event]
        after = echo_after(ctx, tb) if tb is not None else traceback_after(ctx, hit.line, 3, hit.rank)
        if after is not None and after.line not in ctx.claimed:
            events.append(after)  # the scheduler traceback that reports the same failure
        yield ctx.finding("unsupported-gpu-arch", message, remedy, events=events, data=data)
