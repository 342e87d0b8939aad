"""Startup family (grammars/startup.lark + logparse/grammar/transform/startup.py): one real line per shape
→ (event class, fields, envelope), every historical variant, near-misses, and fast path ≡ LALR."""

from __future__ import annotations

import glob
import json
import math
import os
from typing import Any

import pytest

from logparse.grammar.build import get_parser
from logparse.io.reader import ReadReport, read_lines
from logparse.model.events import (
    CaptureBatchSizes,
    CaptureBegin,
    CaptureEnd,
    DistInitBegin,
    DistInitEnd,
    EngineStartupTimings,
    GlooConnected,
    KnownMessage,
    KvCacheAllocated,
    KvCacheDtype,
    LaunchCommand,
    LaunchDp,
    MambaCacheAllocated,
    MemoryPoolEnd,
    NcclLog,
    NcclVersion,
    ProfiledTokensExceeded,
    ProgressBar,
    SchedulerLimits,
    ServerArgs,
    SwaPoolAllocated,
    WeightLoadBegin,
    WeightLoadEnd,
    WeightsReady,
)
from tests.conftest import CORPUS as _CORPUS

CORPUS = str(_CORPUS)


@pytest.fixture(scope="module")
def parser() -> Any:
    return get_parser(strict=True)


def _env(env: Any) -> tuple[str | None, str | None] | None:
    return None if env is None else (env.ts, env.rank)


