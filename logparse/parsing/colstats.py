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
SLICE_ROWS = 65_536  # rows a reduction over a column reads at once (never the whole column widened)


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


def present_indices(values: Sequence[float]) -> list[int]:
    """Indices of the values that are not NaN."""
    if len(values) >= NUMPY_FROM:
        import numpy as np

        return np.flatnonzero(~np_isnan(_np(values))).tolist()  # type: ignore[no-any-return]
    return [i for i, v in enumerate(values) if not isnan(v)]


def rows_where(a: Sequence[float], a_min: float, b: Sequence[float], b_above: float) -> list[int]:
    """Indices where a >= a_min and b > b_above (NaN never qualifies)."""
    if len(a) >= NUMPY_FROM:
        import numpy as np

        return np.flatnonzero((_np(a) >= a_min) & (_np(b) > b_above)).tolist()  # type: ignore[no-any-return]
    return [i for i in range(len(a)) if a[i] >= a_min and b[i] > b_above]


def longest_runs(groups: Sequence[int], values: Sequence[float], level: float) -> dict[int, list[int]]:
    """For each group code, the row indices of its first longest run of consecutive rows (within
    the group, in order) whose value is >= level (NaN breaks a run). Groups without such a row
    map to []."""
    out: dict[int, list[int]] = {}
    if len(values) >= NUMPY_FROM:
        import numpy as np

        g = np.frombuffer(groups, dtype=np.int32) if isinstance(groups, array) and groups.typecode == "i" else np.asarray(groups)
        v = _np(values)
        for code in np.unique(g).tolist():
            idx = np.flatnonzero(g == code)
            flags = (v[idx] >= level).astype(np.int8)
            if not flags.any():
                out[code] = []
                continue
            edges = np.diff(np.concatenate(([0], flags, [0])))
            starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
            k = int(np.argmax(ends - starts))  # argmax returns the first of equal maxima
            out[code] = idx[starts[k] : ends[k]].tolist()
        return out
    runs: dict[int, list[int]] = {}
    for i in range(len(values)):
        code = groups[i]
        best = out.setdefault(code, [])
        run = runs.setdefault(code, [])
        if values[i] >= level:
            run.append(i)
            if len(run) > len(best):
                out[code] = list(run)
        else:
            runs[code] = []
    return out
