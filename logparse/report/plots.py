"""The report's plots as deterministic, self-contained SVG (matplotlib, imported only here).

Figures are made with the object-oriented API (`matplotlib.figure.Figure`), never registered with
pyplot, and dropped after saving, so a report leaves no open figure behind. The SVG is made
deterministic and embeddable: fixed figure sizes, a fixed `svg.hashsalt` for the element ids,
no date or creator metadata, text drawn as paths (no font is needed to view it), math-text
parsing off (a `$` in a label stays a `$`) and plain tick labels (`ticks.py`: matplotlib's log
formatter would otherwise print `$\\mathdefault{10^{5}}$` literally), and element ids prefixed with
the plot's name so that several plots can live in one HTML page. Line plots stop at idle gaps
(`gaps.py`) instead of drawing straight across them; the start-up waterfall marks where start-up
failed (`timing.failures`, from the run model's failure facts).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logparse.report.gaps import break_gaps, pace_of_sorted, segments, widened
from logparse.report.ticks import plain_ticks

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH_IN = 9.0
MAX_POINTS = 1500  # points per plotted line; longer series are averaged into this many bins
# A line of more points than this is drawn without a marker per point: at 1,500 points on a
# ~600 px wide axes the markers overlap into a thick line anyway, and each one is an SVG <use>
# element (~40 µs to write, ~100 bytes), ~30 % of the throughput figure. A shorter line keeps its
# markers: there each sample stands apart, and a marker shows where the line has data.
MARKED_LINE_POINTS = 300
# Dots (series drawn as markers only, no line) per series: the figures are 9 in × 72 dpi = 648 px
# wide and their axes ~580 px, so 600 mean-per-bin dots are about one per pixel column. More bins
# would only stack dots on top of each other in the same column (the 1,500 of a line drew 2-3 per
# column); the dots' means are the same kind of summary as before, just at screen resolution.
DOT_POINTS = 600
MAX_LEGEND_RANKS = 8
RC: dict[str, Any] = {
    "svg.hashsalt": "logdiag-report",
    "svg.fonttype": "path",
    "svg.image_inline": True,
    "text.parse_math": False,
    "axes.formatter.use_mathtext": False,
    "axes.formatter.useoffset": False,
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 72.0,
    "savefig.dpi": 72.0,
    "path.simplify": True,
    "lines.linewidth": 1.2,
    # The default 'C0' makes matplotlib look the colour up in the property cycle on every patch
    # (~5 ms each, ~7 % of a report's plotting); the same colour, spelled out, is free.
    "patch.facecolor": "#1f77b4",
}
PHASE_COLORS = {
    "dist-init": "#8c8c8c",
    "weight-load": "#1f77b4",
    "draft-weight-load": "#aec7e8",
    "kv-alloc": "#2ca02c",
    "capture-prefill": "#98df8a",
    "capture-piecewise": "#bcbd22",
    "capture-target": "#ff7f0e",
    "capture-draft": "#ffbb78",
    "capture-draft-extend": "#d62728",
    "http-server": "#9467bd",
    "warmup": "#c5b0d5",
    "ready": "#17becf",
}
METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


@dataclass(frozen=True)
class PlotSpec:
    name: str
    title: str
    section: str
    available: Callable[[dict[str, Any], dict[str, Any]], bool]
    draw: Callable[[Figure, dict[str, Any], dict[str, Any]], None]
    height_in: Callable[[dict[str, Any]], float] = lambda data: 3.4


# --------------------------------------------------------------------------- helpers


def _np() -> Any:
    import numpy as np

    return np


def _reduce(
    x: np.ndarray, y: np.ndarray, gaps: bool = True, bins: int = MAX_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Drop NaNs; average series longer than `bins` into that many bins along x (the shape stays,
    SVGs stay small); with `gaps`, end the line at idle gaps (a NaN inserted, see gaps.py)."""
    np = _np()
    m = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[m], y[m]
    # Stats lines come in time order (a stable sort of them changes nothing): sort only when
    # they are not (merged decode and prefill lines, a clock that stepped back).
    if x.size > 1 and not bool((x[1:] >= x[:-1]).all()):
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
    pace = pace_of_sorted(x) if gaps else None
    if x.size <= bins:
        return break_gaps(x, y, pace)
    edges = np.linspace(x[0], x[-1], bins + 1)
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    counts = np.bincount(idx, minlength=bins)
    keep = counts > 0
    xs = np.bincount(idx, weights=x, minlength=bins)[keep] / counts[keep]
    ys = np.bincount(idx, weights=y, minlength=bins)[keep] / counts[keep]
    return break_gaps(xs, ys, widened(pace, float(edges[1] - edges[0])))


