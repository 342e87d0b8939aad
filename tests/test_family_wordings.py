"""Every wording of every message family a rule reads, in the envelope SGLang prints it in.

Each case is one wording of a diagnosis's family — taken from SGLang's source (the raise / logger
lines of server_args.py, model_runner.py, scheduler.py, memory_pool.py, cuda_graph_runner.py, …),
`shared/sglang-log-formats.md` §4–6, or the libraries SGLang runs on (torch, NCCL, CUDA, ROCm,
transformers, huggingface_hub, safetensors) — placed where it is raised: an argument check's
unprefixed main-process traceback, a scheduler's `Scheduler hit an exception:` traceback followed by
the parent's SIGQUIT line, or a prefixed log line. The diagnosis must be the root cause (or, for a
warning-level family, a finding); the near misses beside them — other families that share a word —
must not produce it. The rules are meant to recognise the family, not the one sentence a corpus log
happened to print.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import analyze_text

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"
TF = "/usr/local/lib/python3.12/dist-packages/transformers"
SERVER_ARGS = (
    "[2026-03-07 15:29:50] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', tp_size=2, "
    "mem_fraction_static=0.88)\n"
)
TP0 = "[2026-03-07 15:31:02 TP0] "
MAIN = "[2026-03-07 15:31:02] "
READY = MAIN + "The server is fired up and ready to roll!\n"
SIGQUIT = "\n" + MAIN + "Received sigquit from a child process. It usually means the child failed.\nKilled\n"


def _frames(frames: tuple[tuple[str, str], ...]) -> str:
    return "".join(f'  File "{SG}/{path}", line 100, in {func}\n    x = y()\n' for path, func in frames)


def args_check(exc: str, func: str = "__post_init__", *, after_args: bool = False) -> str:
    """An argument check raised in the main process: a bare traceback through ServerArgs (printed
    after the `server_args=` line for the consistency checks, before it for post-processing)."""
    return (
        (SERVER_ARGS if after_args else "")
        + "Traceback (most recent call last):\n"
        + '  File "/usr/local/bin/sglang", line 8, in <module>\n    sys.exit(main())\n'
        + f'  File "{SG}/server_args.py", line 4101, in prepare_server_args\n'
        + "    return ServerArgs.from_cli_args(raw_args)\n"
        + '  File "<string>", line 300, in __init__\n'
        + f'  File "{SG}/server_args.py", line 640, in {func}\n    self._handle_x()\n'
        + exc
        + "\n"
    )


def in_scheduler(exc: str, *frames: tuple[str, str]) -> str:
    """An exception raised inside a scheduler while it starts, and the parent's reaction."""
    return (
        SERVER_ARGS
        + TP0
        + "Scheduler hit an exception: Traceback (most recent call last):\n"
        + f'  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process\n'
        + "    scheduler = Scheduler(\n"
        + _frames(frames or (("model_executor/model_runner.py", "__init__"),))
        + exc
        + "\n"
        + SIGQUIT
    )


def in_main(exc: str, *frames: tuple[str, str]) -> str:
    """An exception in the main (HTTP server / engine) process after the arguments were printed."""
    return (
        SERVER_ARGS
        + "Traceback (most recent call last):\n"
        + _frames(frames or (("entrypoints/http_server.py", "launch_server"),))
        + exc
        + "\n"
    )


@dataclass(frozen=True)
class Case:
    id: str
    diagnosis: str
    log: str
    # "root": the diagnosis is the root cause; "finding": a (warning-level) finding of it exists;
    # "absent": a near miss that must not produce it at all.
    expect: str = "root"


LOAD = ("model_executor/model_runner.py", "load_model")
GRAPH = ("model_executor/cuda_graph_runner.py", "__init__")
POOL = ("model_executor/model_runner.py", "init_memory_pool")
DIST = ("distributed/parallel_state.py", "init_distributed_environment")
CONFIG = ("hf_transformers_utils.py", "get_config")
WEIGHTS = ("model_loader/weight_utils.py", "safetensors_weights_iterator")

