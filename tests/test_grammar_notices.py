"""Notices family of the grammar (grammars/notices.lark): informational lines → KnownMessage codes.

Lines are verbatim from the development corpus (file named in the comment) or, for the wordings a
release printed that the corpus does not hold, rendered from the source's own format string (named
in grammars/notices.lark above the alternative). Every line must give the same result on the fast
path and on the LALR parser, and near misses of each family must stay unparsed: a notice is
recognised only when its message is known.
"""

from __future__ import annotations

from typing import Any

import pytest

from logparse.grammar.build import get_parser
from logparse.model.events import KnownMessage, Unparsed
from tests.test_records import assemble


@pytest.fixture(scope="module")
def parser():
    return get_parser(strict=True)


# (line, code, fields the notice must carry — a subset of its fields, {} when none are read).
CASES: list[tuple[str, str, dict[str, Any]]] = [
    # ---- SGLang: runtime and start-up
    ("[2026-03-17 07:16:35 TP0] Registering 228 cuda graph addresses", "cuda-graph-addresses", {"count": 228}),  # a-002
    ("[2025-10-06 20:05:27 DP6 TP6] Registering 0 cuda graph addresses", "cuda-graph-addresses", {"count": 0}),  # d-025
    ("[2025-03-10 21:52:12 DP0 TP0] Registering 0 cuda graph addresses                ",  # b-033: paste blanks
     "cuda-graph-addresses", {"count": 0}),
    ("[2025-12-03 15:11:42 TP7] Cache flushed successfully!", "cache-flushed", {}),  # dev-049
    ("[2025-12-03 15:11:42] Cache not flushed because there are pending requests. #queue-req: 0, #running-req: 3",
     "cache-not-flushed", {"queue": 0, "running": 3}),  # scheduler.flush_cache format (≤0.5.1x)
    ("Cache not flushed because there are pending requests. waiting=2, pending_dp=0, running=1, cur_batch=1",
     "cache-not-flushed", {"queue": 2, "running": 1}),  # 0.5.2x format
    ("[2026-01-20 02:40:16 DP1 TP0] MOE_RUNNER_BACKEND is not initialized, the backend will be automatically selected",
     "moe-backend-unset", {"setting": "runner", "speculative": False, "backend": "auto"}),  # d-036
    ("[2026-02-08 03:04:21] SPECULATIVE_MOE_A2A_BACKEND is not initialized, using none backend",
     "spec-moe-backend-unset", {"setting": "a2a", "speculative": True, "backend": "none"}),  # moe/utils.py format
    ("[2025-05-13 23:29:46 DP4 TP4] Using default MoE kernel config. Performance might be sub-optimal! Config file "
     "not found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/E=264,N=256,"
     "device_name=NVIDIA_B200,dtype=fp8_w8a8,block_shape=[128, 128].json, you can create them with "
     "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton",
     "moe-config-default", {"experts": 264, "intermediate": 256, "device_name": "NVIDIA_B200", "dtype": "fp8_w8a8"}),
    ("[2025-05-13 23:29:46 DP0 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config file "
     "not found at /sgl-workspace/sglang/python/sglang/srt/layers/moe/fused_moe_triton/configs/E=264,N=256",  # c-057 (cut)
     "moe-config-default", {"experts": 264, "intermediate": 256}),
    ("Using default MoE config. Performance might be sub-optimal! Config file not found at "
     "/opt/vllm/model_executor/layers/fused_moe/configs/E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json",
     "moe-config-default", {"experts": 8, "device_name": "NVIDIA_H100_80GB_HBM3"}),  # vLLM's wording (≤0.3)
    ("[2025-12-23 14:18:00 TP0] Using MoE kernel config from /usr/local/lib/python3.10/dist-packages/sglang/srt/"
     "layers/moe/fused_moe_triton/configs/E=8,N=7168,device_name=MTT_S5000,dtype=fp8_w8a8,block_shape=[128, 128].json.",
     "moe-config-found", {"experts": 8, "intermediate": 7168, "device_name": "MTT_S5000"}),  # dev-030 shape
    ("Using configuration from /opt/vllm/fused_moe/configs/E=8,N=14336,device_name=NVIDIA_A100-SXM4-80GB.json for MoE layer.",
     "moe-config-found", {"experts": 8, "intermediate": 14336}),
    ("Config file not found at /c/triton_3_5_1/E=60,N=1408,device_name=NVIDIA_H100_80GB_HBM3.json. Fallback to "
     "triton version 3.4.0 and use MoE kernel config from /c/triton_3_4_0/E=60,N=1408,device_name=NVIDIA_H100_80GB_HBM3.json. "
     "Performance might be sub-optimal!", "moe-config-fallback", {"triton_version": "3.4.0", "experts": 60}),
    ("[2026-03-17 07:16:51 TP0] Compiling a graph for dynamic shape takes 3.38 s",  # a-002
     "torch-compile-graph", {"shape": "dynamic", "seconds": 3.38}),
    ("Compiling a graph for shape 8192 takes 1.20 s", "torch-compile-graph", {"shape": "8192", "seconds": 1.2}),
    ("Cache the graph for dynamic shape for later use", "torch-compile-graph-cached", {}),
    ("Directly load the compiled graph(s) for dynamic shape from the cache, took 0.512 s",
     "torch-compile-graph-loaded", {"shape": "dynamic", "seconds": 0.512}),
    ("Dynamo bytecode transform time: 3.29 s", "dynamo-transform-time", {"seconds": 3.29}),
    ("torch.compile takes 13.29 s in total", "torch-compile-total", {"seconds": 13.29}),
    ("[2026-03-17 07:16:46 TP0] Initializing SGLangBackend", "sglang-backend-init", {}),  # a-002
    ("[2026-03-17 07:16:46 TP0] SGLangBackend __call__", "sglang-backend-call", {}),  # a-002
    ("[2026-03-17 07:16:38 TP0] install_torch_compiled", "install-torch-compiled", {}),  # a-002
    ("[2026-06-17 09:57:15] kill_process_tree called: parent_pid=1, include_parent=True, pid=1",  # a-035
     "kill-process-tree", {"parent_pid": 1, "pid": 1, "include_parent": True}),
    ("kill_process_tree called", "kill-process-tree", {}),
    ("[2026-01-30 20:54:54 PP1 TP1] Parameter model.embed_tokens.weight not found in params_dict",  # c-058
     "param-not-in-params-dict", {"name": "model.embed_tokens.weight"}),
    ("Parameter layers.3.linear_attn.in_proj_qkvz.weight not found in params_dict, skip loading",
     "param-not-in-params-dict", {"name": "layers.3.linear_attn.in_proj_qkvz.weight"}),
    ("[2026-01-30 20:54:54 PP0 TP0] Beginning to load weights", "weights-loading-begin", {}),  # c-058
    ("[2026-01-30 20:54:56 PP1 TP1] Loading weights took 2.69 seconds", "weights-loading-took", {"seconds": 2.69}),
    ("[2025-03-03 06:49:28 TP5] Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). "
     "Use a shorter input or enable --allow-auto-truncate.",  # d-037
     "input-exceeds-max-length", {"input_tokens": 160062, "max_tokens": 59862}),
    ("[2026-05-28 08:41:19] Image processor KimiVLImageProcessor.preprocess() does not accept {'device'}; retrying "
     "without them. Update the model's image processor to accept **kwargs.", "image-processor-kwargs", {}),  # d-014
    ("[2026-04-23 07:31:58 TP7] Using hybrid linear attention backend for hybrid GDN models.", "hybrid-gdn-backend", {}),
    ("[2026-06-24 11:50:38] Linear attention kernel backend: decode=triton, prefill=triton",  # c-014
     "linear-attn-kernel-backend", {}),
    ("GDN kernel dispatcher: decode=TritonGDNKernel, extend=TritonGDNKernel, verify=TritonGDNKernel packed_decode=True",
     "gdn-kernel-dispatcher", {}),
    ("[2025-06-23 15:06:10 TP7] world_size=16 rank=7 local_rank=7 distributed_init_method=tcp://node-0.company.net:20000 "
     "backend=nccl", "dist-env", {"world_size": 16, "global_rank": 7, "local_rank": 7, "backend": "nccl"}),  # b-052
    ("[2025-06-23 15:06:59 TP1] Found nccl from library libnccl.so.2", "pynccl-library", {"library": "libnccl.so.2"}),
    ("[2026-05-27 03:36:42] Fixing v5 tokenizer component mismatch for /home/dist/DeepSeek-V2-Lite-Chat-FP8/: "
     "pre_tokenizer Metaspace -> Sequence, decoder Sequence -> ByteLevel", "tokenizer-v5-fix", {}),  # d-038
    ("[2026-05-27 03:36:42] Restoring add_bos_token=True for /home/dist/DeepSeek-V2-Lite-Chat-FP8/ (was False after v5 "
     "loading)", "tokenizer-bos-restored", {}),  # d-038
    ("[2025-04-03 12:06:23] Use chat template for the OpenAI-compatible API server: qwen2-vl",  # d-035
     "chat-template-set", {}),
    ("[2026-05-28 05:58:21] Max concurrent requests (per dp worker) from the finalized token capacity: max_num_reqs=128.",
     "max-num-reqs-resolved", {"max_num_reqs": 128}),  # c-014's message (0.5.2x)
    ("Rank 0: load weight begin.", "rank-load-weight", {"tp_rank": 0, "stage": "begin"}),  # d-032 (0.1.x)
    ("Rank 1: load weight end.", "rank-load-weight", {"tp_rank": 1, "stage": "end"}),  # d-032
    ("[2025-12-17 05:10:39] Scanning metadata for 5 model files (single host only)...", "jax-scan-metadata", {}),  # a-012
    ("[2025-12-17 05:10:40] Starting parallel weight loading via JAX Lazy Loader...", "jax-lazy-load-begin", {}),  # a-012
    ("[2025-12-17 05:10:40] No file found for weight: model.layers.0.self_attn.o_proj.bias",  # a-012
     "jax-weight-file-missing", {"name": "model.layers.0.self_attn.o_proj.bias"}),
    ("Weight d2t not found in safetensors index.", "jax-weight-not-in-index", {}),
    ("Skipping excluded layer weight: model.layers.61.mlp.gate.weight", "jax-weight-excluded", {}),
    # ---- PD disaggregation and HiCache
    ("[2025-10-15 11:03:35 DP6 TP6 EP6] Decode transfer failed for request rank=6 "
     "decode_req.req.rid='cd00baf7d2fc4dcf8535c3a25f0288a3' decode_req.req.bootstrap_room=8360203925601259718 with "
     "exception KVTransferError(bootstrap_room=8360203925601259718): Failed to get kvcache from prefill instance, it "
     "might be dead", "decode-transfer-failed",  # b-020 shape
     {"side": "decode", "tp_rank": 6, "rid": "cd00baf7d2fc4dcf8535c3a25f0288a3", "bootstrap_room": 8360203925601259718,
      "exception": "KVTransferError(bootstrap_room=8360203925601259718): Failed to get kvcache from prefill instance, "
                   "it might be dead"}),
    ("[2025-11-05 16:39:09 TP2] Decode transfer failed for request rank=2 decode_req.req.rid='78fde411d57a4d7791b63963eac74968' d",
     "decode-transfer-failed", {"tp_rank": 2, "rid": "78fde411d57a4d7791b63963eac74968"}),  # b-019 (cut)
    ("Decode transfer failed for request rank=0 rid=a1b2 bootstrap_room=42 with exception Fake KVSender Exception",
     "decode-transfer-failed", {"rid": "a1b2", "bootstrap_room": 42, "exception": "Fake KVSender Exception"}),  # 0.4.x
    ("Prefill transfer failed for request rank=0 req.rid='5b02' req.bootstrap_room=17 with exception "
     "KVTransferError(bootstrap_room=17): Decode instance could be dead", "prefill-transfer-failed",
     {"side": "prefill", "stage": "transfer", "rid": "5b02", "bootstrap_room": 17}),
    ("Prefill bootstrap failed for request rank=1 req.rid='5b02' req.bootstrap_room=17 with exception boom",
     "prefill-bootstrap-failed", {"stage": "bootstrap", "tp_rank": 1}),
    ("[2025-10-15 11:03:35 DP6 TP6 EP6] Some requests fail to receive KV Cache transfer done signal after "
     "bootstrapping. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600' "
     "(10 minutes) to relax the timeout condition.", "kv-transfer-wait-timeout", {}),  # b-020
    ("[2025-05-15 11:59:23 TP1] FakeKVSender send with kv_indices: [1 2 3 4], index_slice: slice(0, 4, None), "
     "is_last: True", "fake-kv-transfer", {}),  # b-012
    ("[2025-05-15 11:59:23 TP1] FakeKVSender poll success", "fake-kv-transfer", {}),  # b-012
    ("[2026-07-18 03:04:05 ATTN_CP7 TP7] Unsupported element_size = 656 for JIT HiCache kernel",  # d-008
     "hicache-jit-unsupported", {"element_size": 656}),
    ("Connect to Mooncake store successfully.  ", "mooncake-store-connected", {}),  # b-031 (paste blanks)
    ("Mooncake store warmup successfully.  ", "mooncake-store-warmup", {}),  # b-031
    ("Mooncake Configuration loaded from extra_config successfully.", "mooncake-config-loaded", {}),
    ("failed to setup mooncake store, error code: -1", "mooncake-setup-failed", {}),
    ("An error occurred while loading the configuration: ", "mooncake-config-failed", {}),  # b-031
    # ---- kernels
    ("[2025-06-05 08:20:08 DP0 TP0] Try DeepGEMM JIT Compiling for <gemm_fp8_fp8_bf16_nt> N=12288, K=1536, "
     "num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have run "
     "`python3 -m sglang.compile_deep_gemm`.", "deepgemm-jit-compiling",  # c-015
     {"kernel": "gemm_fp8_fp8_bf16_nt", "n": 12288, "k": 1536, "num_groups": 1}),
    ("Try DeepGEMM JIT Compiling for <GROUPED_GEMM_NT_F8F8BF16_CONTIG> N=4096, K=2048, num_groups=32 with all Ms.",
     "deepgemm-jit-compiling", {"kernel": "GROUPED_GEMM_NT_F8F8BF16_CONTIG", "num_groups": 32}),  # pre-compile stage
    ("Try DeepGEMM JIT Compiling for <GEMM_FP8_FP8_BF16_NT> N=7168, K=2048, num_groups=1 with all Ms. It only takes "
     "a litte time(Typically 1 sec) if you have run `sglang.compile_deep_gemm`. ", "deepgemm-jit-compiling",
     {"n": 7168}),  # 0.4.5–0.4.6 deep_gemm.py
    ("Warning: please use at least NVCC 12.9 for the best DeepGEMM performance", "deepgemm-nvcc-old",  # c-048
     {"recommended_nvcc": "12.9"}),
    ("[2026-01-20 02:40:16 DP1 TP1] Initializing MLIR with module: _site_initialize_0", "mlir-site-init", {}),  # d-036
    ("[2026-01-20 02:40:16 DP1 TP1] Registering dialects from initializer <module "
     "'cutlass._mlir._mlir_libs._site_initialize_0' from '/opt/conda/lib/python3.10/site-packages/nvidia_cutlass_dsl/"
     "python_packages/cutlass/_mlir/_mlir_libs/_site_initialize_0.so'>", "mlir-dialects-register", {}),  # d-036
    # ---- torch: CUDA error hints and c10d sockets
    ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
     "incorrect.", "cuda-async-error-hint", {}),  # c-002
    ("CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be "
     "incorrect.", "cuda-async-error-hint", {}),  # torch ≤1.13
    ("For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "cuda-launch-blocking-hint", {}),  # c-002
    ("For debugging consider passing CUDA_LAUNCH_BLOCKING=1.", "cuda-launch-blocking-hint", {}),  # torch ≤2.0
    ("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", "cuda-dsa-hint", {}),  # c-002
    ("Device-side assertion tracking was not enabled by user.", "cuda-dsa-not-enabled", {}),
    ("Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
     "for more information.", "cuda-error-doc-hint", {}),  # c-053
    ("Starting GPU coredump generation, set the CUDA_COREDUMP_SHOW_PROGRESS environment variable to 1 to enable more "
     "detailed output", "cuda-coredump-start", {}),  # c-004
    ("[rank7]:[W623 15:37:01.834946117 socket.cpp:460] [c10d] waitForInput: poll for socket SocketImpl(fd=100, "
     "addr=[node-0.company.net]:43570, remote=[node-0.company.net]:20000) returned 0, likely a timeout",  # b-048
     "c10d-socket", {"kind": "timeout"}),
    ("[rank7]:[W623 15:37:01.835386612 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=100, "
     "addr=[node-0.company.net]:43570, remote=[node-0.company.net]:20000) timed out after 1800000ms",  # b-048
     "c10d-socket", {"kind": "timeout", "timeout_ms": 1800000}),
    ("[rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=135, "
     "addr=[sglang-0-1]:48750, remote=[sglang-0]:20000): Connection reset by peer", "c10d-socket",
     {"kind": "connection-lost"}),  # b-027 shape
    ("[W403 12:06:29.672758149 socket.cpp:752] [c10d] The client socket cannot be initialized to connect to "
     "[localhost]:30161 (errno: 97 - Address family not supported by protocol).", "c10d-socket",
     {"kind": "connect-failed"}),  # d-035
    ("[c10d] The server socket has failed to listen on any local network address.", "c10d-socket",
     {"kind": "listen-failed"}),
    # ---- other libraries and tools
    ("[2025-04-01 18:12:47 TP0] vision_config is None, using default vision config", "vision-config-default", {}),  # dev-026
    ("[01-19 11:47:29] [RunAI Streamer] Overall time to stream 21.2 GiB of all files to cpu: 8.13s, 2.6 GiB/s",
     "runai-streamer", {}),  # d-045
    ("INFO 02-19 15:51:07 weight_utils.py:164] Using model weights format ['*.safetensors']",  # d-032
     "vllm-weights-format", {}),
    ("INFO 04-01 18:12:47 awq_marlin.py:115] Detected that the model can run with awq_marlin, however you specified "
     "quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference",  # dev-026
     "marlin-not-used", {}),
    ("Detected that the model can run with gptq_marlin, however you specified quantization=gptq explicitly, so forcing "
     "gptq. Use quantization=gptq_marlin for faster inference", "marlin-not-used", {}),
    ("WARNING 05-04 01:04:03 rocm.py:34] `fork` method is not supported by ROCm. VLLM_WORKER_MULTIPROC_METHOD is "
     "overridden to `spawn` instead.", "rocm-fork-unsupported", {}),  # d-044
    ("[2025-11-05 16:38:03] WARNING:  Invalid HTTP request received.", "uvicorn-invalid-http", {}),  # b-019
    ("WARNING:  Unsupported upgrade request.", "uvicorn-unsupported-upgrade", {}),
    ("server started on [0.0.0.0]:10005", "rpyc-server-started", {}),  # d-032
    ("accepted ('127.0.0.1', 60712) with fd 25", "rpyc-accepted", {}),  # d-032
    ("welcome ('127.0.0.1', 60712)", "rpyc-welcome", {}),  # d-032
    ("goodbye ('127.0.0.1', 60712)", "rpyc-goodbye", {}),
    ("usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH] [--host HOST] "
     "[--port PORT] [--tokenizer-mode {auto,slow}] [--skip-tokenizer-init]", "argparse-usage", {}),  # d-020
    ("launch_server.py: error: the following arguments are required: --model-path", "argparse-error",
     {"message": "the following arguments are required: --model-path"}),
    ("--- Logging error ---", "logging-error", {}),
    ("Call stack:", "logging-error-stack", {}),
    ("Message: 'Received sigquit from a child proces. It usually means the child failed.'",  # a-036
     "logging-error-message", {}),
    ("Arguments: ()", "logging-error-args", {}),
]