def _line_markers(y: np.ndarray) -> dict[str, Any]:
    """The marker arguments of a line of the values `y`: a dot per point up to
    MARKED_LINE_POINTS points (NaN gap markers not counted), none past that."""
    np = _np()
    if int(np.count_nonzero(~np.isnan(y))) <= MARKED_LINE_POINTS:
        return {"marker": ".", "markersize": 3}
    return {}


def _xlabel(series: dict[str, Any]) -> str:
    if series.get("timed"):
        t0 = series.get("t0")
        return f"seconds since {t0}" if t0 else "seconds since the first stats line"
    return "log line (no timestamps)"


def _by_rank(ranks: list[str]) -> list[tuple[str, Any]]:
    np = _np()
    arr = np.asarray(ranks, dtype=object)
    names = sorted(set(ranks), key=_rank_sort)
    return [(name, arr == name) for name in names]


def _rank_sort(tag: str) -> Any:
    from logparse.run.views import rank_key

    return rank_key(tag)


MAX_LABEL = 24


def _short(label: str) -> str:
    """A rank tag as an axis label: a hostile 5,000-character tag would squeeze the plot to
    nothing, so long tags are cut (the tables beside the plot show them whole)."""
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def _legend(ax: Axes, **kw: Any) -> None:
    handles, _labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc=kw.pop("loc", "upper right"), frameon=False, **kw)


# --------------------------------------------------------------------------- startup


def _waterfall_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        r
        for r in data["timing"]["ranks"]
        if any(p["start_s"] is not None and p["end_s"] is not None for p in r["phases"])
    ]


def _has_waterfall(data: dict[str, Any], series: dict[str, Any]) -> bool:
    return bool(_waterfall_rows(data))


def _waterfall_height(data: dict[str, Any]) -> float:
    return min(14.0, 1.9 + 0.3 * len(_waterfall_rows(data)))


def _draw_waterfall(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    from matplotlib.patches import Patch

    timing = data["timing"]
    rows = _waterfall_rows(data)
    ax = fig.add_subplot()
    seen: list[str] = []
    n = len(rows)
    for i, row in enumerate(rows):
        y = n - 1 - i
        for p in row["phases"]:
            if p["start_s"] is None or p["end_s"] is None:
                continue
            color = PHASE_COLORS.get(p["phase"], "#7f7f7f")
            width = max(p["end_s"] - p["start_s"], 0.0)
            ax.barh(
                y,
                width,
                left=p["start_s"],
                height=0.6,
                color=color,
                edgecolor=color,
                hatch=None if p["complete"] else "//",
                alpha=1.0 if p["complete"] else 0.5,
                linewidth=0.5,
            )
            if p["phase"] not in seen:
                seen.append(p["phase"])
    ax.set_yticks(range(n), [_short(r["rank"]) for r in reversed(rows)])
    ax.set_ylim(-0.7, n - 0.3)
    if timing.get("time_to_ready_s") is not None:
        ax.axvline(timing["time_to_ready_s"], color="#17becf", linestyle="--", linewidth=1.0)
        ax.annotate(
            f"ready at {timing['time_to_ready_s']:g} s",
            (timing["time_to_ready_s"], n - 0.4),
            xytext=(-3, 0),
            textcoords="offset points",
            fontsize=8,
            color="#0e7c86",
            va="top",
            ha="right",
        )
    start = timing.get("start")
    ax.set_xlabel(f"seconds since the launch's first timestamp ({start})" if start else "seconds")
    ends = [p["end_s"] for r in rows for p in r["phases"] if p["end_s"] is not None]
    marks = _failure_marks(timing, rows)
    right = max([*ends, *(x for x, _y, _l in marks), timing.get("time_to_ready_s") or 0.0, 1.0])
    ax.set_xlim(0, right * 1.12)
    failed = _draw_failures(ax, timing, marks, n)
    ax.grid(axis="y", visible=False)
    from logparse.report.timing import PHASE_ORDER

    seen.sort(key=lambda p: PHASE_ORDER.get(p, 99))
    handles = [Patch(color=PHASE_COLORS.get(p, "#7f7f7f"), label=p) for p in seen]
    if any(not p["complete"] for r in rows for p in r["phases"]):
        handles.append(
            Patch(facecolor="white", edgecolor="#555555", hatch="//", label="unfinished")
        )
    if failed is not None:
        handles.append(failed)
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16 if n > 3 else -0.3),
        ncol=min(6, len(handles)),
        frameon=False,
    )


