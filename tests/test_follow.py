"""`logdiag follow` with real processes: a writer subprocess replays real logs line by line into a
file (or a pipe) while `python -m logparse follow` follows it; exit codes, timing and events are
asserted. Every process is bounded (communicate timeouts); only loopback is used."""

from __future__ import annotations

import http.server
import json
import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "fixtures" / "logs"
from tests.conftest import CORPUS

HYBRID = LOGS / "nextn-hybrid-launch.log"  # 8 ranks; ready at line 541
READY_LINE = 541
BOUND_S = 30

# The writer: replays steps into a file (appending, unbuffered) or stdout, and records in a JSON
# marks file the wall time at which the first line containing each `mark` substring was written.
WRITER = r"""
import json, os, sys, time
spec = json.loads(sys.argv[1])
dest = spec["dest"]
marks = {}
def mark(key):
    if key not in marks:
        marks[key] = time.time()
        if spec.get("marks"):
            with open(spec["marks"] + ".tmp", "w") as m:
                json.dump(marks, m)
            os.replace(spec["marks"] + ".tmp", spec["marks"])
time.sleep(spec.get("start_delay", 0))
f = sys.stdout.buffer if dest == "-" else open(dest, "ab", buffering=0)
for step in spec["steps"]:
    op = step["op"]
    if op == "lines":
        lines = open(step["src"], "rb").readlines()[step.get("start", 0):step.get("end")]  # split at \n only
        for line in lines:
            f.write(line)
            f.flush()
            for key in spec.get("mark", []):
                if key.encode() in line:
                    mark(key)
            time.sleep(step.get("delay", 0.001))
    elif op == "sleep":
        time.sleep(step["s"])
    elif op == "raw":
        f.write(step["text"].encode())
        f.flush()
        mark(step.get("name", step["text"]))
    elif op == "wait":
        deadline = time.time() + 20
        while not os.path.exists(step["path"]) and time.time() < deadline:
            time.sleep(0.01)
    elif op == "truncate":
        f.close()
        f = open(dest, "wb", buffering=0)
    elif op == "rotate":
        f.close()
        os.rename(dest, dest + ".1")
        f = open(dest, "ab", buffering=0)
"""


def _writer(spec: dict[str, Any], **kw: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WRITER, json.dumps(spec)], **kw)


def _follow(*args: str, **kw: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "logparse", "follow", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def _finish(proc: subprocess.Popen[bytes], timeout: float = BOUND_S) -> tuple[int, str, str, float]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(
            f"follow did not exit within {timeout} s: {out.decode()[-2000:]} {err.decode()[-2000:]}"
        )
    return proc.returncode, out.decode(), err.decode(), time.time()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=BOUND_S)


def _events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _analyze_json(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "logparse", "analyze", "--format", "json", str(path)],
        cwd=ROOT,
        capture_output=True,
        timeout=BOUND_S,
        check=True,
    )
    return json.loads(done.stdout)["files"][0]  # type: ignore[no-any-return]


