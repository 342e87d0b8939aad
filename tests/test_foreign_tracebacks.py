"""Whose traceback is it (issue 9, session 11): decided by structure, never by the words in it.

- only an HTTP client library's frames (urllib3's `create_connection` refused): a client's failed
  request, not a server process's crash (dev/e-020, ovg-project/kvcached#5: bench_serving after the
  server went away);
- the traceback `logger.exception` prints right after another program's ERROR record is that
  program's (dev/g-027, xorbitsai/inference#3373: Xinference's worker `Failed to load model …`);
- the diffusion server's warmup (`Server warmup failed; aborting startup: …`, then its traceback) is
  one warmup-failed finding, not a scheduler crash (dev/i-009, sgl-project/sglang#28493), and
  `Synthetic server warmup failed; continuing startup` is no failure at all;
- Xinference's `Leave launch_builtin_model, error:` is a wrapper's verdict on the launch.
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.io.wrappers import Unwrapper
from tests.conftest import FIXTURES

DEV = FIXTURES / "corpus" / "dev"


def _analysis(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "run.log"
    log.write_text(text, encoding="utf-8")
    return analyze(str(log))


def test_an_http_clients_refused_connection_is_no_server_crash() -> None:
    a = analyze(str(DEV / "e-020.log"))
    assert "scheduler-crash" not in a.fired() and a.root_cause is None


def test_the_same_frames_under_a_scheduler_header_stay_a_crash(tmp_path: Path) -> None:
    text = "\n".join(line for line in (DEV / "e-020.log").read_text(encoding="utf-8").splitlines()
                     if line.startswith(("  ", "ConnectionRefusedError")))
    text = "[2025-07-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n" + text + "\n"
    a = _analysis(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"


def test_xinference_records_are_read_as_its_logger() -> None:
    line = ("2025-05-03 23:03:33,244 xinference.core.worker 141 ERROR    Failed to load model qwen2.5-instruct-0")
    w, rest = Unwrapper()(line)
    assert w is not None and (w.kind, w.logger, w.level, w.pid) == ("python-logging", "xinference.core.worker", "ERROR", 141)
    assert rest == "Failed to load model qwen2.5-instruct-0"


def test_a_traceback_after_another_programs_error_record_is_that_programs() -> None:
    for name in ("g-027", "g-028"):
        a = analyze(str(DEV / f"{name}.log"))
        assert "scheduler-crash" not in a.fired() and a.root_cause is None, name


def test_the_same_traceback_without_the_record_above_is_still_judged_by_its_frames(tmp_path: Path) -> None:
    lines = (DEV / "g-027.log").read_text(encoding="utf-8").splitlines()
    assert "xinference.core.worker" in lines[1]
    a = _analysis(tmp_path, "\n".join([lines[0], *lines[2:]]) + "\n")
    assert "scheduler-crash" in a.fired()  # a cut tail of library frames with no owner named: a crash


def test_the_diffusion_servers_aborted_warmup_is_one_warmup_failure() -> None:
    a = analyze(str(DEV / "i-009.log"))
    assert a.root_cause is not None and a.root_cause.name == "warmup-failed"
    assert [f.name for f in a.all_findings()].count("warmup-failed") == 1
    assert "scheduler-crash" not in a.fired() and a.outcome == "crashed-at-startup"
    assert "readiness probe" in a.root_cause.remedy and "--skip-server-warmup" not in a.root_cause.remedy


def test_an_aborted_warmup_record_alone_is_a_warmup_failure(tmp_path: Path) -> None:
    a = _analysis(tmp_path, "[06-17 13:46:56] Server warmup failed; aborting startup: HTTP server did not become "
                            "ready at http://[::1]:10454/health\n")
    [f] = [f for f in a.all_findings() if f.name == "warmup-failed"]
    assert f.data["reason"].startswith("HTTP server did not become ready")


def test_a_synthetic_warmup_that_continues_is_no_failure(tmp_path: Path) -> None:
    a = _analysis(tmp_path, "[06-17 13:46:56] Synthetic server warmup failed; continuing startup\n")
    assert "warmup-failed" not in a.fired()


def test_xinferences_failed_launch_is_a_verdict_on_the_start_up() -> None:
    a = analyze(str(DEV / "p-020.log"))
    assert a.outcome == "crashed-at-startup"
