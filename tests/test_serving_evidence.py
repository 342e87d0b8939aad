"""What shows a server served someone before it crashed (run/readiness.traffic_line), beyond SGLang's
own warmup request: a prefill batch reusing cached tokens or holding more than one request (the
warmup is one request on an empty prefix cache: dev j-023), and a generation endpoint's response body
printed on a line of its own, an error answer included (dev j-006, j-017: PD KV-transfer failures
answered as JSON). The warmup's own lines, a request body and a log record quoting a response must
not count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import analyze_text
from tests.test_flush_cache_serving import _CRASH  # a scheduler crash in the event loop, cut


def _prefill(new_seq: int, cached: int) -> str:
    return (f"[2025-12-02 18:40:16 TP0] Prefill batch. #new-seq: {new_seq}, #new-token: 7, "
            f"#cached-token: {cached}, token usage: 0.02, #running-req: 0, #queue-req: 0\n")


@pytest.mark.parametrize(("new_seq", "cached"), [(1, 2212), (3, 0)], ids=["cache-hit", "several-requests"])
def test_a_prefill_batch_the_warmup_cannot_be_is_serving(tmp_path: Path, new_seq: int, cached: int) -> None:
    a = analyze_text(tmp_path, _prefill(new_seq, cached) + _CRASH)
    assert a.outcome == "crashed-while-serving" and a.facts.get("ready") is True
    # Near miss: the warmup's own batch (one request, nothing cached) may be what crashed.
    b = analyze_text(tmp_path, _prefill(1, 0) + _CRASH, name="warmup.log")
    assert b.outcome is None


_ANSWERS = [
    # /generate's answer (orjson), an abort carried in it (dev j-006's shape)
    '{"text":"","meta_info":{"id":"c564d0c547f945aa987620f1255b838d","finish_reason":{"type":"abort",'
    '"message":"Decode transfer failed for request rank=0","status_code":500,"err_type":null},"prompt_tokens":8}}',
    # the OpenAI-compatible API's error answer (dev j-017's shape, cut)
    '{"object":"error","message":"Decode handshake failed for request rank=0 decode_req.req.rid=\'fb1c04660eb4',
    # /generate's error answer
    '{"error": {"message": "The input (160062 tokens) is longer than the model\'s context length (59862 tokens)."}}',
    # a streamed chat completion chunk
    'data: {"id":"9f8e","object":"chat.completion.chunk","created":1733912345,"model":"default","choices":[]}',
    # Python's print(response.json())
    "{'text': ' Paris.', 'meta_info': {'id': '9a3c', 'finish_reason': {'type': 'length', 'length': 16}}}",
]


# Near misses: JSON that is no answer to a request.
_NOT_ANSWERS = [
    # the request body pasted with its curl command
    "root@pod:/sgl-workspace# curl localhost:30000/v1/completions -H 'Content-Type: application/json' "
    "-d '{\"model\": \"default\", \"prompt\": \"Hello\", \"max_tokens\": 16}'\n",
    # SGLang's own record quoting its warmup's answer (an envelope first)
    '[2025-06-19 02:47:40] End of prefill disaggregation mode warmup with status 200, resp: '
    '[{"text": "", "meta_info": {"id": "1", "finish_reason": {"type": "length", "length": 0}}}]\n',
    # FastAPI's answer to an unknown path
    '{"detail":"Not Found"}\n',
]


@pytest.mark.parametrize("answer", _ANSWERS)
def test_a_printed_response_body_is_serving(tmp_path: Path, answer: str) -> None:
    a = analyze_text(tmp_path, answer + "\n")
    assert a.outcome == "serving" and a.facts.get("ready") is True
    b = analyze_text(tmp_path, answer + "\n" + _CRASH, name="crash.log")
    assert b.outcome == "crashed-while-serving"
    for i, text in enumerate(_NOT_ANSWERS):
        c = analyze_text(tmp_path, text + _CRASH, name=f"near-{i}.log")
        assert c.outcome != "crashed-while-serving", text


_HICACHE = (
    "[2025-12-02 07:04:51 TP1] Allocating 40.00 GB host memory for hierarchical KV cache.\n"
    "[2025-12-02 07:04:51 TP3] Allocating 40.00 GB host memory for hierarchical KV cache.\n"
)


def test_a_start_up_cut_in_hicaches_host_pool_allocation_stalled_there(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _HICACHE)
    stalled = [f for f in a.findings if f.name == "startup-stalled"]
    assert a.outcome == "incomplete" and a.facts.get("ready") is False
    assert stalled and {r["phase"] for r in stalled[0].data["ranks"].values()} == {"hicache-alloc"}
    # Near miss: the server said it was ready after it: the phase ended, nothing stalled.
    ready = "[2025-12-02 07:05:30] The server is fired up and ready to roll!\n"
    b = analyze_text(tmp_path, _HICACHE + ready, name="ready.log")
    assert b.outcome == "ready" and not [f for f in b.findings if f.name == "startup-stalled"]
