"""Rules of the 'speculative' family (see shared/diagnoses.md): spec-v2 with topk > 1, hybrid mamba
models without the extra buffer, draft workers that fail to start, other speculative argument checks,
and acceptance that is low or absent while serving."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from logparse.parsing import colstats
from logparse.model.events import (
    BenchServingResult,
    CaptureEnd,
    Event,
    GraphKind,
    KnownMessage,
    LaunchCommand,
    ServerArgs,
    Severity,
    Traceback,
)
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.rules.context import RuleContext
from logparse.rules.matching import (
    arg_at,
    find_errors,
    first_sglang_frame,
    frame_files,
    frame_funcs,
    launch_config,
    short,
)
from logparse.rules.registry import rule
from logparse.run.views import traceback_phase

# --------------------------------------------------------------------------- configuration

_SPEC_CODES = frozenset({"spec-v2-enabled", "overlap-disabled-spec-v1", "spec-v2-non-overlap", "mixed-chunk-disabled-spec",
                         "spec-draft-tokens-adjusted", "mtp-draft-path-unneeded", "draft-load-format",
                         "ngram-overlap-disabled", "ngram-draft-tokens-default", "draft-attention-override",
                         "draft-max-position-override"})


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


@dataclass
class SpecConfig:
    """What the log says about the speculative-decoding configuration."""

    algorithm: str | None = None
    draft_model: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    spec_v2: bool | None = None  # SGLANG_ENABLE_SPEC_V2 / --enable-beta-spec / W23
    spec_v2_source: str | None = None
    configured: bool = False  # speculation is set up in this log
    explicitly_off: bool = False  # server_args prints speculative_algorithm=None
    evidence: list[Event] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def depth(self) -> int | None:
        """Draft steps per verify (the accept length is at most depth + 1)."""
        if self.num_steps:
            return self.num_steps
        if self.num_draft_tokens and self.topk in (1, None):
            return self.num_draft_tokens - 1
        return None

    @property
    def width(self) -> int | None:
        """The largest possible accept length (draft steps + the bonus token)."""
        d = self.depth
        return d + 1 if d else None


def spec_config(ctx: RuleContext, line: int | None = None) -> SpecConfig:
    """The speculative configuration of the whole log, or of the launch `line` belongs to when the log
    holds several launches."""
    v = ctx.views
    cfg = SpecConfig()
    per_launch = launch_config(ctx, line)
    if per_launch is not None:
        largs, env = per_launch

        def arg(name: str) -> Any:
            return largs.get(name)
    else:
        arg = v.arg
        # the pasted command's environment only: `views.env_vars` also takes names that warnings merely
        # suggest ("You can set env SGLANG_ENABLE_SPEC_V2=True …")
        env = v.launch_env
    alg = arg("speculative_algorithm")
    cfg.algorithm = str(alg) if alg not in (None, "None", "") else None
    draft = arg("speculative_draft_model_path")
    cfg.draft_model = str(draft) if draft not in (None, "None", "") else None
    cfg.num_steps = _int(arg("speculative_num_steps"))
    cfg.topk = _int(arg("speculative_eagle_topk"))
    cfg.num_draft_tokens = _int(arg("speculative_num_draft_tokens"))
    flag = env.get("SGLANG_ENABLE_SPEC_V2")
    if flag is not None:
        cfg.spec_v2 = flag.strip().lower() in ("1", "true", "yes", "on")
        cfg.spec_v2_source = f"SGLANG_ENABLE_SPEC_V2={flag}"
    if arg("enable_beta_spec") is True:
        cfg.spec_v2, cfg.spec_v2_source = True, "--enable-beta-spec"
    for e in ctx.log.of(KnownMessage):
        if e.code == "spec-v2-enabled" and cfg.spec_v2 is None and (line is None or e.line < line):
            cfg.spec_v2, cfg.spec_v2_source = True, f"line {e.line}: spec v2 is enabled"
    if cfg.algorithm:
        cfg.configured = True
        cfg.reasons.append(f"--speculative-algorithm {cfg.algorithm}")
    for e in ctx.log.of(KnownMessage):
        if e.code in _SPEC_CODES or (e.code == "max-running-reset" and "specul" in str(e.fields.get("reason", e.text))):
            cfg.configured = True
            cfg.evidence.append(e)
            cfg.reasons.append(f"line {e.line}: {short(e.text, 80)}")
            break
    for e in ctx.log.of(CaptureEnd):
        if e.graph_kind in (GraphKind.DRAFT, GraphKind.DRAFT_EXTEND):
            cfg.configured = True
            cfg.evidence.append(e)
            cfg.reasons.append(f"line {e.line}: draft CUDA graph captured")
            break
    acc = ctx.log.decode.cols["accept_len"]
    if any(not math.isnan(x) for x in acc):
        cfg.configured = True
        cfg.reasons.append("decode lines print accept len")
    if any("accept_length" in b.fields for b in ctx.log.of(BenchServingResult)):
        cfg.reasons.append("the benchmark reports an accept length")
    for e in ctx.log.of(ServerArgs):
        if "speculative_algorithm" in e.args and e.args["speculative_algorithm"] in (None, "None"):
            cfg.explicitly_off = True
    if cfg.explicitly_off and not cfg.algorithm:
        cfg.configured = False
    return cfg


def _first_command(ctx: RuleContext, flag: str) -> LaunchCommand | None:
    for e in ctx.log.of(LaunchCommand):
        if flag in e.flags or flag.lstrip("-").upper() in e.env:
            return e
    return None


# --------------------------------------------------------------------------- spec-v2-topk-conflict

_TOPK_CHECK = lazy_compile(r"Spec v2 currently only supports topk = 1|spec(?:ulative)?[ _]v2\b.*\btopk\b.*(?:only|must|support)"
                         r"|topk\b.*\bspec(?:ulative)?[ _]v2\b.*(?:only|must|support)", re.IGNORECASE)
_DRAFT_SHAPE = lazy_compile(r"Sizes of tensors must match|size mismatch|shape '\[.*\]' is invalid|The size of tensor a"
                          r"|Expected size \d+ but got size \d+|must match the size of tensor", re.IGNORECASE)
_EAGLE_FILES = lazy_compile(r"eagle|draft|multi_layer_eagle|spec_utils|speculative", re.IGNORECASE)


def _topk_remedy(cfg: SpecConfig) -> str:
    steps = cfg.num_steps
    draft = f" --speculative-num-draft-tokens {steps + 1}" if steps else ""
    off = "unset `SGLANG_ENABLE_SPEC_V2` (spec v1 supports topk > 1)"
    if cfg.spec_v2_source and cfg.spec_v2_source.startswith("--enable-beta-spec"):
        off = "drop `--enable-beta-spec` (spec v1 supports topk > 1)"
    return f"`--speculative-eagle-topk 1{draft}` (spec v2 supports only topk = 1), or {off}"


def _topk_data(cfg: SpecConfig) -> dict[str, Any]:
    return {k: v for k, v in (("topk", cfg.topk), ("num_steps", cfg.num_steps), ("num_draft_tokens", cfg.num_draft_tokens),
                              ("spec_v2", cfg.spec_v2_source)) if v is not None}


@rule(code="SPEC001", name="spec-v2-topk-conflict", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"))
def spec_v2_topk_conflict(ctx: RuleContext) -> Iterator[Finding]:
    """Speculative decoding v2 (overlap) is combined with `--speculative-eagle-topk` > 1.

    **What it means**
    Spec v2 (`SGLANG_ENABLE_SPEC_V2=1`, `--enable-beta-spec`, the overlap scheduler for EAGLE) only
    supports a draft tree of width 1. 0.5.8–0.5.11 refuse it at startup (`ValueError: Spec v2
    currently only supports topk = 1 for speculative decoding.`); builds that let it through crash in
    the draft forward (`Sizes of tensors must match …` in `llama_eagle3.py`) or in `eagle_worker_v2`
    (`_draft_extend_for_decode`).

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
    for hit in find_errors(ctx, _TOPK_CHECK):
        cfg = spec_config(ctx, hit.line)
        data = _topk_data(cfg)
        data["stage"] = "argument check"
        where = f" (set by {cfg.spec_v2_source})" if cfg.spec_v2_source else ""
        topk = f" with --speculative-eagle-topk {cfg.topk}" if cfg.topk else ""
        message = (f"Spec v2{where} refuses topk > 1{topk}: {short(hit.text, 160)}")
        yield ctx.finding("spec-v2-topk-conflict", message, _topk_remedy(cfg), events=[hit.event], data=data)
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        cfg = spec_config(ctx, tb.line)
        files = frame_files(tb)
        funcs = frame_funcs(tb)
        text = f"{tb.exc_type or ''}: {tb.message}"
        in_v2 = any(f.startswith("eagle_worker_v2") for f in files)
        if tb.exc_type and re.search(r"OutOfMemory|out of memory", text, re.IGNORECASE):
            continue
        if _DRAFT_SHAPE.search(text) and any(_EAGLE_FILES.search(f) for f in files) \
                and (cfg.topk or 0) > 1 and (cfg.spec_v2 or in_v2):
            data = _topk_data(cfg)
            data["stage"] = "runtime"
            yield ctx.finding(
                "spec-v2-topk-conflict",
                f"Draft forward crashed with a tensor size mismatch under spec v2 ({cfg.spec_v2_source or 'eagle_worker_v2'}) "
                f"and --speculative-eagle-topk {cfg.topk}: {short(text, 160)} (in {first_sglang_frame(tb)})",
                _topk_remedy(cfg), events=[tb], data=data)
            continue
        if in_v2 and traceback_phase(tb) != "startup" and "__init__" not in funcs[-1:]:
            if cfg.topk == 1:
                continue  # topk is 1: this is some other spec-v2 failure
            data = _topk_data(cfg)
            data["stage"] = "runtime"
            fn = next((f for f in reversed(funcs) if f in ("_draft_extend_for_decode", "forward_batch_generation",
                                                            "draft", "verify")), funcs[-1] if funcs else "?")
            exc = f"{text}" if tb.exc_type else "the exception line is cut"
            if cfg.topk:
                known = f"with --speculative-eagle-topk {cfg.topk}"
                decide = ""
            else:
                known = "(topk is not visible in this log)"
                decide = (" — what decides it: the launch's `--speculative-eagle-topk` (server_args "
                          "speculative_eagle_topk); with topk = 1 this is another spec-v2 bug")
            yield ctx.finding(
                "spec-v2-topk-conflict",
                f"The spec-v2 EAGLE worker crashed in {fn} (eagle_worker_v2) {known}: {short(exc, 160)}{decide}",
                _topk_remedy(cfg), events=[tb], data=data)


