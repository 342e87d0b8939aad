"""Rules of the 'quantization' family (see shared/diagnoses.md): DeepGEMM scale formats, scale tensors
the loader does not know, and tensor-parallel partitions that do not divide the quantization block."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, ExceptionLine, KnownMessage, Severity, Traceback, WeightLoadEnd
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.rules.context import RuleContext
from logparse.rules.matching import (
    find_errors,
    first_sglang_frame,
    short,
    traceback_after,
    traceback_at,
)
from logparse.rules.registry import rule

# --------------------------------------------------------------------------- deepgemm-scale-format

_DG_WARN = lazy_compile(r"DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0")
# The UE8M0 scale-pack check of DeepGEMM's layout kernels: a scale that is not a power of two.
_DG_ASSERT = lazy_compile(r"0x807fffff|smxx_layout\.cuh.*(?:Assertion|condition)|(?:Assertion|assert)\w*.*ue8m0"
                        r"|ue8m0.*(?:Assertion|assert)", re.IGNORECASE)
_LAUNCH_FAIL = lazy_compile(r"CUDA_ERROR_LAUNCH_FAILED|illegal memory access|unspecified launch failure|"
                          r"device-side assert|smxx_layout", re.IGNORECASE)
_DG_REMEDY = ("disable DeepGEMM for this checkpoint (`SGLANG_ENABLE_JIT_DEEPGEMM=0`, or e.g. `--fp8-gemm-backend "
              "triton` where available), or use a checkpoint whose FP8 block scales are UE8M0 "
              "(`\"scale_fmt\": \"ue8m0\"` in its quantization_config)")


@rule(code="QNT001", name="deepgemm-scale-format", family="quantization", severity=Severity.WARNING,
      needs=("events", "tracebacks"))
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
    asserts = find_errors(ctx, _DG_ASSERT)
    for hit in asserts:
        events: list[Event] = [hit.event]
        # The launch failure that follows the assert (a lone line or a traceback) is its consequence.
        for e in ctx.log.events:
            if hit.line < e.line <= hit.line + 6 and isinstance(e, (Traceback, ExceptionLine)) \
                    and e.line not in ctx.claimed and _LAUNCH_FAIL.search(ctx.text(e.line) + getattr(e, "message", "")):
                events.append(e)
        tb = hit.traceback or traceback_after(ctx, hit.line, 6)
        if tb is not None and tb not in events and tb.line not in ctx.claimed:
            events.append(tb)
        cond = re.search(r"condition: (.+)$", hit.text)
        data: dict[str, Any] = {"assert": cond.group(1).strip() if cond else short(hit.match.group(0), 120)}
        if m := re.search(r"(CUDA_ERROR_\w+)", " ".join(ctx.text(e.line) for e in events)):
            data["cuda_error"] = m.group(1)
        message = ("DeepGEMM's UE8M0 scale-pack check failed"
                   + (f" ({data['assert']})" if cond else "")
                   + ": the checkpoint's FP8 block scales are not powers of two (not UE8M0)"
                   + (f", and the kernel launch then failed ({data['cuda_error']})" if "cuda_error" in data else ""))
        yield ctx.finding("deepgemm-scale-format", message, _DG_REMEDY, events=events, data=data,
                          severity=Severity.ERROR)
    warns = [e for e in ctx.log.of(KnownMessage) if e.code == "deepgemm-scale-fmt"]
    if not warns:
        warns = [Event(line=no, end_line=no) for no, _ in ctx.texts_matching(_DG_WARN, unclaimed=False)]
    if warns:
        ranks = sorted({e.rank for e in warns if e.rank})
        message = ("DeepGEMM is enabled but the checkpoint's scale_fmt is not ue8m0: FP8 block scales are rounded to "
                   "powers of two on Blackwell (silent accuracy degradation)")
        if len(warns) > 1:
            message += f" — printed {len(warns)} times"
        yield ctx.finding("deepgemm-scale-format", message, _DG_REMEDY, events=warns[:16], ranks=ranks,
                          data={"warnings": len(warns)}, fingerprint="deepgemm-scale-format|warning")


# --------------------------------------------------------------------------- quant-scale-missing

_SCALE_KEY = lazy_compile(r"""['"]([\w.\-]*?(?:k_scale|v_scale|kv_scale|input_scale\w*|weight_scale\w*|scale_inv|"""
                        r"""[._]scales?|weight_global_scale|input_global_scale|_zero_point|qzeros|g_idx)[\w.]*)['"]""")


def _quant_method(ctx: RuleContext) -> str | None:
    q = ctx.views.arg("quantization")
    if isinstance(q, str) and q:
        return q
    for e in ctx.log.of(WeightLoadEnd):
        if e.quant:
            return e.quant
    for e in ctx.log.of(KnownMessage):
        if e.code == "modelopt-experimental":
            return "modelopt_" + str(e.fields.get("format", "")).lower() if e.fields.get("format") else "modelopt"
        if e.code == "quant-not-optimized" and e.fields.get("quantization"):
            return str(e.fields["quantization"])
    return None


