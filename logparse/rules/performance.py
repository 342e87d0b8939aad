"""Rules of the 'performance' family (see shared/diagnoses.md): decode steps that run without CUDA
graphs, and a KV cache that is full while requests queue."""

from __future__ import annotations

import math
from collections.abc import Iterator
from array import array
from dataclasses import dataclass, field
from typing import Any

from logparse.model.events import CaptureBatchSizes, KnownMessage, SchedulerLimits, Severity
from logparse.model.findings import Finding
from logparse.parsing import colstats
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule


def round_bs(n: int) -> int:
    """A capture batch size covering n: SGLang's lists step by 8 up to 256 and by 16 above."""
    if n <= 8:
        return 1 << max(0, math.ceil(math.log2(max(n, 1))))
    step = 8 if n <= 256 else 16
    return int(math.ceil(n / step) * step)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) else None


@rule(code="PERF001", name="cuda-graph-not-used", family="performance", severity=Severity.WARNING,
      needs=("serving", "startup"))
def cuda_graph_not_used(ctx: RuleContext) -> Iterator[Finding]:
    """Decode steps ran without CUDA graphs.

    **What it means**
    Decode stats lines print `cuda graph: False`: the batch had more running requests than the
    largest captured batch size (`--cuda-graph-max-bs`, the list in `Capture cuda graph bs [...]`), or
    graphs are disabled (`--disable-cuda-graph`, torch-native / flex attention, DeepEP normal mode).

    **Why it matters**
    Without graphs every decode step pays the kernel-launch overhead on the CPU: decode is slower,
    most at small and medium batch sizes.

    **Example**
    ```
    [2026-03-11 14:07:45 TP0] Decode batch, #running-req: 256, #token: 166754, token usage: 0.55, cuda graph: False, gen throughput (token/s): 2661.22, #queue-req: 0
    ```

    **Fix**
    Raise `--cuda-graph-max-bs` to the batch sizes observed (the finding computes it from the largest
    `#running-req` on `cuda graph: False` lines; capture memory grows with it), or cap the batch with
    `--max-running-requests`, or accept it. Threshold: `[tool.logdiag.thresholds.cuda-graph-not-used]
    min_lines` (1).
    """
    d = ctx.log.decode
    rows = _graph_rows(d)
    if rows.false_lines < int(ctx.threshold("cuda-graph-not-used", "min_lines", 1)):
        return
    max_false = int(rows.max_false) if rows.max_false is not None else None
    min_false = int(rows.min_false) if rows.min_false is not None else None
    max_true = int(rows.max_true) if rows.max_true is not None else None
    captured = ctx.views.cuda_graph_max_bs
    disabled_by = None
    if ctx.views.arg("disable_cuda_graph") is True:
        disabled_by = "--disable-cuda-graph"
    for e in ctx.log.of(KnownMessage):
        if e.code == "cuda-graph-disabled":
            disabled_by = f"line {e.line}: {e.text.strip()[:120]}"
            break
    data: dict[str, Any] = {"false_lines": rows.false_lines, "decode_lines": len(d), "max_running_false": max_false,
                            "min_running_false": min_false, "max_running_true": max_true,
                            "captured_max_bs": captured, "disabled_by": disabled_by}
    share = f"{rows.false_lines} of {len(d)} decode lines"
    rng = (f"#running-req {min_false}–{max_false}" if min_false != max_false else f"#running-req {max_false}") \
        if max_false is not None else "unknown batch sizes"
    max_running = ctx.views.arg("max_running_requests")
    if disabled_by and not rows.any_true:
        message = f"CUDA graphs are not used: {share} show `cuda graph: False` ({rng}); graphs are disabled ({disabled_by})"
        remedy = ("remove what disables them (`--disable-cuda-graph`, a graph-capable `--attention-backend` such as "
                  "flashinfer/fa3/triton instead of torch_native/flex) unless it is needed")
    elif captured is not None and max_false is not None and max_false > captured:
        want = round_bs(max_false)
        data["suggested_cuda_graph_max_bs"] = want
        above = _graph_rows(d, captured).above
        message = (f"Decode ran without CUDA graphs on {share} ({rng}): the largest captured batch size is {captured}, "
                   f"and {above} of those lines had more running requests")
        # The cost, from the launch's memory budget.
        from logparse.rules.memory.graphs import graph_growth

        growth, cost = graph_growth(ctx, d.line[rows.first], captured, want)
        data.update(growth)
        cost = cost or "capture takes more memory"
        remedy = (f"`--cuda-graph-max-bs {want}` to cover the observed batches ({cost}; capture also takes "
                  f"longer), or `--max-running-requests {captured}` to stay within the graphs, or accept it")
    elif captured is not None and max_false is not None:
        message = (f"Decode ran without CUDA graphs on {share} ({rng}) although the batches fit the captured sizes "
                   f"(up to {captured}): graphs were not replayed for another reason"
                   + (f" ({disabled_by})" if disabled_by else ""))
        remedy = ("check what disables graph replay (`--disable-cuda-graph`, the attention backend, `--enable-"
                  "torch-compile` limits, speculative verify graphs); rerun with the startup log to see the capture lines")
    else:
        guess = round_bs(max_false) if max_false else None
        data["suggested_cuda_graph_max_bs"] = guess
        message = (f"Decode ran without CUDA graphs on {share} ({rng}); the captured batch sizes are not in this log, so "
                   "whether the batches exceeded them cannot be decided (the startup line `Capture cuda graph bs [...]` "
                   "would decide it)")
        remedy = (f"if the batches exceed the captured sizes: `--cuda-graph-max-bs {guess}` covers the observed ones"
                  if guess else "check the captured batch sizes (`Capture cuda graph bs [...]`) against #running-req")
        remedy += "; if graphs are disabled, remove what disables them"
    if isinstance(max_running, int) and max_false is not None:
        data["max_running_requests"] = max_running
    first, last, peak = d.line[rows.first], d.line[rows.last], d.line[rows.peak]
    lines = sorted({(first, first), (peak, peak), (last, last)})
    for e in ctx.log.of(CaptureBatchSizes)[:1]:
        lines.append((e.line, e.line))
    yield ctx.finding("cuda-graph-not-used", message, remedy, lines=lines, data=data, claim=False)