def _marks(path: Path) -> dict[str, float]:
    deadline = time.time() + 5
    while not path.exists() and time.time() < deadline:
        time.sleep(0.05)
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_exits_0_within_2s_of_the_ready_line_on_a_file_that_appears_later(tmp_path: Path) -> None:
    log, marks = tmp_path / "server.log", tmp_path / "marks.json"
    follow = _follow(str(log), "--format", "json", "--poll", "0.05", "--timeout", "25")
    # The file does not exist when follow starts; after the ready line the writer keeps going slowly.
    writer = _writer(
        {
            "dest": str(log),
            "marks": str(marks),
            "mark": ["ready to roll"],
            "start_delay": 0.8,
            "steps": [
                {"op": "lines", "src": str(HYBRID), "end": 600, "delay": 0.0005},
                {"op": "lines", "src": str(HYBRID), "start": 600, "delay": 0.05},
            ],
        }
    )
    try:
        code, out, err, ended = _finish(follow)
    finally:
        _stop(writer)
    assert code == 0, err
    events = _events(out)
    ready = [e for e in events if e["event"] == "ready"]
    assert (
        len(ready) == 1
        and ready[0]["line"] == READY_LINE == _analyze_json(HYBRID)["startup"]["ready_line"]
    )
    assert ended - _marks(marks)["ready to roll"] < 2.0
    assert (
        ready[0]["time_to_ready_s"] == _analyze_json(HYBRID)["startup"]["time_to_ready_s"] == 364.0
    )
    # Per-rank durations are the run model's: TP0's weight load as SGLang printed it.
    tp0 = {p["phase"]: p["duration_s"] for p in ready[0]["phases"]["TP0"]}
    assert tp0["weight-load"] == pytest.approx(289.0, abs=1.0)
    phases = [e for e in events if e["event"] == "phase"]
    assert {e["rank"] for e in phases} >= {f"TP{i}" for i in range(8)}
    assert any(e["phase"] == "capture-target" and e["state"] == "done" for e in phases)


def _crash_logs() -> list[Path]:
    logs = [LOGS / "nextn-3-killed.log", LOGS / "eagle3-kv-pool.log"]
    # A few labelled corpus excerpts that crashed at start-up, when the corpus is next to the repo.
    for labels in sorted(CORPUS.glob("dev-0*.labels.json"))[:40]:
        if json.loads(labels.read_text()).get("outcome") == "crashed-at-startup" and len(logs) < 4:
            logs.append(labels.with_name(labels.name.replace(".labels.json", ".log")))
    return logs


@pytest.mark.parametrize("path", _crash_logs(), ids=lambda p: p.name)
def test_exits_1_on_a_crash_with_the_root_cause_analyze_gives(tmp_path: Path, path: Path) -> None:
    log = tmp_path / "server.log"
    writer = _writer(
        {"dest": str(log), "steps": [{"op": "lines", "src": str(path), "delay": 0.003}]}
    )
    follow = _follow(str(log), "--format", "json", "--poll", "0.05", "--timeout", "25")
    try:
        code, out, err, _ = _finish(follow)
    finally:
        _stop(writer)
    assert code == 1, (out, err)
    final = _events(out)[-1]
    expected = _analyze_json(path)
    assert final["event"] == "exit" and final["reason"] == "crashed"
    assert final["outcome"] == expected["outcome"]
    assert final["root_cause"] is not None and expected["root_cause"] is not None
    for key in ("code", "name", "message", "remedy", "evidence"):
        assert final["root_cause"][key] == expected["root_cause"][key], key