MEMORY = [
    # cuda-oom: torch's caching allocator (≥ 2.2, 2.1's 'capacty', < 2.2's parenthesised numbers)
    Case("oom-torch22", "cuda-oom", in_scheduler(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
        "of 79.11 GiB of which 3.50 MiB is free.", LOAD)),
    Case("oom-torch21", "cuda-oom", in_scheduler(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty "
        "of 6.00 GiB of which 0 bytes is free.")),
    Case("oom-torch-old", "cuda-oom", in_scheduler(
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.35 GiB total capacity; 75.12 GiB "
        "already allocated; 1.02 GiB free; 76.90 GiB reserved in total by PyTorch)")),
    Case("oom-thc", "cuda-oom", in_scheduler(
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25")),
    Case("oom-hip-allocator", "cuda-oom", in_scheduler(
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "191.98 GiB of which 1.02 GiB is free.")),
    Case("oom-cuda-runtime", "cuda-oom", in_scheduler(
        "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some "
        "other API call, so the stacktrace below might be incorrect.")),
    Case("oom-cuda-driver", "cuda-oom", in_scheduler("RuntimeError: CUDA driver error: out of memory")),
    Case("oom-hip-runtime", "cuda-oom", in_scheduler("RuntimeError: HIP error: out of memory")),
    Case("oom-triton", "cuda-oom", in_scheduler("RuntimeError: Triton Error [CUDA]: out of memory")),
    Case("oom-npu", "cuda-oom", in_scheduler(
        "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity; 58.10 GiB "
        "already allocated; 58.10 GiB current active; 1.02 GiB free)")),
    Case("oom-xpu", "cuda-oom", in_scheduler(
        "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "64.00 GiB.")),
    Case("oom-cublas", "cuda-oom", in_scheduler(
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")),
    Case("oom-cudnn", "cuda-oom", in_scheduler("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED")),
    Case("oom-cuda-enum", "cuda-oom", in_scheduler("RuntimeError: CUDA error: cudaErrorMemoryAllocation")),
    Case("oom-graph-capture", "cuda-oom", in_scheduler(
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a total "
        "capacity of 95.00 GiB of which 100.00 MiB is free.\nPossible solutions:\n"
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
        "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)", GRAPH)),
    Case("oom-prefill-graph", "cuda-oom", in_scheduler(
        "RuntimeError: Capture prefill CUDA graph failed: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 "
        "has a total capacity of 79.11 GiB of which 3.50 MiB is free.\nFail when using backend: full for prefill "
        "runner.")),
    # near misses: SGLang's own token / pool sizing and host memory are other diagnoses
    Case("oom-not-kv-pool", "cuda-oom", in_scheduler(
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", POOL), "absent"),
    Case("oom-not-host", "cuda-oom", in_scheduler("OSError: [Errno 12] Cannot allocate memory"), "absent"),
    Case("oom-not-triton-arg", "cuda-oom", in_scheduler("RuntimeError: Triton Error [CUDA]: invalid argument"),
         "absent"),
    Case("oom-not-batch", "cuda-oom", SERVER_ARGS + READY + TP0
         + "Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.5000 -> 0.8000\n", "absent"),
    # kv-pool-no-room: every release's wording of the KV-pool budget check
    Case("kv-pool-0.1", "kv-pool-no-room", in_scheduler(
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", POOL)),
    Case("kv-pool-0.5.4", "kv-pool-no-room", in_scheduler(
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
        "self.server_args.mem_fraction_static=0.88", POOL)),
    Case("kv-pool-0.5.10", "kv-pool-no-room", in_scheduler(
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
        "mem_fraction_static=0.88", ("mem_cache/pool_configurator.py", "__post_init__"))),
    Case("kv-pool-main", "kv-pool-no-room", in_scheduler(
        "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.9.")),
    Case("kv-pool-typo", "kv-pool-no-room", in_scheduler(
        "RuntimeError: Not enought memory. Please try to increase --mem-fraction-static.")),
    Case("kv-pool-profiled", "kv-pool-no-room", SERVER_ARGS + TP0
         + "max_total_tokens=200000 is larger than the profiled value 123456. Use the profiled value instead.\n",
         "finding"),
    Case("kv-pool-not-oom", "kv-pool-no-room", in_scheduler(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a total capacity of "
        "95.00 GiB of which 100.00 MiB is free.", GRAPH), "absent"),
    # host-oom
    Case("host-enomem", "host-oom", in_scheduler("OSError: [Errno 12] Cannot allocate memory")),
    Case("host-hicache", "host-oom", in_scheduler(
        "ValueError: Not enough host memory available. Requesting 200.00 GB but only have 120.50 GB free. Please "
        "reduce the size of the hierarchical cache.", ("mem_cache/memory_pool_host.py", "__init__"))),
    # kv-cache-exhausted (warning level: a finding, not a root cause)
    Case("retract-old", "kv-cache-exhausted", SERVER_ARGS + READY + TP0
         + "Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.5000 -> 0.8000\n", "finding"),
    Case("retract-new", "kv-cache-exhausted", SERVER_ARGS + READY + TP0
         + "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.4000 -> 0.6000\n",
         "finding"),
    Case("retract-aborted", "kv-cache-exhausted", SERVER_ARGS + READY + TP0
         + "KV cache pool is full. Retract requests. #retracted_reqs: 2, #aborted_retracted_reqs: 0, "
         "#new_token_ratio: 0.5000 -> 0.8000\n", "finding"),
    Case("batch-oom-decode-0.1", "kv-cache-exhausted", SERVER_ARGS + READY
         + "Decode out of memory. This should never happen.\n", "finding"),
    Case("batch-oom-prefill-0.1", "kv-cache-exhausted", SERVER_ARGS + READY
         + "Prefill out of memory. This should never happen.\n", "finding"),
    Case("batch-oom-prefill", "kv-cache-exhausted", SERVER_ARGS + READY + TP0
         + "Prefill out of memory. Try to lower your batch size.\nTry to allocate 8192 tokens.\n", "finding"),
    # memory-leak-detected, mamba-pool-exhausted
    Case("leak-kv-0.1", "memory-leak-detected", SERVER_ARGS + READY + TP0 + "KV cache pool leak detected!\n",
         "finding"),
    Case("leak-pool", "memory-leak-detected", SERVER_ARGS + READY + TP0 + "Memory pool leak detected!\n",
         "finding"),
    Case("leak-userwarning", "memory-leak-detected", SERVER_ARGS + READY
         + f"{SG}/managers/tp_worker.py:300: UserWarning: KV cache pool leak detected!available_size=123, "
         "self.max_total_num_tokens=456\n  warnings.warn(\n", "finding"),
    Case("leak-idle", "memory-leak-detected", in_scheduler(
        "ValueError: token_to_kv_pool_allocator memory leak detected! self.max_total_num_tokens=396701, "
        "available_size=6016, evictable_size=390685, protected_size=0")),
    Case("leak-busy", "memory-leak-detected", in_scheduler(
        "AssertionError: Mem Leak Detected! total_tokens=1000 vs self.max_total_num_tokens=1024")),
    Case("mamba-full", "mamba-pool-exhausted", in_scheduler(
        "AssertionError: Not enough space for mamba cache, try to increase --mamba-full-memory-ratio or "
        "--max-mamba-cache-size. mid=None, self.mamba_pool.size=102, self.mamba_pool.available_size()=0, "
        "len(reqs)=4")),
]

PORT_LINE = (MAIN + "Port is already in use. dist_init_port=5000 port_base=30000 detokenizer_port=30001 "
             "nccl_port=30002 scheduler_input_port=30003\n")

SERVER = [
    # port-in-use: uvicorn, ZMQ, torch's TCPStore (old and new c10d wording), SGLang's own checks
    Case("port-errno98", "port-in-use", in_main("OSError: [Errno 98] Address already in use")),
    Case("port-errno48", "port-in-use", in_main("OSError: [Errno 48] Address already in use")),
    Case("port-uvicorn", "port-in-use", SERVER_ARGS + "ERROR:    [Errno 98] error while attempting to bind on "
         "address ('0.0.0.0', 30000): address already in use\n"),
    Case("port-zmq", "port-in-use", in_main(
        "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:5757')", ("utils.py", "get_zmq_socket"))),
    Case("port-sglang-0.5.9", "port-in-use", in_main("OSError: [Errno 98] Address already in use").replace(
        "Traceback", PORT_LINE + "Traceback", 1)),
    Case("port-bootstrap-0.5.23", "port-in-use", in_main(
        "RuntimeError: engine_info_bootstrap_port 8998 is already in use. When running multiple instances on the "
        "same node, each instance must use a different --engine-info-bootstrap-port.")),
    Case("port-c10d-new", "port-in-use", in_scheduler(
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 5000, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use", DIST)),
    Case("port-c10d-old", "port-in-use", in_scheduler(
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "The server socket has failed to bind to [::]:5000 (errno: 98 - Address already in use). The server "
        "socket has failed to bind to 0.0.0.0:5000 (errno: 98 - Address already in use).", DIST)),
    # invalid-server-args: post-processing (no server_args= line yet) and consistency checks (after it)
    Case("args-mutually-exclusive", "invalid-server-args", args_check(
        "ValueError: The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and "
        "cannot be used at the same time. Please use only one of them.")),
    Case("args-chunked-page", "invalid-server-args", args_check(
        "AssertionError: chunked_prefill_size must be divisible by page_size", "check_server_args", after_args=True)),
    Case("args-nodes", "invalid-server-args", args_check(
        "AssertionError: tp_size must be divisible by number of nodes", "check_server_args", after_args=True)),
    Case("args-multinode-dp", "invalid-server-args", args_check(
        "AssertionError: multi-node data parallel is not supported unless dp attention!", "check_server_args",
        after_args=True)),
    Case("args-gpu-id", "invalid-server-args", args_check(
        "AssertionError: base_gpu_id must be non-negative", "check_server_args", after_args=True)),
    Case("args-bare-assert", "invalid-server-args", args_check("AssertionError", "_handle_data_parallelism")),
    Case("args-dp-lm-head", "invalid-server-args", args_check(
        "AssertionError: Please enable dp attention when setting enable_dp_lm_head. ", "_handle_data_parallelism")),
    Case("args-swa-ratio", "invalid-server-args", args_check(
        "ValueError: --swa-full-tokens-ratio should be in range (0, 1.0].")),
    Case("args-tokenizer-batching", "invalid-server-args", args_check(
        "ValueError: Cannot enable both --enable-tokenizer-batch-encode and --enable-dynamic-batch-tokenizer. "
        "Please choose one tokenizer batching approach.")),
    Case("args-served-name", "invalid-server-args", args_check(
        "AssertionError: served_model_name cannot contain a colon (':') character. The colon is reserved for the "
        "'model:adapter' syntax used in LoRA adapter specification. Invalid value: 'a:b'", "check_server_args",
        after_args=True)),
    Case("args-dense-tp", "invalid-server-args", args_check(
        "AssertionError: moe_dense_tp_size only support 1 and None currently", "check_server_args", after_args=True)),
    Case("args-dist-init-addr", "invalid-server-args", args_check(
        "AssertionError: please provide --dist-init-addr as host:port of head node")),
    Case("args-attn-dp-0.5.23", "invalid-server-args", args_check(
        "ValueError: --dp-size 2 with --attn-dp-size 2: data-parallel replicas combined with attention data "
        "parallelism are not supported.")),
    Case("args-topology-0.5.23", "invalid-server-args", args_check(
        "ValueError: Invalid attention topology: tp_size=8, attn_dp_size=3, attn_cp_size=1.")),
    Case("args-context-length", "invalid-server-args", args_check(
        "ValueError: Warning: User-specified context_length (200000) is greater than the derived context_length "
        "(131072). This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length "
        "may differ from max_position_embeddings in the model's config. To allow overriding this maximum, set the "
        "env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "_derive_context_length")),
    Case("args-capture-bs", "invalid-server-args", args_check("AssertionError: capture_bs=[]")),
    Case("args-prefill-context-0.5.23", "invalid-server-args", args_check(
        "ValueError: --cuda-graph-prefill-max-context must be a positive integer")),
    Case("args-tbo-a2a", "invalid-server-args", args_check(
        "ValueError: When enabling two batch overlap, moe_a2a_backend cannot be 'none'.", "check_server_args",
        after_args=True)),
    Case("args-ep-moe-dp", "invalid-server-args", args_check(
        "AssertionError: ep_size * moe_dp_size must be less than or equal to tp_size")),
    Case("args-quant-unknown", "invalid-server-args", args_check(
        "ValueError: Unknown quantization method: fp9. Must be one of ['fp8', 'awq'].", "_verify_quantization")),
    Case("args-argparse-type", "invalid-server-args", "usage: launch_server.py [-h] --model-path MODEL_PATH\n"
         "launch_server.py: error: argument --tp-size: invalid int value: 'two'\n"),
    Case("args-argparse-unknown", "invalid-server-args", "usage: sglang serve [-h] --model-path MODEL_PATH\n"
         "sglang serve: error: unrecognized arguments: --foo\n"),
    # model-load-failure: hub auth, missing files, unknown model_type, architecture, versions, damaged files
    Case("model-gated", "model-load-failure", in_scheduler(
        "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-abc)\n\nCannot access gated "
        "repo for url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.",
        ("configs/model_config.py", "__init__"))),
    Case("model-gated-transformers", "model-load-failure", in_main(
        "OSError: You are trying to access a gated repo.\nMake sure to have access to it at "
        "https://huggingface.co/meta-llama/Llama-3.1-8B.\n401 Client Error. (Request ID: Root=1-x)", CONFIG)),
    Case("model-not-identifier", "model-load-failure", in_main(
        "OSError: Qwen/Qwen9 is not a local folder and is not a valid model identifier listed on "
        "'https://huggingface.co/models'", CONFIG)),
    Case("model-no-config", "model-load-failure", in_main(
        "OSError: /models/x does not appear to have a file named config.json. Checkout "
        "'https://huggingface.co//models/x/tree/None' for available files.", CONFIG)),
    Case("model-no-shard", "model-load-failure", in_scheduler(
        "FileNotFoundError: [Errno 2] No such file or directory: '/models/llama/model-00001-of-00004.safetensors'",
        LOAD, ("model_loader/loader.py", "load_weights"))),
    Case("model-offline", "model-load-failure", in_scheduler(
        "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the "
        "Hub and we cannot find the requested files in the local cache.",
        ("model_loader/weight_utils.py", "download_weights_from_hf"))),
    Case("model-serve-cli", "model-load-failure", in_main(
        "ValueError: Could not find model locally at /models/x and failed to download model_index.json/config.json "
        "from /models/x: 404", ("cli/serve.py", "serve"))),
    Case("model-type-new", "model-load-failure", in_main(
        "ValueError: The checkpoint you are trying to load has model type `qwen3_next` but Transformers does not "
        "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
        "version of Transformers is out of date.", CONFIG)),
    Case("model-type-keyerror", "model-load-failure", in_main(
        f'  File "{TF}/models/auto/configuration_auto.py", line 1017, in from_pretrained\n'
        '    config_class = CONFIG_MAPPING[config_dict["model_type"]]\n'
        f'  File "{TF}/models/auto/configuration_auto.py", line 719, in __getitem__\n'
        "    raise KeyError(key)\nKeyError: 'qwen3_moe'", CONFIG)),
    Case("model-arch", "model-load-failure", in_scheduler(
        "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: "
        "dict_keys(['LlamaForCausalLM'])", ("models/registry.py", "resolve_model_cls"))),
    Case("model-transformers-version", "model-load-failure", in_main(
        "ValueError: Transformers version 4.57.1 is not supported for model zai-org/GLM-5 or model type "
        "glm_moe_dsa. Please upgrade transformers to >= 5.0.0.", ("configs/model_config.py", "__init__"))),
    Case("model-safetensors-header", "model-load-failure", in_scheduler(
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge", LOAD, WEIGHTS)),
    Case("model-safetensors-incomplete", "model-load-failure", in_scheduler(
        "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer", LOAD, WEIGHTS)),
    Case("model-torch-zip", "model-load-failure", in_scheduler(
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory", LOAD,
        ("model_loader/weight_utils.py", "pt_weights_iterator"))),
    # the hub unreachable or refusing (network, proxy, rate limit), an incomplete download, transformers too old
    Case("model-hub-offline", "model-load-failure", in_main(
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached "
        "files and it looks like Qwen/Qwen3-8B is not the path to a directory containing a file named config.json.\n"
        "Checkout your internet connection or see how to run the library in offline mode at "
        "'https://huggingface.co/docs/transformers/installation#offline-mode'.", CONFIG)),
    Case("model-hub-network", "model-load-failure", in_main(
        "requests.exceptions.ConnectionError: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /api/models/Qwen/Qwen3-8B/revision/main (Caused by NewConnectionError("
        "'<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno 101] "
        "Network is unreachable'))\"), '(Request ID: 1)')", ("model_loader/weight_utils.py", "download_weights_from_hf"))),
    Case("model-hub-rate-limit", "model-load-failure", in_main(
        "huggingface_hub.errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: "
        "https://huggingface.co/api/models/Qwen/Qwen3-8B", CONFIG)),
    Case("model-download-incomplete", "model-load-failure", in_main(
        "OSError: Consistency check failed: file should be of size 4976698672 but has size 1073741824 "
        "(model-00001-of-00004.safetensors).\nWe are sorry for the inconvenience. Please retry with "
        "`force_download=True`.", ("model_loader/weight_utils.py", "download_weights_from_hf"))),
    Case("model-transformers-import", "model-load-failure", in_main(
        "ImportError: cannot import name 'Qwen3VLConfig' from 'transformers' "
        "(/usr/local/lib/python3.12/dist-packages/transformers/__init__.py)", ("configs/qwen3_vl.py", "<module>"))),
    Case("model-tokenizer-class", "model-load-failure", in_main(
        "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported.",
        ("hf_transformers_utils.py", "get_tokenizer"))),
    Case("model-not-local-warmup", "model-load-failure", SERVER_ARGS + MAIN
         + "Initialization failed. warmup error: Traceback (most recent call last):\n"
         f'  File "{SG}/entrypoints/http_server.py", line 900, in _wait_and_warmup\n    res = requests.post(\n'
         "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=30000): Max retries "
         "exceeded with url: /generate\n", "absent"),
    Case("model-not-ignored-import", "model-load-failure", SERVER_ARGS + TP0
         + "Ignore import error when loading sglang.srt.models.glmasr: cannot import name 'GlmAsrConfig' from "
         "'transformers' (/usr/local/lib/python3.12/dist-packages/transformers/__init__.py)\n" + TP0
         + "Load weight begin. avail mem=78.50 GB\n", "absent"),
    Case("model-not-args", "model-load-failure", args_check(
        "AssertionError: chunked_prefill_size must be divisible by page_size", "check_server_args", after_args=True),
         "absent"),
    # health-check-failed, watchdog-timeout (every process's watchdog, old and new wording)
    Case("health", "health-check-failed", SERVER_ARGS + READY + MAIN
         + "Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start "
         "time: 15:40:02. last_heartbeat time: 15:39:11\n"),
    Case("watchdog-scheduler", "watchdog-timeout", SERVER_ARGS + READY + TP0
         + "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n"),
    Case("watchdog-old", "watchdog-timeout", SERVER_ARGS + READY + TP0
         + "Watchdog timeout (self.watchdog_timeout=300)\n"),
    Case("watchdog-tokenizer", "watchdog-timeout", SERVER_ARGS + READY + MAIN
         + "TokenizerManager watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n"),
    Case("watchdog-detokenizer", "watchdog-timeout", SERVER_ARGS + READY + TP0
         + "DetokenizerManager watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n"),
]

PYNCCL = ("distributed/device_communicators/pynccl.py", "__init__")
CUSTOM_AR = ("distributed/device_communicators/custom_all_reduce.py", "__init__")
NCCL_WARN = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "


def while_serving(exc: str) -> str:
    """An exception a scheduler raised in its event loop after the server was ready."""
    return (
        SERVER_ARGS + READY
        + "[2026-03-07 15:35:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        + f'  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process\n'
        + "    scheduler.event_loop_overlap()\n"
        + _frames((("managers/scheduler.py", "event_loop_overlap"), ("model_executor/model_runner.py", "forward")))
        + exc + "\n\n[2026-03-07 15:35:03] SIGQUIT received. signum=3, frame=None. It usually means one child "
        "failed.\n"
    )


DISTRIBUTED = [
    # nccl-error: torch's c10d wrapper (one ncclResult each) and SGLang's PyNccl wrapper (old and new)
    Case("nccl-system", "nccl-error", in_scheduler(
        NCCL_WARN + "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
        "Last error:\nsocketStartConnect: Connect to 10.0.0.2<43215> failed : Software caused connection abort",
        DIST)),
    Case("nccl-internal", "nccl-error", in_scheduler(
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
        "internal error - please report this issue to the NCCL developers, NCCL version 2.26.2\n"
        "ncclInternalError: Internal check failed.", DIST)),
    Case("nccl-usage", "nccl-error", in_scheduler(
        NCCL_WARN + "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", DIST)),
    Case("nccl-remote", "nccl-error", in_scheduler(
        NCCL_WARN + "remote process exited or there was a network error, NCCL version 2.21.5\n"
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        DIST)),
    Case("nccl-argument", "nccl-error", in_scheduler(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:77, "
        "invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.3\n"
        "ncclInvalidArgument: Invalid value for an argument.", DIST)),
    Case("pynccl-cuda", "nccl-error", in_scheduler(
        "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)", PYNCCL)),
    Case("pynccl-system", "nccl-error", in_scheduler(
        "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)", PYNCCL)),
    Case("pynccl-numbered", "nccl-error", in_scheduler(
        "RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)", PYNCCL)),
    Case("rccl", "nccl-error", in_scheduler("RuntimeError: RCCL error: unhandled system error", PYNCCL)),
    Case("nccl-aborted", "nccl-error", while_serving("RuntimeError: NCCL communicator was aborted on rank 1.")),
    # the Gloo (CPU) group created beside NCCL: torch's C++ log line before the cut scheduler traceback
    Case("gloo-full-mesh", "nccl-error", SERVER_ARGS + TP0 + "Init torch distributed begin.\n"
         "[rank10]:[E130 18:11:34.707542570 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
         "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n"
         + TP0 + "Scheduler hit an exception: Traceback (most recent call last):\n"
         f'  File "{SG}/managers/scheduler.py", line 1773, in run_scheduler_process\n'
         "    scheduler = Scheduler(server_args, port_args,\n"),
    Case("gloo-interface", "nccl-error", in_scheduler(
        "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
        "to find address for: eth0", DIST)),
    # a peer that is gone while the communicator is set up is the peer's failure, not this rank's
    Case("nccl-unique-id", "nccl-error", in_scheduler(
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from "
        "[0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", DIST),
         "absent"),
    # nccl-timeout: the watchdog line (torch ≥ 2.2 and older), its C++ terminate, a Python DistBackendError
    Case("watchdog-torch22", "nccl-timeout", SERVER_ARGS + READY
         + "[rank1]:[E307 15:45:02.123456789 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
         "operation timeout: WorkNCCL(SeqNum=123, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
         "for 600001 milliseconds before timing out.\n"),
    Case("watchdog-torch-old", "nccl-timeout", SERVER_ARGS + READY
         + "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=123, "
         "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n"),
    Case("watchdog-terminate", "nccl-timeout", SERVER_ARGS + READY
         + "terminate called after throwing an instance of 'c10::DistBackendError'\n  what():  [PG ID 0 PG GUID "
         "0(default_pg) Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLGATHER, NumelIn=1, NumelOut=8, "
         "Timeout(ms)=600000) ran for 600087 milliseconds before timing out.\n"),
    Case("watchdog-python", "nccl-timeout", while_serving(
        "torch.distributed.DistBackendError: [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600030 "
        "milliseconds before timing out.")),
    # custom-allreduce-unavailable: the peer-access failure (error) and SGLang's disabling notices
    Case("car-peer-access", "custom-allreduce-unavailable", in_scheduler(
        "RuntimeError: CUDA error: peer access is not supported between these two devices", CUSTOM_AR)),
    Case("car-peer-enum", "custom-allreduce-unavailable", in_scheduler(
        "RuntimeError: CUDA error: cudaErrorPeerAccessUnsupported: peer access is not supported between these two "
        "devices", CUSTOM_AR)),
    Case("car-peer-exhausted", "custom-allreduce-unavailable", in_scheduler(
        "RuntimeError: CUDA error: peer mapping resources exhausted", CUSTOM_AR)),
    Case("car-pcie", "custom-allreduce-unavailable", SERVER_ARGS + TP0
         + "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence "
         "this warning, specify disable_custom_all_reduce=True explicitly.\n", "finding"),
    Case("car-no-p2p", "custom-allreduce-unavailable", SERVER_ARGS + TP0
         + "Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To "
         "silence this warning, specify disable_custom_all_reduce=True explicitly.\n", "finding"),
    # other-rank-failed
    Case("gloo-barrier", "other-rank-failed", SERVER_ARGS
         + "[rank3]:[E307 15:45:02.1 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but "
         "received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n",
         "finding"),
    Case("peer-not-loaded", "other-rank-failed", in_scheduler(
        "RuntimeError: TP rank 1 could finish the model loading, but there are other ranks that didn't finish "
        "loading. It is likely due to unexpected failures (e.g., OOM) or a slow node."), "finding"),
    Case("peer-unique-id", "other-rank-failed", in_scheduler(
        "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from "
        "[0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", DIST),
         "finding"),
    # the rendezvous store's server (rank 0) timing out on ranks that never joined (OpenRLHF#1040's wording)
    Case("store-clients-missing", "other-rank-failed", in_scheduler(
        "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/3 clients joined.",
        DIST), "finding"),
]


def spec_args(exc: str, func: str = "_handle_speculative_decoding", *, after_args: bool = False) -> str:
    return args_check(exc, func, after_args=after_args)


SPECULATIVE = [
    Case("spec-v2-topk", "spec-v2-topk-conflict", spec_args(
        "ValueError: Spec v2 currently only supports topk = 1 for speculative decoding.")),
    *(Case(f"spec-args-{i}", "spec-config-invalid", spec_args(msg)) for i, msg in enumerate([
        "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for "
        "paged attention backends. This combination is only supported for the 'flashinfer' backend.",
        "ValueError: speculative_eagle_topk(4) > 1 with page_size(16) > 1 is unstable and produces incorrect results "
        "for paged attention backends. This combination is only supported for the 'flashinfer' backend.",
        "ValueError: speculative_eagle_topk > 1 with page_size > 1 is only supported on ['flashinfer', 'fa3']; got "
        "attention_backend='triton'. Use page_size == 1 or one of those backends.",
        "ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.",
        "ValueError: Currently standalone speculative decoding does not support dp attention.",
        "ValueError: Currently ngram speculative decoding does not support dp attention.",
        "ValueError: Ngram speculative decoding only supports CUDA device.",
        "ValueError: Ngram speculative decoding only supports CUDA, CPU, or XPU devices.",
        "AssertionError: Currently speculative MoE runner backend cannot be flashinfer_trtllm for risk in some draft "
        "models.",
        "AssertionError: Currently speculative MoE runner backend doesn't support flashinfer_trtllm, please use "
        "triton or auto backend for speculative moe runner instead.",
        "ValueError: Invalid configuration: 'deep_gemm' speculative MoE runner backend with 'deepep' a2a backend "
        "requires expert parallelism (ep_size > 1). Current ep_size is 1. Please set --ep-size > 1 (e.g., --ep-size "
        "8) to use this configuration, or change --speculative-moe-a2a-backend to 'none' if expert parallelism is "
        "not available.",
        "AssertionError",
        "AssertionError: Speculative decoding is currently not supported with Flex Attention backend",
        "ValueError: Currently LoRA is only compatible with NGRAM speculative decoding.",
        "ValueError: Spec v2 and decode offload kv cache are incompatible and cannot be enabled together.",
        "ValueError: --disaggregation-decode-enable-radix-cache is incompatible with speculative decoding "
        "(--speculative-algorithm EAGLE)",
        "ValueError: --speculative-use-block-verification only supports EAGLE / EAGLE3 / NEXTN / DFLASH / DSPARK.",
        "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path.",
        "ValueError: --speculative-use-rejection-sampling requires --speculative-eagle-topk=1.",
        "ValueError: MTP requires --speculative-eagle-topk 1.",
        "ValueError: MTP verification width must equal draft steps + 1.",
        "ValueError: --speculative-num-steps=7 is not in the adaptive config candidate_steps [1, 3, 5]. Pass one of "
        "those values.",
        "ValueError: Gemma4AssistantForCausalLM draft requires --speculative-algorithm NEXTN or EAGLE; EAGLE3 is not "
        "supported for this draft architecture.",
    ])),
    Case("spec-mixed-chunk", "spec-config-invalid", spec_args(
        "AssertionError: enable_mixed_chunk is required for speculative decoding", "check_server_args",
        after_args=True)),
    Case("spec-pp", "spec-config-invalid", spec_args(
        "AssertionError: Pipeline parallelism is not compatible with overlap schedule, speculative decoding, mixed "
        "chunked prefill.", "check_server_args", after_args=True)),
    Case("spec-args-not-draft", "spec-draft-load-failure", spec_args(
        "AssertionError: Currently speculative MoE runner backend cannot be flashinfer_trtllm for risk in some draft "
        "models."), "absent"),
    Case("spec-mamba-radix", "spec-mamba-extra-buffer", spec_args(
        "ValueError: Speculative decoding for Qwen3NextForCausalLM is not compatible with radix cache when using "
        "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use "
        "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1.", "_handle_mamba_radix_cache")),
    # the mamba / radix-cache strategy checks of hybrid models (0.5.8–0.5.11; 0.5.23 renamed the flag)
    *(Case(f"mamba-args-{i}", "spec-mamba-extra-buffer", spec_args(msg, "_handle_mamba_radix_cache"))
      for i, msg in enumerate([
          "ValueError: mamba extra_buffer is not compatible with --disable-radix-cache Overlap scheduling is already "
          "supported with no_buffer + disable_radix_cache. Please use --mamba-scheduler-strategy no_buffer instead.",
          "ValueError: FlashInfer GDN decode (--linear-attn-decode-backend flashinfer) is not compatible with "
          "--mamba-scheduler-strategy no_buffer. Please use --mamba-scheduler-strategy extra_buffer instead. See "
          "https://github.com/sgl-project/sglang/issues/20791",
          "AssertionError: mamba extra_buffer is not supported for Qwen3NextForCausalLM model",
          "AssertionError: Mamba extra_buffer is only supported on CUDA devices with FLA backend",
          "AssertionError: mamba_track_interval 64 must be greater than or equal to speculative_num_draft_tokens 128",
          "AssertionError: mamba_track_interval 64 must be divisible by page_size 48",
          "AssertionError: For SSM models with extra buffer, either FLA_CHUNK_SIZE or page_size must be divisible by "
          "the other, got FLA_CHUNK_SIZE=64, self.page_size=48",
          "AssertionError: extra_buffer is not supported for NemotronHForCausalLM; use no_buffer.",
          "AssertionError: extra_buffer requires platform support for Mamba cache state snapshots.",
          "AssertionError: extra_buffer_lazy unsupported under PD disaggregation; use --mamba-radix-cache-strategy "
          "extra_buffer.",
          "AssertionError: no_buffer only supports page_size=1.",
          "AssertionError: no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.",
          "AssertionError: no_buffer do not support trtllm_mha attention backend.",
      ])),
    Case("draft-arch", "spec-draft-load-failure", in_scheduler(
        "ValueError: Model architectures ['FooEagle'] are not supported for now.",
        ("speculative/eagle_worker.py", "__init__"), LOAD)),
    # an EAGLE3 head's own parameter names ('midlayer.…', 'd2t' / 't2d') in a weight loader's KeyError
    Case("draft-eagle3-weights", "spec-draft-load-failure", in_scheduler(
        "KeyError: 'midlayer.self_attn.qkv_proj.weight'", LOAD, ("model_loader/loader.py", "load_model"),
        ("models/qwen3.py", "load_weights"))),
    Case("draft-eagle3-d2t", "spec-draft-load-failure", in_scheduler(
        "KeyError: 'd2t'", LOAD, ("model_loader/loader.py", "load_model"), ("models/llama.py", "load_weights"))),
    Case("draft-not-target-key", "spec-draft-load-failure", in_scheduler(
        "KeyError: 'model.layers.0.mlp.experts.w2_weight_scale'", LOAD, ("models/deepseek_v2.py", "load_weights")),
         "absent"),
    Case("draft-graph", "spec-draft-load-failure", in_scheduler(
        "Exception: Capture cuda graph failed: The size of tensor a (8) must match the size of tensor b (4) at "
        "non-singleton dimension 0", ("speculative/eagle_worker.py", "init_cuda_graphs"),
        ("speculative/eagle_draft_cuda_graph_runner.py", "__init__"))),
]


def attn_args(exc: str, func: str = "_handle_attention_backend_compatibility") -> str:
    return args_check(exc, func)


QUANT = ("layers/quantization/fp8.py", "create_weights")
FP8_UTILS = ("layers/quantization/fp8_utils.py", "dispatch")

KERNELS = [
    # unsupported-gpu-arch: backend checks against the GPU (args) and kernels that need another SM (S)
    *(Case(f"arch-args-{i}", "unsupported-gpu-arch", attn_args(msg)) for i, msg in enumerate([
        "ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different "
        "backend.",
        "ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.",
        "ValueError: TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and (SM120) "
        "GPUs. Please use a different decode backend.",
        "ValueError: CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.",
        "AssertionError: triton, trtllm_mha, fa4, or flashinfer backend are the only supported backends on Blackwell "
        "GPUs for hybrid GDN models, use --attention-backend triton to specify the backend.",
        "AssertionError: Only {'trtllm_mha', 'triton', 'fa4'} backends are supported on Blackwell GPUs for hybrid "
        "GDN models. Got attention_backend=flashinfer.",
    ])),
    Case("arch-lone-assertion", "unsupported-gpu-arch", "AssertionError: Only {'trtllm_mha', 'triton', 'fa4'} "
         "backends are supported on Blackwell GPUs for hybrid GDN models. Got attention_backend=flashinfer.\n"),
    Case("arch-not-selection-notice", "unsupported-gpu-arch", SERVER_ARGS + MAIN
         + "Use flashinfer as attention backend on sm100 for NemotronHForCausalLM\n", "absent"),
    Case("arch-not-platform", "unsupported-gpu-arch", args_check(
        "ValueError: awq quantization is currently not supported in ROCm.", "_verify_quantization"), "absent"),
    Case("arch-vision-fa3", "unsupported-gpu-arch", in_scheduler(
        "ValueError: The 'fa3' backend is not supported on Blackwell GPUs", ("layers/attention/vision.py", "__init__"))),
    Case("arch-lightning", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: Flash attention currently only supported for compute capability >= 80",
        ("layers/attention/linear/lightning_attn.py", "forward"))),
    Case("arch-no-kernel-image", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device")),
    Case("arch-mxfp8-moe", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: MXFP8 MoE quantization requires SM100.", QUANT)),
    Case("arch-mxfp8-dense", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: MXFP8 dense linear requires Blackwell GPUs (SM100/SM120).", QUANT)),
    Case("arch-cutlass-fp8", "unsupported-gpu-arch", in_scheduler(
        "AssertionError: cutlass_fp8 MoE requires SM90, SM100, or SM120 GPUs", QUANT)),
    Case("arch-nvfp4", "unsupported-gpu-arch", in_scheduler(
        "ValueError: Current platform does not support NVFP4 quantization. Please use Blackwell and above.",
        ("layers/quantization/modelopt_quant.py", "__init__"))),
    Case("arch-fp8-gemm", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: FlashInfer FP8 GEMM requested via --fp8-gemm-backend=flashinfer_trtllm, but FlashInfer is not "
        "available or not supported on this hardware. FlashInfer TRTLLM FP8 GEMM requires SM100/SM103 GPUs and "
        "FlashInfer.", FP8_UTILS)),
    Case("arch-cutlass-block", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: CUTLASS block FP8 requires Hopper (SM90+) GPUs with CUDA 12.0+.", FP8_UTILS)),
    Case("arch-triton-fp8", "unsupported-gpu-arch", in_scheduler(
        "triton.compiler.errors.CompilationError: at 1:0:\nValueError(\"type fp8e4nv not supported in this "
        "architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")",
        ("layers/quantization/fp8_kernel.py", "w8a8_block_fp8_matmul"))),
    # a backend the model (not the GPU) rules out, and MoE runner / quantization combinations: arguments
    *(Case(f"backend-args-{i}", "invalid-server-args", args_check(msg, func)) for i, (func, msg) in enumerate([
        ("_handle_model_specific_adjustments", "AssertionError: GptOssForCausalLM requires one of ['triton', "
         "'trtllm_mha', 'fa3'] attention backend, but got the following backends\n- Prefill: flashinfer\n"
         "- Decode: flashinfer\n"),
        ("_handle_model_specific_adjustments", "AssertionError: fa3, aiter, triton, trtllm_mha or intel_xpu is "
         "required for Llama4 model but got flashinfer"),
        ("__post_init__", "ValueError: Dual chunk attention is enabled, but attention backend is set to flashinfer. "
         "Please set it to 'dual_chunk_flash_attn'."),
        ("__post_init__", "ValueError: Currently only ['flashinfer', 'fa3', 'triton'] attention backends are "
         "supported for deterministic inference, but you explicitly specified 'trtllm_mha'."),
        ("__post_init__", "AssertionError: DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype"),
        ("_handle_attention_backend_compatibility", "ValueError: TensorRT-LLM MLA backend only supports "
         "kv-cache-dtype of fp8_e4m3, fp4_e2m1, bf16, or auto."),
        ("_handle_moe_kernel_config", "AssertionError: Invalid quantization 'awq'. \nFlashInfer TRTLLM MOE supports "
         "only: 'modelopt_fp4', 'fp8', 'modelopt_fp8', 'compressed-tensors', or bfloat16 (None)."),
        ("_handle_moe_kernel_config", "AssertionError: Invalid quantization 'awq'. \nFlashInfer Cutlass MOE supports "
         "only: 'modelopt_fp4', 'modelopt_fp8', or bfloat16 (None)."),
        ("_handle_moe_kernel_config", "AssertionError: The expert parallel size must be 1 or the same as the tensor "
         "parallel size"),
        ("_handle_moe_kernel_config", "AssertionError: cutlass MoE is only supported with fp8/mxfp8 quantization"),
        ("_handle_moe_kernel_config", "AssertionError: Flashinfer MoE A2A is only supported with flashinfer_cutlass "
         "moe runner backend"),
        ("_handle_moe_kernel_config", "AssertionError: flashinfer_cutedsl supports moe_a2a_backend='none', "
         "'deepep', or 'flashinfer', got 'mooncake'."),
        ("_handle_model_specific_adjustments", "AssertionError: Triton kernel MoE is only supported when ep_size == 1"),
        ("_verify_quantization", "ValueError: Quantization method specified in the model config (fp8) does not "
         "match the quantization method specified in the `quantization` argument (awq)."),
        ("_verify_quantization", "ValueError: awq quantization is currently not supported in ROCm."),
    ])),
    # quantization families
    Case("block-n", "quant-block-misaligned", in_scheduler(
        "ValueError: Weight output_partition_size = 576 is not divisible by weight quantization block_n = 128.",
        ("layers/quantization/fp8.py", "validate_block_quant_shapes"))),
    Case("block-k", "quant-block-misaligned", in_scheduler(
        "ValueError: Weight input_size_per_partition = 1344 is not divisible by weight quantization block_k = 128.",
        ("layers/quantization/fp8.py", "validate_block_quant_shapes"))),
    Case("block-moe", "quant-block-misaligned", in_scheduler(
        "ValueError: For quantized MoE models, please make sure (moe_intermediate_size=1536 / moe_tp_size=16) % "
        "weight_block_size_n=128 == 0 where moe_tp_size is equal to tp_size (16) divided by ep_size (1). You can fix "
        "this by setting arguments `--tp` and `--ep` correctly.",
        ("model_executor/model_runner.py", "model_specific_adjustment"))),
    Case("block-moe-tp", "quant-block-misaligned", in_scheduler(
        "ValueError: moe_intermediate_size 1536 must be divisible by moe_tp_size (16) which is tp_size (16) divided "
        "by moe_ep_size (1).", ("model_executor/model_runner.py", "model_specific_adjustment"))),
    *(Case(f"scale-key-{i}", "quant-scale-missing", in_scheduler(
        f"KeyError: '{key}'", LOAD, ("models/llama.py", "load_weights"))) for i, key in enumerate([
            "model.layers.0.self_attn.k_scale", "model.layers.0.self_attn.v_scale",
            "model.layers.0.mlp.down_proj.input_scale", "model.layers.0.self_attn.qkv_proj.weight_scale",
            "model.layers.3.mlp.experts.0.down_proj.weight_scale_inv", "model.layers.0.mlp.experts.w13_weight_scale_2",
        ])),
    Case("scale-not-plain-key", "quant-scale-missing", in_scheduler(
        "KeyError: 'model.layers.0.mlp.gate.weight'", LOAD, ("models/llama.py", "load_weights")), "absent"),
    # AWQ / GPTQ / Marlin group alignment at this TP size
    *(Case(f"align-{i}", "quant-block-misaligned", in_scheduler(msg, LOAD, (f"layers/quantization/{mod}", func)))
      for i, (mod, func, msg) in enumerate([
          ("gptq.py", "create_weights", "ValueError: The input size is not aligned with the quantized weight shape. "
           "This can be caused by too large tensor parallel size."),
          ("gptq.py", "create_weights", "ValueError: The output size is not aligned with the quantized weight "
           "shape. This can be caused by too large tensor parallel size."),
          ("marlin_utils.py", "verify_marlin_supports_shape", "ValueError: Weight input_size_per_partition = 1344 is "
           "not divisible by min_thread_k = 128. Consider reducing tensor_parallel_size or running with "
           "--quantization gptq."),
          ("marlin_utils.py", "verify_marlin_supports_shape", "ValueError: Weight output_size_per_partition = 1344 "
           "is not divisible by  min_thread_n = 64. Consider reducing tensor_parallel_size or running with "
           "--quantization gptq."),
      ])),
    Case("scale-key", "quant-scale-missing", in_scheduler(
        "KeyError: 'model.layers.0.mlp.experts.w2_weight_scale'", LOAD, ("models/deepseek_v2.py", "load_weights"))),
    Case("deepgemm-ue8m0", "deepgemm-scale-format", SERVER_ARGS + TP0
         + "DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation "
         "on Blackwell.\n", "finding"),
]

SERVING_FAULTS = [
    # illegal-memory-access: the CUDA runtime's fault codes as torch (RuntimeError, ≥ 2.8 AcceleratorError),
    # Triton, FlashInfer and ROCm print them, a C++ terminate, an ATen device assert before the error
    *(Case(f"fault-{i}", "illegal-memory-access", while_serving(msg)) for i, msg in enumerate([
        "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
        "asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor "
        "debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\nSearch for "
        "`cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for "
        "more information.",
        "RuntimeError: CUDA error: device-side assert triggered",
        "torch.AcceleratorError: CUDA error: device-side assert triggered",
        "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered",
        "RuntimeError: HIP error: an illegal memory access was encountered",
        "RuntimeError: CUDA error: unspecified launch failure",
        "RuntimeError: CUDA error: misaligned address",
        "RuntimeError: CUDA error: an illegal instruction was encountered",
        "RuntimeError: CUDA driver error: an illegal memory access was encountered",
        "RuntimeError: CUDA error: CUDA_ERROR_ILLEGAL_ADDRESS",
        "RuntimeError: [FlashInfer] CUDA error: an illegal memory access was encountered",
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, "
        "n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, "
        "CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
    ])),
    Case("fault-rocm-hsa", "illegal-memory-access", SERVER_ARGS + READY
         + "Memory access fault by GPU node-2 (Agent handle: 0x38b6960) on address 0x1000. Reason: Page not present "
         "or supervisor privilege.\n"),
    Case("fault-terminate", "illegal-memory-access", SERVER_ARGS + READY
         + "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: an illegal memory "
         "access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so "
         "the stacktrace below might be incorrect.\n"),
    Case("fault-aten-assert", "illegal-memory-access", while_serving(
        "RuntimeError: CUDA error: device-side assert triggered").replace(READY, READY
        + "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:94: operator(): block: [0,0,0], thread: [0,0,0] "
        "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n", 1)),
    Case("fault-not-oom", "illegal-memory-access", while_serving("RuntimeError: CUDA error: out of memory"),
         "absent"),
]


def at_import(exc: str) -> str:
    """An import of sgl_kernel's compiled ops failing in the main process."""
    return (
        SERVER_ARGS + "Traceback (most recent call last):\n"
        + '  File "/usr/local/bin/sglang", line 8, in <module>\n    sys.exit(main())\n'
        + f'  File "{SG}/layers/activation.py", line 30, in <module>\n    from sgl_kernel import gelu_and_mul\n'
        + '  File "/usr/local/lib/python3.12/dist-packages/sgl_kernel/__init__.py", line 5, in <module>\n'
        + "    from sgl_kernel import common_ops\n" + exc + "\n"
    )


LIBRARIES = [
    # kernel-library-mismatch: ABI (undefined symbol), missing runtime libraries, driver too old
    Case("abi-sgl-kernel", "kernel-library-mismatch", at_import(
        "ImportError: /usr/local/lib/python3.12/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: "
        "_ZN3c104cuda9SetDeviceEi")),
    Case("abi-flashinfer", "kernel-library-mismatch", at_import(
        "ImportError: /usr/local/lib/python3.12/dist-packages/flashinfer/_kernels.cpython-312-x86_64-linux-gnu.so: "
        "undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_implENS_12MemoryFormatE")),
    Case("abi-torch-nccl", "kernel-library-mismatch", at_import(
        "OSError: /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
        "ncclCommWindowRegister")),
    Case("lib-cudart", "kernel-library-mismatch", at_import(
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory")),
    Case("lib-common-ops", "kernel-library-mismatch", at_import(
        "ImportError: [sgl_kernel] CRITICAL: Could not load any common_ops library!")),
    Case("driver-too-old", "kernel-library-mismatch", in_scheduler(
        "RuntimeError: The NVIDIA driver on your system is too old (found version 12020). Please update your GPU "
        "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
        "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
        "version of the CUDA driver.")),
    Case("driver-insufficient", "kernel-library-mismatch", in_scheduler(
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version")),
    Case("driver-compat-804", "kernel-library-mismatch", in_scheduler(
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
        "supported HW")),
    Case("abi-deep-gemm", "kernel-library-mismatch", at_import(
        "ImportError: /usr/local/lib/python3.12/dist-packages/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so: undefined "
        "symbol: _ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs")),
    Case("lib-cublaslt", "kernel-library-mismatch", at_import(
        "ImportError: libcublasLt.so.13: cannot open shared object file: No such file or directory")),
    Case("arch-invalid-device-function", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: CUDA error: invalid device function")),
    Case("arch-hip-invalid-device-function", "unsupported-gpu-arch", in_scheduler(
        "RuntimeError: HIP error: invalid device function")),
    Case("arch-accelerator-error", "unsupported-gpu-arch", in_scheduler(
        "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device")),
    # SGLang's own start-up version check of the kernel packages (utils.assert_pkg_version)
    *(Case(f"pkg-version-{i}", "kernel-library-mismatch", in_main(msg, ("entrypoints/engine.py", "_set_envs_and_config"),
                                                                   ("utils.py", "assert_pkg_version")))
      for i, msg in enumerate([
          "Exception: flashinfer_python is installed with version 0.2.3, which is less than the minimum required "
          "version 0.2.5. Please uninstall the old version and reinstall the latest version by following the "
          "instructions at https://docs.flashinfer.ai/installation.html.",
          "Exception: sglang-kernel is installed with version 0.4.6.post1, which is less than the minimum required "
          "version 0.4.7",
          "Exception: sgl-kernel with minimum required version 0.3.5 is not installed. Please reinstall the latest "
          "version with `pip install sgl-kernel --force-reinstall`",
      ])),
    Case("ptx-toolchain", "kernel-library-mismatch", in_scheduler(
        "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.")),
]

INFO = [
    # warnings.warn's envelope (file:line: UserWarning: …, the example line, the source line)
    Case("entrypoint", "deprecated-entrypoint",
         f"{SG}/../launch_server.py:54: UserWarning: 'python -m sglang.launch_server' is still supported, but "
         "'sglang serve' is the recommended entrypoint.\n  Example: sglang serve --model-path <model> [options]\n"
         "  warnings.warn(\n" + SERVER_ARGS, "finding"),
    Case("max-running-spec", "max-running-requests-capped", SERVER_ARGS + MAIN
         + "Max running requests is reset to 48 for speculative decoding.\n", "finding"),
    Case("max-running-spec-override", "max-running-requests-capped", SERVER_ARGS + MAIN
         + "Max running requests is reset to 48 for speculative decoding. You can override this by explicitly "
         "setting --max-running-requests.\n", "finding"),
    Case("car-world-size", "custom-allreduce-unavailable", SERVER_ARGS + TP0
         + "Custom allreduce is disabled due to an unsupported world size: 3. Supported world sizes: [2, 4, 6, 8]. "
         "To silence this warning, specify disable_custom_all_reduce=True explicitly.\n", "finding"),
]

# A report that pastes only the exception line: the family must be recognised from the line alone.
LONE_LINES = [
    ('cuda-oom',
     'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a '
     'total capacity of 79.11 GiB of which 3.50 MiB is free.'),
    ('kv-pool-no-room', 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.'),
    ('unsupported-gpu-arch',
     'ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). '
     'Please use a different backend.'),
    ('spec-v2-topk-conflict', 'ValueError: Spec v2 currently only supports topk = 1 for speculative decoding.'),
    ('spec-config-invalid', 'ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.'),
    ('invalid-server-args',
     'ValueError: The arguments enable-hierarchical-cache and disable-radix-cache are '
     'mutually exclusive and cannot be used at the same time. Please use only one of them.'),
    ('invalid-server-args', 'AssertionError: chunked_prefill_size must be divisible by page_size'),
    ('port-in-use', 'OSError: [Errno 98] Address already in use'),
    ('nccl-error',
     'torch.distributed.DistBackendError: NCCL error in: '
     '../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run '
     'with NCCL_DEBUG=INFO for details), NCCL version 2.21.5'),
    ('model-load-failure',
     "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. "
     "Supported architectures: dict_keys(['LlamaForCausalLM'])"),
    ('illegal-memory-access', 'RuntimeError: CUDA error: an illegal memory access was encountered'),
    ('kernel-library-mismatch',
     'ImportError: /usr/local/lib/python3.12/dist-packages/sgl_kernel/common_ops.abi3.so: '
     'undefined symbol: _ZN3c104cuda9SetDeviceEi'),
    ('quant-block-misaligned',
     'ValueError: Weight output_partition_size = 576 is not divisible by weight '
     'quantization block_n = 128.'),
    ('custom-allreduce-unavailable', 'RuntimeError: CUDA error: peer access is not supported between these two devices'),
    ('memory-leak-detected',
     'ValueError: token_to_kv_pool_allocator memory leak detected! '
     'self.max_total_num_tokens=396701, available_size=6016, evictable_size=390685, '
     'protected_size=0'),
    ('mamba-pool-exhausted',
     'AssertionError: Not enough space for mamba cache, try to increase '
     '--mamba-full-memory-ratio or --max-mamba-cache-size.'),
    ('host-oom', 'OSError: [Errno 12] Cannot allocate memory'),
    ('spec-mamba-extra-buffer',
     'ValueError: Speculative decoding for Qwen3NextForCausalLM is not compatible with '
     'radix cache when using --mamba-scheduler-strategy no_buffer.To use radix cache with '
     'speculative decoding, please use --mamba-scheduler-strategy extra_buffer and set '
     'SGLANG_ENABLE_SPEC_V2=1.'),
    ('nccl-timeout',
     '[rank1]:[E307 15:45:02.123456789 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught '
     'collective operation timeout: WorkNCCL(SeqNum=123, OpType=ALLREDUCE, NumelIn=1, '
     'NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.'),
    ('quant-scale-missing', "KeyError: 'model.layers.0.self_attn.k_scale'"),
]
LONE = [Case(f"lone-{i}-{d}", d, line + "\n") for i, (d, line) in enumerate(LONE_LINES)]

CASES = MEMORY + SERVER + DISTRIBUTED + SPECULATIVE + KERNELS + SERVING_FAULTS + LIBRARIES + INFO + LONE


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_family_wording(case: Case, tmp_path: Path) -> None:
    a = analyze_text(tmp_path, case.log)
    names = [f.name for f in a.all_findings()]
    root = a.root_cause.name if a.root_cause is not None else None
    if case.expect == "root":
        assert root == case.diagnosis, (root, names)
    elif case.expect == "finding":
        assert case.diagnosis in names, names
    else:
        assert case.diagnosis not in names, names
