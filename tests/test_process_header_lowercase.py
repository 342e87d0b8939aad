"""A process's exception header names the function too (`Exception in run_tp_server:`, 0.2.x's
tensor-parallel worker; `Exception in call_generate:` of the frontend), not only a class
(`Exception in ControllerSingle:`): the traceback after it is that process's, on its rank."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

# sgl-project/sglang#1127 (dev/p-028), the header and the traceback's first frames
LOG = """[18:19:57 TP0] Decode batch. #running-req: 1, #token: 125, token usage: 0.00, gen throughput (token/s): 32.32, #queue-req: 0
[18:19:57 TP2] Exception in run_tp_server:
Traceback (most recent call last):
  File "/home/ubuntu/sglang/python/sglang/srt/managers/tp_worker.py", line 892, in run_tp_server
    recv_reqs = broadcast_recv_input(None, tp_rank, tp_cpu_group)
  File "/home/ubuntu/sglang/python/sglang/srt/managers/tp_worker.py", line 938, in broadcast_recv_input
    dist.broadcast(tensor_size, src=0, group=dist_group)
RuntimeError: Connection closed by peer
"""


def test_a_function_named_header_gives_the_traceback_its_rank(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(LOG)
    facts = analyze(str(log)).views.facts()
    assert facts["first_error_rank"] == "TP2"