def test_text_crash_output_prints_root_cause_evidence_and_fix(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    writer = _writer(
        {
            "dest": str(log),
            "steps": [{"op": "lines", "src": str(LOGS / "nextn-3-killed.log"), "delay": 0.002}],
        }
    )
    follow = _follow(str(log), "--poll", "0.05", "--timeout", "25")
    try:
        code, out, err, _ = _finish(follow)
    finally:
        _stop(writer)
    assert code == 1, (out, err)
    assert "\x1b" not in out  # not a terminal: no control codes
    root = out[out.index("root cause:") :]
    assert "host-oom (MEM003)" in root and "    107 | Killed" in root and "fix: " in root
    assert "     TP0  weight-load started" in out


def test_exits_4_on_timeout_mid_startup_naming_each_ranks_phase_and_silence(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(HYBRID.open("rb").readlines()[160:300]))  # mid weight load
    started = time.time()
    code, out, err, ended = _finish(_follow(str(log), "--format", "json", "--timeout", "3"))
    assert code == 4, err
    assert 3.0 <= ended - started < 3.0 + 10
    final = _events(out)[-1]
    assert final["event"] == "timeout"
    assert set(final["ranks"]) == {f"TP{i}" for i in range(8)}
    for rank in final["ranks"].values():
        assert rank["phase"] == "weight-load" and not rank["complete"]
        assert rank["silent_s"] >= 2.5 and rank["last_line"]


def test_reports_a_rank_silent_much_longer_than_the_others_took_as_possibly_stalled(
    tmp_path: Path,
) -> None:
    # Seven ranks finish distributed init in 0.5 s; TP3 never does (its end line is left out).
    src = tmp_path / "src.log"
    lines = HYBRID.read_text().splitlines(keepends=True)[:100]
    lines = [
        re.sub(r"elapsed=\d+\.\d+ s", "elapsed=0.50 s", x)
        for x in lines
        if not ("TP3]" in x and "Init torch distributed ends" in x)
    ]
    src.write_text("".join(lines))
    log = tmp_path / "server.log"
    writer = _writer(
        {"dest": str(log), "steps": [{"op": "lines", "src": str(src), "delay": 0.001}]}
    )
    try:
        code, out, err, _ = _finish(
            _follow(str(log), "--format", "json", "--poll", "0.1", "--timeout", "7")
        )
    finally:
        _stop(writer)
    assert code == 4, err
    stalls = [e for e in _events(out) if e["event"] == "stall"]
    assert [s["rank"] for s in stalls] == ["TP3"]
    assert (
        stalls[0]["phase"] == "dist-init"
        and stalls[0]["silent_s"] >= stalls[0]["allowance_s"] >= 5.0
    )
    assert "TP3" in stalls[0]["last_line"]


@pytest.mark.parametrize("how", ["truncate", "rotate"])
def test_truncation_and_rotation_restart_from_the_new_files_first_line(
    tmp_path: Path, how: str
) -> None:
    log, go = tmp_path / "server.log", tmp_path / "go"
    writer = _writer(
        {
            "dest": str(log),
            "steps": [
                {"op": "lines", "src": str(HYBRID), "end": 150, "delay": 0.0005},
                {"op": "wait", "path": str(go)},
                {"op": how},
                {"op": "sleep", "s": 0.4},
                {"op": "lines", "src": str(HYBRID), "end": 600, "delay": 0.0005},
                {"op": "sleep", "s": 5},
            ],
        }
    )
    follow = _follow(str(log), "--format", "json", "--poll", "0.05", "--timeout", "25")
    try:
        # Replace the file only once follow has read the old one (its first phase event).
        assert follow.stdout is not None
        first = b""
        while b'"phase"' not in first:
            first = follow.stdout.readline()
            if not first:
                break
        go.touch()
        code, out, err, _ = _finish(follow)
    finally:
        _stop(writer)
    assert code == 0, err
    events = _events(first.decode() + out)
    inputs = [e for e in events if e["event"] == "input" and e["what"] in ("truncated", "rotated")]
    assert [e["what"] for e in inputs] == [how + "d" if how == "truncate" else "rotated"]
    # Numbering restarted with the new file: the ready line is the new file's line 541.
    assert [e["line"] for e in events if e["event"] == "ready"] == [READY_LINE]


def test_a_partly_written_ready_line_is_held_back_until_its_newline(tmp_path: Path) -> None:
    log, marks = tmp_path / "server.log", tmp_path / "marks.json"
    writer = _writer(
        {
            "dest": str(log),
            "marks": str(marks),
            "steps": [
                {"op": "lines", "src": str(HYBRID), "end": READY_LINE - 1, "delay": 0.0003},
                {
                    "op": "raw",
                    "text": "[2026-04-14 10:37:31] The server is fired up",
                    "name": "half",
                },
                {"op": "sleep", "s": 1.0},
                {"op": "raw", "text": " and ready to roll!\n", "name": "rest"},
                {"op": "sleep", "s": 5},
            ],
        }
    )
    follow = _follow(str(log), "--format", "json", "--poll", "0.05", "--timeout", "25")
    try:
        code, out, err, ended = _finish(follow)
    finally:
        _stop(writer)
    assert code == 0, err
    assert ended >= _marks(marks)["rest"]
    assert [e["line"] for e in _events(out) if e["event"] == "ready"] == [READY_LINE]


def test_pipe_ready_and_crash(tmp_path: Path) -> None:
    # The follows spool into a directory of their own: another run's spools in the shared /tmp
    # (a parallel suite, a live `logdiag follow`) must not make this test pass or fail.
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    env = {**os.environ, "TMPDIR": str(spool_dir)}
    ready_writer = _writer(
        {
            "dest": "-",
            "steps": [
                {"op": "lines", "src": str(HYBRID), "end": 600, "delay": 0.0005},
                {"op": "sleep", "s": 5},
            ],
        },
        stdout=subprocess.PIPE,
    )
    follow = _follow("-", "--format", "json", stdin=ready_writer.stdout, env=env)
    assert ready_writer.stdout is not None
    ready_writer.stdout.close()
    try:
        code, out, err, _ = _finish(follow)
    finally:
        _stop(ready_writer)
    assert code == 0, err
    assert [e["line"] for e in _events(out) if e["event"] == "ready"] == [READY_LINE]

    killed = LOGS / "nextn-3-killed.log"
    crash_writer = _writer(
        {"dest": "-", "steps": [{"op": "lines", "src": str(killed), "delay": 0.002}]},
        stdout=subprocess.PIPE,
    )
    follow = _follow("-", "--format", "json", stdin=crash_writer.stdout, env=env)
    assert crash_writer.stdout is not None
    crash_writer.stdout.close()
    try:
        code, out, err, _ = _finish(follow)
    finally:
        _stop(crash_writer)
    assert code == 1, err
    final = _events(out)[-1]
    expected = _analyze_json(killed)["root_cause"]
    assert final["root_cause"]["name"] == expected["name"] == "host-oom"
    assert final["root_cause"]["evidence"] == expected["evidence"]
    # The spool of the pipe (what the crash analysis re-read) is removed on exit.
    assert list(spool_dir.iterdir()) == []


def test_pipe_through_a_shell_and_ending_before_ready_exits_1(tmp_path: Path) -> None:
    spec = json.dumps(
        {"dest": "-", "steps": [{"op": "lines", "src": str(HYBRID), "end": 200, "delay": 0.0005}]}
    )
    cmd = f"{sys.executable} -c {_sh(WRITER)} {_sh(spec)} | {sys.executable} -m logparse follow -"
    done = subprocess.run(
        cmd, shell=True, cwd=ROOT, capture_output=True, timeout=BOUND_S, check=False
    )
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode()
    assert "the input ended before the server was ready" in out
    assert "     TP5  weight-load started" in out


def _sh(text: str) -> str:
    import shlex

    return shlex.quote(text)


class _Health(http.server.BaseHTTPRequestHandler):
    answers: ClassVar[list[tuple[float, int]]] = []
    unhealthy_first = 3

    def do_GET(self) -> None:  # http.server's name
        status = 503 if len(self.answers) < self.unhealthy_first else 200
        self.answers.append((time.time(), status))
        self.send_response(status)
        self.end_headers()
        self.wfile.write(b"ok" if status == 200 else b"starting")

    def log_message(self, *args: Any) -> None:
        pass


def test_health_url_must_answer_200_after_the_log_shows_the_http_server(tmp_path: Path) -> None:
    _Health.answers = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    log, marks = tmp_path / "server.log", tmp_path / "marks.json"
    url = f"http://127.0.0.1:{server.server_port}/health"
    writer = _writer(
        {
            "dest": str(log),
            "marks": str(marks),
            "mark": ["Started server process", "ready to roll"],
            "steps": [
                {"op": "lines", "src": str(HYBRID), "end": 560, "delay": 0.0005},
                {"op": "sleep", "s": 8},
            ],
        }
    )
    try:
        code, out, err, ended = _finish(
            _follow(
                str(log), "--format", "json", "--poll", "0.05", "--health", url, "--timeout", "25"
            )
        )
    finally:
        _stop(writer)
        server.shutdown()
        server.server_close()
    assert code == 0, err
    statuses = [s for _, s in _Health.answers]
    assert statuses[:3] == [503, 503, 503] and statuses[-1] == 200
    m = _marks(marks)
    assert _Health.answers[0][0] >= m["Started server process"]  # not polled before the HTTP server
    assert ended >= _Health.answers[-1][0]
    ready = [e for e in _events(out) if e["event"] == "ready"]
    assert ready and ready[0]["health"] is True


def test_until_exit_keeps_following_while_serving_until_the_pipe_closes(tmp_path: Path) -> None:
    writer = _writer(
        {
            "dest": "-",
            "steps": [{"op": "lines", "src": str(LOGS / "nextn-4-serving.log"), "delay": 0.0005}],
        },
        stdout=subprocess.PIPE,
    )
    follow = _follow("-", "--until", "exit", stdin=writer.stdout)
    assert writer.stdout is not None
    writer.stdout.close()
    try:
        code, out, err, _ = _finish(follow)
    finally:
        _stop(writer)
    assert code == 0, err
    assert re.search(r"^ready: line \d+", out, re.MULTILINE)
    assert re.search(r"^serving: [\d,]+ tok/s, running \d+", out, re.MULTILINE)
    assert re.search(r"^stopped: serving — the input ended$", out, re.MULTILINE)


def test_on_a_terminal_rank_lines_are_redrawn_in_place(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(HYBRID.open("rb").readlines()[160:300]))
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "logparse", "follow", str(log), "--timeout", "2"],
        cwd=ROOT,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.time() + BOUND_S
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=BOUND_S) == 4
    text = b"".join(chunks).decode(errors="replace")
    assert "\x1b[" in text and "F\x1b[J" in text  # cursor up + erase: redrawn in place
    assert re.search(r"TP7\s+weight-load\s+\d", text)
    assert (
        "Loading safetensors" not in text and "checkpoint-load " in text
    )  # progress with its count


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    bad = _finish(_follow(str(tmp_path / "x.log"), "--health", "ftp://example"), timeout=BOUND_S)
    assert bad[0] == 2 and "not an http(s) URL" in bad[2]
    directory = _finish(_follow(str(tmp_path)), timeout=BOUND_S)
    assert directory[0] == 2 and "directory" in directory[2]
    import gzip

    packed = tmp_path / "run.log.gz"
    packed.write_bytes(gzip.compress(HYBRID.read_bytes()[:4096]))
    gz = _finish(_follow(str(packed)), timeout=BOUND_S)
    assert gz[0] == 2 and "gzip" in gz[2] and gz[1] == ""
    binary = tmp_path / "core.log"
    binary.write_bytes(bytes(range(32)) * 64)
    refused = _finish(_follow(str(binary)), timeout=BOUND_S)
    assert refused[0] == 2 and "binary" in refused[2]


