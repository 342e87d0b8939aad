"""`logdiag check`: exit codes, select/ignore, consequences, inputs, formats, progress — through
click's CliRunner (stdout and stderr asserted separately).

The rule catalog is written concurrently, so most tests do not depend on which rules exist: they
register a few test rules and replace the per-file analysis with `fake_analyze`, which turns marker
lines of a small log into findings (`ERROR zz-test-oom: text` → a finding of that rule on that
line; `CONSEQ <rule>: text` → a consequence nested under the previous finding)."""

from __future__ import annotations

import gzip
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from logparse.cli import check as cli_check
from logparse.cli.main import main
from logparse.gate.report import FileResult
from logparse.model.events import Severity
from logparse.model.findings import Evidence, Finding
from logparse.rules.registry import BY_CODE, REGISTRY, rule

# ------------------------------------------------------------------------------ test rules

TEST_RULES = {  # name: (code, family, default severity)
    "zz-test-oom": ("ZZT001", "memory", Severity.ERROR),
    "zz-test-saturated": ("ZZT002", "performance", Severity.WARNING),
    "zz-test-peer-failed": ("ZZT003", "distributed", Severity.INFO),
    "zz-test-entrypoint": ("ZZT004", "info", Severity.INFO),
}

_DOC = """{summary}

**What it means**

The test log says {name}.

**Why it matters**

Tests need a rule that fires.

**Example**

```
ERROR {name}: something
```

**Fix**

`--fix-{name}`.
"""


def _zz_test_saturated(ctx: Any) -> list[Finding]:
    ctx.threshold("zz-test-saturated", "token_usage", 0.95)
    ctx.threshold("zz-test-saturated", "min_queue", 1)
    return []


def _zz_test_oom(ctx: Any) -> list[Finding]:
    name = "zz-test-oom"
    ctx.threshold(name, "enabled", True)  # the rule name through a variable: attributed by enclosing function
    return []


def _nothing(ctx: Any) -> list[Finding]:
    return []


@pytest.fixture
def zz_rules() -> Iterator[dict[str, Any]]:
    """Register the test rules for one test (the real catalog may be empty or partial)."""
    fns = {"zz-test-saturated": _zz_test_saturated, "zz-test-oom": _zz_test_oom}
    added = []
    for name, (code, family, sev) in TEST_RULES.items():
        if name in REGISTRY:
            continue
        fn = fns.get(name, _nothing)
        fn_copy = type(_nothing)(fn.__code__, fn.__globals__, fn.__name__)
        fn_copy.__doc__ = _DOC.format(summary=f"Test rule {name}.", name=name)
        fn_copy.__module__ = __name__
        rule(code=code, name=name, family=family, severity=sev)(fn_copy)
        added.append((name, code))
    yield REGISTRY
    for name, code in added:
        REGISTRY.pop(name, None)
        BY_CODE.pop(code, None)


# ------------------------------------------------------------------------------ fake analysis

_MARK = re.compile(r"^(?:\[[^\]]*\] )?(ERROR|WARN|INFO|CONSEQ) ([\w-]+): (.*)$")
_SEV = {"ERROR": Severity.ERROR, "WARN": Severity.WARNING, "INFO": Severity.INFO}


def findings_of(path: str, text: str) -> FileResult:
    top: list[Finding] = []
    for no, line in enumerate(text.splitlines(), 1):
        m = _MARK.match(line)
        if not m:
            continue
        kind, name, msg = m.groups()
        code, family, default = TEST_RULES.get(name, ("ZZX999", "server", Severity.ERROR))
        sev = _SEV.get(kind, default)
        f = Finding(code=code, name=name, severity=sev, message=msg, remedy=f"--fix-{name}", family=family,
                    evidence=[Evidence(path, no, no, [(no, line)])], first_line=no, consequence=kind == "CONSEQ")
        if kind == "CONSEQ" and top:
            top[-1].consequences.append(f)
        else:
            top.append(f)
    root = next((f for f in top if f.severity == Severity.ERROR and not f.consequence), None)
    outcome = "crashed-at-startup" if root else "ready"
    return FileResult(path=path, findings=top, outcome=outcome, root_cause=root)


