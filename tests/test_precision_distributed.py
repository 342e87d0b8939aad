"""Precision of the NCCL rules: when several ranks abort on a collective timeout, each prints its
own watchdog stack and `terminate called … DistBackendError`; every one of them is the timeout
(nccl-timeout), none an NCCL error of another kind."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

_LIB = "/opt/conda/envs/sglang/lib/python3.10/site-packages/torch/lib"


def _rank_abort(rank: int) -> str:
    return f"""\
Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7ea82996c446 in {_LIB}/libc10.so)
frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x282 (0x7ea78d3cc772 in {_LIB}/libtorch_cuda.so)
frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7ea78d3d3bb3 in {_LIB}/libtorch_cuda.so)
frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7ea78d3d561d in {_LIB}/libtorch_cuda.so)

terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception
"""


def test_every_ranks_watchdog_abort_is_the_timeout(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _rank_abort(14) + _rank_abort(15))
    assert "nccl-timeout" in a.fired()
    assert "nccl-error" not in a.fired()


def test_a_terminate_without_a_watchdog_stack_is_still_an_nccl_error(tmp_path: Path) -> None:
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system "
            "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n")
    assert "nccl-error" in analyze_text(tmp_path, _rank_abort(15) + "\n" * 20 + text).fired()