@rule(code="QNT002", name="quant-scale-missing", family="quantization", severity=Severity.ERROR,
      needs=("tracebacks",),
    stage="startup",
)
def quant_scale_missing(ctx: RuleContext) -> Iterator[Finding]:
    """Loading the weights failed on a quantization scale tensor the loader does not know.

    **What it means**
    The checkpoint holds (or lacks) a scale tensor — `k_scale`, `v_scale`, `input_scale`,
    `weight_scale`, `weight_scale_inv` — that this SGLang's loader for the quantization format does not
    map to a model parameter, so the weight loader raises `KeyError: '…k_scale'`.

    **Why it matters**
    The model cannot be loaded. It is a mismatch between the checkpoint's export format and the SGLang
    version's loader (new ModelOpt/compressed-tensors exports, KV-cache scales), not a broken download.

    **Example**
    ```
    KeyError: 'language_model.model.layers.0.self_attn.qkv_proj.k_scale'
    ```

    **Fix**
    Upgrade SGLang (newer loaders map these scales), or use a checkpoint exported for this version /
    this quantization method.
    """
    pattern = re.compile(r"^KeyError: " + _SCALE_KEY.pattern)
    found = False
    for hit in find_errors(ctx, pattern):
        found = True
        yield _scale_finding(ctx, hit.match.group(1), hit.event, hit.traceback)
    if found:
        return
    # A lone `KeyError: '…_scale'` line the assembler did not keep as an exception.
    for no, m in ctx.texts_matching(re.compile(r"KeyError: " + _SCALE_KEY.pattern)):
        yield _scale_finding(ctx, m.group(1), Event(line=no, end_line=no), traceback_at(ctx, no))


def _scale_finding(ctx: RuleContext, key: str, ev: Event, tb: Traceback | None) -> Finding:
    q = _quant_method(ctx)
    leaf = key.rsplit(".", 1)[-1]
    kind = {"k_scale": "the FP8 KV-cache key scale", "v_scale": "the FP8 KV-cache value scale",
            "kv_scale": "the (deprecated) combined KV-cache scale"}.get(leaf, f"a quantization scale ({leaf})")
    where = first_sglang_frame(tb)
    message = (f"Loading weights failed: KeyError on '{key}' — {kind} that this SGLang's "
               f"{q + ' ' if q else ''}loader has no parameter for" + (f" (in {where})" if where else ""))
    remedy = (f"a loader/version mismatch for {q or 'this quantization format'}: upgrade SGLang "
              "(`pip install -U \"sglang[all]\"`, newer loaders map this scale), or use a checkpoint exported for "
              "this SGLang version / quantization method")
    events = [ev] + ([tb] if tb is not None and tb is not ev else [])
    return ctx.finding("quant-scale-missing", message, remedy, events=events,
                       data={"key": key, "scale": leaf, "quantization": q})


# --------------------------------------------------------------------------- quant-block-misaligned

_PARTITION = lazy_compile(r"Weight (output_partition_size|input_size_per_partition) = (\d+) is not divisible by "
                        r"weight quantization (block_[nk]) = (\d+)")
_MOE_BLOCK = lazy_compile(r"moe_intermediate_size=(\d+) / moe_tp_size=(\d+)\) % weight_block_size_n=(\d+)")
_MOE_TP = lazy_compile(r"moe_intermediate_size (\d+) must be divisible by moe_tp_size \((\d+)\)")
_ALIGN = lazy_compile(r"The (input|output) size is not aligned with the quantized weight shape"
                    r"|input_size_per_partition \S* ?(?:= ?)?(\d+)? ?is not divisible by (?:the )?(?:group_size|min_thread_k)"
                    r"|not divisible by (?:group_size|group size|pack_factor)", re.IGNORECASE)
_ANY_BLOCK = lazy_compile("|".join(p.pattern for p in (_PARTITION, _MOE_BLOCK, _MOE_TP, _ALIGN)), re.IGNORECASE)
TP_CANDIDATES = (1, 2, 4, 8, 16, 32)


