"""Hang rules: watchdog-timeout (stuck batch size), startup-stalled (last phase per rank and for how
long; an error only when a wrapper says the server was not ready in time), jit-compile-stall."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.model.events import Severity
from tests.conftest import only_finding as only
from tests.conftest import write_log as write

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "rules"
from tests.conftest import CORPUS

FAMILY = ["watchdog-timeout", "startup-stalled", "jit-compile-stall"]


# --------------------------------------------------------------------------- watchdog-timeout


def test_watchdog_reports_the_stuck_batch() -> None:
    a = analyze(str(CORPUS / "dev-023.log"))
    f = a.root_cause
    assert f is not None and f.name == "watchdog-timeout" and f.ranks == ["TP0"]
    assert f.data["watchdog_timeout_s"] == 300 and f.data["watchdog_batch_size"] == 26
    assert "batch of 26 request(s)" in f.message and "JIT compile (cascade)" in f.message
    assert "py-spy" in f.remedy and "`--watchdog-timeout 600`" in f.remedy
    assert f.data["consequence_lines"] == [5]  # the sigquit that followed
    assert a.outcome == "hung"
    assert not {"nccl-timeout", "host-oom"} & a.fired()


def test_soft_watchdog_is_a_warning_and_not_a_hang(tmp_path: Path) -> None:
    log = (
        "[2026-03-07 15:40:00 TP0] Decode batch, #running-req: 3, #token: 900, token usage: 0.01, cuda graph: True, "
        "gen throughput (token/s): 90.00, #queue-req: 0\n"
        "[2026-03-07 15:45:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=True)\n"
    )
    a = analyze(write(tmp_path, log))
    f = only(a, "watchdog-timeout")
    assert f.severity == Severity.WARNING and f.data["soft"] is True
    assert a.root_cause is None and a.outcome == "serving"


# --------------------------------------------------------------------------- startup-stalled


def test_startup_stalled_per_rank_phases() -> None:
    f = only(analyze(str(CORPUS / "dev-037.log")), "startup-stalled")
    ranks = f.data["ranks"]
    assert set(ranks) == {"TP1", "TP2", "TP3", "TP5"}
    assert {r["phase"] for r in ranks.values()} == {"dist-init"} and not any(
        r["complete"] for r in ranks.values()
    )
    assert ranks["TP3"]["since_s"] == 2.0  # begun 09:20:03, the log ends 09:20:05
    assert "TP1–TP3, TP5: dist-init (in progress" in f.message
    assert "NCCL_SOCKET_IFNAME" in f.remedy and f.severity == Severity.WARNING


def test_startup_stalled_reports_how_long_since_the_last_phase() -> None:
    f = only(analyze(str(CORPUS / "dev-009.log")), "startup-stalled")
    tp0, tp6 = f.data["ranks"]["TP0"], f.data["ranks"]["TP6"]
    assert (tp0["phase"], tp0["took_s"], tp0["since_s"]) == ("capture-target", 12.11, 120.0)
    assert (tp6["phase"], tp6["took_s"]) == ("capture-draft", 62.67)


def test_startup_stalled_weight_loading_progress() -> None:
    a = analyze(str(CORPUS / "dev-001.log"))
    f = only(a, "startup-stalled")
    assert f.data["last_phase"] == "weight-load" and "1/4 shards" in f.message
    assert "disk" in f.remedy and a.root_cause is None and a.outcome == "incomplete"


def test_startup_stalled_uses_timestamps_of_unrecognised_lines() -> None:
    f = only(analyze(str(CORPUS / "dev-030.log")), "startup-stalled")
    assert f.data["ranks"]["TP0"]["since_s"] == 11.0  # a glued TP1 line at 07:21:05 ends the log


@pytest.mark.parametrize("name", ["dev-041", "dev-040", "dev-004", "dev-002"])
def test_not_stalled_when_ready_serving_or_failed(name: str) -> None:
    assert "startup-stalled" not in analyze(str(CORPUS / f"{name}.log")).fired()


def test_wrapper_not_ready_in_time_is_the_root(tmp_path: Path) -> None:
    log = (
        "[2026-03-07 15:30:10 TP0] Load weight begin. avail mem=78.31 GB\n"
        "[2026-03-07 15:30:10 TP1] Load weight begin. avail mem=78.31 GB\n"
        "2026-03-07 15:40:10 launcher ERROR: sglang server did not become ready within 600 seconds\n"
    )
    a = analyze(write(tmp_path, log))
    f = only(a, "startup-stalled")
    assert f.severity == Severity.ERROR and a.root_cause is f
    assert "not ready in time" in f.message and "TP0, TP1: weight-load" in f.message
    assert a.outcome == "hung"


# --------------------------------------------------------------------------- jit-compile-stall


def test_jit_gap() -> None:
    a = analyze(str(CORPUS / "dev-022.log"))
    f = only(a, "jit-compile-stall")
    assert f.data["jit_compile_s"] == 20.4 and "20.4 s" in f.message
    assert "~/.cache/flashinfer" in f.remedy
    assert a.root_cause is None and a.outcome == "serving"


def test_jit_begin_without_end() -> None:
    f = only(analyze(str(CORPUS / "dev-023.log")), "jit-compile-stall")
    assert f.data["finished"] is False and "watchdog fired on line 2" in f.message


def test_jit_at_the_very_end_shows_no_stall(tmp_path: Path) -> None:
    log = "2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Loading JIT ops: cascade\n"
    assert "jit-compile-stall" not in analyze(write(tmp_path, log)).fired()


def test_a_start_up_cut_after_a_weight_loaders_notice_names_weight_loading(tmp_path: Path) -> None:
    # sglang-jax prints no SGLang phase line while it loads weights, only its loader's notices.
    from tests.conftest import analyze_text
    text = ("[2026-01-06 07:50:27 TP0] Starting parallel weight loading via JAX Lazy Loader...\n"
            "[2026-01-06 07:50:27 TP0] No file found for weight: model.layers.0.self_attn.o_proj.bias\n")
    a = analyze_text(tmp_path, text)
    f = next(f for f in a.all_findings() if f.name == "startup-stalled")
    assert f.data["last_phase"] == "weight-load" and "weight-load" in f.message
    assert a.outcome == "incomplete"
