"""Deterministic generator of realistic multi-rank SGLang server logs (0.5.10 line formats).

    python -m benchmarks.generate OUT.log --lines 1000000 [--profile P] [--seed 7] [--ranks 8] [--gzip]

This module holds the default profile (`Generator`); the other line mixes (serving-heavy,
startup-heavy, failure-heavy, wrapper-prefixed, long-running, unrecognized, corpus) are in
`benchmarks/profiles.py` and turn the knobs and hooks of `Generator`.

The log is what ``python -m sglang.launch_server`` (0.5.10, TP=``--ranks``, EAGLE3 speculative
decoding, FP8 MoE model) writes to a combined stdout+stderr file: launch command, the
launch_server ``UserWarning``, unprefixed early warnings, the ``server_args=`` dump, per-rank
startup interleaved out of order between ranks (NCCL/Gloo/c10d chatter, checkpoint tqdm lines, a
``\\r``-joined CUDA-graph capture bar), uvicorn start-up and warm-up, then a long serving phase
driven by a small queueing simulation (Prefill/Decode stats lines, access lines, health and
metrics polls, retractions, unknown library chatter, a scheduler traceback about every 50k lines
with other processes' lines interleaved between its continuation lines), a ``bench_serving``
result block and the shutdown lines.

Everything comes from ``random.Random(seed)`` and a fixed start date: same arguments give a
byte-identical file (``--gzip`` output too: the gzip header carries no name and mtime 0).
Line formats follow ``shared/sglang-log-formats.md`` (§1.5, §1.7, §2.1, §3.1 P13, §3.2 D12,
§3.4, §6.1, §7.1).
"""

from __future__ import annotations

import argparse
import calendar
import gzip
import heapq
import io
import math
import random
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

# Bump when the output for given arguments changes (the runner caches generated logs by it).
GENERATOR_VERSION = 1

START = calendar.timegm((2026, 4, 14, 9, 12, 3, 0, 0, 0))  # a 0.5.10-era date, UTC

MODEL = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"
DRAFT = "lmsys/Qwen3-235B-A22B-EAGLE3"
SITE = "/usr/local/lib/python3.12/dist-packages"
PKG = f"{SITE}/sglang/srt"

CAPTURE_BS = [1, 2, 4, 8, 12, 16, 24, 32]  # max captured bs 32 < max_running_requests 48
MAX_RUNNING = 48
CHUNK = 8192
MAX_PREFILL = 16384
CONTEXT_LEN = 262144
DECODE_INTERVAL = 40
NUM_DRAFT_TOKENS = 4
KV_TOKENS_PER_GB = 1 / (94 * 128 * 2 / (1 << 30))  # 94 layers, 1 KV head/rank, head dim 128, bf16
MAIN_PID = 1889
UVICORN_PORT = 30000

CLIENTS = [
    "10.0.0.7", "10.0.0.8", "10.0.0.23", "10.0.1.15", "10.0.1.42", "10.0.2.3",
    "10.0.2.77", "10.0.3.21", "10.0.3.90", "10.0.4.4", "10.0.4.160", "10.0.6.12",
]
PROBE = "10.0.0.1"
PROMETHEUS = "10.0.5.12"


class Log:
    """Buffered line sink that counts physical lines.

    `wrap`, when given, rewrites each flushed block of lines (the wrapper-prefixed profile puts
    docker-compose / k8s / Ray prefixes in front of every line there); it must keep the count.
    """

    def __init__(self, fh: TextIO, wrap: Callable[[list[str], int], list[str]] | None = None) -> None:
        self.fh = fh
        self.buf: list[str] = []
        self.flushed = 0
        self.wrap = wrap

    @property
    def n(self) -> int:
        return self.flushed + len(self.buf)

    def flush(self) -> None:
        if self.buf:
            if self.wrap is not None:
                self.buf = self.wrap(self.buf, self.flushed)
            self.fh.write("\n".join(self.buf))
            self.fh.write("\n")
            self.flushed += len(self.buf)
            self.buf = []


class TS:
    """`YYYY-mm-dd HH:MM:SS` for seconds-since-START, cached per second."""

    def __init__(self) -> None:
        self.cache: dict[int, str] = {}

    def __call__(self, t: float) -> str:
        s = int(t)
        v = self.cache.get(s)
        if v is None:
            if len(self.cache) > 4096:
                self.cache.clear()
            v = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(START + s))
            self.cache[s] = v
        return v

    @staticmethod
    def c10d(t: float, rng: random.Random) -> str:
        """torch C++ log stamp: `MMDD HH:MM:SS.nnnnnnnnn`."""
        g = time.gmtime(START + int(t))
        frac = int((t - int(t)) * 1e9) + rng.randrange(1000)
        return f"{g.tm_mon:02d}{g.tm_mday:02d} {g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}.{frac:09d}"


def tqdm_fmt(sec: float) -> str:
    sec = int(sec)
    return f"{sec // 60:02d}:{sec % 60:02d}"


def bar(frac: float, width: int = 10) -> str:
    full = int(frac * width)
    return "█" * full + " " * (width - full)


