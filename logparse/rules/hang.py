"""Rules of the 'hang' family (see shared/diagnoses.md): SGLang's watchdog, startups that stop
without an error, and JIT compilation stalls."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from logparse.model.events import (
    BatchDump,
    Event,
    ExceptionHeader,
    ExceptionLine,
    JitCompile,
    KnownMessage,
    ProgressBar,
    Severity,
    SglangWatchdog,
    Traceback,
)
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule
from logparse.run.timeline import MAIN, PHASES, Phase, last_phase, startup_phases
from logparse.run.views import rank_key

# --------------------------------------------------------------------------- watchdog-timeout

_WD_TEXT = lazy_compile(
    r"(?:(\w+) watchdog timeout|Watchdog timeout) \(self\.watchdog_timeout=([\d.]+)"
)


@rule(
    code="HANG001",
    name="watchdog-timeout",
    family="hang",
    severity=Severity.ERROR,
    needs=("events",),
    hang=True,
    follow_on=True,
)
def watchdog_timeout(ctx: RuleContext) -> Iterator[Finding]:
    """SGLang's own watchdog found a process making no progress and killed the server.

    **What it means**
    The scheduler (or tokenizer / detokenizer / DP controller) watchdog saw no forward progress for
    `--watchdog-timeout` seconds: `Scheduler watchdog timeout (self.watchdog_timeout=300,
    self.soft=False)` (old wording: `Watchdog timeout (self.watchdog_timeout=300)`). It prints the
    stuck batch (`self.cur_batch.batch_size()=26`) and py-spy stacks, then SIGQUITs the server. With
    `self.soft=True` it only reports.

    **Why it matters**
    Something blocks a forward pass: typically a JIT compile on the first batch of a shape, a
    collective waiting for a dead peer, or a kernel hang. The debug dump before the kill says which.

    **Example**
    ```
    [2025-06-22 16:13:55 TP0] Watchdog timeout (self.watchdog_timeout=300)
    [2025-06-22 16:13:55 TP0] self.cur_batch.batch_size()=26,  self.cur_batch.reqs=[Req(rid=d4424f3eb90345f0a863068978c0f17c……
    [2025-06-22 16:13:55 TP0] Pyspy failed to dump PID 63217.   Error: /bin/sh: py-spy: command not found
    ```

    **Fix**
    Read the debug dump / py-spy stacks (install `py-spy` if the log says it is missing); warm JIT
    caches; check peers; raise `--watchdog-timeout` only if the batch is legitimately slow.
    """
    dumps = ctx.log.of(BatchDump)
    pyspy = [e for e in ctx.log.of(KnownMessage) if e.code == "pyspy-failed"]
    debug = [e for e in ctx.log.of(KnownMessage) if e.code == "watchdog-debug-info"]
    jit_open = _open_jit(ctx)
    events: list[SglangWatchdog] = ctx.log.of(SglangWatchdog)
    fake: list[tuple[int, re.Match[str]]] = []
    if not events:
        fake = list(ctx.texts_matching(_WD_TEXT))
    items: list[tuple[Event, float | None, bool, str]] = [
        (e, e.timeout_s, e.soft, e.debug_name) for e in events
    ]
    for no, m in fake:
        items.append(
            (
                Event(line=no, end_line=no),
                float(m.group(2)),
                "soft=True" in ctx.text(no),
                m.group(1) or "Scheduler",
            )
        )
    for ev, timeout, soft, who in items:
        near = [
            d for d in dumps if abs(d.line - ev.line) <= 20 and (d.rank == ev.rank or not ev.rank)
        ]
        size = next((d.batch_size for d in near if d.batch_size is not None), None)
        extra: list[Event] = (
            near[:2]
            + [p for p in pyspy if abs(p.line - ev.line) <= 30][:2]
            + [d for d in debug if abs(d.line - ev.line) <= 30][:1]
        )
        t = f"{timeout:g} s" if timeout is not None else "the watchdog timeout"
        batch = (
            f" with a batch of {size} request(s) stuck in the forward pass"
            if size is not None
            else ""
        )
        kind = "soft watchdog (report only, no kill)" if soft else "watchdog"
        message = f"SGLang's {who} {kind} fired: no progress for {t}{batch}"
        hints = []
        if jit_open:
            j = jit_open[0]
            hints.append(
                f"a {j.library} JIT compile ({j.name}) began on line {j.line} and never finished — the likely stall"
            )
        if any(abs(p.line - ev.line) <= 30 for p in pyspy):
            hints.append("py-spy is not installed, so no stack dump was taken")
        if hints:
            message += "; " + "; ".join(hints)
        remedy_parts = [
            "read the debug dump / py-spy stacks printed before the kill to see where it is stuck"
        ]
        if any(abs(p.line - ev.line) <= 30 for p in pyspy):
            remedy_parts.append("`pip install py-spy` so the next timeout dumps the stacks")
        if jit_open:
            remedy_parts.append("warm the JIT cache before serving (see jit-compile-stall)")
        new = int(2 * timeout) if timeout else 600
        remedy_parts.append(
            f"`--watchdog-timeout {new}` only if the batch is legitimately slow; often a JIT stall or a dead peer"
        )
        data: dict[str, Any] = {"watchdog_timeout_s": timeout, "soft": soft, "process": who}
        if size is not None:
            data["watchdog_batch_size"] = size
        kwargs: dict[str, Any] = (
            {"events": [ev, *extra]}
            if ev.source
            else {"events": extra, "lines": [(ev.line, ev.line)]}
        )
        yield ctx.finding(
            "watchdog-timeout",
            message,
            "; ".join(remedy_parts),
            data=data,
            severity=Severity.WARNING if soft else Severity.ERROR,
            ranks=[ev.rank] if ev.rank else [],
            **kwargs,
        )


def _open_jit(ctx: RuleContext) -> list[JitCompile]:
    """JIT compile begins with no matching end."""
    open_: dict[tuple[str, str, str | None], JitCompile] = {}
    for e in ctx.log.of(JitCompile):
        key = (e.library, e.name, e.rank)
        if e.stage == "begin":
            open_[key] = e
        else:
            open_.pop(key, None) or open_.pop((e.library, e.name, None), None)
    return sorted(open_.values(), key=lambda e: e.line)


# --------------------------------------------------------------------------- startup-stalled

_NOT_READY = lazy_compile(
    r"(?:server|sglang|engine|endpoint)\b.{0,60}\b(?:not (?:become )?ready|did not (?:become ready|start)|failed to start|"
    r"not healthy)\b.{0,60}\b(?:in time|within|after)\b|timed? ?out (?:while )?waiting for (?:the )?(?:sglang )?server"
    r"|TimeoutError: .{0,40}server.{0,40}(?:ready|start)",
    re.IGNORECASE,
)
_PHASE_REMEDY = {
    "dist-init": (
        "distributed init waits for every rank: check that all nodes started with the same `--nnodes`, "
        "`--node-rank`, `--dist-init-addr`, that the address is reachable (firewall) and the right interface "
        "is used (`NCCL_SOCKET_IFNAME`); `NCCL_DEBUG=INFO` shows where it waits"
    ),
    "weight-load": (
        "weight loading is disk- or network-bound: pre-download the checkpoint to local NVMe "
        "(`huggingface-cli download`), avoid network filesystems, or wait"
    ),
    "kv-alloc": "KV pool allocation takes seconds; a stall here points at GPU memory pressure — check `nvidia-smi`",
    "capture": (
        "CUDA graph capture is normal and can take minutes (more with many batch sizes or draft graphs): wait, "
        "or shorten it with a lower `--cuda-graph-max-bs`"
    ),
    "http-server": (
        "the HTTP server started but the warmup request has not returned: check proxy variables "
        "(`no_proxy=127.0.0.1,localhost`) and the schedulers' progress"
    ),
    "warmup": (
        "the warmup request has not returned: check proxy variables (`no_proxy=127.0.0.1,localhost`) and the "
        "schedulers' progress"
    ),
}


def _phase_family(name: str) -> str:
    return "capture" if name.startswith("capture") else name


_TS = lazy_compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\b")


def _end_ts(ctx: RuleContext) -> datetime | None:
    """The last timestamp of the log (stats and access lines included); dated stamps win over
    time-only ones (year 1900), which cannot be compared with them."""
    from logparse.parsing.columns import from_epoch

    stamps = [e.ts for e in ctx.log.events if e.ts is not None]
    for cols in (ctx.log.decode, ctx.log.prefill, ctx.log.access):
        if len(cols):
            best = max((t for t in cols.ts if not math.isnan(t) and t != 0), default=None)
            if best is not None and (ts := from_epoch(best)) is not None:
                stamps.append(ts)
    # Unrecognised lines keep only their text: read a timestamp from the last few of them.
    for n in sorted(ctx.log.texts)[-50:]:
        for m in _TS.finditer(ctx.log.texts[n]):
            try:
                stamps.append(datetime.fromisoformat(m.group(0).replace("T", " ")))
            except ValueError:
                pass
    dated = [t for t in stamps if t.year > 1900]
    pool = dated or stamps
    return max(pool) if pool else None


def _since(p: Phase, end: datetime | None) -> float | None:
    ref = p.start if not p.complete else p.end
    if ref is None or end is None or ref.year != end.year:
        return None
    return max(0.0, (end - ref).total_seconds())


def _crash_events(ctx: RuleContext, start: int) -> list[Event]:
    from logparse.run.vocab import FATAL_EVENTS

    return [
        e
        for e in ctx.log.events
        if e.line >= start
        and isinstance(
            e, (*FATAL_EVENTS, Traceback, ExceptionLine, ExceptionHeader, SglangWatchdog)
        )
    ]


@rule(
    code="HANG002",
    name="startup-stalled",
    family="hang",
    severity=Severity.WARNING,
    fallback=True,
    needs=("timeline", "startup", "findings"),
    hang=True,
)
def startup_stalled(ctx: RuleContext) -> Iterator[Finding]:
    """The log ends during startup with no error: report the last phase each rank reached, and for how long.

    **What it means**
    The text shows a server starting (distributed init, weight loading, KV allocation, CUDA graph
    capture) but neither readiness (`Uvicorn running`, `The server is fired up and ready to roll!`)
    nor an error follows. Either startup is still running, is stuck in its last phase, or the
    excerpt was cut. When a wrapper (a launcher, a test harness) says the server was not ready in
    time, this becomes an error and the root cause.

    **Why it matters**
    Where startup stopped tells what to look at: distributed init waits for peers and the network,
    weight loading for the disk, capture is slow but normal. A rank that is behind the others is
    the one holding the rest up.

    **Example**
    ```
    [2025-03-07 09:20:03 TP3] Init torch distributed begin.
    [2025-03-07 09:20:05 TP5] FlashInfer MLA optimization is turned on. Use flashinfer backend for DeepseekV3ForCausalLM.
    [2025-03-07 09:20:05 TP5] Init torch distributed begin.
    ```

    **Fix**
    By phase: distributed init → network, addresses, every node started; weight loading → local
    disk, pre-downloaded checkpoint; CUDA graph capture → normal, wait (or a lower
    `--cuda-graph-max-bs`). If the process is still running, the answer is to wait and look again.
    """
    from logparse.run.model import run_segments
    from logparse.run.readiness import ready_line, startup_evidence, traffic_line

    log = ctx.log
    start, end = run_segments(log)[-1]
    wrapper = [(no, m) for no, m in ctx.texts_matching(_NOT_READY, unclaimed=False) if no >= start]
    if ready_line(log, start, end) is not None or traffic_line(log, start, end) is not None:
        return
    if not wrapper:
        if not startup_evidence(log, start, end):
            return
        if _crash_events(ctx, start) or any(f.severity == Severity.ERROR for f in ctx.findings):
            return  # the startup ended in an error: that error is the story
    phases = {
        r: [p for p in plist if p.start_line >= start or (p.end_line or 0) >= start]
        for r, plist in startup_phases(log).items()
    }
    phases = {r: plist for r, plist in phases.items() if plist}
    end_ts = _end_ts(ctx)
    per_rank: dict[str, dict[str, Any]] = {}
    evidence: list[tuple[int, int]] = []
    for rank in sorted(phases, key=lambda r: (r == MAIN, rank_key(r))):
        p = last_phase(phases[rank])
        if p is None:
            continue
        since = _since(p, end_ts)
        info: dict[str, Any] = {
            "phase": p.name,
            "complete": p.complete,
            "line": p.end_line or p.start_line,
        }
        if since is not None:
            info["since_s"] = round(since, 1)
        if p.complete and p.duration_s is not None:
            info["took_s"] = round(p.duration_s, 2)
        per_rank[rank] = info
        evidence.append((info["line"], info["line"]))
    progress = [
        b
        for b in log.of(ProgressBar)
        if b.line >= start and b.bar_kind == "checkpoint-load" and b.total
    ]
    parts = _describe(per_rank)
    order = {name: i for i, name in enumerate(PHASES)}
    laggard = min(
        per_rank.values(), key=lambda i: (order.get(i["phase"], 99), i["complete"]), default=None
    )
    if laggard is not None:
        fam = _phase_family(laggard["phase"])
        remedy = _PHASE_REMEDY.get(
            fam, "the log does not show where startup stopped; run with `--log-level debug`"
        )
        if laggard["complete"]:
            remedy = "the next phase after " + laggard["phase"] + " never began: " + remedy
    else:
        remedy = "the log does not show a startup phase; run with `--log-level debug` to see where startup stops"
    if not per_rank:
        parts = "no startup phase line (only startup notices) before the log ends"
        last_startup = max((e.line for e in log.events if e.line >= start), default=0)
        if last_startup:
            evidence.append((last_startup, last_startup))
    if progress:
        b = progress[-1]
        parts += f"; checkpoint loading at {b.n}/{b.total} shards ({b.percent}%)"
        evidence.append((b.line, b.line))
    ranks = [r for r in per_rank if r != MAIN]
    data: dict[str, Any] = {"ranks": per_rank}
    if laggard is not None:
        data["last_phase"] = laggard["phase"]
    if wrapper:
        no, m = wrapper[0]
        evidence.append((no, no))
        message = f'A wrapper reports the server was not ready in time ("{m.group(0)[:80]}"); last phase reached: {parts}'
        yield ctx.finding(
            "startup-stalled",
            message,
            remedy,
            lines=sorted(set(evidence)),
            data=data,
            severity=Severity.ERROR,
            ranks=ranks,
        )
        return
    message = f"The log ends during startup with no error; last phase reached: {parts}"
    yield ctx.finding(
        "startup-stalled",
        message,
        remedy + "; if the process is still running, wait — else the log was cut",
        lines=sorted(set(evidence))[:16],
        data=data,
        claim=False,
        ranks=ranks,
    )


def _describe(per_rank: dict[str, dict[str, Any]]) -> str:
    """'TP0–TP3: weight-load (running, 8 s before the log ends); TP4: …' — ranks grouped by phase."""
    from logparse.run.ranks import rank_range

    groups: dict[tuple[str, bool], list[str]] = {}
    for rank, info in per_rank.items():
        groups.setdefault((info["phase"], info["complete"]), []).append(rank)
    out = []
    for (phase, complete), ranks in groups.items():
        infos = [per_rank[r] for r in ranks]
        since = [i["since_s"] for i in infos if "since_s" in i]
        took = [i["took_s"] for i in infos if "took_s" in i]
        state = "finished" if complete else "in progress"
        if complete and took:
            state += f" after {_span(took)} s"
        if since and max(since) >= 1:
            state += (
                f", for {_span(since)} s when the log ends"
                if not complete
                else f", then nothing for {_span(since)} s until the log ends"
            )
        elif since:
            state += ", when the log ends" if not complete else ", right before the log ends"
        tagged = [r for r in ranks if r != MAIN]
        who = rank_range(tagged) if tagged else "untagged lines (TP=1 or main process)"
        if tagged and MAIN in ranks:
            who += " and untagged lines"
        out.append(f"{who}: {phase} ({state})")
    return "; ".join(out)


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:g}" if abs(hi - lo) < 0.05 else f"{lo:g}–{hi:g}"


# --------------------------------------------------------------------------- jit-compile-stall


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
    last_line = max(ctx.log.texts, default=0)
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
        later = [x for x in ctx.log.events if x.line > b.line]
        if not later and last_line <= b.line:
            continue  # the excerpt ends right there: nothing shows a stall
        follow = next((x for x in later if x.ts is not None), None)
        gap = (
            (follow.ts - b.ts).total_seconds()
            if follow is not None
            and b.ts is not None
            and follow.ts is not None
            and follow.ts.year == b.ts.year
            else None
        )
        if gap is not None and gap < min_gap and b.library.lower() == "deepgemm":
            continue
        after = f"; the next line comes {gap:.1f} s later" if gap is not None else ""
        what = next((x for x in later if isinstance(x, SglangWatchdog)), None)
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
