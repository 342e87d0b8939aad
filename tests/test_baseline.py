"""Baselines: fingerprints that survive reruns (timestamps, line shifts, ranks), and the CLI round trip."""

# ruff: noqa: F811 — the shared fixtures of tests/test_check.py are imported, then requested by name

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logparse.gate.baseline import (
    BaselineError,
    fingerprint,
    fingerprints_of,
    load_baseline,
    normalize,
)
from tests.test_check import OK_LINE, fake, logs, run, write, zz_rules  # noqa: F401 — fixtures

TB = [
    "[2026-01-05 10:00:01 TP3] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2571, in run',
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 3 has a total capacity of "
     "79.10 GiB of which 1.20 GiB is free. Process 41735 has 77.88 GiB memory in use."),
]


def test_normalize_masks_what_changes_between_runs() -> None:
    assert normalize(TB[0]) == "[<ts> TP#] Scheduler hit an exception: Traceback (most recent call last):"
    assert normalize(TB[1]) == 'File "<path>/scheduler.py", line #, in run'
    assert normalize("ptr 0x7f3a2c000000 id deadbeef1234 uuid 123e4567-e89b-12d3-a456-426614174000") == \
        "ptr <hex> id <hex> uuid <id>"
    assert normalize("connect to 10.0.0.12:29500 failed at 12:01:02.5") == "connect to <ip> failed at <ts>"
    assert normalize("06-30 12:00:01 vllm INFO  x") == "<ts> vllm INFO x"
    assert normalize("2026-01-05T10:00:01.123Z done") == "<ts> done"


def test_fingerprint_survives_timestamps_lines_ranks_and_paths() -> None:
    fp = fingerprint("cuda-oom", TB)
    rerun = [
        TB[0].replace("10:00:01", "23:59:59").replace("TP3", "TP5"),
        TB[1].replace("/usr/local/lib/python3.12/dist-packages", "/home/ci/.venv/lib/python3.11/site-packages")
        .replace("2571", "2602"),
        TB[2].replace("1.50", "2.00").replace("41735", "99"),
    ]
    assert fingerprint("cuda-oom", rerun) == fp
    assert fingerprint("cuda-oom", list(reversed(TB))) == fp, "interleaved ranks print in any order"
    assert fingerprint("cuda-oom", TB + [TB[0].replace("TP3", "TP4")]) == fp, "one more rank, same problem"


def test_fingerprint_tells_problems_apart() -> None:
    fp = fingerprint("cuda-oom", TB)
    assert fingerprint("host-oom", TB) != fp
    assert fingerprint("cuda-oom", TB[:2]) != fp
    other = TB[:2] + ["RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275"]
    assert fingerprint("cuda-oom", other) != fp
    assert fingerprint("x", [], "no evidence: message 12 used") == fingerprint("x", [], "no evidence: message 99 used")
    assert fingerprint("x", [], "message a") != fingerprint("x", [], "message b")
    assert len(fp) == 32 and int(fp, 16) >= 0


def test_write_then_check_against_the_baseline(fake: None, logs: Path) -> None:
    r = run("logs", "--write-baseline", "base.json", "--format", "github")
    assert r.exit_code == 0, "writing a baseline accepts today's findings"
    assert r.stderr.splitlines()[-1] == "logdiag: wrote 4 findings to baseline base.json"
    doc = json.loads((logs / "base.json").read_text())
    assert len(doc["findings"]) == 4
    assert json.loads(run("logs", "--format", "json").stdout)["findings"] == doc["findings"], \
        "the baseline is exactly the --format json output"

    r = run("logs", "--baseline", "base.json", "--fail-on", "info", "--format", "json")
    assert r.exit_code == 0
    s = json.loads(r.stdout)["summary"]
    assert (s["findings"], s["baselined"], s["failing"]) == (4, 4, 0)

    # The same crash again, a day later, with more lines before it and another rank: still known.
    write(logs / "logs" / "crash.log", OK_LINE, OK_LINE, OK_LINE, "ERROR zz-test-oom: CUDA out of memory on TP7",
          "CONSEQ zz-test-peer-failed: rank 3 saw rank 0 fail")
    text = (logs / "logs" / "crash.log").read_text().replace("2026-01-05", "2026-02-17")
    (logs / "logs" / "crash.log").write_text(text)
    r = run("logs", "--baseline", "base.json")
    assert r.exit_code == 0, r.stdout
    # Accepted findings are one title line each under a count, never printed in full.
    assert r.stdout.startswith("4 findings in the baseline (accepted, not shown in full):\n")
    assert "    logs/crash.log:4: error ZZT001 zz-test-oom [root cause]\n" in r.stdout
    assert "fix:" not in r.stdout and " | " not in r.stdout
    assert ", 4 in the baseline; 0 at or above --fail-on error" in r.stderr

    # A new problem fails the run; only it counts.
    write(logs / "logs" / "new.log", "ERROR zz-test-oom: illegal memory access")
    r = run("logs", "--baseline", "base.json", "--format", "json")
    assert r.exit_code == 1
    failing = [(f["path"], f["message"]) for f in json.loads(r.stdout)["findings"] if f["failing"]]
    assert failing == [("logs/new.log", "illegal memory access")]
    text = run("logs", "--baseline", "base.json").stdout
    assert text.startswith("logs/new.log:1: error ZZT001 zz-test-oom [root cause]: illegal memory access\n")
    assert text.count("ZZT001") == 2 and "\n4 findings in the baseline (accepted" in text
    gh = run("logs", "--baseline", "base.json", "--format", "github").stdout.splitlines()
    assert len(gh) == 1 and gh[0].startswith("::error file=logs/new.log,line=1,"), "accepted findings: no annotation"


def test_baseline_from_analyze_json_and_sarif(fake: None, logs: Path) -> None:
    sarif = run("logs", "--format", "sarif").stdout
    (logs / "b.sarif").write_text(sarif)
    assert run("logs", "--baseline", "b.sarif", "--fail-on", "info").exit_code == 0
    # `logdiag analyze --format json` has findings (with nested consequences) per file, no fingerprints.
    check_doc = json.loads(run("logs", "--format", "json").stdout)
    files: dict[str, Any] = {}
    for f in check_doc["findings"]:
        entry = {"name": f["name"], "message": f["message"], "evidence": f["evidence"], "consequences": []}
        files.setdefault(f["path"], []).append(entry)
    analyze_doc = {"files": [{"path": p, "findings": fs} for p, fs in files.items()]}
    assert fingerprints_of(analyze_doc) == {f["fingerprint"] for f in check_doc["findings"]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read baseline base.json: No such file or directory"),
        ("{not json", "baseline base.json is not JSON"),
        ('{"something": 1}', "baseline base.json is not a logdiag check --format json output"),
        ("[1, 2]", "baseline base.json is not a logdiag check --format json output"),
    ],
)
def test_bad_baseline(fake: None, logs: Path, content: str | None, message: str) -> None:
    if content is not None:
        (logs / "base.json").write_text(content)
    with pytest.raises(BaselineError, match=message):
        load_baseline("base.json")
    r = run("logs", "--baseline", "base.json")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith(f"logdiag: {message}") and r.stderr.count("\n") == 1


def test_unwritable_baseline_is_exit_2(fake: None, logs: Path) -> None:
    r = run("logs", "--write-baseline", "no/such/dir/base.json")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == "logdiag: cannot write baseline no/such/dir/base.json: No such file or directory\n"