def server_args_repr(ranks: int, seed_value: int) -> str:
    fields: list[tuple[str, object]] = [
        ("model_path", MODEL), ("tokenizer_path", MODEL), ("tokenizer_mode", "auto"),
        ("tokenizer_worker_num", 1), ("skip_tokenizer_init", False), ("load_format", "auto"),
        ("model_loader_extra_config", "{}"), ("trust_remote_code", False),
        ("context_length", None), ("is_embedding", False), ("enable_multimodal", None),
        ("revision", None), ("model_impl", "auto"), ("host", "0.0.0.0"), ("port", UVICORN_PORT),
        ("skip_server_warmup", False), ("warmups", None), ("nccl_port", None),
        ("dtype", "auto"), ("quantization", None), ("quantization_param_path", None),
        ("kv_cache_dtype", "auto"), ("enable_fp32_lm_head", False),
        ("mem_fraction_static", 0.85), ("max_running_requests", MAX_RUNNING),
        ("max_queued_requests", None), ("max_total_tokens", None),
        ("chunked_prefill_size", CHUNK), ("max_prefill_tokens", MAX_PREFILL),
        ("schedule_policy", "fcfs"), ("enable_priority_scheduling", False),
        ("schedule_conservativeness", 1.0), ("page_size", 1), ("hybrid_kvcache_ratio", None),
        ("swa_full_tokens_ratio", 0.8), ("device", "cuda"), ("tp_size", ranks), ("pp_size", 1),
        ("stream_interval", 1), ("stream_output", False), ("random_seed", seed_value),
        ("constrained_json_whitespace_pattern", None), ("watchdog_timeout", 300),
        ("dist_timeout", None), ("download_dir", None), ("base_gpu_id", 0), ("gpu_id_step", 1),
        ("sleep_on_idle", False), ("log_level", "info"), ("log_level_http", None),
        ("log_requests", False), ("log_requests_level", 2), ("crash_dump_folder", None),
        ("show_time_cost", False), ("enable_metrics", True),
        ("enable_metrics_for_all_schedulers", False), ("bucket_time_to_first_token", None),
        ("bucket_inter_token_latency", None), ("bucket_e2e_request_latency", None),
        ("collect_tokens_histogram", False), ("decode_log_interval", DECODE_INTERVAL),
        ("enable_request_time_stats_logging", False), ("kv_events_config", None),
        ("api_key", None), ("served_model_name", MODEL), ("weight_version", "default"),
        ("chat_template", None), ("completion_template", None),
        ("file_storage_path", "sglang_storage"), ("enable_cache_report", False),
        ("reasoning_parser", None), ("tool_call_parser", "qwen25"), ("tool_server", None),
        ("dp_size", 1), ("load_balance_method", "round_robin"), ("dist_init_addr", None),
        ("nnodes", 1), ("node_rank", 0), ("json_model_override_args", "{}"),
        ("preferred_sampling_params", None), ("enable_lora", None), ("max_lora_rank", None),
        ("lora_target_modules", None), ("lora_paths", None), ("max_loras_per_batch", 8),
        ("lora_backend", "csgmv"), ("attention_backend", "fa3"),
        ("decode_attention_backend", None), ("prefill_attention_backend", None),
        ("sampling_backend", "flashinfer"), ("grammar_backend", "xgrammar"),
        ("mm_attention_backend", None), ("speculative_algorithm", "EAGLE3"),
        ("speculative_draft_model_path", DRAFT), ("speculative_draft_model_revision", None),
        ("speculative_draft_load_format", None), ("speculative_num_steps", 3),
        ("speculative_eagle_topk", 1), ("speculative_num_draft_tokens", NUM_DRAFT_TOKENS),
        ("speculative_accept_threshold_single", 1.0), ("speculative_accept_threshold_acc", 1.0),
        ("speculative_token_map", None), ("speculative_attention_mode", "prefill"),
        ("ep_size", 1), ("moe_a2a_backend", "none"), ("moe_runner_backend", "auto"),
        ("enable_eplb", False), ("eplb_algorithm", "auto"), ("init_expert_location", "trivial"),
        ("enable_hierarchical_cache", False), ("hicache_ratio", 2.0), ("hicache_size", 0),
        ("hicache_write_policy", "write_through"), ("hicache_storage_backend", None),
        ("hicache_storage_backend_extra_config", None), ("cuda_graph_max_bs", CAPTURE_BS[-1]),
        ("cuda_graph_bs", list(CAPTURE_BS)), ("disable_cuda_graph", False),
        ("disable_cuda_graph_padding", False), ("enable_profile_cuda_graph", False),
        ("enable_cudagraph_gc", False), ("enable_nccl_nvls", False), ("enable_symm_mem", False),
        ("disable_flashinfer_cutlass_moe_fp4_allgather", False),
        ("enable_tokenizer_batch_encode", False), ("disable_outlines_disk_cache", False),
        ("disable_custom_all_reduce", False), ("enable_mscclpp", False),
        ("disable_overlap_schedule", True), ("enable_mixed_chunk", False),
        ("enable_dp_attention", False), ("enable_dp_lm_head", False),
        ("enable_two_batch_overlap", False), ("enable_torch_compile", False),
        ("torch_compile_max_bs", 32), ("piecewise_cuda_graph_max_tokens", 4096),
        ("piecewise_cuda_graph_tokens", [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]),
        ("torchao_config", ""), ("enable_nan_detection", False), ("enable_p2p_check", False),
        ("triton_attention_reduce_in_fp32", False), ("triton_attention_num_kv_splits", 8),
        ("num_continuous_decode_steps", 1), ("delete_ckpt_after_loading", False),
        ("enable_memory_saver", False), ("allow_auto_truncate", False),
        ("enable_custom_logit_processor", False), ("flashinfer_mla_disable_ragged", False),
        ("disable_shared_experts_fusion", False), ("disable_chunked_prefix_cache", False),
        ("disable_fast_image_processor", False), ("mm_process_config", {}),
        ("custom_weight_loader", []), ("weight_loader_disable_mmap", False),
        ("enable_return_hidden_states", False), ("scheduler_recv_interval", 1),
        ("numa_node", None), ("disaggregation_mode", "null"),
        ("disaggregation_transfer_backend", "mooncake"), ("disaggregation_bootstrap_port", 8998),
        ("disaggregation_ib_device", None), ("num_reserved_decode_tokens", 512),
        ("custom_sigquit_handler", None), ("enable_deterministic_inference", False),
        ("rl_on_policy_target", None), ("decrypted_config_file", None),
        ("decrypted_draft_config_file", None), ("uvicorn_access_log_exclude_prefixes", []),
    ]
    return "server_args=ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in fields) + ")"


