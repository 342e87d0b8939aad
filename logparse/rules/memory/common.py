"""Numbers the memory rules share: the static fraction in effect, per-rank weight-load memory, limits."""

from __future__ import annotations

import math
from typing import Any

from logparse.model.events import Event, SchedulerLimits, WeightLoadBegin, WeightLoadEnd
from logparse.rules.context import RuleContext
from logparse.rules.frames import traceback_at


def num(v: Any) -> float | None:
    """A real number (not a bool, not NaN), else None."""
    return (
        float(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)
        else None
    )


def round_up(x: float, step: float = 0.01) -> float:
    return round(math.ceil(round(x / step, 6)) * step, 2)


def current_fraction(ctx: RuleContext, stated: Any = None) -> float | None:
    """--mem-fraction-static in effect: as an error message stated it (`stated`, a catalog field),
    else server_args / the command."""
    return num(stated) if num(stated) is not None else num(ctx.views.arg("mem_fraction_static"))


def for_rank(events: list[Any], rank: str | None) -> Any:
    same = [e for e in events if e.rank == rank]
    return (same or events or [None])[0]


def _first_for_rank(ctx: RuleContext, kind: str, rank: str | None) -> Any:
    """`for_rank` over the log's weight-load begins or (uncommitted) ends, from a rank → first
    event table built once per context and event list: asked per finding, a filter of the whole
    log each time was findings x events."""
    events_now = ctx.log.events
    key = (id(events_now), len(events_now))
    tables: dict[str, tuple[tuple[int, int], dict[str | None, Any], Any]] = ctx.__dict__.setdefault(
        "_weight_load_firsts", {})
    hit = tables.get(kind)
    if hit is None or hit[0] != key:
        if kind == "end":
            events = [e for e in ctx.log.of(WeightLoadEnd) if not e.committed_after_capture]
        else:
            events = ctx.log.of(WeightLoadBegin)
        firsts: dict[str | None, Any] = {}
        for e in events:
            firsts.setdefault(e.rank, e)
        hit = tables[kind] = (key, firsts, events[0] if events else None)
    return hit[1].get(rank, hit[2])


def _weight_load(ctx: RuleContext, rank: str | None) -> tuple[Any, Any]:
    end = _first_for_rank(ctx, "end", rank)
    begin = _first_for_rank(ctx, "begin", rank)
    return begin, end


def memory_numbers(ctx: RuleContext, rank: str | None, line: int | None = None) -> dict[str, float]:
    """Weights and free memory around weight loading of a rank, from the memory budget
    (`run/memory.py`) of the launch holding `line` (else the first launch that printed them)."""
    from logparse.run.memory import budget_at, budgets

    budget = budget_at(ctx.log, line) if line is not None else next((b for b in budgets(ctx.log) if b), None)
    r = budget.rank(rank) if budget else None
    out: dict[str, float] = {}
    if r is None:
        return out
    if r.weights_gb is not None:
        out["weights_gb"] = r.weights_gb
    if r.avail_after_weights_gb is not None:
        out["avail_after_weights_gb"] = r.avail_after_weights_gb
    if r.free_at_start_gb is not None:
        out["avail_before_weights_gb"] = r.free_at_start_gb
    return out


def kv_bytes_per_token(ctx: RuleContext, line: int) -> int | None:
    """KV bytes per token of the launch holding `line`, from its `KV Cache is allocated` line."""
    from logparse.run.memory import budget_at

    return budget_at(ctx.log, line).bytes_per_token


def weight_events(ctx: RuleContext, rank: str | None) -> list[Event]:
    """The `Load weight begin/end` lines whose numbers a memory computation used."""
    return [e for e in _weight_load(ctx, rank) if e is not None]


def limits(ctx: RuleContext) -> SchedulerLimits | None:
    found = ctx.log.of(SchedulerLimits)
    return found[0] if found else None


def int_arg(ctx: RuleContext, name: str) -> int | None:
    v = ctx.views.arg(name)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def source_line(ctx: RuleContext, line: int) -> bool:
    """A frame or source line of an assembled traceback (`except torch.OutOfMemoryError:`, an assert's
    f-string): code that names a message, not the message printed. Exception lines are not
    indented; frames and sources are."""
    tb = traceback_at(ctx, line)
    return tb is not None and line != tb.line and ctx.text(line)[:1] in (" ", "\t")
