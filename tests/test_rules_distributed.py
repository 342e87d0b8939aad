"""Distributed rules: nccl-timeout (collective, seq, timeout), nccl-error (by kind), custom-allreduce-
unavailable (error on peer access, info with NCCL advice on PCIe-only nodes), other-rank-failed
(a consequence that points at the other rank / node)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.model.events import Severity
from tests.conftest import only_finding as only
from tests.conftest import write_log as write

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "rules"
from tests.conftest import CORPUS

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"
FAMILY = ["nccl-timeout", "nccl-error", "custom-allreduce-unavailable", "other-rank-failed"]


# --------------------------------------------------------------------------- nccl-timeout


def test_nccl_timeout_fields_from_a_hard_wrapped_watchdog_line() -> None:
    a = analyze(str(CORPUS / "dev-027.log"))
    f = only(a, "nccl-timeout")
    nt = f.data["nccl_timeout"]
    assert {k: nt[k] for k in ("op", "seq", "timeout_ms", "ran_ms", "rank")} == {
        "op": "_ALLGATHER_BASE",
        "seq": 151721,
        "timeout_ms": 600000,
        "ran_ms": 600049,
        "rank": 4,
    }
    assert nt["last_completed"] == 151720
    assert "_ALLGATHER_BASE (SeqNum=151721) ran 600049 ms against Timeout(ms)=600000" in f.message
    assert "`--dist-timeout 1200`" in f.remedy and "SeqNum=151721" in f.remedy
    assert a.outcome == "hung" and a.root_cause is f
    assert not {"nccl-error", "watchdog-timeout"} & a.fired()


def test_nccl_timeout_from_the_cpp_abort_only() -> None:
    a = analyze(str(CORPUS / "dev-039.log"))
    f = only(a, "nccl-timeout")
    assert f.data["nccl_timeout"] == {"rank": 15}
    assert "checkTimeout" in f.message and "not in the excerpt" in f.message
    assert "nccl-error" not in a.fired()
    assert a.outcome == "hung"


WATCHDOG_8 = "".join(
    f"[rank{r}]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation "
    f"timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, "
    f"Timeout(ms)=600000) ran for {600061 + r} milliseconds before timing out.\n"
    for r in range(8)
)


def test_nccl_timeout_groups_ranks(tmp_path: Path) -> None:
    f = only(analyze(write(tmp_path, WATCHDOG_8)), "nccl-timeout")
    assert f.count == 8
    assert "8 times" in f.message and f.data["nccl_timeout"]["op"] == "_REDUCE_SCATTER_BASE"


# --------------------------------------------------------------------------- nccl-error


def test_nccl_error_kind_and_remedy() -> None:
    a = analyze(str(FIXTURES / "nccl-error" / "bad.log"))
    f = a.root_cause
    assert f is not None and f.name == "nccl-error"
    assert f.data["kind"] == "system" and f.count == 2 and f.ranks == ["TP2", "TP3"]
    assert (
        "NCCL_DEBUG=INFO" in f.remedy
        and "--shm-size" in f.remedy
        and "NCCL_SOCKET_IFNAME" in f.remedy
    )
    assert a.outcome == "crashed-at-startup"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
            "cuda",
        ),
        (
            (
                "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there "
                "was a network error, NCCL version 2.21.5"
            ),
            "remote",
        ),
        (
            "RuntimeError: NCCL error: internal error - please report this issue to the NCCL developers",
            "internal",
        ),
    ],
)
def test_nccl_error_kinds(tmp_path: Path, text: str, kind: str) -> None:
    log = (
        f"[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/distributed/parallel_state.py", line 412, in all_reduce\n    torch.distributed.all_reduce(x)\n'
        f"{text}\n"
    )
    f = only(analyze(write(tmp_path, log)), "nccl-error")
    assert f.data["kind"] == kind


def test_nccl_lines_that_are_not_errors() -> None:
    for name in ("dev-031", "dev-032", "dev-042"):
        assert "nccl-error" not in analyze(str(CORPUS / f"{name}.log")).fired(), name


# --------------------------------------------------------------------------- custom-allreduce-unavailable


def test_pcie_only_is_info_with_nccl_advice() -> None:
    a = analyze(str(CORPUS / "dev-041.log"))
    f = only(a, "custom-allreduce-unavailable")
    assert f.severity == Severity.INFO and a.root_cause is None
    assert f.ranks == ["TP0", "TP1", "TP2", "TP3"] and f.count == 4
    assert f.data["topology"] == "pcie-only" and f.data["tp_size"] == 4
    for knob in ("NCCL_P2P_LEVEL", "NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS"):
        assert knob in f.remedy
    assert "NCCL over PCIe" in f.message
    assert a.outcome == "ready"


def test_peer_access_failure_is_an_error(tmp_path: Path) -> None:
    log = (
        f"[2026-03-07 15:30:19 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/distributed/device_communicators/custom_all_reduce.py", line 140, in __init__\n'
        "    handles, offsets = self._get_ipc_meta(self.meta)\n"
        "RuntimeError: CUDART error: peer access is not supported between these two devices\n"
    )
    a = analyze(write(tmp_path, log))
    f = only(a, "custom-allreduce-unavailable")
    assert f.severity == Severity.ERROR and a.root_cause is f
    assert "--disable-custom-all-reduce" in f.remedy


def test_multinode_notice_is_not_reported() -> None:
    assert "custom-allreduce-unavailable" not in analyze(str(CORPUS / "dev-032.log")).fired()


# --------------------------------------------------------------------------- other-rank-failed


def test_other_rank_failed_points_elsewhere_and_is_never_root() -> None:
    a = analyze(str(CORPUS / "dev-042.log"))
    f = only(a, "other-rank-failed")
    assert f.consequence and a.root_cause is None
    assert "real error is on another rank or node" in f.message
    assert not {"scheduler-crash", "model-load-failure"} & a.fired()


def test_tcpstore_reset_names_the_lost_ranks() -> None:
    a = analyze(str(CORPUS / "dev-031.log"))
    f = only(a, "other-rank-failed")
    assert f.data["lost_ranks"] == [8, 9, 10, 11, 12]
    assert (
        "ranks 8–12" in f.message
        and "Connection reset by peer" in f.message
        and "rank 0" in f.message
    )
    assert a.root_cause is None and a.outcome is None


def test_monitored_barrier(tmp_path: Path) -> None:
    log = (
        "[rank3]:[E1206 18:44:12.715 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but "
        "received errors while waiting for send/recv from rank 0. Please check rank 0 logs for fault\n"
    )
    f = only(analyze(write(tmp_path, log)), "other-rank-failed")
    assert f.data["look_at"] == "rank 0" and f.consequence


def test_other_rank_failed_nests_under_a_root_cause(tmp_path: Path) -> None:
    log = (
        f"[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process\n    scheduler = Scheduler(\n'
        f'  File "{SG}/model_executor/model_runner.py", line 512, in load_model\n    self.model = get_model(\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB.\n\n"
        f"[2026-03-07 15:30:21 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SG}/model_executor/model_runner.py", line 417, in load_model\n    raise ValueError(\n'
        "ValueError: TP rank 1 could finish the model loading, but there are other ranks that didn't finish loading.\n"
    )
    a = analyze(write(tmp_path, log))
    assert a.root_cause is not None and a.root_cause.name == "cuda-oom"
    assert [c.name for c in a.root_cause.consequences] == ["other-rank-failed"]


def test_tcpstore_resets_after_a_graceful_shutdown_are_teardown(tmp_path: Path) -> None:
    log = (
        '[2026-04-14 09:16:40] INFO:     10.0.0.3:51000 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        "[2026-04-14 09:16:41 TP0] Decode batch, #running-req: 3, #token: 900, token usage: 0.01, cuda graph: True, "
        "gen throughput (token/s): 90.00, #queue-req: 0\n"
        "[2026-04-14 09:16:50] SIGTERM received. signum=15 frame=<frame at 0x7f3c2a1b9d40, file "
        "'/usr/local/lib/python3.12/dist-packages/uvicorn/server.py', line 328, code main_loop>. Draining requests and "
        "shutting down...\n"
        "[2026-04-14 09:16:51] INFO:     Shutting down\n"
        "[2026-04-14 09:16:51] INFO:     Finished server process [1889]\n"
        "[rank1]:[W0414 09:16:51.577420669 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank 1] Failed to check the "
        '"should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset '
        "by peer\n"
    )
    a = analyze(write(tmp_path, log))
    assert "other-rank-failed" not in a.fired()
    assert a.outcome == "stopped"


# --------------------------------------------------------------------------- families seen on unseen logs

# torch ≥ 2.4 flight-recorder lines on two nodes (ranks 0–7 and 8–15): no watchdog line, no C++ abort.
_DUMP_TWO_NODES = "\n".join([  # noqa: FLY002 — one log line per item
    ("[2025-07-03 15:20:01 TP0] Decode batch, #running-req: 3, #token: 1520, token usage: 0.01, cuda graph: True, "
    "gen throughput (token/s): 120.33, #queue-req: 0"),
    ("[rank4]:[E703 15:37:17.178360488 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 4] Received a "
    "dump signal due to a collective timeout from  rank 7 and we will try our best to dump the debug info. Last "
    "enqueued NCCL work: 56118, last completed NCCL work: 56118.This is most likely caused by incorrect usages of "
    "collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the "
    "scheduled collective, for some reason, didn't run."),
    ("[rank7]:[E703 15:37:17.180116623 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 7] Received a "
    "dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. "
    "Last enqueued NCCL work: 56119, last completed NCCL work: 56117."),
    ("[rank12]:[E703 15:37:18.012345678 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 12] Received a "
    "dump signal due to a collective timeout from  rank 7 and we will try our best to dump the debug info. Last "
    "enqueued NCCL work: 56118, last completed NCCL work: 56118."),
    "",
])


def test_nccl_timeout_from_flight_recorder_dump_signals_on_two_nodes(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, _DUMP_TWO_NODES))
    f = only(a, "nccl-timeout")
    nt = f.data["nccl_timeout"]
    assert nt["dump_signal_ranks"] == [4, 7, 12]
    assert nt["timed_out_ranks"] == [7]  # named by the others, and seen locally by rank 7 itself
    assert nt["last_completed"] == 56117 and nt["last_enqueued"] == 56119
    assert "rank(s) 7" in f.message and "56117" in f.message
    assert {ev.line for ev in f.evidence} == {2, 3, 4}
    assert a.root_cause is f


# torch >= 2.5 on a follower rank: HeartbeatMonitor saw the dump key another rank set in the TCPStore.
_DUMP_FOLLOWER = "\n".join([  # noqa: FLY002 — one log line per item
    ("[rank1]:[E703 19:54:01.084753215 ProcessGroupNCCL.cpp:1922] [PG ID 0 PG GUID 0(default_pg) Rank 1] Observed "
     "flight recorder dump signal from another rank via TCPStore."),
    ("[rank1]:[E703 19:54:01.084925105 ProcessGroupNCCL.cpp:1700] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
     "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 0, only active collectives: 0"),
    "",
])


def test_a_rank_that_only_observed_another_ranks_dump_signal_is_a_collective_timeout(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, _DUMP_FOLLOWER))
    f = only(a, "nccl-timeout")
    assert f.data["nccl_timeout"]["dump_signal_ranks"] == [1]
    assert "signalled by another rank" in f.message and "on rank 1 " in f.message
    assert a.root_cause is f and a.outcome == "hung"


# torch 2.2-2.3: the heartbeat monitor finds the NCCL watchdog thread stuck ('[PG a Rank N]' prefix).
_HEARTBEAT = "\n".join([  # noqa: FLY002 — one log line per item
    ("[rank3]:[E1019 01:04:03.356947152 ProcessGroupNCCL.cpp:1413] [PG 0 Rank 3] Heartbeat monitor timed out! "
     "Process will be terminated after dumping debug info. workMetaList_.size()=2"),
    ("[rank5]:[F1019 01:14:03.356851194 ProcessGroupNCCL.cpp:1224] [PG 0 Rank 5] [PG 0 Rank 5] ProcessGroupNCCL's "
     "watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically "
     "indicates a NCCL/CUDA API hang blocking the watchdog"),
    "",
])


def test_the_heartbeat_monitors_watchdog_hang_is_a_collective_timeout(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, _HEARTBEAT))
    f = only(a, "nccl-timeout")
    nt = f.data["nccl_timeout"]
    assert nt["watchdog_ranks"] == [3, 5] and nt["stuck_s"] == 480
    assert "480 s" in f.message and "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC" in f.remedy
    assert a.root_cause is f and a.outcome == "hung"


def test_a_dump_signal_next_to_the_watchdog_line_is_the_same_timeout() -> None:
    text = (FIXTURES / "nccl-timeout" / "bad.log").read_text(encoding="utf-8")
    dump = _DUMP_TWO_NODES.splitlines()[2]
    a = analyze_text_here(text + dump + "\n")
    assert len([f for f in a.all_findings() if f.name == "nccl-timeout"]) == 1


def analyze_text_here(text: str):  # type: ignore[no-untyped-def]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return analyze(write(Path(d), text))


# 0.1.x: the custom all-reduce kernel prints its CUDA error itself (CUDACHECK), then the worker dies.
_OLD_CAR = "\n".join([  # noqa: FLY002 — one log line per item
    "[gpu_id=0] Init nccl begin.",
    "[gpu_id=1] Init nccl begin.",
    ("Failed: Cuda error /tmp/pip-req-build-2ar9y_eb/csrc/custom_all_reduce.cuh:307 'peer access is not supported "
     "between these two devices'"),
    "",
])


def test_old_custom_allreduce_cuda_error_line_is_an_error_finding(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, _OLD_CAR))
    f = only(a, "custom-allreduce-unavailable")
    assert f.severity == Severity.ERROR and f.data == {"reason": "peer-access"}
    assert "custom all-reduce kernel failed" in f.message and "peer access is not supported" in f.message
    assert "--disable-custom-all-reduce" in f.remedy
    assert a.root_cause is f and a.outcome is not None


def test_peer_access_in_a_traceback_is_reported_once(tmp_path: Path) -> None:
    text = "\n".join([
        "[2024-07-01 10:00:00 TP1] Exception in run_tp_server:",
        "Traceback (most recent call last):",
        f'  File "{SG}/distributed/device_communicators/custom_all_reduce.py", line 120, in __init__',
        "    torch.cuda.synchronize()",
        "RuntimeError: CUDA error: peer access is not supported between these two devices",
        "",
    ])
    a = analyze(write(tmp_path, text))
    f = only(a, "custom-allreduce-unavailable")
    assert "Peer (P2P) access between the GPUs failed: RuntimeError" in f.message


def test_an_unreachable_nccl_unique_id_store_points_at_its_rank(tmp_path: Path) -> None:
    text = "\n".join([
        "[2025-07-01 10:00:00 TP3] Scheduler hit an exception: Traceback (most recent call last):",
        f'  File "{SG}/distributed/parallel_state.py", line 1452, in initialize_model_parallel',
        "    _TP = init_model_parallel_group(",
        ("torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from "
         "[0] via c10d key-value store by key '0', but store->get('0') got error: failed to recv, got 0 bytes"),
        "",
    ])
    a = analyze(write(tmp_path, text))
    f = only(a, "other-rank-failed")
    assert f.consequence and f.data["look_at"] == "rank 0"
    assert f.data["store_error"] == "failed to recv, got 0 bytes"
    assert "scheduler-crash" not in a.fired()


@pytest.mark.parametrize(("line", "joined", "expected", "seconds"), [
    # sglang#507 (tp 4 on one node) and the first torch wording (PR 111805: "workers")
    ("torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/4 clients joined.",
     1, 4, 601),
    ("torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.", 1, 2, 6),
])
def test_a_rendezvous_timeout_on_rank_0_is_the_missing_ranks_failure(
        tmp_path: Path, line: str, joined: int, expected: int, seconds: int) -> None:
    a = analyze(write(tmp_path, line + "\nInitialization failed. detoken_init_state: init ok\n"))
    f = only(a, "other-rank-failed")
    assert f.consequence and (f.data["joined"], f.data["expected"], f.data["timeout_s"]) == (joined, expected, seconds)
    assert f"only {joined}/{expected} ranks joined" in f.message and "--dist-init-addr" in f.remedy
    assert "scheduler-crash" not in a.fired() and a.root_cause is None


# NCCL 2.2x bootstrap: a WARN whose words say no "error", then NCCLCHECK's return path (-> 2 = ncclSystemError).
_NCCL_RETURN_PATH = "\n".join([  # noqa: FLY002 — one log line per item
    ("gpu-node-2:1187:1187 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.10.7<40213> "
     "failed : Software caused connection abort"),
    "gpu-node-2:1187:1187 [3] NCCL INFO misc/socket.cc:567 -> 2",
    "gpu-node-2:1187:1187 [3] NCCL INFO bootstrap.cc:256 -> 2",
    "gpu-node-2:1187:1187 [3] NCCL INFO init.cc:1412 -> 2",
    "",
])


def test_nccl_error_from_ncclchecks_return_path(tmp_path: Path) -> None:
    a = analyze(write(tmp_path, _NCCL_RETURN_PATH))
    f = only(a, "nccl-error")
    assert f.data["kind"] == "system" and f.data["nccl_result"] == "ncclSystemError"
    assert f.data["return_path_lines"] == 3 and "socketStartConnect" in f.data["warning"]
    assert f.data["during"] == "communicator-init" and f.stage == "startup"  # the path went through init.cc
    assert {ev.line for ev in f.evidence} == {1, 2, 3, 4}
    assert a.root_cause is f


def test_a_lone_nccl_info_line_is_no_error(tmp_path: Path) -> None:
    ok = "gpu-node-2:1187:1187 [3] NCCL INFO Bootstrap : Using eth0:192.168.10.5<0>\n"
    assert "nccl-error" not in analyze(write(tmp_path, ok)).fired()


def test_a_c10d_store_socket_timeout_is_no_watchdog_hang(tmp_path: Path) -> None:
    # The rendezvous store never answered: a c10d socket warning, not a collective that hung.
    text = ("[rank1]:[W623 15:37:01.824135523 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=100, "
            "addr=[node-0.example.net]:43590, remote=[node-0.example.net]:20000) timed out after 1800000ms\n")
    assert "nccl-timeout" not in analyze(write(tmp_path, text)).fired()


def test_timeout_at_nccl_work_without_the_worknccl_line_is_a_collective_timeout(tmp_path: Path) -> None:
    text = ("[rank3]:[E214 06:46:21.341531487 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 3 Rank 3] Timeout at NCCL "
            "work: 5120, last enqueued NCCL work: 5121, last completed NCCL work: 5119.\n")
    a = analyze(write(tmp_path, text))
    f = only(a, "nccl-timeout")
    assert f.data["nccl_timeout"]["seq"] == 5120 and f.data["nccl_timeout"]["rank"] == 3
    assert f.data["nccl_timeout"]["last_completed"] == 5119
    assert a.outcome == "hung"