@dataclass
class _GraphRows:
    """What cuda-graph-not-used reads of the decode rows (`cuda graph` 0.0 = False, 1.0 = True)."""

    false_lines: int = 0
    any_true: bool = False
    first: int = -1  # first and last False row
    last: int = -1
    peak: int = -1  # the first False row with the most running requests (not printed counts as -1)
    peak_key: float = -math.inf
    min_false: float | None = None  # printed #running-req over the False rows
    max_false: float | None = None
    max_true: float | None = None  # … over the True rows
    above: int = 0  # False rows with more running requests than `above_of`

    def false_row(self, row: int, running: float, above_of: float | None) -> None:
        if self.first < 0:
            self.first = row
        self.last = row
        self.false_lines += 1
        if (running if running == running else -1.0) > self.peak_key:
            self.peak_key, self.peak = (running if running == running else -1.0), row
        if running == running:
            self.min_false = running if self.min_false is None else min(self.min_false, running)
            self.max_false = running if self.max_false is None else max(self.max_false, running)
            if above_of is not None and running > above_of:
                self.above += 1

    def true_running(self, running: float) -> None:
        self.any_true = True
        if running == running:
            self.max_true = running if self.max_true is None else max(self.max_true, running)


def _graph_rows(d: Any, above_of: float | None = None) -> _GraphRows:
    """One pass over the decode rows, slice by slice (lists of every False and True row and their
    counts held ~126 MB at 4M failure-heavy lines); numpy per slice on large logs."""
    out = _GraphRows()
    n = len(d)
    for lo in range(0, n, colstats.SLICE_ROWS):
        hi = min(lo + colstats.SLICE_ROWS, n)
        graph, running = d.column("cuda_graph", lo, hi), d.column("running", lo, hi)
        if n < colstats.NUMPY_FROM:
            for i, v in enumerate(graph):
                if v == 0.0:
                    out.false_row(lo + i, running[i], above_of)
                elif v == 1.0:
                    out.true_running(running[i])
            continue
        import numpy as np

        g, r = np.frombuffer(graph, dtype=np.float64), np.frombuffer(running, dtype=np.float64)
        false = np.flatnonzero(g == 0.0)
        if false.size:
            rf = r[false]
            keys = np.where(rf == rf, rf, -1.0)
            k = int(np.argmax(keys))  # the first of equal maxima, as max() over the rows
            if out.first < 0:
                out.first = lo + int(false[0])
            out.last = lo + int(false[-1])
            out.false_lines += int(false.size)
            if float(keys[k]) > out.peak_key:
                out.peak_key, out.peak = float(keys[k]), lo + int(false[k])
            printed = rf[rf == rf]
            if printed.size:
                lo_v, hi_v = float(printed.min()), float(printed.max())
                out.min_false = lo_v if out.min_false is None else min(out.min_false, lo_v)
                out.max_false = hi_v if out.max_false is None else max(out.max_false, hi_v)
                if above_of is not None:
                    out.above += int((printed > above_of).sum())
        true = g == 1.0
        if true.any():
            out.any_true = True
            rt = r[true]
            rt = rt[rt == rt]
            if rt.size:
                v = float(rt.max())
                out.max_true = v if out.max_true is None else max(out.max_true, v)
    return out


