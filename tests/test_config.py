"""Configuration for `check`: discovery, validation (every error names the bad key), merging with the CLI."""

# ruff: noqa: F811 — the shared fixtures of tests/test_check.py are imported, then requested by name

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logparse.gate.config import (
    Config,
    ConfigError,
    find_config,
    load_config,
    selector_matches,
    threshold_keys,
)
from logparse.model.events import Severity
from logparse.rules import all_rules, lookup
from tests.test_check import fake, logs, run, zz_rules  # noqa: F401 — fixtures

FULL = """
[project]
name = "x"

[tool.logdiag]
select = ["memory", "ZZT002", "zz-test-peer-failed"]
ignore = ["zz-test-entrypoint"]
fail-on = "warning"
baseline = "ci/base.json"

[tool.logdiag.severity]
zz-test-saturated = "error"
ZZT003 = "warning"

[tool.logdiag.thresholds.zz-test-saturated]
token_usage = 0.9
min_queue = 4

[tool.logdiag.thresholds.ZZT001]
enabled = false
"""


def test_full_config(tmp_path: Path, zz_rules: Any) -> None:
    p = tmp_path / "pyproject.toml"
    p.write_text(FULL)
    cfg = load_config(p)
    assert cfg.select == ["memory", "ZZT002", "zz-test-peer-failed"]
    assert cfg.ignore == ["zz-test-entrypoint"]
    assert cfg.fail_on == "warning"
    assert cfg.baseline == str(tmp_path / "ci" / "base.json")
    assert cfg.severity == {"zz-test-saturated": Severity.ERROR, "zz-test-peer-failed": Severity.WARNING}
    assert cfg.thresholds == {"zz-test-saturated": {"token_usage": 0.9, "min_queue": 4},
                              "zz-test-oom": {"enabled": False}}  # codes become names: ctx.threshold takes names
    assert cfg.source == str(p)


def test_logdiag_toml_has_top_level_keys(tmp_path: Path, zz_rules: Any) -> None:
    p = tmp_path / "logdiag.toml"
    p.write_text('fail_on = "info"\nignore = "memory, performance"\n[severity]\nzz-test-oom = "warning"\n')
    cfg = load_config(p)
    assert cfg.fail_on == "info"  # fail_on and fail-on are the same key
    assert cfg.ignore == ["memory", "performance"]
    assert cfg.severity_for("zz-test-oom", "ZZT001", Severity.ERROR) == Severity.WARNING
    assert cfg.severity_for("zz-test-saturated", "ZZT002", Severity.WARNING) == Severity.WARNING


