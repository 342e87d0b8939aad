"""spec-config-invalid (fallback): any other speculative-decoding argument check SGLang refuses,
with the flags the known checks allow."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.frames import frame_files, frame_funcs, is_args_traceback
from logparse.rules.registry import rule
from logparse.rules.speculative.frames import is_speculative_file
from logparse.run.speculative import spec_config
from logparse.run.stage import traceback_phase

# Each known check (a catalog code) and the combination it allows.
ADVICE: tuple[tuple[str, str], ...] = (
    ("spec-topk-page-size", ("`--page-size 1`, or `--speculative-eagle-topk 1`, or `--attention-backend flashinfer` "
                             "(the only backend that supports topk > 1 with pages)")),
    ("spec-trtllm-mha-topk", "`--speculative-eagle-topk 1`, or another `--attention-backend` (flashinfer, fa3)"),
    ("spec-dp-attention", "drop `--enable-dp-attention`, or another speculative algorithm"),
    ("spec-moe-runner-backend", "`--speculative-moe-runner-backend triton` (or auto)"),
    ("spec-mixed-chunk", "drop `--enable-mixed-chunk` (mixed chunked prefill does not work with speculative decoding)"),
    ("spec-flex-attention", "another `--attention-backend` (flashinfer, triton, fa3)"),
    ("spec-pipeline-parallel", "`--pp-size 1`, or no speculative decoding"),
    ("spec-lora", "`--speculative-algorithm NGRAM` with LoRA, or no LoRA"),
    ("spec-decode-offload", "turn off spec v2 or the decode KV-cache offload"),
    ("spec-ep-size", "`--ep-size` > 1 (e.g. equal to --tp), or `--speculative-moe-a2a-backend none`"),
    ("spec-ngram-device", "run NGRAM speculation on a CUDA device (or another algorithm)"),
    ("spec-draft-path-required", "`--speculative-draft-model-path <draft>`"),
    ("spec-verify-width", "`--speculative-num-draft-tokens` = `--speculative-num-steps` + 1"),
    ("spec-topk-one-required", "`--speculative-eagle-topk 1`"),
    ("spec-adaptive-steps", "one of the listed `--speculative-num-steps` values"),
)
# Exception types SGLang's argument checks raise.
CHECK_TYPES = frozenset({"ValueError", "AssertionError", "RuntimeError", "NotImplementedError", "Exception"})
# The speculative argument handling across releases: ServerArgs._handle_speculative_decoding
# (0.4–0.5.11), then the speculative package's handle_speculative_decoding and its per-algorithm steps.
SPEC_ARG_FUNCS = frozenset({"_handle_speculative_decoding", "handle_speculative_decoding", "_handle_eagle_family",
                            "_handle_ngram", "_handle_dflash", "_handle_frozen_kv_mtp"})


def _from_argument_handling(tb: Traceback | None) -> bool:
    """Whether SGLang's argument processing (or the speculative package) raised it; a lone exception
    line shows no frames, so only its timing (before the attempt was up) can decide."""
    if tb is None or not tb.frames:
        return True
    if is_args_traceback(tb) or SPEC_ARG_FUNCS & set(frame_funcs(tb)):
        return True
    return any(is_speculative_file(f) for f in frame_files(tb))


@rule(code="SPEC004", name="spec-config-invalid", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"), fallback=True, stage="startup")
def spec_config_invalid(ctx: RuleContext) -> Iterator[Finding]:
    """A speculative-decoding argument check failed (fallback for the other speculative checks).

    **What it means**
    SGLang validates the speculative-decoding flags while processing the arguments: topk > 1 with
    paged attention backends, `trtllm_mha` with topk > 1, standalone/NGRAM with DP attention, the
    speculative MoE runner backend, mixed chunked prefill, steps vs draft tokens (a bare
    `AssertionError` when only some of steps/topk/draft-tokens are set for MTP), …

    **Why it matters**
    The server does not start; the message states the constraint.

    **Example**
    ```
    ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for paged attention backends. This combination is only supported for the 'flashinfer' backend.
    ```

    **Fix**
    The combination the message allows (the finding names the flags for the known checks).
    """
    for r in ctx.raised():
        ev = r.traceback or r.event
        if ev.line in ctx.claimed:
            continue
        tb = r.traceback
        bare_spec_assert = (r.exc_type == "AssertionError" and not r.message.strip()
                            and bool(SPEC_ARG_FUNCS & set(frame_funcs(tb))))
        advice = next((advice for code, advice in ADVICE if ctx.match(code, r.message) is not None), None)
        # A known check is one by its wording; any other message about speculation only when the
        # argument handling raised it (a model or kernel error that mentions a draft is not).
        about_spec = advice is not None or (ctx.match("spec-argument-subject", r.message) is not None
                                            and _from_argument_handling(tb))
        if not ((r.exc_type in CHECK_TYPES and about_spec) or bare_spec_assert):
            continue
        # An argument check happens before serving: not a crash in a running scheduler, and not
        # after the attempt already showed it was up.
        if tb is not None and traceback_phase(tb) == "serving":
            continue
        if ctx.views.run.lifecycle_at(ev.line).up_before(ev.line):
            continue
        cfg = spec_config(ctx.log, ctx.views, ev.line)
        remedy = advice
        data: dict[str, Any] = {"exception": r.exc_type, **cfg.topk_data()}
        if bare_spec_assert:
            message = ("A bare AssertionError in the speculative-decoding argument handling: with NEXTN/MTP, setting "
                       "only some of --speculative-num-steps / --speculative-eagle-topk / --speculative-num-draft-tokens "
                       "is refused")
            remedy = ("set all three of `--speculative-num-steps`, `--speculative-eagle-topk`, "
                      "`--speculative-num-draft-tokens` (e.g. 3, 1, 4) or none of them")
        else:
            message = f"Speculative-decoding arguments rejected: {short(r.text, 240)}"
        if remedy is None:
            remedy = f"the combination the message allows: {short(r.message, 160)}"
        yield ctx.finding("spec-config-invalid", message, remedy, events=[ev], data=data)