# One stats line is enough when its queue dwarfs the running batch. A queue that outnumbers the
# running requests SINGLE_LINE_QUEUE_RATIO times over cannot be a burst the scheduler is still
# admitting: with the pool ≥ the usage threshold, admission is blocked by KV room (a
# --max-running-requests cap shows as low usage instead), and one such line is the steady state of a
# pasted excerpt. A short queue next to a full pool can be a one-step blip, so it still needs
# `min_lines` lines. SINGLE_LINE_MIN_QUEUE keeps tiny batches (1 running, 2 queued) out.
SINGLE_LINE_QUEUE_RATIO = 2.0
SINGLE_LINE_MIN_QUEUE = 16


def _dwarfed(queue: float, running: float) -> bool:
    """The queue outnumbers the running batch SINGLE_LINE_QUEUE_RATIO times (running unknown: never)."""
    return running == running and queue >= SINGLE_LINE_MIN_QUEUE and queue >= SINGLE_LINE_QUEUE_RATIO * max(running, 1.0)


@dataclass
class _Saturated:
    """The stats rows with token usage >= the level while requests queue (decode and prefill)."""

    lines: int = 0
    dwarfed: bool = False  # one of them has a queue that dwarfs its batch (`_dwarfed`)
    peak_queue: float = -math.inf
    peak_usage: float = -math.inf
    first: int = 0  # smallest and largest line
    last: int = 0
    peak_line: int = 0  # the first line with the largest (usage, queue)
    peak_key: tuple[float, float] = (-math.inf, -math.inf)
    running: array[float] = field(default_factory=lambda: array("d"))  # their printed #running-req

    def row(self, line: int, usage: float, queue: float, running: float) -> None:
        self.first = line if not self.lines else min(self.first, line)
        self.last = line if not self.lines else max(self.last, line)
        self.lines += 1
        self.dwarfed = self.dwarfed or _dwarfed(queue, running)
        self.peak_queue, self.peak_usage = max(self.peak_queue, queue), max(self.peak_usage, usage)
        if (usage, queue) > self.peak_key or ((usage, queue) == self.peak_key and line < self.peak_line):
            self.peak_key, self.peak_line = (usage, queue), line

    def median_running(self) -> float | None:
        """The upper median of the printed counts (as `sorted(...)[n // 2]`)."""
        n = len(self.running)
        if not n:
            return None
        if n >= colstats.NUMPY_FROM:
            import numpy as np

            return float(np.sort(np.frombuffer(self.running, dtype=np.float64))[n // 2])
        return sorted(self.running)[n // 2]


def _saturated(decode: Any, prefill: Any, level: float) -> _Saturated:
    """One pass, slice by slice: a list of (line, usage, queue, running) per hit held ~150 bytes
    a row (~70 MB at 4M failure-heavy lines)."""
    out = _Saturated()
    for cols in (decode, prefill):
        n = len(cols)
        for lo in range(0, n, colstats.SLICE_ROWS):
            hi = min(lo + colstats.SLICE_ROWS, n)
            usage, queue, running = (cols.column(name, lo, hi) for name in ("token_usage", "queue", "running"))
            for i in colstats.rows_where(usage, level, queue, 0):
                out.row(cols.line[lo + i], usage[i], queue[i], running[i])
                if running[i] == running[i]:
                    out.running.append(running[i])
    return out


@rule(code="PERF002", name="kv-cache-saturated", family="performance", severity=Severity.WARNING,
      needs=("serving",))
def kv_cache_saturated(ctx: RuleContext) -> Iterator[Finding]:
    """The KV cache is (nearly) full while requests wait in the queue.

    **What it means**
    Stats lines show `token usage` (or `full token usage`) at or above the threshold (default 0.90)
    while `#queue-req` > 0: new requests wait for KV room, not for compute. One such line is enough
    when its queue is at least twice the running batch (and 16 or more): a pool that full with that
    many waiting is not a passing burst.

    **Why it matters**
    Queueing time (TTFT) grows and, when decode needs more room, requests get retracted and
    recomputed. Throughput is capped by memory.

    **Example**
    ```
    [2026-05-24 03:51:45 TP0] Decode batch, #running-req: 4, #full token: 2642688, full token usage: 1.00, #swa token: 14592, swa token usage: 0.06, cuda graph: True, gen throughput (token/s): 429.52, #queue-req: 3
    ```

    **Fix**
    More KV room (`--mem-fraction-static` a little higher, `--kv-cache-dtype fp8_e4m3`, more GPUs) or
    fewer running requests (`--max-running-requests`). Thresholds:
    `[tool.logdiag.thresholds.kv-cache-saturated] token_usage` (0.90), `min_lines` (2).
    """
    level = float(ctx.threshold("kv-cache-saturated", "token_usage", 0.90))
    min_lines = int(ctx.threshold("kv-cache-saturated", "min_lines", 2))
    hits = _saturated(ctx.log.decode, ctx.log.prefill, level)
    if hits.lines < min_lines and not hits.dwarfed:
        return
    peak_q, peak_u, med_run = hits.peak_queue, hits.peak_usage, hits.median_running()
    limits = ctx.log.of(SchedulerLimits)
    kv_tokens = limits[0].max_total_num_tokens if limits else None
    frac = _num(ctx.views.arg("mem_fraction_static"))
    data: dict[str, Any] = {"lines": hits.lines, "token_usage_threshold": level, "token_usage_max": round(peak_u, 3),
                            "queue_req_max": int(peak_q), "running_req_median": med_run, "kv_cache_tokens": kv_tokens,
                            "mem_fraction_static": frac}
    parts = []
    if frac is not None:
        new = round(min(0.95, frac + 0.03), 2)
        if new > frac:
            data["suggested_mem_fraction_static"] = new
            parts.append(f"`--mem-fraction-static {new}` (now {frac})")
    parts.append("`--kv-cache-dtype fp8_e4m3` (half the bytes per token)")
    if med_run and med_run > 1:
        cap = max(1, int(med_run * level / max(peak_u, 1e-9)))
        if cap < med_run:
            data["suggested_max_running_requests"] = cap
            parts.append(f"or fewer running requests: `--max-running-requests {cap}`")
    kv = f" of {kv_tokens} tokens" if kv_tokens else ""
    on = f"{hits.lines} stats lines" if hits.lines > 1 else "a stats line"
    message = (f"KV cache saturated: token usage ≥ {level:.2f} (up to {peak_u:.2f}{kv}) on {on} "
               f"while up to {int(peak_q)} requests queued"
               + (f" (median {int(med_run)} running)" if med_run is not None and not math.isnan(med_run) else ""))
    remedy = "more KV room: " + ", ".join(parts)
    first, last, peak_line = hits.first, hits.last, hits.peak_line
    lines = sorted({(first, first), (peak_line, peak_line), (last, last)})
    yield ctx.finding("kv-cache-saturated", message, remedy, lines=lines, data=data, claim=False)