FAIL_COLOR = "#b42318"


def failure_label(f: dict[str, Any]) -> str:
    """`TP1 failed after weight-load (line 92)`: who, where in start-up, and the evidence line."""
    who = "main process" if f["rank"] == "main" else _short(f["rank"])
    where = f" {'during' if f['during'] else 'after'} {f['phase']}" if f.get("phase") else ""
    return f"{who} failed{where} (line {f['line']})"


def _failure_marks(
    timing: dict[str, Any], rows: list[dict[str, Any]]
) -> list[tuple[float, int, dict[str, Any]]]:
    """(x, row index from the bottom, failure) for every rank a start-up failure is drawn on: at
    the end of the phase it interrupted (or at the failure's time, if later)."""
    n = len(rows)
    at_row = {r["rank"]: (n - 1 - i, r) for i, r in enumerate(rows)}
    out = []
    for f in timing.get("failures") or []:
        for rank in f.get("ranks_marked") or []:
            if rank not in at_row:
                continue
            y, row = at_row[rank]
            ends = [
                p["end_s"]
                for p in row["phases"]
                if p["phase"] == f["phase"] and p["end_s"] is not None
            ]
            xs = [v for v in (*ends, f.get("at_s")) if v is not None]
            if xs:
                out.append((max(xs), y, f))
    return out


def _draw_failures(
    ax: Axes, timing: dict[str, Any], marks: list[tuple[float, int, dict[str, Any]]], n: int
) -> Any:
    """Red crosses where ranks failed, the first one labelled; a failure of the main process that
    no rank row shows becomes a vertical line at its time. Returns the legend handle (or None)."""
    from matplotlib.lines import Line2D

    fails = timing.get("failures") or []
    if not fails:
        return None
    if marks:
        ax.scatter(
            [x for x, _y, _f in marks],
            [y for _x, y, _f in marks],
            marker="X",
            s=60,
            color=FAIL_COLOR,
            edgecolors="white",
            linewidths=0.6,
            zorder=5,
        )
        x, y, first = min(marks, key=lambda m: (m[2]["line"], -m[1]))
        ax.annotate(
            failure_label(first),
            (x, y),
            xytext=(7, 0),
            textcoords="offset points",
            fontsize=8,
            color=FAIL_COLOR,
            va="center",
            ha="left",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
            zorder=6,
        )
    else:
        f = fails[0]
        if f.get("at_s") is None:
            return None
        ax.axvline(f["at_s"], color=FAIL_COLOR, linestyle="-", linewidth=1.4)
        ax.annotate(
            failure_label(f),
            (f["at_s"], n - 0.4),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=8,
            color=FAIL_COLOR,
            va="top",
            ha="left",
        )
    label = "start-up failure" + (f" ({len(marks)} ranks)" if len(marks) > 1 else "")
    return Line2D(
        [], [], linestyle="none", marker="X", markersize=8, color=FAIL_COLOR,
        markeredgecolor="white", label=label,
    )


