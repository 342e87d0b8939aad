"""Views of a parsed log: run facts (configuration, ranks, readiness, metrics) and tables.

Facts use the key vocabulary of the development corpus (shared/corpus/README.md, "Facts
vocabulary"), and state a key only when the log states it. Everything here is computed from
`ParsedLog`; nothing below does I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from logparse.parsing import colstats
from logparse.model.events import (
    BatchDump,
    BenchOneBatchResult,
    BenchServingResult,
    CaptureBatchSizes,
    CaptureBegin,
    CaptureEnd,
    CppTerminate,
    DistInitBegin,
    DistInitEnd,
    Event,
    ExceptionHeader,
    ExitCode,
    GraphKind,
    JitCompile,
    KnownMessage,
    KvCacheAllocated,
    LaunchCommand,
    MemoryPoolEnd,
    NcclLog,
    NcclVersion,
    NcclWatchdogTimeout,
    ProfiledTokensExceeded,
    Retraction,
    SchedulerLimits,
    ServerArgs,
    ServerReady,
    SglangWatchdog,
    Traceback,
    UvicornLifecycle,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.model.lazyre import lazy_compile
from logparse.parsing.records import root_exception

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# Events that show the server was (being) started: a log holding them and no readiness did not get ready.
STARTUP_EVENTS: tuple[type[Event], ...] = (
    DistInitBegin,
    DistInitEnd,
    NcclVersion,
    WeightLoadBegin,
    WeightLoadEnd,
    KvCacheAllocated,
    MemoryPoolEnd,
    CaptureBegin,
    CaptureEnd,
    CaptureBatchSizes,
    SchedulerLimits,
    ServerArgs,
    ProfiledTokensExceeded,
)
# Known messages that only print while a server starts.
STARTUP_CODES = frozenset({"model-import-ignored", "model-instantiate-failed", "custom-ar-pcie", "custom-ar-multinode",
                           "custom-ar-no-p2p", "custom-ar-world-size", "custom-ar-setup-failed", "gpu-context",
                           "vllm-platform", "attention-backend-default", "deepgemm-jit-session"})
# Exception messages that only occur while a server starts (weights, KV pool sizing, imports).
_STARTUP_MESSAGES = lazy_compile(
    r"_scale'|k_scale|v_scale|Not enough memory\. Please try to increase --mem-fraction-static|"
    r"is not divisible by weight quantization|scheduler died during initialization|Initialization failed|"
    r"could not import|No module named|undefined symbol|Capture cuda graph failed|Capture .*graph failed"
)
# The warmup's own requests (formats §2.1 #23), which do not show that the server served anyone.
_WARMUP_PATHS = frozenset({"/model_info", "/get_model_info", "/generate", "/encode", "/v1/chat/completions"})

# Frames whose presence places a traceback in server start-up or in the serving loop.
_STARTUP_FUNCS = frozenset({
    "__init__", "from_pretrained", "load_weights", "_bootstrap_scheduler", "load_weights_and_postprocess",
    "get_model", "init_model_worker", "init_cuda_graphs", "init_all_cuda_graphs", "load_model", "initialize",
    "init_memory_pool", "init_torch_distributed", "_launch_subprocesses", "wait_for_ready",
    "_wait_for_scheduler_ready", "launch_server", "_wait_and_warmup", "init_device_graphs",
    "init_prefill_cuda_graph", "capture", "profile_max_num_token", "init_distributed_environment",
})
_PROCESS_ENTRY_FUNCS = frozenset({
    "run_scheduler_process", "run_detokenizer_process", "run_data_parallel_controller_process",
})
_SERVING_FUNCS = frozenset({
    "event_loop_normal", "event_loop_overlap", "event_loop_pp", "run_batch", "forward_batch_generation",
    "process_input_requests", "loop_for_forward", "exposed_step", "forward_step", "process_batch_result",
    "handle_generate_request", "self_check_during_idle", "forward_decode_batch", "forward_prefill_batch",
})

_RANK_STYLES = frozenset({"sglang", "time", "cut", "diffusion"})


def rank_key(tag: str) -> tuple[Any, ...]:
    """Sort rank tags numerically: 'TP2' < 'TP10'; 'DP1 TP1' by DP then TP."""
    return tuple((re.sub(r"\d+", "", part), int(re.sub(r"\D", "", part) or 0)) for part in tag.split())


def traceback_phase(tb: Traceback) -> str:
    """'startup', 'serving' or 'unknown', from the frames and the header."""
    if tb.process == "warmup":
        return "startup"
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


def _mean(values: Sequence[float]) -> float | None:
    mean = colstats.nanmean(values)
    return None if mean is None else round(mean, 3)


def _max(values: Sequence[float]) -> float | None:
    return colstats.nanmax(values)


def _num(value: float) -> float | int:
    """JSON numbers as printed: 48.0 → 48."""
    return int(value) if value == int(value) and abs(value) < 2**53 else value


@dataclass
class Views:
    """Lazily computed views of one parsed log."""

    log: ParsedLog
    _cache: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ ranks and parallelism

    @cached_property
    def ranks(self) -> list[str]:
        """Rank tags printed inside SGLang envelopes, in numeric order."""
        seen: set[str] = set(self.log.ranks_seen)
        for cols in (self.log.decode, self.log.prefill, self.log.access):
            seen.update(v for v in cols.ranks.values if v and not v.startswith("GPU"))
        return sorted(seen, key=rank_key)

    @staticmethod
    def _is_sglang_rank(e: Event) -> bool:
        # c10d / torch '[rankN]:' prefixes are torch ranks, not SGLang rank tags.
        return not (e.rank or "").startswith("rank") and not (e.rank or "").startswith("GPU")

    @cached_property
    def server_args(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for e in self.log.of(ServerArgs):
            merged.update(e.args)
        return merged

    @cached_property
    def _launch(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Flags and env vars of the pasted server launch command(s), continuation lines merged
        (bench commands are not the server's)."""
        flags: dict[str, Any] = {}
        env: dict[str, str] = {}
        current_is_server = False
        for e in self.log.of(LaunchCommand):
            if e.program:
                current_is_server = "bench" not in e.program
            if current_is_server:
                flags.update(e.flags)
                env.update(e.env)
        return flags, env

    @property
    def launch_flags(self) -> dict[str, Any]:
        return self._launch[0]

    @property
    def launch_env(self) -> dict[str, str]:
        return self._launch[1]

    def arg(self, name: str) -> Any:
        """A server argument from server_args, else from a pasted launch command (`--kebab-case`)."""
        if name in self.server_args:
            return self.server_args[name]
        flag = "--" + name.replace("_", "-")
        flags = self.launch_flags
        if flag in flags:
            return flags[flag]
        aliases = {"tp_size": ("--tp", "--tensor-parallel-size"), "dp_size": ("--dp", "--data-parallel-size"),
                   "ep_size": ("--ep", "--expert-parallel-size"), "pp_size": ("--pp", "--pipeline-parallel-size"),
                   "model_path": ("--model", "--model-path")}
        for alias in aliases.get(name, ()):
            if alias in flags:
                return flags[alias]
        return None

    def _size_from_tags(self, prefix: str) -> int | None:
        nums = set()
        for tag in self.ranks:
            for part in tag.split():
                if part.startswith(prefix) and part[len(prefix):].isdigit():
                    nums.add(int(part[len(prefix):]))
        if len(nums) >= 2 and nums == set(range(len(nums))):
            return len(nums)
        return None

    @cached_property
    def untagged_scheduler(self) -> bool:
        """A modern (dated envelope) log whose scheduler lines carry no rank tag: TP=1."""
        if self.ranks:
            return False
        sched = (DistInitBegin, DistInitEnd, WeightLoadBegin, WeightLoadEnd, KvCacheAllocated, MemoryPoolEnd,
                 CaptureBegin, CaptureEnd)
        if any(isinstance(e, sched) and e.ts is not None and e.ts.year > 1900 for e in self.log.events):
            return True
        for cols in (self.log.decode, self.log.prefill):
            if len(cols) and any(not math.isnan(t) and t > 0 for t in cols.ts[:50]):
                return True
        return False

    @cached_property
    def tp_size(self) -> int | None:
        stated = self.arg("tp_size")
        if isinstance(stated, int):
            return stated
        tags = self._size_from_tags("TP")
        if tags:
            return tags
        return 1 if self.untagged_scheduler else None

    @cached_property
    def dp_size(self) -> int | None:
        stated = self.arg("dp_size")
        if isinstance(stated, int):
            return stated
        return self._size_from_tags("DP")

    # ------------------------------------------------------------------ configuration

    @cached_property
    def env_vars(self) -> dict[str, str]:
        """Environment variables the log shows were set: the `VAR=value` prefix of a pasted launch
        command. (Messages that merely suggest a variable, e.g. "You can set env SGLANG_ENABLE_SPEC_V2=True",
        do not count.)"""
        return dict(self.launch_env)

    def run_config(self) -> dict[str, Any]:
        """What this run was: model, parallelism, speculative decoding, quantization, backends, memory."""
        out: dict[str, Any] = {}
        model = self.arg("model_path")
        wl = self.log.of(WeightLoadEnd)
        if model:
            out["model"] = model
        if wl and wl[0].model_class:
            out["model_class"] = wl[0].model_class
        for key in ("tp_size", "dp_size", "ep_size", "pp_size"):
            value = getattr(self, key, None) if key in ("tp_size", "dp_size") else self.arg(key)
            if value is not None:
                out[key] = value
        if self.ranks:
            out["ranks_seen"] = len(self.ranks)
        spec = {k: self.arg(k) for k in ("speculative_algorithm", "speculative_draft_model_path",
                                          "speculative_num_steps", "speculative_eagle_topk",
                                          "speculative_num_draft_tokens")}
        spec = {k: v for k, v in spec.items() if v is not None}
        if spec:
            out["speculative"] = spec
        for key in ("quantization", "kv_cache_dtype", "attention_backend", "prefill_attention_backend",
                    "decode_attention_backend", "moe_runner_backend", "moe_a2a_backend", "sampling_backend",
                    "mem_fraction_static", "max_running_requests", "chunked_prefill_size", "context_length",
                    "page_size", "disable_cuda_graph", "enable_dp_attention", "mamba_scheduler_strategy",
                    "disable_custom_all_reduce", "dist_timeout", "watchdog_timeout"):
            value = self.arg(key)
            if value is not None:
                out[key] = value
        if wl and wl[0].quant and "quantization" not in out:
            out["quantization"] = wl[0].quant
        if wl and wl[0].dtype:
            out["dtype"] = wl[0].dtype
        if self.cuda_graph_max_bs is not None:
            out["cuda_graph_max_bs"] = self.cuda_graph_max_bs
        if self.env_vars:
            out["env"] = dict(sorted(self.env_vars.items()))
        gpus = {e.device for e in self.log.of(NcclLog)}
        if gpus:
            out["gpus_seen"] = len(gpus)
        return out

    # ------------------------------------------------------------------ failures

    @cached_property
    def tracebacks(self) -> list[Traceback]:
        return self.log.of(Traceback)

    @cached_property
    def readiness(self) -> Event | None:
        """The event that shows the server was ready: the ready marker, else uvicorn running, else a
        logged user request."""
        fallback: Event | None = None
        for e in self.log.events:
            if isinstance(e, ServerReady):
                return e
            if fallback is None and isinstance(e, UvicornLifecycle) and e.stage in ("running", "startup-complete"):
                fallback = e
            if fallback is None and isinstance(e, KnownMessage) and e.code in ("request-received", "request-finished"):
                fallback = e
        return fallback

    @cached_property
    def user_requests(self) -> int:
        """Access lines that are not the warmup's own requests from the server itself."""
        access = self.log.access
        paths = access.strings.values
        n = 0
        local = {access.strings.code(h) for h in ("127.0.0.1", "::1", "localhost")}
        for i in range(len(access)):
            if paths[access.path[i]] in _WARMUP_PATHS and access.client[i] in local:
                continue
            n += 1
        return n

    @cached_property
    def serving(self) -> bool:
        """The server handled work: stats lines, retractions, user requests, or readiness."""
        log = self.log
        return bool(len(log.decode) or len(log.prefill) or self.user_requests or log.of(Retraction)) or (
            self.readiness is not None)

    @cached_property
    def startup_evidence(self) -> bool:
        for e in self.log.events:
            if isinstance(e, STARTUP_EVENTS):
                return True
            if isinstance(e, KnownMessage) and e.code in STARTUP_CODES:
                return True
        return any(traceback_phase(tb) == "startup" for tb in self.tracebacks)

    @cached_property
    def ready(self) -> bool | None:
        if self.serving:
            return True
        if self.startup_evidence:
            return False
        return None

    # ------------------------------------------------------------------ facts

    def facts(self) -> dict[str, Any]:
        """Facts in the corpus vocabulary, only those the log states."""
        out: dict[str, Any] = {}
        log = self.log
        if self.ranks:
            out["ranks"] = self.ranks
        if self.tp_size is not None:
            out["tp_size"] = self.tp_size
        if self.dp_size is not None:
            out["dp_size"] = self.dp_size
        self._failure_facts(out)
        if self.ready is not None:
            out["ready"] = self.ready
        self._startup_facts(out)
        self._serving_facts(out)
        self._distributed_facts(out)
        benches = log.of(BenchServingResult)
        if benches:
            out["bench"] = benches[0].fields if len(benches) == 1 else benches[-1].fields
            if len(benches) > 1:
                out["bench_runs"] = [b.fields for b in benches]
        one = log.of(BenchOneBatchResult)
        if one:
            # bench_one_batch runs a warmup pass first; the measured run is the benchmark one.
            measured = [b for b in one if b.fields.get("phase") == "benchmark"] or one
            out["bench_one_batch"] = measured[-1].fields
        return out

    def _by_rank_or_list(self, events: list[Any], attr: str) -> dict[str, Any] | list[Any] | None:
        values = [(e.rank, getattr(e, attr)) for e in events if getattr(e, attr) is not None]
        if not values:
            return None
        if all(r for r, _ in values):
            out: dict[str, Any] = {}
            for r, v in values:
                out.setdefault(r, v)
            return out
        return [v for _, v in values]

    def _startup_facts(self, out: dict[str, Any]) -> None:
        log = self.log
        ends = log.of(CaptureEnd)
        target = [e for e in ends if e.graph_kind in (GraphKind.TARGET, GraphKind.VERIFY)]
        draft = [e for e in ends if e.graph_kind == GraphKind.DRAFT]
        if (v := self._by_rank_or_list(target, "elapsed_s")) is not None:
            out["cuda_graph_capture_s"] = v
        if (v := self._by_rank_or_list(draft, "elapsed_s")) is not None:
            out["draft_cuda_graph_capture_s"] = v
        if (bs := self.cuda_graph_max_bs) is not None:
            out["cuda_graph_max_bs"] = bs
        limits = log.of(SchedulerLimits)
        kv = log.of(KvCacheAllocated)
        if limits and limits[0].max_total_num_tokens is not None:
            out["kv_cache_tokens"] = limits[0].max_total_num_tokens
        elif kv and kv[0].tokens is not None:
            out["kv_cache_tokens"] = kv[0].tokens
        if limits:
            if limits[0].max_running_requests is not None:
                out["max_running_requests"] = limits[0].max_running_requests
            if limits[0].context_len is not None:
                out["context_len"] = limits[0].context_len
        prof = log.of(ProfiledTokensExceeded)
        if prof:
            out["profiled_max_total_tokens"] = prof[0].profiled
        wl = log.of(WeightLoadEnd)
        if (v := self._by_rank_or_list(wl, "mem_usage_gb")) is not None:
            out["weight_mem_usage_gb"] = v
        if (v := self._by_rank_or_list(wl, "avail_mem_gb")) is not None:
            out["avail_mem_after_weights_gb"] = v
        jit = self.jit_compile_s
        if jit is not None:
            out["jit_compile_s"] = jit

    @cached_property
    def cuda_graph_max_bs(self) -> int | None:
        sizes: list[int] = []
        for e in self.log.of(CaptureBatchSizes):
            if e.what == "bs":
                sizes.extend(e.sizes)
        for e in self.log.of(CaptureEnd):
            sizes.extend(e.sizes)
        if sizes:
            return max(sizes)
        stated = self.arg("cuda_graph_max_bs")
        return stated if isinstance(stated, int) else None

    @cached_property
    def jit_compile_s(self) -> float | None:
        begins: dict[tuple[str, str], Any] = {}
        longest: float | None = None
        for e in self.log.of(JitCompile):
            key = (e.library, e.name)
            if e.stage == "begin":
                begins[key] = e
            elif key in begins and e.ts is not None and begins[key].ts is not None:
                gap = (e.ts - begins.pop(key).ts).total_seconds()
                longest = gap if longest is None else max(longest, gap)
        return round(longest, 2) if longest is not None else None

    def _serving_facts(self, out: dict[str, Any]) -> None:
        d, p = self.log.decode, self.log.prefill
        if len(d):
            out["decode_lines"] = len(d)
        if len(p):
            out["prefill_lines"] = len(p)
        if len(d):
            if (v := _mean(d.cols["accept_len"])) is not None:
                out["accept_len_mean"] = v
            if (v := _mean(d.cols["accept_rate"])) is not None:
                out["accept_rate_mean"] = v
            if (v := _max(d.cols["gen_throughput"])) is not None:
                out["gen_throughput_max"] = _num(v)
            out["cuda_graph_false_lines"] = colstats.count_equal(d.cols["cuda_graph"], 0.0)
        both = [c for c in (d, p) if len(c)]
        for key, col in (("token_usage_max", "token_usage"), ("queue_req_max", "queue"), ("running_req_max", "running")):
            v = _max([m for c in both if (m := _max(c.cols[col])) is not None])
            if v is not None:
                out[key] = _num(v)
        mamba = _max([m for c in both if (m := _max(c.column("mamba_usage"))) is not None])
        if mamba is not None:
            out["mamba_usage_max"] = _num(mamba)
        retractions = self.log.of(Retraction)
        if retractions:
            out["retractions"] = len(retractions)

    def _distributed_facts(self, out: dict[str, Any]) -> None:
        log = self.log
        versions = [e.version for e in log.of(NcclVersion)] + [e.version for e in log.of(NcclLog) if e.version]
        if versions:
            out["nccl_version"] = versions[0]
        nranks = [e.nranks for e in log.of(NcclLog) if e.nranks]
        if nranks:
            out["nccl_nranks"] = max(nranks)
        wd = self.nccl_watchdog_timeouts
        if wd:
            w = wd[0]
            nt = {"op": w.op, "timeout_ms": w.timeout_ms, "seq": w.seq, "rank": w.nccl_rank}
            out["nccl_timeout"] = {k: v for k, v in nt.items() if v is not None}
        else:
            for t in log.of(CppTerminate):
                m = re.search(r"\bRank (\d+)\]", t.what)
                if m:
                    out["nccl_timeout"] = {"rank": int(m.group(1))}
                    break
        sw = log.of(SglangWatchdog)
        if sw and sw[0].timeout_s is not None:
            out["watchdog_timeout_s"] = _num(sw[0].timeout_s)
        bd = [e.batch_size for e in log.of(BatchDump) if e.batch_size is not None]
        if bd:
            out["watchdog_batch_size"] = bd[0]

    @cached_property
    def nccl_watchdog_timeouts(self) -> list[NcclWatchdogTimeout]:
        """The torch NCCL watchdog lines, with the tail of a hard-wrapped line (the next line,
        `…Timeout(ms)=600000) ran for … milliseconds`) merged back into its head."""
        from dataclasses import replace

        tails = {e.line: e for e in self.log.of(KnownMessage) if e.code == "nccl-watchdog-tail"}
        out = []
        for w in self.log.of(NcclWatchdogTimeout):
            tail = tails.get(w.line + 1)
            if tail is not None and w.timeout_ms is None:
                w = replace(w, end_line=tail.line, timeout_ms=tail.fields.get("timeout_ms"),
                            ran_ms=tail.fields.get("ran_ms"))
            out.append(w)
        return out

    # ------------------------------------------------------------------ failure facts

    @cached_property
    def first_error(self) -> Event | None:
        """The first error-shaped event of the log (traceback, exception header, watchdog, …)."""
        errors = [e for e in self.log.events if isinstance(e, (Traceback, ExceptionHeader, SglangWatchdog,
                                                                 NcclWatchdogTimeout, CppTerminate))]
        return errors[0] if errors else None

    def _failure_facts(self, out: dict[str, Any]) -> None:
        log = self.log
        errors = [e for e in log.events if isinstance(e, (Traceback, ExceptionHeader, SglangWatchdog,
                                                            NcclWatchdogTimeout, CppTerminate, BatchDump))]
        ranked = [e for e in errors if e.rank and self._is_sglang_rank(e)]
        if ranked:
            out["first_error_rank"] = ranked[0].rank
        tbs = self.tracebacks
        exc_type = None
        messages: list[str] = []
        for tb in tbs:
            etype, _msg = root_exception(tb)
            if etype and exc_type is None:
                exc_type = etype
            messages.append(tb.message)
            messages.extend(m for _, m in tb.chain)
        if exc_type is None:
            for t in log.of(CppTerminate):
                if t.exc_type:
                    exc_type = t.exc_type
                    break
        if exc_type:
            out["exception_type"] = exc_type
        text = "\n".join(messages)
        for e in log.of(ExitCode):
            out["exit_code"] = e.code
            break
        else:
            m = re.search(r"exit code:? (-?\d+)", text)
            if m:
                out["exit_code"] = int(m.group(1))
        m = re.search(r"\[Errno (\d+)\]", text)
        if m:
            out["errno"] = int(m.group(1))
        m = re.search(r"res=<Response \[(\d{3})\]>", text)
        if m:
            out["warmup_http_status"] = int(m.group(1))
        oom = _oom_fields(text)
        if oom:
            out["oom"] = oom
        m = re.search(r"\b(CUDA_ERROR_[A-Z_]+)\b", text)
        if m:
            out["cuda_error"] = m.group(1)
        m = re.search(r"block_n = (\d+)", text)
        if m:
            out["quant_block"] = int(m.group(1))


