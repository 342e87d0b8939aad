"""One owner per fact: `analyze --format json` and the report agree on every fixture and corpus log.

Outcome, readiness, root cause, slowest rank and the number of launch attempts are computed once
(the run model and the engine); the text/JSON summary and the report only read them. The shipped
logs go through the real commands (CliRunner); the rule fixtures and the corpus go through the same
functions in-process (one analysis, both documents), which keeps the test fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from tests.conftest import CORPUS, FIXTURES, corpus_logs

SHIPPED = sorted((FIXTURES / "logs").glob("*.log"))
RULE_LOGS = sorted((FIXTURES / "rules").glob("*/*.log"))
CORPUS_LOGS = corpus_logs()


def _from_analyze(entry: dict[str, Any]) -> dict[str, Any]:
    root = entry["root_cause"]
    slow = entry["startup"].get("slowest_rank")
    return {
        "outcome": entry["outcome"],
        "ready": entry["startup"]["ready"],
        "root_cause": root["name"] if root else None,
        "slowest_rank": slow["rank"] if slow else None,
        "launches": len(entry["launches"]),
    }


def _from_report(data: dict[str, Any]) -> dict[str, Any]:
    root = data["summary"]["root_cause"]
    slow = data["timing"]["slowest_rank"]
    return {
        "outcome": data["summary"]["outcome"],
        "ready": data["timing"]["ready"],
        "root_cause": root["name"] if root else None,
        "slowest_rank": slow["rank"] if slow else None,
        "launches": data["timing"]["launches"],
    }


def _coherent(facts: dict[str, Any]) -> list[str]:
    """The facts must not contradict each other (e.g. crashed-at-startup yet ready)."""
    problems = []
    up = {"ready", "serving", "stopped", "crashed-while-serving"}
    if facts["outcome"] in up and facts["ready"] is not True:
        problems.append(f"outcome {facts['outcome']} but ready={facts['ready']}")
    if facts["outcome"] in ("crashed-at-startup", "incomplete") and facts["ready"] is not False:
        problems.append(f"outcome {facts['outcome']} but ready={facts['ready']}")
    if facts["launches"] < 1:
        problems.append("no launch attempt")
    return problems


@pytest.mark.parametrize("log", SHIPPED, ids=[p.name for p in SHIPPED])
def test_commands_agree_on_shipped_logs(log: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["analyze", str(log), "--format", "json"])
    assert res.exit_code == 0, res.output
    (entry,) = json.loads(res.stdout)["files"]
    out = tmp_path / "x.json"
    res = runner.invoke(main, ["report", str(log), "-o", str(out)])
    assert res.exit_code == 0, res.output
    mine, theirs = _from_analyze(entry), _from_report(json.loads(out.read_text()))
    assert mine == theirs
    assert not _coherent(mine), _coherent(mine)
    assert len(entry["launches"]) == mine["launches"]
    if entry["launches"]:
        last = entry["launches"][-1]
        assert (last["outcome"], (last["root_cause"] or {}).get("name")) == (mine["outcome"], mine["root_cause"])


def _in_process(log: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    from logparse.engine.core import analyze
    from logparse.render.summary import file_summary
    from logparse.report.model import build_report

    a = analyze(str(log))
    return _from_analyze(file_summary(a)), _from_report(build_report(a).data)


@pytest.mark.parametrize("log", RULE_LOGS, ids=[f"{p.parent.name}/{p.name}" for p in RULE_LOGS])
def test_summary_and_report_agree_on_rule_fixtures(log: Path) -> None:
    mine, theirs = _in_process(log)
    assert mine == theirs
    assert not _coherent(mine), _coherent(mine)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus (../shared/corpus) is not present")
@pytest.mark.parametrize("log", CORPUS_LOGS, ids=[p.stem for p in CORPUS_LOGS])
def test_summary_and_report_agree_on_corpus(log: Path) -> None:
    mine, theirs = _in_process(log)
    assert mine == theirs
    assert not _coherent(mine), _coherent(mine)