# --------------------------------------------------------------------------- memory

MEMORY_COLORS = {
    "weights_gb": "#1f77b4",
    "kv_gb": "#2ca02c",
    "other_pools_gb": "#98df8a",
    "graphs_gb": "#ff7f0e",
    "draft_gb": "#ffbb78",
    "unaccounted_gb": "#c7c7c7",
    "free_after_gb": "#ffffff",
}
MAX_MEMORY_RANKS = 16


def _memory_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    mem = data.get("memory") or {}
    from logparse.report.memory import SEGMENTS

    def drawn(r: dict[str, Any]) -> bool:  # a bar needs at least one segment
        return any(isinstance(r.get(k), (int, float)) and r[k] > 0 for k, _ in SEGMENTS)

    return [r for r in mem.get("ranks") or [] if drawn(r)][:MAX_MEMORY_RANKS]


def _has_memory(data: dict[str, Any], series: dict[str, Any]) -> bool:
    return bool(_memory_rows(data))


def _memory_height(data: dict[str, Any]) -> float:
    return min(8.0, 1.9 + 0.3 * len(_memory_rows(data)))


def _draw_memory(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    """One stacked bar per rank: where the free memory at start went (GB), the tightest rank bold."""
    from matplotlib.patches import Patch

    from logparse.report.memory import SEGMENTS

    rows = _memory_rows(data)
    ax = fig.add_subplot()
    n = len(rows)
    used: list[str] = []
    for i, row in enumerate(rows):
        y = n - 1 - i
        left = 0.0
        for key, _label in SEGMENTS:
            width = row.get(key)
            if not isinstance(width, (int, float)) or width <= 0:
                continue
            ax.barh(y, width, left=left, height=0.6, color=MEMORY_COLORS[key], edgecolor="#555555", linewidth=0.5)
            left += width
            if key not in used:
                used.append(key)
    ax.set_yticks(
        range(n), [_short(r["rank"]) + (" *" if r.get("tightest") else "") for r in reversed(rows)]
    )
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel("GB (free memory at start, as SGLang prints it)")
    ax.grid(axis="y", visible=False)
    labels = dict(SEGMENTS)
    handles = [Patch(facecolor=MEMORY_COLORS[k], edgecolor="#555555", label=labels[k]) for k in used]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16 if n > 3 else -0.3),
              ncol=max(1, min(4, len(handles))), frameon=False)


# --------------------------------------------------------------------------- serving


def _serving(series: dict[str, Any]) -> dict[str, Any]:
    return series.get("serving") or {}


def _has(series: dict[str, Any], part: str, col: str) -> bool:
    np = _np()
    s = _serving(series).get(part)
    return s is not None and bool((~np.isnan(s[col])).any())


def _has_throughput(data: dict[str, Any], series: dict[str, Any]) -> bool:
    return _has(series, "decode", "gen_throughput") or _has(series, "prefill", "input_throughput")


