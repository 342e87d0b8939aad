"""sglang-router (Rust `sgl-router`) records, Rust panics, and HiCache / Mooncake storage start-up
notices: each a known message (every wording in the sources cited in grammars/notices.lark), on the
fast path and on LALR alike. A router's lines are the router's: its start-up is not a server start-up
and its worker health checks never feed `health-check-failed`; the storage back-ends SGLang sets up
while its scheduler initialises are start-up evidence (a log cut there is an incomplete start-up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.grammar.build import get_parser
from logparse.model.events import KnownMessage, Unparsed
from tests.conftest import analyze_text

DEV = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "dev"


@pytest.fixture(scope="module")
def parser():  # type: ignore[no-untyped-def]
    return get_parser(strict=True)


CASES = [
    # router start-up (g-038, 2025-06) and a later release's start-up (f-033, 2025-11)
    ("2025-06-25 15:01:45  INFO sglang_router_rs::server: src/server.rs:321: 🚧 Initializing router on 0.0.0.0:30000",
     "router-record"),
    ("2025-11-04 10:05:37  INFO sglang_router_rs::server: src/server.rs:928: Initializing data connector: Memory",
     "router-record"),
    ("2025-11-04 10:05:37 DEBUG sglang_router_rs::core::job_queue: src/core/job_queue.rs:228: Worker job queue worker 0 started",
     "router-record"),
    # gRPC worker health check (g-039) and k8s service discovery (g-023)
    (("2025-10-07 23:31:33 DEBUG sglang_router_rs::core::worker_manager: src/core/worker_manager.rs:1031: Worker "
     "grpc://localhost:20000 health check failed: Connection failed for worker grpc://localhost:20000: Failed to "
     "connect to gRPC server: transport error"), "router-record"),
    (("2025-07-29 21:11:52  WARN sglang_router_rs::service_discovery: src/service_discovery.rs:323: Retrying in 8 "
     "seconds with exponential backoff"), "router-record"),
    # records inside tracing spans: a PD routing failure (k-019, sglang#12355) and a decode error (sglang#10001)
    (('2025-10-29 21:49:19 ERROR http_request{method=POST uri=/generate version=HTTP/1.1 request_id="gnt-T1DkMPsWX1S'
      'OfuePNC4g04oV"}: sglang_router_rs::routers::http::pd_router: src/routers/http/pd_router.rs:142: Failed to select '
      "PD pair error=No available prefill workers (all circuits open or un"), "router-record"),
    (("2025-09-04 07:15:26 ERROR http_request{method=POST uri=/v1/completions version=HTTP/1.1}:http_request{method=POST "
      "uri=/v1/completions version=HTTP/1.1 request_id=cmpl-hvNcVSx9FaPb13dmSHtom1fF status=500 Internal Server Error "
      "latency=2.041450065s}: sglang_router_rs::response: src/middleware.rs:159: request failed with server error"),
     "router-record"),
    # sglang_router's launcher starting the SGLang servers (b-028, 2025-05; the 2024-11 form of its PR #2174)
    ("[Router (Python)] 2025-05-17 01:10:45 - INFO - Launching DP server process 0 on port 31000 - launch_server.py:175",
     "router-launch-dp-server"),
    ("[Router (Python)] 2024-11-25 21:28:33 - INFO - Launching DP server process 1 on port 31814",
     "router-launch-dp-server"),
    # the cache-aware policy's three-line record (g-037) and the lines of sgl-router's source around it
    ('Current running queue: {"http://localhost:8002": 7530, "http://localhost:8000": 7497, "http://localhost:8001": 7495}',
     "router-load-imbalance"),
    ("Max load: 7530, Min load: 7495", "router-load-imbalance"),
    # Rust panics: 1.73+ (g-038) and the older one-line form
    (("thread '<unnamed>' panicked at /home/router/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.45.1/"
     "src/runtime/blocking/shutdown.rs:51:21:"), "rust-panic"),
    ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 98 }', src/main.rs:2:5",
     "rust-panic"),
    (("Cannot drop a runtime in a context where blocking is not allowed. This happens when a runtime is dropped from "
     "within an asynchronous context."), "tokio-runtime-drop"),
    # HiCache storage back-ends (f-038; the template of sglang 0.5.x backend_factory.py / storage_hf3fs.py)
    (("[2025-12-25 09:59:20 TP0] Creating storage backend 'hf3fs' "
     "(sglang.srt.mem_cache.storage.hf3fs.storage_hf3fs.HiCacheHF3FS)"), "hicache-storage-create"),
    ("[2025-12-25 09:59:20 TP0] Using global metadata client with server url: http://10.95.109.64:19090",
     "hf3fs-metadata-client"),
    # Mooncake configuration, every wording (g-011's; 0.5.x load_from_env / load_from_file / extra_config)
    ("[2025-06-16 07:25:02 DP4 TP4] Mooncake Configuration loaded successfully.", "mooncake-config-loaded"),
    ("[2026-01-05 10:00:00 TP0] Mooncake Configuration loaded from env successfully.", "mooncake-config-loaded"),
    ("[2026-01-05 10:00:00 TP0] Mooncake Configuration loaded from file successfully.", "mooncake-config-loaded"),
]


@pytest.mark.parametrize(("line", "code"), CASES, ids=[c[0][:50] for c in CASES])
def test_known(parser, line: str, code: str) -> None:  # type: ignore[no-untyped-def]
    _env, cls, kw = parser.parse(line)
    assert cls is KnownMessage and kw["code"] == code, (line, cls, kw)
    assert parser.parse_lalr(line) == parser.parse(line)


NEAR_MISSES = [
    # another crate's record (tracing's format, not the router's target): not the router
    "2025-10-07 23:31:33  INFO tower_http::trace::on_response: src/lib.rs:12: finished processing request",
    # the router record cut inside its target (g-039's last line)
    "2025-10-07 23:32:33  INFO sglang_rou",
    "Current running queue is empty",
    "thread panicked",
    "Creating storage backend for the cache",
    # the router's own start-up in the launcher's format stays a router line, not a server launch
    "[Router (Rust)] 2025-05-17 01:10:45 - INFO - 🚧 Initializing router on 127.0.0.1:30000",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_is_unparsed(parser, line: str) -> None:  # type: ignore[no-untyped-def]
    env, cls, kw = parser.parse(line)
    assert cls is Unparsed, (line, kw)
    assert parser.parse_lalr(line) == (env, cls, kw)




def test_router_health_checks_are_not_the_servers(tmp_path: Path) -> None:
    a = analyze(str(DEV / "g-039.log"))
    assert "health-check-failed" not in a.fired() and a.outcome is None
    # Near miss: SGLang's own health check line in the same log still fires.
    text = (DEV / "g-039.log").read_text(encoding="utf-8") + (
        "\n[2026-03-07 15:40:02] Health check failed. Server couldn't get a response from detokenizer for last "
        "20 seconds. tic start time: 15:40:02. last_heartbeat time: 15:39:11\n")
    assert "health-check-failed" in analyze_text(tmp_path, text).fired()


@pytest.mark.parametrize("case", ["g-038", "f-033"])
def test_a_router_starting_is_no_server_start_up(case: str) -> None:
    a = analyze(str(DEV / f"{case}.log"))
    assert "startup-stalled" not in a.fired() and a.outcome is None


@pytest.mark.parametrize("case", ["f-038", "g-011", "b-028"])
def test_a_log_cut_while_storage_back_ends_start_is_an_incomplete_start_up(case: str) -> None:
    a = analyze(str(DEV / f"{case}.log"))
    assert a.outcome == "incomplete" and "startup-stalled" in a.fired()


def test_storage_set_up_then_ready_is_ready(tmp_path: Path) -> None:
    # Near miss: the same start-up lines followed by the ready marker are a start-up that finished.
    text = (DEV / "f-038.log").read_text(encoding="utf-8").rstrip("\n").rsplit("\n", 1)[0] + (
        "\n[2025-12-25 10:01:02] The server is fired up and ready to roll!\n")
    a = analyze_text(tmp_path, text)
    assert a.outcome == "ready" and "startup-stalled" not in a.fired()
