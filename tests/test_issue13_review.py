"""Issue 13 re-tested as a new user, with logs its authors did not use: one regression test per
defect found (the runs table against `analyze --format json`, time windows on old and
interleaved logs, ...)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import logparse
from logparse.cli.main import main
from tests.conftest import FIXTURES, corpus_logs


def _json(*args: str) -> dict:
    r = CliRunner().invoke(main, ["analyze", *args, "--format", "json", "--no-redact"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["files"][0]


@pytest.mark.parametrize("path", [*corpus_logs()[:20], FIXTURES / "logs" / "eagle3-kv-pool.log"],
                         ids=lambda p: p.name)
def test_runs_tp_and_dp_are_what_analyze_prints(path: Path) -> None:
    # Was: the runs table read only stated sizes, so dev-004 (TP0..TP7, DP0..DP7 tags, no
    # server_args) had tp_size and dp_size null while `analyze` said 8 and 8.
    runs = logparse.analyze(str(path)).table("runs")
    config = _json(str(path))["config"]
    if len(runs) != 1:
        pytest.skip("several attempts: the JSON config is the file's")
    for key in ("tp_size", "dp_size"):
        value = runs[key].iloc[0]
        assert (None if pd.isna(value) else int(value)) == config.get(key), key


def _decode_line(stamp: str, i: int) -> str:
    return (f"[{stamp} TP0] Decode batch. #running-req: 1, #token: {100 + i}, token usage: 0.01, "
            f"gen throughput (token/s): {50 + i}.00, #queue-req: 0\n")


MIDNIGHT = ["23:58:00", "23:58:30", "23:59:00", "23:59:30", "00:00:00", "00:00:30", "00:01:00",
            "00:01:30"]


@pytest.mark.parametrize(("since", "kept"), [
    ("2m", 5),  # 23:59:30 … 00:01:30 (was 4: the lines before midnight, the log's "last" 23:59:30)
    ("00:00:00", 4),  # after midnight only (was all 8)
    ("23:59:00", 6),  # the evening before the log's last moment (was 2)
    ("2026-03-07 00:00:30", 3),  # a date on a time-only log: its time of day
])
def test_a_time_only_log_crossing_midnight_keeps_the_order_it_was_written_in(
        tmp_path: Path, since: str, kept: int) -> None:
    path = tmp_path / "old.log"
    path.write_text("".join(_decode_line(t, i) for i, t in enumerate(MIDNIGHT)))
    lines = _json(str(path), "--since", since)["lines"]
    assert (lines["recognized"], lines["outside_window"]) == (kept, len(MIDNIGHT) - kept)


TRACEBACK_INTERLEAVED = """\
[2026-03-07 15:31:00 TP0] Load weight begin. avail mem=70.00 GB
[2026-03-07 15:31:10 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2900, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
[2026-03-07 15:31:11 TP1] Load weight begin. avail mem=70.00 GB
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 300, in __init__
    self.tp_worker = TpModelWorker(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.20 GiB is free.

[2026-03-07 15:31:12] Received sigquit from a child process. It usually means the child failed.
"""


def test_a_window_never_cuts_a_traceback_that_another_rank_interleaves(tmp_path: Path) -> None:
    # Was: the body lines after TP1's line took TP1's time, so --until 15:31:10 kept a traceback
    # without its exception (scheduler-crash instead of cuda-oom) and --since 15:31:11 a headless one.
    path = tmp_path / "tb.log"
    path.write_text(TRACEBACK_INTERLEAVED)
    until = _json(str(path), "--until", "2026-03-07 15:31:10")
    assert [f["name"] for f in until["findings"]] == ["cuda-oom"]
    assert (until["lines"]["recognized"], until["lines"]["outside_window"]) == (8, 2)
    since = _json(str(path), "--since", "2026-03-07 15:31:11")
    assert "cuda-oom" not in [f["name"] for f in since["findings"]]
    assert (since["lines"]["recognized"], since["lines"]["outside_window"]) == (2, 8)


def test_export_of_a_folder_with_a_bad_file_exports_the_rest_and_lists_it(tmp_path: Path) -> None:
    # Was: one empty or binary file in the folder stopped the whole export before it wrote
    # anything ("logdiag: …/binary.log is not a text log"), although docs/export.md says a failed
    # input is listed in the manifest and the others are exported.
    import gzip

    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    good = FIXTURES / "logs" / "eagle3-kv-pool.log"
    (logs / "a.log").write_bytes(good.read_bytes())
    (logs / "sub" / "b.log.gz").write_bytes(gzip.compress(good.read_bytes()))
    (logs / "empty.log").write_bytes(b"")
    (logs / "binary.log").write_bytes(bytes(range(256)) * 40)
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["export", str(logs), "-o", str(out)])
    assert r.exit_code == 2
    assert "2 of 4 inputs failed" in r.stderr and "binary.log is not a text log" in r.stderr
    doc = json.loads((out / "manifest.json").read_text())
    status = {Path(i["file"]).name: i["status"] for i in doc["inputs"]}
    assert status == {"a.log": "ok", "binary.log": "failed", "empty.log": "failed",
                      "b.log.gz": "ok"}
    assert [i["file"] for i in doc["inputs"]] == [  # input order, the failed ones in place
        str(logs / n) for n in ("a.log", "binary.log", "empty.log", "sub/b.log.gz")]
    rows = logparse.analyze(str(good)).table("runs")
    assert doc["tables"]["runs"]["rows"] == 2 * len(rows)


def test_the_readme_join_counts_each_copy_of_one_log_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Was: the README joined USING (run, launch); two copies of one log share `run` (it is the
    # log's content), so each copy's runs row counted 234 decode lines instead of 117.
    import duckdb

    from tests.test_export import readme_query

    _, query = readme_query()
    logs = tmp_path / "logs"
    for node in ("a", "b"):
        (logs / node).mkdir(parents=True)
        (logs / node / "node.log").write_bytes(
            (FIXTURES / "logs" / "spec-serving-healthy.log").read_bytes())
    r = CliRunner().invoke(main, ["export", str(logs), "-o", str(tmp_path / "fleet")])
    assert r.exit_code == 0, r.output
    monkeypatch.chdir(tmp_path)
    rows = duckdb.sql(query).fetchall()
    assert [(Path(row[0]).parent.name, row[4]) for row in rows] == [("a", 117), ("b", 117)]


STYLES = """\
2026-03-07T15:31:00.123456789Z [2026-03-07 15:31:00 TP0] Load weight begin. avail mem=70.00 GB
[2026-03-07 15:31:10.250 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB, mem usage=10.00 GB.
INFO 03-07 15:31:20 [__init__.py:243] Automatically detected platform cuda.
[rank0]:[E307 15:31:30.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.
[2026-03-07 15:31:40] INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK
[2026-03-07 15:31:50 TP0] Decode batch, #running-req: 1, #token: 100, token usage: 0.01, cuda graph: True, gen throughput (token/s): 50.00, #queue-req: 0
"""


@pytest.mark.parametrize(("args", "kept"), [
    (("--since", "2026-03-07 15:31:25"), 3),  # was 2: torch's watchdog timeout (E307) was left out
    (("--since", "25s"), 3),
    (("--until", "15:31:25"), 3),  # was 4: vLLM's and torch's yearless lines were "before"
    (("--since", "15:31:15", "--until", "15:31:35"), 2),  # the yearless lines alone (was 0)
])
def test_lines_that_print_no_year_take_the_year_of_a_dated_log(
        tmp_path: Path, args: tuple[str, ...], kept: int) -> None:
    path = tmp_path / "mixed.log"
    path.write_text(STYLES)
    lines = _json(str(path), *args)["lines"]
    assert (lines["recognized"], lines["outside_window"]) == (kept, 6 - kept)


def test_a_relative_window_on_a_run_counts_back_from_the_runs_last_line(tmp_path: Path) -> None:
    # Was: each node file was windowed against its own last timestamp, so a node that went quiet
    # after start-up (08:48) kept all of its start-up lines in `--since 3m` of a run that served
    # until 08:54.
    import re

    node0, node1 = [], []
    for line in (FIXTURES / "logs" / "spec-serving-healthy.log").read_text().splitlines(True):
        m = re.match(r"\[[^\]]* TP(\d+)\]", line)
        (node1 if m and int(m.group(1)) >= 2 else node0).append(line)
    paths = [tmp_path / "node0.log", tmp_path / "node1.log"]
    for path, lines in zip(paths, (node0, node1), strict=True):
        path.write_text("".join(lines))
    alone = _json(str(paths[0]), "--since", "3m")["lines"]
    merged = _json(*map(str, paths), "--run", "--since", "3m")
    assert merged["lines"]["recognized"] == alone["recognized"]  # node1 printed nothing since
    assert merged["lines"]["outside_window"] == alone["outside_window"] + len(node1)
    assert merged["coverage"]["window"]["from"] == "2026-04-21 08:51:22"


def test_a_windowed_export_says_in_its_manifest_what_the_window_left_out(tmp_path: Path) -> None:
    # Was: the manifest of `export --since 3m` listed 1451 lines and the rows, with no word of
    # the 548 lines the window left out or of the window itself.
    log = FIXTURES / "logs" / "spec-serving-healthy.log"
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["export", str(log), "-o", str(out), "--since", "3m"])
    assert r.exit_code == 0, r.output
    entry = json.loads((out / "manifest.json").read_text())["inputs"][0]
    coverage = _json(str(log), "--since", "3m")["lines"]
    assert entry["lines"] == coverage["total"]
    assert entry["outside_window"] == coverage["outside_window"] == 548
    assert entry["window"] == {"since": "3m", "until": None, "from": "2026-04-21 08:51:22",
                               "to": None}
    plain = tmp_path / "plain"
    assert CliRunner().invoke(main, ["export", str(log), "-o", str(plain)]).exit_code == 0
    assert "window" not in json.loads((plain / "manifest.json").read_text())["inputs"][0]


def test_a_gzipped_copy_of_a_log_has_the_logs_run_id(tmp_path: Path) -> None:
    # Was: `run` hashed the file's bytes, so a rotated server.log.1.gz was another run than the
    # server.log exported the day before (no dedup across exports).
    import gzip

    from logparse.run.tables import run_id

    log = FIXTURES / "logs" / "spec-serving-healthy.log"
    data = log.read_bytes()
    one = tmp_path / "one.log.gz"
    one.write_bytes(gzip.compress(data))
    members = tmp_path / "two.log.gz"  # concatenated members, as `cat a.gz b.gz` writes
    members.write_bytes(gzip.compress(data[:5000]) + gzip.compress(data[5000:]))
    assert run_id(str(one)) == run_id(str(members)) == run_id(str(log))
    other = tmp_path / "other.log.gz"
    other.write_bytes(gzip.compress(data + b"\n"))
    assert run_id(str(other)) != run_id(str(log))
    broken = tmp_path / "broken.log.gz"  # still an id, the same each time
    broken.write_bytes(gzip.compress(data)[:3000] + b"\x00garbage")
    assert run_id(str(broken)) == run_id(str(broken)) != run_id(str(log))
