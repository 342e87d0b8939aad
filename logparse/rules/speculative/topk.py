"""spec-v2-topk-conflict: speculative decoding v2 (overlap) combined with a draft tree wider than 1 —
refused at start-up, or the crashes it causes in the draft forward and in eagle_worker_v2."""

from __future__ import annotations

from collections.abc import Iterator

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.rules.frames import file_name, first_sglang_frame, frame_files, frame_funcs
from logparse.rules.registry import rule
from logparse.rules.speculative.frames import V2_STEP_FUNCS, is_speculative_file
from logparse.run.speculative import SpecConfig, spec_config
from logparse.run.stage import traceback_phase

V2_WORKER = "eagle_worker_v2"
# The spec-v2 draft step whose token counts hold only for topk = 1 (see _topk_shaped).
DRAFT_EXTEND_FOR_DECODE = "_draft_extend_for_decode"


def topk_remedy(cfg: SpecConfig) -> str:
    steps = cfg.num_steps
    draft = f" --speculative-num-draft-tokens {steps + 1}" if steps else ""
    off = "unset `SGLANG_ENABLE_SPEC_V2` (spec v1 supports topk > 1)"
    if cfg.spec_v2_source and cfg.spec_v2_source.startswith("--enable-beta-spec"):
        off = "drop `--enable-beta-spec` (spec v1 supports topk > 1)"
    return f"`--speculative-eagle-topk 1{draft}` (spec v2 supports only topk = 1), or {off}"


def _topk_shaped(ctx: RuleContext, tb: Traceback, text: str) -> bool:
    """Whether a spec-v2 crash, with topk not in the log, is the one topk > 1 causes: it happened in
    the step that assumes a draft tree of width 1 — `_draft_extend_for_decode` feeds the draft model
    `speculative_num_steps + 1` tokens a request but selects from `speculative_num_draft_tokens`
    (equal only with topk = 1; eagle_worker_v2.py) — and the exception is a shape error or cut off.
    A spec-v2 crash elsewhere, or with another exception, is not evidence of topk."""
    v2_funcs = [f.func for f in tb.frames if file_name(f.path).startswith(V2_WORKER)]
    if not v2_funcs or v2_funcs[-1] != DRAFT_EXTEND_FOR_DECODE:
        return False
    return not tb.exc_type or ctx.match("spec-tensor-size-mismatch", text) is not None


def _runtime_finding(ctx: RuleContext, tb: Traceback) -> Finding | None:
    """A crash that spec v2 with topk > 1 causes: a tensor size mismatch in a speculative frame, or a
    serving-time failure inside the spec-v2 EAGLE worker."""
    cfg = spec_config(ctx.log, ctx.views, tb.line)
    files = frame_files(tb)
    funcs = frame_funcs(tb)
    text = f"{tb.exc_type or ''}: {tb.message}"
    in_v2 = any(f.startswith(V2_WORKER) for f in files)
    if tb.exc_type and ctx.match("cuda-oom", text) is not None:
        return None  # out of memory is cuda-oom's, whatever the draft tree
    if (ctx.match("spec-tensor-size-mismatch", text) is not None and any(is_speculative_file(f) for f in files)
            and (cfg.topk or 0) > 1 and (cfg.spec_v2 or in_v2)):
        data = {**cfg.topk_data(), "stage": "runtime"}
        return ctx.finding(
            "spec-v2-topk-conflict",
            f"Draft forward crashed with a tensor size mismatch under spec v2 ({cfg.spec_v2_source or V2_WORKER}) "
            f"and --speculative-eagle-topk {cfg.topk}: {short(text, 160)} (in {first_sglang_frame(tb)})",
            topk_remedy(cfg), events=[tb], data=data)
    if not in_v2 or traceback_phase(tb) == "startup" or "__init__" in funcs[-1:]:
        return None
    if cfg.topk == 1:
        return None  # topk is 1: this is some other spec-v2 failure
    if not cfg.topk and not _topk_shaped(ctx, tb, text):
        return None  # topk unknown and nothing in the crash points at the draft tree's width
    data = {**cfg.topk_data(), "stage": "runtime"}
    fn = next((f for f in reversed(funcs) if f in V2_STEP_FUNCS), funcs[-1] if funcs else "?")
    exc = text if tb.exc_type else "the exception line is cut"
    if cfg.topk:
        known, decide = f"with --speculative-eagle-topk {cfg.topk}", ""
    else:
        known = "(topk is not visible in this log)"
        decide = (" — what decides it: the launch's `--speculative-eagle-topk` (server_args "
                  "speculative_eagle_topk); with topk = 1 this is another spec-v2 bug")
    return ctx.finding(
        "spec-v2-topk-conflict",
        f"The spec-v2 EAGLE worker crashed in {fn} ({V2_WORKER}) {known}: {short(exc, 160)}{decide}",
        topk_remedy(cfg), events=[tb], data=data)


@rule(code="SPEC001", name="spec-v2-topk-conflict", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"))
def spec_v2_topk_conflict(ctx: RuleContext) -> Iterator[Finding]:
    """Speculative decoding v2 (overlap) is combined with `--speculative-eagle-topk` > 1.

    **What it means**
    Spec v2 (`SGLANG_ENABLE_SPEC_V2=1`, `--enable-beta-spec`, the overlap scheduler for EAGLE) only
    supports a draft tree of width 1. 0.5.8–0.5.11 refuse it at startup (`ValueError: Spec v2
    currently only supports topk = 1 for speculative decoding.`); builds that let it through crash in
    the draft forward (`Sizes of tensors must match …` in `llama_eagle3.py`) or in `eagle_worker_v2`
    (`_draft_extend_for_decode`, which feeds the draft `num_steps + 1` tokens a request but selects
    from `num_draft_tokens`: equal only with topk = 1). When the log does not show topk, only a crash
    there with a shape error or a cut exception line counts; other spec-v2 crashes are not this.

    **Why it matters**
    The server does not start, or the scheduler dies on the first speculative batch.

    **Example**
    ```
    SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server … --speculative-algorithm EAGLE3 --speculative-num-steps 5 --speculative-num-draft-tokens 8 --speculative-eagle-topk 4
      File "/…/sglang/srt/models/llama_eagle3.py", line 88, in forward
    RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 6 but got size 8 for tensor number 1 in the list.
    ```

    **Fix**
    `--speculative-eagle-topk 1` with `--speculative-num-draft-tokens` = steps + 1, or turn spec v2
    off (unset `SGLANG_ENABLE_SPEC_V2`).
    """
    # Exceptions only: 0.5.14+ prints the same words as a warning when it falls back to spec v1
    # ("Spec v1 is used … because spec v2 currently only supports topk = 1."), which is no failure.
    for hit in find_message(ctx, "spec-v2-topk-refused", texts=False):
        cfg = spec_config(ctx.log, ctx.views, hit.line)
        # 0.5.10+ also raises it from the spec-v2 verify step, while serving
        serving = hit.traceback is not None and traceback_phase(hit.traceback) == "serving"
        data = {**cfg.topk_data(), "stage": "runtime" if serving else "argument check"}
        where = f" (set by {cfg.spec_v2_source})" if cfg.spec_v2_source else ""
        topk = f" with --speculative-eagle-topk {cfg.topk}" if cfg.topk else ""
        message = f"Spec v2{where} refuses topk > 1{topk}: {short(hit.text, 160)}"
        yield ctx.finding("spec-v2-topk-conflict", message, topk_remedy(cfg), events=[hit.event], data=data)
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        found = _runtime_finding(ctx, tb)
        if found is not None:
            yield found
