"""Runtime lines (formats §3, §1.5, §8): every stats-line variant, retraction, access and uvicorn lines."""

from __future__ import annotations

import pytest

from logparse.grammar.build import get_parser
from logparse.grammar.transform import runtime
from logparse.model.events import (
    DecodeBatch,
    HttpAccess,
    PrefillBatch,
    Retraction,
    ServerReady,
    Unparsed,
    UvicornLifecycle,
)
from tests.conftest import corpus_logs

P = "[2026-03-07 15:31:10 TP0] "

CASES = [
    # Decode D1–D15 (formats §3.2)
    ("[gpu_id=0] Decode batch. #running-req: 8, #token: 5120, token usage: 0.03, gen throughput (token/s): 812.33, #queue-req: 0",
     DecodeBatch, {"running": 8, "tokens": 5120, "token_usage": 0.03, "gen_throughput": 812.33, "queue": 0}),
    ("[2024-12-03 10:00:01 TP0] Decode batch. #running-req: 1, #token: 700, token usage: 0.00, accept len: 3.12, gen throughput (token/s): 160.20, #queue-req: 0",
     DecodeBatch, {"running": 1, "tokens": 700, "token_usage": 0.0, "accept_len": 3.12, "gen_throughput": 160.2, "queue": 0}),
    (P + "Decode batch. #running-req: 8, #token: 5120, token usage: 0.03, gen throughput (token/s): 812.33, largest-len: 0, #queue-req: 0, ",
     DecodeBatch, {"running": 8, "tokens": 5120, "token_usage": 0.03, "gen_throughput": 812.33, "queue": 0,
                   "extra": {"largest_len": 0.0}}),
    ("[2025-10-24 10:00:01] Decode batch [1240], #running-req: 8, #token: 5120, token usage: 0.03, cuda graph: True, gen throughput (token/s): 812.33, #queue-req: 0, ",
     DecodeBatch, {"running": 8, "tokens": 5120, "token_usage": 0.03, "cuda_graph": True, "gen_throughput": 812.33,
                   "queue": 0, "iteration": 1240}),
    ("[2026-05-16 12:44:55 DP2 TP2] Decode batch, #running-req: 1, #token: 31936, token usage: 0.22, accept len: 2.10, accept rate: 0.37, pre-allocated usage: 0.00, #prealloc-req: 0, #transfer-req: 0, #retracted-req: 0, cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0",
     DecodeBatch, {"running": 1, "tokens": 31936, "token_usage": 0.22, "accept_len": 2.1, "accept_rate": 0.37,
                   "cuda_graph": True, "gen_throughput": 0.39, "queue": 0,
                   "extra": {"pre_allocated_usage": 0.0, "n_prealloc_req": 0.0, "n_transfer_req": 0.0, "n_retracted_req": 0.0}}),
    (P + "Decode batch, #running-req: 48, #full token: 120331, full token usage: 0.41, mamba num: 96, mamba usage: 0.18, cuda graph: True, gen throughput (token/s): 3120.11, #queue-req: 7",
     DecodeBatch, {"running": 48, "token_usage": 0.41, "cuda_graph": True, "gen_throughput": 3120.11, "queue": 7,
                   "extra": {"n_full_token": 120331.0, "full_token_usage": 0.41, "mamba_num": 96.0, "mamba_usage": 0.18}}),
    (P + "Decode batch, #running-req: 4, #gpu-token: 20800, gpu token usage: 0.29, #cpu-token: 41422, cpu token usage: 0.29, cuda graph: True, gen throughput (token/s): 10.0, #queue-req: 0",
     DecodeBatch, {"running": 4, "token_usage": 0.29, "cuda_graph": True, "gen_throughput": 10.0, "queue": 0,
                   "extra": {"n_gpu_token": 20800.0, "gpu_token_usage": 0.29, "n_cpu_token": 41422.0, "cpu_token_usage": 0.29}}),
    # cut at the end of an excerpt, inside the last key (corpus dev-031)
    (P + "Decode batch, #running-req: 1, #token: 32128, token usage: 0.22, accept len: 2.77, cuda gra",
     DecodeBatch, {"running": 1, "tokens": 32128, "token_usage": 0.22, "accept_len": 2.77}),
    # Prefill P1–P17 (formats §3.1)
    ("[gpu_id=0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 1, cache hit rate: 12.50%, #running-req: 0, #queue-req: 0",
     PrefillBatch, {"new_seq": 1, "new_token": 7, "cached_token": 1, "running": 0, "queue": 0, "extra": {"cache_hit_rate": 12.5}}),
    ("[15:31:10 TP0] Prefill batch(mixed #running-req: 5). #new-seq: 1, #new-token: 512, #cached-token: 0, cache hit rate: 0.00%, #queue-req: 3",
     PrefillBatch, {"new_seq": 1, "new_token": 512, "cached_token": 0, "queue": 3, "running": 5, "extra": {"cache_hit_rate": 0.0}}),
    (P + "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 1, input throughput (token/s): 5123.77 ",
     PrefillBatch, {"new_seq": 1, "new_token": 7, "cached_token": 0, "token_usage": 0.0, "queue": 0, "input_throughput": 5123.77,
                    "extra": {"n_unbootstrapped_req": 0.0, "n_transferring_req": 1.0}}),
    ("[2025-10-24 10:00:00] Prefill batch [37], #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ",
     PrefillBatch, {"new_seq": 1, "new_token": 7, "cached_token": 0, "token_usage": 0.0, "running": 0, "queue": 0, "iteration": 37}),
    ("[2026-02-26 16:41:03 TP0] Prefill batch, #new-seq: 1, #new-token: 1024, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0, input throughput (token/s): 88.41, cuda graph: False",
     PrefillBatch, {"new_seq": 1, "new_token": 1024, "cached_token": 0, "token_usage": 0.01, "running": 0, "queue": 0,
                    "input_throughput": 88.41, "cuda_graph": False}),
    ("[2026-10-30 10:02:11 DP2 TP2] Prefill batch, #new-seq: 4, #new-token: 3120, #cached-token: 10240, full token usage: 0.18, mamba usage: 0.11, #running-req: 40, #queue-req: 0, #pending-token: 0, cuda graph: True, input throughput (token/s): 40311.50",
     PrefillBatch, {"new_seq": 4, "new_token": 3120, "cached_token": 10240, "token_usage": 0.18, "running": 40, "queue": 0,
                    "cuda_graph": True, "input_throughput": 40311.5,
                    "extra": {"full_token_usage": 0.18, "mamba_usage": 0.11, "n_pending_token": 0.0}}),
    ("[2026-07-04 05:01:09 TP0] Prefill batch, #new-seq: 1, #new-token: 128, #cached-token: 70144, full token usage: 0.15, mamba usage: 0.02, #running-req: 0, #queue-req: 0, #pending-token: 0, npu graph: False, input throughput (token/s): 2.61",
     PrefillBatch, {"new_seq": 1, "new_token": 128, "cached_token": 70144, "token_usage": 0.15, "running": 0, "queue": 0,
                    "cuda_graph": False, "input_throughput": 2.61,
                    "extra": {"full_token_usage": 0.15, "mamba_usage": 0.02, "n_pending_token": 0.0, "graph_device_npu": 1.0}}),
    # Retraction (formats §3.4)
    (P + "KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 24576, #new_token_ratio: 0.5123 -> 0.6894",
     Retraction, {"retracted": 3, "new_tokens_gained": 24576, "ratio_from": 0.5123, "ratio_to": 0.6894}),
    ("[2025-03-07 21:49:51 TP9] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1207 ->",
     Retraction, {"retracted": 1, "ratio_from": 0.1207}),
    # Access and uvicorn (formats §1.5, §8)
    ('[2026-02-26 16:40:58] INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK',
     HttpAccess, {"client": "127.0.0.1:43092", "method": "GET", "path": "/health", "status": 200, "reason": "OK"}),
    ('INFO:     ::1:52314 - "POST /v1/chat/completions?x=1 HTTP/1.1" 503 Service Unavailable',
     HttpAccess, {"client": "::1:52314", "method": "POST", "path": "/v1/chat/completions?x=1", "status": 503,
                  "reason": "Service Unavailable"}),
    ("[2026-03-07 15:31:40] INFO:     Started server process [1889]", UvicornLifecycle, {"stage": "started", "pid": 1889}),
    ("[2026-03-07 15:31:40] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
     UvicornLifecycle, {"stage": "running", "url": "http://0.0.0.0:30000"}),
    ("[2026-03-07 15:50:00] INFO:     Application shutdown complete.", UvicornLifecycle, {"stage": "shutdown-complete"}),
    ("[2026-03-07 15:31:42] The server is fired up and ready to roll!", ServerReady, {}),
]


