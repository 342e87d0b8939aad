"""The per-rank memory budget (`run/memory.py`), the `cuda-graph-oversized` trade-off and the memory
remedies computed from it. Every expected number is worked out by hand in the test's comment from
the lines the log prints (GB as SGLang prints them = GiB; bytes per token = GB × 2^30 / #tokens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.model.events import WeightLoadEnd
from logparse.parsing.pipeline import parse_file
from logparse.render.json import render as render_json
from logparse.render.text import render as render_text
from logparse.run.memory import budgets, peak_running

REPO = Path(__file__).resolve().parents[1]
from tests.conftest import CORPUS

LOGS = REPO / "fixtures" / "logs"
RULE = REPO / "fixtures" / "rules" / "cuda-graph-oversized"
SG = "/sgl-workspace/sglang/python/sglang/srt"


def _corpus(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus log {name} not available")
    return path


def _finding(a: object, name: str) -> object:
    found = [f for f in a.all_findings() if f.name == name]  # type: ignore[attr-defined]
    assert found, f"{name} did not fire; fired {sorted(a.fired())}"  # type: ignore[attr-defined]
    return found[0]


# --------------------------------------------------------------------------- the budget


def test_budget_of_a_tp2_run() -> None:
    # baseline-cuda-graph-false.log, TP0: `Load weight begin. avail mem=78.62 GB`; end: avail 47.86, usage 30.76;
    # KV: #tokens 302912, K 18.49 + V 18.49 = 36.98 GB → 36.98 × 2^30 / 302912 = 131084.4 → 131084 bytes/token;
    # `Memory pool end. avail mem=10.21`; capture 9.78 → 8.66, `mem usage=1.12`. server_args mem_fraction_static
    # 0.871 and the command has no --mem-fraction-static: SGLang's default; outside the static pool
    # 78.62 × (1 − 0.871) = 10.142 → 10.14 GB. Both ranks print the same numbers.
    (b,) = budgets(parse_file(str(LOGS / "baseline-cuda-graph-false.log")))
    assert [r.rank for r in b.ranks] == ["TP0", "TP1"]
    r = b.rank("TP0")
    assert r is not None
    assert (r.free_at_start_gb, r.weights_gb, r.avail_after_weights_gb) == (78.62, 30.76, 47.86)
    assert r.kv is not None and (r.kv.tokens, r.kv.gb, r.kv.dtype) == (302912, 36.98, "torch.bfloat16")
    assert r.bytes_per_token == 131084
    assert r.avail_after_pools_gb == 10.21
    assert (r.target_graph_gb, r.free_after_gb, r.draft_graph_gb) == (1.12, 8.66, None)
    assert (b.mem_fraction_static, b.fraction_source) == (0.871, "server_args")
    assert b.reserved_gb == 10.14
    assert max(b.captured_sizes) == 160
    assert [s for s, _gb, _left in r.steps()] == ["weights", "pools", "target graphs"]


def test_budget_of_old_release_lines() -> None:
    # dev-041 (0.4.x: `Load weight end. type=…, dtype=…` without elapsed; capture end prints avail mem
    # before mem usage): free at start 21.63 (begin line); weights 15.54; KV 1.42 + 1.42 = 2.84 GB for
    # 46611 tokens → 2.84 × 2^30 / 46611 = 65423.3 → 65423; graphs `mem usage=0.93` (printed, not the
    # 1.45 − 0.53 = 0.92 difference); free after 0.53. No server_args: no fraction.
    (b,) = budgets(parse_file(str(_corpus("dev-041.log"))))
    assert len(b.ranks) == 4
    r = b.ranks[0]
    assert (r.free_at_start_gb, r.weights_gb, r.bytes_per_token) == (21.63, 15.54, 65423)
    assert (r.target_graph_gb, r.free_after_gb) == (0.93, 0.53)
    assert b.mem_fraction_static is None and b.fraction_source is None


def test_free_at_start_from_weight_end_and_an_unfinished_capture() -> None:
    # dev-035: no `Load weight begin`; `mem usage` is free-before − free-after, so free at start =
    # 17.51 + 21.49 = 39.00. KV 5.23 + 5.23 = 10.46 GB for 22095 tokens → 10.46 × 2^30 / 22095 =
    # 508320.4 → 508320. The capture began at avail 10.11 and the log stops: free after = 10.11, no graph GB.
    (b,) = budgets(parse_file(str(_corpus("dev-035.log"))))
    (r,) = b.ranks
    assert r.free_at_start_gb == 39.0
    assert r.bytes_per_token == 508320
    assert r.target_graph_gb is None and r.free_after_gb == 10.11


def test_tightest_rank_and_the_dtype_field() -> None:
    # dev-030 (0.5.14+ `dtype:` in the KV line): 25.32 × 2 = 50.64 GB for 1106304 tokens → 50.64 × 2^30 /
    # 1106304 = 49149.498 → 49149. Capture begins at 12.07 (TP1) and 11.99 (TP0):
    # TP0 is tightest.
    (b,) = budgets(parse_file(str(_corpus("dev-030.log"))))
    assert b.bytes_per_token == 49149
    tight = b.tightest
    assert tight is not None and tight.rank == "TP0" and tight.free_after_gb == 11.99
    assert b.rank("TP1") is not None and b.rank("TP1").free_after_gb == 12.07  # type: ignore[union-attr]


def test_draft_model_and_mamba_pools() -> None:
    # spec-serving-healthy: the second `Load weight begin/end` is the draft's (usage 0.76); its KV line
    # 0.19 + 0.19 = 0.38 GB; draft graphs 0.44 + draft extend 0.31 = 0.75; target graphs 0.97;
    # --mem-fraction-static 0.85 on the command line.
    (b,) = budgets(parse_file(str(LOGS / "spec-serving-healthy.log")))
    r = b.ranks[0]
    assert (r.draft_weights_gb, r.draft_kv.gb if r.draft_kv else None) == (0.76, 0.38)
    assert (r.draft_graph_gb, r.target_graph_gb) == (0.75, 0.97)
    assert r.bytes_per_token == round(30.24 * (1 << 30) / 396288)  # the target pool's, not the draft's
    assert b.fraction_source == "command"
    # nextn-4-serving: mamba conv 0.10 + ssm 4.39 + intermediate ssm 17.58 + conv 0.39 = 22.46 GB.
    (n,) = budgets(parse_file(str(LOGS / "nextn-4-serving.log")))
    assert n.ranks[0].mamba_gb == 22.46 and n.ranks[0].mamba_size == 144


def test_budget_per_launch(tmp_path: Path) -> None:
    # Two launches (two server_args lines): each has its own budget; the second's weights (40.00) are not
    # the first's (30.00).
    text = "".join(
        f"[2026-03-07 15:3{i}:02] server_args=ServerArgs(model_path='m', mem_fraction_static={frac})\n"
        f"[2026-03-07 15:3{i}:13 TP0] Load weight begin. avail mem=78.00 GB\n"
        f"[2026-03-07 15:3{i}:18 TP0] Load weight end. elapsed=4.12 s, type=LlamaForCausalLM, avail mem={78 - w:.2f} GB, "
        f"mem usage={w:.2f} GB.\n"
        for i, (w, frac) in enumerate([(30.0, 0.8), (40.0, 0.9)])
    )
    p = tmp_path / "two.log"
    p.write_text(text)
    first, second = budgets(parse_file(str(p)))
    assert (first.ranks[0].weights_gb, first.mem_fraction_static) == (30.0, 0.8)
    assert (second.ranks[0].weights_gb, second.mem_fraction_static) == (40.0, 0.9)


def test_weight_end_without_elapsed_or_type_is_parsed(tmp_path: Path) -> None:
    # The newer `Load weight end. quant=fp8, fmt=e4m3, avail mem=…, mem usage=…` form (no elapsed/type).
    p = tmp_path / "w.log"
    p.write_text("[2026-04-05 10:00:00 TP0] Load weight end. quant=fp8, fmt=e4m3, avail mem=12.40 GB, mem usage=82.61 GB.\n")
    (e,) = parse_file(str(p)).of(WeightLoadEnd)
    assert (e.quant, e.avail_mem_gb, e.mem_usage_gb) == ("fp8", 12.4, 82.61)


def test_no_memory_lines_no_budget(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("[2026-03-07 15:30:02] The server is fired up and ready to roll!\nnot a log line \x00 …\n")
    log = parse_file(str(p))
    assert not any(budgets(log))
    a = analyze(str(p))
    assert "memory (GB" not in render_text([a])
    assert all("memory" not in launch for launch in json.loads(render_json([a]))["files"][0]["launches"])


# --------------------------------------------------------------------------- outputs


def test_text_json_and_report_show_the_budget() -> None:
    a = analyze(str(LOGS / "baseline-cuda-graph-false.log"))
    text = render_text([a])
    assert "memory (GB per rank): mem_fraction_static 0.871 (SGLang's default, from server_args)" in text
    # TP0 and TP1 print the same numbers: one row, 36.98 GB KV for 302,912 tokens, 8.66 GB free after.
    assert any(line.split()[:1] == ["TP0–TP1"] and "36.98 (302,912)" in line and line.endswith("8.66")
               for line in text.splitlines())
    doc = json.loads(render_json([a]))
    mem = doc["files"][0]["launches"][-1]["memory"]
    assert mem["kv_bytes_per_token"] == 131084 and mem["captured_max_bs"] == 160
    assert [r["rank"] for r in mem["ranks"]] == ["TP0", "TP1"]
    from logparse.report.model import build_report

    data = build_report(a).data
    assert data["memory"]["ranks"][0]["kv_tokens"] == 302912
    # 78.62 − (30.76 + 36.98 + 1.12 + 8.66) = 1.10 GB the start-up lines do not name.
    assert data["memory"]["ranks"][0]["unaccounted_gb"] == 1.1
    assert "memory-budget" in [p["name"] for p in data["plots"]]


# --------------------------------------------------------------------------- cuda-graph-oversized


def test_oversized_graphs_trade_off() -> None:
    # bad.log: graphs captured up to 160 (1.12 GB on TP0), the largest decode batch is 44 → first captured
    # size ≥ 44 is 48; freed ≈ 1.12 × (1 − 48/160) = 0.784 → 0.78 GB; 0.78 × 2^30 / 131084 = 6389.3 → 6389
    # KV tokens; f = 0.871 + 0.78 / 78.62 = 0.88092 → 0.88 (rounded down).
    f = _finding(analyze(str(RULE / "bad.log")), "cuda-graph-oversized")
    d = f.data  # type: ignore[attr-defined]
    assert d["peak_running_req"] == 44 and d["suggested_cuda_graph_max_bs"] == 48
    assert d["freed_gb_per_rank"] == 0.78 and d["kv_tokens_freed"] == 6389
    assert d["suggested_mem_fraction_static"] == 0.88 and d["current_mem_fraction_static"] == 0.871
    assert "`--cuda-graph-max-bs 48`" in f.remedy and "without CUDA graphs" in f.remedy  # type: ignore[attr-defined]
    assert "6389 KV tokens" in f.message  # type: ignore[attr-defined]


def test_oversized_is_quiet_when_decode_ran_without_graphs_or_near_the_maximum() -> None:
    # The whole baseline log decodes 256 > 160 without graphs: the opposite problem (cuda-graph-not-used).
    assert "cuda-graph-oversized" not in analyze(str(LOGS / "baseline-cuda-graph-false.log")).fired()
    # spec-serving-healthy: captured up to 48, peak #running-req 48.
    log = parse_file(str(LOGS / "spec-serving-healthy.log"))
    assert max(peak_running(log, 1, 10**9).values()) == 48
    assert "cuda-graph-oversized" not in analyze(str(LOGS / "spec-serving-healthy.log")).fired()


def test_cuda_graph_not_used_states_the_graph_cost() -> None:
    # Raising 160 → 256: ≈ 1.12 × (256/160 − 1) = 0.672 → 0.67 GB more per rank = 0.67 × 2^30 / 131084 =
    # 5488.1 → 5488 KV tokens' worth; 8.66 GB were free after start-up (enough).
    f = _finding(analyze(str(LOGS / "baseline-cuda-graph-false.log")), "cuda-graph-not-used")
    d = f.data  # type: ignore[attr-defined]
    assert d["suggested_cuda_graph_max_bs"] == 256
    assert (d["extra_graph_gb_per_rank"], d["kv_tokens_cost"], d["free_after_startup_gb"]) == (0.67, 5488, 8.66)
    assert "0.67 GB more graph memory per rank" in f.remedy  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- OOM remedies


def _capture_oom_log(tmp_path: Path, hint: bool, flag: str = "--cuda-graph-max-bs") -> Path:
    solutions = (
        "Possible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
        + (f"2. set {flag} to a smaller value (e.g., 16)\n" if hint else "")
        + "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
    )
    sizes = ", ".join(str(s) for s in [1, 2, 4, 8, *range(16, 257, 8), *range(272, 513, 16)])
    text = (
        "[2026-03-07 15:30:02] server_args=ServerArgs(model_path='m', tp_size=4, mem_fraction_static=0.9, cuda_graph_max_bs=512)\n"
        "[2026-03-07 15:30:13 TP0] Load weight begin. avail mem=78.31 GB\n"
        "[2026-03-07 15:30:18 TP0] Load weight end. elapsed=4.12 s, type=LlamaForCausalLM, avail mem=44.27 GB, mem usage=34.04 GB.\n"
        "[2026-03-07 15:30:19 TP0] KV Cache is allocated. #tokens: 444877, K size: 17.00 GB, V size: 17.00 GB\n"
        "[2026-03-07 15:30:19 TP0] Memory pool end. avail mem=8.43 GB\n"
        "[2026-03-07 15:30:20 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=7.81 GB\n"
        f"[2026-03-07 15:30:20 TP0] Capture cuda graph bs [{sizes}]\n"
        "[2026-03-07 15:31:11 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/managers/scheduler.py", line 100, in __init__\n    x = y()\n'
        f'  File "{SG}/model_executor/model_runner.py", line 100, in init_device_graphs\n    x = y()\n'
        f'  File "{SG}/model_executor/cuda_graph_runner.py", line 100, in __init__\n    x = y()\n'
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total "
        "capacity of 79.11 GiB of which 120.50 MiB is free.\n" + solutions
    )
    p = tmp_path / ("hint.log" if hint else "nohint.log")
    p.write_text(text)
    return p


@pytest.mark.parametrize("flag", ["--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"])
def test_capture_oom_follows_sglangs_hint(tmp_path: Path, flag: str) -> None:
    # SGLang's message says `--cuda-graph-max-bs … (e.g., 16)` (0.5.23: `--cuda-graph-max-bs-decode`): the
    # remedy is that flag at 16, not 512 / 2 = 256.
    f = _finding(analyze(str(_capture_oom_log(tmp_path, hint=True, flag=flag))), "cuda-oom")
    d = f.data  # type: ignore[attr-defined]
    assert d["sglang_hint_cuda_graph_max_bs"] == 16 and d["suggested_cuda_graph_max_bs"] == 16
    assert f"`{flag} 16`" in f.remedy and "256" not in f.remedy  # type: ignore[attr-defined]


def test_capture_oom_without_a_hint_sizes_from_the_budget(tmp_path: Path) -> None:
    # Free at capture begin 7.81 GB, 120.50 MiB free at the OOM, 448 MiB asked: the graphs need at least
    # 7.81 − 0.1177 + 0.4375 = 8.1298 → 8.13 GB; 512 × 7.81 × 0.9 / 8.13 = 442.7 → 442; the largest captured
    # size ≤ 442 is 432.
    f = _finding(analyze(str(_capture_oom_log(tmp_path, hint=False))), "cuda-oom")
    d = f.data  # type: ignore[attr-defined]
    assert (d["capture_avail_gb"], d["capture_need_gb_at_least"]) == (7.81, 8.13)
    assert d["suggested_cuda_graph_max_bs"] == 432 and "sglang_hint_cuda_graph_max_bs" not in d
    assert "`--cuda-graph-max-bs 432`" in f.remedy  # type: ignore[attr-defined]


def test_kv_pool_warning_uses_the_printed_bytes_per_token(tmp_path: Path) -> None:
    # f = 0.5; weights 78.31 − 44.27 = 34.04 GB; SGLang continued with 60000 tokens and printed their KV
    # pool: 2.50 + 2.50 = 5.00 GB → 5 × 2^30 / 60000 = 89478.5 → 89478 bytes/token. 200000 tokens need
    # f ≥ (34.04 + 200000 × 89478 / 2^30) / 78.31 = (34.04 + 16.667) / 78.31 = 0.6475; + 0.01 → 0.6575 → 0.66.
    p = tmp_path / "kv.log"
    p.write_text(
        "[2026-03-07 15:30:02] server_args=ServerArgs(model_path='m', mem_fraction_static=0.5, max_total_tokens=200000)\n"
        "[2026-03-07 15:30:13 TP0] Load weight begin. avail mem=78.31 GB\n"
        "[2026-03-07 15:30:18 TP0] Load weight end. elapsed=4.12 s, type=LlamaForCausalLM, avail mem=44.27 GB, mem usage=34.04 GB.\n"
        "[2026-03-07 15:30:19 TP0] max_total_tokens=200000 is larger than the profiled value 60000. Use the profiled value instead.\n"
        "[2026-03-07 15:30:19 TP0] KV Cache is allocated. #tokens: 60000, K size: 2.50 GB, V size: 2.50 GB\n"
    )
    f = _finding(analyze(str(p)), "kv-pool-no-room")
    d = f.data  # type: ignore[attr-defined]
    assert d["kv_bytes_per_token"] == 89478 and d["kv_bytes_per_token_from"] == "KV Cache is allocated"
    assert d["suggested_mem_fraction_static"] == 0.66


@pytest.mark.parametrize("numpy_from", [1, 10**9])
def test_peak_running_per_rank_numpy_and_python_agree(monkeypatch: pytest.MonkeyPatch, numpy_from: int) -> None:
    # The baseline log's decode lines are all TP0's; the largest #running-req is 256 (the lines without graphs).
    # Up to line 152 (bad.log's cut) the largest is 44.
    from logparse.parsing import colstats

    monkeypatch.setattr(colstats, "NUMPY_FROM", numpy_from)
    log = parse_file(str(LOGS / "baseline-cuda-graph-false.log"))
    assert peak_running(log, 1, 10**9) == {"TP0": 256}
    assert peak_running(log, 1, 152) == {"TP0": 44}
    assert peak_running(log, 10**8, 10**9) == {}