# --------------------------------------------------------------------------- spec-mamba-extra-buffer

_MAMBA = lazy_compile(
    r"not compatible with radix cache when using --mamba-scheduler-strategy no_buffer"
    r"|mamba extra_buffer is not compatible with --disable-radix-cache"
    r"|is not compatible with --mamba-scheduler-strategy no_buffer"
    r"|[Mm]amba extra_buffer is (?:not|only) supported"
    r"|mamba_track_interval (\d+) must be (?:greater than or equal to speculative_num_draft_tokens (\d+)|divisible by page_size (\d+))"
    r"|For SSM models with extra buffer"
    r"|extra_buffer (?:is not supported for|requires platform support|unsupported under)"
    r"|no_buffer (?:only supports page_size|do not support)"
    r"|Disabling radix cache since speculative decoding for (\S+) is not supported with radix cache")


def _mamba_remedy(ctx: RuleContext, text: str, cfg: SpecConfig, line: int) -> tuple[str, dict[str, Any]]:
    data: dict[str, Any] = {}
    strategy = arg_at(ctx, "mamba_scheduler_strategy", line)
    if strategy:
        data["mamba_scheduler_strategy"] = strategy
    v2 = "" if cfg.spec_v2 else " and `SGLANG_ENABLE_SPEC_V2=1`"
    if "not compatible with radix cache" in text or "Disabling radix cache since speculative" in text:
        data["needs"] = "extra_buffer"
        return f"`--mamba-scheduler-strategy extra_buffer`{v2} (keeps the radix cache with speculative decoding)", data
    if "not compatible with --disable-radix-cache" in text:
        data["needs"] = "no_buffer"
        return ("`--mamba-scheduler-strategy no_buffer` with `--disable-radix-cache` (or drop `--disable-radix-cache` "
                "to keep extra_buffer)"), data
    if "not compatible with --mamba-scheduler-strategy no_buffer" in text:
        data["needs"] = "extra_buffer"
        return "`--mamba-scheduler-strategy extra_buffer`", data
    if m := re.search(r"mamba_track_interval (\d+) must be greater than or equal to speculative_num_draft_tokens (\d+)", text):
        need = int(m.group(2))
        page = _int(arg_at(ctx, "page_size", line)) or 1
        value = math.ceil(need / page) * page
        data.update(mamba_track_interval=int(m.group(1)), needed=value)
        return f"`--mamba-track-interval {value}` (≥ speculative_num_draft_tokens {need}, a multiple of page_size {page})", data
    if m := re.search(r"mamba_track_interval (\d+) must be divisible by page_size (\d+)", text):
        cur, page = int(m.group(1)), int(m.group(2))
        value = math.ceil(cur / page) * page
        data.update(mamba_track_interval=cur, page_size=page, needed=value)
        return f"`--mamba-track-interval {value}` (a multiple of page_size {page})", data
    if re.search(r"extra_buffer is not supported for|extra_buffer requires|only supported on CUDA", text, re.IGNORECASE):
        data["needs"] = "no_buffer"
        return ("this model/platform has no mamba extra buffer: `--mamba-scheduler-strategy no_buffer` with "
                "`--disable-radix-cache` for speculative decoding"), data
    return "the mamba scheduler strategy the message names (`--mamba-scheduler-strategy extra_buffer|no_buffer`)", data