def fake_analyze(path: str, thresholds: dict[str, Any] | None = None, jobs: int = 1,
                 window: Any = None) -> FileResult:
    if path == "-":
        import sys

        text = sys.stdin.buffer.read().decode()
    elif path.endswith(".gz"):
        text = gzip.decompress(Path(path).read_bytes()).decode()
    else:
        text = Path(path).read_text()
    return findings_of(path, text)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, zz_rules: Any) -> None:
    monkeypatch.setattr(cli_check, "analyze_file", fake_analyze)


def run(*args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(main, ["check", *args], input=input, prog_name="logdiag")


def write(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"[2026-01-05 10:00:0{k % 10} TP0] {line}\n" for k, line in enumerate(lines)))
    return path


OK_LINE = "Load weight end. avail mem=20.00 GB"


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with clean, warning-only and failing logs (no pyproject above it)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "logs" / "clean.log", OK_LINE, OK_LINE)
    write(tmp_path / "logs" / "warn.log", OK_LINE, "WARN zz-test-saturated: token usage 0.99 with 12 queued",
          "INFO zz-test-entrypoint: use sglang serve")
    write(tmp_path / "logs" / "crash.log", OK_LINE, "ERROR zz-test-oom: CUDA out of memory on TP0",
          "CONSEQ zz-test-peer-failed: rank 1 saw rank 0 fail", OK_LINE)
    return tmp_path


# ------------------------------------------------------------------------------ exit codes


def test_help_documents_exit_codes() -> None:
    r = run("--help")
    assert r.exit_code == 0
    assert r.stderr == ""
    text = r.stdout
    for code, words in (("0", "no finding at or above --fail-on"), ("1", "findings at or above --fail-on"),
                        ("2", "usage, input, configuration or baseline error")):
        assert re.search(rf"^\s+{code}\s+{re.escape(words)}", text, re.MULTILINE), (code, text)
    for option in ("--fail-on", "--select", "--ignore", "--format", "--output", "--exit-zero", "--jobs",
                   "--config", "--baseline", "--write-baseline"):
        assert option in text


def test_exit_0_clean(fake: None, logs: Path) -> None:
    r = run("logs/clean.log")
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert re.fullmatch(r"logdiag: 1 file, 0 findings \(0 error, 0 warning, 0 info\); 0 at or above --fail-on "
                        r"error in \d+\.\ds \(config: none\)\n", r.stderr), r.stderr


def test_exit_0_below_threshold(fake: None, logs: Path) -> None:
    r = run("logs/warn.log")
    assert r.exit_code == 0
    assert "logs/warn.log:2: warning ZZT002 zz-test-saturated: token usage 0.99 with 12 queued" in r.stdout
    assert "logs/warn.log:3: info ZZT004 zz-test-entrypoint" in r.stdout
    assert "    fix: --fix-zz-test-saturated" in r.stdout
    assert "2 findings (0 error, 1 warning, 1 info); 0 at or above --fail-on error" in r.stderr
    assert "logs/" not in r.stderr


def test_exit_1_on_error(fake: None, logs: Path) -> None:
    r = run("logs/crash.log")
    assert r.exit_code == 1
    assert "logs/crash.log:2: error ZZT001 zz-test-oom [root cause]: CUDA out of memory on TP0" in r.stdout
    assert "     2 | [2026-01-05 10:00:01 TP0] ERROR zz-test-oom: CUDA out of memory on TP0" in r.stdout
    assert "1 at or above --fail-on error" in r.stderr
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "code", "failing"),
    [
        (["--fail-on", "error"], 1, 1),
        (["--fail-on", "warning"], 1, 2),
        (["--fail-on", "info"], 1, 4),
        (["--fail-on", "never"], 0, 0),
        (["--fail-on", "info", "--exit-zero"], 0, 4),
    ],
)
def test_fail_on_levels(fake: None, logs: Path, args: list[str], code: int, failing: int) -> None:
    r = run("logs", *args, "--format", "json")
    assert r.exit_code == code
    doc = json.loads(r.stdout)
    assert doc["summary"]["failing"] == failing
    assert r.stderr == ""  # machine format on stdout: no summary line