def _draw_throughput(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    np = _np()
    s = _serving(series)
    d, p = s["decode"], s["prefill"]
    has_d = _has(series, "decode", "gen_throughput")
    has_p = _has(series, "prefill", "input_throughput")
    axes = fig.subplots(2 if has_d and has_p else 1, 1, sharex=True, squeeze=False)[:, 0]
    k = 0
    if has_d:
        ax = axes[k]
        k += 1
        groups = _by_rank(d["rank"])
        for name, m in groups:
            x, y = _reduce(d["x"][m], d["gen_throughput"][m])
            ax.plot(
                x,
                y,
                **_line_markers(y),
                label=(name or "decode") if len(groups) <= MAX_LEGEND_RANKS else None,
            )
        nograph = d["cuda_graph"] == 0.0
        if nograph.any():
            x, y = _reduce(d["x"][nograph], d["gen_throughput"][nograph], bins=DOT_POINTS)
            ax.plot(
                x,
                y,
                linestyle="none",
                marker="x",
                markersize=4,
                color="#d62728",
                label="decode without CUDA graph",
            )
        ax.set_ylabel("decode tokens/s")
        ax.set_title("Generation (decode) throughput")
        ax.set_ylim(bottom=0)
        _legend(ax, loc="best")
    if has_p:
        ax = axes[k]
        x, y = _reduce(p["x"], p["input_throughput"], bins=DOT_POINTS)
        keep = y > 0
        ax.plot(x[keep], y[keep], linestyle="none", marker=".", markersize=3, color="#2ca02c")
        if keep.any() and np.nanmax(y[keep]) > 50 * max(np.nanmedian(y[keep]), 1.0):
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        ax.set_ylabel("prefill tokens/s")
        ax.set_title("Prefill input throughput")
    axes[-1].set_xlabel(_xlabel(s))


def _has_load(data: dict[str, Any], series: dict[str, Any]) -> bool:
    return _has(series, "decode", "running") or _has(series, "prefill", "running")


def _merged(s: dict[str, Any], col: str) -> tuple[np.ndarray, np.ndarray]:
    np = _np()
    d, p = s["decode"], s["prefill"]
    return np.concatenate([d["x"], p["x"]]), np.concatenate([d[col], p[col]])


def _draw_load(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    s = _serving(series)
    ax = fig.add_subplot()
    for col, label, color in (
        ("running", "running requests", "#1f77b4"),
        ("queue", "queued requests", "#ff7f0e"),
    ):
        x, y = _reduce(*_merged(s, col))
        if x.size:
            ax.step(x, y, where="post", label=label, color=color)
    bs = data["serving"].get("cuda_graph", {}).get("captured_max_bs")
    if bs:
        ax.axhline(
            bs,
            color="#7f7f7f",
            linestyle=":",
            linewidth=1.0,
            label=f"largest CUDA-graph batch ({bs})",
        )
    ax.set_ylim(bottom=0)
    ax.set_ylabel("requests")
    ax.set_xlabel(_xlabel(s))
    ax.set_title("Running and queued requests (per stats line)")
    _legend(ax, loc="best")


def _has_usage(data: dict[str, Any], series: dict[str, Any]) -> bool:
    return _has(series, "decode", "token_usage") or _has(series, "prefill", "token_usage")


def _draw_usage(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    np = _np()
    s = _serving(series)
    ax = fig.add_subplot()
    x, y = _reduce(*_merged(s, "token_usage"))
    ax.plot(x, y, color="#9467bd", label="KV token usage")
    top = float(np.nanmax(y)) if y.size else 1.0
    if _has(series, "decode", "mamba_usage"):
        mx, my = _reduce(s["decode"]["x"], s["decode"]["mamba_usage"])
        ax.plot(mx, my, color="#8c564b", label="mamba usage")
        top = max(top, float(np.nanmax(my)))
    retractions = list(s.get("retractions", [])[:MAX_RETRACTIONS])
    if retractions:
        # One collection of vertical lines (x: data, y: the axes' full height, as axvline draws
        # them), not one Line2D artist per retraction: 200 artists made this figure ~2× slower.
        ax.vlines(
            retractions, 0, 1, transform=ax.get_xaxis_transform(), colors="#d62728",
            linewidth=0.8, alpha=0.6, label="retraction",
        )
    ax.set_ylim(0, max(1.0, top * 1.05))
    ax.set_ylabel("fraction of the pool")
    ax.set_xlabel(_xlabel(s))
    ax.set_title("Token usage")
    _legend(ax, loc="best")


MAX_RETRACTIONS = 200


def _has_concurrency(data: dict[str, Any], series: dict[str, Any]) -> bool:
    rows = data["serving"].get("by_concurrency") or []
    return any(r["gen_throughput"] for r in rows)


def _draw_concurrency(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    np = _np()
    rows = [r for r in data["serving"]["by_concurrency"] if r["gen_throughput"]]
    ax = fig.add_subplot()
    pos = np.arange(len(rows))
    med = [r["gen_throughput"]["median"] for r in rows]
    p90 = [r["gen_throughput"]["p90"] for r in rows]
    ax.bar(pos - 0.2, med, width=0.4, color="#1f77b4", label="median")
    ax.bar(pos + 0.2, p90, width=0.4, color="#aec7e8", label="p90")
    ax.set_xticks(pos, [f"{r['running']}\n({r['decode_lines']})" for r in rows])
    ax.set_xlabel("#running-req (decode stats lines)")
    ax.set_ylabel("decode tokens/s")
    ax.set_title("Generation throughput by concurrency")
    ax.grid(axis="x", visible=False)
    _legend(ax, loc="upper left")


# --------------------------------------------------------------------------- speculative


def _spec(series: dict[str, Any]) -> dict[str, Any]:
    return series.get("speculative") or {}


def _has_accept(data: dict[str, Any], series: dict[str, Any]) -> bool:
    np = _np()
    s = _spec(series)
    return "accept_len" in s and bool((~np.isnan(s["accept_len"])).any())


def _rolling_median(y: np.ndarray, window: int = 9) -> np.ndarray:
    """The rolling median of each run of `y` between NaN gap markers (a window never spans a
    gap; the markers stay NaN so the line still stops there)."""
    np = _np()
    out = np.array(y, dtype=float)
    for part in segments(out):
        seg = out[part]
        if seg.size < window:
            continue
        pad = window // 2
        padded = np.pad(seg, pad, mode="edge")
        view = np.lib.stride_tricks.sliding_window_view(padded, window)
        out[part] = np.median(view, axis=1)
    return out


def _draw_accept_time(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    s = _spec(series)
    ax = fig.add_subplot()
    groups = _by_rank(s["rank"]) if s.get("per_rank") else [("", None)]
    for name, m in groups:
        x = s["x"] if m is None else s["x"][m]
        y = s["accept_len"] if m is None else s["accept_len"][m]
        dots_x, dots_y = _reduce(x, y, gaps=False, bins=DOT_POINTS)
        if not dots_x.size:
            continue
        label = name if name and len(groups) <= MAX_LEGEND_RANKS else None
        line = ax.plot(
            dots_x, dots_y, linestyle="none", marker=".", markersize=3, alpha=0.6, label=label
        )[0]
        lx, ly = _reduce(x, y)
        ax.plot(lx, _rolling_median(ly), color=line.get_color(), linewidth=1.2)
    spec = data.get("speculative") or {}
    draft = (spec.get("tokens_per_verify_step") or {}).get("draft_tokens_per_step")
    if draft:
        ax.axhline(
            draft,
            color="#7f7f7f",
            linestyle=":",
            linewidth=1.0,
            label=f"draft tokens per step ({draft})",
        )
    even = (data.get("baseline") or {}).get("break_even_accept_len")
    if even:
        ax.axhline(
            even,
            color="#d62728",
            linestyle="--",
            linewidth=1.0,
            label=f"break-even vs baseline ({even:g})",
        )
    ax.set_ylim(bottom=1.0 if not even or even >= 1 else 0)
    ax.set_ylabel("accept length (tokens per verify step)")
    ax.set_xlabel(_xlabel(s))
    title = "Accept length over time (dots: stats lines; line: rolling median of 9)"
    rate_axis = _rate_axis(spec)
    if rate_axis is not None:
        # The log's accept rate is a fixed function of the accept length: show its scale.
        ax.secondary_yaxis("right", functions=rate_axis).set_ylabel("accept rate")
        title = "Accept length and rate over time (dots: stats lines; line: rolling median of 9)"
    ax.set_title(title)
    _legend(ax, loc="lower right")


def _rate_axis(spec: dict[str, Any]) -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    """(length → rate, rate → length) for the log's accept-rate definition, when it is known."""
    cfg = spec.get("config") or {}
    definition = spec.get("rate_definition")
    draft, steps = cfg.get("num_draft_tokens"), cfg.get("num_steps")
    if definition == "accept_len / num_draft_tokens" and draft:
        return (lambda v: v / draft, lambda r: r * draft)
    if definition == "(accept_len - 1) / num_steps" and steps:
        return (lambda v: (v - 1) / steps, lambda r: r * steps + 1)
    return None


def _draw_accept_hist(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    spec = data["speculative"]
    h = spec["histogram"]
    ax = fig.add_subplot()
    edges, counts = h["edges"], h["counts"]
    ax.bar(
        edges[:-1],
        counts,
        width=h["bin_width"],
        align="edge",
        color="#1f77b4",
        edgecolor="white",
        linewidth=0.5,
    )
    mean = spec["accept_len"]["mean"]
    ax.axvline(mean, color="#ff7f0e", linestyle="-", linewidth=1.2, label=f"mean {mean:g}")
    even = (data.get("baseline") or {}).get("break_even_accept_len")
    if even:
        ax.axvline(
            even,
            color="#d62728",
            linestyle="--",
            linewidth=1.2,
            label=f"break-even vs baseline {even:g}",
        )
    ax.set_xlabel("accept length (tokens per verify step)")
    ax.set_ylabel("decode stats lines")
    ax.set_title("Accept length distribution")
    ax.grid(axis="x", visible=False)
    _legend(ax, loc="upper left")


def _has_speedup(data: dict[str, Any], series: dict[str, Any]) -> bool:
    return bool((data.get("baseline") or {}).get("matched"))


def _draw_speedup(fig: Figure, data: dict[str, Any], series: dict[str, Any]) -> None:
    np = _np()
    rows = data["baseline"]["matched"]
    ax = fig.add_subplot()
    pos = np.arange(len(rows))
    speed = [r["speedup"] for r in rows]
    colors = ["#2ca02c" if v > 1 else "#d62728" for v in speed]
    ax.bar(pos, speed, width=0.6, color=colors)
    for x, v in zip(pos, speed, strict=True):
        ax.annotate(
            f"{v:.2f}×", (x, v), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=8
        )
    ax.axhline(1.0, color="#555555", linewidth=1.0)
    ax.set_xticks(pos, [r["running"] for r in rows])
    ax.set_xlabel("#running-req")
    ax.set_ylabel("per-request decode throughput\nrun ÷ baseline")
    ax.set_title("Speedup over the baseline at matched concurrency")
    ax.set_ylim(0, max(1.2, max(speed) * 1.15))
    ax.grid(axis="x", visible=False)


PLOTS: tuple[PlotSpec, ...] = (
    PlotSpec(
        "startup-waterfall",
        "Startup waterfall: phases by rank",
        "startup",
        _has_waterfall,
        _draw_waterfall,
        _waterfall_height,
    ),
    PlotSpec(
        "memory-budget",
        "Memory budget per rank",
        "startup",
        _has_memory,
        _draw_memory,
        _memory_height,
    ),
    PlotSpec(
        "serving-throughput",
        "Throughput over time",
        "serving",
        _has_throughput,
        _draw_throughput,
        lambda data: 5.2,
    ),
    PlotSpec(
        "serving-load", "Running and queued requests over time", "serving", _has_load, _draw_load
    ),
    PlotSpec("serving-token-usage", "Token usage over time", "serving", _has_usage, _draw_usage),
    PlotSpec(
        "serving-by-concurrency",
        "Generation throughput by concurrency",
        "serving",
        _has_concurrency,
        _draw_concurrency,
    ),
    PlotSpec(
        "spec-accept-time",
        "Accept length (and rate) over time",
        "speculative",
        _has_accept,
        _draw_accept_time,
    ),
    PlotSpec(
        "spec-accept-hist",
        "Accept length distribution",
        "speculative",
        _has_accept,
        _draw_accept_hist,
    ),
    PlotSpec(
        "baseline-speedup",
        "Speedup over the baseline at matched concurrency",
        "speculative",
        _has_speedup,
        _draw_speedup,
    ),
)


def plan(data: dict[str, Any], series: dict[str, Any]) -> list[dict[str, str]]:
    """The plots this report has (name, title, section), without drawing them."""
    return [
        {"name": p.name, "title": p.title, "section": p.section}
        for p in PLOTS
        if p.available(data, series)
    ]


# --------------------------------------------------------------------------- SVG


_XML_DECL = re.compile(r"<\?xml[^>]*\?>\s*")
_DOCTYPE = re.compile(r"<!DOCTYPE[^>]*>\s*")
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_HREF = re.compile(r'(xlink:href|href)="#([^"]+)"')
_URL = re.compile(r"url\(#([^)]+)\)")


def clean_svg(svg: str, prefix: str) -> str:
    """An <svg> element fit for inlining: no XML declaration, DOCTYPE or metadata; ids prefixed."""
    svg = _XML_DECL.sub("", svg)
    svg = _DOCTYPE.sub("", svg)
    svg = _METADATA.sub("", svg)
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = _HREF.sub(lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"', svg)
    svg = _URL.sub(lambda m: f"url(#{prefix}-{m.group(1)})", svg)
    return svg.strip() + "\n"


# What a forked plot worker draws: set just before the pool forks, read by the children (the
# report's data is inherited through fork, never pickled) and cleared after.
_FORKED: tuple[dict[str, Any], dict[str, Any]] | None = None


def _draw_one(spec: PlotSpec, data: dict[str, Any], series: dict[str, Any]) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, spec.height_in(data)), layout="constrained")
    try:
        spec.draw(fig, data, series)
        plain_ticks(fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={**METADATA, "Title": spec.title})
    finally:
        fig.clear()
        del fig
    return clean_svg(buf.getvalue(), spec.name)


def _draw_named(names: list[str]) -> dict[str, str]:
    """In a forked worker: draw the named plots of the inherited report data."""
    import matplotlib

    assert _FORKED is not None
    data, series = _FORKED
    with matplotlib.rc_context(RC):  # type: ignore[arg-type]
        return {s.name: _draw_one(s, data, series) for s in PLOTS if s.name in names}


def _forkable() -> bool:
    """fork is safe here: the platform has it and this process runs one thread (forking a
    threaded process can deadlock a child on a lock another thread held)."""
    import multiprocessing
    import threading

    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def render(data: dict[str, Any], series: dict[str, Any], *, jobs: int = 1) -> dict[str, str]:
    """name → SVG text, for every plot in `data['plots']`, in PLOTS order.

    With `jobs` > 1 the figures are drawn in that many forked processes (plotting is a fixed
    ~3 s of CPU whatever the log's size, the largest part of a report after the analysis); the
    SVG bytes are the same either way (fixed sizes, salt and rc)."""
    import matplotlib

    if "matplotlib.pyplot" not in __import__("sys").modules:
        matplotlib.use("Agg")
    import matplotlib.figure

    from logparse.engine.gcpace import fewer_collections

    wanted = [s for s in PLOTS if s.name in {p["name"] for p in data.get("plots", [])}]
    workers = min(jobs, len(wanted) // 2)
    if workers > 1 and _forkable():
        return _render_forked(wanted, data, series, workers)
    # A figure is thousands of short-lived artists, paths and strings beside the analysis's
    # millions of objects (see build_report): fewer young collections, and fewer full ones that
    # walk the analysis (a dropped figure's reference cycles are still freed, a little later).
    with matplotlib.rc_context(RC), fewer_collections():  # type: ignore[arg-type]
        return {spec.name: _draw_one(spec, data, series) for spec in wanted}


def _render_forked(wanted: list[PlotSpec], data: dict[str, Any], series: dict[str, Any], workers: int) -> dict[str, str]:
    import multiprocessing

    global _FORKED
    # Round-robin keeps each worker's share of the (similar-cost) figures even.
    shares = [[s.name for s in wanted[i::workers]] for i in range(workers)]
    _FORKED = (data, series)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_draw_named, shares)
    finally:
        _FORKED = None
    drawn = {name: svg for part in parts for name, svg in part.items()}
    return {s.name: drawn[s.name] for s in wanted}
