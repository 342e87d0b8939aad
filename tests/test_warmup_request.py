"""SGLang's own warmup request in a `--log-requests` log (issue 9): the server is still starting.

SGLang sends itself `text='The capital city of France is'` (`sampling_params={'temperature': 0,
'max_new_tokens': 8}`) after its HTTP server starts and says it is ready only when that returns;
with `--log-requests` the tokenizer manager logs it as `Receive: obj={}` (sglang.txt's template).
Real occurrence: fixtures/corpus/dev/e-008 (the warmup received and prefilled, then cut).
"""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from tests.conftest import FIXTURES, analyze_text


def _receive(text: str) -> str:
    return (f"[2025-11-06 16:56:10] Receive: obj=GenerateReqInput(rid='6847fb46232249c986ee4d64d34efd34', "
            f"text='{text}', input_ids=None, sampling_params={{'temperature': 0, 'max_new_tokens': 8}}, "
            "return_logprob=False, stream=False)\n")


_PREFILL = ("[2025-11-06 16:56:10 TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, "
            "token usage: 0.00, #running-req: 0, #queue-req: 0, \n")




def test_dev_case_cut_during_the_warmup() -> None:
    a = analyze(str(FIXTURES / "corpus" / "dev" / "e-008.log"))
    assert a.outcome == "incomplete" and a.facts.get("ready") is False
    (stalled,) = [f for f in a.findings if f.name == "startup-stalled"]
    assert "warmup" in stalled.message


def test_logged_warmup_request_alone_is_a_start_up(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _receive("The capital city of France is"))
    assert a.outcome == "incomplete" and any(f.name == "startup-stalled" for f in a.findings)


def test_a_users_request_is_not_the_warmup(tmp_path: Path) -> None:
    # Near miss: the same logged request and prefill with another prompt: someone's request to a
    # server already up (serving), never a start-up that stalled.
    a = analyze_text(tmp_path, _receive("Write a haiku about GPUs") + _PREFILL)
    assert a.outcome != "incomplete" and not any(f.name == "startup-stalled" for f in a.findings)
