"""The report's data model, section by section: timing, serving, speculative decoding, baseline
comparison, benchmarks, configuration — on corpus excerpts, whole-run fixtures and small logs
written here (whose numbers the assertions derive from, not copy)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logparse.engine.core import analyze
from logparse.report.model import build_report
from logparse.report.serving import bucket_label, bucket_of
from tests.conftest import CORPUS, REPO

LOGS = REPO / "fixtures" / "logs"

SPEC_ARGS = (
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='d/eagle', speculative_num_steps=3, "
    "speculative_eagle_topk=1, speculative_num_draft_tokens=4, "
)


def decode_line(
    ts: str,
    rank: str,
    running: int,
    gen: float,
    *,
    accept: float | None = None,
    graph: bool = True,
    queue: int = 0,
    usage: float = 0.05,
) -> str:
    spec = (
        f"accept len: {accept:.2f}, accept rate: {accept / 4:.2f}, " if accept is not None else ""
    )
    return (
        f"[{ts} {rank}] Decode batch, #running-req: {running}, #token: {running * 1000}, "
        f"token usage: {usage:.2f}, {spec}cuda graph: {graph}, gen throughput (token/s): {gen:.2f}, "
        f"#queue-req: {queue}"
    )


def write_serving_log(
    path: Path,
    *,
    spec: bool,
    throughput: dict[int, float],
    accept: float = 3.0,
    env: str = "",
    tp: int = 2,
    ranks: tuple[str, ...] = ("TP0",),
    extra_args: str = "",
    lines_per_level: int = 4,
    dp_attention: bool = False,
) -> Path:
    """A small server log: launch command, server_args, then decode stats lines at the given
    #running-req levels with the given gen throughput (one line per rank per step)."""
    args = (
        f"model_path='org/model', tp_size={tp}, attention_backend='fa3', mem_fraction_static=0.85, "
        f"{SPEC_ARGS if spec else ''}enable_dp_attention={dp_attention}, random_seed={7 if spec else 8}, "
        f"{extra_args}port=30000"
    )
    flags = "--speculative-algorithm EAGLE3 " if spec else ""
    out = [
        f"$ {env + ' ' if env else ''}python3 -m sglang.launch_server --model-path org/model --tp {tp} {flags}",
        f"[2026-05-01 10:00:00] server_args=ServerArgs({args})",
    ]
    sec = 0
    for running, gen in throughput.items():
        for _ in range(lines_per_level):
            sec += 5
            ts = f"2026-05-01 10:{sec // 60:02d}:{sec % 60:02d}"
            for i, rank in enumerate(ranks):
                # DP ranks accept differently: rank i gets accept + 0.5 * i.
                out.append(
                    decode_line(ts, rank, running, gen, accept=(accept + 0.5 * i) if spec else None)
                )
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def report_of(path: Path | str, baseline: Path | str | None = None, **kw: Any) -> dict[str, Any]:
    base = analyze(str(baseline)) if baseline is not None else None
    return build_report(analyze(str(path)), base, source=Path(path).name, **kw).data


# --------------------------------------------------------------------------- buckets


@pytest.mark.parametrize(
    ("running", "bucket", "label"),
    [
        (1, (1, 1), "1"),
        (2, (2, 2), "2"),
        (3, (3, 4), "3–4"),
        (4, (3, 4), "3–4"),
        (5, (5, 8), "5–8"),
        (8, (5, 8), "5–8"),
        (9, (9, 16), "9–16"),
        (48, (33, 64), "33–64"),
        (256, (129, 256), "129–256"),
        (0, (0, 0), "0"),
    ],
)
def test_concurrency_buckets(running: int, bucket: tuple[int, int], label: str) -> None:
    assert bucket_of(running) == bucket
    assert bucket_label(*bucket) == label


# --------------------------------------------------------------------------- timing