def test_discovery_walks_up(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (tmp_path / ".git").mkdir()  # the repository root: discovery stops there
    assert find_config(deep) is None or not str(find_config(deep)).startswith(str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("[tool.logdiag]\n")
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "no-logdiag-table"\n')  # skipped
    assert find_config(deep) == tmp_path / "pyproject.toml"
    (tmp_path / "a" / "b" / "logdiag.toml").write_text("")
    assert find_config(deep) == tmp_path / "a" / "b" / "logdiag.toml"
    (deep / "pyproject.toml").write_text("[tool.logdiag]\nselect = []\n")
    assert find_config(deep) == deep / "pyproject.toml"


def test_no_config_is_the_defaults(tmp_path: Path) -> None:
    if find_config(tmp_path) is None:  # nothing above the temp directory
        assert load_config(cwd=tmp_path) == Config()
    cfg = Config()
    assert cfg.select == [] and cfg.ignore == [] and cfg.fail_on is None and cfg.thresholds == {}
    p = tmp_path / "pyproject.toml"
    p.write_text('[project]\nname = "x"\n')
    assert load_config(p) == Config(source=str(p))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.logdiag]\nselet = ['memory']\n",
         "unknown key 'tool.logdiag.selet' (expected one of: baseline, fail-on, ignore, select, severity, thresholds)"),
        ("[tool.logdiag]\nselect = ['nope']\n", "'tool.logdiag.select': unknown rule, code or family 'nope'"),
        ("[tool.logdiag]\nselect = [1]\n", "'tool.logdiag.select' must be a list of strings"),
        ("[tool.logdiag]\nfail-on = 'fatal'\n", "'tool.logdiag.fail-on' must be one of error, warning, info, never"),
        ("[tool.logdiag.severity]\nno-such-rule = 'error'\n",
         "'tool.logdiag.severity.no-such-rule': unknown rule 'no-such-rule'"),
        ("[tool.logdiag.severity]\nzz-test-oom = 'fatal'\n",
         "'tool.logdiag.severity.zz-test-oom' must be one of error, warning, info, not 'fatal'"),
        ("[tool.logdiag]\nseverity = 'error'\n", "'tool.logdiag.severity' must be a table"),
        ("[tool.logdiag.thresholds.no-such-rule]\nx = 1\n",
         "'tool.logdiag.thresholds.no-such-rule': unknown rule 'no-such-rule'"),
        ("[tool.logdiag.thresholds.zz-test-saturated]\ntoken_usag = 0.9\n",
         ("unknown threshold 'tool.logdiag.thresholds.zz-test-saturated.token_usag' "
          "(zz-test-saturated takes: min_queue, token_usage)")),
        ("[tool.logdiag.thresholds.zz-test-entrypoint]\nx = 1\n",
         "unknown threshold 'tool.logdiag.thresholds.zz-test-entrypoint.x' (zz-test-entrypoint takes: no thresholds)"),
        ("[tool.logdiag.thresholds.zz-test-saturated]\ntoken_usage = 'high'\n",
         "'tool.logdiag.thresholds.zz-test-saturated.token_usage' must be a number, not 'high'"),
        ("[tool.logdiag.thresholds.zz-test-saturated]\ntoken_usage = true\n",
         "'tool.logdiag.thresholds.zz-test-saturated.token_usage' must be a number, not True"),
        ("[tool.logdiag.thresholds]\nzz-test-saturated = 0.9\n",
         "'tool.logdiag.thresholds.zz-test-saturated' must be a table of threshold = value"),
        ("[tool.logdiag\n", "not valid TOML"),
    ],
)
def test_invalid_config_names_the_bad_key(tmp_path: Path, zz_rules: Any, text: str, message: str) -> None:
    p = tmp_path / "pyproject.toml"
    p.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert str(err.value).startswith(f"invalid configuration in {p}: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_invalid_config_is_exit_2_on_the_cli(fake: None, logs: Path) -> None:
    (logs / "pyproject.toml").write_text("[tool.logdiag]\nfail-on = 'warning'\nselect = ['ZZT001', 'bogus-rule']\n")
    r = run("logs")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == (f"logdiag: invalid configuration in {logs / 'pyproject.toml'}: 'tool.logdiag.select': "
                        "unknown rule, code or family 'bogus-rule' (see: logdiag rules)\n")
    (logs / "other.toml").write_text("[thresholds.zz-test-saturated]\nqueue = 3\n")
    r = run("logs", "--config", "other.toml")
    assert r.exit_code == 2 and "'thresholds.zz-test-saturated.queue'" in r.stderr


def test_discovered_config_drives_the_run(fake: None, logs: Path) -> None:
    (logs / "pyproject.toml").write_text('[tool.logdiag]\nfail-on = "warning"\n')
    (logs / ".git").mkdir()  # the repository root: discovery walks up to it
    sub = logs / "logs"
    import os

    os.chdir(sub)  # the fixture's monkeypatch.chdir restores the directory afterwards
    r = run("warn.log")
    assert r.exit_code == 1, "fail-on = warning from ../pyproject.toml"
    assert run("warn.log", "--fail-on", "error").exit_code == 0, "the command line wins"
    (logs / "pyproject.toml").write_text('[tool.logdiag.severity]\nzz-test-saturated = "error"\n')
    r = run("warn.log", "--format", "json")
    assert r.exit_code == 1
    sat = json.loads(r.stdout)["findings"][0]
    assert (sat["name"], sat["severity"], sat["failing"]) == ("zz-test-saturated", "error", True)


def test_cli_select_replaces_and_ignore_extends(fake: None, logs: Path) -> None:
    (logs / "logdiag.toml").write_text('select = ["memory", "performance"]\nignore = ["zz-test-saturated"]\n')
    names = lambda r: [f["name"] for f in json.loads(r.stdout)["findings"]]
    base = ("logs", "--format", "json", "--fail-on", "never")
    assert names(run(*base)) == ["zz-test-oom"]
    assert names(run(*base, "--select", "distributed,performance")) == ["zz-test-peer-failed"]
    assert names(run(*base, "--ignore", "memory")) == []


def test_explicit_config_file_and_its_baseline(fake: None, logs: Path) -> None:
    (logs / "ci").mkdir()
    (logs / "ci" / "logdiag.toml").write_text('baseline = "accepted.json"\n')
    r = run("logs", "--config", "ci/logdiag.toml")
    assert r.exit_code == 2, "a configured baseline that does not exist is an error"
    assert r.stderr == "logdiag: cannot read baseline ci/accepted.json: No such file or directory\n"
    r = run("logs", "--config", "ci/logdiag.toml", "--write-baseline", "ci/accepted.json")
    assert r.exit_code == 0, "…except when --write-baseline creates it"
    assert run("logs").exit_code == 1
    assert run("logs", "--config", "ci/logdiag.toml").exit_code == 0, "baseline path relative to the config file"


def test_selectors() -> None:
    assert selector_matches("ALL", "a", "X001", "memory")
    assert selector_matches("all", "a", "X001", "memory")
    assert selector_matches("memory", "cuda-oom", "MEM001", "memory")
    assert selector_matches("MEM", "cuda-oom", "MEM001", "memory")
    assert selector_matches("mem00", "cuda-oom", "MEM001", "memory")
    assert not selector_matches("MEM002", "cuda-oom", "MEM001", "memory")
    assert not selector_matches("cuda", "cuda-oom", "MEM001", "memory")
    assert not selector_matches("001", "cuda-oom", "MEM001", "memory"), "a prefix starts with letters"
    cfg = Config(select=["memory"], ignore=["MEM002"])
    assert cfg.selects("cuda-oom", "MEM001", "memory")
    assert not cfg.selects("kv-pool-no-room", "MEM002", "memory"), "ignore wins"
    assert not cfg.selects("nccl-timeout", "DIST001", "distributed")
    assert Config().selects("anything", "ANY001", "server")


def test_threshold_keys_are_found_in_the_rule_source(zz_rules: Any) -> None:
    assert threshold_keys(lookup("zz-test-saturated")) == {"token_usage": 0.95, "min_queue": 1}
    assert threshold_keys(lookup("zz-test-oom")) == {"enabled": True}
    assert threshold_keys(lookup("zz-test-entrypoint")) == {}


def test_real_catalog_thresholds_are_consistent() -> None:
    """Every ctx.threshold() of the real catalog is discoverable and has a literal default, so that
    configuration can be validated; the metric rules of the issue take thresholds."""
    for r in all_rules():
        keys = threshold_keys(r)
        assert all(isinstance(k, str) for k in keys), r.name
        for key, default in keys.items():
            assert isinstance(default, (int, float, bool, str)), f"{r.name}.{key}: default must be a literal"
    for name in ("spec-low-acceptance", "kv-cache-saturated"):
        r = lookup(name)
        if r is None:
            continue  # the catalog is not there yet
        assert threshold_keys(r), f"{name} should read its limits through ctx.threshold()"
