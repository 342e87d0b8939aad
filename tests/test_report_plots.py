"""The report's plots, checked through what they draw: plain tick labels (never math text), lines
that stop at idle gaps, and the start-up waterfall's failure marker from the run model's facts.

matplotlib writes every text it draws into the SVG as a comment before the glyph paths
(`<!-- 100k -->`), which is how these tests read the labels of a plot whose text is paths.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from logparse.engine.core import analyze
from logparse.parsing.pipeline import parse_file
from logparse.report import plots
from logparse.report.gaps import GAP_FACTOR, break_gaps, pace_of, segments, widened
from logparse.report.model import build_report
from logparse.report.ticks import plain_number
from logparse.run.model import run_of
from tests.conftest import REPO

LOGS = REPO / "fixtures" / "logs"
_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
IDLE_MINUTES = 20
# The 50th decode stats line of baseline-cuda-graph-false.log: the server idles after it.
IDLE_AFTER_LINE = 1627
# One prefill line 1,000× the others: the prefill plot goes log-scale.
HUGE_PREFILL = "9000000.00"
_THROUGHPUT = re.compile(r"input throughput \(token/s\): [\d.]+")


def idle_gap_log(folder: Path) -> Path:
    """baseline-cuda-graph-false.log with the server idle for 20 minutes in mid-serving (every
    line after IDLE_AFTER_LINE is 20 minutes later) and one enormous prefill throughput."""
    from datetime import datetime, timedelta

    out = []
    huge_done = False
    lines = (LOGS / "baseline-cuda-graph-false.log").read_text(encoding="utf-8").splitlines()
    for no, line in enumerate(lines, 1):
        m = _STAMP.match(line)
        if m and no > IDLE_AFTER_LINE:
            ts = datetime.fromisoformat(m.group(1)) + timedelta(minutes=IDLE_MINUTES)
            line = f"[{ts:%Y-%m-%d %H:%M:%S}" + line[m.end() :]
        if not huge_done and "Prefill batch" in line and "(token/s): 0.00" not in line:
            line = _THROUGHPUT.sub(f"input throughput (token/s): {HUGE_PREFILL}", line)
            huge_done = True
        out.append(line)
    path = folder / "idle-gap-and-log-scale.log"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def drawn_text(svg: str) -> list[str]:
    """The texts a matplotlib SVG draws (its `<!-- text -->` comments)."""
    return re.findall(r"<!-- (.*?) -->", svg, flags=re.DOTALL)


def report_of(path: Path, baseline: Path | None = None):  # type: ignore[no-untyped-def]
    base = analyze(str(baseline)) if baseline is not None else None
    return build_report(analyze(str(path)), base, source=path.name)


@pytest.fixture(scope="module")
def idle(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    rep = report_of(idle_gap_log(tmp_path_factory.mktemp("idle")))
    return rep, plots.render(rep.data, rep.series)


# --------------------------------------------------------------------------- gaps


def test_pace_is_the_median_positive_spacing() -> None:
    x = np.array([0.0, 0, 2, 4, 6, 8, 10, 10, 12])  # one-second stamps repeat: zeros do not count
    pace = pace_of(x)
    assert pace is not None and pace.typical == 2.0 and pace.limit == GAP_FACTOR * 2.0
    assert pace_of(np.array([0.0, 1.0, 2.0])) is None  # too few spacings to know a pace


def test_break_gaps_ends_the_line_in_an_idle_stretch_only() -> None:
    x = np.array([0.0, 2, 4, 6, 8, 10, 1210, 1212, 1214, 1216])
    y = np.arange(x.size, dtype=float)
    xs, ys = break_gaps(x, y, pace_of(x))
    assert xs.size == x.size + 1
    (nan,) = np.flatnonzero(np.isnan(ys))
    # The line holds for one ordinary interval, then stops until the server prints again.
    assert xs[nan - 1] == 10 and xs[nan] == 12 and xs[nan + 1] == 1210
    assert [s.stop - s.start for s in segments(ys)] == [6, 4]
    steady = np.arange(0.0, 40.0, 2.0)
    same_x, same_y = break_gaps(steady, steady, pace_of(steady))
    assert not np.isnan(same_y).any() and same_x.size == steady.size


def test_binned_series_are_not_broken_between_neighbouring_bins() -> None:
    pace = pace_of(np.arange(0.0, 100.0, 1.0))
    assert pace is not None
    wide = widened(pace, 24.0)
    assert wide is not None and wide.limit == 48.0 and wide.typical == 24.0
    # 20,000 lines two seconds apart: averaged into bins, still one unbroken line.
    x = np.arange(0.0, 40_000.0, 2.0)
    rx, ry = plots._reduce(x, np.ones_like(x))
    assert rx.size <= plots.MAX_POINTS and not np.isnan(ry).any()


def test_idle_gap_is_drawn_as_a_gap(idle) -> None:  # type: ignore[no-untyped-def]
    rep, _svgs = idle
    d = rep.series["serving"]["decode"]
    x, y = plots._reduce(d["x"], d["gen_throughput"])
    gaps = np.flatnonzero(np.isnan(y))
    assert gaps.size == 1, "one idle stretch, one break in the decode line"
    before, after = x[gaps[0] - 1], x[gaps[0] + 1]
    assert after - before >= IDLE_MINUTES * 60
    # The unmodified log has no break anywhere.
    base = report_of(LOGS / "baseline-cuda-graph-false.log").series["serving"]["decode"]
    _bx, by = plots._reduce(base["x"], base["gen_throughput"])
    assert not np.isnan(by).any()


def test_rolling_median_never_spans_a_gap() -> None:
    y = np.array([1.0] * 12 + [np.nan] + [9.0] * 12)
    med = plots._rolling_median(y)
    assert np.isnan(med[12]) and (med[:12] == 1.0).all() and (med[13:] == 9.0).all()


# --------------------------------------------------------------------------- tick labels


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (0.25, "0.25"), (250.0, "250"), (1000.0, "1k"), (1.5e3, "1.5k"),
     (1e5, "100k"), (2e6, "2M"), (-3e3, "-3k")],
)
def test_plain_number(value: float, text: str) -> None:
    assert plain_number(value) == text


def test_log_axis_has_plain_labels(idle) -> None:  # type: ignore[no-untyped-def]
    _rep, svgs = idle
    texts = drawn_text(svgs["serving-throughput"])
    assert "100k" in texts and "1M" in texts, texts  # the log-scale prefill axis, in plain text
    assert not [t for t in texts if "mathdefault" in t or "$" in t or "^{" in t]


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.log")))
def test_no_plot_draws_math_text(name: str) -> None:
    rep = report_of(LOGS / name)
    for plot, svg in plots.render(rep.data, rep.series).items():
        bad = [t for t in drawn_text(svg) if "mathdefault" in t or "$" in t]
        assert not bad, (plot, bad)


# --------------------------------------------------------------------------- failure marker


def test_failures_come_from_the_run_model() -> None:
    for name in ("eagle3-kv-pool.log", "nextn-3-killed.log", "spec-serving-healthy.log"):
        rep = report_of(LOGS / name)
        lc = run_of(parse_file(str(LOGS / name))).startup
        marked = {(f["rank"], f["line"]) for f in rep.data["timing"]["failures"]}
        # Every marked failure is one of the run model's; the main process only when no rank died.
        assert marked <= set(lc.failures.items())
        assert bool(marked) == bool(lc.failures)


def test_rank_failure_is_marked_at_its_rank_and_phase() -> None:
    rep = report_of(LOGS / "eagle3-kv-pool.log")
    fails = rep.data["timing"]["failures"]
    assert [f["rank"] for f in fails] == ["TP1", "TP6", "TP7", "TP3", "TP0", "TP2", "TP5", "TP4"]
    first = fails[0]
    assert first == {
        "rank": "TP1", "line": 92, "phase": "weight-load", "during": False, "at_s": 103.0,
        "ranks_marked": ["TP1"],
    }
    texts = drawn_text(plots.render(rep.data, rep.series)["startup-waterfall"])
    assert "TP1 failed after weight-load (line 92)" in texts
    assert "start-up failure (8 ranks)" in texts


def test_main_process_kill_is_marked_on_the_ranks_it_interrupted() -> None:
    rep = report_of(LOGS / "nextn-3-killed.log")
    (f,) = rep.data["timing"]["failures"]
    assert (f["rank"], f["line"], f["phase"], f["during"]) == ("main", 107, "weight-load", True)
    assert f["ranks_marked"] == [f"TP{i}" for i in range(8)]
    texts = drawn_text(plots.render(rep.data, rep.series)["startup-waterfall"])
    assert "main process failed during weight-load (line 107)" in texts


def test_unfinished_phase_lasts_at_least_as_long_as_its_progress_bar() -> None:
    """The killed checkpoint load: its last dated line is at 9 s, but the (undated) tqdm bar in
    it ran 2 min 8 s; the bar and the failure marker end there, not at 9 s."""
    t = report_of(LOGS / "nextn-3-killed.log").data["timing"]
    (bar,) = [b for b in t["progress"] if b["phase"] == "weight-load"]
    assert bar["elapsed_s"] == 128 and not bar["complete"]
    for r in t["ranks"]:
        (load,) = [p for p in r["phases"] if p["phase"] == "weight-load"]
        assert not load["complete"] and load["duration_s"] == 128.0
        assert load["end_s"] == load["start_s"] + 128.0
    assert t["failures"][0]["at_s"] == 137.0


def test_healthy_waterfall_has_no_failure_marker() -> None:
    rep = report_of(LOGS / "spec-serving-healthy.log")
    assert rep.data["timing"]["failures"] == []
    texts = drawn_text(plots.render(rep.data, rep.series)["startup-waterfall"])
    assert not [t for t in texts if "failed" in t or "failure" in t]


def test_forked_workers_draw_the_same_bytes(idle) -> None:  # type: ignore[no-untyped-def]
    """--jobs 2 draws the figures in two forked processes: the same SVGs, in the same order."""
    rep, serial = idle
    if len(serial) < 4 or not plots._forkable():
        pytest.skip("needs 4+ plots and a single-threaded process that can fork")
    forked = plots.render(rep.data, rep.series, jobs=2)
    assert list(forked) == list(serial)
    assert forked == serial
    assert plots._FORKED is None  # the inherited data is not kept after the pool


# --------------------------------------------------------------------------- drawing cost

# matplotlib draws each marker as its own SVG <use> of a marker path ("m" + 10 hex digits, the
# id prefixed with the plot's name); axis ticks are markers too, a few dozen per figure.
_MARKER_USE = re.compile(r'<use xlink:href="#[a-z-]+-m[0-9a-f]{10}"')


def _decode_only(n: int) -> dict[str, object]:
    """Plot series of `n` decode stats lines 2 s apart (one rank, all with CUDA graphs) and no
    prefill: the throughput figure then draws one line."""
    x = np.arange(n, dtype=float) * 2.0
    decode = {
        "x": x,
        "gen_throughput": 1000.0 + 100.0 * np.sin(x / 50.0),
        "rank": ["TP0"] * n,
        "cuda_graph": np.ones(n),
    }
    prefill = {"x": np.array([]), "input_throughput": np.array([])}
    return {"serving": {"decode": decode, "prefill": prefill, "timed": True, "t0": None}}


def _throughput(series: dict[str, object]) -> tuple[object, str]:
    """(the decode line, the figure's SVG) of the throughput plot of `series`."""
    import matplotlib
    from matplotlib.figure import Figure

    spec = next(p for p in plots.PLOTS if p.name == "serving-throughput")
    with matplotlib.rc_context(plots.RC):  # type: ignore[arg-type]
        fig = Figure()
        spec.draw(fig, {}, series)
        svg = plots._draw_one(spec, {}, series)
    (line,) = fig.axes[0].get_lines()
    return line, svg


def test_long_line_has_no_per_point_markers_and_a_short_one_has() -> None:
    short = plots.MARKED_LINE_POINTS
    line, svg = _throughput(_decode_only(short))
    assert line.get_marker() == "." and len(line.get_xdata()) == short
    assert len(_MARKER_USE.findall(svg)) >= short  # every sample drawn as a dot
    # Twenty times as many lines, binned to MAX_POINTS: a line without a marker per point.
    line, svg = _throughput(_decode_only(20 * short))
    assert line.get_marker() in ("None", "", None)
    assert len(line.get_xdata()) > short
    assert len(_MARKER_USE.findall(svg)) < 100  # the axis ticks only


def test_dot_series_are_binned_to_the_screen_width() -> None:
    """Marker-only series (prefill dots, accept-length dots) get about one dot per pixel column of
    the ~580 px wide axes: their SVG stays small however long the log; short ones keep every dot."""
    x = np.arange(20_000, dtype=float)
    dx, dy = plots._reduce(x, np.ones_like(x), gaps=False, bins=plots.DOT_POINTS)
    assert 0 < dx.size <= plots.DOT_POINTS
    assert plots.DOT_POINTS <= plots.WIDTH_IN * plots.RC["figure.dpi"]  # ≤ the figure's pixel columns
    few = np.arange(100, dtype=float)
    assert plots._reduce(few, few, gaps=False, bins=plots.DOT_POINTS)[0].size == few.size
    # The line of the same series keeps the finer binning.
    assert plots._reduce(x, np.ones_like(x))[0].size == plots.MAX_POINTS


def test_retractions_are_one_artist_with_one_legend_entry() -> None:
    import matplotlib
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    n = 400
    x = np.arange(n, dtype=float)
    side = {"x": x, "token_usage": np.full(n, 0.5), "mamba_usage": np.full(n, np.nan)}
    series = {"serving": {"decode": side, "prefill": {"x": x[:0], "token_usage": x[:0]},
                          "retractions": [float(t) for t in range(0, n, 2)], "timed": False}}
    spec = next(p for p in plots.PLOTS if p.name == "serving-token-usage")
    with matplotlib.rc_context(plots.RC):  # type: ignore[arg-type]
        fig = Figure()
        spec.draw(fig, {}, series)
        svg = plots._draw_one(spec, {}, series)
    ax = fig.axes[0]
    (marks,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(marks.get_segments()) == plots.MAX_RETRACTIONS  # the first 200 of 200+
    assert [t.get_text() for t in ax.get_legend().get_texts()].count("retraction") == 1
    assert drawn_text(svg).count("retraction") == 1


def test_bench_command_lookup_is_the_scan_it_replaced() -> None:
    """The report model's bench-command lookup (a binary search over commands in line order) picks
    what the scan did: the last command on a line in [previous result, this result)."""
    import random
    from types import SimpleNamespace

    from logparse.report.model import _commands_before

    rng = random.Random(7)
    for ordered in (True, False):
        lines = sorted(rng.sample(range(1, 400), 40)) if ordered else rng.sample(range(1, 400), 40)
        lines += lines[:3]  # repeated lines (several commands on one) keep list order
        if ordered:
            lines.sort()
        commands = [SimpleNamespace(line=n, i=i) for i, n in enumerate(lines)]
        lookup = _commands_before(commands)  # type: ignore[arg-type]
        for lo, hi in [(0, 1), (0, 401), *((rng.randrange(400), rng.randrange(400)) for _ in range(300))]:
            want = next((c for c in reversed(commands) if lo <= c.line < hi), None)
            assert lookup(lo, hi) is want, (ordered, lo, hi)
