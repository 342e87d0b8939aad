"""The numbers of a CUDA out-of-memory message (GPU, capacity, requested and free memory): one owner,
read from the message catalog's `cuda-oom-numbers` for the run facts and the cuda-oom rule alike."""

from __future__ import annotations

from typing import Any

# Catalog units → MiB (torch prints KiB/MiB/GiB, and `0 bytes`; a damaged unit leaves the number out).
_MIB = {"bytes": 1 / (1 << 20), "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}


def _mib(value: Any, unit: Any) -> float | None:
    factor = _MIB.get(unit) if isinstance(unit, str) else None
    if factor is None or not isinstance(value, (int, float)):
        return None
    return round(value * factor, 2)


def oom_numbers(text: str) -> dict[str, Any]:
    """{gpu, total_capacity_gib, tried_to_allocate_mib, free_mib} — whichever the OOM text states
    (new and old torch wordings; a number cut off by the end of a line is left out)."""
    from logparse.grammar.messages import catalog

    fields = catalog()["cuda-oom-numbers"].collect(text) or {}
    out: dict[str, Any] = {}
    gpu = fields.get("gpu", fields.get("gpu_old"))
    if isinstance(gpu, int):
        out["gpu"] = gpu
    total = fields.get("total") if fields.get("total_unit") else fields.get("total_old")
    unit = fields.get("total_unit") or fields.get("total_old_unit")
    total_mib = _mib(total, unit)
    if total_mib is not None:
        out["total_capacity_gib"] = round(total_mib / 1024, 2)
    tried = _mib(fields.get("tried"), fields.get("tried_unit"))
    if tried is not None:
        out["tried_to_allocate_mib"] = tried
    free = _mib(fields.get("free"), fields.get("free_unit"))
    if free is None:
        free = _mib(fields.get("free_old"), fields.get("free_old_unit"))
    if free is not None:
        out["free_mib"] = free
    return out
