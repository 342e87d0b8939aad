"""quant-block-misaligned: a tensor-parallel slice of a quantized weight does not divide the
quantization block; the TP sizes that work are computed from the sizes in the message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, KnownMessage, Severity
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.errors import Found, find_message
from logparse.rules.frames import first_sglang_frame, traceback_after
from logparse.rules.registry import rule

TP_CANDIDATES = (1, 2, 4, 8, 16, 32)
# Catalog messages of this diagnosis, in the order a text is classified (sizes first).
BLOCK_CODES = ("quant-partition-block", "quant-moe-block", "quant-moe-tp", "quant-alignment")


def tp_candidates(full: int, block: int, limit: int = 32) -> list[int]:
    """TP sizes t for which `full` splits evenly into t parts that are each a multiple of `block`."""
    return [t for t in TP_CANDIDATES if t <= limit and full % t == 0 and (full // t) % block == 0]


def _partition_advice(tp: int | None, f: dict[str, Any], data: dict[str, Any]) -> tuple[str, str]:
    dim, part, bname, block = f.get("dim"), f.get("part"), f.get("block_name"), f.get("block")
    data.update(partition=dim, partition_size=part, block_name=bname, quant_block=block)
    what = f"{dim} = {part} is not a multiple of the quantization {bname} = {block}"
    if not isinstance(part, int) or not isinstance(block, int) or block <= 0:
        return what, "choose a `--tp` for which the slice is a multiple of the quantization block"
    if tp:
        full = part * tp
        cands = tp_candidates(full, block)
        data.update(full_size=full, tp_candidates=cands)
        what += f" at TP{tp} (full size {full} = {part} × {tp})"
        if cands:
            return what, (f"use a TP size that splits {full} into multiples of {block}: `--tp {max(cands)}`"
                          + (f" (valid: {', '.join(map(str, cands))})" if len(cands) > 1 else "")
                          + ", and reach more GPUs with `--dp` / `--ep` (MoE) instead")
        return what, (f"no TP size splits {full} into multiples of {block}: run with `--tp 1` and scale with `--dp`, "
                      "or use a checkpoint with a smaller block")
    return what, (f"the full size is {part} × tp: choose `--tp` so that size/tp is a multiple of {block} (smaller TP), "
                  "and use `--dp` / `--ep` for the other GPUs")


def _moe_block_advice(tp: int | None, f: dict[str, Any], data: dict[str, Any]) -> tuple[str, str]:
    inter, moe_tp, block = f.get("inter"), f.get("moe_tp"), f.get("block")
    what = f"moe_intermediate_size {inter} / moe_tp_size {moe_tp} is not a multiple of weight_block_size_n {block}"
    if not isinstance(inter, int) or not isinstance(block, int) or block <= 0:
        return what, "choose --tp/--ep so that moe_intermediate_size / (tp/ep) is a multiple of the block"
    cands = tp_candidates(inter, block)
    data.update(moe_intermediate_size=inter, moe_tp_size=moe_tp, quant_block=block, moe_tp_candidates=cands)
    if not cands:
        return what, "no moe TP split fits this block: use expert parallelism (`--ep` equal to `--tp`)"
    best = max(cands)
    if tp:
        data["ep_candidates"] = [tp // c for c in cands if tp % c == 0]
        return what, (f"keep moe_tp_size = tp/ep in {cands}: e.g. `--tp {tp} --ep {tp // best}`"
                      if tp % best == 0 else f"use `--tp {best}` (moe_tp_size in {cands})")
    return what, f"choose --tp/--ep so that tp/ep is one of {cands} (e.g. `--ep` = tp/{best})"


def _block_advice(ctx: RuleContext, code: str, fields: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(what, remedy, data) from the numbers in the message and the TP size."""
    tp = ctx.views.tp_size
    data: dict[str, Any] = {"tp_size": tp}
    if code == "quant-partition-block":
        return (*_partition_advice(tp, fields, data), data)
    if code == "quant-moe-block":
        return (*_moe_block_advice(tp, fields, data), data)
    if code == "quant-moe-tp" and isinstance(fields.get("inter"), int):
        inter, moe_tp = fields["inter"], fields.get("moe_tp")
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


def _model(ctx: RuleContext, hit: Found) -> str | None:
    """The model class SGLang failed to build, when the message names it."""
    if isinstance(hit.event, KnownMessage) and hit.event.code == "model-instantiate-failed":
        model = hit.event.fields.get("model")
        if isinstance(model, str) and model:
            return model
    named = ctx.match("quant-instantiate-model", hit.text)
    return str(named["model"]) if named and named.get("model") else None


@rule(code="QNT003", name="quant-block-misaligned", family="quantization", severity=Severity.ERROR,
      needs=("tracebacks", "events"), stage="startup")
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
    for hit in find_message(ctx, BLOCK_CODES):
        what, remedy, data = _block_advice(ctx, hit.code, hit.fields)
        model = _model(ctx, hit)
        if model:
            data["model"] = model
        events: list[Event] = [hit.event]
        tb = hit.traceback
        if tb is None:
            tb = traceback_after(ctx, hit.line, 4, hit.rank)
            if tb is not None and tb.line not in ctx.claimed:
                events.append(tb)
        where = first_sglang_frame(tb)
        named = f" {model}:" if model else ""
        message = f"Quantized weights do not split at this TP size:{named} {what}" + (f" (in {where})" if where else "")
        yield ctx.finding("quant-block-misaligned", message, remedy, events=events, data=data)