_OOM_GPU = lazy_compile(r"GPU (\d+) has a total capacity of ([\d.]+) GiB")
_OOM_GPU_CUT = lazy_compile(r"GPU (\d+) has a total capacity")
_OOM_TRIED = lazy_compile(r"Tried to allocate ([\d.]+) (MiB|GiB|KiB)")
_OOM_FREE = lazy_compile(r"of which ([\d.]+) (MiB|GiB|KiB) is free")


def _oom_fields(text: str) -> dict[str, Any]:
    if "out of memory" not in text.lower():
        return {}
    out: dict[str, Any] = {}
    if m := _OOM_GPU.search(text):
        out["gpu"] = int(m.group(1))
        out["total_capacity_gib"] = float(m.group(2))
    elif m := _OOM_GPU_CUT.search(text):
        out["gpu"] = int(m.group(1))
    if m := _OOM_TRIED.search(text):
        out["tried_to_allocate_mib"] = _to_mib(float(m.group(1)), m.group(2))
    if m := _OOM_FREE.search(text):
        out["free_mib"] = _to_mib(float(m.group(1)), m.group(2))
    return out


def _to_mib(value: float, unit: str) -> float:
    return round(value * {"KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}[unit], 2)


def is_nan(v: float) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _median(values: Sequence[float]) -> float | None:
    return colstats.nanmedian(values)


def _round(v: float | None, nd: int = 2) -> float | None:
    return None if v is None else round(v, nd)


def serving_summary(log: ParsedLog) -> dict[str, Any]:
    """Throughput, load, KV use and speculative acceptance over the whole log (stats lines)."""
    d, p, a = log.decode, log.prefill, log.access
    out: dict[str, Any] = {"decode_lines": len(d), "prefill_lines": len(p), "http_requests": len(a)}
    if len(d):
        gen = d.cols["gen_throughput"]
        out["gen_throughput"] = {"median": _round(_median(gen)), "max": _round(_max(gen))}
        out["running_req"] = {"median": _median(d.cols["running"]), "max": _max(d.cols["running"])}
        out["queue_req"] = {"median": _median(d.cols["queue"]), "max": _max(d.cols["queue"])}
        out["token_usage"] = {"median": _round(_median(d.cols["token_usage"])),
                              "max": _round(_max(d.cols["token_usage"]))}
        acc = d.cols["accept_len"]
        if colstats.any_present(acc):
            out["accept_len"] = {"mean": _mean(acc), "median": _round(_median(acc)), "min": _round(colstats.nanmin(acc)),
                                 "max": _round(_max(acc))}
            rate = d.cols["accept_rate"]
            if colstats.any_present(rate):
                out["accept_rate"] = {"mean": _mean(rate), "median": _round(_median(rate))}
        out["cuda_graph_false_lines"] = colstats.count_equal(d.cols["cuda_graph"], 0.0)
    if len(p):
        thr = p.cols["input_throughput"]
        if colstats.any_present(thr):
            out["input_throughput"] = {"median": _round(_median(thr)), "max": _round(_max(thr))}
        out["prefill_queue_req_max"] = _max(p.cols["queue"])
    if len(a):
        from collections import Counter

        out["http_status"] = {str(k): v for k, v in sorted(Counter(a.status).items())}
    out["retractions"] = len(log.of(Retraction))
    return {k: v for k, v in out.items() if v is not None}