def tp_candidates(full: int, block: int, limit: int = 32) -> list[int]:
    """TP sizes t for which `full` splits evenly into t parts that are each a multiple of `block`."""
    return [t for t in TP_CANDIDATES if t <= limit and full % t == 0 and (full // t) % block == 0]


def _block_advice(ctx: RuleContext, text: str) -> tuple[str, str, dict[str, Any]]:
    """(what, remedy, data) from the numbers in the message and the TP size."""
    tp = ctx.views.tp_size
    data: dict[str, Any] = {"tp_size": tp}
    if m := _PARTITION.search(text):
        dim, part, bname, block = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
        data.update(partition=dim, partition_size=part, block_name=bname, quant_block=block)
        what = f"{dim} = {part} is not a multiple of the quantization {bname} = {block}"
        if tp:
            full = part * tp
            cands = tp_candidates(full, block)
            data.update(full_size=full, tp_candidates=cands)
            what += f" at TP{tp} (full size {full} = {part} × {tp})"
            if cands:
                return what, (f"use a TP size that splits {full} into multiples of {block}: `--tp {max(cands)}`"
                              + (f" (valid: {', '.join(map(str, cands))})" if len(cands) > 1 else "")
                              + ", and reach more GPUs with `--dp` / `--ep` (MoE) instead"), data
            return what, (f"no TP size splits {full} into multiples of {block}: run with `--tp 1` and scale with `--dp`, "
                          "or use a checkpoint with a smaller block"), data
        return what, (f"the full size is {part} × tp: choose `--tp` so that size/tp is a multiple of {block} (smaller TP), "
                      "and use `--dp` / `--ep` for the other GPUs"), data
    if m := _MOE_BLOCK.search(text):
        inter, moe_tp, block = int(m.group(1)), int(m.group(2)), int(m.group(3))
        cands = tp_candidates(inter, block)
        data.update(moe_intermediate_size=inter, moe_tp_size=moe_tp, quant_block=block, moe_tp_candidates=cands)
        what = f"moe_intermediate_size {inter} / moe_tp_size {moe_tp} is not a multiple of weight_block_size_n {block}"
        if cands:
            best = max(cands)
            if tp:
                eps = [tp // c for c in cands if tp % c == 0]
                data["ep_candidates"] = eps
                return what, (f"keep moe_tp_size = tp/ep in {cands}: e.g. `--tp {tp} --ep {tp // best}`"
                              if tp % best == 0 else f"use `--tp {best}` (moe_tp_size in {cands})"), data
            return what, f"choose --tp/--ep so that tp/ep is one of {cands} (e.g. `--ep` = tp/{best})", data
        return what, "no moe TP split fits this block: use expert parallelism (`--ep` equal to `--tp`)", data
    if m := _MOE_TP.search(text):
        inter, moe_tp = int(m.group(1)), int(m.group(2))
        cands = tp_candidates(inter, 1)
        data.update(moe_intermediate_size=inter, moe_tp_size=moe_tp, moe_tp_candidates=cands)
        return (f"moe_intermediate_size {inter} is not divisible by moe_tp_size {moe_tp}",
                f"choose --tp/--ep so that tp/ep is one of {cands}", data)
    # AWQ / GPTQ / Marlin packing: the message carries no sizes.
    data["undecidable"] = True
    what = "the quantized weight shape does not split evenly for this tensor-parallel size (AWQ/GPTQ packing)"
    lower = f"`--tp {tp // 2}`" if tp and tp > 1 else "a smaller `--tp`"
    return what, (f"try {lower}; the log does not print the sizes, so it cannot say which TP sizes work: the model's "
                  "config.json (intermediate_size, hidden_size) and the checkpoint's group_size (quantize_config.json, "
                  "usually 128) decide it — a TP size t works when intermediate_size/t and hidden_size/t are multiples "
                  "of group_size"), data


@rule(code="QNT003", name="quant-block-misaligned", family="quantization", severity=Severity.ERROR,
      needs=("tracebacks", "events"),
    stage="startup",
)
def quant_block_misaligned(ctx: RuleContext) -> Iterator[Finding]:
    """A tensor-parallel partition of a quantized weight does not divide the quantization block.

    **What it means**
    Block-quantized (FP8 128×128) and group-quantized (AWQ/GPTQ) weights can only be split across GPUs
    at block boundaries. With this `--tp` a layer's slice is not a multiple of the block:
    `Weight output_partition_size = 192 is not divisible by weight quantization block_n = 128`, or for
    AWQ `The input size is not aligned with the quantized weight shape`.

    **Why it matters**
    The model cannot be built at this TP size; the scheduler fails while creating the layers.

    **Example**
    ```
    Failed to instantiate MiniCPMV: The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.
    [2025-04-01 18:12:48 TP0] Scheduler hit an exception: Traceback (most recent call last):
    ```

    **Fix**
    Use a `--tp` for which the partition divides the block (the finding lists the candidates computed
    from the sizes in the message), and reach more GPUs with data or expert parallelism (`--dp`, `--ep`).
    """
    for hit in find_errors(ctx, _ANY_BLOCK):
        what, remedy, data = _block_advice(ctx, hit.text)
        if m := re.search(r"Failed to instantiate (\w+)", hit.text):
            data["model"] = m.group(1)
        events: list[Event] = [hit.event]
        tb = hit.traceback
        if tb is None:
            tb = traceback_after(ctx, hit.line, 4, hit.rank)
            if tb is not None and tb.line not in ctx.claimed:
                events.append(tb)
        where = first_sglang_frame(tb)
        model = f" {data['model']}:" if "model" in data else ""
        message = f"Quantized weights do not split at this TP size:{model} {what}" + (f" (in {where})" if where else "")
        yield ctx.finding("quant-block-misaligned", message, remedy, events=events, data=data)
