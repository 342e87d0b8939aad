"""`logdiag compare`: the comparability verdict, declared factors, metrics with noise, the
speculative speedup, all formats and exit codes — on the story's runs and pairs made from real logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.compare.comparison import compare_runs
from logparse.compare.factors import FactorError, key_of, resolve
from logparse.compare.settings import load
from logparse.model.events import BenchServingResult
from logparse.parsing.pipeline import parse_file

ROOT = Path(__file__).resolve().parent.parent
STORY = ROOT / "fixtures" / "compare"
LOGS = ROOT / "fixtures" / "logs"
TUNED = STORY / "baseline-90-nccl-tuned.log"  # NCCL_PROTO/NCCL_ALGO exported, 90 tok/s
EAGLE3 = STORY / "eagle3-75.9.log"  # EAGLE-3, no NCCL tuning, 75.9 tok/s
REMEASURED = STORY / "baseline-62.9-remeasured.log"  # same settings as EAGLE3 without speculation
OTHER_MODEL = STORY / "other-model-kimi.log"
SHELL = LOGS / "pasted-shell-session.log"
NO_ENV = LOGS / "baseline-cuda-graph-false.log"  # a pasted command, no exports, no inline env


def run(*args: str | Path):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["compare", *map(str, args)])


def as_json(*args: str | Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    r = run(*args, "--format", "json")
    return r.exit_code, json.loads(r.output)


def output_throughput(path: Path) -> float:
    (block,) = parse_file(str(path)).of(BenchServingResult)
    return float(block.fields["output_throughput"])


def derived(tmp_path: Path, src: Path, name: str, edit) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path / name
    out.write_text(edit(src.read_text(encoding="utf-8")), encoding="utf-8")
    return out


# --------------------------------------------------------------------------- the story


def test_story_stale_baseline_is_refused_naming_nccl() -> None:
    code, doc = as_json(TUNED, EAGLE3, "--vary", "speculative")
    assert code == 1 and doc["comparable"] is False
    blocking = {d["key"]: d for d in doc["differences"] if not d["expected"]}
    assert set(blocking) == {"env:NCCL_PROTO", "env:NCCL_ALGO"}
    assert blocking["env:NCCL_PROTO"]["baseline"] == "LL128"
    assert doc["metrics"] == []  # no "what it bought" for runs that are not comparable
    text = run(TUNED, EAGLE3, "--vary", "speculative").output
    assert "NOT COMPARABLE" in text and "env:NCCL_PROTO: LL128 → (unset)" in text


def test_story_remeasured_baseline_is_accepted_with_the_speedup() -> None:
    code, doc = as_json(REMEASURED, EAGLE3, "--vary", "speculative")
    assert code == 0 and doc["comparable"] is True
    want = round(output_throughput(EAGLE3) / output_throughput(REMEASURED), 3)
    (tput,) = [m for m in doc["metrics"] if m["name"] == "output_throughput"]
    assert tput["concurrency"] == 1 and tput["ratio"] == want
    assert tput["baseline"] == output_throughput(REMEASURED) and tput["candidate"] == output_throughput(EAGLE3)
    spec = doc["speculative"]
    assert spec["speedup"] == want and spec["break_even_accept_len"] == round(spec["accept_len"] / want, 2)
    # every difference is speculation's own or what SGLang derives from it
    assert all(d["factor"] == "speculative" for d in doc["differences"])
    assert {"max_running_requests", "disable_overlap_schedule", "cuda_graph_bs"} <= {
        d["key"] for d in doc["differences"] if d.get("derived")}
    text = run(REMEASURED, EAGLE3, "--vary", "speculative").output
    assert f"{want:.2f}× speedup" in text and "1.21× speedup" in text


def test_speculation_undeclared_is_not_comparable() -> None:
    code, doc = as_json(REMEASURED, EAGLE3)
    assert code == 1
    assert "speculative_algorithm" in {d["key"] for d in doc["differences"] if not d["expected"]}


def test_random_seed_is_never_a_difference() -> None:
    runs = [load(str(p), "x") for p in (REMEASURED, EAGLE3)]
    assert runs[0].settings.get("random_seed") != runs[1].settings.get("random_seed")
    _, doc = as_json(REMEASURED, EAGLE3, "--vary", "speculative")
    assert "random_seed" not in {d["key"] for d in doc["differences"] + doc["unknown"]}


def test_different_models_are_not_comparable() -> None:
    code, doc = as_json(REMEASURED, OTHER_MODEL)
    assert code == 1
    keys = {d["key"]: d for d in doc["differences"]}
    assert keys["model_path"]["candidate"] == "moonshotai/Kimi-K2.5" and not keys["model_path"]["expected"]
    assert "tp_size" in keys
    # even when speculation is declared: the model is no factor of it
    assert run(REMEASURED, OTHER_MODEL, "--vary", "speculative").exit_code == 1


def test_allow_and_more_factors_accept_the_nccl_difference() -> None:
    code, doc = as_json(TUNED, EAGLE3, "--vary", "speculative", "--allow", "NCCL_PROTO", "--allow", "NCCL_ALGO")
    assert code == 0 and all(d["expected"] for d in doc["differences"])
    assert {d["key"] for d in doc["differences"] if d.get("allowed")} == {"env:NCCL_PROTO", "env:NCCL_ALGO"}
    code, doc = as_json(TUNED, EAGLE3, "--vary", "speculative", "--vary", "nccl")
    assert code == 0 and {d["factor"] for d in doc["differences"]} == {"speculative", "nccl"}
    # one variable allowed, the other still blocks
    assert run(TUNED, EAGLE3, "--vary", "speculative", "--allow", "NCCL_PROTO").exit_code == 1


# --------------------------------------------------------------------------- pairs made from real logs


def test_one_nccl_variable_exported_in_one_shell_session(tmp_path: Path) -> None:
    tuned = derived(tmp_path, SHELL, "tuned.log",
                    lambda t: "root@7f3c2a9d1b4e:/sgl-workspace# export NCCL_PROTO=Simple\n" + t)
    code, doc = as_json(SHELL, tuned)
    assert code == 1
    (d,) = [d for d in doc["differences"] if not d["expected"]]
    assert d["key"] == "env:NCCL_PROTO" and d["baseline"] == "(unset)" and d["candidate"] == "Simple"
    assert run(tuned, SHELL).exit_code == 1  # either direction
    code, doc = as_json(SHELL, SHELL)
    assert code == 0 and doc["differences"] == [] and doc["unknown"] == []


def test_a_log_without_environment_is_unknown_never_equal(tmp_path: Path) -> None:
    tuned = derived(tmp_path, NO_ENV, "tuned.log", lambda t: "$ export NCCL_PROTO=LL128\n" + t)
    code, doc = as_json(NO_ENV, tuned)
    unknown = {u["key"]: u for u in doc["unknown"]}
    assert unknown["env:NCCL_PROTO"]["stated_in"] == "candidate"
    assert "environment not captured in BASELINE" in unknown["env:NCCL_PROTO"]["reason"]
    assert "env:NCCL_PROTO" not in {d["key"] for d in doc["differences"]}
    assert any("environment not captured in BASELINE" in n for n in doc["notes"])
    assert code == 0  # unknown is listed, not a difference
    text = run(NO_ENV, tuned).output
    assert "unknown" in text and "NCCL_PROTO" in text


def test_noise_a_ratio_inside_the_spread_is_no_measurable_difference(tmp_path: Path) -> None:
    def scale(text: str) -> str:
        return re.sub(r"gen throughput \(token/s\): ([\d.]+)",
                      lambda m: f"gen throughput (token/s): {float(m.group(1)) * 1.002:.2f}", text)

    same_again = derived(tmp_path, REMEASURED, "again.log", scale)
    code, doc = as_json(REMEASURED, same_again)
    assert code == 0
    (dec,) = [m for m in doc["metrics"] if m["name"] == "decode_throughput"]
    assert dec["noise"] > abs(dec["ratio"] - 1)
    assert dec["assessment"].startswith("no measurable difference")
    (_, doc2) = as_json(REMEASURED, EAGLE3, "--vary", "speculative")
    (dec2,) = [m for m in doc2["metrics"] if m["name"] == "decode_throughput"]
    assert abs(dec2["ratio"] - 1) > dec2["noise"] and dec2["assessment"].startswith("better")


def test_more_than_two_runs_one_table(tmp_path: Path) -> None:
    five = derived(tmp_path, EAGLE3, "eagle3-5-steps.log", lambda t: t.replace(
        "--speculative-num-steps 3", "--speculative-num-steps 5").replace(
        "speculative_num_steps=3", "speculative_num_steps=5").replace(
        "Output token throughput (tok/s):         75.90", "Output token throughput (tok/s):         70.10"))
    code, doc = as_json(REMEASURED, EAGLE3, five, "--vary", "speculative")
    assert code == 0 and len(doc["candidates"]) == 2
    tput = {m["candidate_source"]: m for m in doc["metrics"] if m["name"] == "output_throughput"}
    assert tput[str(five)]["candidate"] == 70.1 and tput[str(EAGLE3)]["candidate"] == 75.9
    text = run(REMEASURED, EAGLE3, five, "--vary", "speculative").output
    (row,) = [line for line in text.splitlines() if line.startswith("output_throughput")]
    assert "75.9 (1.207×)" in row and "70.1 (" in row and "run 2" in text


# --------------------------------------------------------------------------- formats, codes, gates


def test_json_keys_and_md() -> None:
    _, doc = as_json(REMEASURED, EAGLE3, "--vary", "speculative")
    assert {"comparable", "differences", "unknown", "factors", "metrics"} <= set(doc)
    assert {"name", "concurrency", "baseline", "candidate", "ratio"} <= set(doc["metrics"][0])
    assert doc["factors"][0]["name"] == "speculative"
    md = run(TUNED, EAGLE3, "--vary", "speculative", "--format", "md")
    assert md.exit_code == 1 and md.output.startswith("### ❌")
    assert "| `env:NCCL_PROTO` | LL128 | (unset) | **not comparable** |" in md.output
    ok = run(REMEASURED, EAGLE3, "--vary", "speculative", "--format", "md")
    assert ok.exit_code == 0 and "✅" in ok.output and "| output_throughput | 1 | 62.9 | 75.9 |" in ok.output


def test_bad_input_exits_2(tmp_path: Path) -> None:
    assert run(REMEASURED, tmp_path / "missing.log").exit_code == 2
    assert run(REMEASURED, STORY).exit_code == 2  # a folder is no run
    assert run(REMEASURED, EAGLE3, "--vary", "no such factor!").exit_code == 2
    assert run(REMEASURED).exit_code == 2  # no candidate
    binary = tmp_path / "binary.log"
    binary.write_bytes(b"\xff\xfe\x00 nothing here\n" * 3)
    assert run(binary, REMEASURED).exit_code == 2
    text = tmp_path / "other.log"
    text.write_text("hello\nserver_args=ServerArgs(tp_size='\n\x1b[0m garbage (((\n", encoding="utf-8")
    r = run(text, REMEASURED)  # a log that states nothing: everything unknown, nothing equal
    assert r.exit_code == 0 and "Traceback" not in r.output and "unknown" in r.output


def test_factor_names() -> None:
    assert key_of("NCCL_PROTO") == "env:NCCL_PROTO"
    assert key_of("--mem-fraction-static") == "mem_fraction_static"
    assert key_of("env:FOO") == "env:FOO"
    with pytest.raises(FactorError):
        key_of("a b")
    (spec,) = resolve(["speculative"])
    assert spec.covers("speculative_num_steps") and spec.covers("max_running_requests")
    assert not spec.covers("model_path")


def test_check_gates_on_the_baseline_run() -> None:
    # --fail-on never: only the baseline-run verdict decides the exit code here
    def check(base: Path) -> object:
        return CliRunner().invoke(main, ["check", str(EAGLE3), "--fail-on", "never", "--baseline-run", str(base),
                                         "--vary", "speculative"])

    bad, good = check(TUNED), check(REMEASURED)
    assert bad.exit_code == 1 and "NCCL_PROTO" in bad.output  # type: ignore[attr-defined]
    assert good.exit_code == 0  # type: ignore[attr-defined]


def test_report_baseline_shows_the_same_verdict() -> None:
    from logparse.engine.core import analyze
    from logparse.report.model import build_report

    stale = build_report(analyze(str(EAGLE3)), analyze(str(TUNED))).data["baseline_verdict"]
    assert stale["comparable"] is False and any("NCCL_PROTO" in x for x in stale["blocking"])
    fresh = build_report(analyze(str(EAGLE3)), analyze(str(REMEASURED))).data["baseline_verdict"]
    cmp = compare_runs(load(str(REMEASURED), "baseline"), [load(str(EAGLE3), "candidate")], ["speculative"])
    assert fresh["comparable"] is cmp.comparable is True
    assert fresh["speculative"]["speedup"] == cmp.pairs[0].speculative["speedup"]  # type: ignore[index]


def test_a_derived_setting_set_explicitly_is_the_users_change(tmp_path: Path) -> None:
    pinned = derived(tmp_path, REMEASURED, "pinned.log", lambda t: t.replace(
        "--mem-fraction-static 0.85", "--mem-fraction-static 0.85 --max-running-requests 64").replace(
        "max_running_requests=None", "max_running_requests=64"))
    code, doc = as_json(pinned, EAGLE3, "--vary", "speculative")
    assert code == 1
    (d,) = [d for d in doc["differences"] if not d["expected"]]
    assert d["key"] == "max_running_requests" and d["baseline"] == 64 and d["candidate"] == 48


def test_secrets_in_settings_are_masked(tmp_path: Path) -> None:
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    leaky = derived(tmp_path, REMEASURED, "leaky.log",
                    lambda t: f"root@a4f2c91e07bd:/sgl-workspace# export OPENAI_API_KEY={secret}\n" + t)
    for fmt in ("text", "json", "md"):
        r = run(REMEASURED, leaky, "--format", fmt)
        assert r.exit_code == 1 and "OPENAI_API_KEY" in r.output and secret not in r.output


def _without_bench(text: str) -> str:
    """The log without its bench_serving command and result block (decode stats lines only)."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if "sglang.bench_serving" in line:
            continue
        if line.startswith("============ Serving Benchmark Result"):
            inside = True
        if not inside:
            out.append(line)
        if inside and line.startswith("=====") and "Result" not in line:
            inside = False
    return "".join(out)