def test_exit_1_on_warning_only_with_fail_on_warning(fake: None, logs: Path) -> None:
    assert run("logs/warn.log").exit_code == 0
    r = run("logs/warn.log", "--fail-on", "warning")
    assert r.exit_code == 1
    assert "1 at or above --fail-on warning" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["logs/missing.log"], "logdiag: cannot read logs/missing.log: No such file or directory"),
        (["logs/*.nothing"], "logdiag: no files match logs/*.nothing"),
        (["logs", "--select", "no-such-rule"], "logdiag: --select: unknown rule, code or family 'no-such-rule'"),
        (["logs", "--ignore", "memory,NOPE1"], "logdiag: --ignore: unknown rule, code or family 'NOPE1'"),
        (["logs", "--config", "nope.toml"], "logdiag: cannot read configuration nope.toml: No such file"),
        (["logs", "--baseline", "nope.json"], "logdiag: cannot read baseline nope.json: No such file"),
    ],
)
def test_exit_2_input_errors(fake: None, logs: Path, args: list[str], message: str) -> None:
    r = run(*args)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith(message), r.stderr
    assert r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args",
    [["logs", "--fail-on", "critical"], ["logs", "--format", "xml"], ["logs", "--jobs", "0"], [], ["logs", "--bogus"]],
)
def test_exit_2_usage_errors(fake: None, logs: Path, args: list[str]) -> None:
    r = run(*args)
    assert r.exit_code == 2
    assert r.stdout == ""
    # One line on stderr that says where to read more (not click's four-line usage block).
    assert r.stderr.count("\n") == 1 and "(see: logdiag check --help)" in r.stderr, r.stderr


def test_exit_2_empty_file(fake: None, logs: Path) -> None:
    (logs / "empty.log").write_text("")
    r = run("empty.log")
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "logdiag: empty.log is empty\n")


# ------------------------------------------------------------------------------ select / ignore / consequences


@pytest.mark.parametrize(
    ("args", "names"),
    [
        ([], ["zz-test-oom", "zz-test-peer-failed", "zz-test-saturated", "zz-test-entrypoint"]),
        (["--select", "zz-test-oom"], ["zz-test-oom"]),
        (["--select", "ZZT002"], ["zz-test-saturated"]),
        (["--select", "zzt002"], ["zz-test-saturated"]),
        (["--select", "memory,info"], ["zz-test-oom", "zz-test-entrypoint"]),
        (["--select", "memory", "--select", "performance"], ["zz-test-oom", "zz-test-saturated"]),
        (["--ignore", "distributed", "--ignore", "ZZT004"], ["zz-test-oom", "zz-test-saturated"]),
        (["--select", "ZZT", "--ignore", "zz-test-oom"], ["zz-test-peer-failed", "zz-test-saturated",
                                                          "zz-test-entrypoint"]),
    ],
)
def test_select_ignore(fake: None, logs: Path, args: list[str], names: list[str]) -> None:
    r = run("logs/crash.log", "logs/warn.log", "--format", "json", "--fail-on", "never", *args)
    assert r.exit_code == 0, r.stderr
    assert [f["name"] for f in json.loads(r.stdout)["findings"]] == names


def test_ignored_error_does_not_fail(fake: None, logs: Path) -> None:
    assert run("logs/crash.log", "--ignore", "zz-test-oom").exit_code == 0
    assert run("logs/crash.log", "--select", "performance").exit_code == 0


def test_consequences_are_flattened_marked_and_counted(fake: None, logs: Path) -> None:
    write(logs / "cons.log", "WARN zz-test-saturated: queue grows", "CONSEQ zz-test-oom: OOM after the queue grew")
    r = run("cons.log", "--format", "json")
    assert r.exit_code == 1, "an error-severity consequence counts toward the exit code"
    items = json.loads(r.stdout)["findings"]
    assert [(f["name"], f["consequence"], f["cause"]) for f in items] == [
        ("zz-test-saturated", False, None), ("zz-test-oom", True, "zz-test-saturated")]
    text = run("cons.log").stdout
    assert "cons.log:2: error ZZT001 zz-test-oom [consequence of zz-test-saturated]: OOM" in text


# ------------------------------------------------------------------------------ inputs