@pytest.mark.parametrize(("line", "code", "fields"), CASES, ids=[c[0][:60] for c in CASES])
def test_notice(parser, line, code, fields):
    _env, cls, kw = parser.parse(line)
    assert cls is KnownMessage, line
    assert kw["code"] == code
    assert line.endswith(kw["text"])
    got = kw["fields"]
    assert {k: got.get(k) for k in fields} == fields
    assert parser.parse_lalr(line) == parser.parse(line)


# Older / newer wordings of families that other grammar files model (startup.lark, failures.lark):
# (line, event class name, code or None, fields subset).
OTHER_FAMILIES: list[tuple[str, str, str | None, dict[str, Any]]] = [
    ("[2025-06-23 15:06:10 TP0] Attention backend not set. Use fa3 backend by default.",  # b-052 (0.4.x)
     "KnownMessage", "attn-backend-default", {"backend": "fa3"}),
    ("[2026-05-07 10:00:00] Attention backend not specified. Use fa3 backend by default.",
     "KnownMessage", "attn-backend-default", {"backend": "fa3"}),
    ("[2025-04-03 12:06:29 TP0] Automatically turn off --chunked-prefill-size and disable radix cache for qwen2-vl.",
     "KnownMessage", "chunked-prefill-off", {"model_type": "qwen2-vl"}),  # d-035 (0.3–0.4)
    ("[2024-11-22 10:00:00 TP0] Automatically turn off --chunked-prefill-size as it is not supported for mllama",
     "KnownMessage", "chunked-prefill-off", {"model_type": "mllama"}),
    ("[2025-05-15 11:59:23] End of prefill warmup with status 200, resp: [{'text': 'DOCTYPE', 'meta_info': {}}]",
     "KnownMessage", "pd-warmup-end", {"status": 200}),  # b-012 (0.4.6)
    ("[2026-03-07 15:30:31] End of prefill disaggregation mode warmup with status 200, resp: [{'text': '%'}]",
     "KnownMessage", "pd-warmup-end", {"status": 200}),
    ("[2025-12-01 10:00:00 TP1] Running FlashInfer autotune with cache: /cache/runtime/sglang/flashinfer/autotune/"
     "0.6.15.post1/sm121/a.json", "KnownMessage", "flashinfer-autotune-begin", {}),  # c-037 shape (0.5.2x)
    ("Running FlashInfer autotune (cache reuse DISABLED via SGLANG_FLASHINFER_AUTOTUNE_CACHE=0); writing fresh "
     "result to: /cache/runs/a.20260101_000000.json", "KnownMessage", "flashinfer-autotune-begin", {}),
    ("[2026-03-07 15:30:20 TP0] Running FlashInfer autotune...", "KnownMessage", "flashinfer-autotune-begin", {}),
    ("[rank7]:[E1019 01:04:03.358125866 ProcessGroupNCCL.cpp:1413] [PG 3 Rank 7] Heartbeat monitor timed out! "
     "Process will be terminated after dumping debug info. workMetaList_.size()=121", "C10dLog", None,
     {"torch_rank": 7}),  # b-017
    ("[rank2]:[F1019 01:14:03.356851194 ProcessGroupNCCL.cpp:1224] [PG 3 Rank 2] [PG 3 Rank 2] ProcessGroupNCCL's "
     "watchdog got stuck for 600 seconds without making progress in monitoring enqueued collectives.", "C10dLog",
     None, {"torch_rank": 2}),  # b-017
    ("[rank4]:[E304 12:54:52.123659968 ProcessGroupNCCL.cpp:1785] [PG ID 2 PG GUID 3 Rank 4] Exception (either an "
     "error or timeout) detected by watchdog at work: 151721", "C10dLog", None, {"torch_rank": 4}),
    ("[PG ID 0 PG GUID 0(default_pg) Rank 15] Process group watchdog thread terminated with exception: boom",
     "C10dLog", None, {"torch_rank": 15}),
    ("[2026-06-24 10:00:00] Received sigquit from a child proces. It usually means the child failed.",
     "SigquitReceived", None, {}),  # a-036's release typo
    ("[2026-03-07 15:30:19] Received sigquit from a child process. It usually means the child failed.",
     "SigquitReceived", None, {}),
]