# (line, event class, fields, (ts, rank) of the envelope or None for a bare line)
CASES: list[tuple[str, type, dict[str, Any], tuple[str | None, str | None] | None]] = [
    # ------------------------------------------------------------------ launch commands
    (
        (
            "SGLANG_ENABLE_SPEC_V2=1 SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 python -m sglang.launch_server "
            "--model-path /dataset/model/llama3.1/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 30000 "
            "--trust-remote-code --speculative-algorithm EAGLE3 --speculative-num-steps 5 "
            "--speculative-eagle-topk 4 --disable-cuda-graph"
        ),
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {"SGLANG_ENABLE_SPEC_V2": "1", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"},
            "flags": {
                "--model-path": "/dataset/model/llama3.1/Llama-3.1-8B-Instruct",
                "--host": "0.0.0.0",
                "--port": 30000,
                "--trust-remote-code": True,
                "--speculative-algorithm": "EAGLE3",
                "--speculative-num-steps": 5,
                "--speculative-eagle-topk": 4,
                "--disable-cuda-graph": True,
            },
        },
        None,
    ),
    (
        (
            "python3.12 -m sglang.launch_server   --model Qwen/QwQ-32B --model-path /home/model/Qwen/QwQ-32B   "
            "--host 0.0.0.0 --port 30000 --tensor_parallel_size 4   --log-level info   --enable-metrics"
            " --mem-fraction-static 0.85 --chunked-prefill-size -1 --cuda-graph-bs 1 2 4 8          "
        ),
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {},
            "flags": {
                "--model": "Qwen/QwQ-32B",
                "--model-path": "/home/model/Qwen/QwQ-32B",
                "--host": "0.0.0.0",
                "--port": 30000,
                "--tensor-parallel-size": 4,
                "--log-level": "info",
                "--enable-metrics": True,
                "--mem-fraction-static": 0.85,
                "--chunked-prefill-size": -1,
                "--cuda-graph-bs": [1, 2, 4, 8],
            },
        },
        None,
    ),
    (
        "$ python3 -m sglang.launch_server \\",
        LaunchCommand,
        {"program": "sglang.launch_server", "env": {}, "flags": {}, "text": "python3 -m sglang.launch_server \\"},
        None,
    ),
    (
        "sglang serve --model-path Qwen/Qwen3-8B --port 30000 --json-model-override-args '{\"rope_scaling\": null}'",
        LaunchCommand,
        {
            "program": "sglang serve",
            "env": {},
            "flags": {
                "--model-path": "Qwen/Qwen3-8B",
                "--port": 30000,
                "--json-model-override-args": '{"rope_scaling": null}',
            },
        },
        None,
    ),
    (
        "python3 -m sglang.bench_serving --backend sglang --dataset-name sharegpt --num-prompts 3000",
        LaunchCommand,
        {
            "program": "sglang.bench_serving",
            "env": {},
            "flags": {"--backend": "sglang", "--dataset-name": "sharegpt", "--num-prompts": 3000},
        },
        None,
    ),
    (
        "Command: python3 -m sglang.bench_serving --host 127.0.0.1 --port 20066 --request-rate inf",
        LaunchCommand,
        {
            "program": "sglang.bench_serving",
            "env": {},
            "flags": {"--host": "127.0.0.1", "--port": 20066, "--request-rate": float("inf")},
        },
        None,
    ),
    (
        "nohup CUDA_VISIBLE_DEVICES=0,1 /usr/bin/python3 -m sglang.launch_server --model-path m --tp=2 > server.log 2>&1 &",
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {"CUDA_VISIBLE_DEVICES": "0,1"},
            "flags": {"--model-path": "m", "--tp": 2},
        },
        None,
    ),
    (
        "  --quantization modelopt_fp4 \\",
        LaunchCommand,
        {"program": "", "env": {}, "flags": {"--quantization": "modelopt_fp4"}},
        None,
    ),
    (
        "    --speculative-num-steps 4 \\",
        LaunchCommand,
        {"program": "", "env": {}, "flags": {"--speculative-num-steps": 4}},
        None,
    ),
    (
        "    --speculative-num-draft-tokens 5",
        LaunchCommand,
        {"program": "", "env": {}, "flags": {"--speculative-num-draft-tokens": 5}},
        None,
    ),
    (
        "  --trust-remote-code --enable-dp-attention --dp 8 \\",
        LaunchCommand,
        {
            "program": "",
            "env": {},
            "flags": {"--trust-remote-code": True, "--enable-dp-attention": True, "--dp": 8},
        },
        None,
    ),
    # ------------------------------------------------------------------ DP controller, dist init
    (
        "[2026-03-07 15:30:05] Launch DP1 starting at GPU #4.",
        LaunchDp,
        {"dp_rank": 1, "base_gpu": 4},
        ("2026-03-07 15:30:05", None),
    ),
    (
        "[2026-03-07 15:30:11 TP0] Init torch distributed begin.",
        DistInitBegin,
        {"variant": "torch"},
        ("2026-03-07 15:30:11", "TP0"),
    ),
    ("[gpu_id=0] Init nccl begin.", DistInitBegin, {"variant": "nccl"}, (None, "GPU0")),
    ("[15:31:10 TP0] Init nccl begin.", DistInitBegin, {"variant": "nccl"}, ("15:31:10", "TP0")),
    (
        "[2026-10-30 09:12:18 TP0] Init parallel begin.",
        DistInitBegin,
        {"variant": "parallel"},
        ("2026-10-30 09:12:18", "TP0"),
    ),
    (
        "[2026-03-07 15:30:13 TP0] Init torch distributed ends. elapsed=1.93 s, mem usage=0.79 GB",
        DistInitEnd,
        {"variant": "torch", "elapsed_s": 1.93, "mem_usage_gb": 0.79},
        ("2026-03-07 15:30:13", "TP0"),
    ),
    (
        "[2025-03-08 12:29:13 TP2] Init torch distributed ends. mem usage=0.13 GB",
        DistInitEnd,
        {"variant": "torch", "elapsed_s": None, "mem_usage_gb": 0.13},
        ("2025-03-08 12:29:13", "TP2"),
    ),
    (
        "[2026-10-30 09:12:20 TP0] Init parallel ends. elapsed=2.10 s",
        DistInitEnd,
        {"variant": "parallel", "elapsed_s": 2.1, "mem_usage_gb": None},
        ("2026-10-30 09:12:20", "TP0"),
    ),
    # cut at the end of an excerpt (corpus dev-032): recognised, the cut value is not trusted
    (
        "Init torch distributed ends. mem usage=0.58 G",
        DistInitEnd,
        {"variant": "torch", "elapsed_s": None, "mem_usage_gb": None},
        None,
    ),
    (
        "[2026-10-30 09:12:19 TP0] Memory baseline taken. mem usage=0.52 GB",
        KnownMessage,
        {
            "code": "memory-baseline",
            "text": "Memory baseline taken. mem usage=0.52 GB",
            "fields": {"mem_usage_gb": 0.52},
        },
        ("2026-10-30 09:12:19", "TP0"),
    ),
    (
        "[2026-10-30 09:12:21 TP0] NCCL warmup completed in 0.412s (tp_size=8, pp_size=1, ep_size=1)",
        KnownMessage,
        {
            "code": "comm-warmup-done",
            "text": "NCCL warmup completed in 0.412s (tp_size=8, pp_size=1, ep_size=1)",
            "fields": {
                "backend": "NCCL",
                "seconds": 0.412,
                "tp_size": 8,
                "pp_size": 1,
                "ep_size": 1,
            },
        },
        ("2026-10-30 09:12:21", "TP0"),
    ),
    # ------------------------------------------------------------------ NCCL / Gloo
    (
        "[2025-03-08 12:29:12 TP3] sglang is using nccl==2.21.5",
        NcclVersion,
        {"version": "2.21.5"},
        ("2025-03-08 12:29:12", "TP3"),
    ),
    (
        (
            "sglang-0:100:1012 [1] NCCL INFO ncclCommInitRank comm 0x55c8b7ed9050 rank 1 nranks 16 cudaDev 1 "
            "nvmlDev 1 busId 3a000 commId 0x11e35ff62bc85e0d - Init COMPLETE"
        ),
        NcclLog,
        {
            "host": "sglang-0",
            "pid": 100,
            "tid": 1012,
            "device": 1,
            "level": "INFO",
            "text": "ncclCommInitRank comm 0x55c8b7ed9050 rank 1 nranks 16 cudaDev 1 nvmlDev 1 busId 3a000 "
            "commId 0x11e35ff62bc85e0d - Init COMPLETE",
            "nccl_rank": 1,
            "nranks": 16,
        },
        None,
    ),
    (
        "node1:534:534 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        NcclLog,
        {
            "host": "node1",
            "pid": 534,
            "tid": 534,
            "device": 0,
            "level": "INFO",
            "text": "NCCL version 2.21.5+cuda12.4",
            "version": "2.21.5+cuda12.4",
        },
        None,
    ),
    (
        "gpu-07.cluster:2211:2890 [3] NCCL WARN NET/IB : Got async event : port error",
        NcclLog,
        {
            "host": "gpu-07.cluster",
            "pid": 2211,
            "tid": 2890,
            "device": 3,
            "level": "WARN",
            "text": "NET/IB : Got async event : port error",
        },
        None,
    ),
    (
        "[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
        GlooConnected,
        {"gloo_rank": 0, "peers": 7, "expected": 7},
        None,
    ),
    # ------------------------------------------------------------------ weights
    (
        "[2026-03-07 15:30:13 TP0] Load weight begin. avail mem=78.31 GB",
        WeightLoadBegin,
        {"avail_mem_gb": 78.31},
        ("2026-03-07 15:30:13", "TP0"),
    ),
    (
        "[gpu_id=0] Load weight begin. avail mem=78.31 GB",
        WeightLoadBegin,
        {"avail_mem_gb": 78.31},
        (None, "GPU0"),
    ),
    (
        "[15:31:10 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=10.03 GB",
        WeightLoadEnd,
        {"model_class": "LlamaForCausalLM", "dtype": "torch.float16", "avail_mem_gb": 10.03},
        ("15:31:10", "TP0"),
    ),
    (
        (
            "[2025-03-08 12:29:21 TP1] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=6.09 GB, "
            "mem usage=15.54 GB."
        ),
        WeightLoadEnd,
        {
            "model_class": "Qwen2ForCausalLM",
            "dtype": "torch.bfloat16",
            "avail_mem_gb": 6.09,
            "mem_usage_gb": 15.54,
        },
        ("2025-03-08 12:29:21", "TP1"),
    ),
    (
        (
            "[2026-03-07 15:30:18 TP0] Load weight end. elapsed=4.12 s, type=LlamaForCausalLM, dtype=torch.bfloat16, "
            "avail mem=63.27 GB, mem usage=15.04 GB."
        ),
        WeightLoadEnd,
        {
            "elapsed_s": 4.12,
            "model_class": "LlamaForCausalLM",
            "dtype": "torch.bfloat16",
            "avail_mem_gb": 63.27,
            "mem_usage_gb": 15.04,
        },
        ("2026-03-07 15:30:18", "TP0"),
    ),
    (
        (
            "[2026-04-05 10:00:00 TP0] Load weight end. elapsed=31.77 s, type=DeepseekV3ForCausalLM, quant=fp8, fmt=e4m3, "
            "avail mem=12.40 GB, mem usage=82.61 GB."
        ),
        WeightLoadEnd,
        {
            "elapsed_s": 31.77,
            "model_class": "DeepseekV3ForCausalLM",
            "quant": "fp8",
            "avail_mem_gb": 12.4,
            "mem_usage_gb": 82.61,
        },
        ("2026-04-05 10:00:00", "TP0"),
    ),
    (
        (
            "[2026-04-05 10:00:00 TP0] Load weight end. elapsed=9.01 s, type=Qwen3ForCausalLM, quant=modelopt_fp4, bits=4, "
            "quant_algo=NVFP4, avail mem=60.00 GB, mem usage=5.50 GB."
        ),
        WeightLoadEnd,
        {
            "elapsed_s": 9.01,
            "model_class": "Qwen3ForCausalLM",
            "quant": "modelopt_fp4",
            "avail_mem_gb": 60.0,
            "mem_usage_gb": 5.5,
        },
        ("2026-04-05 10:00:00", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:13:40 TP0] Load weight end. Committed real weights after CUDA graph capture in 3.21 s "
            "(capture overlap window 2.00 s, startup overlap total 5.00 s)"
        ),
        WeightLoadEnd,
        {"elapsed_s": 3.21, "committed_after_capture": True},
        ("2026-10-30 09:13:40", "TP0"),
    ),
    (
        "[2026-03-07 15:30:21 TP0] Using draft model load_format: 'auto'",
        KnownMessage,
        {
            "code": "draft-load-format",
            "text": "Using draft model load_format: 'auto'",
            "fields": {"load_format": "auto"},
        },
        ("2026-03-07 15:30:21", "TP0"),
    ),
    (
        "[2024-09-02 10:00:00 TP0] Compute capability below sm80. Use float16 due to lack of bfloat16 support.",
        KnownMessage,
        {
            "code": "fp16-below-sm80",
            "text": "Compute capability below sm80. Use float16 due to lack of bfloat16 support.",
            "fields": {},
        },
        ("2024-09-02 10:00:00", "TP0"),
    ),
    # ------------------------------------------------------------------ KV cache and pools
    (
        "[2026-03-07 15:30:18 TP0] Using KV cache dtype: torch.bfloat16",
        KvCacheDtype,
        {"dtype": "torch.bfloat16"},
        ("2026-03-07 15:30:18", "TP0"),
    ),
    (
        "[2025-01-27 10:00:00 TP0] KV Cache is allocated. K size: 1.00 GB, V size: 1.00 GB.",
        KvCacheAllocated,
        {"cache_name": "KV Cache", "k_size_gb": 1.0, "v_size_gb": 1.0},
        ("2025-01-27 10:00:00", "TP0"),
    ),
    (
        "[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V size: 1.42 GB",
        KvCacheAllocated,
        {"cache_name": "KV Cache", "tokens": 46611, "k_size_gb": 1.42, "v_size_gb": 1.42},
        ("2025-03-08 12:29:21", "TP0"),
    ),
    (
        "[2025-03-07 21:00:00 TP3] KV Cache is allocated. #tokens: 1153472, KV size: 75.37 GB",
        KvCacheAllocated,
        {"cache_name": "KV Cache", "tokens": 1153472, "kv_size_gb": 75.37},
        ("2025-03-07 21:00:00", "TP3"),
    ),
    (
        (
            "[2026-06-08 07:20:53 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1106304, K size: 25.32 GB, "
            "V size: 25.32 GB"
        ),
        KvCacheAllocated,
        {
            "cache_name": "KV Cache",
            "dtype": "torch.bfloat16",
            "tokens": 1106304,
            "k_size_gb": 25.32,
            "v_size_gb": 25.32,
        },
        ("2026-06-08 07:20:53", "TP0"),
    ),
    (
        "[2026-10-30 09:13:41 TP0] Draft KV Cache is allocated. dtype: torch.bfloat16, #tokens: 412345, KV size: 1.17 GB",
        KvCacheAllocated,
        {
            "cache_name": "Draft KV Cache",
            "dtype": "torch.bfloat16",
            "tokens": 412345,
            "kv_size_gb": 1.17,
        },
        ("2026-10-30 09:13:41", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:13:41 TP0] KV Cache VA upper bound. dtype: torch.bfloat16, #tokens: 412345, K size: 25.17 GB, "
            "V size: 25.17 GB"
        ),
        KvCacheAllocated,
        {
            "cache_name": "KV Cache",
            "upper_bound": True,
            "dtype": "torch.bfloat16",
            "tokens": 412345,
            "k_size_gb": 25.17,
            "v_size_gb": 25.17,
        },
        ("2026-10-30 09:13:41", "TP0"),
    ),
    (
        (
            "[2026-03-07 15:30:19 TP0] Mamba Cache is allocated. max_mamba_cache_size: 520, conv_state size: 0.60GB, "
            "ssm_state size: 25.16GB "
        ),
        MambaCacheAllocated,
        {"max_size": 520, "conv_gb": 0.6, "ssm_gb": 25.16},
        ("2026-03-07 15:30:19", "TP0"),
    ),
    (
        (
            "[2026-03-07 15:30:19 TP0] Mamba Cache is allocated. max_mamba_cache_size: 520, conv_state size: 0.60GB, "
            "ssm_state size: 25.16GB intermediate_ssm_state_cache size: 1.25GB intermediate_conv_window_cache size: 0.05GB "
        ),
        MambaCacheAllocated,
        {
            "max_size": 520,
            "conv_gb": 0.6,
            "ssm_gb": 25.16,
            "intermediate_ssm_gb": 1.25,
            "intermediate_conv_gb": 0.05,
        },
        ("2026-03-07 15:30:19", "TP0"),
    ),
    (
        "[2026-03-07 15:30:19 TP0] Use sliding window memory pool. full_layer_tokens=122880, swa_layer_tokens=98304",
        SwaPoolAllocated,
        {"full_tokens": 122880, "swa_tokens": 98304},
        ("2026-03-07 15:30:19", "TP0"),
    ),
    (
        "[2026-03-07 15:30:19 TP0] Use sliding window memory pool (all SWA). swa_layer_tokens=98304",
        SwaPoolAllocated,
        {"swa_tokens": 98304},
        ("2026-03-07 15:30:19", "TP0"),
    ),
    (
        "[2025-10-24 10:00:00 TP0] SWAKVPool mem usage: 12.34 GB, swa size: 98304, full size: 122880",
        SwaPoolAllocated,
        {"mem_usage_gb": 12.34, "swa_tokens": 98304, "full_tokens": 122880},
        ("2025-10-24 10:00:00", "TP0"),
    ),
    (
        "[2026-03-07 15:30:19 TP0] Memory pool end. avail mem=8.43 GB",
        MemoryPoolEnd,
        {"avail_mem_gb": 8.43},
        ("2026-03-07 15:30:19", "TP0"),
    ),
    (
        "[gpu_id=0] Memory pool end. avail mem=8.43 GB",
        MemoryPoolEnd,
        {"avail_mem_gb": 8.43},
        (None, "GPU0"),
    ),
    (
        "[2026-03-07 15:30:19 TP0] Allocating 12.00 GB host memory for hierarchical KV cache.",
        KnownMessage,
        {
            "code": "hicache-host-alloc",
            "text": "Allocating 12.00 GB host memory for hierarchical KV cache.",
            "fields": {"gb": 12.0},
        },
        ("2026-03-07 15:30:19", "TP0"),
    ),
    # ------------------------------------------------------------------ graph capture: begin
    (
        "[gpu_id=0] Capture cuda graph begin.",
        CaptureBegin,
        {"graph": "cuda graph", "graph_kind": "target", "device": "cuda", "avail_mem_gb": None},
        (None, "GPU0"),
    ),
    (
        "[15:31:10 TP0] Capture cuda graph begin. This can take up to several minutes.",
        CaptureBegin,
        {"graph": "cuda graph", "graph_kind": "target", "device": "cuda", "avail_mem_gb": None},
        ("15:31:10", "TP0"),
    ),
    (
        "[2026-03-07 15:30:20 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=7.81 GB",
        CaptureBegin,
        {"graph": "cuda graph", "graph_kind": "target", "device": "cuda", "avail_mem_gb": 7.81},
        ("2026-03-07 15:30:20", "TP0"),
    ),
    (
        "[2025-10-24 10:00:00] Capture cpu graph begin. This can take up to several minutes. avail mem=120.00 GB",
        CaptureBegin,
        {"graph": "cpu graph", "graph_kind": "target", "device": "cpu", "avail_mem_gb": 120.0},
        ("2025-10-24 10:00:00", None),
    ),
    (
        (
            "[2025-09-05 20:49:27 TP6] Capture draft cuda graph begin. This can take up to several minutes. "
            "avail mem=15.52 GB"
        ),
        CaptureBegin,
        {
            "graph": "draft cuda graph",
            "graph_kind": "draft",
            "device": "cuda",
            "avail_mem_gb": 15.52,
        },
        ("2025-09-05 20:49:27", "TP6"),
    ),
    (
        (
            "[2025-09-05 20:49:27 TP0] Capture draft extend cuda graph begin. This can take up to several minutes. "
            "avail mem=15.31 GB"
        ),
        CaptureBegin,
        {
            "graph": "draft extend cuda graph",
            "graph_kind": "draft-extend",
            "device": "cuda",
            "avail_mem_gb": 15.31,
        },
        ("2025-09-05 20:49:27", "TP0"),
    ),
    (
        (
            "[2026-03-07 15:30:40 TP0] Capture draft extend cuda graph begin (step 2). This can take up to several "
            "minutes. avail mem=5.90 GB"
        ),
        CaptureBegin,
        {
            "graph": "draft extend cuda graph",
            "graph_kind": "draft-extend",
            "device": "cuda",
            "avail_mem_gb": 5.9,
        },
        ("2026-03-07 15:30:40", "TP0"),
    ),
    (
        "[2026-03-07 15:30:40 TP0] Capture piecewise CUDA graph begin. avail mem=7.00 GB",
        CaptureBegin,
        {
            "graph": "piecewise CUDA graph",
            "graph_kind": "piecewise",
            "device": "cuda",
            "avail_mem_gb": 7.0,
        },
        ("2026-03-07 15:30:40", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:13:50 TP0] Capture target prefill CUDA graph begin. backend=breakable, "
            "num_tokens=[512, 1024, 2048], avail mem=27.10 GB"
        ),
        CaptureBegin,
        {
            "graph": "target prefill CUDA graph",
            "graph_kind": "prefill",
            "device": "cuda",
            "avail_mem_gb": 27.1,
            "backend": "breakable",
            "sizes": (512, 1024, 2048),
        },
        ("2026-10-30 09:13:50", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:14:08 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
            "avail mem=9.41 GB"
        ),
        CaptureBegin,
        {
            "graph": "target decode CUDA graph",
            "graph_kind": "target",
            "device": "cuda",
            "avail_mem_gb": 9.41,
            "backend": "full",
        },
        ("2026-10-30 09:14:08", "TP0"),
    ),
    (
        (
            "[2026-08-08 10:00:00 TP0] Capture target verify NPU graph begin. backend=full, num_tokens_per_req=4, "
            "bs=[1, 2, 4, 8], avail mem=30.00 GB"
        ),
        CaptureBegin,
        {
            "graph": "target verify NPU graph",
            "graph_kind": "verify",
            "device": "npu",
            "avail_mem_gb": 30.0,
            "backend": "full",
            "sizes": (1, 2, 4, 8),
        },
        ("2026-08-08 10:00:00", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:14:20 TP0] Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=4, "
            "bs=[1, 2, 4], avail mem=8.70 GB"
        ),
        CaptureBegin,
        {
            "graph": "draft decode CUDA graph",
            "graph_kind": "draft",
            "device": "cuda",
            "avail_mem_gb": 8.7,
            "backend": "full",
            "sizes": (1, 2, 4),
        },
        ("2026-10-30 09:14:20", "TP0"),
    ),
    # ------------------------------------------------------------------ graph capture: end
    (
        "[2024-12-03 10:00:00 TP0] Capture cuda graph end. Time elapsed: 6.24 s",
        CaptureEnd,
        {
            "graph": "cuda graph",
            "graph_kind": "target",
            "device": "cuda",
            "elapsed_s": 6.24,
            "mem_usage_gb": None,
            "avail_mem_gb": None,
        },
        ("2024-12-03 10:00:00", "TP0"),
    ),
    (
        "[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem usage=0.93 GB.",
        CaptureEnd,
        {
            "graph": "cuda graph",
            "graph_kind": "target",
            "device": "cuda",
            "elapsed_s": 7.23,
            "mem_usage_gb": 0.93,
            "avail_mem_gb": 0.53,
        },
        ("2025-03-08 12:29:28", "TP0"),
    ),
    (
        "[2026-03-07 15:30:27 TP0] Capture cuda graph end. Time elapsed: 6.24 s. mem usage=0.55 GB. avail mem=7.26 GB.",
        CaptureEnd,
        {
            "graph": "cuda graph",
            "graph_kind": "target",
            "device": "cuda",
            "elapsed_s": 6.24,
            "mem_usage_gb": 0.55,
            "avail_mem_gb": 7.26,
        },
        ("2026-03-07 15:30:27", "TP0"),
    ),
    (
        (
            "[2025-09-05 20:50:29 TP6] Capture draft cuda graph end. Time elapsed: 62.67 s. mem usage=0.21 GB. "
            "avail mem=15.31 GB."
        ),
        CaptureEnd,
        {
            "graph": "draft cuda graph",
            "graph_kind": "draft",
            "device": "cuda",
            "elapsed_s": 62.67,
            "mem_usage_gb": 0.21,
            "avail_mem_gb": 15.31,
        },
        ("2025-09-05 20:50:29", "TP6"),
    ),
    (
        (
            "[2026-03-07 15:31:20 TP0] Capture piecewise CUDA graph end. Time elapsed: 41.87 s. mem usage=1.12 GB. "
            "avail mem=6.01 GB."
        ),
        CaptureEnd,
        {
            "graph": "piecewise CUDA graph",
            "graph_kind": "piecewise",
            "device": "cuda",
            "elapsed_s": 41.87,
            "mem_usage_gb": 1.12,
            "avail_mem_gb": 6.01,
        },
        ("2026-03-07 15:31:20", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:14:08 TP0] Capture target prefill CUDA graph end. elapsed=18.33 s, mem usage=1.12 GB, "
            "avail mem=9.41 GB."
        ),
        CaptureEnd,
        {
            "graph": "target prefill CUDA graph",
            "graph_kind": "prefill",
            "device": "cuda",
            "elapsed_s": 18.33,
            "mem_usage_gb": 1.12,
            "avail_mem_gb": 9.41,
        },
        ("2026-10-30 09:14:08", "TP0"),
    ),
    (
        (
            "[2026-10-30 09:14:15 TP0] Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 16, 24, 32], elapsed=7.02 s, "
            "mem usage=0.61 GB, avail mem=8.80 GB."
        ),
        CaptureEnd,
        {
            "graph": "target decode CUDA graph",
            "graph_kind": "target",
            "device": "cuda",
            "elapsed_s": 7.02,
            "mem_usage_gb": 0.61,
            "avail_mem_gb": 8.8,
            "sizes": (1, 2, 4, 8, 16, 24, 32),
        },
        ("2026-10-30 09:14:15", "TP0"),
    ),
    # ------------------------------------------------------------------ graph capture: sizes
    (
        "[2026-06-08 07:20:54 TP0] Capture cuda graph bs [1, 2, 4, 8, 10]",
        CaptureBatchSizes,
        {"sizes": (1, 2, 4, 8, 10), "what": "bs"},
        ("2026-06-08 07:20:54", "TP0"),
    ),
    (
        "[2025-10-24 10:00:00] Capture cpu graph bs [1, 2, 4]",
        CaptureBatchSizes,
        {"sizes": (1, 2, 4), "what": "bs"},
        ("2025-10-24 10:00:00", None),
    ),
    (
        "[2026-03-07 15:30:40 TP0] Capture cuda graph num tokens [8192, 7680, 7168, 6656]",
        CaptureBatchSizes,
        {"sizes": (8192, 7680, 7168, 6656), "what": "num tokens"},
        ("2026-03-07 15:30:40", "TP0"),
    ),
    # a list cut at the end of an excerpt: only the numbers a ',' closed
    (
        "[2025-11-30 12:50:10] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 3",
        CaptureBatchSizes,
        {"sizes": (1, 2, 4, 8, 12, 16, 24), "what": "bs"},
        ("2025-11-30 12:50:10", None),
    ),
    # ------------------------------------------------------------------ tqdm bars
    (
        "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.23s/it]",
        ProgressBar,
        {
            "desc": "Loading safetensors checkpoint shards",
            "bar_kind": "checkpoint-load",
            "percent": 50,
            "n": 1,
            "total": 2,
            "elapsed_s": 1.0,
            "remaining_s": 1.0,
        },
        None,
    ),
    (
        "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
        ProgressBar,
        {
            "desc": "Loading safetensors checkpoint shards",
            "bar_kind": "checkpoint-load",
            "percent": 0,
            "n": 0,
            "total": 4,
            "elapsed_s": 0.0,
        },
        None,
    ),
    (
        "Multi-thread loading shards: 100% Completed | 8/8 [01:02<00:00,  7.81s/it]",
        ProgressBar,
        {
            "desc": "Multi-thread loading shards",
            "bar_kind": "checkpoint-load",
            "percent": 100,
            "n": 8,
            "total": 8,
            "elapsed_s": 62.0,
            "remaining_s": 0.0,
        },
        None,
    ),
    (
        "Capturing batches (bs=1 avail_mem=37.08 GB): 100%|██████████| 36/36 [00:05<00:00,  6.31it/s]",
        ProgressBar,
        {
            "desc": "Capturing batches (bs=1 avail_mem=37.08 GB)",
            "bar_kind": "capture",
            "percent": 100,
            "n": 36,
            "total": 36,
            "elapsed_s": 5.0,
            "remaining_s": 0.0,
        },
        None,
    ),
    (
        "Capturing batches (avail_mem=20.21 GB):  25%|██▌       | 1/4 [00:00<00:01,  2.02it/s]",
        ProgressBar,
        {
            "desc": "Capturing batches (avail_mem=20.21 GB)",
            "bar_kind": "capture",
            "percent": 25,
            "n": 1,
            "total": 4,
            "elapsed_s": 0.0,
            "remaining_s": 1.0,
        },
        None,
    ),
    (
        "  0%|          | 0/13 [00:00<?, ?it/s]",
        ProgressBar,
        {"desc": "", "bar_kind": "other", "percent": 0, "n": 0, "total": 13, "elapsed_s": 0.0},
        None,
    ),
    (
        "Compiling num tokens (num_tokens=8192):  12%|█▏        | 7/58 [00:09<01:07,  1.32s/it]",
        ProgressBar,
        {
            "desc": "Compiling num tokens (num_tokens=8192)",
            "bar_kind": "piecewise",
            "percent": 12,
            "n": 7,
            "total": 58,
            "elapsed_s": 9.0,
            "remaining_s": 67.0,
        },
        None,
    ),
    (
        "Capturing num tokens (num_tokens=4 avail_mem=6.12 GB): 100%|██████████| 58/58 [00:31<00:00,  1.84it/s]",
        ProgressBar,
        {
            "desc": "Capturing num tokens (num_tokens=4 avail_mem=6.12 GB)",
            "bar_kind": "piecewise",
            "percent": 100,
            "n": 58,
            "total": 58,
            "elapsed_s": 31.0,
            "remaining_s": 0.0,
        },
        None,
    ),
    (
        "Capturing prefill shape (num_tokens=512 avail_mem=27.10 GB):  50%|█████     | 3/6 [00:04<00:04,  1.40s/it]",
        ProgressBar,
        {
            "desc": "Capturing prefill shape (num_tokens=512 avail_mem=27.10 GB)",
            "bar_kind": "prefill-capture",
            "percent": 50,
            "n": 3,
            "total": 6,
            "elapsed_s": 4.0,
            "remaining_s": 4.0,
        },
        None,
    ),
    (
        "DeepGEMM warmup: 100%|██████████| 8192/8192 [01:40<00:00, 81.92it/s]",
        ProgressBar,
        {
            "desc": "DeepGEMM warmup",
            "bar_kind": "other",
            "percent": 100,
            "n": 8192,
            "total": 8192,
            "elapsed_s": 100.0,
            "remaining_s": 0.0,
        },
        None,
    ),
    (
        "Fetching 17 files: 100%|██████████| 17/17 [00:00<00:00, 123.45it/s]",
        ProgressBar,
        {
            "desc": "Fetching 17 files",
            "bar_kind": "download",
            "percent": 100,
            "n": 17,
            "total": 17,
            "elapsed_s": 0.0,
            "remaining_s": 0.0,
        },
        None,
    ),
    (
        "model-00001-of-00004.safetensors: 100%|██████████| 4.98G/4.98G [00:20<00:00, 245MB/s]",
        ProgressBar,
        {
            "desc": "model-00001-of-00004.safetensors",
            "bar_kind": "download",
            "percent": 100,
            "elapsed_s": 20.0,
            "remaining_s": 0.0,
        },
        None,
    ),
    # a bar cut mid-way at the end of an excerpt (corpus dev-030 / dev-041)
    (
        "Capturing batches (bs=10 avail_mem=11.99 GB):   0%|                         ",
        ProgressBar,
        {
            "desc": "Capturing batches (bs=10 avail_mem=11.99 GB)",
            "bar_kind": "capture",
            "percent": 0,
        },
        None,
    ),
    (
        "100%|███████████████████████████████████",
        ProgressBar,
        {"desc": "", "bar_kind": "other", "percent": 100},
        None,
    ),
    # ------------------------------------------------------------------ summary, profiled value
    (
        "[gpu_id=0] max_total_num_tokens=287208, max_prefill_tokens=16384, context_len=8192",
        SchedulerLimits,
        {"max_total_num_tokens": 287208, "max_prefill_tokens": 16384, "context_len": 8192},
        (None, "GPU0"),
    ),
    (
        (
            "[15:31:10 TP0] max_total_num_tokens=287208, max_prefill_tokens=16384, max_running_requests=4097, "
            "context_len=8192"
        ),
        SchedulerLimits,
        {
            "max_total_num_tokens": 287208,
            "max_prefill_tokens": 16384,
            "max_running_requests": 4097,
            "context_len": 8192,
        },
        ("15:31:10", "TP0"),
    ),
    # 0.1.x, each rank without an envelope: dev/t-002 (sgl-project/sglang#220)
    (
        "Rank 2: max_total_num_token=293751, max_prefill_num_token=48958, context_len=4096, model_mode=['flashinfer']",
        SchedulerLimits,
        {"max_total_num_tokens": 293751, "max_prefill_tokens": 48958, "context_len": 4096},
        None,
    ),
    (
        (
            "[2025-03-08 12:29:29 TP0] max_total_num_tokens=46611, chunked_prefill_size=2048, max_prefill_tokens=16384, "
            "max_running_requests=2049, context_len=131072"
        ),
        SchedulerLimits,
        {
            "max_total_num_tokens": 46611,
            "chunked_prefill_size": 2048,
            "max_prefill_tokens": 16384,
            "max_running_requests": 2049,
            "context_len": 131072,
        },
        ("2025-03-08 12:29:29", "TP0"),
    ),
    (
        (
            "[2026-03-07 15:30:28 TP0] max_total_num_tokens=444877, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "max_running_requests=4096, context_len=131072, available_gpu_mem=7.26 GB"
        ),
        SchedulerLimits,
        {
            "max_total_num_tokens": 444877,
            "chunked_prefill_size": 8192,
            "max_prefill_tokens": 16384,
            "max_running_requests": 4096,
            "context_len": 131072,
            "available_mem_gb": 7.26,
        },
        ("2026-03-07 15:30:28", "TP0"),
    ),
    (
        (
            "[2025-10-24 10:00:00] max_total_num_tokens=100000, chunked_prefill_size=-1, max_prefill_tokens=16384, "
            "max_running_requests=64, context_len=32768, available_cpu_mem=200.50 GB"
        ),
        SchedulerLimits,
        {
            "max_total_num_tokens": 100000,
            "chunked_prefill_size": -1,
            "max_prefill_tokens": 16384,
            "max_running_requests": 64,
            "context_len": 32768,
            "available_mem_gb": 200.5,
        },
        ("2025-10-24 10:00:00", None),
    ),
    ("max_total_num_tokens=1000000", SchedulerLimits, {"max_total_num_tokens": 1000000}, None),
    (
        (
            "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. "
            "Use the profiled value instead."
        ),
        ProfiledTokensExceeded,
        {"max_total_tokens": 131072, "profiled": -561981},
        ("2025-07-02 07:41:59", "DP0 TP0"),
    ),
    # ------------------------------------------------------------------ timings, readiness notices
    (
        (
            "[2026-10-30 09:14:20] Engine startup timings (s): load_weight=21.40, kv_cache_allocation=0.88, "
            "scheduler_e2e=63.12, cuda_graph={decode=7.02, prefill=18.33}, tokenizer_e2e=1.10"
        ),
        EngineStartupTimings,
        {
            "phases": {
                "load_weight": 21.4,
                "kv_cache_allocation": 0.88,
                "scheduler_e2e": 63.12,
                "cuda_graph.decode": 7.02,
                "cuda_graph.prefill": 18.33,
                "tokenizer_e2e": 1.1,
            }
        },
        ("2026-10-30 09:14:20", None),
    ),
    (
        "[2026-03-07 15:30:29] Weights are ready after 12.00 seconds",
        WeightsReady,
        {"seconds": 12.0},
        ("2026-03-07 15:30:29", None),
    ),
]


