"""Statistics over numeric columns (NaN = not printed), fast on large logs.

A busy server's log has hundreds of thousands of stats lines; Python loops over them cost
seconds. Above `NUMPY_FROM` values these use numpy on the column's buffer (no copy); below it,
plain Python, so that a short log does not pay numpy's import.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from math import isnan
from typing import Any

NUMPY_FROM = 20_000


def _np(values: Sequence[float]) -> Any:
    import numpy as np

    if isinstance(values, array) and values.typecode == "d":
        return np.frombuffer(values, dtype=np.float64)
    return np.asarray(values, dtype=np.float64)


def np_isnan(arr: Any) -> Any:
    import numpy as np

    return np.isnan(arr)


def _present(values: Sequence[float]) -> list[float]:
    return [v for v in values if not isnan(v)]


def nanmax(values: Sequence[float]) -> float | None:
    if len(values) >= NUMPY_FROM:
        arr = _np(values)
        arr = arr[~np_isnan(arr)]
        return float(arr.max()) if arr.size else None
    vals = _present(values)
    return max(vals) if vals else None


def nanmin(values: Sequence[float]) -> float | None:
    if len(values) >= NUMPY_FROM:
        arr = _np(values)
        arr = arr[~np_isnan(arr)]
        return float(arr.min()) if arr.size else None
    vals = _present(values)
    return min(vals) if vals else None


def nanmean(values: Sequence[float]) -> float | None:
    if len(values) >= NUMPY_FROM:
        arr = _np(values)
        arr = arr[~np_isnan(arr)]
        return float(arr.mean()) if arr.size else None
    vals = _present(values)
    return sum(vals) / len(vals) if vals else None


def nanmedian(values: Sequence[float]) -> float | None:
    if len(values) >= NUMPY_FROM:
        arr = _np(values)
        arr = arr[~np_isnan(arr)]
        return float(__import__("numpy").median(arr)) if arr.size else None
    vals = sorted(_present(values))
    if not vals:
        return None
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def count_equal(values: Sequence[float], target: float) -> int:
    if len(values) >= NUMPY_FROM:
        return int((_np(values) == target).sum())
    return sum(1 for v in values if v == target)


def any_present(values: Sequence[float]) -> bool:
    if len(values) >= NUMPY_FROM:
        arr = _np(values)
        return bool((~np_isnan(arr)).any())
    return any(not isnan(v) for v in values)