def test_until_exit_on_a_file_ends_0_when_the_server_shuts_down(tmp_path: Path) -> None:
    src = tmp_path / "src.log"
    src.write_bytes(
        (LOGS / "nextn-4-serving.log").read_bytes()
        + b"[2026-04-14 10:41:40] INFO:     Shutting down\n"
        + b"[2026-04-14 10:41:40] INFO:     Finished server process [51877]\n"
    )
    log = tmp_path / "server.log"
    writer = _writer(
        {
            "dest": str(log),
            "steps": [{"op": "lines", "src": str(src), "delay": 0.0005}, {"op": "sleep", "s": 8}],
        }
    )
    try:
        follow = _follow(
            str(log), "--until", "exit", "--format", "json", "--poll", "0.05", "--timeout", "25"
        )
        code, out, err, _ = _finish(follow)
    finally:
        _stop(writer)
    assert code == 0, err
    events = _events(out)
    assert [e["event"] for e in events].count("ready") == 1
    assert any(e["event"] == "serving" and e["gen_throughput"] for e in events)
    final = events[-1]
    assert (
        final["event"] == "exit" and final["reason"] == "stopped" and final["outcome"] == "stopped"
    )


def test_a_file_that_never_appears_times_out_saying_so(tmp_path: Path) -> None:
    code, out, err, _ = _finish(_follow(str(tmp_path / "never.log"), "--timeout", "1.5"))
    assert code == 4, err
    assert "waiting for" in out and "never.log never appeared" in out