def _known(
    terminal_text: str,
    code: str,
    fields: dict[str, Any],
    ts: str = "2026-03-07 15:30:29",
    rank: str | None = None,
) -> tuple:
    prefix = f"[{ts}{' ' + rank if rank else ''}] "
    return (
        prefix + terminal_text,
        KnownMessage,
        {"code": code, "text": terminal_text, "fields": fields},
        (ts, rank),
    )


KNOWN_CASES = [
    _known("Warmup ended", "warmup-ended", {}),
    _known("Start of pd disaggregation warmup ...", "pd-warmup-start", {}),
    _known(
        "End of prefill disaggregation mode warmup with status 200, resp: [{'text': '%', 'meta_info': {'id': 'x'}}]",
        "pd-warmup-end",
        {"status": 200},
    ),
    _known("End of disaggregation warmup", "pd-warmup-end", {}),
    _known(
        "Disaggregation warmup requests completed for all 2 DP ranks",
        "disagg-warmup-dp-done",
        {"dp_ranks": 2},
    ),
    _known(
        "Using default chat sampling params from model generation config: {'temperature': 0.6, 'top_k': 20, 'top_p': 0.95}",
        "chat-sampling-defaults",
        {"params": {"temperature": 0.6, "top_k": 20, "top_p": 0.95}},
    ),
    _known(
        "Using default HuggingFace chat template with detected content format: string",
        "chat-template-format",
        {"content_format": "string"},
    ),
    _known(
        "Auto-detected --reasoning-parser as 'qwen3' from chat template",
        "chat-template-autodetect",
        {"option": "--reasoning-parser", "value": "qwen3"},
    ),
    _known(
        "--reasoning_parser=auto specified but could not detect reasoning parser from chat template. "
        "Disabling reasoning parser.",
        "chat-template-autodetect-failed",
        {"option": "--reasoning-parser"},
    ),
    _known("Selected serve backend 'llm'", "serve-backend", {"backend": "llm"}),
    _known(
        "Dispatch override enabled: --model-type=diffusion (skip auto detection)",
        "serve-dispatch-override",
        {"model_type": "diffusion"},
    ),
    _known("Running FlashInfer autotune...", "flashinfer-autotune-begin", {}, rank="TP0"),
    _known("FlashInfer autotune completed.", "flashinfer-autotune-end", {}, rank="TP0"),
    _known(
        "Overlap scheduler is disabled for multimodal models.",
        "overlap-off-multimodal",
        {},
        ts="2025-04-01 18:12:47",
        rank="TP0",
    ),
    _known(
        "Automatically turn off --chunked-prefill-size as it is not supported for mllama",
        "chunked-prefill-off",
        {"model_type": "mllama"},
        rank="TP0",
    ),
    _known("Chunked prefix cache is turned on.", "chunked-prefix-cache-on", {}, rank="TP0"),
    _known(
        "Using hybrid attention backend for decode and prefill: decode_backend=flashinfer, prefill_backend=fa3.",
        "hybrid-attn-backend",
        {"decode_backend": "flashinfer", "prefill_backend": "fa3"},
        rank="TP0",
    ),
    _known(
        "Automatically reduce --mem-fraction-static to 0.855 because this is a multimodal model.",
        "mem-fraction-reduced",
        {"mem_fraction_static": 0.855, "reason": "this is a multimodal model"},
        rank="TP0",
    ),
    _known(
        "Attention backend not specified. Use fa3 backend by default.",
        "attn-backend-default",
        {"backend": "fa3"},
    ),
    _known(
        "FlashInfer MLA optimization is turned on. Use flashinfer backend for DeepseekV3ForCausalLM.",
        "mla-backend-on",
        {"backend": "flashinfer", "model_class": "DeepseekV3ForCausalLM"},
        rank="TP3",
    ),
    _known(
        "MLA optimization is turned on. Use triton backend.",
        "mla-backend-on",
        {"backend": "triton"},
        rank="TP0",
    ),
    _known(
        "The following error message 'operation scheduled before its operands' can be ignored.",
        "ignorable-error-note",
        {"message": "operation scheduled before its operands"},
        rank="TP3",
    ),
    _known(
        "Found local HF snapshot for meta-llama/Llama-3.1-8B-Instruct at /root/.cache/huggingface/hub/snapshots/0e9e39f",
        "hf-snapshot-found",
        {
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "path": "/root/.cache/huggingface/hub/snapshots/0e9e39f",
        },
    ),
    (
        "INFO 03-07 12:29:02 __init__.py:190] Automatically detected platform cuda.",
        KnownMessage,
        {
            "code": "platform-detected",
            "text": "Automatically detected platform cuda.",
            "fields": {"platform": "cuda"},
        },
        ("03-07 12:29:02", None),
    ),
    # M-early lines of ≤0.5.10 have no prefix at all
    (
        "Attention backend not specified. Use flashinfer backend by default.",
        KnownMessage,
        {
            "code": "attn-backend-default",
            "text": "Attention backend not specified. Use flashinfer backend by default.",
            "fields": {"backend": "flashinfer"},
        },
        None,
    ),
]

