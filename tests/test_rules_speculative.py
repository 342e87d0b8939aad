"""Speculative family: topk/spec-v2 conflicts, mamba extra buffer, draft load failures, other argument
checks, low and absent acceptance."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.run.speculative import implied_token_acceptance
from tests.conftest import CORPUS
from tests.conftest import analyze_text as run
from tests.conftest import findings_named as named

REPO = Path(__file__).resolve().parents[1]
SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def decode(ts: str, running: int, accept: float | None, thr: float, width: int = 4, queue: int = 0) -> str:
    spec = f"accept len: {accept:.2f}, accept rate: {accept / width:.2f}, " if accept is not None else ""
    return (f"[2026-03-24 {ts} TP0] Decode batch, #running-req: {running}, #token: {running * 900}, token usage: 0.05, "
            f"{spec}cuda graph: True, gen throughput (token/s): {thr:.2f}, #queue-req: {queue}")


# --------------------------------------------------------------------------- spec-v2-topk-conflict


def test_runtime_size_mismatch_with_topk_and_spec_v2() -> None:
    a = analyze(str(CORPUS / "dev-019.log"))
    [f] = named(a, "spec-v2-topk-conflict")
    assert f.data["topk"] == 4 and f.data["num_steps"] == 5
    assert f.data["spec_v2"] == "SGLANG_ENABLE_SPEC_V2=1"
    assert "--speculative-eagle-topk 1 --speculative-num-draft-tokens 6" in f.remedy


def test_eagle_worker_v2_crash_without_visible_topk_says_what_decides() -> None:
    a = analyze(str(CORPUS / "dev-015.log"))
    [f] = named(a, "spec-v2-topk-conflict")
    assert "_draft_extend_for_decode" in f.message
    assert "not visible" in f.message and "--speculative-eagle-topk" in f.message
    assert "spec-draft-load-failure" not in a.fired()


@pytest.mark.parametrize("dev", ["dev-012", "dev-045"])
def test_plain_event_loop_crashes_are_not_topk_conflicts(dev: str) -> None:
    a = analyze(str(CORPUS / f"{dev}.log"))
    assert "spec-v2-topk-conflict" not in a.fired()
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"


def test_eagle_worker_v2_crash_with_topk_1_is_something_else(tmp_path: Path) -> None:
    text = ("$ SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n"
            f"[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 2736, in run_scheduler_process\n'
            f"    scheduler.event_loop_overlap()\n"
            f'  File "{SG}/speculative/eagle_worker_v2.py", line 511, in _draft_extend_for_decode\n'
            f"    draft_logits_output, _ = self.draft_runner.forward(\n"
            f"RuntimeError: something else\n\n")
    a = run(tmp_path, text)
    assert "spec-v2-topk-conflict" not in a.fired()
    assert "scheduler-crash" in a.fired()


def test_combined_launches_use_each_launch_config() -> None:
    a = analyze(str(REPO / "fixtures/logs/nextn-hybrid-launch.log"))
    [topk] = named(a, "spec-v2-topk-conflict")
    assert topk.data["topk"] == 4 and topk.data["num_draft_tokens"] == 8
    [mamba] = named(a, "spec-mamba-extra-buffer")
    assert mamba.data["model_arch"] == "Qwen3_5MoeForCausalLM"
    assert "mamba_scheduler_strategy" not in mamba.data  # launch 2 did not set it (launch 3 did)


# --------------------------------------------------------------------------- spec-mamba-extra-buffer


def test_mamba_no_buffer_asks_for_extra_buffer_and_spec_v2() -> None:
    a = analyze(str(REPO / "fixtures/rules/spec-mamba-extra-buffer/bad.log"))
    [f] = named(a, "spec-mamba-extra-buffer")
    assert "--mamba-scheduler-strategy extra_buffer" in f.remedy
    assert "SGLANG_ENABLE_SPEC_V2=1" in f.remedy  # not set in that launch
    assert {"invalid-server-args", "spec-config-invalid"}.isdisjoint(a.fired())


def test_mamba_track_interval_is_computed(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --page-size 64 "
            "--speculative-algorithm NEXTN --speculative-num-steps 7 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 8 --mamba-scheduler-strategy extra_buffer --mamba-track-interval 4\n"
            "Traceback (most recent call last):\n"
            f'  File "{SG}/server_args.py", line 1230, in _handle_mamba_radix_cache\n'
            "    assert (\n"
            "AssertionError: mamba_track_interval 4 must be greater than or equal to speculative_num_draft_tokens 8\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-mamba-extra-buffer")
    assert f.data["needed"] == 64
    assert "--mamba-track-interval 64" in f.remedy


# --------------------------------------------------------------------------- spec-draft-load-failure


def test_cut_draft_worker_init() -> None:
    a = analyze(str(CORPUS / "dev-007.log"))
    [f] = named(a, "spec-draft-load-failure")
    assert f.data["exception"] is None
    assert "cut" in f.message
    assert "scheduler-crash" not in a.fired()


def test_draft_load_failure_with_exception(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE "
            "--speculative-draft-model-path yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\n"
            "[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 352, in __init__\n'
            "    self.draft_worker = EAGLEWorker(\n"
            f'  File "{SG}/speculative/eagle_worker.py", line 124, in __init__\n'
            "    super().__init__(\n"
            f'  File "{SG}/models/llama_eagle.py", line 140, in load_weights\n'
            "    weight_loader(param, loaded_weight)\n"
            "AssertionError: Attempted to load weight (torch.Size([4096, 12288])) into parameter (torch.Size([4096, 8192]))\n\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-draft-load-failure")
    assert f.data["algorithm"] == "EAGLE"
    assert "EAGLE3" in f.remedy and "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B" in f.remedy


# --------------------------------------------------------------------------- spec-config-invalid


def test_page_size_topk_check_gets_its_remedy() -> None:
    a = analyze(str(REPO / "fixtures/rules/spec-config-invalid/bad.log"))
    [f] = named(a, "spec-config-invalid")
    assert "--page-size 1" in f.remedy and "flashinfer" in f.remedy
    assert "invalid-server-args" not in a.fired()  # the speculative fallback runs first and claims it


def test_bare_mtp_assertion(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm NEXTN "
            "--speculative-num-steps 3\n"
            "Traceback (most recent call last):\n"
            f'  File "{SG}/server_args.py", line 724, in __post_init__\n'
            "    self._handle_speculative_decoding()\n"
            f'  File "{SG}/server_args.py", line 2530, in _handle_speculative_decoding\n'
            "    assert (\n"
            "AssertionError\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-config-invalid")
    assert "all three" in f.remedy


# --------------------------------------------------------------------------- acceptance


@pytest.mark.parametrize(("length", "depth", "p"), [(1.0, 3, 0.0), (4.0, 3, 1.0), (1.875, 3, 0.5), (2.0, 1, 1.0)])
def test_implied_token_acceptance(length: float, depth: int, p: float) -> None:
    assert implied_token_acceptance(length, depth) == pytest.approx(p, abs=0.002)


def test_low_acceptance_against_draft_depth() -> None:
    a = analyze(str(REPO / "fixtures/rules/spec-low-acceptance/bad.log"))
    [f] = named(a, "spec-low-acceptance")
    assert f.data["depth"] == 5 and f.data["max_accept_len"] == 6
    assert f.data["implied_token_acceptance"] < 0.5
    assert "break-even not computable" in f.message
    assert "--speculative-num-steps 2 --speculative-num-draft-tokens 3" in f.remedy


def test_threshold_is_configurable() -> None:
    path = str(REPO / "fixtures/rules/spec-low-acceptance/bad.log")
    a = analyze(path, config={"spec-low-acceptance": {"min_token_acceptance": 0.2}})
    assert "spec-low-acceptance" not in a.fired()


def test_break_even_from_a_baseline_run_in_the_same_log(tmp_path: Path) -> None:
    """A run without speculation (no accept fields) at the same batch sizes gives the verify cost:
    speculation at 0.8× the baseline throughput with accept len 2.0 breaks even at 2.5."""
    lines = [("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-num-steps 3 "
              "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")]
    for i, run_ in enumerate((8, 8, 16, 16)):
        lines.append(decode(f"10:0{i}:00", run_, None, run_ * 50.0))
    for i, run_ in enumerate((8, 8, 16, 16)):
        lines.append(decode(f"11:0{i}:00", run_, 2.0, run_ * 40.0))
    a = run(tmp_path, "\n".join(lines) + "\n")
    [f] = named(a, "spec-low-acceptance")
    assert f.data["speedup"] == pytest.approx(0.8)
    assert f.data["break_even_accept_len"] == pytest.approx(2.5)
    assert "turn it off" in f.remedy


def test_break_even_from_bench_results(tmp_path: Path) -> None:
    def block(out_tput: float, accept: float | None) -> list[str]:
        rows = [("Backend", "sglang"), ("Max request concurrency", "16"), ("Successful requests", "200"),
                ("Benchmark duration (s)", "60.00"), ("Output token throughput (tok/s)", f"{out_tput:.2f}")]
        if accept is not None:
            rows.append(("Accept length", f"{accept:.2f}"))
        return (["", "============ Serving Benchmark Result ============"]
                + [f"{k + ':':<40} {v:<10}" for k, v in rows] + ["=" * 50])
    text = "\n".join(block(2000.0, None) + block(2300.0, 1.9)) + "\n"
    a = run(tmp_path, text)
    # 1.9 with unknown depth is above the absolute threshold, and speculation is faster: no finding
    assert "spec-low-acceptance" not in a.fired()
    text = "\n".join(block(2000.0, None) + block(1600.0, 1.9)) + "\n"
    a = run(tmp_path, text)
    [f] = named(a, "spec-low-acceptance")
    assert f.data["speedup"] == pytest.approx(0.8)
    assert f.data["break_even_accept_len"] == pytest.approx(2.38, abs=0.01)


def test_healthy_acceptance_is_quiet() -> None:
    for path in (REPO / "fixtures/logs/spec-serving-healthy.log", CORPUS / "dev-033.log", CORPUS / "dev-020.log"):
        a = analyze(str(path))
        assert {"spec-low-acceptance", "spec-inactive"}.isdisjoint(a.fired()), path.name


def test_spec_inactive_on_accept_len_one() -> None:
    a = analyze(str(CORPUS / "dev-003.log"))
    [f] = named(a, "spec-inactive")
    assert f.data["accept_len_mean"] == 1.0
    assert "48" in f.message
    assert "spec-low-acceptance" not in a.fired()


def test_spec_inactive_not_without_speculation(tmp_path: Path) -> None:
    text = ("[2026-03-24 10:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm=None, tp_size=1)\n"
            + decode("10:00:05", 48, 1.0, 5000.0) + "\n")
    a = run(tmp_path, text)
    assert "spec-inactive" not in a.fired()


def test_spec_inactive_when_no_accept_fields(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
            "--speculative-draft-model-path d\n" + "\n".join(decode(f"10:00:0{i}", 8, None, 900.0) for i in range(3)) + "\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-inactive")
    assert "prints an accept length" in f.message


# --------------------------------------------------------------------------- structure, not words


def test_capture_not_permitted_while_capturing_is_not_a_draft_failure(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-draft-model-path d\n"
            "[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 352, in __init__\n'
            "    self.draft_worker = EAGLEWorker(\n"
            f'  File "{SG}/speculative/eagle_draft_extend_cuda_graph_runner.py", line 120, in __init__\n'
            "    raise Exception(\n"
            "Exception: Capture cuda graph failed: CUDA error: operation not permitted when stream is capturing\n\n")
    a = run(tmp_path, text)
    assert "spec-draft-load-failure" not in a.fired()


def test_draft_capture_failing_in_the_draft_model_is_a_draft_failure(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-draft-model-path d\n"
            "[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 352, in __init__\n'
            "    self.draft_worker = EAGLEWorker(\n"
            f'  File "{SG}/speculative/eagle_draft_cuda_graph_runner.py", line 95, in __init__\n'
            "    raise Exception(\n"
            "Exception: Capture cuda graph failed: The size of tensor a (8) must match the size of tensor b (6) at "
            "non-singleton dimension 1\n\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-draft-load-failure")
    assert "capture" in f.remedy


def test_spec_v1_fallback_warning_is_not_a_topk_conflict(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-eagle-topk 4\n"
            "[2026-03-02 10:00:00] Spec v1 is used for eagle/eagle3/standalone speculative decoding because spec v2 "
            "currently only supports topk = 1.\n")
    a = run(tmp_path, text)
    assert "spec-v2-topk-conflict" not in a.fired()


def test_argument_words_after_the_server_was_up_are_not_an_argument_check(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE\n"
            "[2026-03-02 10:00:00] The server is fired up and ready to roll!\n"
            "[2026-03-02 10:05:00] ValueError: draft token ids out of range for the speculative verify step\n")
    a = run(tmp_path, text)
    assert "spec-config-invalid" not in a.fired()


def test_bare_assert_in_the_eagle_family_step_of_newer_releases(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path zai-org/GLM-4.6 --speculative-algorithm EAGLE "
            "--speculative-eagle-topk 1\n"
            "Traceback (most recent call last):\n"
            f'  File "{SG}/server_args.py", line 724, in __post_init__\n'
            "    handle_speculative_decoding(self)\n"
            f'  File "{SG}/speculative/spec_args.py", line 330, in _handle_eagle_family\n'
            "    assert (\n"
            "AssertionError\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-config-invalid")
    assert "all three" in f.remedy


def test_lazy_extra_buffer_under_pd_does_not_ask_for_no_buffer(tmp_path: Path) -> None:
    text = ("Traceback (most recent call last):\n"
            f'  File "{SG}/server_args.py", line 1230, in _handle_mamba_radix_cache\n'
            "    assert (\n"
            "AssertionError: extra_buffer_lazy unsupported under PD disaggregation; use --mamba-radix-cache-strategy "
            "extra_buffer.\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-mamba-extra-buffer")
    assert f.data.get("needs") != "no_buffer"


def test_a_damaged_page_size_does_not_break_the_interval_remedy(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --page-size "
            + "9" * 5000 + " --speculative-algorithm NEXTN --speculative-num-draft-tokens 8\n"
            "AssertionError: mamba_track_interval 4 must be greater than or equal to speculative_num_draft_tokens 8\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-mamba-extra-buffer")
    assert f.data["needed"] == 8  # page size unknown: a multiple of 1


def test_a_damaged_speculative_count_is_unknown_not_a_rule_error(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-num-steps "
            + "9" * 5000 + " --speculative-eagle-topk 4\n"
            "ValueError: Spec v2 currently only supports topk = 1 for speculative decoding.\n")
    a = run(tmp_path, text)  # no rule may raise
    [f] = named(a, "spec-v2-topk-conflict")
    assert "num_steps" not in f.data and f.data["topk"] == 4


def test_a_model_error_that_mentions_the_draft_is_not_an_argument_check(tmp_path: Path) -> None:
    text = ("$ python3 -m sglang.launch_server --model-path m --speculative-algorithm EAGLE --speculative-draft-model-path d\n"
            "[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 2736, in run_scheduler_process\n'
            "    scheduler = Scheduler(\n"
            f'  File "{SG}/model_executor/model_runner.py", line 310, in load_model\n'
            "    self.model = get_model(\n"
            "ValueError: Unrecognized configuration class for the draft of this model\n\n")
    a = run(tmp_path, text)
    assert "spec-config-invalid" not in a.fired()


def test_a_known_speculative_check_raised_inside_the_scheduler_still_counts(tmp_path: Path) -> None:
    text = ("[2026-03-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SG}/managers/scheduler.py", line 2736, in run_scheduler_process\n'
            "    scheduler = Scheduler(\n"
            f'  File "{SG}/layers/attention/trtllm_mha_backend.py", line 88, in __init__\n'
            "    raise ValueError(\n"
            "ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.\n\n")
    a = run(tmp_path, text)
    [f] = named(a, "spec-config-invalid")
    assert "--speculative-eagle-topk 1" in f.remedy


def test_every_catalog_code_the_family_names_in_tables_exists() -> None:
    from logparse.grammar.messages import catalog
    from logparse.rules.kernels.library import LOAD_FAILURES
    from logparse.rules.speculative.arguments import ADVICE
    from logparse.rules.speculative.draft import CUDA_FAILURES
    from logparse.rules.speculative.mamba import MAMBA_CODES

    cat = catalog()
    named = [*LOAD_FAILURES, *(code for code, _ in ADVICE), *CUDA_FAILURES, *MAMBA_CODES]
    assert [code for code in named if code not in cat] == []
