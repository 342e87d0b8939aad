"""Tick labels in plain text for the report's plots.

The plots are saved with math-text parsing off (`text.parse_math: False`), so a `$` in a label
from the log stays a `$`. matplotlib's log-axis formatter still writes its labels as math text
(`$\\mathdefault{10^{5}}$`), which then showed up literally. Every axis therefore gets a plain
formatter: log axes `100`, `1k`, `100k`, `1M` at the decades and no minor labels; linear axes
matplotlib's scalar formatter without an offset or a scientific multiplier (`1e6` in a corner
is easy to miss). Category axes (fixed labels) are left as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

_UNITS = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def plain_number(value: float, _pos: int | None = None) -> str:
    """A tick value for people: 250, 1.5k, 100k, 2M; never math text."""
    size = abs(value)
    for scale, unit in _UNITS:
        if size >= scale:
            return f"{value / scale:.3g}{unit}"
    if size == 0:
        return "0"
    return f"{value:.3g}"


def _plain_axis(axis: Axis) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter, ScalarFormatter

    if axis.get_scale() == "log":
        axis.set_major_formatter(FuncFormatter(plain_number))
        axis.set_minor_formatter(NullFormatter())
        return
    fmt = axis.get_major_formatter()
    if isinstance(fmt, ScalarFormatter):
        fmt.set_useOffset(False)
        fmt.set_scientific(False)
        fmt.set_useMathText(False)


def plain_ticks(fig: Figure) -> None:
    """Give every axis of `fig` (secondary axes included) plain-text tick labels."""
    pending: list[Any] = list(fig.axes)
    while pending:
        ax = pending.pop()
        pending.extend(ax.child_axes)
        _plain_axis(ax.xaxis)
        _plain_axis(ax.yaxis)
