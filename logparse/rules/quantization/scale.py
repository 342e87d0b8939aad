"""quant-scale-missing: the weight loader has no parameter for a quantization scale tensor
(`KeyError: '…k_scale'`) — a checkpoint-format / SGLang-version mismatch."""

from __future__ import annotations

from collections.abc import Iterator

from logparse.model.events import Event, KnownMessage, Severity, Traceback, WeightLoadEnd
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.rules.frames import first_sglang_frame
from logparse.rules.registry import rule

_KINDS = {
    "k_scale": "the FP8 KV-cache key scale",
    "v_scale": "the FP8 KV-cache value scale",
    "kv_scale": "the (deprecated) combined KV-cache scale",
}


def quant_method(ctx: RuleContext) -> str | None:
    """The quantization method of the run: the argument, the weight-load line, or a quantization message."""
    q = ctx.views.arg("quantization")
    if isinstance(q, str) and q:
        return q
    for e in ctx.log.of(WeightLoadEnd):
        if e.quant:
            return e.quant
    for m in ctx.log.of(KnownMessage):
        if m.code == "modelopt-experimental":
            return "modelopt_" + str(m.fields.get("format", "")).lower() if m.fields.get("format") else "modelopt"
        if m.code == "quant-not-optimized" and m.fields.get("quantization"):
            return str(m.fields["quantization"])
    return None


@rule(code="QNT002", name="quant-scale-missing", family="quantization", severity=Severity.ERROR,
      needs=("tracebacks",), stage="startup")
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
    for hit in find_message(ctx, "quant-scale-keyerror"):
        yield _scale_finding(ctx, str(hit.fields.get("key", "")), hit.event, hit.traceback)


def _scale_finding(ctx: RuleContext, key: str, ev: Event, tb: Traceback | None) -> Finding:
    q = quant_method(ctx)
    leaf = key.rsplit(".", 1)[-1]
    kind = _KINDS.get(leaf, f"a quantization scale ({leaf})")
    where = first_sglang_frame(tb)
    message = (f"Loading weights failed: KeyError on '{key}' — {kind} that this SGLang's "
               f"{q + ' ' if q else ''}loader has no parameter for" + (f" (in {where})" if where else ""))
    remedy = (f"a loader/version mismatch for {q or 'this quantization format'}: upgrade SGLang "
              "(`pip install -U \"sglang[all]\"`, newer loaders map this scale), or use a checkpoint exported for "
              "this SGLang version / quantization method")
    events = [ev] + ([tb] if tb is not None and tb is not ev else [])
    return ctx.finding("quant-scale-missing", message, remedy, events=events,
                       data={"key": key, "scale": leaf, "quantization": q})
