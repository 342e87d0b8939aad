"""NCCL creating a communicator (`ncclCommInitRank … Init START/COMPLETE`, NCCL_DEBUG=INFO) is
start-up: SGLang creates its communicators while its processes start. An excerpt that ends there
without an error ended during start-up (incomplete); serving after it is still serving."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

# sgl-project/sglang#3398 (dev/n-010): the second node of a 2-node launch, cut during NCCL init
NCCL_ONLY = """llm-bm-infer-service-prod-17389809006090t9a-1100014361:88008:88008 [2] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
llm-bm-infer-service-prod-17389809006090t9a-1100014361:88008:88008 [2] NCCL INFO Using network Socket
llm-bm-infer-service-prod-17389809006090t9a-1100014361:88008:88008 [2] NCCL INFO ncclCommInitRank comm 0xafd6da0 rank 10 nranks 16 cudaDev 2 nvmlDev 2 busId a2000 commId 0x898b6d578585998c - Init START
llm-bm-infer-service-prod-17389809006090t9a-1100014361:88008:88008 [2] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.
"""
# a real COMPLETE line (shared corpus dev-042), then serving
SERVING = """sglang-0:100:1012 [1] NCCL INFO ncclCommInitRank comm 0x55c8b7ed9050 rank 1 nranks 16 cudaDev 1 nvmlDev 1 busId 3a000 commId 0x11e35ff62bc85e0d - Init COMPLETE
[2025-02-10 10:00:00] The server is fired up and ready to roll!
[2025-02-10 10:00:05 TP0] Decode batch, #running-req: 4, #token: 15790, token usage: 0.02, gen throughput (token/s): 830.42, #queue-req: 0
[2025-02-10 10:00:06 TP0] Decode batch, #running-req: 4, #token: 15990, token usage: 0.02, gen throughput (token/s): 831.42, #queue-req: 0
"""
OTHER_NCCL = """sglang-0:100:1012 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via P2P/IPC
"""


def _analysis(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    log = tmp_path / "run.log"
    log.write_text(text)
    return analyze(str(log))


def test_an_excerpt_cut_in_nccl_init_ended_during_startup(tmp_path: Path) -> None:
    a = _analysis(tmp_path, NCCL_ONLY)
    assert a.outcome == "incomplete"
    assert "startup-stalled" in {f.name for f in a.findings}


def test_serving_after_nccl_init_is_serving(tmp_path: Path) -> None:
    a = _analysis(tmp_path, SERVING)
    assert a.outcome in ("serving", "stopped") and "startup-stalled" not in {f.name for f in a.findings}


def test_other_nccl_lines_alone_say_nothing_of_the_phase(tmp_path: Path) -> None:
    assert _analysis(tmp_path, OTHER_NCCL).outcome != "incomplete"