@pytest.fixture(scope="module")
def parser():  # type: ignore[no-untyped-def]
    return get_parser(strict=True)


@pytest.mark.parametrize(("line", "cls", "fields"), CASES, ids=[c[0][:60] for c in CASES])
def test_line(parser, line: str, cls: type, fields: dict) -> None:  # type: ignore[no-untyped-def, type-arg]
    _env, got_cls, kw = parser.parse(line)
    assert got_cls is cls
    assert kw == fields
    assert parser.parse(line) == parser.parse_lalr(line)


@pytest.mark.parametrize("line", [
    P + "Decode batch: oops",
    P + "Decode batches are fine",
    P + 'INFO:     127.0.0.1:1 - "GET /health" 200 OK',
    # (a bare `Prefill batch` is a stats line cut after its head: it counts, tests/test_paste_shapes.py)
    "Prefill batches",
    "Prefill batch sizes: 1, 2, 4",
])
def test_near_misses_stay_unparsed(parser, line: str) -> None:  # type: ignore[no-untyped-def]
    assert parser.parse(line)[1] is Unparsed
    assert parser.parse(line) == parser.parse_lalr(line)


def _generic(body: str, known: dict[str, str]) -> dict:  # type: ignore[type-arg]
    kw: dict = {}  # type: ignore[type-arg]
    extra: dict = {}  # type: ignore[type-arg]
    for item in body.rstrip(", ").split(", "):
        key, sep, value = item.partition(": ")
        if sep:
            runtime._apply(key, value, known, kw, extra)
    return runtime._finish(kw, extra)