def test_quoted_glob_directory_gz_and_stdin(fake: None, logs: Path) -> None:
    crash = (logs / "logs" / "crash.log").read_bytes()
    (logs / "more").mkdir()
    (logs / "more" / "c.log.gz").write_bytes(gzip.compress(crash))
    r = run("logs/c*.log", "more", "--format", "json", "--fail-on", "never")  # CliRunner: no shell, glob unexpanded
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == ["logs/clean.log", "logs/crash.log", "more/c.log.gz"]
    assert [f["failing"] for f in doc["files"]] == [0, 0, 0]
    assert doc["files"][2]["root_cause"] == {"code": "ZZT001", "line": 2, "name": "zz-test-oom"}
    r = run("-", input=crash)
    assert r.exit_code == 1
    assert "-:2: error ZZT001 zz-test-oom" in r.stdout


def test_recursive_glob(fake: None, logs: Path) -> None:
    write(logs / "deep" / "a" / "b" / "x.log", "ERROR zz-test-oom: deep")
    r = run("deep/**/*.log", "--format", "json")
    assert r.exit_code == 1
    assert [f["path"] for f in json.loads(r.stdout)["files"]] == ["deep/a/b/x.log"]


def test_jobs_pool_keeps_input_order_and_output(fake: None, logs: Path) -> None:
    for k in range(6):
        write(logs / "many" / f"r{k}.log", OK_LINE, f"ERROR zz-test-oom: OOM number {k}" if k % 2 else OK_LINE)
    one = run("many", "logs", "--format", "json", "--jobs", "1")
    two = run("many", "logs", "--format", "json", "--jobs", "3")
    assert one.exit_code == two.exit_code == 1
    assert one.stdout == two.stdout
    assert [f["path"] for f in json.loads(two.stdout)["files"]][:3] == ["many/r0.log", "many/r1.log", "many/r2.log"]


def test_output_file(fake: None, logs: Path) -> None:
    r = run("logs", "--format", "sarif", "--output", "out/x.sarif")
    assert r.exit_code == 2 and "cannot write report out/x.sarif" in r.stderr  # no such directory
    r = run("logs", "--format", "sarif", "--output", "x.sarif")
    assert r.exit_code == 1
    assert r.stdout == ""
    assert json.loads((logs / "x.sarif").read_text())["version"] == "2.1.0"
    assert re.match(r"logdiag: 3 files, 4 findings \(1 error, 1 warning, 2 info\); 1 at or above", r.stderr)


# ------------------------------------------------------------------------------ JSON


def test_json_is_deterministic_and_complete(fake: None, logs: Path) -> None:
    a = run("logs", "--format", "json").stdout
    b = run("logs", "--format", "json", "--jobs", "2").stdout
    assert a == b
    doc = json.loads(a)
    assert list(doc) == sorted(doc)
    assert doc["summary"] == {"files": 3, "findings": 4, "failing": 1, "baselined": 0,
                              "by_severity": {"error": 1, "warning": 1, "info": 2}}
    oom = next(f for f in doc["findings"] if f["name"] == "zz-test-oom")
    assert oom["line"] == oom["end_line"] == 2
    assert oom["root_cause"] is True and oom["failing"] is True and oom["baselined"] is False
    assert oom["evidence"] == [{"line": 2, "text": "[2026-01-05 10:00:01 TP0] ERROR zz-test-oom: CUDA out of memory on TP0"}]
    assert re.fullmatch(r"[0-9a-f]{32}", oom["fingerprint"])
    assert "ZZT001" in doc["rules"]
    assert not re.search(r"\"(time|elapsed|seconds|date)\"", a)


# ------------------------------------------------------------------------------ GitHub


def test_github_annotations(fake: None, logs: Path) -> None:
    write(logs / "esc.log", "ERROR zz-test-oom: 100% used, a:b")
    r = run("esc.log", "logs/warn.log", "--format", "github")
    assert r.exit_code == 1
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines == [
        "::error file=esc.log,line=1,endLine=1,title=zz-test-oom (ZZT001)::[root cause] 100%25 used, a:b%0AFix: --fix-zz-test-oom",
        "::warning file=logs/warn.log,line=2,endLine=2,title=zz-test-saturated (ZZT002)::token usage 0.99 with 12 queued%0AFix: --fix-zz-test-saturated",
        "::notice file=logs/warn.log,line=3,endLine=3,title=zz-test-entrypoint (ZZT004)::use sglang serve%0AFix: --fix-zz-test-entrypoint",
    ]