def test_startup_phases_ready_and_slowest_rank_on_the_healthy_run() -> None:
    t = report_of(LOGS / "spec-serving-healthy.log")["timing"]
    assert t["ready"] is True
    # Ready line 127 at 08:48:42, launch's first timestamp 08:47:27 (server_args).
    assert t["ready_line"] == 127
    assert t["time_to_ready_s"] == 75.0
    ranks = {r["rank"]: r for r in t["ranks"]}
    assert set(ranks) == {"TP0", "TP1", "TP2", "TP3", "main"}
    tp0 = {p["phase"]: p for p in ranks["TP0"]["phases"]}
    # The draft model's second weight load is its own phase, not merged into the first.
    assert tp0["weight-load"]["duration_s"] == 41.22
    assert tp0["draft-weight-load"]["duration_s"] == 1.88
    assert {"capture-target", "capture-draft", "capture-draft-extend", "kv-alloc"} <= set(tp0)
    # Bars start where the phase began: weight load began 8 s after the launch's first timestamp.
    assert tp0["weight-load"]["start_s"] == 8.0
    slow = t["slowest_rank"]
    assert slow["rank"] == "TP3"  # the largest elapsed times on every phase
    assert slow["longest_phase"] == "weight-load"


def test_progress_bars_give_capture_and_load_rates() -> None:
    progress = report_of(LOGS / "spec-serving-healthy.log")["timing"]["progress"]
    loads = [p for p in progress if p["kind"] == "checkpoint-load"]
    captures = [p for p in progress if p["kind"] == "capture"]
    assert loads[0]["done"] == loads[0]["total"] == 30
    assert loads[0]["rate_per_s"] == round(30 / loads[0]["elapsed_s"], 3)
    assert loads[0]["phase"] == "weight-load"
    assert [c["phase"] for c in captures] == [
        "capture-target",
        "capture-draft",
        "capture-draft-extend",
    ]
    assert all(c["complete"] and c["unit"] == "batch sizes" for c in captures)


def test_unlogged_gaps_respect_the_threshold(tmp_path: Path) -> None:
    log = tmp_path / "gaps.log"
    log.write_text(
        "[2026-05-01 10:00:00 TP0] Init torch distributed begin.\n"
        "[2026-05-01 10:00:02 TP0] Init torch distributed ends. elapsed=2.00 s, mem usage=0.7 GB\n"
        "[2026-05-01 10:00:02 TP0] Load weight begin. avail mem=78.00 GB\n"
        "[2026-05-01 10:02:02 TP0] Load weight end. elapsed=120.00 s, type=LlamaForCausalLM, avail mem=40.00 GB, "
        "mem usage=38.00 GB.\n"
        "[2026-05-01 10:02:47 TP0] KV Cache is allocated. #tokens: 1000, K size: 1.00 GB, V size: 1.00 GB\n",
        encoding="utf-8",
    )
    gaps = report_of(log)["timing"]["gaps"]
    assert [(g["from_line"], g["to_line"], g["gap_s"], g["during"]) for g in gaps["items"]] == [
        (3, 4, 120.0, "weight-load"),
        (4, 5, 45.0, "startup, between phases"),
    ]
    assert report_of(log, gap_threshold_s=60.0)["timing"]["gaps"]["count"] == 1


def test_slowest_rank_names_the_phase_that_lagged(tmp_path: Path) -> None:
    lines = []
    for rank, load in (("TP0", 30.0), ("TP1", 31.0), ("TP2", 95.0), ("TP3", 30.5)):
        lines += [
            f"[2026-05-01 10:00:00 {rank}] Load weight begin. avail mem=78.00 GB",
            (
                f"[2026-05-01 10:{int(load) // 60:02d}:{int(load) % 60:02d} {rank}] Load weight end. "
                f"elapsed={load:.2f} s, type=X, avail mem=40.00 GB, mem usage=38.00 GB."
            ),
            (
                f"[2026-05-01 10:{int(load) // 60:02d}:{int(load) % 60:02d} {rank}] Capture cuda graph begin. "
                "This can take up to several minutes. avail mem=14.28 GB"
            ),
            (
                f"[2026-05-01 10:{int(load + 5) // 60:02d}:{int(load + 5) % 60:02d} {rank}] Capture cuda graph "
                "end. Time elapsed: 5.00 s. mem usage=0.97 GB. avail mem=13.31 GB."
            ),
        ]
    log = tmp_path / "slow.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    slow = report_of(log)["timing"]["slowest_rank"]
    assert slow["rank"] == "TP2"
    assert slow["phase"] == "weight-load"
    assert slow["phase_median_s"] == 30.75  # median of 30, 30.5, 31, 95
    assert slow["excess_s"] == round(95.0 - 30.75, 2)


