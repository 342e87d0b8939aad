"""Idle gaps in a plotted time series: where a line must stop instead of joining two samples.

SGLang prints a decode stats line every `decode_log_interval` decode steps (40 by default) and a
prefill line per prefill batch, and nothing at all while the server is idle. While requests run,
the lines therefore come at a steady pace; the median spacing between consecutive samples is that
pace. Load changes move it (a bigger batch makes a decode step slower), but by a factor of two or
three, not more: a spacing of more than `GAP_FACTOR` times the median is a stretch in which the
server printed nothing, and a line drawn across it would show idle time as data. The threshold is
taken from each series itself (its own median spacing), so a log printing every 100 ms and one
printing every 10 s are both judged by their own pace. Timestamps have one-second resolution in
most releases, so only positive spacings count (several lines in one second share a stamp).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np

GAP_FACTOR = 5.0
# Fewer spacings than this say nothing about a steady pace: such a series is drawn unbroken.
MIN_SPACINGS = 4


class Pace(NamedTuple):
    """A series' typical spacing between samples and the longest spacing still drawn as a line."""

    typical: float
    limit: float


def _np() -> Any:
    import numpy as np

    return np


def pace_of(x: np.ndarray) -> Pace | None:
    """The pace of samples at `x` (any order, NaNs ignored); None when there are too few."""
    np = _np()
    return pace_of_sorted(np.sort(x[~np.isnan(x)]))


def pace_of_sorted(xs: np.ndarray) -> Pace | None:
    """`pace_of` for samples already sorted and without NaNs (the plots sort them once, for the
    line; sorting a million stats lines again here was ~40 % of reducing a series)."""
    np = _np()
    spacing = np.diff(xs)
    spacing = spacing[spacing > 0]
    if spacing.size < MIN_SPACINGS:
        return None
    typical = float(np.median(spacing))
    return Pace(typical, GAP_FACTOR * typical)


def widened(pace: Pace | None, bin_width: float) -> Pace | None:
    """The pace after averaging into bins `bin_width` wide: neighbouring non-empty bins can lie up
    to two bin widths apart without any gap in the data between them."""
    if pace is None or bin_width <= 0:
        return pace
    return Pace(max(pace.typical, bin_width), max(pace.limit, 2.0 * bin_width))


def break_gaps(x: np.ndarray, y: np.ndarray, pace: Pace | None) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) sorted by x, with a NaN sample inserted after every sample followed by a gap longer
    than the pace's limit, so that matplotlib ends the line there. The NaN sits one typical
    spacing after the last sample (or half-way, for a shorter gap): a step plot then holds the
    last value for one ordinary interval, as it would have without the gap, and stops."""
    np = _np()
    if pace is None or x.size < 2:
        return x, y
    spacing = np.diff(x)
    at = np.flatnonzero(spacing > pace.limit)
    if not at.size:
        return x, y
    hold = np.minimum(pace.typical, spacing[at] / 2.0)
    xs = np.insert(x.astype(float), at + 1, x[at] + hold)
    ys = np.insert(y.astype(float), at + 1, np.nan)
    return xs, ys


def segments(y: np.ndarray) -> list[slice]:
    """The runs of `y` between NaN separators (as inserted by `break_gaps`)."""
    np = _np()
    cuts = np.flatnonzero(np.isnan(y))
    out: list[slice] = []
    start = 0
    for c in [*cuts.tolist(), int(y.size)]:
        if c > start:
            out.append(slice(start, c))
        start = c + 1
    return out
