"""Root cause and outcome from structure, not words: where an exception was raised (its frames, the
process that printed it) and whether the excerpt shows serving before it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

SG = "/sgl-workspace/sglang/python/sglang/srt"

# A hybrid model's scheduler loop allocating a mamba slot (0.5.x memory_pool.py assert).
_MAMBA_LOOP = "\n".join([
    "{stats}",
    "[2026-03-25 05:46:24] Scheduler hit an exception: Traceback (most recent call last):",
    f'  File "{SG}/managers/scheduler.py", line 3487, in run_scheduler_process',
    "    scheduler.run_event_loop()",
    f'  File "{SG}/managers/scheduler.py", line 3363, in dispatch_event_loop',
    "    scheduler.event_loop_overlap()",
    f'  File "{SG}/mem_cache/common.py", line 420, in alloc_req_slots',
    "    req_pool_indices = req_to_token_pool.alloc(reqs)",
    f'  File "{SG}/mem_cache/memory_pool.py", line 301, in alloc',
    "    assert mid is not None, (",
    ("AssertionError: Not enough space for mamba cache, try to increase --mamba-full-memory-ratio or "
     "--max-mamba-cache-size. mid=None, self.mamba_pool.size=102, self.mamba_pool.available_size()=0, len(reqs)=4"),
    "",
])


def test_one_busy_prefill_line_is_serving_shown_before_the_crash(tmp_path: Path) -> None:
    # SGLang's warmup runs alone: a prefill with requests already running is user traffic.
    busy = ("[2026-03-25 05:46:20] Prefill batch, #new-seq: 1, #new-token: 8192, #cached-token: 0, "
            "token usage: 0.10, #running-req: 3, #queue-req: 0")
    a = analyze_text(tmp_path, _MAMBA_LOOP.format(stats=busy))
    assert a.root_cause is not None and a.root_cause.name == "mamba-pool-exhausted"
    assert "invalid-server-args" not in a.fired()
    assert a.outcome == "crashed-while-serving"


def test_a_lone_prefill_of_one_request_may_be_the_warmup(tmp_path: Path) -> None:
    alone = ("[2026-03-25 05:46:20] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, "
             "token usage: 0.00, #running-req: 0, #queue-req: 0")
    a = analyze_text(tmp_path, _MAMBA_LOOP.format(stats=alone))
    assert a.root_cause is not None and a.root_cause.name == "mamba-pool-exhausted"
    assert a.outcome is None  # a crash in the request loop with no serving shown before it


_LOOP_CUT = "\n".join([
    '[2026-05-05 02:22:14] INFO:     127.0.0.1:56304 - "POST /generate HTTP/1.1" {status}',
    "[2026-05-05 02:22:14] Scheduler hit an exception: Traceback (most recent call last):",
    f'  File "{SG}/managers/scheduler.py", line 3875, in run_scheduler_process',
    "    scheduler.run_event_loop()",
    f'  File "{SG}/managers/scheduler.py", line 3747, in dispatch_event_loop',
    "    scheduler.event_loop_normal()",
    "",
])


def test_an_answered_generate_request_means_the_server_was_up(tmp_path: Path) -> None:
    # SGLang is ready as soon as its warmup `POST /generate` returns: a loop crash after it is serving.
    a = analyze_text(tmp_path, _LOOP_CUT.format(status="200 OK"))
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome == "crashed-while-serving"
    assert a.views.facts().get("ready") is True


def test_a_failed_warmup_request_is_not_readiness(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, _LOOP_CUT.format(status="503 Service Unavailable"))
    assert a.outcome != "crashed-while-serving"


def test_a_log_of_checkpoint_shard_bars_only_is_an_unfinished_start_up(tmp_path: Path) -> None:
    text = "".join(
        f"Loading safetensors checkpoint shards: {p}% Completed | {n}/41 [0{n // 10}:00<00:10, 1.10it/s]\n"
        for n, p in ((30, 73), (31, 76), (32, 78))
    )
    a = analyze_text(tmp_path, text)
    assert a.outcome == "incomplete"
    f = next(f for f in a.all_findings() if f.name == "startup-stalled")
    assert f.data["last_phase"] == "weight-load" and "32/41 shards" in f.message


def test_another_programs_traceback_is_not_a_server_crash(tmp_path: Path) -> None:
    # A Ray driver's `ray.get` raising an actor's death: no SGLang frame, no process header, no rank.
    ray = "/opt/conda/lib/python3.12/site-packages/ray/_private"
    text = "\n".join([
        "Traceback (most recent call last):",
        '  File "/workspace/verl/trainer/main_ppo.py", line 42, in main',
        "    ray.get(runner.run.remote(config))",
        f'  File "{ray}/worker.py", line 2882, in get',
        "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
        f'  File "{ray}/worker.py", line 968, in get_objects',
        "    raise value.as_instanceof_cause()",
        ("ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=33696, ip=10.21.175.69, "
         "actor_id=0b280a78e9337f3e9dce5e8001000000)"),
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired()
    assert a.root_cause is None


_ARGS_CUT = "\n".join([  # noqa: FLY002 — one log line per item
    "Traceback (most recent call last):",
    '  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py", line 59, in <module>',
    "    server_args = prepare_server_args(sys.argv[1:])",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 6539, in prepare_server_args',
    "    return ServerArgs.from_cli_args(raw_args)",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 6102, in from_cli_args',
    "",
])


def test_a_cut_argument_processing_traceback_is_a_start_up_crash_without_a_guessed_cause(tmp_path: Path) -> None:
    # The main process (launch_server → prepare_server_args), not a scheduler: no scheduler-crash.
    a = analyze_text(tmp_path, _ARGS_CUT)
    assert "scheduler-crash" not in a.fired()
    assert a.root_cause is None
    f = next(f for f in a.all_findings() if f.name == "invalid-server-args")
    assert f.data["cut"] and str(f.severity) == "warning"
    assert a.outcome == "crashed-at-startup"


def test_argparse_usage_cut_before_its_error_is_no_stalled_start_up(tmp_path: Path) -> None:
    text = ("INFO 03-06 10:05:08 __init__.py:190] Automatically detected platform cuda.\n"
            "usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH] [--host HOST]\n")
    a = analyze_text(tmp_path, text)
    assert "startup-stalled" not in a.fired()
    assert a.root_cause is None and a.outcome is None  # error exit or --help: the excerpt cannot tell
    assert "invalid-server-args" in a.fired()


def test_a_benchmark_scripts_own_bug_is_not_a_server_crash(tmp_path: Path) -> None:
    # Frames in sglang/bench_*.py only (a tool), no process header, no rank: not a server process.
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "Traceback (most recent call last):",
        '  File "/opt/sglang/python/sglang/bench_serving.py", line 1502, in <module>',
        "    run_benchmark(args)",
        '  File "/opt/sglang/python/sglang/bench_serving.py", line 1287, in run_benchmark',
        "    tokenizer = get_tokenizer(tokenizer_id)",
        "KeyError: 'tokenizer'",
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired()
    # The same exception raised through the server runtime is a server process's crash.
    srt = text.replace('line 1287, in run_benchmark', 'line 1287, in run_benchmark\n    x()\n'
                       '  File "/opt/sglang/python/sglang/srt/managers/tokenizer_manager.py", line 88, in __init__')
    assert "scheduler-crash" in analyze_text(tmp_path, srt, name="srt.log").fired()


def test_a_cut_traceback_inside_cuda_graph_capture_is_a_start_up_crash(tmp_path: Path) -> None:
    text = "\n".join([
        "[2025-08-05 11:14:39 TP2] Scheduler hit an exception: Traceback (most recent call last):",
        f'  File "{SG}/model_executor/cuda_graph_runner.py", line 663, in capture_one_batch_size',
        "    out = run_once()",
        f'  File "{SG}/model_executor/cuda_graph_runner.py", line 642, in run_once',
        "    logits_output_or_pp_proxy_tensors = forward(",
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome == "crashed-at-startup"


def test_a_cut_tail_of_library_frames_stays_a_crash_but_an_actor_death_is_a_consequence(tmp_path: Path) -> None:
    tail = "\n".join([  # noqa: FLY002 — one log line per item
        '  File "/usr/local/lib/python3.12/dist-packages/flashinfer/utils.py", line 758, in get_shuffle_matrix',
        "    assert K % 4 == 0",
        "AssertionError",
        "",
    ])
    assert "scheduler-crash" in analyze_text(tmp_path, tail).fired()
    died = ("ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=3369646, ip=10.21.175.69, "
            "actor_id=0b280a78e9337f3e9dce5e8001000000)\n")
    a = analyze_text(tmp_path, died, name="died.log")
    assert "scheduler-crash" not in a.fired() and a.root_cause is None


def test_a_cut_0_1_router_init_traceback_is_a_start_up_crash(tmp_path: Path) -> None:
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "Traceback (most recent call last):",
        '  File "/opt/sglang/python/sglang/srt/managers/router/manager.py", line 68, in start_router_process',
        "    model_client = ModelRpcClient(server_args, port_args)",
        '  File "/h',
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome == "crashed-at-startup"


_UP_THEN_LOOP = "\n".join([
    "[2026-04-23 07:32:01] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
    '[2026-04-23 07:32:02] INFO:     127.0.0.1:34224 - "GET /model_info HTTP/1.1" 200 OK',
    "{ready}",
    "[2026-04-23 07:32:10 TP3] Scheduler hit an exception: Traceback (most recent call last):",
    f'  File "{SG}/managers/scheduler.py", line 3277, in run_scheduler_process',
    "    scheduler.event_loop_overlap()",
    "",
])


def test_a_loop_crash_after_uvicorn_started_may_be_the_warmup(tmp_path: Path) -> None:
    # uvicorn runs before SGLang sends its warmup request: up by uvicorn alone is not served.
    a = analyze_text(tmp_path, _UP_THEN_LOOP.format(ready=""))
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.outcome is None
    ready = "[2026-04-23 07:32:05] The server is fired up and ready to roll!"
    b = analyze_text(tmp_path, _UP_THEN_LOOP.format(ready=ready), name="ready.log")
    assert b.outcome == "crashed-while-serving"


def test_sglang_cli_and_diffusion_frames_are_sglangs_own(tmp_path: Path) -> None:
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "Traceback (most recent call last):",
        '  File "/opt/sglang/python/sglang/cli/main.py", line 26, in main',
        "    args.func(args, extra_argv)",
        '  File "/opt/sglang/python/sglang/multimodal_gen/__init__.py", line 5, in <module>',
        "    from sglang.multimodal_gen.runtime.entrypoints.diffusion_generator import DiffGenerator",
        '  File "/opt/sglang/python/sglang/multimodal_gen/runtime/pipelines/__init__.py",',
        "",
    ])
    assert "scheduler-crash" in analyze_text(tmp_path, text).fired()


def test_python_loggings_error_report_is_not_a_crash(tmp_path: Path) -> None:
    text = "\n".join([
        "--- Logging error ---",
        "Call stack:",
        f'  File "{SG}/entrypoints/engine.py", line 343, in sigquit_handler',
        "    logger.error(",
        "Message: 'Received sigquit from a child proces. It usually means the child failed.'",
        "Arguments: ()",
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert "scheduler-crash" not in a.fired() and a.root_cause is None


def test_one_warmup_prefill_per_dp_rank_is_not_traffic(tmp_path: Path) -> None:
    # DP attention: SGLang's warmup sends one request to each DP rank.
    line = ("[2025-12-26 23:02:39 DP{d} TP{d} EP{d}] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, "
            "token usage: 0.00, #running-req: 0, #queue-req: 0")
    warm = "\n".join(line.format(d=d) for d in range(4)) + "\n"
    a = analyze_text(tmp_path, warm)
    assert a.outcome is None  # warmup in flight, or already serving: the excerpt cannot tell
    again = warm + line.format(d=2) + "\n"
    assert analyze_text(tmp_path, again, name="again.log").outcome == "serving"


def test_a_cut_top_level_traceback_of_the_launching_program_guesses_no_root(tmp_path: Path) -> None:
    # `sglang generate` importing its runtime, cut inside a frame: the main process, not a server's.
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "Traceback (most recent call last):",
        '  File "/venv/bin/sglang", line 7, in <module>',
        "    sys.exit(main())",
        '  File "/opt/sglang/python/sglang/cli/main.py", line 26, in main',
        "    args.func(args, extra_argv)",
        '  File "/opt/sglang/python/sglang/multimodal_gen/__init__.py", line 5, in <module>',
        "    from sglang.multimodal_gen.runtime.entrypoints.diffusion_generator import DiffGenerator",
        '  File "/opt/sglang/python/sglang/multimodal_gen/runtime/pipelines/__init__.py",',
        "",
    ])
    a = analyze_text(tmp_path, text)
    f = next(f for f in a.all_findings() if f.name == "launcher-exception")
    assert str(f.severity) == "warning" and f.data["process"] == "main"
    assert "scheduler-crash" not in a.fired()
    assert a.root_cause is None and a.outcome == "crashed-at-startup"
    # Below a scheduler's entry it is the server's crash again.
    sched = text.replace('  File "/opt/sglang/python/sglang/cli/main.py", line 26, in main',
                         f'  File "{SG}/managers/scheduler.py", line 2546, in run_scheduler_process')
    b = analyze_text(tmp_path, sched, name="sched.log")
    assert b.root_cause is not None and b.root_cause.name == "scheduler-crash"


def test_an_answered_request_on_any_path_means_the_http_server_was_up(tmp_path: Path) -> None:
    # A `/metrics` 200 then SGLang's watchdog: the HTTP server was running (what `Uvicorn running`
    # says), so the attempt was ready, and a loop crash after it is not a start-up failure.
    text = "\n".join([  # noqa: FLY002 — one log line per item
        '[2025-07-11 17:40:04] INFO:     100.125.183.82:43204 - "GET /metrics HTTP/1.1" 200 OK',
        "[2025-07-11 17:40:14 TP2] Watchdog timeout (self.watchdog_timeout=300)",
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.outcome == "hung" and a.views.facts().get("ready") is True


def test_a_request_rejected_for_its_length_is_traffic(tmp_path: Path) -> None:
    text = "\n".join([  # noqa: FLY002 — one log line per item
        ("[2025-03-03 06:49:28 TP0] Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). "
         "Use a shorter input or enable --allow-auto-truncate."),
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.outcome == "serving" and a.views.facts().get("ready") is True


def test_a_start_up_that_ends_at_its_warmup_prefill_is_incomplete(tmp_path: Path) -> None:
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "[2025-12-26 23:01:10 TP0] Load weight begin. avail mem=78.12 GB",
        "[2025-12-26 23:02:30 TP0] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB",
        ("[2025-12-26 23:02:39 TP0] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, "
         "#running-req: 0, #queue-req: 0"),
        "",
    ])
    assert analyze_text(tmp_path, text).outcome == "incomplete"


def test_ctrl_c_after_serving_is_a_stop_not_a_crash(tmp_path: Path) -> None:
    text = "\n".join([  # noqa: FLY002 — one log line per item
        ("[2025-06-10 10:00:10 TP0] Decode batch. #running-req: 3, #token: 1520, token usage: 0.01, cuda graph: True, "
         "gen throughput (token/s): 120.33, #queue-req: 0"),
        "^CTraceback (most recent call last):",
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
        '  File "/opt/sglang/python/sglang/launch_server.py", line 14, in <module>',
        "    launch_server(server_args)",
        "KeyboardInterrupt",
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.outcome == "stopped" and a.root_cause is None


def test_a_crash_after_the_ready_marker_is_while_serving_whatever_its_cut_frames_say(tmp_path: Path) -> None:
    # Only the process entry frame survived (its exception looks raised right in it, as at start-up).
    text = "\n".join([  # noqa: FLY002 — one log line per item
        "[2025-06-10 10:00:10] The server is fired up and ready to roll!",
        "[2025-06-10 10:00:12 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        f'  File "{SG}/managers/scheduler.py", line 2500, in run_scheduler_process',
        "    scheduler.event_loop_normal()",
        "ValueError: bad value in a request",
        "",
    ])
    a = analyze_text(tmp_path, text)
    assert a.outcome == "crashed-while-serving"
    assert a.views.facts().get("ready") is True
