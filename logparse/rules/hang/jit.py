"""jit-compile-stall: requests stall while FlashInfer / Triton / DeepGEMM compile kernels just in time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.codes import KnownCode
from logparse.model.events import JitCompile, KnownMessage, ProgressBar, Severity, SglangWatchdog
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule


def open_jit(ctx: RuleContext) -> list[JitCompile]:
    """JIT compile begins with no matching end."""
    open_: dict[tuple[str, str, str | None], JitCompile] = {}
    for e in ctx.log.of(JitCompile):
        key = (e.library, e.name, e.rank)
        if e.stage == "begin":
            open_[key] = e
        else:
            open_.pop(key, None) or open_.pop((e.library, e.name, None), None)
    return sorted(open_.values(), key=lambda e: e.line)


@rule(
    code="HANG003",
    name="jit-compile-stall",
    family="hang",
    severity=Severity.WARNING,
    needs=("events",),
)
def jit_compile_stall(ctx: RuleContext) -> Iterator[Finding]:
    """Requests stall while FlashInfer / Triton / DeepGEMM compile kernels just in time.

    **What it means**
    A JIT compilation began (`Loading JIT ops: cascade`, DeepGEMM's `Entering DeepGEMM JIT
    Pre-Compile session`) and either took long (`min_gap_s`, default 10 s, until `Finished loading
    JIT ops`) or never finished before the log moved on (e.g. to a watchdog timeout).

    **Why it matters**
    Compilation happens on the first request of a shape: that request (and everything batched with
    it) waits, TTFT spikes, and a long compile can trip SGLang's watchdog or a client timeout.

    **Example**
    ```
    2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Loading JIT ops: cascade

    2025-02-26 15:44:57,375 - INFO - flashinfer.jit: Finished loading JIT ops: cascade
    ```

    **Fix**
    Warm the JIT caches before serving: keep the cache directories on a persistent volume
    (FlashInfer `~/.cache/flashinfer`, Triton `TRITON_CACHE_DIR`), send warmup requests that cover
    the shapes, and precompile DeepGEMM with `python3 -m sglang.compile_deep_gemm` using the launch
    arguments.
    """
    min_gap = ctx.threshold("jit-compile-stall", "min_gap_s", 10.0)
    events = ctx.log.of(JitCompile)
    if not events:
        return
    open_: dict[tuple[str, str], JitCompile] = {}
    for e in events:
        key = (e.library, e.name)
        if e.stage == "begin":
            open_[key] = e
            continue
        b = open_.pop(key, None)
        if b is None or b.ts is None or e.ts is None or b.ts.year != e.ts.year:
            continue
        gap = (e.ts - b.ts).total_seconds()
        if gap >= min_gap:
            yield ctx.finding(
                "jit-compile-stall",
                f"{b.library} JIT compilation of {b.name or 'kernels'} took {gap:.1f} s "
                "(from its 'Loading' to its 'Finished' line): requests in flight waited for it",
                _jit_remedy(ctx, b.library),
                events=[b, e],
                data={"jit_compile_s": round(gap, 2), "library": b.library, "op": b.name},
            )
    for b in sorted(open_.values(), key=lambda e: e.line):
        # The compile's own progress lines (DeepGEMM's `Try DeepGEMM JIT Compiling for <K> …` per
        # kernel) show the session at work, not that the server moved on past it.
        later = [x for x in ctx.log.events if x.line > b.line and not _jit_progress(x)]
        if not later and not _batch_before(ctx, b.line):
            # The excerpt ends during the compile's own progress (or unread text) and no request has
            # been scheduled yet: a start-up cut short (startup-stalled's), no request shown waiting.
            continue
        follow = next((x for x in later if x.ts is not None), None)
        gap = (
            (follow.ts - b.ts).total_seconds()
            if follow is not None
            and b.ts is not None
            and follow.ts is not None
            and follow.ts.year == b.ts.year
            else None
        )
        what = next((x for x in later if isinstance(x, SglangWatchdog)), None)
        if gap is not None and gap < min_gap and what is None:
            continue  # the log moved on at once (another rank's load of it, the next step): no stall shown
        after = f"; the next line comes {gap:.1f} s later" if gap is not None else ""
        tail = f" and the watchdog fired on line {what.line}" if what is not None else ""
        data: dict[str, Any] = {"library": b.library, "op": b.name, "finished": False}
        if gap is not None:
            data["gap_s"] = round(gap, 2)
        yield ctx.finding(
            "jit-compile-stall",
            f"{b.library} JIT compilation of {b.name or 'kernels'} began and no 'Finished' "
            f"line follows{after}{tail}",
            _jit_remedy(ctx, b.library),
            events=[b],
            data=data,
        )


def _batch_before(ctx: RuleContext, line: int) -> bool:
    """Whether a prefill or decode batch (the warmup's included) ran before `line`: a compile after
    it is on the request path, so a request waits for it."""
    return any(len(cols) and cols.line[0] < line for cols in (ctx.log.prefill, ctx.log.decode))


def _jit_progress(event: Any) -> bool:
    """A line of the compile at work rather than of the server moving on past it: DeepGEMM's
    `Try DeepGEMM JIT Compiling for <K> …` per kernel, or a progress bar no start-up step owns
    (DeepGEMM warms its Ms under a bare tqdm bar)."""
    if isinstance(event, ProgressBar):
        return event.bar_kind == "other"
    return isinstance(event, KnownMessage) and event.code == KnownCode.DEEPGEMM_JIT_COMPILING


def _jit_remedy(ctx: RuleContext, library: str) -> str:
    if library.lower() == "deepgemm":
        model = ctx.views.arg("model_path") or "<model>"
        tp = ctx.views.tp_size or "<tp>"
        return (
            f"precompile: `python3 -m sglang.compile_deep_gemm --model {model} --tp {tp}` with the launch arguments, "
            "and keep its cache on a persistent volume"
        )
    return (
        "warm the JIT cache before serving: keep `~/.cache/flashinfer` (and `TRITON_CACHE_DIR`) on a persistent volume "
        "across restarts and send warmup requests covering the shapes"
    )