@pytest.mark.parametrize(("line", "cls_name", "code", "fields"), OTHER_FAMILIES, ids=[c[0][:60] for c in OTHER_FAMILIES])
def test_other_family_wordings(parser, line, cls_name, code, fields):
    _env, cls, kw = parser.parse(line)
    assert cls.__name__ == cls_name, line
    got = kw
    if code is not None:
        assert kw["code"] == code
        got = kw["fields"]
    assert {k: got.get(k) for k in fields} == fields
    assert parser.parse_lalr(line) == parser.parse(line)

# Lines that share a head with a family but are not its message: they stay unparsed.
NEAR_MISSES = [
    "Registering cuda graph addresses",  # no count
    "Cache flushed",
    "MOE_RUNNER_BACKEND is not initialized",
    "Using default MoE kernel config.",  # cut before the family's second sentence
    "Compiling a graph for dynamic shape ta",  # a-002: a line cut mid-word
    "kill_process_tree",
    "Parameter not found in params_dict",
    "Beginning to load",
    "Input length is too long",
    "Decode transfer failed",
    "Decode transfer failed for request",
    "Unsupported element_size = 656 for J",  # d-008 (cut)
    "Connect to Mooncake store",
    "Try DeepGEMM JIT Compiling for <GEMM>",
    "CUDA kernel errors might be asynchronously reported",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=0",
    "[c10d] something else happened",
    "usage: something",
    "Message: hello",
    "Call stack: main",
    "server started",
    "welcome to the server",
    "Registering dialects",
    "Rank 0: load weight",
    "No file found for weight:",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_is_unparsed(parser, line):
    env, cls, kw = parser.parse(line)
    assert cls is Unparsed
    assert parser.parse_lalr(line) == (env, cls, kw)


def test_hot_lines_keep_their_events(parser):
    """The families that start with a hot line's words leave the stats lines alone."""
    decode = ("[2025-10-15 11:03:35 DP6 TP6 EP6] Decode batch, #running-req: 1, #token: 640, token usage: 0.00, "
              "cuda graph: True, gen throughput (token/s): 50.12, #queue-req: 0")
    prefill = ("[2025-10-15 11:03:35 TP0] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: "
               "0.00, #running-req: 0, #queue-req: 0")
    assert parser.parse(decode)[1].__name__ == "DecodeBatch"
    assert parser.parse(prefill)[1].__name__ == "PrefillBatch"


def test_cuda_hints_continue_the_exception_message():
    """torch appends its hints to the `CUDA error: …` message: they stay part of the traceback's message
    (c-039), and the record still takes a chained exception after them."""
    tbs, _asm = assemble([
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/streams.py", line 100, in synchronize',
        "    super().synchronize()",
        "RuntimeError: CUDA error: device-side assert triggered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
        "incorrect.",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/sgl/srt/managers/scheduler.py", line 10, in run_scheduler_process',
        "    raise",
        "RuntimeError: boom",
    ])
    assert len(tbs) == 1
    (tb,) = tbs
    assert tb.exc_type == "RuntimeError" and tb.message == "boom"
    first_type, first_message = tb.chain[0]
    assert first_type == "RuntimeError"
    assert first_message.startswith("CUDA error: device-side assert triggered\nCUDA kernel errors might")
    assert first_message.endswith("to enable device-side assertions.")
