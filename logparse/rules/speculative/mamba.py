"""spec-mamba-extra-buffer: a hybrid Mamba/GDN model with speculative decoding but without the mamba
extra buffer, and the sibling mamba-strategy / radix-cache / track-interval checks."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import Found, find_message
from logparse.rules.registry import rule
from logparse.run.speculative import SpecConfig, spec_config

MAMBA_CODES = (
    "spec-mamba-radix-no-buffer", "spec-mamba-radix-disabled", "spec-mamba-extra-buffer-without-radix",
    "spec-mamba-no-buffer-conflict", "spec-mamba-extra-buffer-unsupported", "spec-mamba-track-interval-draft",
    "spec-mamba-track-interval-page", "spec-mamba-chunk-page", "spec-mamba-no-buffer-limit",
)
# 0.5.9 only warned and ran without the radix cache.
WARNING_CODE = "spec-mamba-radix-disabled"
MAX_DIGITS = 9  # a page size or interval; longer digit runs are damage, not a number to compute with
SHOWN = 400  # characters of SGLang's message a finding's message keeps
GENERIC = "the mamba scheduler strategy the message names (`--mamba-scheduler-strategy extra_buffer|no_buffer`)"


def _arg(ctx: RuleContext, name: str, line: int) -> Any:
    """A server argument of the launch attempt `line` belongs to (of the whole log for one attempt)."""
    if len(ctx.views.run.launches) > 1:
        return ctx.views.run.launch_at(line).arg(name)
    return ctx.views.arg(name)


def _int(v: Any) -> int | None:
    """A server argument as an int (a positive page size), None when absent or damaged."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    text = v.strip() if isinstance(v, str) else ""
    return int(text) if text.isdigit() and len(text) <= MAX_DIGITS else None


def mamba_remedy(ctx: RuleContext, hit: Found, cfg: SpecConfig) -> tuple[str, dict[str, Any]]:
    """The strategy (or interval) the check asks for, from which check it is and its numbers."""
    data: dict[str, Any] = {}
    strategy = _arg(ctx, "mamba_scheduler_strategy", hit.line)
    if strategy:
        data["mamba_scheduler_strategy"] = strategy
    code, fields = hit.code, hit.fields
    v2 = "" if cfg.spec_v2 else " and `SGLANG_ENABLE_SPEC_V2=1`"
    if code in ("spec-mamba-radix-no-buffer", "spec-mamba-radix-disabled"):
        data["needs"] = "extra_buffer"
        return f"`--mamba-scheduler-strategy extra_buffer`{v2} (keeps the radix cache with speculative decoding)", data
    if code == "spec-mamba-extra-buffer-without-radix":
        data["needs"] = "no_buffer"
        return ("`--mamba-scheduler-strategy no_buffer` with `--disable-radix-cache` (or drop `--disable-radix-cache` "
                "to keep extra_buffer)"), data
    if code == "spec-mamba-no-buffer-conflict":
        data["needs"] = "extra_buffer"
        return "`--mamba-scheduler-strategy extra_buffer`", data
    if code == "spec-mamba-track-interval-draft" and fields.get("draft_tokens"):
        need = int(fields["draft_tokens"])
        page = _int(_arg(ctx, "page_size", hit.line)) or 1
        value = math.ceil(need / page) * page
        data.update(mamba_track_interval=fields.get("interval"), needed=value)
        return f"`--mamba-track-interval {value}` (≥ speculative_num_draft_tokens {need}, a multiple of page_size {page})", data
    if code == "spec-mamba-track-interval-page" and fields.get("interval") and fields.get("page_size"):
        cur, page = int(fields["interval"]), int(fields["page_size"])
        value = math.ceil(cur / page) * page
        data.update(mamba_track_interval=cur, page_size=page, needed=value)
        return f"`--mamba-track-interval {value}` (a multiple of page_size {page})", data
    # extra_buffer_lazy under PD asks for the plain extra buffer, not for none
    if code == "spec-mamba-extra-buffer-unsupported" and "unsupported_under" not in fields:
        data["needs"] = "no_buffer"
        return ("this model/platform has no mamba extra buffer: `--mamba-scheduler-strategy no_buffer` with "
                "`--disable-radix-cache` for speculative decoding"), data
    return GENERIC, data


@rule(code="SPEC002", name="spec-mamba-extra-buffer", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"), stage="startup")
def spec_mamba_extra_buffer(ctx: RuleContext) -> Iterator[Finding]:
    """A hybrid Mamba/GDN model runs speculative decoding without the mamba extra buffer.

    **What it means**
    Hybrid models (Qwen3-Next, Qwen3.5, Nemotron-H, …) keep a Mamba state per request. With the
    default `--mamba-scheduler-strategy no_buffer` the radix cache cannot roll that state back after
    rejected drafts, so 0.5.10–0.5.11 refuse the launch (`Speculative decoding for … is not compatible
    with radix cache when using --mamba-scheduler-strategy no_buffer`) and 0.5.9 silently disables the
    radix cache. Sibling checks: extra_buffer with `--disable-radix-cache`, `mamba_track_interval`
    smaller than the draft tokens, FlashInfer GDN decode with no_buffer.

    **Why it matters**
    The server does not start (or runs without prefix caching).

    **Example**
    ```
    ValueError: Speculative decoding for Qwen3_5MoeForCausalLM is not compatible with radix cache when using --mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.
    ```

    **Fix**
    `--mamba-scheduler-strategy extra_buffer` (with `SGLANG_ENABLE_SPEC_V2=1` where the message asks
    for it), or the combination the sibling message allows.
    """
    warned = False
    for hit in find_message(ctx, MAMBA_CODES):
        cfg = spec_config(ctx.log, ctx.views, hit.line)
        remedy, data = mamba_remedy(ctx, hit, cfg)
        is_warning = hit.code == WARNING_CODE and hit.traceback is None
        if is_warning:
            if warned:
                continue  # printed once per rank
            warned = True
            message = f"Radix (prefix) cache disabled for speculative decoding on a hybrid mamba model: {short(hit.text, 180)}"
        else:
            # SGLang's own message names the flags and the variable to set: kept whole up to
            # SHOWN characters (the 0.5.10 message is 290), never cut inside a name.
            message = f"Hybrid mamba model + speculative decoding: {short(hit.text, SHOWN)}"
        arch = hit.fields.get("model_arch") or hit.fields.get("arch")
        if arch:
            data["model_arch"] = arch
        yield ctx.finding("spec-mamba-extra-buffer", message, remedy, events=[hit.event], data=data,
                          severity=Severity.WARNING if is_warning else None)