class Generator:
    """The default profile. The class attributes below are the knobs the other profiles
    (`benchmarks/profiles.py`) turn; at these values the output is the original default log,
    byte for byte (no knob draws from the random stream unless it is switched on)."""

    # seconds between the /health and /metrics polls
    health_every = 10.0
    metrics_every = 15.0
    # request arrival rate multiplier, and median log of the output length
    rate_scale = 1.0
    out_mu = 6.8
    # probability per scheduler iteration of one unrecognised chatter line
    chatter_p = 0.011
    # a scheduler traceback every tb_every ± tb_jitter lines
    tb_every = 50000
    tb_jitter = 5000

    def __init__(self, lines: int, seed: int, ranks: int) -> None:
        self.target = lines
        self.seed = seed
        self.ranks = max(1, ranks)
        self.rng = random.Random(seed)
        self.ts = TS()
        self.t = 0.0  # seconds since START
        self.t0 = 0.0  # when this launch began (startup-heavy relaunches the server)
        self.kv_cap = 731264  # max_total_num_tokens (per KV pool)
        self.log: Log | None = None

    # -- hooks for the profiles (no-ops here) -------------------------------------------------
    def make_log(self, fh: TextIO) -> Log:
        return Log(fh)

    def extra(self, t: float, out: list[str]) -> None:
        """Called once per scheduler iteration of the serving phase: profiles add lines."""

    def on_admit(self, t: float, req: list) -> str:
        """A request starts running; returns its request id ("" = none is logged)."""
        return ""

    def on_finish(self, t: float, rid: str) -> None:
        """A request with a logged id finished (only called when `on_admit` gave one)."""

    def server_args_text(self) -> str:
        return server_args_repr(self.ranks, self.rng.randrange(1 << 30))

    # -- helpers -------------------------------------------------------------------------------
    def sfx(self, r: int) -> str:
        return f" TP{r}" if self.ranks > 1 else ""

    def P(self, t: float, r: int | None, msg: str) -> str:
        """SGLang envelope line; r=None for the main process."""
        if r is None:
            return f"[{self.ts(t)}] {msg}"
        return f"[{self.ts(t)}{self.sfx(r)}] {msg}"

    def per_rank(self, t: float, spread: float, make: Callable[[int], str],
                 skip: int | None = None) -> float:
        """One line per rank, ranks in random order, each stamped by its own process."""
        assert self.log is not None
        order = list(range(self.ranks))
        self.rng.shuffle(order)
        out = self.log.buf
        tmax = t
        for r in order:
            if r == skip:
                continue
            tr = t + self.rng.random() * spread
            tmax = max(tmax, tr)
            out.append(self.P(tr, r, make(r)))
        return tmax

    def c10d_warn(self, t: float, r: int, line_no: int, text: str) -> str:
        return f"[rank{r}]:[W{TS.c10d(t, self.rng)} ProcessGroupNCCL.cpp:{line_no}] {text}"

    # -- phases ---------------------------------------------------------------------------------
    def run(self, fh: TextIO) -> int:
        self.log = self.make_log(fh)
        self.preamble()
        self.startup()
        stats = self.serving()
        self.finish(stats)
        self.log.flush()
        return self.log.n

    def preamble(self) -> None:
        out = self.log.buf  # type: ignore[union-attr]
        out.append(
            f"python -m sglang.launch_server --model-path {MODEL} --tp {self.ranks} "
            f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {DRAFT} "
            "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
            f"--mem-fraction-static 0.85 --cuda-graph-max-bs {CAPTURE_BS[-1]} --enable-metrics "
            f"--tool-call-parser qwen25 --host 0.0.0.0 --port {UVICORN_PORT}"
        )
        out.append(
            f"{SITE}/sglang/launch_server.py:51: UserWarning: 'python -m sglang.launch_server' is "
            "still supported, but 'sglang serve' is the recommended entrypoint."
        )
        out.append("  Example: sglang serve --model-path <model> [options]")
        out.append("  warnings.warn(")
        out.append(
            "Max running requests is reset to 48 for speculative decoding. You can override this "
            "by explicitly setting --max-running-requests."
        )
        out.append(
            "Overlap scheduler is disabled when spec v2 is off or using unsupported speculative "
            "algorithm. You can set env SGLANG_ENABLE_SPEC_V2=True to enable the experimental "
            "overlap scheduler. "
        )
        self.t = self.t0 + 4.0
        out.append(self.P(self.t, None, self.server_args_text()))

    def startup(self) -> None:
        rng, R, out = self.rng, self.ranks, self.log.buf  # type: ignore[union-attr]
        t = self.t + 6.0 + rng.random() * 2
        t = self.per_rank(t, 0.9, lambda r: "Init torch distributed begin.")
        if R > 1:
            t = self.per_rank(t + 0.3, 0.6, lambda r: "sglang is using nccl==2.27.5")
            # NCCL INFO / Gloo / c10d chatter, ranks interleaved.
            pids = [534 + 17 * r for r in range(R)]
            comm = rng.randrange(1 << 60)
            streams: list[deque[str]] = []
            for r in range(R):
                tid = pids[r] + 1229 + rng.randrange(40)
                h = f"node1:{pids[r]}:{tid} [{r}] NCCL INFO "
                gloo = (f"[Gloo] Rank {r} is connected to {R - 1} peer ranks. Expected number of "
                        f"connected peer ranks is : {R - 1}")
                bus = f"{0x18 + 0x1A * r:x}000"
                ptr = f"0x{0x55d0_0000_0000 + rng.randrange(1 << 32):x}"
                s = deque([
                    h + "Bootstrap: Using eth0:10.0.1.15<0>",
                    h + "cudaDriverVersion 12080",
                    h + "NCCL version 2.27.5+cuda12.9",
                    h + "NET/Plugin: Could not find: libnccl-net.so.",
                    h + "NET/IB : No device found.",
                    h + "NET/Socket : Using [0]eth0:10.0.1.15<0>",
                    h + "Using network Socket",
                    h + f"ncclCommInitRankConfig comm {ptr} rank {r} nranks {R} cudaDev {r} "
                        f"nvmlDev {r} busId {bus} commId 0x{comm:x} - Init START",
                    h + f"Setting affinity for GPU {r} to ffffffff,ffffffff",
                    h + f"comm {ptr} rank {r} nRanks {R} nNodes 1 localRanks {R} localRank {r} "
                        "MNNVL 0",
                    h + f"Channel 00/02 : {' '.join(str(i) for i in range(R))}",
                    h + "P2P Chunksize set to 131072",
                    h + "Connected all rings, use ring PXN 0 GDR 0",
                    h + f"ncclCommInitRankConfig comm {ptr} rank {r} nranks {R} cudaDev {r} "
                        f"nvmlDev {r} busId {bus} commId 0x{comm:x} - Init COMPLETE",
                    h + f"Init timings - ncclCommInitRankConfig: rank {r} nranks {R} total "
                        f"{0.4 + rng.random() * 0.3:.2f} (kernels 0.18, alloc 0.05, bootstrap "
                        "0.02, allgathers 0.01, topo 0.21, graphs 0.02, connections 0.08, rest 0.04)",
                    gloo,
                    gloo,
                    self.c10d_warn(
                        t + 1, r, 4715,
                        f"[PG ID 0 PG GUID 0 Rank {r}]  using GPU {r} as device used by this "
                        "process is currently unknown. This can potentially cause a hang if this "
                        "rank to GPU mapping is incorrect. You can specify device_id in "
                        "init_process_group() to force use of a particular device.",
                    ),
                ])
                streams.append(s)
            while streams:
                i = rng.randrange(len(streams))
                out.append(streams[i].popleft())
                if not streams[i]:
                    streams.pop(i)
            if R > 2:
                t = self.per_rank(
                    t + 0.5, 0.4,
                    lambda r: "Custom allreduce is disabled because it's not supported on more "
                    "than two PCIe-only GPUs. To silence this warning, specify "
                    "disable_custom_all_reduce=True explicitly.",
                )
        t = self.per_rank(
            t + 0.2, 0.5,
            lambda r: f"Init torch distributed ends. elapsed={2.1 + rng.random():.2f} s, "
            f"mem usage={0.79 + rng.random() * 0.05:.2f} GB",
        )
        avail0 = [78.93 - 0.81 - rng.random() * 0.05 for _ in range(R)]
        t = self.per_rank(t + 0.1, 0.3, lambda r: f"Load weight begin. avail mem={avail0[r]:.2f} GB")
        # Checkpoint tqdm (torch rank 0 only, each refresh its own line in <= 0.5.10).
        shards = 24
        el = 0.0
        out.append(f"Loading safetensors checkpoint shards:   0% Completed | 0/{shards} [00:00<?, ?it/s]")
        for i in range(1, shards + 1):
            el += 1.2 + rng.random() * 0.8
            rate = i / el
            rem = (shards - i) / rate
            out.append(
                f"Loading safetensors checkpoint shards: {round(100 * i / shards):3d}% Completed | "
                f"{i}/{shards} [{tqdm_fmt(el)}<{tqdm_fmt(rem)}, {1 / rate:5.2f}s/it]"
            )
        out.append(
            f"Loading safetensors checkpoint shards: 100% Completed | {shards}/{shards} "
            f"[{tqdm_fmt(el)}<00:00, {el / shards:5.2f}s/it]"
        )
        out.append("")
        t += el + 2
        wmem = [29.84 + rng.random() * 0.3 for _ in range(R)]
        t = self.per_rank(
            t, 1.5,
            lambda r: f"Load weight end. elapsed={el + 3 + rng.random() * 2:.2f} s, "
            f"type=Qwen3MoeForCausalLM, quant=fp8, fmt=e4m3, avail mem={avail0[r] - wmem[r]:.2f} GB, "
            f"mem usage={wmem[r]:.2f} GB.",
        )
        out.append(self.P(t, 0, "Using KV cache dtype: torch.bfloat16"))
        kv_gb = self.kv_cap / KV_TOKENS_PER_GB
        t = self.per_rank(
            t + 0.4, 0.4,
            lambda r: f"KV Cache is allocated. #tokens: {self.kv_cap}, K size: {kv_gb:.2f} GB, "
            f"V size: {kv_gb:.2f} GB",
        )
        pool = [avail0[r] - wmem[r] - 2 * kv_gb for r in range(R)]
        t = self.per_rank(t + 0.1, 0.2, lambda r: f"Memory pool end. avail mem={pool[r]:.2f} GB")
        pool = [p - 0.31 for p in pool]
        t = self.per_rank(
            t + 0.3, 0.3,
            lambda r: "Capture cuda graph begin. This can take up to several minutes. "
            f"avail mem={pool[r]:.2f} GB",
        )
        out.append(self.P(t, 0, f"Capture cuda graph bs {CAPTURE_BS}"))
        out.append(self.capture_bar(pool[0], 0.86, "Capturing batches"))
        cap = [0.84 + rng.random() * 0.05 for _ in range(R)]
        t = self.per_rank(
            t + 9.5, 0.6,
            lambda r: f"Capture cuda graph end. Time elapsed: {9.4 + rng.random():.2f} s. "
            f"mem usage={cap[r]:.2f} GB. avail mem={pool[r] - cap[r]:.2f} GB.",
        )
        pool = [pool[r] - cap[r] for r in range(R)]
        # Draft model (EAGLE3): its own weights, KV pool and graphs.
        out.append(self.P(t, 0, "Using draft model load_format: 'auto'"))
        t = self.per_rank(t + 0.2, 0.3, lambda r: f"Load weight begin. avail mem={pool[r]:.2f} GB")
        dmem = [1.53 + rng.random() * 0.02 for _ in range(R)]
        t = self.per_rank(
            t + 2.5, 0.8,
            lambda r: f"Load weight end. elapsed={2.4 + rng.random():.2f} s, "
            f"type=LlamaForCausalLMEagle3, avail mem={pool[r] - dmem[r]:.2f} GB, "
            f"mem usage={dmem[r]:.2f} GB.",
        )
        pool = [pool[r] - dmem[r] for r in range(R)]
        dkv = self.kv_cap * 128 * 2 / (1 << 30)
        t = self.per_rank(
            t + 0.2, 0.3,
            lambda r: f"KV Cache is allocated. #tokens: {self.kv_cap}, K size: {dkv:.2f} GB, "
            f"V size: {dkv:.2f} GB",
        )
        pool = [p - 2 * dkv for p in pool]
        t = self.per_rank(t + 0.1, 0.2, lambda r: f"Memory pool end. avail mem={pool[r]:.2f} GB")
        for kind, secs, mem in (("draft", 3.0, 0.21), ("draft extend", 2.2, 0.17)):
            def begin(r: int, kind: str = kind, pool: list[float] = pool) -> str:
                return (f"Capture {kind} cuda graph begin. This can take up to several minutes. "
                        f"avail mem={pool[r]:.2f} GB")

            def end(r: int, kind: str = kind, secs: float = secs, mem: float = mem,
                    pool: list[float] = pool) -> str:
                return (f"Capture {kind} cuda graph end. Time elapsed: "
                        f"{secs + rng.random() * 0.4:.2f} s. mem usage={mem:.2f} GB. "
                        f"avail mem={pool[r] - mem:.2f} GB.")

            t = self.per_rank(t + 0.2, 0.3, begin)
            bar_line = self.capture_bar(pool[0], mem, "Capturing batches")
            glued = None
            if kind == "draft extend" and R > 1:
                # another rank's log record glued onto the end of the tqdm line (§1.3)
                glued = R - 1
                bar_line += self.P(t + secs - 0.3, glued, f"Capture {kind} cuda graph end. "
                                   f"Time elapsed: {secs - 0.12:.2f} s. mem usage={mem:.2f} GB. "
                                   f"avail mem={pool[glued] - mem:.2f} GB.")
            out.append(bar_line)
            t = self.per_rank(t + secs, 0.5, end, skip=glued)
            pool = [p - mem for p in pool]
        out.append(self.P(
            t + 0.4, 0,
            f"max_total_num_tokens={self.kv_cap}, chunked_prefill_size={CHUNK}, "
            f"max_prefill_tokens={MAX_PREFILL}, max_running_requests={MAX_RUNNING}, "
            f"context_len={CONTEXT_LEN}, available_gpu_mem={pool[0]:.2f} GB",
        ))
        t += 1.2
        for msg in (
            f"INFO:     Started server process [{MAIN_PID}]",
            "INFO:     Waiting for application startup.",
            ("Using default chat sampling params from model generation config: "
             "{'temperature': 0.7, 'top_k': 20, 'top_p': 0.8}"),
            "INFO:     Application startup complete.",
            f"INFO:     Uvicorn running on http://0.0.0.0:{UVICORN_PORT} (Press CTRL+C to quit)",
        ):
            out.append(self.P(t, None, msg))
        t += 1.0
        port = 37000 + rng.randrange(20000)
        out.append(self.P(t, None, f'INFO:     127.0.0.1:{port} - "GET /model_info HTTP/1.1" 200 OK'))
        t += 0.4
        out.append(self.P(
            t, 0,
            "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
            "#running-req: 0, #queue-req: 0, cuda graph: True, input throughput (token/s): 0.00",
        ))
        t += 0.5
        out.append(self.P(t, None, f'INFO:     127.0.0.1:{port + 12} - "POST /generate HTTP/1.1" 200 OK'))
        out.append(self.P(t, None, "The server is fired up and ready to roll!"))
        self.t = t + 2.0

    def capture_bar(self, avail: float, use: float, desc: str) -> str:
        """One physical line of `\\r`-joined tqdm refreshes, largest bs first (§1.7)."""
        n = len(CAPTURE_BS)
        segs = [f"  0%|          | 0/{n} [00:00<?, ?it/s]"]
        el = 0.0
        for i, bs in enumerate(reversed(CAPTURE_BS)):
            a = avail - use * i / n
            rate = f"{(i / el) if el else 0:5.2f}it/s" if i else "?it/s"
            rem = tqdm_fmt((n - i) / (i / el)) if i else "?"
            segs.append(
                f"{desc} (bs={bs} avail_mem={a:.2f} GB): {round(100 * i / n):3d}%|{bar(i / n)}| "
                f"{i}/{n} [{tqdm_fmt(el)}<{rem}, {rate}]"
            )
            el += 0.9 + self.rng.random() * 0.6
        segs.append(
            f"{desc} (bs=1 avail_mem={avail - use:.2f} GB): 100%|{bar(1)}| {n}/{n} "
            f"[{tqdm_fmt(el)}<00:00, {n / el:5.2f}it/s]"
        )
        return "\r" + "\r".join(segs)

    # -- serving ------------------------------------------------------------------------------
    def serving(self) -> dict:
        """Queueing simulation of the serving phase; returns totals for the bench block."""
        rng = self.rng
        log = self.log
        assert log is not None
        out = log.buf
        ts = self.ts
        s0 = self.sfx(0)
        cap = self.kv_cap
        exp = rng.expovariate
        rnd = rng.random
        lognorm = rng.lognormvariate
        tail_lines = 46 + self.ranks - 1  # exact length of finish()
        stop_at = self.target - tail_lines

        t = self.t
        t_begin = t
        # running requests: heap of (finish_G, kv0, G0, request id or "")
        heap: list[tuple[float, int, float, str]] = []
        n_run = 0
        sum_kv0 = 0
        sum_g0 = 0.0
        G = 0.0
        queue: deque[list] = deque()  # [prompt_total, cached, new_left, out_len, done_new, path]
        new_token_ratio = 0.7
        accept_base = 2.8
        last_decode_t = t
        last_prefill_t = t
        last_prefill_tokens = 0
        next_arrival = t + exp(1.0)
        next_health = t + 10 * rnd()
        next_metrics = t + 15 * rnd()
        burst_win = -1
        burst = 1.0
        next_tb = self.tb_every + rng.randrange(-self.tb_jitter, self.tb_jitter)
        extra = self.extra if type(self).extra is not Generator.extra else None
        on_admit = self.on_admit if type(self).on_admit is not Generator.on_admit else None
        health_every, metrics_every = self.health_every, self.metrics_every
        rate_scale, out_mu, chatter_p = self.rate_scale, self.out_mu, self.chatter_p
        tb_pending: deque[str] = deque()
        # totals for bench_serving
        n_done = 0
        tot_in = 0
        tot_out = 0.0
        peak_out_tps = 0.0
        peak_run = 0
        accept_sum = 0.0
        accept_n = 0

        def rate(tt: float) -> float:
            nonlocal burst_win, burst
            h = ((START + tt) % 86400) / 3600.0
            day = 0.12
            if 7.0 < h < 21.0:
                day += 1.7 * math.sin(math.pi * (h - 7.0) / 14.0) ** 1.5
            w = int(tt // 2400)
            if w != burst_win:
                burst_win = w
                burst = 1.0 + rnd() * 0.9 if rnd() < 0.3 else 1.0
            if burst > 1.0 and tt - w * 2400 < 480:
                return day * burst
            return day

        def access(tt: float, client: str, method: str, path: str, status: str) -> None:
            out.append(
                f"[{ts(tt)}] INFO:     {client}:{32768 + int(rnd() * 28000)} - "
                f'"{method} {path} HTTP/1.1" {status}'
            )

        def polls(until: float) -> None:
            nonlocal next_health, next_metrics
            while next_health <= until or next_metrics <= until:
                if next_health <= next_metrics:
                    status = "503 Service Unavailable" if rnd() < 0.004 else "200 OK"
                    access(next_health, PROBE, "GET", "/health", status)
                    next_health += health_every + rnd() * 0.05
                else:
                    access(next_metrics, PROMETHEUS, "GET", "/metrics", "200 OK")
                    next_metrics += metrics_every + rnd() * 0.05

        def kv_now() -> int:
            return int(sum_kv0 + n_run * G - sum_g0)

        while log.flushed + len(out) < stop_at:
            # ---- arrivals up to now (and polls), admission of queued requests -------------
            dt = DECODE_INTERVAL * (0.011 + 0.00022 * n_run) * (0.95 + 0.1 * rnd())
            if n_run == 0 and not queue:
                t = max(t, next_arrival)  # idle: nothing but polls until the next request
                dt = 0.0
            t_end = t + dt
            while next_arrival <= t_end:
                ta = next_arrival
                polls(ta)
                prompt = int(lognorm(8.7, 1.0))  # median ~6k tokens
                if rnd() < 0.002:
                    access(ta + 0.01, CLIENTS[int(rnd() * 12)], "POST", "/v1/chat/completions",
                           "400 Bad Request")
                else:
                    prompt = min(max(prompt, 120), 200000)
                    u = rnd()
                    if u < 0.55:
                        cached = int(prompt * (0.5 + 0.45 * rnd()))
                    elif u < 0.85:
                        cached = min(prompt - 1, 1024 + int(rnd() * 1024))
                    else:
                        cached = 0
                    out_len = min(max(int(lognorm(out_mu, 0.9)), 8), 32768)  # median ~900
                    pu = rnd()
                    path = ("/v1/chat/completions" if pu < 0.85
                            else "/v1/completions" if pu < 0.95 else "/generate")
                    queue.append([prompt, cached, prompt - cached, out_len, 0, path])
                next_arrival = ta + exp(max(rate(ta) * rate_scale, 0.02))
            polls(t_end)
            t = t_end

            # ---- decode step (every DECODE_INTERVAL iterations) ----------------------------
            if n_run:
                accept_base += (rnd() - 0.5) * 0.08
                if accept_base < 1.9:
                    accept_base = 1.9
                elif accept_base > 3.5:
                    accept_base = 3.5
                al = accept_base + (rnd() - 0.5) * 0.3
                gained = DECODE_INTERVAL * al
                G += gained
                toks = n_run * gained
                tot_out += toks
                elapsed = t - last_decode_t
                gen = toks / elapsed if elapsed > 0 else 0.0
                peak_out_tps = max(peak_out_tps, gen)
                accept_sum += al
                accept_n += 1
                last_decode_t = t
                kv = min(int(sum_kv0 + n_run * G - sum_g0), cap)
                out.append(
                    f"[{ts(t)}{s0}] Decode batch, #running-req: {n_run}, #token: {kv}, "
                    f"token usage: {kv / cap:.2f}, accept len: {al:.2f}, "
                    f"accept rate: {al / NUM_DRAFT_TOKENS:.2f}, "
                    f"cuda graph: {'True' if n_run <= CAPTURE_BS[-1] else 'False'}, "
                    f"gen throughput (token/s): {gen:.2f}, #queue-req: {len(queue)}"
                )
                # finished requests
                while heap and heap[0][0] <= G:
                    fg, kv0, g0, rid = heapq.heappop(heap)
                    if rid:
                        self.on_finish(t, rid)
                    n_run -= 1
                    sum_kv0 -= kv0
                    sum_g0 -= g0
                    n_done += 1
                if n_run == 0:
                    sum_kv0, sum_g0 = 0, 0.0
                # retraction when the pool is (nearly) full
                kv = kv_now()
                if kv >= 0.98 * cap and n_run > 1:
                    k = 0
                    freed = 0
                    while n_run > 1 and (k == 0 or kv - freed > 0.9 * cap):
                        fg, kv0, g0, _rid = heap.pop()  # a leaf: heap order is kept
                        k += 1
                        used = int(kv0 + G - g0)
                        freed += used
                        n_run -= 1
                        sum_kv0 -= kv0
                        sum_g0 -= g0
                        queue.appendleft([used, 0, used, int(fg - G) + 1, 0, None])
                    old = new_token_ratio
                    new_token_ratio = min(1.0, old + 0.1 + 0.15 * rnd())
                    out.append(
                        f"[{ts(t)}{s0}] KV cache pool is full. Retract requests. "
                        f"#retracted_reqs: {k}, #new_tokens_gained: {freed}, "
                        f"#new_token_ratio: {old:.4f} -> {new_token_ratio:.4f}"
                    )
                else:
                    new_token_ratio = max(0.1, new_token_ratio - 0.002)

            # ---- prefill batches from the queue ---------------------------------------------
            while queue and n_run < MAX_RUNNING:
                budget = CHUNK
                batch_new = 0
                batch_cached = 0
                nseq = 0
                done: list[list] = []
                kv = kv_now()
                reserve = new_token_ratio * 600
                room = cap - kv - n_run * reserve
                for req in queue:
                    if n_run + nseq >= MAX_RUNNING or budget <= 0:
                        break
                    if req[4] == 0 and req[0] + reserve > room:
                        break
                    take = min(req[2], budget)
                    batch_cached += req[1] + req[4]
                    batch_new += take
                    budget -= take
                    req[2] -= take
                    req[4] += take
                    nseq += 1
                    if req[2] == 0:
                        done.append(req)
                        room -= req[0] + reserve
                    else:
                        break  # chunked request: rest in the next batch
                if nseq == 0:
                    break
                for _ in done:
                    queue.popleft()
                t += 0.02 + batch_new / 36000.0 + batch_cached / 2.0e6
                gap = t - last_prefill_t
                ipt = last_prefill_tokens / gap if gap > 0 else 0.0
                last_prefill_t = t
                last_prefill_tokens = batch_new
                out.append(
                    f"[{ts(t)}{s0}] Prefill batch, #new-seq: {nseq}, #new-token: {batch_new}, "
                    f"#cached-token: {batch_cached}, token usage: {min(kv, cap) / cap:.2f}, "
                    f"#running-req: {n_run}, #queue-req: {len(queue)}, "
                    f"cuda graph: {'True' if batch_new <= 4096 else 'False'}, "
                    f"input throughput (token/s): {ipt:.2f}"
                )
                for req in done:
                    rid = on_admit(t, req) if on_admit is not None else ""
                    heapq.heappush(heap, (G + req[3], req[0], G, rid))
                    n_run += 1
                    sum_kv0 += req[0]
                    sum_g0 += G
                    if req[5] is not None:  # streaming: access line at stream start
                        tot_in += req[0]
                        access(t + 0.003, CLIENTS[int(rnd() * 12)], "POST", req[5], "200 OK")
                peak_run = max(peak_run, n_run)

            # ---- rare lines -------------------------------------------------------------------
            if extra is not None:
                extra(t, out)
            if rnd() < chatter_p:
                out.append(self.chatter(t))
            if tb_pending:
                for _ in range(2 + int(rnd() * 6)):
                    out.append(tb_pending.popleft())
                    if not tb_pending:
                        break
            elif log.flushed + len(out) >= next_tb:
                next_tb += self.tb_every + rng.randrange(-self.tb_jitter, self.tb_jitter)
                tb_pending.extend(self.traceback(t))
            if len(out) >= 50000:
                log.flush()
                out = log.buf

        while tb_pending:
            out.append(tb_pending.popleft())
        self.t = t
        return {
            "duration": t - t_begin, "done": max(n_done, 1), "in": tot_in, "out": int(tot_out),
            "peak_tps": peak_out_tps, "peak_run": peak_run,
            "accept": accept_sum / accept_n if accept_n else 1.0,
        }

    def chatter(self, t: float) -> str:
        """A line no SGLang grammar knows (library noise, other loggers)."""
        rng = self.rng
        k = rng.randrange(8)
        if k == 0:
            return ("huggingface/tokenizers: The current process just got forked, after parallelism "
                    "has already been used. Disabling parallelism to avoid deadlocks...")
        if k == 1:
            return (f"INFO:httpx:HTTP Request: POST http://{PROMETHEUS}:9091/metrics/job/sglang "
                    '"HTTP/1.1 200 OK"')
        if k == 2:
            g = time.gmtime(START + int(t))
            return (f"W{g.tm_mon:02d}{g.tm_mday:02d} {g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}"
                    f".{rng.randrange(10**6):06d} {MAIN_PID + 3} torch/_dynamo/convert_frame.py:"
                    f"964] [{rng.randrange(9)}/8] torch._dynamo hit config.recompile_limit (8)")
        if k == 3:
            return (f"DEBUG:urllib3.connectionpool:http://{PROMETHEUS}:9091 "
                    f'"PUT /metrics/job/sglang/instance/node1 HTTP/1.1" 200 0')
        if k == 4:
            return (f"[{self.ts(t)}] Prometheus multiprocess dir cleanup: removed "
                    f"{rng.randrange(1, 9)} stale files from /tmp/sglang_prom_{MAIN_PID}")
        if k == 5:
            return (f"{SITE}/torch/cuda/memory.py:{491}: FutureWarning: "
                    "torch.cuda.reset_max_memory_allocated now calls "
                    "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.")
        if k == 6:
            return (f"[{self.ts(t)}{self.sfx(rng.randrange(self.ranks))}] xgrammar: compiled "
                    f"grammar cache hit ratio {rng.random():.3f} ({rng.randrange(50, 900)} entries)")
        return f"gpu-exporter: node1 scrape ok gpus={self.ranks} duration_ms={rng.randrange(4, 40)}"

    def traceback(self, t: float) -> list[str]:
        """`Scheduler hit an exception` record of a non-zero rank (§6.1), unprefixed tail."""
        rng = self.rng
        r = rng.randrange(1, self.ranks) if self.ranks > 1 else 0
        sched = f"{PKG}/managers/scheduler.py"
        lines = [
            self.P(t, r, "Scheduler hit an exception: Traceback (most recent call last):"),
            f'  File "{sched}", line 3183, in run_scheduler_process',
            "    scheduler.event_loop_normal()",
            f'  File "{SITE}/torch/utils/_contextlib.py", line 120, in decorate_context',
            "    return func(*args, **kwargs)",
            "           ^^^^^^^^^^^^^^^^^^^^^",
            f'  File "{sched}", line 1104, in event_loop_normal',
            "    result = self.run_batch(batch)",
            "             ^^^^^^^^^^^^^^^^^^^^^",
            f'  File "{sched}", line 2338, in run_batch',
            "    batch_result = self.model_worker.forward_batch_generation(",
            "                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
            f'  File "{PKG}/speculative/eagle_worker.py", line 296, in forward_batch_generation',
            "    logits_output, verify_output, model_worker_batch, _ = self.verify(",
            "                                                          ^^^^^^^^^^^^",
        ]
        k = rng.randrange(3)
        if k == 0:
            lines += [
                f'  File "{PKG}/model_executor/cuda_graph_runner.py", line 812, in replay',
                "    self.graphs[self.bs].replay()",
                f'  File "{SITE}/torch/cuda/graphs.py", line 88, in replay',
                "    super().replay()",
                "RuntimeError: CUDA error: an illegal memory access was encountered",
                ("CUDA kernel errors might be asynchronously reported at some other API call, so "
                 "the stacktrace below might be incorrect."),
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
            ]
        elif k == 1:
            lines += [
                f'  File "{PKG}/distributed/parallel_state.py", line 520, in all_reduce',
                "    torch.distributed.all_reduce(input_, group=self.device_group)",
                f'  File "{SITE}/torch/distributed/distributed_c10d.py", line 2806, in all_reduce',
                "    work = group.allreduce([tensor], opts)",
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
            ]
        else:
            lines += [
                f'  File "{PKG}/models/llama_eagle3.py", line 214, in forward',
                "    hidden_states = torch.cat([embeds, hidden_states], dim=-1)",
                "                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
                ("RuntimeError: Sizes of tensors must match except in dimension 1. Expected size "
                 f"{rng.choice([6, 12, 24])} but got size 8 for tensor number 1 in the list."),
            ]
        lines.append("")
        if self.ranks > 1:
            lines.append(self.c10d_warn(
                t + 1, r, 1826,
                f'[PG ID 0 PG GUID 0 Rank {r}] Failed to check the "should dump" flag on '
                "TCPStore, (maybe TCPStore server has shut down too early), with error: "
                "Connection reset by peer",
            ))
        return lines

    # -- end ----------------------------------------------------------------------------------
    def finish(self, s: dict) -> None:
        rng, out = self.rng, self.log.buf  # type: ignore[union-attr]
        dur = s["duration"]
        done = s["done"]
        tin, tout = s["in"], s["out"]
        def row(k: str, v: object) -> str:
            return f"{k:<40} {v:<10}"

        def f2(x: float) -> str:
            return f"{x:.2f}"

        e2e = dur / done * 1000 * 9.0
        ttft = 180 + rng.random() * 400
        tpot = 1000 / (133 + rng.random() * 20)
        itl = tpot * s["accept"]
        out.append("")
        out.append(f"{' Serving Benchmark Result ':=^50}")
        for k, v in (
            ("Backend:", "sglang-oai-chat"), ("Traffic request rate:", "trace"),
            ("Max request concurrency:", "not set"), ("Successful requests:", done),
            ("Benchmark duration (s):", f2(dur)), ("Total input tokens:", tin),
            ("Total input text tokens:", tin), ("Total generated tokens:", tout),
            ("Total generated tokens (retokenized):", tout - rng.randrange(0, 1 + tout // 500)),
            ("Request throughput (req/s):", f2(done / dur)),
            ("Input token throughput (tok/s):", f2(tin / dur)),
            ("Output token throughput (tok/s):", f2(tout / dur)),
            ("Peak output token throughput (tok/s):", f2(float(int(s["peak_tps"])))),
            ("Peak concurrent requests:", s["peak_run"] + rng.randrange(0, 20)),
            ("Total token throughput (tok/s):", f2((tin + tout) / dur)),
            ("Concurrency:", f2(e2e / 1000 * done / dur)),
            ("Accept length:", f2(s["accept"])),
        ):
            out.append(row(k, v))
        sections = (
            ("End-to-End Latency", [("Mean E2E Latency (ms):", e2e), ("Median E2E Latency (ms):", e2e * 0.82),
                                    ("P90 E2E Latency (ms):", e2e * 2.1), ("P99 E2E Latency (ms):", e2e * 4.3)]),
            ("Time to First Token", [("Mean TTFT (ms):", ttft), ("Median TTFT (ms):", ttft * 0.7),
                                     ("P99 TTFT (ms):", ttft * 6.2)]),
            ("Time per Output Token (excl. 1st token)", [("Mean TPOT (ms):", tpot),
                                                        ("Median TPOT (ms):", tpot * 0.95),
                                                        ("P99 TPOT (ms):", tpot * 1.9)]),
            ("Inter-Token Latency", [("Mean ITL (ms):", itl), ("Median ITL (ms):", itl * 0.9),
                                     ("P95 ITL (ms):", itl * 1.8), ("P99 ITL (ms):", itl * 3.1),
                                     ("Max ITL (ms):", itl * 40)]),
        )
        for title, rows in sections:
            out.append(f"{title:-^50}")
            for k, v in rows:
                out.append(row(k, f2(v)))
        out.append("=" * 50)
        out.append("")
        t = self.t + 5 + rng.random() * 20
        out.append(self.P(
            t, None,
            "SIGTERM received. signum=15 frame=<frame at 0x7f3c2a1b9d40, file "
            f"'{SITE}/uvicorn/server.py', line 328, code main_loop>. Draining requests and "
            "shutting down...",
        ))
        out.append(self.P(t, None, "Gracefully exiting... Remaining number of requests 0. "
                                   "Remaining requests remaining_rids=[]."))
        t += 1
        for msg in ("INFO:     Shutting down", "INFO:     Waiting for application shutdown.",
                    "INFO:     Application shutdown complete.",
                    f"INFO:     Finished server process [{MAIN_PID}]"):
            out.append(self.P(t, None, msg))
        for r in range(1, self.ranks):
            out.append(self.c10d_warn(
                t + 0.5, r, 1826,
                f'[PG ID 0 PG GUID 0 Rank {r}] Failed to check the "should dump" flag on '
                "TCPStore, (maybe TCPStore server has shut down too early), with error: "
                "Connection reset by peer",
            ))


def generate(path: str, lines: int = 1_000_000, seed: int = 7, ranks: int | None = None,
             use_gzip: bool = False, profile: str = "default") -> int:
    """Write the log of `profile` to `path`; return the number of lines written.

    `ranks=None` takes the profile's own tensor-parallel size (8, or 64 for startup-heavy).
    """
    from benchmarks.profiles import PROFILES  # the profiles subclass Generator: import late

    prof = PROFILES[profile]
    r = prof.ranks if ranks is None else ranks
    if use_gzip:
        with (open(path, "wb") as raw,
              gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
              io.TextIOWrapper(gz, encoding="utf-8", newline="\n") as fh):
            return prof.write(fh, lines, seed, r)
    with open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as fh:
        return prof.write(fh, lines, seed, r)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.profiles import PROFILES

    ap = argparse.ArgumentParser(prog="python -m benchmarks.generate", description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output file (use --gzip for a .gz file)")
    ap.add_argument("--lines", type=int, default=1_000_000, help="minimum number of lines")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ranks", type=int, default=None,
                    help="tensor-parallel size (TP0..TPn-1); default: the profile's (8; 64 for startup-heavy)")
    ap.add_argument("--profile", default="default", choices=sorted(PROFILES),
                    help="line mix; see benchmarks/README.md ('default' is the original log)")
    ap.add_argument("--gzip", action="store_true", help="write gzip-compressed output")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    n = generate(a.out, a.lines, a.seed, a.ranks, a.gzip, a.profile)
    if not a.quiet:
        print(f"wrote {n} lines ({a.profile}) to {a.out} in {time.perf_counter() - t0:.2f} s",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