def test_speedup_from_decode_buckets_without_a_benchmark(tmp_path: Path) -> None:
    base = derived(tmp_path, REMEASURED, "base.log", _without_bench)
    spec = derived(tmp_path, EAGLE3, "spec.log", _without_bench)
    code, doc = as_json(base, spec, "--vary", "speculative")
    assert code == 0 and not [m for m in doc["metrics"] if m["source"] == "bench"]
    (dec,) = [m for m in doc["metrics"] if m["name"] == "decode_throughput"]
    assert doc["speculative"]["method"].startswith("decode throughput")
    assert doc["speculative"]["speedup"] == dec["ratio"]
    assert any("no benchmark in BASELINE" in n for n in doc["notes"])


def _block(text: str) -> str:
    start = text.index("============ Serving Benchmark Result")
    end = text.index("==================================================\n", start) + 51
    return text[start:end]


def test_repeated_benchmarks_give_the_noise(tmp_path: Path) -> None:
    def repeat(value: str):  # type: ignore[no-untyped-def]
        def edit(text: str) -> str:
            block = _block(text)
            again = block.replace("Output token throughput (tok/s):         62.90",
                                  f"Output token throughput (tok/s):         {value}")
            return text.replace(block, block + again)
        return edit

    base = derived(tmp_path, REMEASURED, "base.log", repeat("64.90"))  # 62.9 and 64.9: ±1.6 %
    cand = derived(tmp_path, REMEASURED, "cand.log", repeat("63.90"))  # 62.9 and 63.9
    _, doc = as_json(base, cand)
    (tput,) = [m for m in doc["metrics"] if m["name"] == "output_throughput"]
    assert tput["baseline"] == 63.9 and tput["candidate"] == 63.4  # medians of the repeats
    assert tput["noise"] == round((64.9 - 62.9) / 2 / 63.9, 4)
    assert tput["assessment"].startswith("no measurable difference")


def test_sglang_release_and_docker_environment(tmp_path: Path) -> None:
    docker = tmp_path / "docker.log"
    docker.write_text("$ docker run --gpus all -e NCCL_PROTO=LL128 lmsysorg/sglang:v0.5.4.post1-cu129 python3 -m "
                      "sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2\n", encoding="utf-8")
    pip = tmp_path / "pip.log"
    pip.write_text('$ pip install "sglang[all]==0.5.3"\n'
                   "$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2\n", encoding="utf-8")
    settings = load(str(docker), "baseline").settings
    assert settings.values["sglang_version"].value == "0.5.4.post1"
    assert settings.values["env:NCCL_PROTO"].source == "inline" and settings.env_captured
    code, doc = as_json(docker, pip)
    diffs = {d["key"]: d for d in doc["differences"]}
    assert code == 1 and diffs["sglang_version"]["candidate"] == "0.5.3"
    # the pip session shows no exports and no inline variables: its environment is not captured
    assert "env:NCCL_PROTO" in {u["key"] for u in doc["unknown"]}