def test_multi_launch_log_times_the_last_launch() -> None:
    t = report_of(LOGS / "nextn-hybrid-launch.log")["timing"]
    assert t["launches"] >= 2
    assert t["ready"] is True
    # Measured from the last launch's own first timestamp, not the first attempt's (26 minutes earlier).
    assert t["time_to_ready_s"] is not None and t["time_to_ready_s"] < 600
    assert any(g["during"] == "between launches" for g in t["gaps"]["items"])


def test_crash_at_startup_has_no_ready_and_stops_in_weight_load() -> None:
    data = report_of(LOGS / "eagle3-kv-pool.log")
    t = data["timing"]
    assert t["ready"] is False and t["time_to_ready_s"] is None
    assert {r["last_phase"] for r in t["ranks"]} == {"weight-load"}
    assert data["summary"]["outcome"] == "crashed-at-startup"
    assert data["summary"]["root_cause"]["name"] == "kv-pool-no-room"


def test_corpus_startup_excerpt() -> None:
    t = report_of(CORPUS / "dev-041.log")["timing"]
    assert t["ready"] is True
    assert len([r for r in t["ranks"] if r["rank"].startswith("TP")]) == 4
    # dev-041 mixes dated and time-only stamps on the main process: no absurd gap from comparing them.
    assert all(g["gap_s"] < 86400 for g in t["gaps"]["items"])


# --------------------------------------------------------------------------- serving


def test_serving_by_concurrency_and_cuda_graph_use() -> None:
    s = report_of(LOGS / "baseline-cuda-graph-false.log")["serving"]
    rows = {r["running"]: r for r in s["by_concurrency"]}
    assert "129–256" in rows
    g = s["cuda_graph"]
    assert g["decode_lines_without"] == 76  # the cuda-graph-not-used finding counts the same lines
    assert g["captured_max_bs"] == 160
    assert g["min_running_without_graph"] > g["captured_max_bs"]
    assert rows["129–256"]["cuda_graph_share"] < 1.0
    assert sum(r["decode_lines"] for r in s["by_concurrency"]) == s["decode_lines"]


def test_serving_medians_per_level(tmp_path: Path) -> None:
    log = write_serving_log(
        tmp_path / "s.log", spec=False, throughput={1: 100.0, 8: 640.0, 32: 1600.0}
    )
    s = report_of(log)["serving"]
    rows = {r["running"]: r for r in s["by_concurrency"]}
    assert list(rows) == ["1", "5–8", "17–32"]
    assert rows["5–8"]["gen_throughput"]["median"] == 640.0
    assert rows["5–8"]["per_request_throughput"]["median"] == 80.0
    assert rows["17–32"]["per_request_throughput"]["median"] == 50.0
    assert s["overall"]["gen_throughput"]["max"] == 1600.0


