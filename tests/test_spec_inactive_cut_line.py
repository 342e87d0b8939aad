"""spec-inactive needs a decode line that reaches past where SGLang prints `accept len`: a line cut
before that place (`… token usage:`) does not say the draft printed nothing."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

LAUNCH = ("python -m sglang.launch_server --model-path Qwen/Qwen2.5-VL-7B-Instruct --speculative-algorithm EAGLE3 "
          "--speculative-draft-model-path some/draft --port 8080\n")
# sgl-project/SpecForge#310 (dev/n-015): the excerpt's only decode line, cut
CUT = "[2025-11-19 15:25:25] Decode batch, #running-req: 1, #token: 353, token usage:\n"
WHOLE = ("[2025-11-19 15:25:25] Decode batch, #running-req: 1, #token: 353, token usage: 0.00, cuda graph: True, "
         "gen throughput (token/s): 41.96, #queue-req: 0\n")


def _names(tmp_path: Path, text: str) -> set[str]:
    log = tmp_path / "run.log"
    log.write_text(text)
    return {f.name for f in analyze(str(log)).findings}


def test_a_cut_decode_line_is_no_witness(tmp_path: Path) -> None:
    assert "spec-inactive" not in _names(tmp_path, LAUNCH + CUT)


def test_a_whole_decode_line_without_accept_fields_is(tmp_path: Path) -> None:
    assert "spec-inactive" in _names(tmp_path, LAUNCH + WHOLE)
    assert "spec-inactive" in _names(tmp_path, LAUNCH + CUT + WHOLE)