def test_github_escaping() -> None:
    from logparse.render.github import escape_data, escape_property

    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    assert escape_property("%3A") == "%253A", "% first, so escapes are not escaped twice"


def test_github_property_escaping_of_paths(fake: None, logs: Path) -> None:
    write(logs / "odd,name:1.log", "ERROR zz-test-oom: x")
    line = run("odd,name:1.log", "--format", "github").stdout.splitlines()[0]
    assert line.startswith("::error file=odd%2Cname%3A1.log,line=1,endLine=1,")


# ------------------------------------------------------------------------------ JUnit


def test_junit(fake: None, logs: Path, zz_rules: dict[str, Any]) -> None:
    write(logs / "ctrl.log", "ERROR zz-test-oom: bad \x1b[31mcolour\x1b[0m & <tags>", "ERROR zz-test-oom: again")
    r = run("logs/crash.log", "logs/warn.log", "ctrl.log", "--format", "junit", "--fail-on", "warning")
    assert r.exit_code == 1
    assert r.stderr == ""
    root = ET.fromstring(r.stdout)
    from logparse.rules import all_rules

    n_rules = len(all_rules())
    assert n_rules >= 4
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["logs/crash.log", "logs/warn.log", "ctrl.log"]
    for s in suites:
        assert int(s.get("tests", "-1")) == len(s.findall("testcase")) == n_rules
        assert int(s.get("failures", "-1")) == len(s.findall("testcase/failure"))
    assert root.get("tests") == str(3 * n_rules)
    assert root.get("failures") == "3"  # crash: oom; warn: saturated (info stays green); ctrl: oom (two findings)
    crash = suites[0]
    case = crash.find("testcase[@name='zz-test-oom (ZZT001)']")
    assert case is not None and case.get("classname") == "logdiag.memory" and case.get("file") == "logs/crash.log"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == "CUDA out of memory on TP0" and failure.get("type") == "error"
    assert "      2 | [2026-01-05 10:00:01 TP0] ERROR zz-test-oom: CUDA out of memory on TP0" in (failure.text or "")
    peer = crash.find("testcase[@name='zz-test-peer-failed (ZZT003)']")
    assert peer is not None and peer.find("failure") is None
    assert "consequence of zz-test-oom" in (peer.findtext("system-out") or "")
    props = {p.get("name"): p.get("value") for p in crash.iter("property")}
    assert props["outcome"] == "crashed-at-startup" and props["root-cause"] == "zz-test-oom (ZZT001)"
    ctrl = suites[2].find("testcase[@name='zz-test-oom (ZZT001)']/failure")
    assert ctrl is not None and ctrl.get("message", "").startswith("2 findings; first: bad")
    assert "\x1b" not in r.stdout and "&amp; &lt;tags&gt;" in r.stdout


def test_junit_testcases_follow_select(fake: None, logs: Path) -> None:
    root = ET.fromstring(run("logs/crash.log", "--format", "junit", "--select", "ZZT001,ZZT002").stdout)
    assert [c.get("name") for c in root.iter("testcase")] == ["zz-test-oom (ZZT001)", "zz-test-saturated (ZZT002)"]


# ------------------------------------------------------------------------------ progress and summary


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_and_for_many_files() -> None:
    tty = _Tty()
    p = cli_check.Progress(3, tty)
    for name in ("a.log", "b.log", "c.log"):
        p.tick(name)
    p.finish()
    out = tty.getvalue()
    assert "[1/3] a.log" in out and "[3/3] c.log" in out
    assert out.endswith("\r") and "\n" not in out
    plain = io.StringIO()
    q = cli_check.Progress(3, plain)
    q.tick("a.log")
    q.finish()
    assert plain.getvalue() == ""
    single = _Tty()
    s = cli_check.Progress(1, single)
    s.tick("a.log")
    assert single.getvalue() == ""


def test_no_progress_under_cirunner(fake: None, logs: Path) -> None:
    r = run("logs")
    assert "\r" not in r.stderr


# ------------------------------------------------------------------------------ the real engine