# Lines cut at the end of an excerpt: still recognised; a value the cut may have shortened is
# not read (None), every value before it is.
CUT_CASES = [
    (
        "[2026-03-07 15:30:13 TP0] Init torch distributed ends. elapsed=1.9",
        DistInitEnd,
        {"variant": "torch", "elapsed_s": None, "mem_usage_gb": None},
        ("2026-03-07 15:30:13", "TP0"),
    ),
    (
        "[2026-03-07 15:30:13 TP0] Load weight begin. avail mem=78.",
        WeightLoadBegin,
        {"avail_mem_gb": None},
        ("2026-03-07 15:30:13", "TP0"),
    ),
    (
        "[2025-03-08 12:29:21 TP1] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bf",
        WeightLoadEnd,
        {"model_class": "Qwen2ForCausalLM"},
        ("2025-03-08 12:29:21", "TP1"),
    ),
    (
        "[2025-03-08 12:29:21 TP1] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail m",
        WeightLoadEnd,
        {"model_class": "Qwen2ForCausalLM", "dtype": "torch.bfloat16"},
        ("2025-03-08 12:29:21", "TP1"),
    ),
    (
        "[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611, K size: 1.42 GB, V si",
        KvCacheAllocated,
        {"cache_name": "KV Cache", "tokens": 46611, "k_size_gb": 1.42},
        ("2025-03-08 12:29:21", "TP0"),
    ),
    (
        "[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 4661",
        KvCacheAllocated,
        {"cache_name": "KV Cache"},
        ("2025-03-08 12:29:21", "TP0"),
    ),
    (
        "max_total_num_tokens=9415616, chunked_prefill_size=8192, max_prefill_tok",
        SchedulerLimits,
        {"max_total_num_tokens": 9415616, "chunked_prefill_size": 8192},
        None,
    ),
    (
        "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the",
        ProfiledTokensExceeded,
        {"max_total_tokens": 131072, "profiled": -561981},
        ("2025-07-02 07:41:59", "DP0 TP0"),
    ),
    (
        "[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.5",
        CaptureEnd,
        {
            "graph": "cuda graph",
            "graph_kind": "target",
            "device": "cuda",
            "elapsed_s": 7.23,
            "mem_usage_gb": None,
            "avail_mem_gb": None,
        },
        ("2025-03-08 12:29:28", "TP0"),
    ),
]

