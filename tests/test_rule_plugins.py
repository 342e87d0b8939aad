"""Rules from installed packages (`logdiag.rules` entry points) load under the built-in contract."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.rules import all_rules, plugins, registry

GOOD_RULE = '''
"""A site-specific rule."""
from logparse.model.events import Severity, ServerReady
from logparse.rules.registry import rule


@rule(code="ACME001", name="acme-shutdown-seen", family="custom", severity=Severity.INFO)
def acme_shutdown_seen(ctx):
    """The server said it is ready.

    **What it means**
    The server finished starting.

    **Why it matters**
    ACME pages the on-call engineer when a server comes up.

    **Example**
    `The server is fired up and ready to roll!`

    **Fix**
    Nothing to fix.
    """
    for e in ctx.log.of(ServerReady):
        yield ctx.finding("acme-shutdown-seen", "the server is ready", "nothing to fix", events=[e])


@rule(code="ACME002", name="acme-undocumented", family="custom", severity=Severity.INFO)
def acme_undocumented(ctx):
    """No sections at all."""
    return []
'''


def _dist(root: Path, name: str, module: str, body: str, entry: str) -> None:
    pkg = root / module
    pkg.mkdir()
    (pkg / "__init__.py").write_text(body)
    fx = pkg / "fixtures" / "acme-shutdown-seen"
    fx.mkdir(parents=True)
    (fx / "bad.log").write_text("[2025-01-01 00:00:00] The server is fired up and ready to roll!\n")
    (fx / "good.log").write_text("[2025-01-01 00:00:00] Load weight begin.\n")
    info = root / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[logdiag.rules]\n{name} = {entry}\n")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    _dist(tmp_path, "acme-rules", "acme_rules", GOOD_RULE, "acme_rules")
    _dist(tmp_path, "broken-rules", "broken_rules", "raise RuntimeError('boom')\n", "broken_rules")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("LOGDIAG_NO_PLUGINS", raising=False)
    before = dict(registry.REGISTRY), dict(registry.BY_CODE), list(plugins.PROBLEMS)
    plugins.PROBLEMS.clear()
    plugins.load_plugins(force=True)
    yield tmp_path
    registry.REGISTRY.clear(); registry.REGISTRY.update(before[0])
    registry.BY_CODE.clear(); registry.BY_CODE.update(before[1])
    plugins.PROBLEMS[:] = before[2]
    for mod in ("acme_rules", "broken_rules"):
        sys.modules.pop(mod, None)


def test_a_plugin_rule_that_meets_the_contract_is_registered_with_its_origin(installed: Path) -> None:
    r = registry.REGISTRY["acme-shutdown-seen"]
    assert r.origin == "acme-rules" and r.code == "ACME001"
    assert r in all_rules()
    assert Path(r.fixture_dir) == (installed / "acme_rules" / "fixtures" / "acme-shutdown-seen").resolve()


def test_rules_that_break_the_contract_or_fail_to_import_are_reported_not_loaded(installed: Path) -> None:
    assert "acme-undocumented" not in registry.REGISTRY and "ACME002" not in registry.BY_CODE
    problems = {(p.origin, p.rule): p.reason for p in plugins.PROBLEMS}
    assert "What it means" in problems[("acme-rules", "acme-undocumented")]
    assert "fixtures" in problems[("acme-rules", "acme-undocumented")]
    assert "RuntimeError: boom" in problems[("broken-rules", None)]


def test_a_plugin_rule_fires_in_analyze_and_is_listed_by_logdiag_rules(installed: Path) -> None:
    bad = installed / "acme_rules" / "fixtures" / "acme-shutdown-seen" / "bad.log"
    res = CliRunner().invoke(main, ["analyze", str(bad), "--format", "json"])
    assert res.exit_code == 0, res.output
    names = {f["name"] for f in json.loads(res.stdout)["files"][0]["findings"]}
    assert "acme-shutdown-seen" in names
    listing = CliRunner().invoke(main, ["rules"])
    assert listing.exit_code == 0
    row = next(line for line in listing.stdout.splitlines() if "acme-shutdown-seen" in line)
    assert "acme-rules" in row
    assert "plugins: acme-rules" in listing.stdout
    assert "plugin problem: broken-rules" in listing.stdout
    doc = json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).stdout)
    assert {r["name"]: r["origin"] for r in doc["rules"]}["acme-shutdown-seen"] == "acme-rules"
    assert any(p["origin"] == "broken-rules" for p in doc["plugin_problems"])
    one = CliRunner().invoke(main, ["rule", "ACME001"])
    assert one.exit_code == 0 and "ready to roll" in one.stdout


def test_the_contract_check_itself() -> None:
    built_in = registry.REGISTRY["cuda-oom"]
    assert plugins.contract_problems(built_in, Path(__file__).parents[1] / "fixtures" / "rules" / "cuda-oom") == []
    assert any("fixtures" in p for p in plugins.contract_problems(built_in, None))


@pytest.mark.parametrize("code, ok", [("ACME001", True), ("MEM001", True), ("acme001", False), ("A001", False),
                                      ("ACME01X", False), ("ÄCME001", False)])
def test_plugin_codes_are_like_the_built_in_ones(code: str, ok: bool) -> None:
    assert plugins._is_code(code) is ok


@pytest.mark.parametrize("name, ok", [("cuda-oom", True), ("acme2-x", True), ("Cuda-oom", False), ("a--b", False),
                                      ("a_b", False), ("-a", False)])
def test_plugin_names_are_kebab_case(name: str, ok: bool) -> None:
    assert plugins._is_kebab(name) is ok


def test_without_any_plugin_installed_importlib_metadata_is_not_imported(tmp_path: Path) -> None:
    """The cheap look at the metadata files decides; a run without plugins pays nothing more."""
    import subprocess

    code = ("import sys; from logparse.rules import all_rules; all_rules(); "
            "print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_declared_group_is_seen(installed: Path) -> None:
    assert plugins._declared_anywhere() is True
