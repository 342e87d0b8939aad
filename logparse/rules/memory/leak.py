"""memory-leak-detected: SGLang's own memory self-check found pool slots that nobody holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, KnownMessage, Severity
from logparse.model.findings import Finding
from logparse.model.text import mask_numbers
from logparse.rules.context import RuleContext
from logparse.rules.memory.common import source_line
from logparse.rules.registry import rule

_REMEDY = (
    "not a configuration problem: upgrade SGLang or report upstream with this log and the features in use; "
    "unset `SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_IDLE` to make the check warn instead of crash"
)


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
    seen: set[int] = set()
    for r in ctx.raised():
        if r.event.line in seen:
            continue
        fields = ctx.match("memory-leak", r.text)
        if fields is None:
            continue
        seen.add(r.event.line)
        yield _leak(ctx, r.message, fields, events=[r.event], raised=True)
    for e in ctx.unclaimed(ctx.log.of(KnownMessage)):
        if e.code.startswith("mem-leak"):
            fields = ctx.match("memory-leak", e.text) or {}
            yield _leak(ctx, e.text, fields, events=[e], raised=False)
    for hit in ctx.messages("memory-leak"):
        if source_line(ctx, hit.line):
            continue
        yield _leak(ctx, ctx.text(hit.line), hit.fields, lines=[(hit.line, hit.line)], raised=False)


def leak_values(ctx: RuleContext, text: str) -> dict[str, int]:
    """The pool numbers a leak message prints, by name (`self.` and `()` dropped)."""
    out: dict[str, int] = {}
    for item in ctx.occurrences("memory-leak-values", text):
        key, value = str(item.get("key", "")), item.get("value")
        if key and isinstance(value, int):
            out.setdefault(key.removeprefix("self.").removesuffix("()"), value)
    return out


def _leak(
    ctx: RuleContext,
    text: str,
    fields: dict[str, Any],
    *,
    events: list[Event] | None = None,
    lines: list[tuple[int, int]] | None = None,
    raised: bool,
) -> Finding:
    pool = fields.get("pool")
    what = pool if isinstance(pool, str) and pool.lower() not in ("memory", "mem") else "the KV cache"
    values = leak_values(ctx, text)
    how = "the scheduler raised and stopped" if raised else "printed as a warning"
    shown = ", ".join(f"{k}={v}" for k, v in list(values.items())[:6])
    message = f"SGLang's memory self-check found a leak in {what} ({how})" + (f": {shown}" if shown else "")
    ev = events[0] if events else None
    return ctx.finding(
        "memory-leak-detected",
        message,
        _REMEDY,
        events=events or [],
        lines=lines or [],
        data={"pool": what, "values": values, "raised": raised},
        fingerprint=f"leak|{what}|{raised}|{mask_numbers(shown)}",
        ranks=[ev.rank] if ev is not None and ev.rank else None,
    )