ALL_CASES = CASES + CUT_CASES + KNOWN_CASES


def _defaults(cls: type) -> dict[str, Any]:
    """The default value of every event-specific field (not the Event base fields)."""
    import dataclasses

    base = {"line", "end_line", "ts", "rank", "source", "wrapper"}
    out = {}
    for f in dataclasses.fields(cls):
        if f.name in base:
            continue
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        else:
            out[f.name] = f.default_factory()  # type: ignore[misc]
    return out


@pytest.mark.parametrize(
    ("line", "cls", "fields", "env"), ALL_CASES, ids=[c[0][:70] for c in ALL_CASES]
)
def test_startup_line(parser: Any, line: str, cls: type, fields: dict[str, Any], env: Any) -> None:
    got_env, got_cls, got_fields = parser.parse(line)
    assert got_cls is cls, (got_cls, got_fields)
    expected = dict(fields)
    if cls is LaunchCommand:
        expected.setdefault("text", line)
    # A field the callback leaves out takes the event's default: compare complete field sets.
    full = {**_defaults(cls), **got_fields}
    assert full == {**_defaults(cls), **expected}
    assert _env(got_env) == env
    assert parser.parse(line) == parser.parse_lalr(line)
    assert parser.fast.parse(line) is not None  # every startup rule is flat: no LALR fallback
    cls(**got_fields)  # the fields are real constructor arguments


