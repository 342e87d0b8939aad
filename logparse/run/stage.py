"""Where in a server's life a traceback was raised: start-up, serving, or unknown (from its frames)."""

from __future__ import annotations

from logparse.model.events import Traceback
from logparse.model.lazyre import lazy_compile

# Exception messages that only occur while a server starts (weights, KV pool sizing, imports).
_STARTUP_MESSAGES = lazy_compile(
    r"_scale'|k_scale|v_scale|Not enough memory\. Please try to increase --mem-fraction-static|"
    r"is not divisible by weight quantization|scheduler died during initialization|Initialization failed|"
    r"could not import|No module named|undefined symbol|Capture cuda graph failed|Capture .*graph failed"
)
# Frames whose presence places a traceback in server start-up or in the serving loop.
_STARTUP_FUNCS = frozenset({
    "__init__", "from_pretrained", "load_weights", "_bootstrap_scheduler", "load_weights_and_postprocess",
    "get_model", "init_model_worker", "init_cuda_graphs", "init_all_cuda_graphs", "load_model", "initialize",
    "init_memory_pool", "init_torch_distributed", "_launch_subprocesses", "wait_for_ready",
    "_wait_for_scheduler_ready", "launch_server", "_wait_and_warmup", "init_device_graphs",
    "init_prefill_cuda_graph", "capture", "profile_max_num_token", "init_distributed_environment",
    # The main process's argument processing runs before any server process exists.
    "prepare_server_args", "from_cli_args", "check_server_args",
    # CUDA-graph capture of one batch size (cuda_graph_runner, its piecewise and draft variants).
    "capture_one_batch_size",
    # 0.1.x: the router process builds its model workers here; its serving loop is loop_for_forward.
    "start_router_process",
    # A quantization method chosen, its weights created and post-processed as each layer is built
    # and loaded (sglang/srt/layers/quantization/*, every release that has them): model construction.
    "get_quant_method", "create_weights", "process_weights_after_loading",
})
_PROCESS_ENTRY_FUNCS = frozenset({
    "run_scheduler_process", "run_detokenizer_process", "run_data_parallel_controller_process",
})
_SERVING_FUNCS = frozenset({
    "event_loop_normal", "event_loop_overlap", "event_loop_pp", "run_batch", "forward_batch_generation",
    "process_input_requests", "loop_for_forward", "exposed_step", "forward_step", "process_batch_result",
    "handle_generate_request", "self_check_during_idle", "forward_decode_batch", "forward_prefill_batch",
    # The scheduler loop's batch building (0.3+ scheduler.py / schedule_batch.py), called only from the
    # event loop: a cut traceback that ends in one of them was raised in the request loop.
    "get_next_batch_to_run", "get_new_batch_prefill", "update_running_batch", "get_model_worker_batch",
    "prepare_for_extend", "prepare_for_decode",
})


def traceback_phase(tb: Traceback) -> str:
    """'startup', 'serving' or 'unknown', from the frames and the header."""
    if tb.process == "warmup" or (tb.process or "").endswith(" init"):
        return "startup"  # the warmup request, or a child's failed initialisation (`router init state: …`)
    funcs = [f.func for f in tb.frames if f.func]
    if any(f in _SERVING_FUNCS for f in funcs):
        return "serving"
    if any(f in _STARTUP_FUNCS for f in funcs):
        return "startup"
    # A child process builds its manager, then enters its loop: an exception raised in the
    # process function itself (the innermost frame, with no loop frame below) came before serving.
    if tb.exc_type and funcs and funcs[-1] in _PROCESS_ENTRY_FUNCS:
        return "startup"
    if funcs and funcs[-1] == "<module>":
        return "startup"
    messages = [tb.message, *(m for _, m in tb.chain)]
    if any(_STARTUP_MESSAGES.search(m or "") for m in messages):
        return "startup"
    return "unknown"


# The outermost frames of a program started from the command line: a console script's or a file's
# `<module>`, runpy's entry for `python -m …`.
_TOP_LEVEL_FUNCS = frozenset({"<module>", "_run_module_as_main", "_run_code"})


# SGLang's HTTP server launcher (`http_server.launch_server`, 0.4–0.5.x; `server.launch_server`
# before) runs only in the main process: a traceback whose outermost frame is it is the main
# process's (printed from the launcher's own frame, e.g. uvicorn.run failing).
_LAUNCHER_FILES = frozenset({"http_server.py", "server.py"})
# Entry functions of the server's child processes (any release): below them it is a child's.
_CHILD_ENTRY_FUNCS = _PROCESS_ENTRY_FUNCS | {"start_router_process", "start_detokenizer_process"}


def main_top_level(tb: Traceback) -> bool:
    """A traceback of the launching program's main thread that reached its top level: the outermost
    frame is module level (a script, runpy) or SGLang's HTTP server launcher, and no process header,
    rank tag, or server process's entry or loop frame says a child printed it. Such an exception
    ended the main program itself. (The one owner of this fact: the crash rule and the outcome
    both ask it.)"""
    funcs = [f.func for f in tb.frames if f.func]
    if tb.process or tb.rank or not funcs:
        return False
    outer = tb.frames[0]
    launcher = outer.func == "launch_server" and outer.path.replace("\\", "/").rsplit("/", 1)[-1] in _LAUNCHER_FILES
    if funcs[0] not in _TOP_LEVEL_FUNCS and not launcher:
        return False
    return not set(funcs) & (_SERVING_FUNCS | _CHILD_ENTRY_FUNCS)


# The entry frames of a `threading.Thread` (CPython's threading.py, every 3.x): the thread's bootstrap.
_THREAD_ENTRY_FUNCS = frozenset({"_bootstrap", "_bootstrap_inner"})


def thread_exception(tb: Traceback) -> bool:
    """An exception that ended a thread, not its process: the outermost frame is a thread's bootstrap
    (threading.py `_bootstrap_inner`), as threading.excepthook prints it. Python keeps the process
    running; only the thread's own code can end it (SGLang's threads that do send SIGQUIT, which
    shows as its own line)."""
    first = tb.frames[0] if tb.frames else None
    return (first is not None and first.func in _THREAD_ENTRY_FUNCS
            and first.path.replace("\\", "/").rsplit("/", 1)[-1] == "threading.py")
