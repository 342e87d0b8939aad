"""Exit codes that mean what they say (issue 11, part 5).

Every input, environment and configuration problem is exit 2 with exactly one line on stderr;
3 is kept for bugs. Each case runs logdiag in a real process (closed and full streams cannot be
faked in-process), bounded by a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CRASH_LOG = ROOT / "fixtures" / "logs" / "nextn-3-killed.log"  # findings at error: check exits 1
TIMEOUT = 180  # generous: CI machines and this one are shared


def run(*args: str, cwd: Path | None = None, shell: str | None = None, stdin: object = subprocess.DEVNULL,
        stdout: object = subprocess.PIPE, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """logdiag in its own process; `shell` is a bash line where `$LOGDIAG` runs logdiag."""
    full_env = {**os.environ, **(env or {}), "LOGDIAG": f"{sys.executable} -m logparse"}
    cmd: list[str] = ["bash", "-c", shell] if shell else [sys.executable, "-m", "logparse", *args]
    return subprocess.run(cmd, cwd=cwd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,  # type: ignore[call-overload]
                          text=True, env=full_env, timeout=TIMEOUT, check=False)


def assert_input_error(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("logdiag: "), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# ------------------------------------------------------------------------------------------
# Streams: stdin closed, stdout closed or full
# ------------------------------------------------------------------------------------------


def test_stdin_closed() -> None:
    assert_input_error(run(shell="exec 0<&-; $LOGDIAG analyze -"), "stdin", "closed")


@pytest.mark.parametrize("command", ["analyze", "check"])
def test_stdout_closed_is_not_silent_success(command: str) -> None:
    assert_input_error(run(shell=f'exec 1>&-; $LOGDIAG {command} --format json "{CRASH_LOG}"'),
                       "cannot write output", "closed")


@pytest.mark.parametrize("args", [("analyze",), ("check", "--format", "sarif"), ("events", "--kind", "decode_batch")])
def test_stdout_full(args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        r = run(*args, str(CRASH_LOG), stdout=full)
    assert_input_error(r, "cannot write output", "No space left on device")


def test_stdout_closed_by_the_reader_is_quiet() -> None:
    r = run(shell=f'$LOGDIAG analyze "{CRASH_LOG}" | head -c 10 >/dev/null; echo "rc=${{PIPESTATUS[0]}}" >&2')
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr


# ------------------------------------------------------------------------------------------
# File names that are not UTF-8
# ------------------------------------------------------------------------------------------


@pytest.fixture
def odd_name(tmp_path: Path) -> Path:
    raw = os.fsencode(tmp_path) + b"/run\xff.log"
    with open(raw, "wb") as f:
        f.write(CRASH_LOG.read_bytes())
    return Path(os.fsdecode(raw))


def test_non_utf8_name_check_sarif(odd_name: Path) -> None:
    r = run("check", "--format", "sarif", odd_name.name, cwd=odd_name.parent)
    assert r.returncode == 1, r.stderr
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for res in json.loads(r.stdout)["runs"][0]["results"] for loc in res["locations"]}
    assert uris == {"run%FF.log"}


def test_non_utf8_name_analyze_json_and_report(odd_name: Path) -> None:
    r = run("analyze", "--format", "json", str(odd_name))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["files"][0]["path"].endswith("run\ufffd.log")
    out = odd_name.parent / "report.html"
    r = run("report", str(odd_name), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "run\ufffd.log" in out.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------
# Baselines and configuration
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", ("is not JSON",)),
        ("[" * 100_000 + "]" * 100_000, ("nested too deeply",)),
        ('{"something": "else"}', ("not a logdiag",)),
    ],
)
def test_bad_baseline(tmp_path: Path, content: str, words: tuple[str, ...]) -> None:
    b = tmp_path / "b.json"
    b.write_text(content)
    assert_input_error(run("check", "--baseline", str(b), str(CRASH_LOG)), *words)


def test_hostile_baseline_shapes_are_accepted_not_crashed(tmp_path: Path) -> None:
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"runs": [{"results": [{"partialFingerprints": []}, 5]}, 7, {"results": 3}]}))
    assert run("check", "--baseline", str(b), str(CRASH_LOG)).returncode == 1
    b.write_text(json.dumps({"findings": [{"name": "x", "evidence": 5}, 3, {"name": 4}]}))
    assert run("check", "--baseline", str(b), str(CRASH_LOG)).returncode == 1


def test_baseline_and_config_devices_are_refused() -> None:
    assert_input_error(run("check", "--baseline", "/dev/zero", str(CRASH_LOG)), "character device")
    assert_input_error(run("check", "--config", "/dev/zero", str(CRASH_LOG)), "character device")


def test_baseline_and_config_reads_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.gate import baseline, config

    big = tmp_path / "big.json"
    big.write_text('{"findings": []}' + " " * 4096)
    monkeypatch.setattr(baseline, "MAX_BASELINE_BYTES", 1024)
    with pytest.raises(baseline.BaselineError, match="larger than"):
        baseline.load_baseline(str(big))
    toml = tmp_path / "logdiag.toml"
    toml.write_text('fail-on = "error"\n' + "#" * 4096 + "\n")
    monkeypatch.setattr(config, "MAX_CONFIG_BYTES", 1024)
    with pytest.raises(config.ConfigError, match="larger than"):
        config.load_config(str(toml))


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ("select = " + "[" * 5000 + "]" * 5000, ("nested too deeply",)),
        ("[thresholds.kv-cache-saturated]\nmin_lines = " + "9" * 5000, ("digits",)),
        ("[thresholds.kv-cache-saturated]\ntoken_usage = nan", ("finite",)),
        ("[thresholds.kv-cache-saturated]\ntoken_usage = inf", ("finite",)),
        ("[thresholds.kv-cache-saturated]\ntoken_usage = -1", ("0 or more",)),
        ("[thresholds.kv-cache-saturated]\ntoken_usage = 1.5", ("between 0 and 1",)),
        ("[thresholds.kv-cache-saturated]\nmin_lines = 2.5", ("whole number",)),
        ("[thresholds.spec-low-acceptance]\nmin_accept_len = 1e400", ("finite",)),
        ("fail-on = 'often'", ("fail-on",)),
    ],
)
def test_bad_config_values(tmp_path: Path, toml: str, words: tuple[str, ...]) -> None:
    c = tmp_path / "logdiag.toml"
    c.write_text(toml + "\n")
    assert_input_error(run("check", "--config", str(c), str(CRASH_LOG)), "logdiag.toml", *words)


def test_good_thresholds_pass(tmp_path: Path) -> None:
    c = tmp_path / "logdiag.toml"
    c.write_text("[thresholds.kv-cache-saturated]\ntoken_usage = 0.95\nmin_lines = 3\n")
    assert run("check", "--config", str(c), str(CRASH_LOG)).returncode == 1


# ------------------------------------------------------------------------------------------
# Configuration discovery: bounded by the repository or home, and always named
# ------------------------------------------------------------------------------------------


def _away_from_home(tmp_path: Path) -> dict[str, str]:
    """A HOME that is no ancestor of the test's directories (the walk stops at home), keeping
    the real cache directory (a cold grammar cache costs ~10 s per process)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return {"HOME": str(tmp_path / "elsewhere"), "XDG_CACHE_HOME": cache}


