"""A prefill batch after SGLang's ready marker is a user's request (SGLang prints the marker only
once its warmup returned): a PD prefill server, whose traffic is only prefill lines, is serving."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

READY = "[2025-07-08 06:14:34] The server is fired up and ready to roll!"
PREFILL = ("[2025-07-08 06:14:{s} TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, "
           "token usage: 0.00, #unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 0, "
           "input throughput (token/s): 0.37")


def _outcome(tmp_path: Path, lines: list[str]) -> str | None:
    path = tmp_path / "run.log"
    path.write_text("".join(f"{x}\n" for x in lines))
    return analyze(str(path)).outcome


def test_prefill_after_the_ready_marker_is_traffic(tmp_path: Path) -> None:
    assert _outcome(tmp_path, [READY, PREFILL.format(s=38)]) == "serving"


def test_the_warmup_prefill_before_the_marker_is_not(tmp_path: Path) -> None:
    assert _outcome(tmp_path, [PREFILL.format(s=30), READY]) == "ready"
