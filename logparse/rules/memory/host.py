"""host-oom: host (CPU) memory ran out — the kernel OOM killer's SIGKILL, ENOMEM, or HiCache's host
pool check — told apart from SGLang killing its own process tree."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from logparse.model.events import (
    Event,
    ExceptionHeader,
    ExitCode,
    Killed,
    KnownMessage,
    ProgressBar,
    SchedulerDead,
    Severity,
    SglangWatchdog,
    SigquitReceived,
    SubprocessCrashed,
)
from logparse.model.findings import Finding
from logparse.rules.context import Raised, RuleContext
from logparse.rules.memory.common import source_line
from logparse.rules.registry import rule
from logparse.run.timeline import startup_phases

_HOST_REMEDY = (
    "check `dmesg -T | grep -i -E 'killed process|out of memory'` and the container's memory limit "
    "(docker `--memory`, k8s `resources.limits.memory`); reduce host-side memory: fewer processes loading "
    "weights at once, a smaller `--hicache-size`, no `--cpu-offload-gb`"
)
# Lines after which SGLang kills its own process tree (so the shell's `Killed` is expected).
_SELF_KILL: tuple[type[Event], ...] = (SigquitReceived, SglangWatchdog, SubprocessCrashed)
SIGKILL_CODES = (-9, 137)  # the signal, and 128 + 9 as shells and container runtimes report it
# Catalog messages about host memory, in the order a traceback's exception is classified.
_HOST_CODES = ("hicache-host-memory", "host-enomem", "child-sigkill-exit")


def _self_killed(ctx: RuleContext, killed: Killed, previous_killed: int) -> Event | None:
    """The SGLang line that explains a `Killed` (sigquit handling, watchdog, warmup failure), if any
    comes before it (after the previous `Killed`)."""
    for e in reversed(ctx.log.events):
        if e.line >= killed.line or e.line <= previous_killed:
            continue
        if isinstance(e, _SELF_KILL):
            return e
        if isinstance(e, ExceptionHeader) and e.process == "warmup":
            return e
        if isinstance(e, KnownMessage) and e.code in ("watchdog-debug-info", "pyspy-failed"):
            return e
    return None


def _loading(ctx: RuleContext, line: int) -> bool:
    """Whether weights were being loaded when `line` was printed."""
    for plist in startup_phases(ctx.log).values():
        for p in plist:
            if p.name == "weight-load" and p.start_line < line and (p.end_line is None or p.end_line > line):
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
    yield from _killed(ctx)
    yield from _exit_codes(ctx)
    for r, code, fields in _host_exceptions(ctx):
        if code == "hicache-host-memory":
            yield _hicache(ctx, r.event, fields, ())
        elif code == "host-enomem":
            funcs = [f.func for f in r.traceback.frames if f.func] if r.traceback is not None else []
            where = f" in {funcs[-1]}" if funcs else ""
            yield ctx.finding(
                "host-oom",
                f"Host memory allocation failed{where}: {r.exc_type}: {r.message.strip()}",
                _HOST_REMEDY,
                events=[r.event],
                data={"errno": 12, "exception_type": r.exc_type},
            )
        else:
            exit_code = fields.get("code")
            yield ctx.finding(
                "host-oom",
                f"A child process died with exit code {exit_code} (SIGKILL): most likely the kernel "
                f"OOM killer ({r.exc_type}: {r.message.strip()[:160]})",
                _HOST_REMEDY,
                events=[r.event],
                data={"exit_code": exit_code},
            )
    for hit in ctx.messages("hicache-host-memory"):
        if source_line(ctx, hit.line):
            continue
        no = hit.line
        yield _hicache(ctx, Event(line=no, end_line=no), hit.fields, ((no, no),))


def _killed(ctx: RuleContext) -> Iterator[Finding]:
    """Each shell `Killed` that no SGLang line before it explains."""
    previous = 0
    for k in ctx.log.of(Killed):
        cause = _self_killed(ctx, k, previous)
        previous = k.line
        if cause is not None:
            continue  # SGLang's own self-kill: grouped under the root cause by the engine
        loading = _loading(ctx, k.line)
        during = (
            "while weights were loading — the kernel OOM killer's signature"
            if loading
            else "with no SGLang line explaining it (no sigquit / watchdog before it): most likely the kernel OOM killer"
        )
        yield ctx.finding(
            "host-oom",
            f"The process was killed (SIGKILL) {during}",
            _HOST_REMEDY,
            events=[k],
            data={"signal": "SIGKILL", "loading": loading},
        )


def _exit_codes(ctx: RuleContext) -> Iterator[Finding]:
    """A dead scheduler or a crashed subprocess whose exit code is SIGKILL."""
    for dead in ctx.log.of(SchedulerDead):
        codes = [e for e in ctx.log.of(ExitCode) if dead.line < e.line <= dead.line + 3]
        if codes and codes[0].code in SIGKILL_CODES:
            yield ctx.finding(
                "host-oom",
                f"Scheduler rank {dead.dead_rank} died with exit code {codes[0].code} (SIGKILL) "
                "during initialization: most likely the kernel OOM killer",
                _HOST_REMEDY,
                events=[dead, codes[0]],
                data={"exit_code": codes[0].code},
            )
    for s in ctx.log.of(SubprocessCrashed):
        if s.exit_code in SIGKILL_CODES:
            yield ctx.finding(
                "host-oom",
                f"Subprocess {s.name} was killed (exit code {s.exit_code}, SIGKILL): most likely "
                "the kernel OOM killer",
                _HOST_REMEDY,
                events=[s],
                data={"exit_code": s.exit_code},
            )


def _host_exceptions(ctx: RuleContext) -> Iterator[tuple[Raised, str, dict[str, Any]]]:
    """One item per traceback: the first exception of its chain that says something about host
    memory, with the catalog message it is."""
    by_event: dict[int, tuple[Raised, str, dict[str, Any]]] = {}
    for r in ctx.raised():
        if r.event.line in by_event:
            continue
        for code in _HOST_CODES:
            fields = ctx.match(code, r.text)
            if fields is not None:
                by_event[r.event.line] = (r, code, fields)
                break
    yield from (by_event[k] for k in sorted(by_event))


def _hicache(
    ctx: RuleContext, ev: Event, fields: dict[str, Any], lines: tuple[tuple[int, int], ...]
) -> Finding:
    want, have = fields.get("requested"), fields.get("free")
    size = max(1, math.floor(have * 0.8)) if isinstance(have, float) else None
    stated = (
        f"{want:.2f} GB requested, {have:.2f} GB of host memory free"
        if isinstance(want, float) and isinstance(have, float)
        else "the requested size does not fit in the free host memory"
    )
    remedy = (
        f"`--hicache-size {size}` (GB, below the {have:.2f} GB free) or a smaller `--hicache-ratio`; "
        "check the container memory limit"
        if size is not None
        else "a smaller `--hicache-size` / `--hicache-ratio`; check the container memory limit"
    )
    data: dict[str, Any] = {"hicache": {"requested_gb": want, "free_gb": have}}
    if size is not None:
        data["suggested_hicache_size_gb"] = size
    return ctx.finding(
        "host-oom",
        f"HiCache host pool does not fit: {stated}",
        remedy,
        events=[] if lines else [ev],
        lines=lines,
        data=data,
    )
