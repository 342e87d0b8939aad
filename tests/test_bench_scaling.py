"""The scaling benchmark harness (benchmarks/scaling.py): the exponent fit and the target
evaluation on synthetic numbers, and one tiny real run for the report's structure. No
wall-clock assertions: the machine's speed is never asserted, only what the harness computes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks import scaling


def test_fit_exponent_recovers_power_laws():
    xs = [100_000, 1_000_000, 4_000_000]
    assert scaling.fit_exponent(xs, [2e-6 * x for x in xs]) == pytest.approx(1.0)
    assert scaling.fit_exponent(xs, [3e-12 * x**2 for x in xs]) == pytest.approx(2.0)
    assert scaling.fit_exponent(xs, [250.0, 250.0, 250.0]) == pytest.approx(0.0)
    # the superlinear case: cost ~ lines^1.76
    assert scaling.fit_exponent(xs, [x**1.76 for x in xs]) == pytest.approx(1.76)


def test_fit_exponent_is_least_squares_not_endpoints():
    # log-log points (0,0), (1,1), (2,3), (3,3): the least-squares slope (1.1), not the
    # endpoints' (1.0) nor any one segment's
    xs = [1.0, math.e, math.e**2, math.e**3]
    ys = [1.0, math.e, math.e**3, math.e**3]  # logs 0, 1, 3, 3
    # slope = cov/var with x = 0..3 (mean 1.5), y = 0,1,3,3 (mean 1.75)
    expected = ((-1.5) * (-1.75) + (-0.5) * (-0.75) + 0.5 * 1.25 + 1.5 * 1.25) / 5.0
    assert scaling.fit_exponent(xs, ys) == pytest.approx(expected)


@pytest.mark.parametrize(("xs", "ys"), [([1000], [1.0]), ([1000, 1000], [1.0, 2.0]),
                                        ([1000, 2000], [1.0, 0.0]), ([], [])])
def test_fit_exponent_undefined(xs, ys):
    assert scaling.fit_exponent(xs, ys) is None


def _cell(wall: float, rss: float = 100.0, ok: bool = True, cpu: float | None = None) -> dict[str, Any]:
    return {"ok": ok, "wall_s": wall, "peak_rss_mib": rss, "cpu_s": wall if cpu is None else cpu}


def _runs(scale: dict[int, float], rss: dict[int, float]) -> dict[str, Any]:
    """Synthetic profile: reference linear; analyze 1.2x reference; --jobs 2 1.8x faster;
    check 1.1x and report 1.5x analyze; analyze time grows by `scale`."""
    out: dict[str, Any] = {}
    for n, f in scale.items():
        ref = n / 150_000
        j1 = ref * 1.2 * f
        out[str(n)] = {"lines": n, "tools": {
            "reference": _cell(ref, 800.0),
            "analyze-j1": _cell(j1, rss[n]),
            "analyze-j2": _cell(j1 / 1.8, rss[n] * 0.9),
            "check": _cell(j1 * 1.1),
            "report": _cell(j1 * 1.5),
        }}
    return out


def test_evaluate_reads_the_targets_at_1m():
    runs = _runs({100_000: 1.0, 1_000_000: 1.0, 4_000_000: 1.0},
                 {100_000: 120.0, 1_000_000: 200.0, 4_000_000: 320.0})
    exps = scaling.fits(runs)
    assert exps["reference"]["wall"] == pytest.approx(1.0)
    assert exps["analyze-j1"]["wall"] == pytest.approx(1.0)
    assert exps["analyze-j1"]["points"] == 3
    t = scaling.evaluate(runs, exps)
    assert t["one_core_ratio"]["value"] == pytest.approx(1.2)
    assert t["one_core_ratio"]["status"] == "met"
    assert t["one_core_ratio"]["at_lines"] == 1_000_000
    assert t["two_proc_speedup"]["value"] == pytest.approx(1.8)
    assert t["two_proc_speedup"]["status"] == "met"
    assert t["check_ratio"]["value"] == pytest.approx(1.1)
    assert t["check_ratio"]["status"] == "met"
    assert t["report_ratio"]["value"] == pytest.approx(1.5)
    assert t["report_ratio"]["status"] == "MISSED"
    # RSS: the largest of both analyze runs at 1M and 4M (not the 100k run)
    assert t["peak_rss_mib"]["value"] == pytest.approx(320.0)
    assert t["peak_rss_mib"]["status"] == "MISSED"
    assert t["peak_rss_mib"]["at_lines"] == [1_000_000, 4_000_000]
    assert t["wall_exponent"]["status"] == "met"


def test_evaluate_flags_superlinear_growth_and_failures():
    # analyze's cost per line grows 3x from 100k to 4M: exponent well above 1.05
    runs = _runs({100_000: 1.0, 1_000_000: 2.0, 4_000_000: 3.0},
                 {100_000: 100.0, 1_000_000: 100.0, 4_000_000: 100.0})
    runs["1000000"]["tools"]["analyze-j2"] = {"ok": False, "error": "exit code 3"}
    exps = scaling.fits(runs)
    assert exps["analyze-j1"]["wall"] > 1.2
    assert exps["analyze-j2"]["points"] == 2  # the failed size is left out of the fit
    t = scaling.evaluate(runs, exps)
    assert t["wall_exponent"]["status"] == "MISSED"
    assert t["two_proc_speedup"]["value"] is None
    assert t["two_proc_speedup"]["status"] == "n/a"
    assert t["one_core_ratio"]["value"] == pytest.approx(2.4)
    assert t["one_core_ratio"]["status"] == "MISSED"


def test_cpu_ratios_read_cpu_seconds_at_1m():
    runs = _runs({100_000: 1.0, 1_000_000: 1.0}, {100_000: 100.0, 1_000_000: 100.0})
    cells = runs["1000000"]["tools"]
    # a loaded machine stretched the reference's wall time, not its CPU time
    cells["reference"] = _cell(cells["reference"]["wall_s"] * 2, 800.0, cpu=cells["reference"]["wall_s"])
    cells["report"] = _cell(cells["report"]["wall_s"], cpu=cells["analyze-j1"]["wall_s"] * 1.25)
    t = scaling.evaluate(runs, scaling.fits(runs))
    c = scaling.cpu_ratios(runs)
    assert t["one_core_ratio"]["value"] == pytest.approx(0.6)
    assert c["one_core_ratio"] == pytest.approx(1.2)
    assert c["check_ratio"] == pytest.approx(1.1)
    assert c["report_ratio"] == pytest.approx(1.25)
    runs["1000000"]["tools"]["check"] = {"ok": False, "error": "exit code 3"}
    assert scaling.cpu_ratios(runs)["check_ratio"] is None


def test_evaluate_without_1m_uses_the_largest_size():
    runs = _runs({2000: 1.0, 8000: 1.0}, {2000: 30.0, 8000: 40.0})
    t = scaling.evaluate(runs, scaling.fits(runs))
    assert t["one_core_ratio"]["at_lines"] == 8000
    assert t["peak_rss_mib"]["at_lines"] == [8000]
    assert t["peak_rss_mib"]["value"] == pytest.approx(40.0)


def test_quick_run_report_structure(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    dest = tmp_path / "scaling.json"
    rc = scaling.main([
        "--quick", "--sizes", "600,1500", "--profiles", "serving-heavy",
        "--tools", "floor-lines,reference,analyze-j1", "--no-startup", "--quiet",
        "--out", str(tmp_path), "--json", str(dest),
    ])
    assert rc == 0
    res = json.loads(dest.read_text())
    assert res["sizes"] == [600, 1500]
    assert res["logdiag"]["logparse_file"].endswith("logparse/__init__.py")
    prof = res["profiles"]["serving-heavy"]
    assert sorted(prof["runs"], key=int) == ["600", "1500"]
    for size, block in prof["runs"].items():
        assert block["lines"] >= int(size)
        assert set(block["tools"]) == {"floor-lines", "reference", "analyze-j1"}
        for tool, cell in block["tools"].items():
            assert cell["ok"], (tool, cell)
            assert cell["wall_s"] > 0 and cell["peak_rss_mib"] > 0
            assert cell["lines_per_s"] == pytest.approx(block["lines"] / cell["wall_s"])
    for tool in ("floor-lines", "reference", "analyze-j1"):
        assert prof["exponents"][tool]["points"] == 2
        assert prof["exponents"][tool]["wall"] is not None
    assert set(prof["targets"]) == set(scaling.TARGETS)
    assert prof["targets"]["one_core_ratio"]["status"] in ("met", "MISSED")
    assert prof["targets"]["two_proc_speedup"]["status"] == "n/a"  # --jobs 2 not run
    out = capsys.readouterr().out
    assert "| profile | lines |" in out
    assert "| serving-heavy | " in out
    assert "Fitted exponents" in out and "Targets (issue 10)" in out


def test_compare_pairs_cells_and_computes_cpu_speedup():
    def res(commit: str, cpu: float) -> dict[str, Any]:
        cells = {"reference": {"ok": True, "wall_s": 10.0, "cpu_s": 8.0, "peak_rss_mib": 700.0},
                 "analyze-j1": {"ok": True, "wall_s": 2 * cpu, "cpu_s": cpu, "peak_rss_mib": 200.0}}
        return {"logdiag": {"commit": commit},
                "profiles": {"serving-heavy": {"runs": {"1000000": {"lines": 1_000_000,
                                                                    "tools": cells}}}}}
    text = scaling.compare(res("aaa", 24.0), res("bbb", 12.0))
    rows = [x for x in text.splitlines() if x.startswith("| serving-heavy")]
    assert len(rows) == 1
    assert "before (aaa)" in text and "after (bbb)" in text
    assert "| 48.0 / 24.0 / 3.00 / 200 | 24.0 / 12.0 / 1.50 / 200 | 2.00× |" in rows[0]
