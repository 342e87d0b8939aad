"""The run model: launch attempts (boundaries, command, environment, settings), per-attempt
verdicts, remedies that never propose what the attempt already set, and the ParsedLog index."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from click.testing import CliRunner

from logparse.cli.main import main
from logparse.engine.core import analyze
from logparse.engine.remedies import drop_already_set, settings_of
from logparse.model.events import LaunchCommand, ServerArgs, Severity, Traceback
from logparse.model.findings import Finding
from logparse.parsing.pipeline import parse_file
from logparse.run.model import run_of
from tests.conftest import FIXTURES, write_log

LOGS = FIXTURES / "logs"
PROMPT = "root@7f3c2a9d1b4e:/sgl-workspace# "


def _mamba_session(tmp_path: Path) -> str:
    """nextn-2-mamba.log pasted from a shell session that exports SGLANG_ENABLE_SPEC_V2=1 (instead of
    the inline `SGLANG_ENABLE_SPEC_V2=1 python3 …` prefix)."""
    lines = (LOGS / "nextn-2-mamba.log").read_text().splitlines()
    command = lines[0].removeprefix("$ ").removeprefix("SGLANG_ENABLE_SPEC_V2=1 ")
    head = [f"{PROMPT}export SGLANG_ENABLE_SPEC_V2=1", f"{PROMPT}export HF_HOME=/data/hf", PROMPT + command]
    return write_log(tmp_path, "\n".join(head + lines[1:]) + "\n", "session.log")


def test_exports_belong_to_the_attempt_and_its_environment(tmp_path: Path) -> None:
    log = parse_file(_mamba_session(tmp_path))
    (launch,) = run_of(log).launches
    assert launch.first_line == 1 and launch.command is not None and launch.command.line == 3
    assert launch.env == {"SGLANG_ENABLE_SPEC_V2": "1", "HF_HOME": "/data/hf"}
    assert launch.arg("tp_size") == 8 and launch.flags["--speculative-eagle-topk"] == 1
    assert launch.sets("SGLANG_ENABLE_SPEC_V2=1") and launch.sets("SGLANG_ENABLE_SPEC_V2=true")
    assert not launch.sets("SGLANG_ENABLE_SPEC_V2=0") and not launch.sets("SGLANG_OTHER=1")
    assert launch.sets("--tp 8") and launch.sets("--tp=8") and not launch.sets("--tp 16")
    # A flag named without a value is a switch: `--mem-fraction-static` is not "already set" to on.
    assert not launch.sets("--mem-fraction-static") and launch.sets("--mem-fraction-static 0.85")


def test_the_remedy_does_not_propose_the_exported_variable(tmp_path: Path) -> None:
    a = analyze(_mamba_session(tmp_path))
    assert a.root_cause is not None and a.root_cause.name == "spec-mamba-extra-buffer"
    remedy = a.root_cause.remedy
    assert "--mamba-scheduler-strategy extra_buffer" in remedy
    assert "`SGLANG_ENABLE_SPEC_V2=1`" not in remedy.replace("`SGLANG_ENABLE_SPEC_V2=1` (already set)", "")
    # The same log with the variable inline: the remedy is the same.
    inline = analyze(str(LOGS / "nextn-2-mamba.log"))
    assert inline.root_cause is not None and inline.root_cause.remedy == remedy


def test_topk_conflict_after_export_keeps_a_remedy_that_changes_something() -> None:
    a = analyze(str(LOGS / "pasted-shell-session.log"))
    first = a.attempts[0]
    assert first.root_cause is not None and first.root_cause.name == "spec-v2-topk-conflict"
    assert first.launch.env.get("SGLANG_ENABLE_SPEC_V2") == "1"
    assert "SGLANG_ENABLE_SPEC_V2=1" not in first.root_cause.remedy
    assert "--speculative-eagle-topk 1" in first.root_cause.remedy


def _finding(remedy: str, line: int) -> Finding:
    return Finding(code="X001", name="x", severity=Severity.ERROR, message="m", remedy=remedy, first_line=line)


def test_remedy_alternatives_already_set_are_dropped_or_marked(tmp_path: Path) -> None:
    launch = run_of(parse_file(_mamba_session(tmp_path))).launches[0]
    f = _finding("`SGLANG_ENABLE_SPEC_V2=1`, or `--tp 16`", 5)
    drop_already_set(f, launch)
    assert f.remedy == "`--tp 16`" and f.data["remedy_already_set"] == ["SGLANG_ENABLE_SPEC_V2=1"]
    g = _finding("`--tp 8` or `SGLANG_ENABLE_SPEC_V2=1`", 5)
    drop_already_set(g, launch)
    assert g.remedy.startswith("(already set by this launch: --tp 8, SGLANG_ENABLE_SPEC_V2=1)")
    h = _finding("`--mamba-scheduler-strategy extra_buffer` with `SGLANG_ENABLE_SPEC_V2=1`", 5)
    drop_already_set(h, launch)
    assert h.remedy == "`--mamba-scheduler-strategy extra_buffer` with `SGLANG_ENABLE_SPEC_V2=1` (already set)"
    untouched = _finding("raise `--mem-fraction-static` to 0.92", 5)
    drop_already_set(untouched, launch)
    assert untouched.remedy == "raise `--mem-fraction-static` to 0.92" and "remedy_already_set" not in untouched.data
    assert settings_of("`--speculative-eagle-topk 1 --speculative-num-draft-tokens 4`, or unset `X`") == [
        "--speculative-eagle-topk 1", "--speculative-num-draft-tokens 4"]


def test_rule_context_answers_the_launch_of_a_line() -> None:
    from logparse.rules.context import RuleContext
    from logparse.run.views import Views

    log = parse_file(str(LOGS / "nextn-hybrid-launch.log"))
    ctx = RuleContext(log, Views(log))
    tops = [ctx.launch_at(n).flags.get("--speculative-eagle-topk") for n in (10, 30, 100, 1000)]
    assert tops == [4, 1, 1, 1]
    assert ctx.launch_at(1000).server_args.get("mamba_scheduler_strategy") == "extra_buffer"
    assert [ctx.launch_at(n).index for n in (1, 24, 25, 161, 10**9)] == [1, 1, 2, 4, 4]


def test_multi_attempt_json_and_text_name_the_attempts() -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["analyze", str(LOGS / "nextn-hybrid-launch.log"), "--format", "json"])
    assert res.exit_code == 0, res.output
    (entry,) = json.loads(res.stdout)["files"]
    launches = entry["launches"]
    assert [x["index"] for x in launches] == [1, 2, 3, 4]
    assert [x["outcome"] for x in launches] == ["crashed-at-startup"] * 3 + ["serving"]
    roots = [(x["root_cause"] or {}).get("name") for x in launches]
    assert roots == ["spec-v2-topk-conflict", "spec-mamba-extra-buffer", "host-oom", None]
    assert entry["outcome"] == "serving" and entry["root_cause"] is None
    assert all(x["env"] == {"SGLANG_ENABLE_SPEC_V2": "1"} for x in launches)
    assert all(x["last_line"] + 1 == y["first_line"] for x, y in pairwise(launches))
    assert launches[0]["findings"][0] == "spec-v2-topk-conflict"
    text = runner.invoke(main, ["analyze", str(LOGS / "nextn-hybrid-launch.log")]).stdout
    # The attempt line names its root cause; the fix is printed once, under that finding.
    assert "attempt 1 (lines 1–24): crashed-at-startup — root cause spec-v2-topk-conflict" in text
    assert "(SPEC001): Spec v2" in text and "[attempt 1]" in text
    assert "attempt 4 (lines 161–" in text and ": serving" in text
    single = runner.invoke(main, ["analyze", str(LOGS / "nextn-4-serving.log")]).stdout
    assert "attempt 1" not in single


def test_of_index_keeps_file_order_subclasses_and_follows_changes() -> None:
    log = parse_file(str(LOGS / "nextn-hybrid-launch.log"))
    scan = [e for e in log.events if isinstance(e, (ServerArgs, LaunchCommand, Traceback))]
    assert log.of(ServerArgs, LaunchCommand, Traceback) == scan
    assert log.of(object) == log.events  # type: ignore[arg-type]
    extra = ServerArgs(line=10**6, end_line=10**6, ts=None, rank=None, source="", wrapper=None)
    log.events.append(extra)
    assert log.of(ServerArgs)[-1] is extra
    log.events = log.events[:-1]
    assert extra not in log.of(ServerArgs)


def test_environment_printed_by_sglang_is_the_process_view(tmp_path: Path) -> None:
    text = (
        "$ CUDA_VISIBLE_DEVICES=0,1,2,3 python -m sglang.launch_server --model-path m --tp 4\n"
        "[2026-03-07 15:20:01 TP3] Context: self.device='cuda' self.gpu_id=3 "
        "os.environ.get('CUDA_VISIBLE_DEVICES')='0,1' self.tp_rank=3 self.tp_size=4\n"
    )
    (launch,) = run_of(parse_file(write_log(tmp_path, text))).launches
    assert launch.inline_env == {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}
    assert launch.printed_env == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert launch.env == {"CUDA_VISIBLE_DEVICES": "0,1"}


def test_a_directory_with_run_is_one_run(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("[2026-03-07 15:20:00 TP0] Init torch distributed begin.\n")
    (tmp_path / "b.log").write_text(
        "[2026-03-07 15:20:01 TP1] Init torch distributed begin.\n"
        "[2026-03-07 15:21:00] The server is fired up and ready to roll!\n")
    res = CliRunner().invoke(main, ["analyze", str(tmp_path), "--run", "--format", "json"])
    assert res.exit_code == 0, res.output
    (entry,) = json.loads(res.stdout)["files"]
    assert sorted(entry["files"]) == [str(tmp_path / "a.log"), str(tmp_path / "b.log")]
    assert entry["startup"]["ready"] is True and entry["outcome"] == "ready"
    alone = json.loads(CliRunner().invoke(main, ["analyze", str(tmp_path / "a.log"), "--format", "json"]).stdout)
    assert alone["files"][0]["startup"]["ready"] is False


def test_exports_persist_across_attempts_and_start_the_next_one(tmp_path: Path) -> None:
    text = "\n".join([
        f"{PROMPT}echo hi", "hi", f"{PROMPT}export A=1", PROMPT.rstrip(),
        f"{PROMPT}python3 -m sglang.launch_server --model-path m --tp 2", "x",
        f"{PROMPT}export B=2", f"{PROMPT}sglang serve --model-path m",
    ]) + "\n"
    first, second = run_of(parse_file(write_log(tmp_path, text))).launches
    assert (first.first_line, first.last_line, second.first_line) == (1, 6, 7)
    assert first.env == {"A": "1"} and second.env == {"A": "1", "B": "2"}
    assert second.command is not None and second.command.program == "sglang serve"


def test_lifecycle_per_attempt_phases_readiness_and_failures() -> None:
    run = run_of(parse_file(str(LOGS / "nextn-hybrid-launch.log")))
    first, _, third, last = run.lifecycles
    assert first.failures == {"main": 6} and first.ready is False and not first.phases
    assert third.phases and third.ready is False and third.up_line is None
    assert third.failures == {"main": 159}  # the shell's `Killed` during weight loading
    assert last.failures == {} and last.ready is True and last.serving
    assert last.ready_line is not None and last.traffic_line is not None and last.ready_line < last.traffic_line
    assert run.startup is last and run.ready is True


def test_an_untagged_dated_scheduler_exception_header_means_tp1(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The scheduler tags its lines with its rank whenever TP > 1, its exception header too: a
    dated, untagged `Scheduler hit an exception` is a TP=1 server; a tagged one says nothing alone."""
    from tests.conftest import analyze_text

    head = "Scheduler hit an exception: Traceback (most recent call last):\n"
    frame = '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2680, in run_scheduler_process\n'
    untagged = analyze_text(tmp_path, f"[2025-12-29 13:00:55] {head}{frame}", name="u.log")
    assert untagged.views.facts().get("tp_size") == 1
    tagged = analyze_text(tmp_path, f"[2025-12-29 13:00:55 TP3] {head}{frame}", name="t.log")
    assert tagged.views.facts().get("tp_size") is None
