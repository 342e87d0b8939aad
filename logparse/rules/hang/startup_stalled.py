"""startup-stalled (fallback): the log ends during startup with no error; the last phase each rank
reached, and for how long."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from logparse.model.events import (
    Event,
    ExceptionHeader,
    ExceptionLine,
    KnownMessage,
    ProgressBar,
    Severity,
    SglangWatchdog,
    Traceback,
)
from logparse.model.findings import Finding
from logparse.model.text import dated_timestamps, short
from logparse.parsing.linetexts import lines_in_order
from logparse.rules.context import RuleContext
from logparse.rules.registry import lookup, rule
from logparse.run.model import run_of
from logparse.run.ranks import rank_key, rank_range
from logparse.run.readiness import (
    http_answered_line,
    ready_line,
    startup_evidence,
    traffic_line,
    warmup_answered_line,
)
from logparse.run.timeline import MAIN, PHASES, Phase, last_phase, startup_phases
from logparse.run.vocab import FATAL_EVENTS

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
    for _n, text in deque(lines_in_order(ctx.log.texts), maxlen=50):
        stamps.extend(dated_timestamps(text))
    dated = [t for t in stamps if t.year > 1900]
    pool = dated or stamps
    return max(pool) if pool else None


def _since(p: Phase, end: datetime | None) -> float | None:
    ref = p.start if not p.complete else p.end
    if ref is None or end is None or ref.year != end.year:
        return None
    return max(0.0, (end - ref).total_seconds())


def _crash_events(ctx: RuleContext, start: int) -> list[Event]:
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
    log = ctx.log
    lc = run_of(log).last
    start, end = lc.launch.first_line, lc.launch.last_line
    verdict = lc.startup_verdict  # a wrapper's word on the start-up (run/verdicts.py)
    if verdict is not None and verdict.died:
        return  # the wrapper saw the server process die: it crashed while starting, it did not stall
    wrapper = [verdict.line] if verdict is not None else []
    if any(f(log, start, end) is not None for f in (ready_line, warmup_answered_line, http_answered_line, traffic_line)):
        return
    if not wrapper:
        if not startup_evidence(log, start, end):
            return
        if _crash_events(ctx, start) or any(f.severity == Severity.ERROR for f in ctx.findings):
            return  # the startup ended in an error: that error is the story
        if any(f.first_line >= start and (r := lookup(f.code)) is not None and r.crash for f in ctx.findings):
            return  # a finding that stands for the process ending (its cause cut from the excerpt)
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
    if not per_rank and progress:
        # Only the checkpoint-shard bar: the server is loading its weights (the bar is the phase).
        parts = "weight loading (only its progress bar is in the excerpt)"
        remedy = _PHASE_REMEDY.get(_phase_family("weight-load"), remedy)
        data_phase: str | None = "weight-load"
    else:
        data_phase = None
    notice = _notice_phase(ctx, start) if not per_rank and not progress else None
    if notice is not None:
        # No phase line of SGLang's own, but a notice that only one phase prints (a weight loader's).
        phase, line = notice
        parts = f"{phase} (from a notice on line {line}; no phase line of SGLang's own)"
        remedy = _PHASE_REMEDY.get(_phase_family(phase), remedy)
        data_phase = phase
        evidence.append((line, line))
    elif not per_rank and not progress:
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
    elif data_phase is not None:
        data["last_phase"] = data_phase
    if wrapper:
        no = wrapper[0]
        evidence.append((no, no))
        message = f'A wrapper reports the server was not ready in time ("{short(ctx.text(no), 80)}"); last phase reached: {parts}'
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


# Start-up notices (run.vocab.STARTUP_CODES) that only one phase prints.
_NOTICE_PHASES = {
    "runai-streamer": "weight-load", "vllm-weights-format": "weight-load", "rank-load-weight": "weight-load",
    "jax-lazy-load-begin": "weight-load", "jax-weight-file-missing": "weight-load",
    "jax-weight-not-in-index": "weight-load", "jax-weight-excluded": "weight-load", "jax-scan-metadata": "weight-load",
    "cuda-graph-addresses": "capture",
}


def _notice_phase(ctx: RuleContext, start: int) -> tuple[str, int] | None:
    """(phase, line) of the last start-up notice that names its phase, from line `start` on."""
    found = [(e.line, _NOTICE_PHASES[e.code]) for e in ctx.log.of(KnownMessage)
             if e.line >= start and e.code in _NOTICE_PHASES]
    if not found:
        return None
    line, phase = found[-1]
    return phase, line


def _describe(per_rank: dict[str, dict[str, Any]]) -> str:
    """'TP0–TP3: weight-load (running, 8 s before the log ends); TP4: …' — ranks grouped by phase."""
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
