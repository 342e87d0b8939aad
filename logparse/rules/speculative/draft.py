"""spec-draft-load-failure: the draft model or draft worker of speculative decoding fails to start
(unknown draft, shape or vocabulary mismatch, a draft CUDA-graph capture that fails in the draft)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.frames import first_sglang_frame, frame_files, frame_funcs, is_args_traceback
from logparse.rules.registry import rule
from logparse.rules.speculative.frames import RUNTIME_FUNCS, is_draft_worker_file
from logparse.run.speculative import spec_config

# CUDA failures belong to their own rules whatever the worker (cuda-oom, illegal-memory-access, …):
# a capture that fails because of one is not a draft that does not fit its target.
CUDA_FAILURES = ("cuda-oom", "cuda-kernel-fault", "cuda-stream-capture-error", "cuda-runtime-error")


def _initialising_draft(ctx: RuleContext, tb: Traceback) -> bool:
    """The traceback goes through the draft worker's construction (its __init__, init or capture
    steps, a draft graph runner), or its source shows the scheduler building the draft worker."""
    files = frame_files(tb)
    funcs = frame_funcs(tb)
    drafts = [f for f in files if is_draft_worker_file(f)]
    if drafts and ("__init__" in funcs or any("capture" in f or "init" in f for f in funcs)
                   or any("cuda_graph" in f for f in drafts)):
        return True
    return ctx.match("spec-draft-worker-source", ctx.traceback_text(tb)) is not None


def _cuda_failure(ctx: RuleContext, text: str, body: str) -> bool:
    return ctx.match("cuda-oom", body) is not None or any(ctx.match(code, text) is not None for code in CUDA_FAILURES)


@rule(code="SPEC003", name="spec-draft-load-failure", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"), stage="startup")
def spec_draft_load_failure(ctx: RuleContext) -> Iterator[Finding]:
    """The draft model or draft worker of speculative decoding failed to initialise.

    **What it means**
    The scheduler started the draft worker (`EAGLEWorker`, the standalone / MTP worker) and it raised:
    an unknown draft architecture, a weight shape or vocabulary that does not match the target, or a
    failed draft CUDA-graph capture (`eagle_draft_cuda_graph_runner`) whose cause is not a CUDA error
    (out of memory, an illegal memory access, an operation not permitted while capturing: those are
    reported by their own rules).

    **Why it matters**
    The server does not start. Most often the draft checkpoint was trained for another target model,
    or the `--speculative-algorithm` does not fit the draft (EAGLE vs EAGLE3 vs NEXTN/MTP).

    **Example**
    ```
    Scheduler hit an exception: Traceback (most recent call last):
      File "sglang/python/sglang/srt/managers/scheduler.py", line 352, in __init__
        self.draft_worker = EAGLEWorker(
      File "sglang/python/sglang/srt/speculative/eagle_worker.py", line 124, in __init__
        super().__init__(
    ```

    **Fix**
    Use the draft checkpoint trained for this target (e.g. the EAGLE3 head for this exact model) with
    the matching `--speculative-algorithm`; for a capture failure see the exception (lower
    `--cuda-graph-max-bs`, or `--speculative-num-steps`).
    """
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        funcs = frame_funcs(tb)
        if any(f in RUNTIME_FUNCS for f in funcs):
            continue  # raised while serving batches, not while starting the draft
        if is_args_traceback(tb):
            continue  # an argument check ('… for risk in some draft models') runs before any draft exists
        text = f"{tb.exc_type}: {tb.message}" if tb.exc_type else ""
        about_draft = bool(text) and ctx.match("spec-draft-error", text) is not None
        if not (_initialising_draft(ctx, tb) or about_draft):
            continue
        if _cuda_failure(ctx, text, ctx.traceback_text(tb)):
            continue
        cfg = spec_config(ctx.log, ctx.views, tb.line)
        data: dict[str, Any] = {k: v for k, v in (("algorithm", cfg.algorithm), ("draft_model", cfg.draft_model))
                                if v}
        where = first_sglang_frame(tb)
        alg = cfg.algorithm or "the speculative algorithm"
        draft = f" {cfg.draft_model}" if cfg.draft_model else ""
        if tb.exc_type:
            data["exception"] = tb.exc_type
            what = short(text, 200)
            if ctx.match("spec-graph-capture-failed", text) is not None:
                remedy = ("the draft CUDA-graph capture failed: see the exception; lower `--cuda-graph-max-bs` or "
                          "`--speculative-num-steps`, or check the draft checkpoint matches the target")
            else:
                remedy = (f"use the draft checkpoint trained for this target model with the matching "
                          f"`--speculative-algorithm` (EAGLE3 heads → EAGLE3, EAGLE-1/2 → EAGLE, built-in MTP layers → "
                          f"NEXTN); now: {alg}{draft}")
        else:
            data["exception"] = None
            what = "the exception line is cut"
            remedy = (f"the last line of this traceback decides (unknown draft architecture, shape/vocab mismatch, "
                      f"out of memory); check that the draft{draft} matches the target and {alg}")
        message = f"The speculative draft worker failed to initialise{f' ({where})' if where else ''}: {what}"
        yield ctx.finding("spec-draft-load-failure", message, remedy, events=[tb], data=data)
