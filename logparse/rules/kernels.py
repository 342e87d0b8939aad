"""Rules of the 'kernels' family (see shared/diagnoses.md): a kernel built for another GPU
architecture, a kernel library that does not match torch / CUDA / the driver, and illegal memory
accesses (device faults) that no more specific rule explains."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.rules.context import RuleContext, mask_numbers
from logparse.rules.matching import (
    Hit,
    echo_after,
    find_errors,
    first_sglang_frame,
    short,
    traceback_after,
)
from logparse.rules.registry import rule

# --------------------------------------------------------------------------- unsupported-gpu-arch

_ARCH = lazy_compile(
    r"no kernel image is available for execution on the device"
    r"|Unsupported architecture|unsupported (?:GPU )?arch(?:itecture)?\b"
    r"|(?:is |are )?only supported on (?:NVIDIA )?(?:Blackwell|Hopper|Ampere|SM ?\d+)"
    r"|(?:requires?|only supports?) (?:NVIDIA )?(?:Blackwell|Hopper) (?:GPUs|\(SM\d+)"
    r"|requires? SM ?\d{2,3}\b|requires SM\d+, SM\d+"
    r"|Please use Blackwell and above|is not supported on (?:Blackwell|Hopper) GPUs"
    r"|compute capability >= ?\d+|fp8e4nv (?:data type )?(?:is )?not supported"
    r"|CUDA capability sm_\d+ is not compatible|Current platform does not support NVFP4"
    r"|sm_\d+ is not (?:supported|compatible)|cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU",
    re.IGNORECASE)
_SM = lazy_compile(r"\bsm_?(\d{2,3})\b|\bSM ?(\d{2,3})\b|capability (\d+)\.(\d+)", re.IGNORECASE)
_TRTLLM = lazy_compile(r"TllmGen|trtllm|TRT-?LLM|TensorRT-LLM", re.IGNORECASE)
_MOE = lazy_compile(r"\bMoE\b|moe_|fused_moe|Cutlass MoE|MOE kernel", re.IGNORECASE)


def _kernel_of(text: str, tb: Traceback | None) -> str:
    """The kernel or library the message names (for the remedy)."""
    frames = " ".join(f"{f.path} {f.func}" for f in tb.frames) if tb is not None else ""
    if m := re.search(r"Error in function '(\w+)'", text):
        return m.group(1)
    if m := re.search(r"\b(\w+) failed with error code", text):
        return m.group(1)
    for key in ("TllmGen", "TRTLLM", "trtllm_mha", "trtllm_mla", "CuteDSL", "MXFP4", "FlashAttention3", "fa3",
                "fp8e4nv", "NVFP4", "DeepGEMM", "deep_gemm", "FlashInfer", "flashinfer", "triton"):
        if key.lower() in text.lower() or key.lower() in frames.lower():
            return key
    return "a kernel"


def _arch_remedy(text: str, kernel: str, ctx: RuleContext) -> tuple[str, dict[str, Any]]:
    data: dict[str, Any] = {}
    attn = ctx.views.arg("attention_backend")
    moe = ctx.views.arg("moe_runner_backend")
    low = text.lower()
    if _TRTLLM.search(text) or _TRTLLM.search(kernel):
        if _MOE.search(text):
            data["flag"] = "--moe-runner-backend"
            return ("TRT-LLM-gen MoE kernels are built for SM100 (B200/GB200) only: use `--moe-runner-backend triton` "
                    f"(or `cutlass`){f' instead of {moe}' if moe else ''}"), data
        data["flag"] = "--attention-backend"
        return ("TRT-LLM-gen attention kernels (TllmGenFmhaRunner) run on SM100 only, not on SM120/consumer Blackwell "
                f"or Hopper: use `--attention-backend flashinfer` (or `triton`){f' instead of {attn}' if attn else ''}, "
                "and no `--prefill-attention-backend/--decode-attention-backend trtllm_*`"), data
    if "mxfp4" in low:
        data["flag"] = "--moe-runner-backend"
        return "the FlashInfer MXFP4 MoE kernel needs SM100: use `--moe-runner-backend triton_kernel`", data
    if "fa3" in low or "flashattention3" in low or "flash attention" in low:
        data["flag"] = "--attention-backend"
        return "FlashAttention-3 runs on Hopper (SM90) only: use `--attention-backend flashinfer` (or `triton`)", data
    if "fp8e4nv" in low:
        return ("FP8 (e4m3) Triton kernels need SM89+ (Ada/Hopper): use a BF16/FP16, AWQ or GPTQ checkpoint on this GPU "
                "or a newer GPU"), data
    if "nvfp4" in low or "blackwell and above" in low:
        return "NVFP4 needs Blackwell (SM100/SM120): use an FP8/BF16 checkpoint on this GPU, or a Blackwell GPU", data
    if "cutedsl" in low:
        data["flag"] = "--attention-backend"
        return "CuteDSL MLA runs on SM100 only: use `--attention-backend flashinfer` or `triton`", data
    if "no kernel image" in low or "no_binary_for_gpu" in low or "not compatible with the current pytorch" in low:
        lib = "sgl-kernel" if kernel in ("RMSNorm", "a kernel") or "sgl_kernel" in low else kernel
        return (f"the installed {lib} (and/or torch) wheel has no kernel compiled for this GPU's architecture: install "
                f"a build that includes it (the wheel for your CUDA version and SM, e.g. cu128 for Blackwell), or run on "
                f"a GPU the wheel supports"), data
    m = re.search(r"(?:only supported on|requires?) ([^.;]+)", text)
    need = m.group(1).strip() if m else "another architecture"
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
    for hit in find_errors(ctx, _ARCH):
        tb = hit.traceback
        kernel = _kernel_of(hit.text, tb)
        remedy, data = _arch_remedy(hit.text, kernel, ctx)
        data["kernel"] = kernel
        if m := _SM.search(hit.text):
            sm = m.group(1) or m.group(2) or (m.group(3) + m.group(4))
            data["gpu_sm"] = int(sm)
        where = first_sglang_frame(tb)
        data["exception"] = hit.text.split(":", 1)[0] if tb is not None else None
        message = (f"{kernel} does not support this GPU architecture: {short(hit.text, 220)}"
                   + (f" (raised in {where})" if where else ""))
        events = [hit.event]
        after = echo_after(ctx, tb) if tb is not None else traceback_after(ctx, hit.line, 3, hit.rank)
        if after is not None and after.line not in ctx.claimed:
            events.append(after)  # the scheduler traceback that reports the same failure
        yield ctx.finding("unsupported-gpu-arch", message, remedy, events=events, data=data)


# --------------------------------------------------------------------------- kernel-library-mismatch

_MISMATCH = lazy_compile(
    r"undefined symbol: (\S+)|Could not load any common_ops library|common_ops\S*\.so: cannot open"
    r"|CUDA driver version is insufficient for CUDA runtime version"
    r"|The NVIDIA driver on your system is too old|PTX was compiled with an unsupported toolchain"
    r"|version `(GLIBC(?:XX)?_[\d.]+)' not found|(lib\w+\.so\.\d+): cannot open shared object file"
    r"|cudaErrorInsufficientDriver|CUDA_ERROR_UNSUPPORTED_PTX_VERSION", re.IGNORECASE)
_LIB = lazy_compile(r"(sgl_kernel|sgl-kernel|flashinfer|flash_attn|vllm|torch|deep_gemm|triton|xformers|common_ops)", re.IGNORECASE)


def _mismatch_remedy(text: str) -> tuple[str, dict[str, Any]]:
    data: dict[str, Any] = {}
    lib_m = _LIB.search(text)
    lib = (lib_m.group(1).lower().replace("-", "_") if lib_m else "the kernel library")
    if lib == "common_ops":
        lib = "sgl_kernel"
    data["library"] = lib
    sym = re.search(r"undefined symbol: (\S+)", text)
    if sym:
        name = sym.group(1)
        data["symbol"] = name
        if re.match(r"cu[A-Z]", name):
            data["cause"] = "driver-api"
            return (f"`{name}` is a CUDA driver API call the installed NVIDIA driver does not provide: the {lib} wheel "
                    "was built for a newer CUDA than this driver supports — upgrade the NVIDIA driver, or install the "
                    f"{lib} build for your CUDA version (`pip install {lib.replace('_', '-')}` matching torch's CUDA, "
                    "see `python -c 'import torch; print(torch.version.cuda)'`)"), data
        if re.match(r"_ZN?\d*(?:c10|at|torch)|_ZN3c10|_ZNK?\d*at", name) or "c10" in name or "torch" in name:
            data["cause"] = "torch-abi"
            return (f"the {lib} binary was built against another torch version (the missing symbol is a torch C++ "
                    f"symbol): reinstall the {lib} build that matches the installed torch (the versions pinned by "
                    "your sglang release, e.g. `pip install --force-reinstall sglang[all]==<your version>`)"), data
        data["cause"] = "abi"
        return (f"the {lib} binary does not match the libraries it links against: install matching versions of "
                f"sgl-kernel / flashinfer / torch / CUDA (the ones pinned by your sglang release)"), data
    if re.search(r"driver version is insufficient|driver on your system is too old|InsufficientDriver", text, re.IGNORECASE):
        data["cause"] = "driver-too-old"
        return ("the NVIDIA driver is older than the CUDA runtime of torch / the kernel wheels: upgrade the driver "
                "or install wheels built for an older CUDA"), data
    if re.search(r"PTX|UNSUPPORTED_PTX", text):
        data["cause"] = "ptx-toolchain"
        return ("kernels were JIT-compiled by a newer CUDA toolchain than the driver supports: upgrade the driver "
                "or use a toolkit that matches it (CUDA_HOME)"), data
    if m := re.search(r"version `(GLIBC(?:XX)?_[\d.]+)' not found", text):
        data["cause"] = "glibc"
        return f"the binary needs {m.group(1)}, which this OS image lacks: use a newer base image or a wheel built for it", data
    data["cause"] = "load-failure"
    return (f"{lib} could not be loaded: reinstall sgl-kernel / torch / CUDA in matching versions "
            "(the ones pinned by your sglang release)"), data


@rule(code="KRN002", name="kernel-library-mismatch", family="kernels", severity=Severity.ERROR,
      needs=("tracebacks", "events"),
    stage="startup",
)
def kernel_library_mismatch(ctx: RuleContext) -> Iterator[Finding]:
    """A compiled kernel library does not match torch, CUDA or the driver it runs with.

    **What it means**
    Importing `sgl_kernel`, FlashInfer or another torch extension failed: `undefined symbol: …` in its
    shared object, `[sgl_kernel] CRITICAL: Could not load any common_ops library!`, or the driver is too
    old for the CUDA the wheel was built with.

    **Why it matters**
    Nothing that needs the library can run; this is an installation problem, not a GPU or model
    problem (it is not an unsupported architecture).

    **Example**
    ```
    ImportError: /opt/conda/lib/python3.10/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxStreamCreate
    ```

    **Fix**
    Install matching versions of sgl-kernel / torch / CUDA (the ones your sglang release pins); a
    missing `cu…` driver symbol means the NVIDIA driver is older than the wheel's CUDA: upgrade it.
    """
    hits = find_errors(ctx, _MISMATCH)
    grouped: dict[str, list[Hit]] = {}
    for hit in hits:
        key = re.sub(r"\d+", "#", hit.match.group(0))
        grouped.setdefault(key, []).append(hit)
    for group in grouped.values():
        hit = group[0]
        remedy, data = _mismatch_remedy(hit.text)
        what = hit.match.group(0)
        message = f"{data['library']} failed to load: {short(what, 160)}"
        if "symbol" in data:
            message += f" — {'a CUDA driver API symbol' if data['cause'] == 'driver-api' else 'an ABI mismatch'}"
        events = [h.event for h in group]
        after = echo_after(ctx, hit.traceback) if hit.traceback is not None else traceback_after(ctx, hit.line, 3, hit.rank)
        if after is not None and after.line not in ctx.claimed:
            events.append(after)
        yield ctx.finding("kernel-library-mismatch", message, remedy, events=events, data=data,
                          fingerprint=f"kernel-library-mismatch|{data.get('symbol') or what}")


# --------------------------------------------------------------------------- illegal-memory-access

_IMA = lazy_compile(
    r"an illegal memory access was encountered|device-side assert(?:ion)? triggered|CUDA_ERROR_LAUNCH_FAILED"
    r"|unspecified launch failure|CUDA_ERROR_ILLEGAL_ADDRESS|cudaErrorIllegalAddress|misaligned address"
    r"|illegal instruction was encountered|CUDA_ERROR_ILLEGAL_INSTRUCTION|Assertion `[^`]+` failed", re.IGNORECASE)
_BACKENDS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"deep_gemm|deepgemm", re.IGNORECASE), "DeepGEMM", "`SGLANG_ENABLE_JIT_DEEPGEMM=0`"),
    (re.compile(r"flashinfer.*sampling|sampling_from_probs|top_k_top_p", re.IGNORECASE), "FlashInfer sampling",
     "`--sampling-backend pytorch`"),
    (re.compile(r"custom_all_reduce|custom_ar", re.IGNORECASE), "custom all-reduce", "`--disable-custom-all-reduce`"),
    (re.compile(r"flashinfer", re.IGNORECASE), "FlashInfer", "`--attention-backend triton` (or `fa3` on Hopper)"),
    (re.compile(r"flashattention|flash_attn|fa3", re.IGNORECASE), "FlashAttention", "`--attention-backend flashinfer`"),
    (re.compile(r"triton_backend|triton_ops|extend_attention|decode_attention", re.IGNORECASE), "Triton attention",
     "`--attention-backend flashinfer`"),
    (re.compile(r"fused_moe|moe_runner|cutlass_moe", re.IGNORECASE), "MoE runner", "`--moe-runner-backend triton`"),
    (re.compile(r"cuda_graph_runner|graph_runner", re.IGNORECASE), "CUDA graph replay", "`--disable-cuda-graph` (to confirm)"),
)


@rule(code="KRN003", name="illegal-memory-access", family="kernels", severity=Severity.ERROR,
      needs=("tracebacks",), fallback=True,
    follow_on=True,
)
def illegal_memory_access(ctx: RuleContext) -> Iterator[Finding]:
    """A GPU kernel faulted (illegal memory access, device-side assert, launch failure).

    **What it means**
    A kernel accessed memory it does not own or hit a device assertion: `CUDA error: an illegal memory
    access was encountered`, `device-side assert triggered`, `CUDA_ERROR_LAUNCH_FAILED`. This rule
    reports the faults that no more specific rule (e.g. `deepgemm-scale-format`) explains.

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
    hits = find_errors(ctx, _IMA)
    # Lone lines (torch prints a device assert once per faulting thread): one finding per message.
    lone: dict[str, list[Hit]] = {}
    for hit in hits:
        if hit.traceback is None:
            lone.setdefault(mask_numbers(hit.match.group(0)), []).append(hit)
    firsts = {id(group[0]) for group in lone.values()}
    for hit in hits:
        if hit.traceback is None and id(hit) not in firsts:
            continue
        tb = hit.traceback
        blob = hit.text + " " + (ctx.traceback_text(tb) if tb is not None else "")
        backend = None
        flag = None
        for pattern, name, remedy_flag in _BACKENDS:
            if pattern.search(blob):
                backend, flag = name, remedy_flag
                break
        data: dict[str, Any] = {"fault": hit.match.group(0)}
        where = first_sglang_frame(tb)
        if backend:
            data["backend"] = backend
            remedy = (f"switch away from {backend}: {flag}; rerun with `CUDA_LAUNCH_BLOCKING=1` to confirm the kernel "
                      "and report it upstream with this traceback")
        else:
            attn = ctx.views.arg("attention_backend")
            data["backend"] = None
            remedy = ("rerun with `CUDA_LAUNCH_BLOCKING=1` to find the faulting kernel (the traceback does not name a "
                      "backend), then switch that backend (e.g. `--attention-backend "
                      f"{'triton' if attn != 'triton' else 'flashinfer'}`) and report it upstream")
        message = f"GPU kernel fault: {short(hit.match.group(0), 120)}" + (f" in {where}" if where else "")
        if backend:
            message += f" (the traceback goes through {backend})"
        events = [hit.event]
        if tb is None:
            group = lone[mask_numbers(hit.match.group(0))]
            events = [h.event for h in group[:16]]
            if len(group) > 1:
                data["lines"] = len(group)
        yield ctx.finding("illegal-memory-access", message, remedy, events=events, data=data)