@rule(code="SPEC002", name="spec-mamba-extra-buffer", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"),
    stage="startup",
)
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
    for hit in find_errors(ctx, _MAMBA):
        cfg = spec_config(ctx, hit.line)
        remedy, data = _mamba_remedy(ctx, hit.text, cfg, hit.line)
        is_warning = "Disabling radix cache since" in hit.text and hit.traceback is None
        if is_warning:
            if warned:
                continue
            warned = True
            message = f"Radix (prefix) cache disabled for speculative decoding on a hybrid mamba model: {short(hit.text, 180)}"
        else:
            message = f"Hybrid mamba model + speculative decoding: {short(hit.text, 260)}"
        if m := re.search(r"for (\w+(?:ForCausalLM|ForConditionalGeneration)\w*)", hit.text):
            data["model_arch"] = m.group(1)
        yield ctx.finding("spec-mamba-extra-buffer", message, remedy, events=[hit.event], data=data,
                          severity=Severity.WARNING if is_warning else None)


# --------------------------------------------------------------------------- spec-draft-load-failure

_DRAFT_INIT_FILES = lazy_compile(r"^(eagle_worker(?:_v2)?|standalone_worker(?:_v2)?|ngram_worker|multi_layer_eagle\w*"
                               r"|eagle_draft_cuda_graph_runner|eagle_draft_extend_cuda_graph_runner|draft_\w+|"
                               r"dflash\w*|mtp_worker\w*)\.py$")
