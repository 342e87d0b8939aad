"""Rules of the 'memory' family (see shared/diagnoses.md), one module per rule: GPU OOM by phase
(oom, oom_phase), KV-pool sizing (kv_pool), host OOM (host), KV-cache exhaustion while serving
(kv_cache), mamba state-pool exhaustion (mamba), SGLang's own leak check (leak), CUDA graphs captured
far beyond the batches served (graphs)."""

from __future__ import annotations

from logparse.rules.memory.graphs import cuda_graph_oversized
from logparse.rules.memory.host import host_oom
from logparse.rules.memory.kv_cache import kv_cache_exhausted
from logparse.rules.memory.kv_pool import kv_pool_advice, kv_pool_no_room
from logparse.rules.memory.leak import memory_leak_detected
from logparse.rules.memory.mamba import mamba_pool_exhausted
from logparse.rules.memory.oom import cuda_oom
from logparse.rules.memory.oom_phase import STARTUP_OOM_PHASES, oom_phase

__all__ = [
    "STARTUP_OOM_PHASES",
    "cuda_graph_oversized",
    "cuda_oom",
    "host_oom",
    "kv_cache_exhausted",
    "kv_pool_advice",
    "kv_pool_no_room",
    "mamba_pool_exhausted",
    "memory_leak_detected",
    "oom_phase",
]