def test_retractions_are_counted_at_their_concurrency(tmp_path: Path) -> None:
    log = tmp_path / "r.log"
    log.write_text(
        "\n".join(
            [
                decode_line("2026-05-01 10:00:00", "TP0", 100, 2000.0, usage=0.97),
                (
                    "[2026-05-01 10:00:01 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, "
                    "#new_token_ratio: 0.5000 -> 0.7000"
                ),
                decode_line("2026-05-01 10:00:02", "TP0", 97, 1900.0, usage=0.95),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    s = report_of(log)["serving"]
    assert s["retractions"]["count"] == 1
    assert s["retractions"]["lines"] == [2]
    assert {r["running"]: r["retractions"] for r in s["by_concurrency"]} == {"65–128": 1}


# --------------------------------------------------------------------------- speculative


def test_speculative_acceptance_on_the_healthy_run() -> None:
    sp = report_of(LOGS / "spec-serving-healthy.log")["speculative"]
    assert sp["config"]["algorithm"] == "EAGLE3"
    assert sp["config"]["num_draft_tokens"] == 4
    assert sp["decode_lines_with_accept"] == 117
    assert (
        1.0
        < sp["accept_len"]["min"]
        <= sp["accept_len"]["median"]
        <= sp["accept_len"]["max"]
        <= 4.0
    )
    # The fixture prints accept rate = accept len / num_draft_tokens (2.85 → 0.71).
    assert sp["rate_definition"] == "accept_len / num_draft_tokens"
    tv = sp["tokens_per_verify_step"]
    assert tv["per_request_mean"] == sp["accept_len"]["mean"]
    assert tv["draft_efficiency"] == round(sp["accept_len"]["mean"] / 4, 3)
    assert sum(sp["histogram"]["counts"]) == 117
    assert sp["per_rank"] == []  # one rank prints stats: no per-rank table


def test_rate_definition_of_older_releases() -> None:
    # dev-031: accept len 2.10 / accept rate 0.37 = (2.10 - 1) / 3 with 3 speculative steps.
    log = analyze(str(CORPUS / "dev-031.log"))
    from logparse.report.serving import DECODE, columns
    from logparse.report.speculative import rate_definition

    assert (
        rate_definition(columns(log.log.decode, DECODE), {"num_steps": 3, "num_draft_tokens": 4})
        == "(accept_len - 1) / num_steps"
    )


def test_dp_attention_acceptance_per_rank(tmp_path: Path) -> None:
    log = write_serving_log(
        tmp_path / "dp.log",
        spec=True,
        throughput={4: 300.0, 8: 500.0},
        accept=2.5,
        ranks=("DP0 TP0", "DP1 TP1"),
        dp_attention=True,
    )
    data = report_of(log)
    assert data["serving"]["dp_attention"] is True
    per = {r["rank"]: r for r in data["speculative"]["per_rank"]}
    assert list(per) == ["DP0 TP0", "DP1 TP1"]
    assert per["DP0 TP0"]["accept_len"]["median"] == 2.5
    assert per["DP1 TP1"]["accept_len"]["median"] == 3.0
    assert per["DP0 TP0"]["decode_lines"] == 8


def test_no_speculation_no_section(tmp_path: Path) -> None:
    log = write_serving_log(tmp_path / "plain.log", spec=False, throughput={4: 300.0})
    data = report_of(log)
    assert data["speculative"] is None
    assert not any(p["section"] == "speculative" for p in data["plots"])


# --------------------------------------------------------------------------- baseline


def test_speedup_and_break_even_at_matched_concurrency(tmp_path: Path) -> None:
    run_tp = {1: 150.0, 8: 800.0, 32: 1800.0}
    base_tp = {1: 100.0, 8: 640.0, 32: 2000.0, 128: 4000.0}
    run = write_serving_log(tmp_path / "run.log", spec=True, throughput=run_tp, accept=3.0)
    base = write_serving_log(tmp_path / "base.log", spec=False, throughput=base_tp)
    b = report_of(run, base)["baseline"]
    matched = {m["running"]: m for m in b["matched"]}
    assert list(matched) == ["1", "5–8", "17–32"]  # 65–128 only in the baseline
    for label, running in (("1", 1), ("5–8", 8), ("17–32", 32)):
        speedup = run_tp[running] / base_tp[running]
        assert matched[label]["speedup"] == round(speedup, 3)
        assert matched[label]["break_even_accept_len"] == round(3.0 / speedup, 2)
        assert matched[label]["pays_off"] is (speedup > 1)
        # accept rate = accept len / 4 in these logs: the break-even rate follows.
        assert matched[label]["break_even_accept_rate"] == round(round(3.0 / speedup, 2) / 4, 3)
    assert b["speedup"] is not None and b["break_even_accept_len"] == round(3.0 / b["speedup"], 2)
    # Same settings besides speculation (and the random seed): no warning.
    assert b["differences"] == []
    assert b["warning"] is None
    assert {d["setting"] for d in b["speculative_differences"]} >= {
        "speculative_algorithm",
        "speculative_num_draft_tokens",
    }


def test_baseline_warning_names_the_settings_that_differ(tmp_path: Path) -> None:
    run = write_serving_log(
        tmp_path / "run.log",
        spec=True,
        throughput={8: 800.0},
        env="NCCL_ALGO=Ring",
        tp=4,
        extra_args="cuda_graph_max_bs=48, ",
    )
    base = write_serving_log(
        tmp_path / "base.log",
        spec=False,
        throughput={8: 640.0},
        tp=2,
        extra_args="cuda_graph_max_bs=160, ",
    )
    b = report_of(run, base)["baseline"]
    diffs = {d["setting"]: d for d in b["differences"]}
    assert set(diffs) == {"tp_size", "cuda_graph_max_bs"}
    assert diffs["tp_size"]["run"] == 4 and diffs["tp_size"]["baseline"] == 2
    # The baseline log shows no environment: NCCL_ALGO there is unknown, never "equal" and never a
    # known difference (logdiag compare's verdict, which the report reads).
    unknown = {u["setting"]: u for u in b["unknown_settings"]}
    assert unknown["env:NCCL_ALGO"]["stated_in"] == "candidate" and unknown["env:NCCL_ALGO"]["value"] == "Ring"
    assert "unknown, not equal" in b["warning"]
    # Not set on the command line: SGLang may have lowered it for speculation; said so, still listed.
    assert "speculative" in diffs["cuda_graph_max_bs"]["note"]
    for name in ("tp_size", "NCCL_ALGO", "cuda_graph_max_bs"):
        assert name in b["warning"]
    assert "random_seed" not in diffs


def test_baseline_without_common_levels_says_so(tmp_path: Path) -> None:
    run = write_serving_log(tmp_path / "run.log", spec=True, throughput={1: 150.0})
    base = write_serving_log(tmp_path / "base.log", spec=False, throughput={64: 3000.0})
    b = report_of(run, base)["baseline"]
    assert b["matched"] == [] and b["speedup"] is None
    assert "no #running-req level" in b["note"]


def test_fixture_pair_differs_in_model_and_tp() -> None:
    b = report_of(LOGS / "spec-serving-healthy.log", LOGS / "baseline-cuda-graph-false.log")[
        "baseline"
    ]
    settings = {d["setting"] for d in b["differences"]}
    assert {"model_path", "tp_size"} <= settings
    assert "model_path" in b["warning"]


# --------------------------------------------------------------------------- benchmarks, configuration


def test_benchmark_runs_side_by_side(tmp_path: Path) -> None:
    block = (CORPUS / "dev-051.log").read_text(encoding="utf-8")
    log = tmp_path / "two.log"
    log.write_text(
        block
        + "\n"
        + block.replace(
            "Max request concurrency:                 8",
            "Max request concurrency:                 16",
        ),
        encoding="utf-8",
    )
    bench = report_of(log)["benchmarks"]["serving"]
    assert len(bench["runs"]) == 2
    rows = {r["field"]: r["values"] for r in bench["rows"]}
    assert rows["max_concurrency"] == [8, 16]
    assert rows["output_throughput"] == [183.8, 183.8]
    assert bench["runs"][0]["command"].startswith("python -m sglang.bench_serving")


def test_bench_one_batch_table() -> None:
    for name in ("dev-043.log", "dev-051.log"):
        data = report_of(CORPUS / name)
        assert data["benchmarks"]["serving"]["runs"], name


def test_configuration_shows_set_arguments_only() -> None:
    c = report_of(LOGS / "spec-serving-healthy.log")["configuration"]
    args = c["server_args"]
    assert args["tp_size"] == 4 and args["speculative_algorithm"] == "EAGLE3"
    assert "context_length" not in args  # None
    assert "trust_remote_code" not in args  # False
    assert c["server_args_total"] == len(args) + c["server_args_hidden"]
    assert c["launch_commands"][0]["flags"]["--tp"] == 4


def test_summary_card() -> None:
    s = report_of(LOGS / "spec-serving-healthy.log")["summary"]
    assert s["model"] == "meta-llama/Llama-3.3-70B-Instruct"
    assert s["hardware"]["tp_size"] == 4
    assert s["outcome"] == "serving"
    assert s["root_cause"] is None
    assert s["key_flags"]["speculative"]["algorithm"] == "EAGLE3"
    assert s["time_to_ready_s"] == 75.0
