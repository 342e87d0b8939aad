"""The run vocabulary: outcomes, severity order, and the event and message sets that mean start-up,
readiness, a fatal end, SGLang's reaction to a failure, or a shutdown. One definition for every layer."""

from __future__ import annotations

from logparse.model.events import SEVERITY_ORDER as _SEVERITY_ORDER
from logparse.model.events import (
    CaptureBatchSizes,
    CaptureBegin,
    CaptureEnd,
    CppTerminate,
    DistInitBegin,
    DistInitEnd,
    Event,
    ExceptionHeader,
    ExitCode,
    HealthCheckFailed,
    Killed,
    KvCacheAllocated,
    MemoryPoolEnd,
    NcclVersion,
    NcclWatchdogTimeout,
    ProfiledTokensExceeded,
    SchedulerDead,
    SchedulerLimits,
    ServerArgs,
    Severity,
    SglangWatchdog,
    ShellSignal,
    SigquitReceived,
    SubprocessCrashed,
    Traceback,
    WeightLoadBegin,
    WeightLoadEnd,
)

OUTCOMES = (
    "ready",
    "serving",
    "stopped",
    "crashed-at-startup",
    "crashed-while-serving",
    "hung",
    "incomplete",
)
# Most severe first; unknown severities sort last.
SEVERITY_ORDER = _SEVERITY_ORDER  # owned by model.events (Severity's declaration order)


def severity_rank(severity: Severity | str) -> int:
    """0 for error, 1 for warning, 2 for info, 3 for anything else (sort key, most severe first)."""
    return _ORDER_BY_NAME.get(str(severity), 3)


_ORDER_BY_NAME = {str(k): v for k, v in SEVERITY_ORDER.items()}


# Lines that mean a process died (whatever explains them).
FATAL_EVENTS: tuple[type[Event], ...] = (
    ExceptionHeader,
    CppTerminate,
    SchedulerDead,
    SubprocessCrashed,
    ShellSignal,
    Killed,
    SigquitReceived,
)
# Lines SGLang prints after a child failed: grouped under the root cause as its consequences.
CONSEQUENCE_EVENTS: tuple[type[Event], ...] = (
    SigquitReceived,
    SchedulerDead,
    ExitCode,
    SubprocessCrashed,
    Killed,
)
# Error-shaped lines listed in the "errors seen" summary.
ERROR_EVENTS: tuple[type[Event], ...] = (
    Traceback,
    SglangWatchdog,
    NcclWatchdogTimeout,
    CppTerminate,
    HealthCheckFailed,
    SigquitReceived,
    SchedulerDead,
    SubprocessCrashed,
    ShellSignal,
    Killed,
)
# Events that show the server was (being) started: a launch holding them and no readiness did not get ready.
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
STARTUP_CODES = frozenset(
    {
        # Fp8Config built for a serialized-fp8 checkpoint (model loading)
        "fp8-checkpoint-detected",
        "model-import-ignored",
        "model-instantiate-failed",
        "custom-ar-pcie",
        "custom-ar-multinode",
        "custom-ar-no-p2p",
        "custom-ar-world-size",
        "custom-ar-setup-failed",
        "gpu-context",
        "platform-detected",  # vLLM's `Automatically detected platform cuda.` (old releases import vLLM)
        "attn-backend-default",
        "runai-streamer",  # the Run:ai model streamer reporting the weights it streamed (--load-format runai_streamer)
        "vllm-weights-format",  # older releases loading weights through vLLM's weight_utils
        "rpyc-server-started",  # 0.1.x starting its TP workers as rpyc services
        "cuda-graph-addresses",  # custom all-reduce registering the buffers of the graphs just captured
        "rank-load-weight",  # 0.1.x `Rank N: load weight begin/end.`
        # sglang-jax's weight loader (its checkpoint is read only while the server starts)
        "jax-lazy-load-begin", "jax-weight-file-missing", "jax-weight-not-in-index", "jax-weight-excluded",
        "jax-scan-metadata",
        # KV-transfer / HiCache tiers set up while the scheduler initialises (PD disaggregation's
        # Mooncake transfer engine, HiCache's host pool and L3 stores: Mooncake, HF3FS)
        "mooncake-config-loaded", "hicache-host-alloc", "hicache-storage-create", "hf3fs-metadata-client",
        # sglang_router's launcher starting one SGLang server per DP rank (its router's own start-up
        # lines are not a server's)
        "router-launch-dp-server",
    }
)
# uvicorn stages that mean the HTTP server is up (the fallback readiness marker of old releases).
READY_STAGES = frozenset({"running", "startup-complete"})
SHUTDOWN_STAGES = frozenset({"shutting-down", "waiting-shutdown", "shutdown-complete", "finished"})
SHUTDOWN_CODES = frozenset({"sigterm-received", "graceful-exit", "sigterm-node-rank"})
# Logged requests (`--log-requests`): real traffic unless they carry the warmup prompt.
# A user request rejected for its length is a request too (the warmup prompt is short).
REQUEST_CODES = frozenset({"request-received", "request-finished", "input-exceeds-max-length"})
WARMUP_PROMPT = "The capital city of France is"
# HTTP paths that are health checks, metadata or SGLang's own warmup — not user traffic.
INFRA_PATHS = frozenset(
    {
        "/health",
        "/health_generate",
        "/model_info",
        "/get_model_info",
        "/server_info",
        "/get_server_info",
        "/v1/models",
        "/metrics",
        "/flush_cache",
        "/get_load",
        "/v1/loads",
        "/ping",
        "/start_profile",
        "/stop_profile",
    }
)