def test_config_in_a_shared_ancestor_is_ignored(tmp_path: Path) -> None:
    # Like a logdiag.toml someone left in /tmp: no repository or home boundary above the run.
    (tmp_path / "logdiag.toml").write_text('fail-on = "never"\n')
    work = tmp_path / "work"
    work.mkdir()
    r = run("check", str(CRASH_LOG), cwd=work, env=_away_from_home(tmp_path))
    assert r.returncode == 1, r.stderr
    assert "(config: none)" in r.stderr


def test_config_at_the_repository_root_is_used_and_named(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "logdiag.toml").write_text('fail-on = "never"\n')
    work = tmp_path / "sub" / "dir"
    work.mkdir(parents=True)
    r = run("check", str(CRASH_LOG), cwd=work, env=_away_from_home(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "logdiag.toml)" in r.stderr and "(config: " in r.stderr
    r = run("check", "--format", "json", str(CRASH_LOG), cwd=work, env=_away_from_home(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["config_file"] == str(tmp_path / "logdiag.toml")


def test_config_above_the_repository_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "logdiag.toml").write_text('fail-on = "never"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    r = run("check", "--format", "json", str(CRASH_LOG), cwd=repo, env=_away_from_home(tmp_path))
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["config_file"] is None


# ------------------------------------------------------------------------------------------
# Usage errors and input errors: one line, exit 2
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (("analyze", "--bogus", "x"), "logdiag analyze --help"),
        (("analyze",), "logdiag analyze --help"),
        (("check", "--fail-on", "sometimes", "x"), "logdiag check --help"),
        (("events", "x"), "logdiag events --help"),
        (("report", "x"), "logdiag report --help"),
        (("nosuchcommand",), "logdiag --help"),
        (("--max-input-size", "lots", "analyze", "x"), "logdiag --help"),
    ],
)
def test_usage_errors_are_one_line(args: tuple[str, ...], where: str) -> None:
    r = run(*args)
    assert_input_error(r, f"(see: {where})")
    assert r.stdout == ""


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("analyze", "/nonexistent/run.log"), ("No such file",)),
        (("analyze", "/dev/zero"), ("device",)),
        (("check", "/dev/urandom"), ("device",)),
        (("events", "/dev/zero", "--kind", "decode_batch"), ("device",)),
        (("report", "/dev/zero", "-o", "/tmp/never-written.html"), ("device",)),
    ],
)
def test_input_errors_are_one_line(args: tuple[str, ...], words: tuple[str, ...]) -> None:
    assert_input_error(run(*args), *words)


def test_empty_directory_for_events_is_exit_2(tmp_path: Path) -> None:
    assert_input_error(run("events", str(tmp_path), "--kind", "decode_batch"), "no log files")


def test_bad_size_limit_in_the_environment() -> None:
    assert_input_error(run("analyze", str(CRASH_LOG), env={"LOGDIAG_MAX_INPUT_SIZE": "huge"}), "LOGDIAG_MAX_INPUT_SIZE")