_DRAFT_MSG = lazy_compile(r"draft model|draft_model|Unknown draft|speculative_token_map|EAGLE head|eagle3? (?:config|head)"
                        r"|Capture (?:draft|cuda) graph failed", re.IGNORECASE)


@rule(code="SPEC003", name="spec-draft-load-failure", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"),
    stage="startup",
)
def spec_draft_load_failure(ctx: RuleContext) -> Iterator[Finding]:
    """The draft model or draft worker of speculative decoding failed to initialise.

    **What it means**
    The scheduler started the draft worker (`EAGLEWorker`, the standalone / MTP worker) and it raised:
    an unknown draft architecture, a weight shape or vocabulary that does not match the target, or a
    failed draft CUDA-graph capture (`eagle_draft_cuda_graph_runner`).

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
        cfg = spec_config(ctx, tb.line)
        files = frame_files(tb)
        funcs = frame_funcs(tb)
        text = f"{tb.exc_type}: {tb.message}" if tb.exc_type else ""
        body = ctx.traceback_text(tb)
        init = any(_DRAFT_INIT_FILES.match(f) for f in files) and (
            "__init__" in funcs or any("capture" in f or "init" in f for f in funcs)
            or any(_DRAFT_INIT_FILES.match(f) and "cuda_graph" in f for f in files))
        init = init or bool(re.search(r"self\.draft_worker = |draft_worker = \w+Worker\(|init_draft", body))
        runtime = any(f in ("forward_batch_generation", "event_loop_normal", "event_loop_overlap", "run_batch")
                      for f in funcs)
        if not (init and not runtime) and not (text and _DRAFT_MSG.search(text) and not runtime):
            continue
        if re.search(r"OutOfMemory|out of memory", text + body, re.IGNORECASE) and "Capture" not in text:
            continue  # a CUDA OOM is cuda-oom's
        data: dict[str, Any] = {k: v for k, v in (("algorithm", cfg.algorithm), ("draft_model", cfg.draft_model))
                                if v}
        where = first_sglang_frame(tb)
        alg = cfg.algorithm or "the speculative algorithm"
        draft = f" {cfg.draft_model}" if cfg.draft_model else ""
        if tb.exc_type:
            data["exception"] = tb.exc_type
            what = short(text, 200)
            capture = "Capture" in text and "graph failed" in text
            if capture:
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


# --------------------------------------------------------------------------- spec-config-invalid (fallback)

_SPEC_WORDS = lazy_compile(r"specul|spec v2|spec_v2|\beagle|topk|draft|ngram|\bMTP\b|standalone|DFLASH|DSPARK"
                         r"|--speculative", re.IGNORECASE)
_SPEC_ADVICE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"topk.*page_size|page_size.*topk", re.IGNORECASE),
     ("`--page-size 1`, or `--speculative-eagle-topk 1`, or `--attention-backend flashinfer` (the only backend "
      "that supports topk > 1 with pages)")),
    (re.compile(r"trtllm_mha backend only supports topk = 1", re.IGNORECASE),
     "`--speculative-eagle-topk 1`, or another `--attention-backend` (flashinfer, fa3)"),
    (re.compile(r"does not support dp attention", re.IGNORECASE), "drop `--enable-dp-attention`, or another speculative algorithm"),
    (re.compile(r"speculative MoE runner backend", re.IGNORECASE), "`--speculative-moe-runner-backend triton` (or auto)"),
    (re.compile(r"enable_mixed_chunk", re.IGNORECASE),
     "drop `--enable-mixed-chunk` (mixed chunked prefill does not work with speculative decoding)"),
    (re.compile(r"Flex Attention", re.IGNORECASE), "another `--attention-backend` (flashinfer, triton, fa3)"),
    (re.compile(r"Pipeline parallelism", re.IGNORECASE), "`--pp-size 1`, or no speculative decoding"),
    (re.compile(r"LoRA", re.IGNORECASE), "`--speculative-algorithm NGRAM` with LoRA, or no LoRA"),
    (re.compile(r"decode offload", re.IGNORECASE), "turn off spec v2 or the decode KV-cache offload"),
    (re.compile(r"ep_size > 1|--ep-size", re.IGNORECASE),
     "`--ep-size` > 1 (e.g. equal to --tp), or `--speculative-moe-a2a-backend none`"),
    (re.compile(r"only supports CUDA", re.IGNORECASE), "run NGRAM speculation on a CUDA device (or another algorithm)"),
    (re.compile(r"requires setting --speculative-draft-model-path", re.IGNORECASE), "`--speculative-draft-model-path <draft>`"),
    (re.compile(r"verification width must equal draft steps \+ 1", re.IGNORECASE),
     "`--speculative-num-draft-tokens` = `--speculative-num-steps` + 1"),
    (re.compile(r"requires --speculative-eagle-topk ?=? ?1|requires --speculative-eagle-topk 1", re.IGNORECASE),
     "`--speculative-eagle-topk 1`"),
    (re.compile(r"adaptive config candidate_steps", re.IGNORECASE), "one of the listed `--speculative-num-steps` values"),
)


@rule(code="SPEC004", name="spec-config-invalid", family="speculative", severity=Severity.ERROR,
      needs=("tracebacks", "config"), fallback=True,
    stage="startup",
)
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
        cfg = spec_config(ctx, ev.line)
        tb = r.traceback
        funcs = frame_funcs(tb)
        bare_spec_assert = (r.exc_type == "AssertionError" and not r.message.strip()
                            and "_handle_speculative_decoding" in funcs)
        if not (_SPEC_WORDS.search(r.message) and r.exc_type in ("ValueError", "AssertionError", "RuntimeError",
                                                                  "NotImplementedError", "Exception")) \
                and not bare_spec_assert:
            continue
        if tb is not None and traceback_phase(tb) == "serving":
            continue  # runtime crashes are not argument checks
        remedy = None
        for pattern, advice in _SPEC_ADVICE:
            if pattern.search(r.message):
                remedy = advice
                break
        data: dict[str, Any] = {"exception": r.exc_type, **_topk_data(cfg)}
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


# --------------------------------------------------------------------------- acceptance


def _finite(values: Any) -> list[float]:
    return [float(v) for v in values if not math.isnan(v)]


def implied_token_acceptance(accept_len: float, depth: int) -> float | None:
    """The per-draft-token acceptance p for which a chain of `depth` drafts gives this mean accept
    length: (1 − p^(depth+1)) / (1 − p) = accept_len (bisection)."""
    if depth < 1 or accept_len < 1:
        return None
    if accept_len >= depth + 1:
        return 1.0

    def expected(p: float) -> float:
        return float(depth + 1) if p >= 1 else (1 - p ** (depth + 1)) / (1 - p)

    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if expected(mid) < accept_len:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 3)


@dataclass
class Acceptance:
    mean: float | None = None
    rate_mean: float | None = None
    lines: int = 0
    first_line: int = 0
    last_line: int = 0
    source: str = ""
    bench: BenchServingResult | None = None


def acceptance(ctx: RuleContext) -> Acceptance:
    d = ctx.log.decode
    acc = d.cols["accept_len"]
    idx = colstats.present_indices(acc)
    out = Acceptance()
    if idx:
        vals = [acc[i] for i in idx]
        out.mean = round(sum(vals) / len(vals), 3)
        rates = _finite(d.cols["accept_rate"][i] for i in idx)
        out.rate_mean = round(sum(rates) / len(rates), 3) if rates else None
        out.lines = len(idx)
        out.first_line = d.line[idx[0]]
        out.last_line = d.line[idx[-1]]
        out.source = "decode lines"
        return out
    for b in ctx.log.of(BenchServingResult):
        if isinstance(b.fields.get("accept_length"), (int, float)):
            out.mean = float(b.fields["accept_length"])
            out.first_line = b.line
            out.last_line = b.end_line or b.line
            out.source = "benchmark"
            out.bench = b
    return out


def break_even(ctx: RuleContext, acc: Acceptance) -> dict[str, Any] | None:
    """The accept length at which speculation only breaks even, when the log also holds a run
    without speculation to compare with: decode throughput per running request at the same batch
    sizes (decode lines without accept fields), or bench_serving results at the same concurrency.
    speedup = spec / baseline; break-even accept length = accept_len / speedup."""
    if acc.mean is None:
        return None
    d = ctx.log.decode
    acc_col, run, gen = d.cols["accept_len"], d.cols["running"], d.cols["gen_throughput"]
    spec, base = _per_request_throughput(acc_col, run, gen)
    common = sorted(set(spec) & set(base))
    if common:
        ratios = [spec[b] / base[b] for b in common]
        speedup = _median(ratios)
        return {"method": "decode throughput per running request, spec vs no-spec lines at the same batch sizes",
                "speedup": round(speedup, 3), "break_even_accept_len": round(acc.mean / speedup, 2),
                "batch_buckets": [2 ** b for b in common]}
    benches = ctx.log.of(BenchServingResult)
    with_acc = [b for b in benches if "accept_length" in b.fields and b.fields.get("output_throughput")]
    without = [b for b in benches if "accept_length" not in b.fields and b.fields.get("output_throughput")]
    for s in with_acc:
        for b in without:
            if s.fields.get("max_concurrency") == b.fields.get("max_concurrency"):
                speedup = float(s.fields["output_throughput"]) / float(b.fields["output_throughput"])
                mean = float(s.fields["accept_length"])
                return {"method": "bench_serving output throughput with vs without speculation at the same concurrency",
                        "speedup": round(speedup, 3), "break_even_accept_len": round(mean / speedup, 2),
                        "bench_lines": [b.line, s.line]}
    return None


def _per_request_throughput(acc: Any, run: Any, gen: Any) -> tuple[dict[int, float], dict[int, float]]:
    """Median decode throughput per running request, by batch-size bucket (int(log2(#running))),
    for lines with accept fields (speculative) and without (baseline). numpy on large logs."""
    if len(run) >= colstats.NUMPY_FROM:
        import numpy as np

        r, g, a = (np.frombuffer(c, dtype=np.float64) for c in (run, gen, acc))
        valid = (r > 0) & (g > 0)  # NaN compares False
        rv, gv, av = r[valid], g[valid], a[valid]
        buckets = np.trunc(np.log2(rv)).astype(np.int64)
        ratio = gv / rv
        is_spec = ~np.isnan(av)
        out: tuple[dict[int, float], dict[int, float]] = ({}, {})
        for which, mask in ((0, is_spec), (1, ~is_spec)):
            for b in np.unique(buckets[mask]).tolist():
                out[which][int(b)] = float(np.median(ratio[mask & (buckets == b)]))
        return out
    spec: dict[int, list[float]] = {}
    base: dict[int, list[float]] = {}
    for i in range(len(run)):
        rr, gg = run[i], gen[i]
        if math.isnan(rr) or math.isnan(gg) or rr <= 0 or gg <= 0:
            continue
        bucket = int(math.log2(rr))
        (base if math.isnan(acc[i]) else spec).setdefault(bucket, []).append(gg / rr)
    return ({b: _median(v) for b, v in spec.items()}, {b: _median(v) for b, v in base.items()})


def _median(values: list[float]) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def _inactive_max(ctx: RuleContext) -> float:
    return float(ctx.threshold("spec-inactive", "max_accept_len", 1.05))


@rule(code="SPEC005", name="spec-low-acceptance", family="speculative", severity=Severity.WARNING,
      needs=("serving", "config"))
def spec_low_acceptance(ctx: RuleContext) -> Iterator[Finding]:
    """Speculative decoding accepts few draft tokens for its configured draft width.

    **What it means**
    The mean `accept len` (tokens emitted per verify step, bonus token included) is low for the
    configured draft depth (`--speculative-num-steps`, max accept length = steps + 1): the implied
    per-draft-token acceptance is below the threshold (default 0.5). When the log also holds a run
    without speculation (decode lines without accept fields, or a bench_serving result at the same
    concurrency), the rule computes the break-even accept length from the measured throughputs and
    reports whether speculation is slower than no speculation.

    **Why it matters**
    Each verify step costs the draft steps plus a wider target forward; with low acceptance that cost
    is not repaid, so decoding can be slower than without speculation.

    **Example**
    ```
    $ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE … --speculative-num-steps 5 --speculative-eagle-topk 1 --speculative-num-draft-tokens 6 --tp 2
    [2026-03-24 10:13:30 TP0] Decode batch, #running-req: 40, #token: 56786, token usage: 0.05, accept len: 1.30, accept rate: 0.22, cuda graph: True, gen throughput (token/s): 1488.33, #queue-req: 0
    ```

    **Fix**
    Fewer draft steps (`--speculative-num-steps`, `--speculative-num-draft-tokens` = steps + 1), a draft
    model trained for this target and data, or turn speculation off. Thresholds:
    `[tool.logdiag.thresholds.spec-low-acceptance] min_token_acceptance` (0.5), `min_accept_len` (1.5,
    used when the draft depth is unknown).
    """
    acc = acceptance(ctx)
    if acc.mean is None or acc.mean <= _inactive_max(ctx):
        return
    cfg = spec_config(ctx)
    min_p = float(ctx.threshold("spec-low-acceptance", "min_token_acceptance", 0.5))
    min_len = float(ctx.threshold("spec-low-acceptance", "min_accept_len", 1.5))
    depth = cfg.depth
    data: dict[str, Any] = {"accept_len_mean": acc.mean, "source": acc.source, "lines": acc.lines or None,
                            "depth": depth, "max_accept_len": depth + 1 if depth else None,
                            "min_token_acceptance": min_p}
    if acc.rate_mean is not None:
        data["accept_rate_mean"] = acc.rate_mean
    p = implied_token_acceptance(acc.mean, depth) if depth else None
    data["implied_token_acceptance"] = p
    be = break_even(ctx, acc)
    if be:
        data.update(be)
    low_width = p is not None and p < min_p
    low_abs = depth is None and acc.mean < min_len
    below_be = be is not None and be["speedup"] < 1.0
    if not (low_width or low_abs or below_be):
        return
    parts = [f"mean accept len {acc.mean:.2f} over {acc.lines} decode lines" if acc.lines
             else f"benchmark accept length {acc.mean:.2f}"]
    if depth:
        parts.append(f"of at most {depth + 1} (draft depth {depth}): ≈{p:.2f} of each draft token accepted "
                     f"(threshold {min_p})")
    else:
        parts.append(f"below {min_len} (the draft depth is not in the log, so only the absolute value is judged)")
    if be:
        parts.append(f"break-even accept len ≈{be['break_even_accept_len']} ({be['method']}: speculation runs at "
                     f"{be['speedup']:.2f}× the no-spec throughput)")
    else:
        parts.append("break-even not computable: the log holds no run without speculation at the same batch size "
                     "(run the same benchmark with speculation off to decide)")
    message = "Low speculative acceptance: " + "; ".join(parts)
    if below_be:
        remedy = "speculation is slower than no speculation here: turn it off (drop `--speculative-algorithm`)"
        if depth and depth > 1:
            remedy += f", or try `--speculative-num-steps {max(1, depth // 2)} --speculative-num-draft-tokens {max(1, depth // 2) + 1}`"
    else:
        new = max(1, (depth or 2) // 2)
        remedy = (f"fewer draft steps (`--speculative-num-steps {new} --speculative-num-draft-tokens {new + 1}`), a "
                  "draft model trained for this target, or turn speculation off")
    lines = [(acc.first_line, acc.first_line)] if acc.first_line else []
    if acc.last_line and acc.last_line != acc.first_line:
        lines.append((acc.last_line, acc.last_line))
    yield ctx.finding("spec-low-acceptance", message, remedy, lines=lines, data=data, claim=False)


@rule(code="SPEC006", name="spec-inactive", family="speculative", severity=Severity.WARNING,
      needs=("serving", "config"))
def spec_inactive(ctx: RuleContext) -> Iterator[Finding]:
    """Speculative decoding is configured but does not accept any draft token.

    **What it means**
    The run is set up for speculation (`--speculative-algorithm`, speculative warnings, draft CUDA
    graphs, or decode lines that print `accept len`), yet the decode stats show `accept len: 1.00`
    (only the bonus token: nothing accepted) or carry no accept fields at all.

    **Why it matters**
    The server pays for the draft model and the verify step and gains nothing; throughput is lower
    than without speculation. Usually the draft is not the one for this target, not loaded, or the
    algorithm does not fit it.

    **Example**
    ```
    2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Decode batch. #running-req: 48, #token: 3894, token usage: 0.00, accept len: 1.00, accept rate: 0.11, cuda graph: False, gen throughput (token/s): 5452.63, #queue-req: 0,
    ```

    **Fix**
    Check that the draft is loaded and matches the target (`--speculative-draft-model-path`, its
    `Load weight end`, draft CUDA graphs) and `--speculative-algorithm`; or turn speculation off.
    Threshold: `[tool.logdiag.thresholds.spec-inactive] max_accept_len` (1.05).
    """
    cfg = spec_config(ctx)
    if not cfg.configured:
        return
    acc = acceptance(ctx)
    limit = _inactive_max(ctx)
    d = ctx.log.decode
    remedy = ("check that the draft is loaded and matches the target (`--speculative-draft-model-path`"
              + (f" {cfg.draft_model}" if cfg.draft_model else "")
              + ", its `Load weight end` and draft CUDA-graph lines) and that `--speculative-algorithm` fits it; "
                "otherwise turn speculation off")
    data: dict[str, Any] = {"configured_by": cfg.reasons[:3], "max_accept_len": limit}
    if acc.mean is not None and acc.mean <= limit:
        data.update(accept_len_mean=acc.mean, accept_rate_mean=acc.rate_mean, lines=acc.lines or None)
        running = _finite(d.cols["running"][i] for i in range(len(d.line)) if d.cols["accept_len"][i] == d.cols["accept_len"][i])
        bs = f" at #running-req up to {int(max(running))}" if running else ""
        rate = f", accept rate {acc.rate_mean:.2f}" if acc.rate_mean is not None else ""
        where = f"over {acc.lines} decode lines" if acc.lines else "in the benchmark result"
        message = (f"Speculation is configured ({'; '.join(cfg.reasons[:2])}) but accepts nothing: accept len "
                   f"{acc.mean:.2f}{rate} {where}{bs} — every step emits only the bonus token")
        lines = [(acc.first_line, acc.first_line)]
        if acc.last_line != acc.first_line:
            lines.append((acc.last_line, acc.last_line))
        yield ctx.finding("spec-inactive", message, remedy, lines=lines, data=data, claim=False)
        return
    if acc.mean is None and len(d) and cfg.algorithm:
        message = (f"Speculation is configured ({'; '.join(cfg.reasons[:2])}) but none of the {len(d)} decode lines "
                   "prints an accept length: the draft does not seem to run")
        yield ctx.finding("spec-inactive", message, remedy, lines=[(d.line[0], d.line[0])], events=cfg.evidence[:1],
                          data=data, claim=False)