def test_analyze_file_passes_thresholds_when_the_engine_takes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    calls: list[dict[str, Any]] = []

    class _A:
        findings: tuple[Finding, ...] = ()
        outcome = "ready"
        root_cause = None

    def analyze(path: str, *, jobs: int = 1, config: dict[str, Any] | None = None) -> _A:
        calls.append({"path": path, "jobs": jobs, "config": config})
        return _A()

    fake_engine = types.ModuleType("logparse.engine.core")
    fake_engine.analyze = analyze  # type: ignore[attr-defined]
    import logparse.engine

    monkeypatch.setitem(sys.modules, "logparse.engine.core", fake_engine)
    monkeypatch.setattr(logparse.engine, "core", fake_engine, raising=False)
    res = cli_check.analyze_file("x.log", {"kv-cache-saturated": {"token_usage": 0.9}}, 2)
    assert calls == [{"path": "x.log", "jobs": 2, "config": {"kv-cache-saturated": {"token_usage": 0.9}}}]
    assert res.path == "x.log" and res.outcome == "ready" and res.findings == []


def test_real_engine_on_a_corpus_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the catalog holds today: the command runs end to end and its formats agree."""
    from tests.conftest import CORPUS

    monkeypatch.chdir(tmp_path)
    logs = sorted(CORPUS.glob("dev-00*.log"))[:3]
    for p in logs:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    names = [p.name for p in logs]
    j = run(*names, "--format", "json", "--fail-on", "never", "--jobs", "2")
    assert j.exit_code == 0, j.stderr
    doc = json.loads(j.stdout)
    assert [f["path"] for f in doc["files"]] == names
    strict = run(*names, "--format", "json")
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert strict.exit_code == (1 if errors else 0)
    for f in doc["findings"]:
        text = (tmp_path / f["path"]).read_text(errors="replace").splitlines()
        for ev in f["evidence"]:
            assert ev["text"].strip() and ev["text"].strip() in text[ev["line"] - 1], (f["name"], ev)


def test_thresholds_reach_the_real_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """[tool.logdiag.thresholds] changes what a metric rule decides (dev-031: mean accept len 2.49)."""
    from logparse.gate.config import threshold_keys
    from logparse.rules import lookup
    from tests.conftest import CORPUS

    r = lookup("spec-low-acceptance")
    if r is None or "min_accept_len" not in threshold_keys(r):
        pytest.skip("spec-low-acceptance with a min_accept_len threshold is not in the catalog")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.log").write_bytes((CORPUS / "dev-031.log").read_bytes())

    def fired(limit: float) -> bool:
        extra = {"min_token_acceptance": 0.0} if "min_token_acceptance" in threshold_keys(r) else {}
        table = "".join(f"{k} = {v}\n" for k, v in {"min_accept_len": limit, **extra}.items())
        (tmp_path / "pyproject.toml").write_text(f"[tool.logdiag.thresholds.spec-low-acceptance]\n{table}")
        res = run("spec.log", "--format", "json", "--select", "spec-low-acceptance", "--fail-on", "warning")
        assert res.exit_code in (0, 1), res.stderr
        names = [f["name"] for f in json.loads(res.stdout)["findings"]]
        assert res.exit_code == (1 if names else 0)
        return "spec-low-acceptance" in names

    assert fired(3.5)
    assert not fired(1.2)


def test_rule_errors_are_reported(monkeypatch: pytest.MonkeyPatch, logs: Path, zz_rules: Any) -> None:
    def broken(path: str, thresholds: Any = None, jobs: int = 1) -> FileResult:
        res = fake_analyze(path)
        res.rule_errors = ["ZZT002 zz-test-saturated: KeyError: 'x'"]
        return res

    monkeypatch.setattr(cli_check, "analyze_file", broken)
    r = run("logs/clean.log", "--format", "json")
    assert r.exit_code == 0
    assert r.stderr == ("logdiag: warning: logs/clean.log: rule ZZT002 zz-test-saturated: KeyError: 'x' "
                        "(a bug in logdiag; rerun with LOGDIAG_DEBUG=1 for the traceback)\n")
    assert json.loads(r.stdout)["files"][0]["rule_errors"] == ["ZZT002 zz-test-saturated: KeyError: 'x'"]