# ---------------------------------------------------------------------------------- server_args

DATACLASS_ARGS = (
    "server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
    "tokenizer_path='meta-llama/Llama-3.1-8B-Instruct', tokenizer_mode='auto', tokenizer_worker_num=1, "
    "skip_tokenizer_init=False, load_format='auto', model_loader_extra_config='{}', trust_remote_code=False, "
    "context_length=None, is_embedding=False, enable_multimodal=None, revision=None, model_impl='auto', "
    "host='0.0.0.0', port=30000, mem_fraction_static=0.841, max_running_requests=None, "
    "cuda_graph_bs=[1, 2, 4, 8], json_model_override_args='{\"a\": 1}', lora_paths={'a': '/p/a'}, "
    "tp_size=1, random_seed=1043247188, watchdog_timeout=300.0, speculative_accept_threshold_single=1.0, "
    "api_key=None, tool_server=None, max_lora_chunk_size=16)"
)


def test_server_args_dataclass(parser: Any) -> None:
    env, cls, kw = parser.parse("[2026-03-07 15:30:02] " + DATACLASS_ARGS)
    assert cls is ServerArgs
    assert _env(env) == ("2026-03-07 15:30:02", None)
    assert kw["style"] == "dataclass" and kw["complete"] is True
    args = kw["args"]
    assert args["model_path"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert args["tokenizer_worker_num"] == 1 and args["port"] == 30000
    assert args["skip_tokenizer_init"] is False and args["context_length"] is None
    assert args["mem_fraction_static"] == 0.841
    assert args["cuda_graph_bs"] == [1, 2, 4, 8]
    assert args["json_model_override_args"] == '{"a": 1}'
    assert args["lora_paths"] == {"a": "/p/a"}
    assert args["max_lora_chunk_size"] == 16
    assert len(args) == 27
    assert parser.parse(DATACLASS_ARGS) == parser.parse_lalr(DATACLASS_ARGS)


def test_server_args_dict_form(parser: Any) -> None:
    line = (
        "[2026-10-30 09:12:01] server_args={'model_path': 'Qwen/Qwen3-8B', 'tokenizer_path': 'Qwen/Qwen3-8B', "
        "'tokenizer_mode': 'auto', 'tokenizer_backend': 'auto', 'tp_size': 8, 'enable_dp_attention': False, "
        "'cuda_graph_bs': None, 'mem_fraction_static': 0.88}"
    )
    _, cls, kw = parser.parse(line)
    assert cls is ServerArgs
    assert kw == {
        "args": {
            "model_path": "Qwen/Qwen3-8B",
            "tokenizer_path": "Qwen/Qwen3-8B",
            "tokenizer_mode": "auto",
            "tokenizer_backend": "auto",
            "tp_size": 8,
            "enable_dp_attention": False,
            "cuda_graph_bs": None,
            "mem_fraction_static": 0.88,
        },
        "style": "dict",
        "complete": True,
    }
    assert parser.parse(line) == parser.parse_lalr(line)


def test_server_args_object_reprs_kept_as_text(parser: Any) -> None:
    line = (
        "server_args=ServerArgs(model_path='m', load_format=<LoadFormat.AUTO: 'auto'>, "
        "speculative_config=SpecConfig(steps=3, topk=1), max_total_tokens=inf, port=30000)"
    )
    _, cls, kw = parser.parse(line)
    assert cls is ServerArgs
    assert kw["complete"] is True
    assert kw["args"] == {
        "model_path": "m",
        "load_format": "<LoadFormat.AUTO: 'auto'>",
        "speculative_config": "SpecConfig(steps=3, topk=1)",
        "max_total_tokens": float("inf"),
        "port": 30000,
    }
    dict_line = (
        "server_args={'model_path': 'm', 'load_format': <LoadFormat.AUTO: 'auto'>, 'tp_size': 2}"
    )
    _, cls, kw = parser.parse(dict_line)
    assert cls is ServerArgs
    assert kw == {
        "args": {"model_path": "m", "load_format": "<LoadFormat.AUTO: 'auto'>", "tp_size": 2},
        "style": "dict",
        "complete": True,
    }


@pytest.mark.parametrize(
    "cut", [60, 200, 333, 500, len(DATACLASS_ARGS) - 40, len(DATACLASS_ARGS) - 1]
)
def test_server_args_cut_line_keeps_complete_pairs(parser: Any, cut: int) -> None:
    line = DATACLASS_ARGS[:cut]
    _, cls, kw = parser.parse(line)
    assert cls is ServerArgs
    assert kw["complete"] is False and kw["style"] == "dataclass"
    full = parser.parse(DATACLASS_ARGS)[2]["args"]
    names = list(full)
    # item k is complete when the ', ' that ends it (or the closing ')') is inside the cut line
    ends = [DATACLASS_ARGS.index(f", {name}=") for name in names[1:]] + [len(DATACLASS_ARGS) - 1]
    expected = {name: full[name] for name, end in zip(names, ends, strict=True) if end < cut}
    assert kw["args"] == expected
    assert parser.parse(line) == parser.parse_lalr(line)


def test_server_args_cut_in_first_value(parser: Any) -> None:
    # corpus unlabeled-001: the dump is cut inside the first string
    line = "[2025-05-29 00:32:18] server_args=ServerArgs(model_path='/image-science-dat"
    _, cls, kw = parser.parse(line)
    assert (cls, kw) == (ServerArgs, {"args": {}, "style": "dataclass", "complete": False})


def test_server_args_cut_dict(parser: Any) -> None:
    line = "server_args={'model_path': 'Qwen/Qwen3-8B', 'tp_size': 8, 'mem_fraction_static': 0.8"
    _, cls, kw = parser.parse(line)
    assert (cls, kw) == (
        ServerArgs,
        {"args": {"model_path": "Qwen/Qwen3-8B", "tp_size": 8}, "style": "dict", "complete": False},
    )


# ---------------------------------------------------------------------------------- near-misses

NEAR_MISSES = [
    # the launch_server UserWarning and its example line are not commands (corpus dev-016)
    (
        "/sgl-workspace/sglang/python/sglang/launch_server.py:54: UserWarning: 'python -m sglang.launch_server' is "
        "still supported, but 'sglang serve' is the recommended entrypoint."
    ),
    "  Example: sglang serve --model-path <model> [options]",
    # prose that starts with a flag, argparse help text
    "--enable-lora is set to True because --lora-paths is provided.",
    "  --host HOST           The host of the server.",
    "$python ./sgl-kernel/tests/test_per_token_quant_fp8.py",
    "python ./train.py --lr 3",
    # not the startup lines they resemble
    "[2026-03-07 15:30:20 TP0] Capture cuda graph failed: CUDA out of memory.",
    "[2026-03-07 15:30:20 TP0] Load weight end.",
    "[2026-03-07 15:30:20 TP0] Init torch distributed failed.",
    "[2026-03-07 15:30:19 TP0] KV Cache is allocated",
    "[2026-03-07 15:30:19 TP0] max_total_tokens=131072 is fine",
    "Success rate: 100%",
    "[Gloo] Rank 0 is connected to 7 peer ranks.",
    "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "[2025-12-23 14:18:00] MOE_RUNNER_BACKEND is not initialized, the backend will be automatically selected",
]

STARTUP_CLASSES = {
    ServerArgs, LaunchCommand, LaunchDp, DistInitBegin, DistInitEnd, NcclVersion, NcclLog, GlooConnected,
    WeightLoadBegin, WeightLoadEnd, KvCacheDtype, KvCacheAllocated, MambaCacheAllocated, SwaPoolAllocated,
    MemoryPoolEnd, CaptureBegin, CaptureEnd, CaptureBatchSizes, ProgressBar, SchedulerLimits,
    ProfiledTokensExceeded, EngineStartupTimings, WeightsReady,
}  # fmt: skip


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_is_not_a_startup_event(parser: Any, line: str) -> None:
    _, cls, kw = parser.parse(line)
    assert cls not in STARTUP_CLASSES, (cls, kw)
    if cls is KnownMessage:
        from logparse.grammar.transform.startup import __doc__ as codes

        assert f"``{kw['code']}``" not in (codes or "")
    assert parser.parse(line) == parser.parse_lalr(line)


def test_known_codes_are_documented() -> None:
    from logparse.grammar.transform import startup

    codes = {kw["code"] for _, cls, kw, _ in KNOWN_CASES if cls is KnownMessage}
    codes |= {
        "memory-baseline",
        "comm-warmup-done",
        "draft-load-format",
        "fp16-below-sm80",
        "hicache-host-alloc",
    }
    for code in codes:
        assert f"``{code}``" in (startup.__doc__ or "")


# ---------------------------------------------------------------------------------- corpus

CORPUS_FILES = sorted(
    glob.glob(os.path.join(CORPUS, "*.log")) + glob.glob(os.path.join(CORPUS, "unlabeled", "*.log"))
)


def _outcome(fn: Any, text: str) -> Any:
    try:
        return ("ok", fn(text))
    except Exception as exc:  # noqa: BLE001 - compared, not hidden: both paths must agree
        return ("error", type(exc).__name__)


@pytest.mark.skipif(not CORPUS_FILES, reason="shared corpus not present")
def test_corpus_fast_path_equals_lalr(parser: Any) -> None:
    checked = 0
    for path in CORPUS_FILES:
        for _no, text, _w in read_lines(path, ReadReport(path)):
            fast = _outcome(parser.parse, text)
            lalr = _outcome(parser.parse_lalr, text)
            assert fast == lalr, (path, _no, text[:200])
            checked += 1
    assert checked > 0


def _events(path: str, parser: Any) -> list[tuple[Any, type, dict[str, Any]]]:
    """The parsed lines of a corpus file (lines whose parse raises belong to other families and
    are the subject of test_corpus_fast_path_equals_lalr, not of this one)."""
    outcomes = (
        _outcome(parser.parse, text) for _no, text, _w in read_lines(path, ReadReport(path))
    )
    return [value for status, value in outcomes if status == "ok"]


def _by_rank(items: list[tuple[str | None, Any]]) -> Any:
    if items and all(rank is not None for rank, _ in items):
        return {rank: value for rank, value in items}
    return [value for _, value in items]


def _startup_facts(events: list[tuple[Any, type, dict[str, Any]]]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    limits = [kw for _, cls, kw in events if cls is SchedulerLimits]
    kv = [kw for _, cls, kw in events if cls is KvCacheAllocated and kw.get("tokens") is not None]
    if limits and "max_total_num_tokens" in limits[0]:
        facts["kv_cache_tokens"] = limits[0]["max_total_num_tokens"]
    elif kv:
        facts["kv_cache_tokens"] = kv[0]["tokens"]
    for key in ("max_running_requests", "context_len"):
        if limits and key in limits[0]:
            facts[key] = limits[0][key]
    for fact, kind in (("cuda_graph_capture_s", "target"), ("draft_cuda_graph_capture_s", "draft")):
        ends = [
            (env.rank if env else None, kw["elapsed_s"])
            for env, cls, kw in events
            if cls is CaptureEnd and kw["graph_kind"] == kind
        ]
        if ends:
            facts[fact] = _by_rank(ends)
    sizes = [
        max(kw["sizes"])
        for _, cls, kw in events
        if cls is CaptureBatchSizes and kw["what"] == "bs" and kw["sizes"]
    ]
    if sizes:
        facts["cuda_graph_max_bs"] = max(sizes)
    profiled = [kw["profiled"] for _, cls, kw in events if cls is ProfiledTokensExceeded]
    if profiled:
        facts["profiled_max_total_tokens"] = profiled[0]
    loads = [(env.rank if env else None, kw) for env, cls, kw in events if cls is WeightLoadEnd]
    if loads:
        facts["weight_mem_usage_gb"] = _by_rank([(r, kw.get("mem_usage_gb")) for r, kw in loads])
        facts["avail_mem_after_weights_gb"] = _by_rank(
            [(r, kw.get("avail_mem_gb")) for r, kw in loads]
        )
    nranks = [kw["nranks"] for _, cls, kw in events if cls is NcclLog and kw.get("nranks")]
    if nranks:
        facts["nccl_nranks"] = max(nranks)
    versions = [kw["version"] for _, cls, kw in events if cls is NcclVersion]
    versions += [kw["version"] for _, cls, kw in events if cls is NcclLog and kw.get("version")]
    if versions:
        facts["nccl_version"] = versions[0]
    return facts


STARTUP_FACTS = (
    "kv_cache_tokens", "cuda_graph_capture_s", "draft_cuda_graph_capture_s", "cuda_graph_max_bs",
    "max_running_requests", "context_len", "profiled_max_total_tokens", "weight_mem_usage_gb",
    "avail_mem_after_weights_gb", "nccl_nranks", "nccl_version",
)  # fmt: skip


def _has_startup_facts(labels: str) -> bool:
    with open(labels, encoding="utf-8") as fh:
        return any(key in STARTUP_FACTS for key in json.load(fh)["facts"])


LABELED = [
    p for p in sorted(glob.glob(os.path.join(CORPUS, "*.labels.json"))) if _has_startup_facts(p)
]


@pytest.mark.parametrize("labels", LABELED, ids=[os.path.basename(p) for p in LABELED])
def test_corpus_startup_facts(parser: Any, labels: str) -> None:
    """The startup facts a label states are readable from this family's events."""
    with open(labels, encoding="utf-8") as fh:
        facts = json.load(fh)["facts"]
    wanted = {k: v for k, v in facts.items() if k in STARTUP_FACTS}
    got = _startup_facts(_events(labels.replace(".labels.json", ".log"), parser))
    for key, value in wanted.items():
        assert key in got, key
        if isinstance(value, float):
            assert math.isclose(got[key], value), key
        else:
            assert got[key] == value, key
