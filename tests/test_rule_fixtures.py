"""Every rule fixture folder `fixtures/rules/<name>/` is a contract for the rule of that name:
`bad.log` fires it — with evidence lines from the file, a message and a remedy — and `good.log` does
not. Parametrized over the folders (not the registry), so a folder whose name is no rule fails too.

Also the whole-run scenario fixtures of `fixtures/logs/`: they parse (few unparsed lines) and the
engine tells their story (the failures of each launch, the outcome of the last one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.parsing.pipeline import parse_file
from logparse.render.summary import file_summary
from logparse.rules import lookup

REPO = Path(__file__).resolve().parents[1]
RULE_FIXTURES = REPO / "fixtures" / "rules"
LOG_FIXTURES = REPO / "fixtures" / "logs"
FOLDERS = sorted(p for p in RULE_FIXTURES.iterdir() if p.is_dir())


def test_there_are_rule_fixtures() -> None:
    assert len(FOLDERS) >= 30


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_bad_fires_and_good_does_not(folder: Path) -> None:
    name = folder.name
    assert lookup(name) is not None, f"fixtures/rules/{name}/ names no registered rule"
    bad, good = folder / "bad.log", folder / "good.log"
    assert bad.is_file() and good.is_file(), f"{name}: needs bad.log and good.log"

    _assert_fires(name, bad)

    b = analyze(str(good))
    assert not b.rule_errors, b.rule_errors
    assert name not in b.fired(), f"{name}: good.log fires it: " + "; ".join(
        f.message for f in b.all_findings() if f.name == name)


def _assert_fires(name: str, bad: Path) -> None:
    a = analyze(str(bad))
    assert not a.rule_errors, a.rule_errors
    mine = [f for f in a.all_findings() if f.name == name]
    assert mine, f"{name}: {bad.name} does not fire it; fired {sorted(a.fired())}"
    n_lines = sum(1 for _ in bad.open(encoding="utf-8", errors="replace"))
    for f in mine:
        assert f.message.strip() and f.remedy.strip(), f"{name}: empty message or remedy"
        assert f.evidence, f"{name}: a finding without evidence"
        for ev in f.evidence:
            assert 1 <= ev.line <= ev.end_line <= n_lines + 1, (name, ev.line, ev.end_line, n_lines)
        assert any(text for ev in f.evidence for _, text in ev.lines), f"{name}: evidence texts not filled"


# `bad-2.log`, …: further independent real occurrences of the problem (another release, wording, shape).
FURTHER_BAD = sorted(RULE_FIXTURES.glob("*/bad-*.log"))


@pytest.mark.parametrize("bad", FURTHER_BAD, ids=[f"{p.parent.name}/{p.name}" for p in FURTHER_BAD])
def test_further_bad_logs_fire_too(bad: Path) -> None:
    _assert_fires(bad.parent.name, bad)


# --------------------------------------------------------------------------- whole-run scenarios

SCENARIOS = {
    "nextn-1-topk.log": ({"spec-v2-topk-conflict"}, "spec-v2-topk-conflict", "crashed-at-startup"),
    "nextn-2-mamba.log": ({"spec-mamba-extra-buffer"}, "spec-mamba-extra-buffer", "crashed-at-startup"),
    "nextn-3-killed.log": ({"host-oom"}, "host-oom", "crashed-at-startup"),
    "nextn-4-serving.log": ({"max-running-requests-capped", "custom-allreduce-unavailable"}, None, "serving"),
    # Four attempts: the file's root cause and outcome are the last attempt's (it served).
    "nextn-hybrid-launch.log": ({"spec-v2-topk-conflict", "spec-mamba-extra-buffer", "host-oom"}, None, "serving"),
    "eagle3-kv-pool.log": ({"kv-pool-no-room"}, "kv-pool-no-room", "crashed-at-startup"),
    "baseline-cuda-graph-false.log": ({"cuda-graph-not-used"}, None, "serving"),
    "spec-serving-healthy.log": ({"max-running-requests-capped"}, None, "serving"),
}
NEVER = {
    "nextn-4-serving.log": {"spec-inactive", "spec-low-acceptance", "cuda-graph-not-used", "scheduler-crash"},
    "spec-serving-healthy.log": {"spec-inactive", "spec-low-acceptance", "cuda-graph-not-used", "kv-cache-saturated"},
    "eagle3-kv-pool.log": {"cuda-oom", "host-oom", "scheduler-crash"},
    "baseline-cuda-graph-false.log": {"spec-inactive", "spec-low-acceptance", "kv-cache-saturated"},
    "nextn-hybrid-launch.log": {"scheduler-crash", "invalid-server-args", "spec-config-invalid"},
}


def test_scenario_fixtures_exist() -> None:
    assert {p.name for p in LOG_FIXTURES.glob("*.log")} >= set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_parses_cleanly(name: str) -> None:
    log = parse_file(str(LOG_FIXTURES / name))
    cov = log.coverage
    # Only blank lines (the separators between records / launches) may stay unknown.
    assert cov.unparsed <= max(8, cov.total // 200), (name, cov.unparsed, cov.templates.most_common(5))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_story(name: str) -> None:
    expect, root, outcome = SCENARIOS[name]
    a = analyze(str(LOG_FIXTURES / name))
    assert not a.rule_errors, a.rule_errors
    fired = a.fired()
    assert expect <= fired, (name, sorted(fired))
    assert not (NEVER.get(name, set()) & fired), (name, sorted(NEVER[name] & fired))
    assert (a.root_cause.name if a.root_cause else None) == root
    assert a.outcome == outcome
    entry = file_summary(a)
    assert entry["outcome"] == outcome
    assert (entry["root_cause"] or {}).get("name") == root


def test_combined_nextn_log_is_the_concatenation() -> None:
    parts = [LOG_FIXTURES / f for f in ("nextn-1-topk.log", "nextn-2-mamba.log", "nextn-3-killed.log",
                                        "nextn-4-serving.log")]
    combined = (LOG_FIXTURES / "nextn-hybrid-launch.log").read_bytes()
    assert combined == b"".join(p.read_bytes() for p in parts)


def test_combined_nextn_log_is_split_into_its_four_attempts() -> None:
    """Each part of the combined log is one attempt, with the part's own root cause and outcome."""
    a = analyze(str(LOG_FIXTURES / "nextn-hybrid-launch.log"))
    parts = ("nextn-1-topk.log", "nextn-2-mamba.log", "nextn-3-killed.log", "nextn-4-serving.log")
    alone = [analyze(str(LOG_FIXTURES / f)) for f in parts]
    assert [x.outcome for x in a.attempts] == [x.outcome for x in alone]
    assert [x.root_cause.name if x.root_cause else None for x in a.attempts] == [
        x.root_cause.name if x.root_cause else None for x in alone]
    sizes = [len((LOG_FIXTURES / f).read_text().splitlines()) for f in parts]
    firsts = [1, *(1 + sum(sizes[:i]) for i in range(1, 4))]
    assert [x.launch.first_line for x in a.attempts] == firsts


def test_combined_nextn_log_reads_each_launch_config() -> None:
    """The first launch's topk (4) is reported, not the last launch's (1)."""
    a = analyze(str(LOG_FIXTURES / "nextn-hybrid-launch.log"))
    topk = [f for f in a.all_findings() if f.name == "spec-v2-topk-conflict"]
    assert topk and topk[0].data.get("topk") == 4
    assert "--speculative-eagle-topk 4" in topk[0].message
