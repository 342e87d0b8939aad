"""Info family: deprecated-entrypoint, max-running-requests-capped."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.model.events import Severity
from tests.conftest import CORPUS
from tests.conftest import analyze_text as run
from tests.conftest import findings_named as named

REPO = Path(__file__).resolve().parents[1]
WARN = ("/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py:51: UserWarning: 'python -m "
        "sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.\n"
        "  Example: sglang serve --model-path <model> [options]\n"
        "  warnings.warn(\n")


def test_deprecation_only_on_the_printed_warning(tmp_path: Path) -> None:
    cmd = "$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --port 30000\n"
    assert "deprecated-entrypoint" not in run(tmp_path, cmd).fired()
    a = run(tmp_path, cmd + WARN)
    [f] = named(a, "deprecated-entrypoint")
    assert f.severity == Severity.INFO
    assert "sglang serve" in f.remedy
    assert a.root_cause is None


def test_deprecation_corpus() -> None:
    assert "deprecated-entrypoint" in analyze(str(CORPUS / "dev-016.log")).fired()
    for dev in ("dev-019", "dev-020", "dev-041"):
        assert "deprecated-entrypoint" not in analyze(str(CORPUS / f"{dev}.log")).fired(), dev


def test_one_finding_for_several_launches() -> None:
    a = analyze(str(REPO / "fixtures/logs/nextn-hybrid-launch.log"))
    [f] = named(a, "deprecated-entrypoint")
    assert f.data["warnings"] == 4


def test_cap_and_reason_without_traffic(tmp_path: Path) -> None:
    text = ("Max running requests is reset to 48 for speculative decoding. You can override this by explicitly "
            "setting --max-running-requests.\n")
    a = run(tmp_path, text)
    [f] = named(a, "max-running-requests-capped")
    assert f.data["max_running_requests"] == 48
    assert f.data["reason"] == "speculative decoding"
    assert "48" in f.message and "speculative decoding" in f.message


def test_cap_reached_with_room_left_suggests_a_higher_cap() -> None:
    a = analyze(str(REPO / "fixtures/rules/max-running-requests-capped/bad.log"))
    [f] = named(a, "max-running-requests-capped")
    assert f.data["lines_at_cap_with_queue"] == 6
    assert f.data["queue_req_max_at_cap"] == 44
    assert f.data["suggested_max_running_requests"] == 96
    assert "--max-running-requests 96" in f.remedy and "--cuda-graph-max-bs 96" in f.remedy


def test_cap_reached_with_a_full_kv_cache_keeps_the_advice_neutral(tmp_path: Path) -> None:
    text = ("Max running requests is reset to 48 for speculative decoding. You can override this by explicitly "
            "setting --max-running-requests.\n"
            + "".join(f"[2026-04-21 08:52:1{i} TP0] Decode batch, #running-req: 48, #token: 380000, token usage: 0.96, "
                      f"accept len: 3.00, accept rate: 0.75, cuda graph: True, gen throughput (token/s): 1500.00, "
                      f"#queue-req: 20\n" for i in range(3)))
    a = run(tmp_path, text)
    [f] = named(a, "max-running-requests-capped")
    assert "suggested_max_running_requests" not in f.data
    assert f.data["token_usage_at_cap"] == 0.96
