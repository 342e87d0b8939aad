"""One CLI convention: every command's --help ends with examples that parse, shared options are
the same everywhere, inputs and empty inputs behave the same on every command, the README's
configuration is accepted as shown, and every `logdiag …` command in the README runs as written
(with sample paths mapped to fixtures)."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from logparse.cli import options
from logparse.cli.main import main
from logparse.gate.config import load_config
from tests.conftest import FIXTURES, REPO

README = REPO / "README.md"
LOGS = FIXTURES / "logs"
WINDOWED = {"analyze", "check", "report", "events", "export"}
TAKES_PATHS = {"analyze", "check", "events", "export"}


def run(*args: str, input: bytes | str | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), input=input)


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(main)
    out = {}
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        assert cmd is not None, name
        out[name] = cmd
    return out


COMMANDS = _commands()


def test_every_command_is_walked() -> None:
    assert {"analyze", "check", "report", "events", "compare", "follow", "rules", "rule", "export"} <= set(COMMANDS)


def _examples(help_text: str) -> list[str]:
    block = help_text.split("Examples:\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return lines


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_has_examples_that_parse(name: str) -> None:
    r = run(name, "--help")
    assert r.exit_code == 0, r.output
    assert "Examples:\n" in r.stdout, f"logdiag {name} --help has no Examples block"
    examples = _examples(r.stdout)
    assert examples, name
    for line in examples:
        # A pipeline's logdiag part (`python -m sglang.launch_server ... | logdiag follow -`).
        line = line.rsplit("| ", 1)[-1]
        args = shlex.split(line)
        assert args[:2] == ["logdiag", name], f"{name}: example {line!r} is not a logdiag {name} command"
        # Parsing (no run): an example with an unknown option or a bad choice fails here.
        COMMANDS[name].make_context(name, args[2:])


def _param(cmd: click.Command, opt: str) -> click.Parameter | None:
    return next((p for p in cmd.params if opt in getattr(p, "opts", ())), None)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_shared_options_are_the_same_everywhere(name: str) -> None:
    cmd = COMMANDS[name]
    jobs = _param(cmd, "--jobs")
    if name in TAKES_PATHS or name == "report":
        assert jobs is not None, f"{name} has no --jobs"
    if jobs is not None:
        # One default rule (options.jobs_default: 2 on 2+ cores), never a per-command number.
        assert jobs.default is options.jobs_default, name
        assert getattr(jobs, "show_default", None) == options.JOBS_DEFAULT_TEXT, name
    if name in TAKES_PATHS or name in {"report", "compare"}:
        redact = _param(cmd, "--no-redact")
        assert redact is not None and redact.help == _param(COMMANDS["analyze"], "--no-redact").help, name  # type: ignore[union-attr]
    for opt in ("--since", "--until"):
        p = _param(cmd, opt)
        if name in WINDOWED:
            assert p is not None, f"{name} has no {opt}"
            assert p.help == _param(COMMANDS["analyze"], opt).help, (name, opt)  # type: ignore[union-attr]
    if name in TAKES_PATHS:
        paths = next(p for p in cmd.params if p.name == "paths")
        assert paths.nargs == -1, name


# ------------------------------------------------------------------------------------ inputs


def test_quoted_globs_work_on_every_command_that_takes_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "logs" / "sub").mkdir(parents=True)
    shutil.copy(LOGS / "nextn-1-topk.log", tmp_path / "logs" / "a.log")
    shutil.copy(LOGS / "nextn-2-mamba.log", tmp_path / "logs" / "sub" / "b.log")
    monkeypatch.chdir(tmp_path)
    r = run("analyze", "logs/**/*.log", "--format", "json")
    assert r.exit_code == 0, r.output
    assert [f["path"] for f in json.loads(r.stdout)["files"]] == ["logs/a.log", "logs/sub/b.log"]
    r = run("events", "logs/**/*.log", "--kind", "traceback", "--format", "jsonl")
    assert r.exit_code == 0 and {"logs/a.log", "logs/sub/b.log"} <= set(re.findall(r'"source": "([^"]+)"', r.stdout))
    assert run("check", "logs/**/*.log", "--exit-zero").exit_code == 0
    for command in (["analyze"], ["check"], ["events", "--kind", "traceback"]):
        r = run(*command, "nothing/*.log")
        assert (r.exit_code, r.stderr) == (2, "logdiag: no files match nothing/*.log\n"), command


EMPTY_INPUTS = [
    ["analyze"],
    ["check"],
    ["events", "--kind", "traceback"],
    ["report", "-o", "-", "--format", "json"],
    ["export", "-o", "out"],
]


@pytest.mark.parametrize("command", EMPTY_INPUTS)
def test_empty_stdin_is_an_empty_file(command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.log").write_bytes(b"")
    from_file = run(*command, "empty.log")
    from_stdin = run(*command, "-", input=b"")
    assert (from_file.exit_code, from_file.stdout, from_file.stderr) == (2, "", "logdiag: empty.log is empty\n")
    assert (from_stdin.exit_code, from_stdin.stdout) == (2, "")
    # export names the failed inputs of its manifest on a second line.
    assert from_stdin.stderr.splitlines()[0] == "logdiag: stdin is empty"
    assert len(from_stdin.stderr.splitlines()) == (2 if command[0] == "export" else 1)


def test_events_kind_list_needs_no_path() -> None:
    r = run("events", "--kind", "list")
    assert r.exit_code == 0, r.output
    assert "decode_batch" in r.stdout.split()
    r = run("events", "--kind", "decode_batch")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == "logdiag: missing PATHS: the logs to export (see: logdiag events --help)\n"


# ------------------------------------------------------------------------------------ config


def _readme_toml() -> str:
    return re.findall(r"```toml\n(.*?)```", README.read_text(), re.DOTALL)[0]


@pytest.mark.parametrize("name", ["logdiag.toml", "pyproject.toml"])
def test_the_readme_configuration_is_accepted_as_written(name: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    text = _readme_toml()
    assert text.startswith("[tool.logdiag]\n")
    (tmp_path / name).write_text(text)
    (tmp_path / ".git").mkdir()  # the discovery stops at a repository root
    config = load_config(cwd=tmp_path)
    assert (config.fail_on, config.select, config.source) == ("warning", ["memory", "SPEC"], str(tmp_path / name))
    assert config.thresholds["kv-cache-saturated"] == {"token_usage": 0.95}
    monkeypatch.chdir(tmp_path)
    shutil.copy(LOGS / "eagle3-kv-pool.log", tmp_path / "run.log")
    assert run("check", "run.log", "--write-baseline", "logdiag-baseline.json").exit_code == 0
    r = run("check", "run.log")
    assert r.exit_code == 0, r.output
    assert f"(config: {name})" in r.stderr


def test_a_logdiag_toml_takes_top_level_keys_or_the_table_not_both(tmp_path: Path) -> None:
    own = tmp_path / "logdiag.toml"
    own.write_text('fail-on = "info"\n')
    assert load_config(own).fail_on == "info"
    own.write_text('[tool.logdiag]\nfail-on = "info"\n')
    assert load_config(own).fail_on == "info"
    own.write_text('fail-on = "info"\n[tool.logdiag]\nfail-on = "warning"\n')
    r = run("check", str(LOGS / "nextn-1-topk.log"), "--config", str(own))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"logdiag: invalid configuration in {own}: [tool.logdiag] and top-level keys "
                        "together (fail-on); use one of them\n")
    own.write_text('[tool.logdiag]\nfail_on = "sometimes"\n')
    r = run("check", str(LOGS / "nextn-1-topk.log"), "--config", str(own))
    assert r.exit_code == 2 and "'tool.logdiag.fail_on' must be one of" in r.stderr


# ------------------------------------------------------------------------------------ README

# The README's sample names, and the fixture each stands for. A README command naming a file that
# is not here (and not written by an earlier command) fails the test: add it.
PLACEHOLDERS: dict[str, Path] = {
    "run.log": LOGS / "nextn-4-serving.log",
    "server.log": LOGS / "spec-serving-healthy.log",
    "node0.log": LOGS / "nextn-4-serving.log",
    "node1.log": LOGS / "spec-serving-healthy.log",
    "spec.log": LOGS / "spec-serving-healthy.log",
    "nospec.log": LOGS / "baseline-cuda-graph-false.log",
    "BASELINE.log": LOGS / "baseline-cuda-graph-false.log",
    "CANDIDATE.log": LOGS / "spec-serving-healthy.log",
    "base.log": LOGS / "baseline-cuda-graph-false.log",
    "cand.log": LOGS / "spec-serving-healthy.log",
    "steps1.log": LOGS / "spec-serving-healthy.log",
    "steps3.log": LOGS / "nextn-4-serving.log",
    "steps5.log": LOGS / "spec-serving-healthy.log",
    # Timestamped logs: README examples put a time window on logs/ (a log without any timestamp
    # cannot take one: exit 2, test_time_window.py).
    "logs/a.log": LOGS / "eagle3-kv-pool.log",
    "logs/b.log": LOGS / "nextn-hybrid-launch.log",
    "logs/deep/c.log": LOGS / "pasted-shell-session.log",
}
GZIPPED = {"other.log.gz": LOGS / "nextn-2-mamba.log"}
STDIN = LOGS / "nextn-1-topk.log"
EXPECTED_EXIT = {
    "analyze": {0}, "events": {0}, "export": {0}, "report": {0}, "rules": {0}, "rule": {0},
    "check": {0, 1},  # findings at or above --fail-on
    "compare": {0, 1},  # not comparable
    "follow": {0, 1, 4},  # ready, crashed, timed out
}
REMOTE_SCHEDULER = "tcp://sched-host:"
FOLLOW_TIMEOUT = "3"  # a README follow command waits for a health URL or a stop that never comes


def readme_commands() -> list[str]:
    """Every line of a README code block that is a `logdiag …` command (comments stripped)."""
    out = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", README.read_text(), re.DOTALL):
        if lang not in ("", "sh", "bash", "console"):
            continue
        out.extend(line.strip() for line in body.splitlines() if line.strip().startswith("logdiag "))
    return out


def test_the_readme_shows_commands() -> None:
    cmds = readme_commands()
    assert len(cmds) >= 25
    assert {shlex.split(c, comments=True)[1] for c in cmds} >= {"analyze", "events", "follow", "check", "report", "compare", "rules", "rule"}


def _workspace(root: Path) -> None:
    for name, source in PLACEHOLDERS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / name)
    for name, source in GZIPPED.items():
        (root / name).write_bytes(gzip.compress(source.read_bytes(), mtime=0))
    (root / "fixtures").symlink_to(FIXTURES)  # commands that name the repository's own fixtures


_OUTPUT_OPTIONS = {"-o", "--output", "--write-baseline"}


def test_every_readme_command_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    failures = []
    remote = [line for line in readme_commands() if REMOTE_SCHEDULER in line]
    # Only the README's real-cluster example addresses a scheduler on another host; it cannot run
    # here (tests/test_fleet.py runs the same code on a LocalCluster).
    assert len(remote) == 2, remote
    for line in readme_commands():
        if REMOTE_SCHEDULER in line:
            continue
        args = shlex.split(line, comments=True)[1:]
        name = args[0]
        inputs = [a for i, a in enumerate(args[1:], 1) if not a.startswith("-") and args[i - 1] not in _OUTPUT_OPTIONS
                  and re.search(r"\.(log|gz|txt|json)$|/$", a) and "*" not in a]
        missing = [a for a in inputs if not (tmp_path / a).exists()]
        assert not missing, f"README command {line!r} names {missing}: add them to PLACEHOLDERS"
        if name == "follow" and "--timeout" not in args:
            args += ["--timeout", FOLLOW_TIMEOUT]
        r = run(*args, input=STDIN.read_bytes() if "-" in args else None)
        # Log text may quote a traceback on stdout; logdiag's own would be on stderr or raised.
        crashed = r.exception is not None and not isinstance(r.exception, SystemExit)
        if r.exit_code not in EXPECTED_EXIT[name] or crashed or "Traceback" in r.stderr:
            failures.append(f"{line!r}: exit {r.exit_code}, stderr {r.stderr[-300:]!r}")
    assert not failures, "\n".join(failures)
