"""The engine: grouping repeats across ranks, root cause and consequences, the run's outcome, rule
ordering (specific → fallback → findings-readers), thresholds, and the JSON/text output of findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.engine.core import (
    Analysis,
    analyze,
    execute,
    group_findings,
    pick_root,
    rank_range,
)
from logparse.model.events import Frame, Severity, Traceback
from logparse.model.findings import Evidence, Finding
from logparse.rules.context import mask_numbers, traceback_fingerprint
from logparse.rules.registry import Rule

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def write(tmp_path: Path, text: str, name: str = "run.log") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def finding(
    name: str = "cuda-oom",
    *,
    line: int = 1,
    rank: str | None = None,
    severity: Severity = Severity.ERROR,
    message: str = "boom",
    fingerprint: str | None = "fp",
    consequence: bool = False,
) -> Finding:
    return Finding(
        code="X001",
        name=name,
        severity=severity,
        message=message,
        remedy="fix",
        family="memory",
        evidence=[Evidence("f", line, line)],
        ranks=[rank] if rank else [],
        first_line=line,
        fingerprint=fingerprint,
        consequence=consequence,
        claims={line},
    )


# --------------------------------------------------------------------------- ranks and grouping


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ([f"TP{i}" for i in range(8)], "TP0–TP7"),
        (["TP10", "TP9", "TP8", "TP11"], "TP8–TP11"),
        ([f"DP{i} TP{i}" for i in range(8)], "DP0 TP0–DP7 TP7"),
        (["TP0", "TP2"], "TP0, TP2"),
        (["TP0", "TP1"], "TP0, TP1"),
        (["TP0", "TP1", "TP2", "TP5"], "TP0–TP2, TP5"),
        (["TP5 EP5"], "TP5 EP5"),
        ([], ""),
    ],
)
def test_rank_range(tags: list[str], expected: str) -> None:
    assert rank_range(tags) == expected


def test_group_same_fingerprint_across_ranks() -> None:
    raw = [finding(line=10 + i, rank=f"TP{i}") for i in range(8)]
    (merged,) = group_findings(raw)
    assert merged.count == 8
    assert merged.ranks == [f"TP{i}" for i in range(8)]
    assert merged.message == "boom (on TP0–TP7, 8 times)"
    assert merged.first_line == 10
    assert merged.claims == set(range(10, 18))
    assert merged.data["occurrences"] == 8


def test_group_keeps_different_fingerprints_apart() -> None:
    raw = [
        finding(line=1, rank="TP0", fingerprint="a"),
        finding(line=2, rank="TP1", fingerprint="b"),
    ]
    assert len(group_findings(raw)) == 2


def test_group_places_where_at_the_placeholder() -> None:
    raw = [
        finding(line=i, rank=f"TP{i}", message="KV pool sizing failed{where}: budget -5")
        for i in range(4)
    ]
    (merged,) = group_findings(raw)
    assert merged.message == "KV pool sizing failed on TP0–TP3 (4 times): budget -5"
    (single,) = group_findings([finding(rank="TP3", message="failed{where}: x")])
    assert single.message == "failed on TP3: x"


def test_group_without_fingerprint_uses_the_masked_message() -> None:
    raw = [
        finding(line=1, rank="TP0", fingerprint=None, message="retracted 3 requests"),
        finding(line=2, rank="TP1", fingerprint=None, message="retracted 5 requests"),
    ]
    (merged,) = group_findings(raw)
    assert merged.count == 2 and merged.message.startswith(
        "retracted 3 requests (on TP0, TP1, 2 times)"
    )


def _tb(frames: list[tuple[str, str]], exc: str, msg: str, line: int = 1) -> Traceback:
    return Traceback(
        line=line,
        end_line=line + 5,
        exc_type=exc,
        message=msg,
        frames=tuple(Frame(p, n, f) for n, (p, f) in enumerate(frames, 100)),
    )


def test_traceback_fingerprint_masks_numbers_and_ignores_paths() -> None:
    a = _tb(
        [(f"{SG}/managers/scheduler.py", "run_scheduler_process"), ("/opt/torch/x.py", "f")],
        "RuntimeError",
        "Tried to allocate 448.00 MiB on GPU 7",
    )
    b = _tb(
        [
            ("/other/site-packages/sglang/srt/managers/scheduler.py", "run_scheduler_process"),
            ("/opt/torch/y.py", "g"),
        ],
        "RuntimeError",
        "Tried to allocate 512.00 MiB on GPU 3",
        line=50,
    )
    c = _tb(
        [(f"{SG}/managers/scheduler.py", "event_loop_normal")],
        "RuntimeError",
        "Tried to allocate 448.00 MiB on GPU 7",
    )
    assert traceback_fingerprint(a) == traceback_fingerprint(b)
    assert traceback_fingerprint(a) != traceback_fingerprint(c)
    assert mask_numbers("rid='a1b2c3d4e5f6a7b8c9d0' at 0x7f3a2b, 12.5 GB") == "rid='#' at #, # GB"


# --------------------------------------------------------------------------- root cause


def test_root_is_the_earliest_error_that_is_not_a_consequence() -> None:
    items = [
        finding("jit-compile-stall", line=1, severity=Severity.WARNING, fingerprint="1"),
        finding(
            "other-rank-failed", line=2, severity=Severity.INFO, consequence=True, fingerprint="2"
        ),
        finding("nccl-error", line=9, fingerprint="3"),
        finding("cuda-oom", line=5, fingerprint="4"),
    ]
    root = pick_root(items)
    assert root is not None and root.name == "cuda-oom"
    assert pick_root(items[:2]) is None  # only a warning and a consequence: no root cause


CRASH_LOG = f"""[2026-03-07 15:30:10 TP0] Load weight begin. avail mem=78.31 GB
[2026-03-07 15:30:10 TP1] Load weight begin. avail mem=78.31 GB
[2026-03-07 15:30:19 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process
    scheduler = Scheduler(
  File "{SG}/model_executor/model_runner.py", line 512, in load_model
    self.model = get_model(
  File "/usr/local/lib/python3.12/dist-packages/torch/cuda/memory.py", line 20, in empty
    return torch.empty(size)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 1 has a total capacity of 79.10 GiB of which 1.02 GiB is free.

[2026-03-07 15:30:21 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process
    scheduler = Scheduler(
  File "{SG}/distributed/parallel_state.py", line 412, in all_reduce
    torch.distributed.all_reduce(x)
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5

[2026-03-07 15:30:22] Received sigquit from a child process. It usually means the child failed.
Killed
"""


def test_consequences_nest_under_the_root_cause(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, CRASH_LOG))
    assert a.root_cause is not None and a.root_cause.name == "cuda-oom"
    assert a.root_cause.data["phase"] == "weight-load"
    assert a.findings[0] is a.root_cause
    nested = [c.name for c in a.root_cause.consequences]
    assert (
        "nccl-error" in nested
    )  # the follow-on failure on another rank, after the first fatal event
    assert all(f.name != "nccl-error" for f in a.findings)
    # SGLang's own reaction (sigquit, the self-kill's `Killed`) is listed under the cause, not as host-oom.
    assert "host-oom" not in a.fired()
    assert a.root_cause.data["consequence_lines"] == [19, 20]
    assert a.outcome == "crashed-at-startup"


def test_only_consequences_means_no_root(tmp_path: Path) -> None:
    log = f"""[2025-03-17 17:15:55 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "{SG}/managers/scheduler.py", line 1748, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
  File "{SG}/model_executor/model_runner.py", line 417, in load_model
    raise ValueError(
ValueError: TP rank 1 could finish the model loading, but there are other ranks that didn't finish loading. It is likely due to unexpected failures (e.g., OOM) or a slow node.
"""
    a = analyze(write(tmp_path, log))
    assert a.root_cause is None
    (f,) = a.findings
    assert f.name == "other-rank-failed" and f.consequence
    assert "real error is on another rank" in f.message
    assert a.outcome == "crashed-at-startup"


# --------------------------------------------------------------------------- outcome

READY = """[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem usage=0.93 GB.
[2025-03-08 12:29:29] INFO:     Started server process [3207]
[2025-03-08 12:29:29] INFO:     Waiting for application startup.
[2025-03-08 12:29:29] INFO:     Application startup complete.
[2025-03-08 12:29:29] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)
[2025-03-08 12:29:30] INFO:     127.0.0.1:49534 - "GET /get_model_info HTTP/1.1" 200 OK
[2025-03-08 12:29:30 TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, 
[2025-03-08 12:29:33] INFO:     127.0.0.1:49540 - "POST /generate HTTP/1.1" 200 OK
[2025-03-08 12:29:33] The server is fired up and ready to roll!
[2025-03-08 12:29:37] INFO:     10.0.2.141:42304 - "GET /health HTTP/1.1" 200 OK
"""
TRAFFIC = """[2025-03-08 12:30:02 TP0] Prefill batch. #new-seq: 4, #new-token: 906, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 2, 
[2025-03-08 12:30:03 TP0] Decode batch. #running-req: 4, #token: 1210, token usage: 0.02, gen throughput (token/s): 160.11, #queue-req: 0, 
[2025-03-08 12:30:04] INFO:     10.0.2.141:42310 - "POST /v1/chat/completions HTTP/1.1" 200 OK
"""
SHUTDOWN = """[2025-03-08 12:31:00] INFO:     Shutting down
[2025-03-08 12:31:00] INFO:     Waiting for application shutdown.
[2025-03-08 12:31:00] INFO:     Application shutdown complete.
[2025-03-08 12:31:00] INFO:     Finished server process [3207]
"""
LOOP_CRASH = f"""[2025-03-08 12:30:05 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{SG}/managers/scheduler.py", line 2996, in run_scheduler_process
    scheduler.event_loop_normal()
  File "{SG}/managers/scheduler.py", line 1105, in event_loop_normal
    result = self.run_batch(batch)
  File "{SG}/managers/scheduler.py", line 1500, in run_batch
    raise ValueError(msg)
ValueError: something unexpected in the batch
"""
STARTUP = """[2025-03-07 09:20:03 TP0] Init torch distributed begin.
[2025-03-07 09:20:05 TP1] Init torch distributed begin.
[2025-03-07 09:20:06 TP0] Init torch distributed ends. mem usage=0.13 GB
[2025-03-07 09:20:06 TP0] Load weight begin. avail mem=78.31 GB
"""
WATCHDOG = """[2025-06-22 16:13:55 TP0] Watchdog timeout (self.watchdog_timeout=300)
[2025-06-22 16:13:55 TP0] self.cur_batch.batch_size()=26,  self.cur_batch.reqs=[Req(rid=d4424f3eb90345f0a863068978c0f17c)]
[2025-06-22 16:14:00] Received sigquit from a child process.   It usually means the child failed.
"""
BENCH = """============ Serving Benchmark Result ============
Backend:                                 sglang
Successful requests:                     1024
Benchmark duration (s):                  287.20
==================================================
"""


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        (READY, "ready"),  # one warmup prefill, /health polls: not traffic
        (READY + TRAFFIC, "serving"),
        (TRAFFIC, "serving"),
        (READY + TRAFFIC + SHUTDOWN, "stopped"),
        (READY + TRAFFIC + LOOP_CRASH, "crashed-while-serving"),
        (
            LOOP_CRASH,
            None,
        ),  # a crash in the request loop with no sign of serving: maybe the warmup batch
        (
            STARTUP
            + LOOP_CRASH.replace("event_loop_normal", "__init__").replace(
                "run_batch", "init_memory_pool"
            ),
            "crashed-at-startup",
        ),
        (STARTUP, "incomplete"),
        (WATCHDOG, "hung"),
        (BENCH, None),
    ],
)
def test_outcome(tmp_path: Path, text: str, outcome: str | None) -> None:
    assert analyze(write(tmp_path, text)).outcome == outcome


def test_outcome_is_reported_when_no_rule_fires(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, READY + TRAFFIC))
    assert a.findings == [] and a.root_cause is None
    assert a.outcome == "serving"


def test_outcome_of_the_last_launch_attempt(tmp_path: Path) -> None:
    first = (
        "[2026-03-07 15:20:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1)\n"
        + STARTUP
        + CRASH_LOG
    )
    second = (
        "[2026-03-07 15:40:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1)\n"
        + READY
        + TRAFFIC
    )
    a = analyze(write(tmp_path, first + second))
    # The file's outcome and root cause are the last attempt's; the first attempt keeps its own.
    assert a.outcome == "serving"
    assert a.root_cause is None
    assert [x.outcome for x in a.attempts] == ["crashed-at-startup", "serving"]
    first_root = a.attempts[0].root_cause
    assert first_root is not None and first_root.name == "cuda-oom"
    assert first_root in a.findings  # every attempt's findings are still reported


# --------------------------------------------------------------------------- running rules


def test_a_failing_rule_is_recorded_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from logparse.parsing.pipeline import parse_file
    from logparse.rules import all_rules
    from logparse.run.views import Views

    def broken(ctx: Any) -> list[Finding]:
        raise KeyError("oops")

    bad = Rule(
        code="ZZZ999",
        name="broken-rule",
        family="memory",
        severity=Severity.ERROR,
        status="preview",
        needs=(),
        fn=broken,
    )
    monkeypatch.delenv("LOGDIAG_DEBUG", raising=False)
    log = parse_file(write(tmp_path, WATCHDOG))
    a = Analysis(log=log, views=Views(log))
    execute(a, [*all_rules(), bad])
    assert a.rule_errors == ["ZZZ999 broken-rule: KeyError: 'oops'"]
    assert a.root_cause is not None and a.root_cause.name == "watchdog-timeout"


def test_fallbacks_and_findings_readers_run_last(tmp_path: Path) -> None:
    from logparse.parsing.pipeline import parse_file
    from logparse.run.views import Views

    order: list[str] = []

    def make(name: str, **kw: Any) -> Rule:
        return Rule(
            code=name,
            name=name,
            family="memory",
            severity=Severity.INFO,
            status="preview",
            fn=lambda ctx, n=name: order.append(n) or [],
            **kw,
        )

    rules = [
        make("C3", needs=("findings",)),
        make("B2", fallback=True, needs=()),
        make("A1", needs=()),
        make("A0", needs=()),
    ]
    log = parse_file(write(tmp_path, READY))
    execute(Analysis(log=log, views=Views(log)), rules)
    assert order == ["A0", "A1", "B2", "C3"]


def test_thresholds_reach_the_rules(tmp_path: Path) -> None:
    jit = (
        "2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Loading JIT ops: cascade\n"
        "2025-02-26 15:44:57,375 - INFO - flashinfer.jit: Finished loading JIT ops: cascade\n"
    )
    path = write(tmp_path, jit)
    assert "jit-compile-stall" in analyze(path).fired()
    assert (
        "jit-compile-stall"
        not in analyze(path, config={"jit-compile-stall": {"min_gap_s": 30.0}}).fired()
    )

    class Cfg:
        thresholds: ClassVar[dict[str, dict[str, float]]] = {
            "jit-compile-stall": {"min_gap_s": 30.0}
        }

    assert "jit-compile-stall" not in analyze(path, config=Cfg()).fired()


# --------------------------------------------------------------------------- output


def test_json_output_has_outcome_root_and_findings(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["analyze", write(tmp_path, CRASH_LOG), "--format", "json"])
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)["files"]
    assert entry["outcome"] == "crashed-at-startup"
    root = entry["root_cause"]
    assert root["name"] == "cuda-oom" and root["code"] == "MEM001" and root["severity"] == "error"
    assert root["ranks"] == ["TP1"] and root["data"]["phase"] == "weight-load"
    assert root["remedy"] and "--tp" in root["remedy"]
    lines = {e["line"]: e["text"] for e in root["evidence"]}
    assert 3 in lines and "Scheduler hit an exception" in lines[3]
    assert any("CUDA out of memory" in t for t in lines.values())
    assert entry["findings"][0]["name"] == "cuda-oom"
    assert [c["name"] for c in entry["findings"][0]["consequences"]] == ["nccl-error"]


def test_text_output_leads_with_outcome_and_root_cause(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["analyze", write(tmp_path, CRASH_LOG)])
    assert result.exit_code == 0
    out = result.stdout.splitlines()
    assert out[1].startswith("outcome: crashed-at-startup — ")
    assert out[2] == "root cause:"
    assert "cuda-oom" in out[3] and "weight-load" in out[3]
    assert any(line.strip().startswith("fix:") for line in out[4:24])  # on the first screen


def test_json_is_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, CRASH_LOG)
    runs = [
        CliRunner().invoke(main, ["analyze", path, "--format", "json"]).stdout for _ in range(2)
    ]
    assert runs[0] == runs[1]