def test_progress_rate_and_eta_count_down_from_the_bars_own_numbers() -> None:
    from logparse.follow.live import Progress

    bar = Progress("checkpoint-load", 12, 94, 13, 36.0, None, seen=100.0)
    assert bar.rate == pytest.approx(1 / 3)
    assert bar.eta_s == pytest.approx(82 * 3)
    assert bar.as_dict(now=110.0)["eta_s"] == pytest.approx(82 * 3 - 10)
    # tqdm's own estimate wins when it printed one.
    assert Progress("capture", 10, 36, 27, 2.0, 5.0).eta_s == 5.0


def test_stall_allowance_comes_from_the_other_ranks_and_the_phase() -> None:
    from logparse.follow.live import PHASE_ALLOWANCE_S, STALL_FACTOR, LiveState
    from logparse.io.lines import read_lines
    from logparse.io.readreport import ReadReport

    live = LiveState(str(HYBRID))
    for no, text, wrapper in read_lines(str(HYBRID), ReadReport(path=str(HYBRID))):
        if no > 362:  # TP0–TP7 in CUDA-graph capture; none has finished it
            break
        live.feed(no, text, wrapper, 1.0)
    tp7 = live.ranks["TP7"]
    assert (tp7.phase, tp7.complete) == ("capture-target", False)
    assert (
        live.allowance_s(tp7)
        == PHASE_ALLOWANCE_S["capture-target"]
        > PHASE_ALLOWANCE_S["dist-init"]
    )
    for no, text, wrapper in read_lines(str(HYBRID), ReadReport(path=str(HYBRID))):
        if 362 < no <= 369:  # seven ranks finish capture in ~21 s; TP0 has not
            live.feed(no, text, wrapper, 1.0)
    tp0 = live.ranks["TP0"]
    assert (tp0.phase, tp0.complete) == ("capture-target", False)
    others = [
        p.duration_s
        for r, ps in live.phases.items()
        if r != "TP0"
        for p in ps
        if p.name == "capture-target"
    ]
    assert len(others) == 7
    assert live.allowance_s(tp0) == pytest.approx(STALL_FACTOR * sorted(others)[3])
    assert [c.rank for c in live.stalls(now=STALL_FACTOR * 30)] == ["TP0"]


def test_cli_runner_on_a_finished_log_prints_ready_and_durations() -> None:
    from click.testing import CliRunner

    from logparse.cli.main import main

    result = CliRunner().invoke(main, ["follow", str(HYBRID), "--timeout", "20"])
    assert result.exit_code == 0, result.output
    # 364 s: the fourth launch attempt's, as analyze says (not from the first of the four).
    assert f"ready: line {READY_LINE}, 6m04s after the launch's first timestamp" in result.output
    assert "new launch attempt at line 168" in result.output
    assert re.search(r"^\s+TP0: dist-init 2\.9s, weight-load 4m49s", result.output, re.MULTILINE)


def test_a_serving_excerpt_without_the_ready_line_is_up_at_its_first_traffic(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serving.log"
    lines = [
        x for x in (LOGS / "nextn-4-serving.log").open("rb").readlines() if b"Decode batch" in x
    ]
    log.write_bytes(b"".join(lines[:50]))
    code, out, err, _ = _finish(_follow(str(log), "--format", "json", "--timeout", "20"))
    assert code == 0, err
    ready = [e for e in _events(out) if e["event"] == "ready"]
    assert [e["line"] for e in ready] == [1]
    assert _analyze_json(log)["startup"]["ready"] is True
