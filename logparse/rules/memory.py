"""Rules of the 'memory' family (see shared/diagnoses.md): GPU OOM by phase, KV-pool sizing, host OOM,
KV-cache exhaustion while serving, mamba state-pool exhaustion, SGLang's own leak check."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from logparse.parsing import colstats
from logparse.model.events import (
    Event,
    ExceptionHeader,
    ExitCode,
    Killed,
    KnownMessage,
    MambaCacheAllocated,
    MemoryPoolEnd,
    ProfiledTokensExceeded,
    ProgressBar,
    Retraction,
    SchedulerDead,
    SchedulerLimits,
    Severity,
    SglangWatchdog,
    SigquitReceived,
    SubprocessCrashed,
    Traceback,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.rules.context import Raised, RuleContext, mask_numbers
from logparse.rules.registry import rule
from logparse.run.timeline import startup_phases
from logparse.run.views import rank_key

# --------------------------------------------------------------------------- shared numbers


def _num(v: Any) -> float | None:
    return (
        float(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)
        else None
    )


def _round_up(x: float, step: float = 0.01) -> float:
    return round(math.ceil(round(x / step, 6)) * step, 2)


def _current_fraction(ctx: RuleContext, text: str = "") -> float | None:
    """--mem-fraction-static in effect: as the error message states it, else server_args / the command."""
    m = re.search(r"mem_fraction_static=([\d.]+)", text)
    if m:
        try:
            return float(m.group(1).rstrip("."))
        except ValueError:
            pass
    return _num(ctx.views.arg("mem_fraction_static"))


def _for_rank(events: list[Any], rank: str | None) -> Any:
    same = [e for e in events if e.rank == rank]
    return (same or events or [None])[0]


def _memory_numbers(ctx: RuleContext, rank: str | None) -> dict[str, float]:
    """Weights and free memory around weight loading, from `Load weight begin/end` (per rank)."""
    out: dict[str, float] = {}
    end = _for_rank([e for e in ctx.log.of(WeightLoadEnd) if not e.committed_after_capture], rank)
    begin = _for_rank(ctx.log.of(WeightLoadBegin), rank)
    if end is not None and end.mem_usage_gb is not None:
        out["weights_gb"] = end.mem_usage_gb
    if end is not None and end.avail_mem_gb is not None:
        out["avail_after_weights_gb"] = end.avail_mem_gb
    if begin is not None and begin.avail_mem_gb is not None:
        out["avail_before_weights_gb"] = begin.avail_mem_gb
    elif "weights_gb" in out and "avail_after_weights_gb" in out:
        out["avail_before_weights_gb"] = round(out["weights_gb"] + out["avail_after_weights_gb"], 2)
    return out


def _weight_events(ctx: RuleContext, rank: str | None) -> list[Event]:
    """The `Load weight begin/end` lines whose numbers a memory computation used."""
    end = _for_rank([e for e in ctx.log.of(WeightLoadEnd) if not e.committed_after_capture], rank)
    begin = _for_rank(ctx.log.of(WeightLoadBegin), rank)
    return [e for e in (begin, end) if e is not None]


def _limits(ctx: RuleContext) -> SchedulerLimits | None:
    limits = ctx.log.of(SchedulerLimits)
    return limits[0] if limits else None


def _int_arg(ctx: RuleContext, name: str) -> int | None:
    v = ctx.views.arg(name)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# --------------------------------------------------------------------------- cuda-oom

# cuda-oom phases that only happen while the server starts.
STARTUP_OOM_PHASES = frozenset({"weight-load", "kv-alloc", "cuda-graph-capture"})
_CUDA_OOM = lazy_compile(
    r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|cudaErrorMemoryAllocation"
    r"|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED|HIP out of memory",
    re.IGNORECASE,
)
_OOM_GPU = lazy_compile(r"GPU (\d+) has a total capacity of ([\d.]+) GiB")
_OOM_GPU_ONLY = lazy_compile(r"GPU (\d+) has a total capac")
_OOM_TRIED = lazy_compile(r"Tried to allocate ([\d.]+) (MiB|GiB|KiB)")
_OOM_FREE = lazy_compile(r"of which ([\d.]+) (MiB|GiB|KiB) is free")
_MIB = {"KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}

# Frame names (function or file) that place an OOM in a phase; checked in this order, because a
# graph capture runs forward passes and a decode step samples.
_PHASE_FRAMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "cuda-graph-capture",
        re.compile(
            r"capture|cuda_graph|graph_runner|init_device_graphs|init_cuda_graphs", re.IGNORECASE
        ),
    ),
    (
        "weight-load",
        re.compile(
            r"^(load_model|load_weights\w*|_load_weights|weight_loader\w*|get_model|"
            r"load_weights_and_postprocess|loader\.py|weight_utils\.py|model_loader.*)$"
        ),
    ),
    (
        "kv-alloc",
        re.compile(
            r"^(init_memory_pool|profile_max_num_token|_create_buffers|memory_pool\.py|"
            r"init_kv_cache\w*|alloc_kv\w*)$"
        ),
    ),
    (
        "sampling",
        re.compile(
            r"^(sample|sampler\.py|sampling\.py|top_k_top_p\w*|\w*sampling_from_probs|"
            r"min_p_sampling\w*|_sample\w*)$"
        ),
    ),
    (
        "prefill",
        re.compile(r"^(forward_extend|forward_prefill_batch|run_prefill\w*|forward_prefill\w*)$"),
    ),
    ("decode", re.compile(r"^(forward_decode|forward_decode_batch|run_decode\w*|forward_idle)$")),
)
_PHASE_OF_STARTUP = {
    "weight-load": "weight-load",
    "kv-alloc": "kv-alloc",
    "capture-target": "cuda-graph-capture",
    "capture-draft": "cuda-graph-capture",
    "capture-draft-extend": "cuda-graph-capture",
    "capture-piecewise": "cuda-graph-capture",
    "capture-prefill": "cuda-graph-capture",
}


def _oom_numbers(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if m := _OOM_GPU.search(text):
        out["gpu"] = int(m.group(1))
        out["total_capacity_gib"] = float(m.group(2))
    elif m := _OOM_GPU_ONLY.search(text):
        out["gpu"] = int(m.group(1))
    if m := _OOM_TRIED.search(text):
        out["tried_to_allocate_mib"] = round(float(m.group(1)) * _MIB[m.group(2)], 2)
    if m := _OOM_FREE.search(text):
        out["free_mib"] = round(float(m.group(1)) * _MIB[m.group(2)], 2)
    return out


def oom_phase(
    ctx: RuleContext, tb: Traceback | None, text: str, line: int, rank: str | None
) -> tuple[str, str]:
    """(phase, why) of a CUDA OOM: from the traceback frames, the wrapping message, else the startup
    phase the rank was in when the OOM was logged."""
    if tb is not None:
        names: list[str] = []
        for f in tb.frames:
            if f.func:
                names.append(f.func)
            names.append(f.path.replace("\\", "/").rsplit("/", 1)[-1])
        for phase, pattern in _PHASE_FRAMES:
            hit = next((n for n in names if pattern.search(n)), None)
            if hit is not None:
                return phase, f"frame {hit}"
    if re.search(r"Capture (?:\w+ )*(?:cuda |CUDA |prefill CUDA |CPU )?graph failed", text):
        return "cuda-graph-capture", "the 'Capture … graph failed' wrapper"
    phases = startup_phases(ctx.log)
    for key in ([rank] if rank else []) + ["main"] + sorted(phases):
        plist = [
            p
            for p in phases.get(key, [])
            if p.start_line < line and (p.end_line is None or p.end_line > line)
        ]
        if plist:
            current = max(plist, key=lambda p: p.start_line)
            if current.name in _PHASE_OF_STARTUP:
                return _PHASE_OF_STARTUP[
                    current.name
                ], f"startup phase {current.name} in progress on {current.rank}"
    return "unknown", "neither the traceback frames nor the surrounding lines show the phase"


def _oom_remedy(
    ctx: RuleContext, phase: str, numbers: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The remedy for an OOM in this phase, with values from the log. Never 'raise --mem-fraction-static'
    (that is the KV-pool sizing advice, the opposite problem)."""
    data: dict[str, Any] = {}
    frac = _current_fraction(ctx)
    total = numbers.get("total_capacity_gib")
    lower_frac = None
    if frac is not None:
        # Free the allocation that failed (plus 1 GiB headroom) from the static pool when the size is known.
        step = 0.05
        if total and numbers.get("tried_to_allocate_mib"):
            step = max(0.02, _round_up((numbers["tried_to_allocate_mib"] / 1024 + 1.0) / total))
        lower_frac = round(max(0.3, frac - step), 2)
        data.update(current_mem_fraction_static=frac, suggested_mem_fraction_static=lower_frac)
    frac_text = (
        f"`--mem-fraction-static {lower_frac}` (from {frac})"
        if lower_frac is not None
        else "a lower `--mem-fraction-static` (e.g. 0.8, then 0.7)"
    )
    if phase == "weight-load":
        tp = ctx.views.tp_size
        more = 2 * tp if tp else 2
        data["suggested_tp_size"] = more
        return (
            f"the weights do not fit on {tp or 'the'} GPU(s): shard them over more GPUs (`--tp {more}`) "
            "or use a quantized checkpoint (FP8 / AWQ / GPTQ)"
        ), data
    if phase == "kv-alloc":
        return (
            f"{frac_text} so the KV pool is sized below the free memory, and check `nvidia-smi` for other "
            "processes holding memory on these GPUs"
        ), data
    if phase == "cuda-graph-capture":
        bs = ctx.views.cuda_graph_max_bs
        if bs:
            new_bs = max(1, bs // 2)
            data.update(cuda_graph_max_bs=bs, suggested_cuda_graph_max_bs=new_bs)
            return f"`--cuda-graph-max-bs {new_bs}` (captured up to {bs}) and/or {frac_text}", data
        return (
            f"a lower `--cuda-graph-max-bs` (e.g. half the captured maximum) and/or {frac_text}",
            data,
        )
    if phase in ("prefill", "decode", "sampling"):
        limits = _limits(ctx)
        chunk = (limits.chunked_prefill_size if limits else None) or _int_arg(
            ctx, "chunked_prefill_size"
        )
        running = (limits.max_running_requests if limits else None) or _int_arg(
            ctx, "max_running_requests"
        )
        parts = [frac_text]
        if chunk and chunk > 0:
            data.update(
                chunked_prefill_size=chunk, suggested_chunked_prefill_size=max(512, chunk // 2)
            )
            parts.append(f"`--chunked-prefill-size {max(512, chunk // 2)}` (from {chunk})")
        else:
            parts.append("a lower `--chunked-prefill-size` (e.g. 4096)")
        if running:
            data.update(
                max_running_requests=running, suggested_max_running_requests=max(1, running // 2)
            )
            parts.append(f"`--max-running-requests {max(1, running // 2)}` (from {running})")
        else:
            parts.append("a lower `--max-running-requests`")
        return ", ".join(parts[:-1]) + " or " + parts[-1], data
    return (
        f"{frac_text}; to decide between that and fewer batch sizes / more GPUs the scheduler traceback's frames "
        "are needed (weight load, KV pool, CUDA graph capture or a forward pass)"
    ), data


@rule(
    code="MEM001",
    name="cuda-oom",
    family="memory",
    severity=Severity.ERROR,
    needs=("tracebacks", "timeline"),
)
def cuda_oom(ctx: RuleContext) -> Iterator[Finding]:
    """A CUDA allocation failed: the GPU ran out of memory in a known phase of the run.

    **What it means**
    PyTorch could not allocate GPU memory (`torch.OutOfMemoryError` / `CUDA out of memory`, in any
    wording: old and new PyTorch, wrapped by SGLang as `Capture cuda graph failed: …`, or by Ray as
    `RayTaskError(OutOfMemoryError)`). The finding reports the phase — weight-load, kv-alloc,
    cuda-graph-capture, prefill, decode, sampling or unknown — from the traceback frames, the
    wrapping message, or the startup phase the rank was in (`data.phase`).

    **Why it matters**
    The scheduler that hit it dies and takes the server down. The fix depends on the phase: weights
    that do not fit need more GPUs, a graph capture that does not fit needs fewer captured batch
    sizes, a forward pass that does not fit needs a smaller static pool or smaller batches. It is
    never the KV-pool sizing error (`kv-pool-no-room`), whose fix goes the other way.

    **Example**
    ```
      File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 269, in __init__
        raise Exception(
    Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a total capacity of 95.00
    ```

    **Fix**
    By phase: weight-load → more GPUs (`--tp`) or a quantized checkpoint; cuda-graph-capture → a lower
    `--cuda-graph-max-bs` and/or `--mem-fraction-static`; prefill/decode/sampling → a lower
    `--mem-fraction-static`, `--chunked-prefill-size`, `--max-running-requests` (values computed from
    the log when it states the current ones).
    """
    seen: set[int] = set()
    items: list[tuple[Event, Traceback | None, str]] = []
    for r in ctx.raised():
        if r.event.line in seen or not _CUDA_OOM.search(r.text):
            continue
        seen.add(r.event.line)
        tb = r.traceback
        text = ctx.traceback_text(tb) if tb is not None else r.text
        items.append((r.event, tb, f"{r.text}\n{text}"))
    for ev, tb, text in items:
        yield _oom_finding(ctx, ev, tb, text, lines=())
    # Lines the grammar did not turn into an exception (e.g. a wrapped or prefixed OOM message).
    for no, _m in list(
        ctx.texts_matching(re.compile(r"CUDA out of memory|torch\.OutOfMemoryError"))
    ):
        if any(ev.line <= no <= (ev.end_line or ev.line) for ev, _tb, _t in items):
            continue
        fake = Event(line=no, end_line=no)
        yield _oom_finding(ctx, fake, None, ctx.text(no), lines=((no, no),))


def _oom_finding(
    ctx: RuleContext, ev: Event, tb: Traceback | None, text: str, lines: tuple[tuple[int, int], ...]
) -> Finding:
    numbers = _oom_numbers(text)
    phase, why = oom_phase(ctx, tb, text, ev.line, ev.rank)
    remedy, extra = _oom_remedy(ctx, phase, numbers)
    etype = None
    if tb is not None:
        etype = next(
            (
                t
                for t, m in (*tb.chain, (tb.exc_type or "", tb.message))
                if _CUDA_OOM.search(f"{t}: {m}")
            ),
            tb.exc_type,
        )
    detail = []
    if "tried_to_allocate_mib" in numbers:
        detail.append(f"tried to allocate {numbers['tried_to_allocate_mib']:.2f} MiB")
    if "gpu" in numbers:
        cap = (
            f" (total {numbers['total_capacity_gib']:.2f} GiB"
            if "total_capacity_gib" in numbers
            else ""
        )
        free = f", {numbers['free_mib']:.2f} MiB free" if "free_mib" in numbers else ""
        detail.append(f"on GPU {numbers['gpu']}{cap}{free}{')' if cap else ''}")
    where = "at an unknown phase" if phase == "unknown" else f"during {phase}"
    message = f"CUDA out of memory {where} ({why})" + (": " + " ".join(detail) if detail else "")
    data: dict[str, Any] = {"phase": phase, **({"oom": numbers} if numbers else {}), **extra}
    if etype:
        data["exception_type"] = etype
    events = [ev] if not lines else []
    return ctx.finding(
        "cuda-oom",
        message,
        remedy,
        events=events,
        lines=lines,
        data=data,
        ranks=[ev.rank] if ev.rank else [],
        stage="startup" if phase in STARTUP_OOM_PHASES else None,
    )


# --------------------------------------------------------------------------- kv-pool-no-room

_NOT_ENOUGH = lazy_compile(r"Not enough memory\. Please try to increase --mem-fraction-static")


def kv_pool_advice(
    ctx: RuleContext,
    rank: str | None,
    current: float | None,
    requested: int | None,
    profiled: int | None,
) -> tuple[float | None, dict[str, Any], str]:
    """A new --mem-fraction-static from the logged memory numbers, with the arithmetic.

    SGLang sizes the KV pool as rest = avail_after_weights − avail_before_weights × (1 − f), so any
    f ≤ weights / avail_before leaves no room at all. With f and the profiled token count known,
    the per-token KV size follows, and with it the f that holds the requested max_total_tokens."""
    mem = _memory_numbers(ctx, rank)
    data: dict[str, Any] = dict(mem)
    before, after = mem.get("avail_before_weights_gb"), mem.get("avail_after_weights_gb")
    if current is not None:
        data["current_mem_fraction_static"] = current
    if not before or after is None:
        return None, data, ""
    used = before - after
    need = used / before
    data["weights_fraction"] = round(need, 4)
    why = (
        f"the weights take {used:.2f} GB of the {before:.2f} GB free before loading ({need:.1%}), so "
        f"--mem-fraction-static must be above {need:.3f} to leave any room for the KV cache"
    )
    steps = [
        (
            f"KV pool = avail_after_weights − avail_before_weights × (1 − f) = {after:.2f} − {before:.2f} × (1 − f) GB, "
            f"> 0 only for f > {used:.2f} / {before:.2f} = {need:.3f}"
        )
    ]
    target = need + 0.05  # room for a minimal pool beyond the weights
    if current is not None and profiled and requested:
        rest = after - before * (1 - current)
        if rest and (rest > 0) == (profiled > 0):
            per_token_gb = rest / profiled
            target = max(target, (used + requested * per_token_gb) / before + 0.01)
            data["kv_bytes_per_token"] = round(per_token_gb * (1 << 30))
            steps.append(
                f"at f={current} that is {rest:.2f} GB for {profiled} tokens ({data['kv_bytes_per_token']} "
                f"bytes/token), so {requested} tokens need f ≥ {(used + requested * per_token_gb) / before:.3f}"
            )
    else:
        steps.append(f"plus 0.05 for a minimal pool: {need + 0.05:.3f}")
    if current is not None:
        target = max(target, current + 0.02)
    suggested = min(0.95, _round_up(target))
    data["suggested_mem_fraction_static"] = suggested
    steps.append(
        f"suggested f = {suggested}"
        + (" (capped at 0.95)" if suggested < _round_up(target) else "")
    )
    data["arithmetic"] = "; ".join(steps)
    return suggested, data, why


def _pool_remedy(ctx: RuleContext, suggested: float | None, data: dict[str, Any]) -> str:
    tp = ctx.views.tp_size
    more = f"`--tp {2 * tp}`" if tp else "more GPUs (`--tp`)"
    if suggested is None:
        return (
            f"raise `--mem-fraction-static` (the log does not show the memory numbers to compute it), or {more}, "
            "a quantized checkpoint or a smaller `--context-length`"
        )
    tight = data.get("weights_fraction", 0) > 0.88
    alt = f"or {more}, a quantized checkpoint or a smaller `--context-length`"
    if tight:
        return (
            f"raise `--mem-fraction-static` to {suggested} — that leaves little for activations and CUDA graphs, "
            f"so prefer {more}, a quantized checkpoint (FP8) or a smaller `--context-length`"
        )
    return f"raise `--mem-fraction-static` to {suggested} {alt}"


@rule(
    code="MEM002",
    name="kv-pool-no-room",
    family="memory",
    severity=Severity.ERROR,
    needs=("startup",),
    stage="startup",
)
def kv_pool_no_room(ctx: RuleContext) -> Iterator[Finding]:
    """The static memory pool leaves no room for the KV cache after the weights are loaded.

    **What it means**
    SGLang sizes the KV cache from what is left of `--mem-fraction-static` × GPU memory after the
    weights. Here that budget is zero or negative: `Not enough memory. Please try to increase
    --mem-fraction-static`, a negative profiled token count, or `max_total_tokens=… is larger than the
    profiled value …` (a warning when the profiled value is still positive and SGLang continues with
    fewer tokens).

    **Why it matters**
    With no KV pool the scheduler cannot start; with a smaller one than requested the server holds
    fewer tokens than planned. This is the opposite of a runtime CUDA OOM: the static fraction is too
    *small*, so lowering it (the OOM advice) makes it worse.

    **Example**
    ```
    [2025-07-02 07:41:58 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB.
    [2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.
    ```

    **Fix**
    Raise `--mem-fraction-static` to the value computed from the logged memory numbers (weights GB,
    free memory before and after loading; `data.arithmetic` shows the computation), or shard the
    weights over more GPUs (`--tp`), use a quantized checkpoint or a smaller `--context-length`.
    """
    for e in ctx.log.of(ProfiledTokensExceeded):
        current = _current_fraction(ctx)
        suggested, data, why = kv_pool_advice(ctx, e.rank, current, e.max_total_tokens, e.profiled)
        data.update(
            requested_max_total_tokens=e.max_total_tokens, profiled_max_total_tokens=e.profiled
        )
        negative = e.profiled <= 0
        what = (
            "KV pool sizing failed{where}: the profiled token budget is"
            if negative
            else "KV pool smaller than requested{where}: the profiled token budget is"
        )
        message = f"{what} {e.profiled} (max_total_tokens={e.max_total_tokens} requested)" + (
            f"; {why}" if why else ""
        )
        yield ctx.finding(
            "kv-pool-no-room",
            message,
            _pool_remedy(ctx, suggested, data),
            events=[e],
            context=_weight_events(ctx, e.rank) if why else (),
            data=data,
            severity=Severity.ERROR if negative else Severity.WARNING,
            fingerprint=f"profiled|{e.max_total_tokens}|{e.profiled}",
        )
    found: list[tuple[Event, str]] = []
    for r in ctx.raised():
        if _NOT_ENOUGH.search(r.message):
            found.append((r.event, r.message))
    for ev, text in found:
        yield _not_enough(ctx, ev, text, ())
    for no, _m in list(ctx.texts_matching(_NOT_ENOUGH)):
        if any(ev.line <= no <= (ev.end_line or ev.line) for ev, _ in found):
            continue
        yield _not_enough(ctx, Event(line=no, end_line=no), ctx.text(no), ((no, no),))


def _not_enough(
    ctx: RuleContext, ev: Event, text: str, lines: tuple[tuple[int, int], ...]
) -> Finding:
    current = _current_fraction(ctx, text)
    suggested, data, why = kv_pool_advice(ctx, ev.rank, current, None, None)
    stated = f" (--mem-fraction-static={current})" if current is not None else ""
    message = f"Not enough memory for the KV pool after loading the weights{{where}}{stated}" + (
        f": {why}" if why else ""
    )
    return ctx.finding(
        "kv-pool-no-room",
        message,
        _pool_remedy(ctx, suggested, data),
        events=[] if lines else [ev],
        lines=lines,
        context=_weight_events(ctx, ev.rank) if why else (),
        data=data,
        ranks=[ev.rank] if ev.rank else [],
    )


# --------------------------------------------------------------------------- host-oom

_ERRNO12 = lazy_compile(r"\[Errno 12\]|Cannot allocate memory|\bENOMEM\b")
_HOST_POOL = lazy_compile(
    r"Not enough host memory available\. Requesting ([\d.]+) GB but only have ([\d.]+) GB free"
)
_EXIT_KILL = lazy_compile(
    r"exit(?:ed with)? (?:code|status)[:=]? ?(-9|137)\b|terminated with (-9|137)\b|exitcode[=:] ?(-9|137)\b"
)
_HOST_REMEDY = (
    "check `dmesg -T | grep -i -E 'killed process|out of memory'` and the container's memory limit "
    "(docker `--memory`, k8s `resources.limits.memory`); reduce host-side memory: fewer processes loading "
    "weights at once, a smaller `--hicache-size`, no `--cpu-offload-gb`"
)
# Lines after which SGLang kills its own process tree (so the shell's `Killed` is expected).
_SELF_KILL: tuple[type[Event], ...] = (SigquitReceived, SglangWatchdog, SubprocessCrashed)


def _self_killed(ctx: RuleContext, killed: Killed, previous_killed: int) -> Event | None:
    """The SGLang line that explains a `Killed` (sigquit handling, watchdog, warmup failure), if any
    comes before it (after the previous `Killed`)."""
    for e in reversed(ctx.log.events):
        if e.line >= killed.line or e.line <= previous_killed:
            continue
        if isinstance(e, _SELF_KILL):
            return e
        if isinstance(e, ExceptionHeader) and (e.process == "warmup" or "warmup" in e.rest.lower()):
            return e
        if isinstance(e, KnownMessage) and e.code in ("watchdog-debug-info", "pyspy-failed"):
            return e
    return None


def _loading(ctx: RuleContext, line: int) -> bool:
    """Whether weights were being loaded when `line` was printed."""
    for plist in startup_phases(ctx.log).values():
        for p in plist:
            if (
                p.name == "weight-load"
                and p.start_line < line
                and (p.end_line is None or p.end_line > line)
            ):
                return True
    bars = [b for b in ctx.log.of(ProgressBar) if b.line < line and b.bar_kind == "checkpoint-load"]
    return bool(bars) and (bars[-1].percent or 0) < 100


@rule(
    code="MEM003",
    name="host-oom",
    family="memory",
    severity=Severity.ERROR,
    needs=("events", "timeline"),
)
def host_oom(ctx: RuleContext) -> Iterator[Finding]:
    """Host (CPU) memory ran out: the kernel OOM killer, `Errno 12`, or HiCache's host pool check.

    **What it means**
    A process was killed or could not allocate host RAM: a bare `Killed` that SGLang did not cause
    itself (typically while loading weights: the kernel OOM killer's signature), a child exiting with
    -9 / 137 (SIGKILL), `OSError: [Errno 12] Cannot allocate memory` / ENOMEM, or HiCache's `Not
    enough host memory available`. A `Killed` right after `Received sigquit from a child process`
    is SGLang killing its own process tree — a consequence, not this diagnosis.

    **Why it matters**
    Host memory is needed while loading weights (every rank maps the checkpoint), for pinned buffers
    and for the hierarchical cache. When it runs out the kernel kills a process without a Python
    traceback, so the log shows little.

    **Example**
    ```
      File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 1984, in run_scheduler_process
        faulthandler.enable()
    OSError: [Errno 12] Cannot allocate memory
    ```

    **Fix**
    Check `dmesg -T | grep -i oom` and the container memory limit; reduce host-side memory (fewer
    processes loading at once, a smaller `--hicache-size`); for HiCache, a `--hicache-size` below the
    free host memory the message states.
    """
    previous = 0
    for k in ctx.log.of(Killed):
        cause = _self_killed(ctx, k, previous)
        previous = k.line
        if cause is not None:
            continue  # SGLang's own self-kill: grouped under the root cause by the engine
        during = (
            "while weights were loading — the kernel OOM killer's signature"
            if _loading(ctx, k.line)
            else "with no SGLang line explaining it (no sigquit / watchdog before it): most likely the kernel OOM killer"
        )
        yield ctx.finding(
            "host-oom",
            f"The process was killed (SIGKILL) {during}",
            _HOST_REMEDY,
            events=[k],
            data={"signal": "SIGKILL", "loading": _loading(ctx, k.line)},
        )
    for dead in ctx.log.of(SchedulerDead):
        codes = [e for e in ctx.log.of(ExitCode) if dead.line < e.line <= dead.line + 3]
        if codes and codes[0].code in (-9, 137):
            yield ctx.finding(
                "host-oom",
                f"Scheduler rank {dead.dead_rank} died with exit code {codes[0].code} (SIGKILL) "
                "during initialization: most likely the kernel OOM killer",
                _HOST_REMEDY,
                events=[dead, codes[0]],
                data={"exit_code": codes[0].code},
            )
    for s in ctx.log.of(SubprocessCrashed):
        if s.exit_code in (-9, 137):
            yield ctx.finding(
                "host-oom",
                f"Subprocess {s.name} was killed (exit code {s.exit_code}, SIGKILL): most likely "
                "the kernel OOM killer",
                _HOST_REMEDY,
                events=[s],
                data={"exit_code": s.exit_code},
            )
    for r in _unique(ctx.raised()):
        text = r.text
        if m := _HOST_POOL.search(text):
            yield _hicache(ctx, r.event, m, ())
        elif _ERRNO12.search(text):
            where = ""
            if r.traceback is not None:
                funcs = [f.func for f in r.traceback.frames if f.func]
                where = f" in {funcs[-1]}" if funcs else ""
            yield ctx.finding(
                "host-oom",
                f"Host memory allocation failed{where}: {r.exc_type}: {r.message.strip()}",
                _HOST_REMEDY,
                events=[r.event],
                data={"errno": 12, "exception_type": r.exc_type},
            )
        elif m2 := _EXIT_KILL.search(text):
            code = int(next(g for g in m2.groups() if g))
            yield ctx.finding(
                "host-oom",
                f"A child process died with exit code {code} (SIGKILL): most likely the kernel "
                f"OOM killer ({r.exc_type}: {r.message.strip()[:160]})",
                _HOST_REMEDY,
                events=[r.event],
                data={"exit_code": code},
            )
    for no, m in list(ctx.texts_matching(_HOST_POOL)):
        yield _hicache(ctx, Event(line=no, end_line=no), m, ((no, no),))


def _unique(raised: list[Raised]) -> Iterator[Raised]:
    """One item per traceback: the last exception of its chain that says something about host memory."""
    by_event: dict[int, Raised] = {}
    for r in raised:
        if _HOST_POOL.search(r.text) or _ERRNO12.search(r.text) or _EXIT_KILL.search(r.text):
            by_event.setdefault(r.event.line, r)
    yield from sorted(by_event.values(), key=lambda r: r.event.line)


def _hicache(
    ctx: RuleContext, ev: Event, m: re.Match[str], lines: tuple[tuple[int, int], ...]
) -> Finding:
    want, have = float(m.group(1)), float(m.group(2))
    size = max(1, math.floor(have * 0.8))
    return ctx.finding(
        "host-oom",
        f"HiCache host pool does not fit: {want:.2f} GB requested, {have:.2f} GB of host memory free",
        f"`--hicache-size {size}` (GB, below the {have:.2f} GB free) or a smaller `--hicache-ratio`; "
        "check the container memory limit",
        events=[] if lines else [ev],
        lines=lines,
        data={
            "hicache": {"requested_gb": want, "free_gb": have},
            "suggested_hicache_size_gb": size,
        },
    )


# --------------------------------------------------------------------------- kv-cache-exhausted

_BATCH_OOM = lazy_compile(r"(Prefill|Decode) out of memory\. Try to lower your batch size")


def _running_before(ctx: RuleContext, line: int) -> int | None:
    d = ctx.log.decode
    best = None
    for i, n in enumerate(d.line):
        if n > line:
            break
        v = d.cols["running"][i]
        if not math.isnan(v):
            best = int(v)
    return best


@rule(
    code="MEM004",
    name="kv-cache-exhausted",
    family="memory",
    severity=Severity.WARNING,
    needs=("serving",),
    stage="served",
)
def kv_cache_exhausted(ctx: RuleContext) -> Iterator[Finding]:
    """The KV cache pool filled up while serving: requests were retracted, or a batch did not fit.

    **What it means**
    SGLang ran out of KV-cache tokens for the running requests: it retracted requests (`KV cache pool
    is full. Retract requests.` / older `Decode out of memory happened.`), a batch could not be
    allocated (`Prefill/Decode out of memory. Try to lower your batch size`), or token usage stayed
    pinned at ~1.00 over consecutive decode lines.

    **Why it matters**
    Retracted requests are recomputed later: throughput drops and latency jumps while the pool
    thrashes. It is a capacity limit of the KV pool, not a CUDA OOM.

    **Example**
    ```
    [2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
    [2025-03-07 21:49:33 TP12] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
    ```

    **Fix**
    More KV room (a higher `--mem-fraction-static` when memory is left after the pool, more GPUs, FP8
    KV cache) or fewer concurrent requests (`--max-running-requests` below the running count at which
    the pool filled).
    """
    retractions = ctx.log.of(Retraction)
    if retractions:
        ranks = sorted({e.rank for e in retractions if e.rank}, key=rank_key)
        total = sum(e.retracted or 0 for e in retractions)
        running = _running_before(ctx, retractions[0].line)
        remedy, data = _kv_room_remedy(ctx, running)
        data.update(retractions=len(retractions), retracted_requests=total)
        from logparse.run.ranks import rank_range

        where = f" on {rank_range(ranks)}" if ranks else ""
        message = (
            f"KV cache pool full while serving{where}: {len(retractions)} retraction line(s), "
            f"{total} request(s) retracted and recomputed"
        )
        yield ctx.finding(
            "kv-cache-exhausted", message, remedy, events=retractions[:32], data=data, ranks=ranks
        )
    for r in ctx.raised():
        m = _BATCH_OOM.search(r.text)
        if m:
            remedy, data = _kv_room_remedy(ctx, _running_before(ctx, r.event.line))
            yield ctx.finding(
                "kv-cache-exhausted",
                f"{m.group(1)} batch did not fit in the KV cache pool and the scheduler "
                f"raised ({r.exc_type}: {m.group(0)})",
                remedy,
                events=[r.event],
                data=data,
                severity=Severity.ERROR,
            )
    for e in ctx.unclaimed(ctx.log.of(KnownMessage)):
        if e.code in ("prefill-out-of-memory", "decode-out-of-memory"):
            remedy, data = _kv_room_remedy(ctx, _running_before(ctx, e.line))
            yield ctx.finding(
                "kv-cache-exhausted",
                f"{e.text.strip()[:120]} — a batch did not fit in the KV cache pool",
                remedy,
                events=[e],
                data=data,
            )
    yield from _pinned_usage(ctx)


def _kv_room_remedy(ctx: RuleContext, running: int | None) -> tuple[str, dict[str, Any]]:
    data: dict[str, Any] = {}
    parts = []
    pool_end = ctx.log.of(MemoryPoolEnd)
    frac = _current_fraction(ctx)
    if frac is not None and pool_end and pool_end[0].avail_mem_gb and pool_end[0].avail_mem_gb > 4:
        # Memory left after the pool: part of it can go to the KV cache (keep ~3 GB for activations/graphs).
        mem = _memory_numbers(ctx, pool_end[0].rank)
        before = mem.get("avail_before_weights_gb")
        if before:
            new = min(0.95, _round_up(frac + (pool_end[0].avail_mem_gb - 3) / before))
            data.update(current_mem_fraction_static=frac, suggested_mem_fraction_static=new)
            parts.append(
                f"`--mem-fraction-static {new}` (from {frac}; {pool_end[0].avail_mem_gb:.2f} GB were left after the pool)"
            )
    if not parts:
        parts.append(
            "more KV room (a higher `--mem-fraction-static` if memory is left after the pool, FP8 KV cache, more GPUs)"
        )
    if running:
        cap = max(1, int(running * 0.75))
        data.update(running_when_full=running, suggested_max_running_requests=cap)
        parts.append(
            f"`--max-running-requests {cap}` ({running} were running when the pool filled)"
        )
    else:
        parts.append("a lower `--max-running-requests`")
    return " or ".join(parts), data


def _pinned_usage(ctx: RuleContext) -> Iterator[Finding]:
    """Token usage ≥ 0.99 on `min_lines` consecutive decode lines of one rank."""
    level = ctx.threshold("kv-cache-exhausted", "pinned_usage", 0.99)
    need = ctx.threshold("kv-cache-exhausted", "min_lines", 3)
    d = ctx.log.decode
    if not len(d):
        return
    usage = d.cols["token_usage"]
    for code, best in colstats.longest_runs(d.rank, usage, level).items():
        if len(best) < need:
            continue
        rank = d.ranks.values[code]
        first_running = d.cols["running"][best[0]]
        running = None if math.isnan(first_running) else int(first_running)
        queue = d.cols["queue"][best[0]]
        remedy, data = _kv_room_remedy(ctx, running)
        data.update(pinned_lines=len(best), token_usage=round(float(usage[best[0]]), 2))
        q = f" while {int(queue)} request(s) queue" if not math.isnan(queue) and queue > 0 else ""
        lines = [(d.line[i], d.line[i]) for i in best[:8]]
        yield ctx.finding(
            "kv-cache-exhausted",
            f"KV cache token usage pinned at {usage[best[0]]:.2f} over {len(best)} "
            f"consecutive decode lines{q}: the pool is full",
            remedy,
            lines=lines,
            data=data,
            ranks=[rank] if rank else [],
        )


# --------------------------------------------------------------------------- mamba-pool-exhausted

_MAMBA_FULL = lazy_compile(
    r"(?:mamba|ssm)\w*[ _](?:\w+[ _]){0,3}?(?:pool|cache|slots?|state)\w*[ _:]*(?:is |are )?(?:full|exhausted|"
    r"out of (?:memory|space|slots)|not enough|insufficient|no (?:free|available|more|space))"
    r"|(?:no|not enough|insufficient) (?:free |available )?(?:(?:space|room|slots?) for (?:the )?)?(?:mamba|ssm)\w* "
    r"(?:slots?|state|cache|pool)"
    r"|ping[-_ ]?pong\w*[ _](?:\w+[ _]){0,3}?(?:full|exhausted|not enough|no (?:free|available))",
    re.IGNORECASE,
)
_LEAK = lazy_compile(r"leak detected", re.IGNORECASE)


@rule(
    code="MEM005",
    name="mamba-pool-exhausted",
    family="memory",
    severity=Severity.ERROR,
    needs=("tracebacks", "serving"),
)
def mamba_pool_exhausted(ctx: RuleContext) -> Iterator[Finding]:
    """The mamba / SSM state pool of a hybrid model ran out of slots.

    **What it means**
    Hybrid models (Qwen3-Next, Qwen3.5, Nemotron-H, Falcon-H1, Kimi-Linear, …) keep one recurrent
    state per running request in a fixed mamba pool (plus ping-pong / extra-buffer slots for radix
    caching and speculative decoding). An allocation found no free slot (an error or assertion from
    the mamba pool / radix cache), or `mamba usage` stayed at ~1.00 in the decode stats.

    **Why it matters**
    Unlike the KV pool, SGLang cannot always retract its way out: the scheduler crashes or stalls
    as soon as more requests run than there are state slots.

    **Example**
    ```
    [2026-03-07 15:31:10 TP0] Decode batch, #running-req: 48, #full token: 120331, full token usage: 0.41, mamba num: 96, mamba usage: 1.00, cuda graph: True, gen throughput (token/s): 3120.11, #queue-req: 7
    ```

    **Fix**
    Give the mamba pool more room (`--max-mamba-cache-size`, a different `--mamba-full-memory-ratio`)
    or run fewer requests at once (`--max-running-requests` below the pool's slot count; with
    `extra_buffer` / speculative decoding each request holds more than one slot).
    """
    size = next((e.max_size for e in ctx.log.of(MambaCacheAllocated) if e.max_size), None)
    remedy, data = _mamba_remedy(ctx, size)
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen or _LEAK.search(r.text):
            continue
        mamba_frames = (
            r.traceback is not None
            and r.exc_type == "AssertionError"
            and any(
                "mamba" in (f.path + (f.func or "")).lower()
                and ("alloc" in (f.func or "") or "radix" in f.path)
                for f in r.traceback.frames
            )
        )
        if _MAMBA_FULL.search(r.text) or mamba_frames:
            seen.add(r.event.line)
            stated = re.search(r"mamba_pool\.size=(\d+)", r.text)
            fix, info = (
                _mamba_remedy(ctx, int(stated.group(1))) if stated and not size else (remedy, data)
            )
            yield ctx.finding(
                "mamba-pool-exhausted",
                f"Mamba state pool exhausted{{where}}: {r.exc_type}: {r.message.strip()[:200]}",
                fix,
                events=[r.event],
                data=dict(info),
            )
    for no, m in list(ctx.texts_matching(_MAMBA_FULL)):
        if _LEAK.search(ctx.text(no)):
            continue
        yield ctx.finding(
            "mamba-pool-exhausted",
            f"Mamba state pool exhausted: {m.group(0)}",
            remedy,
            lines=[(no, no)],
            data=dict(data),
        )
    d = ctx.log.decode
    if "mamba_usage" in d.extra:
        col = d.column("mamba_usage")
        pinned = [i for i in range(len(d)) if col[i] == col[i] and col[i] >= 0.99]
        if len(pinned) >= ctx.threshold("mamba-pool-exhausted", "min_lines", 3):
            lines = [(d.line[i], d.line[i]) for i in pinned[:8]]
            yield ctx.finding(
                "mamba-pool-exhausted",
                f"Mamba state pool full: `mamba usage` ≥ 0.99 on {len(pinned)} decode lines",
                remedy,
                lines=lines,
                severity=Severity.WARNING,
                data={**data, "pinned_lines": len(pinned)},
            )


def _slots_per_request(ctx: RuleContext) -> float | None:
    """Mamba slots one running request holds, from the decode stats (`mamba num` / `#running-req`)."""
    d = ctx.log.decode
    if "mamba_num" not in d.extra:
        return None
    num, running = d.column("mamba_num"), d.cols["running"]
    ratios = [
        num[i] / running[i]
        for i in range(len(d))
        if not math.isnan(num[i]) and not math.isnan(running[i]) and running[i] > 0
    ]
    return max(ratios) if ratios else None


def _mamba_remedy(ctx: RuleContext, size: int | None) -> tuple[str, dict[str, Any]]:
    if size:
        per = _slots_per_request(ctx) or (2.0 if ctx.views.arg("speculative_algorithm") else 1.0)
        cap = max(1, int(size / per * 0.9))
        data = {
            "max_mamba_cache_size": size,
            "slots_per_request": round(per, 2),
            "suggested_max_running_requests": cap,
        }
        return (
            f"`--max-running-requests {cap}` (the mamba pool has {size} slots, about {per:.1f} per running request) "
            "or a larger pool (`--max-mamba-cache-size`, `--mamba-full-memory-ratio`)"
        ), data
    return (
        "raise the mamba pool size (`--max-mamba-cache-size`, `--mamba-full-memory-ratio`) or lower "
        "`--max-running-requests`"
    ), {}


# --------------------------------------------------------------------------- memory-leak-detected

_LEAK_TEXT = lazy_compile(r"(?:memory|pool) leak detected|Mem Leak Detected", re.IGNORECASE)
_KV = lazy_compile(r"([\w.()]+)=(-?\d+)")


def _leak_values(text: str) -> dict[str, int]:
    return {k.removeprefix("self.").removesuffix("()"): int(v) for k, v in _KV.findall(text)}


@rule(
    code="MEM006",
    name="memory-leak-detected",
    family="memory",
    severity=Severity.ERROR,
    needs=("tracebacks",),
    stage="served",
)
def memory_leak_detected(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang's own memory self-check found KV / request-pool slots that nobody holds.

    **What it means**
    While idle (or after a batch) the scheduler checks that every KV-cache token and request slot
    is either free, cached or in use. `token_to_kv_pool_allocator memory leak detected!`,
    `req_to_token_pool memory leak detected!`, `Mem Leak Detected!` or the old `KV cache pool leak
    detected!` means the books do not balance: an SGLang bug, not a capacity problem.

    **Why it matters**
    Leaked slots never come back, so capacity shrinks over time; with the strict check
    (`SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_IDLE`) the scheduler raises and the server dies.

    **Example**
    ```
        raise ValueError(message)
    ValueError: token_to_kv_pool_allocator memory leak detected! full_available_size=6016, full_evictable_size=390685, self.token_to_kv_pool_allocator.size=396701, self.tree_cache.full_protected_size()=0
    ```

    **Fix**
    Not a configuration problem: upgrade SGLang, or report upstream with this log (the pool numbers
    and the features in use: radix cache, speculative decoding, hybrid/mamba model). Unsetting
    `SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_IDLE` turns the crash back into a warning.
    """
    remedy = (
        "not a configuration problem: upgrade SGLang or report upstream with this log and the features in use; "
        "unset `SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_IDLE` to make the check warn instead of crash"
    )
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen or not _LEAK_TEXT.search(r.text):
            continue
        seen.add(r.event.line)
        yield _leak(ctx, r.message, remedy, events=[r.event], raised=True)
    for e in ctx.unclaimed(ctx.log.of(KnownMessage)):
        if e.code.startswith("mem-leak"):
            yield _leak(ctx, e.text, remedy, events=[e], raised=False)
    for no, _m in list(ctx.texts_matching(_LEAK_TEXT)):
        yield _leak(ctx, ctx.text(no), remedy, lines=[(no, no)], raised=False)


def _leak(
    ctx: RuleContext,
    text: str,
    remedy: str,
    *,
    events: list[Event] | None = None,
    lines: list[tuple[int, int]] | None = None,
    raised: bool,
) -> Finding:
    pool = re.search(r"(\w+) (?:memory )?leak detected", text, re.IGNORECASE)
    what = (
        pool.group(1) if pool and pool.group(1).lower() not in ("memory", "mem") else "the KV cache"
    )
    values = _leak_values(text)
    how = "the scheduler raised and stopped" if raised else "printed as a warning"
    shown = ", ".join(f"{k}={v}" for k, v in list(values.items())[:6])
    message = f"SGLang's memory self-check found a leak in {what} ({how})" + (
        f": {shown}" if shown else ""
    )
    ev = events[0] if events else None
    return ctx.finding(
        "memory-leak-detected",
        message,
        remedy,
        events=events or [],
        lines=lines or [],
        data={"pool": what, "values": values, "raised": raised},
        fingerprint=f"leak|{what}|{raised}|{mask_numbers(shown)}",
        ranks=[ev.rank] if ev is not None and ev.rank else None,
    )


__all__ = [
    "cuda_oom",
    "host_oom",
    "kv_cache_exhausted",
    "kv_pool_advice",
    "kv_pool_no_room",
    "mamba_pool_exhausted",
    "memory_leak_detected",
    "oom_phase",
]
