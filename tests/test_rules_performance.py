"""Performance family: cuda-graph-not-used, kv-cache-saturated."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.rules.performance import round_bs
from tests.conftest import CORPUS
from tests.conftest import analyze_text as run
from tests.conftest import findings_named as named

REPO = Path(__file__).resolve().parents[1]


def decode(sec: int, running: int, graph: bool, usage: float = 0.10, queue: int = 0) -> str:
    return (f"[2026-03-11 14:07:{sec:02d} TP0] Decode batch, #running-req: {running}, #token: {running * 700}, "
            f"token usage: {usage:.2f}, cuda graph: {graph}, gen throughput (token/s): {running * 15.0:.2f}, "
            f"#queue-req: {queue}")


@pytest.mark.parametrize(("n", "want"), [(1, 1), (3, 4), (8, 8), (9, 16), (161, 168), (256, 256), (257, 272)])
def test_round_bs(n: int, want: int) -> None:
    assert round_bs(n) == want


def test_graph_max_bs_covering_the_observed_batches() -> None:
    a = analyze(str(REPO / "fixtures/logs/baseline-cuda-graph-false.log"))
    [f] = named(a, "cuda-graph-not-used")
    assert f.data["captured_max_bs"] == 160
    assert f.data["max_running_false"] == 256
    assert f.data["suggested_cuda_graph_max_bs"] == 256
    assert f.data["min_running_false"] > 160
    assert "--cuda-graph-max-bs 256" in f.remedy
    assert a.root_cause is None


def test_unknown_capture_sizes_are_not_guessed() -> None:
    a = analyze(str(CORPUS / "dev-003.log"))
    [f] = named(a, "cuda-graph-not-used")
    assert f.data["captured_max_bs"] is None
    assert "cannot be decided" in f.message and "Capture cuda graph bs" in f.message


def test_disabled_graphs(tmp_path: Path) -> None:
    text = ("Cuda graph is disabled because of using torch native attention backend\n"
            + "\n".join(decode(10 + i, 4 + i, False) for i in range(3)) + "\n")
    a = run(tmp_path, text)
    [f] = named(a, "cuda-graph-not-used")
    assert f.data["disabled_by"] and "torch native" in f.data["disabled_by"]
    assert "attention-backend" in f.remedy


def test_min_lines_threshold(tmp_path: Path) -> None:
    text = "\n".join([decode(10, 200, False)] + [decode(11 + i, 100, True) for i in range(3)]) + "\n"
    assert "cuda-graph-not-used" in run(tmp_path, text).fired()
    assert "cuda-graph-not-used" not in run(tmp_path, text, {"cuda-graph-not-used": {"min_lines": 2}}).fired()


def test_prefill_cuda_graph_false_is_normal(tmp_path: Path) -> None:
    text = ("[2026-03-11 14:07:10 TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
            "#running-req: 0, #queue-req: 0, cuda graph: False, input throughput (token/s): 8000.00\n"
            + decode(11, 1, True) + "\n")
    assert "cuda-graph-not-used" not in run(tmp_path, text).fired()


# --------------------------------------------------------------------------- kv-cache-saturated


def test_saturated_while_queueing() -> None:
    a = analyze(str(CORPUS / "dev-024.log"))
    [f] = named(a, "kv-cache-saturated")
    assert f.data["token_usage_max"] == 1.0 and f.data["queue_req_max"] == 3
    assert "--max-running-requests 3" in f.remedy


def test_queue_without_saturation_is_not_saturation() -> None:
    assert "kv-cache-saturated" not in analyze(str(CORPUS / "dev-038.log")).fired()


def test_saturation_level_is_configurable_and_suggests_mem_fraction(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --mem-fraction-static 0.85\n"
            + "\n".join(decode(10 + i, 64, True, usage=0.86, queue=5) for i in range(3)) + "\n")
    assert "kv-cache-saturated" not in run(tmp_path, text).fired()
    a = run(tmp_path, text, {"kv-cache-saturated": {"token_usage": 0.85}})
    [f] = named(a, "kv-cache-saturated")
    assert f.data["suggested_mem_fraction_static"] == 0.88
    assert "--mem-fraction-static 0.88" in f.remedy


def test_usage_without_queue_is_fine(tmp_path: Path) -> None:
    text = "\n".join(decode(10 + i, 64, True, usage=0.97, queue=0) for i in range(4)) + "\n"
    assert "kv-cache-saturated" not in run(tmp_path, text).fired()


def test_one_stats_line_whose_queue_dwarfs_the_batch_is_saturation() -> None:
    # dev/i-030 (v0.2.x): one decode line, usage 0.93, 1010 running, 12279 queued.
    a = analyze(str(REPO / "fixtures/rules/kv-cache-saturated/bad-single-line.log"))
    [f] = named(a, "kv-cache-saturated")
    assert f.data["lines"] == 1 and f.data["queue_req_max"] == 12279
    assert "on a stats line" in f.message


@pytest.mark.parametrize(("running", "queue", "fires"), [
    (64, 128, True),   # twice the batch waits: admission is blocked by KV room
    (64, 100, False),  # fewer than twice the batch: could be a burst being admitted
    (1, 5, False),     # a tiny batch: below the absolute floor
    (4, 16, True),
])
def test_the_single_line_threshold(tmp_path: Path, running: int, queue: int, fires: bool) -> None:
    text = decode(10, running, True, usage=0.95, queue=queue) + "\n"
    assert ("kv-cache-saturated" in run(tmp_path, text).fired()) is fires
    # Below the usage threshold one line never is, whatever the queue.
    low = decode(10, running, True, usage=0.80, queue=queue * 10) + "\n"
    assert "kv-cache-saturated" not in run(tmp_path, low, name="low.log").fired()
