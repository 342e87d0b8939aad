"""cuda-oom: a CUDA allocation failed; the phase (frames, wrapper, start-up phase) decides the remedy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, Severity, Traceback
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.memory.common import current_fraction, int_arg, limits, round_up, source_line
from logparse.rules.memory.graphs import capture_remedy
from logparse.rules.memory.oom_phase import STARTUP_OOM_PHASES, oom_phase
from logparse.rules.registry import rule
from logparse.run.oom import oom_numbers


def _oom_remedy(
    ctx: RuleContext, phase: str, numbers: dict[str, Any], text: str = "", at: Event | None = None
) -> tuple[str, dict[str, Any]]:
    """The remedy for an OOM in this phase, with values from the log. Never 'raise --mem-fraction-static'
    (that is the KV-pool sizing advice, the opposite problem)."""
    data: dict[str, Any] = {}
    frac = current_fraction(ctx)
    total = numbers.get("total_capacity_gib")
    lower_frac = None
    if frac is not None:
        # Free the allocation that failed (plus 1 GiB headroom) from the static pool when the size is known.
        step = 0.05
        if total and numbers.get("tried_to_allocate_mib"):
            step = max(0.02, round_up((numbers["tried_to_allocate_mib"] / 1024 + 1.0) / total))
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
        found = capture_remedy(ctx, text, at, numbers, frac_text, data) if at is not None else None
        if found is not None:
            return found, data
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
        return _forward_remedy(ctx, frac_text, data)
    return (
        f"{frac_text}; to decide between that and fewer batch sizes / more GPUs the scheduler traceback's frames "
        "are needed (weight load, KV pool, CUDA graph capture or a forward pass)"
    ), data


def _forward_remedy(ctx: RuleContext, frac_text: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A forward pass did not fit: a smaller static pool, smaller prefill chunks or fewer requests."""
    lim = limits(ctx)
    chunk = (lim.chunked_prefill_size if lim else None) or int_arg(ctx, "chunked_prefill_size")
    running = (lim.max_running_requests if lim else None) or int_arg(ctx, "max_running_requests")
    parts = [frac_text]
    if chunk and chunk > 0:
        data.update(chunked_prefill_size=chunk, suggested_chunked_prefill_size=max(512, chunk // 2))
        parts.append(f"`--chunked-prefill-size {max(512, chunk // 2)}` (from {chunk})")
    else:
        parts.append("a lower `--chunked-prefill-size` (e.g. 4096)")
    if running:
        data.update(max_running_requests=running, suggested_max_running_requests=max(1, running // 2))
        parts.append(f"`--max-running-requests {max(1, running // 2)}` (from {running})")
    else:
        parts.append("a lower `--max-running-requests`")
    return ", ".join(parts[:-1]) + " or " + parts[-1], data


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
        if r.event.line in seen or ctx.match("cuda-oom", r.text) is None:
            continue
        seen.add(r.event.line)
        tb = r.traceback
        text = ctx.traceback_text(tb) if tb is not None else r.text
        items.append((r.event, tb, f"{r.text}\n{text}"))
    for ev, tb, text in items:
        yield _oom_finding(ctx, ev, tb, text, lines=())
    # Lines the grammar did not turn into an exception (e.g. a wrapped or prefixed OOM message).
    for hit in ctx.messages("cuda-oom"):
        no = hit.line
        if any(ev.line <= no <= (ev.end_line or ev.line) for ev, _tb, _t in items) or source_line(ctx, no):
            continue
        yield _oom_finding(ctx, Event(line=no, end_line=no), None, ctx.text(no), lines=((no, no),))


def _oom_exception_type(ctx: RuleContext, tb: Traceback | None) -> str | None:
    """The exception of the traceback's chain that is the OOM (a RayTaskError wraps it)."""
    if tb is None:
        return None
    chain = (*tb.chain, (tb.exc_type or "", tb.message))
    return next((t for t, m in chain if ctx.match("cuda-oom", f"{t}: {m}") is not None), tb.exc_type)


def _oom_finding(
    ctx: RuleContext, ev: Event, tb: Traceback | None, text: str, lines: tuple[tuple[int, int], ...]
) -> Finding:
    numbers = oom_numbers(text)
    phase, why = oom_phase(ctx, tb, text, ev.line, ev.rank)
    remedy, extra = _oom_remedy(ctx, phase, numbers, text, ev)
    etype = _oom_exception_type(ctx, tb)
    detail = []
    if "tried_to_allocate_mib" in numbers:
        detail.append(f"tried to allocate {numbers['tried_to_allocate_mib']:.2f} MiB")
    if "gpu" in numbers:
        cap = f" (total {numbers['total_capacity_gib']:.2f} GiB" if "total_capacity_gib" in numbers else ""
        free = f", {numbers['free_mib']:.2f} MiB free" if "free_mib" in numbers else ""
        detail.append(f"on GPU {numbers['gpu']}{cap}{free}{')' if cap else ''}")
    where = "at an unknown phase" if phase == "unknown" else f"during {phase}"
    message = f"CUDA out of memory {where} ({why})" + (": " + " ".join(detail) if detail else "")
    data: dict[str, Any] = {"phase": phase, **({"oom": numbers} if numbers else {}), **extra}
    if etype:
        data["exception_type"] = etype
    return ctx.finding(
        "cuda-oom",
        message,
        remedy,
        events=[ev] if not lines else [],
        lines=lines,
        data=data,
        ranks=[ev.rank] if ev.rank else [],
        stage="startup" if phase in STARTUP_OOM_PHASES else None,
    )