def test_compiled_signatures_equal_the_generic_split() -> None:
    """Every stats body in the corpus and in the cases above, parsed twice (the second time through
    the learned signature), equals the generic split."""
    bodies = []
    for line, cls, _ in CASES:
        if cls in (DecodeBatch, PrefillBatch):
            bodies.append((line.split("batch", 1)[1].split(" ", 1)[1], cls))
    for path in corpus_logs():
        for line in path.read_text(errors="replace").splitlines():
            for cls, head in ((DecodeBatch, "Decode batch"), (PrefillBatch, "Prefill batch")):
                if head in line:
                    bodies.append((line.split(head, 1)[1].split(" ", 1)[1], cls))
    assert len(bodies) > 40
    for body, cls in bodies:
        known = runtime._DECODE_KEYS if cls is DecodeBatch else runtime._PREFILL_KEYS
        first = runtime._stats(body, known)
        second = runtime._stats(body, known)
        assert first == second == _generic(body, known), body


def test_a_collapsed_stats_key_keeps_its_value() -> None:
    # dev/a-031: the paste lost `age: …, accept len: …, ` and glued `token us` to `accept rate`.
    from logparse.grammar.transform.runtime import _DECODE_KEYS, _PREFILL_KEYS, known_key

    assert known_key("token usaccept rate", _DECODE_KEYS) == "accept rate"
    assert known_key("#runnin#queue-req", _PREFILL_KEYS) == "#queue-req"
    # an extra whose head is no known key's start stays an extra; a key that is known is itself
    for extra in ("full token usage", "swa token usage", "xyz accept rate", "mamba usage"):
        assert known_key(extra, _DECODE_KEYS) is None
    assert known_key("#token", _DECODE_KEYS) == "#token"
