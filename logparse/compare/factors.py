"""Declared factors of a comparison (`--vary speculative`): the setting keys each one owns,
including the settings SGLang derives from it, and the keys that are never a difference."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# Settings that never change what a run measures, or always differ between two launches.
NEVER_DIFFERENT = frozenset({
    "random_seed", "port", "host", "nccl_port", "dist_init_addr", "log_level", "log_level_http",
    "log_requests", "log_requests_level", "decode_log_interval", "show_time_cost", "enable_metrics",
    "enable_metrics_for_all_schedulers", "bucket_time_to_first_token", "bucket_inter_token_latency",
    "bucket_e2e_request_latency", "crash_dump_folder", "file_storage_path", "served_model_name",
    "weight_version", "api_key", "admin_api_key", "download_dir", "enable_request_time_stats_logging",
    "enable_cache_report", "tokenizer_path", "model", "tokenizer_worker_num", "skip_server_warmup",
    "warmups", "metrics_http_port", "prometheus_multiproc_dir", "base_gpu_id",
    # the shell's own environment: where models are cached, which shell ran
    "env:HF_HOME", "env:HF_HUB_CACHE", "env:TRANSFORMERS_CACHE", "env:HOME", "env:PATH", "env:PWD",
    "env:HF_TOKEN", "env:HUGGING_FACE_HUB_TOKEN", "env:TERM", "env:SHELL", "env:USER",
})


@dataclass(frozen=True)
class Factor:
    """A named factor: the keys it owns, and the derived keys SGLang changes because of it."""

    name: str
    owns: Callable[[str], bool]
    derived: frozenset[str] = frozenset()
    note: str = ""

    def covers(self, key: str) -> bool:
        return self.owns(key) or key in self.derived


def _prefix(*prefixes: str, keys: Iterable[str] = ()) -> Callable[[str], bool]:
    exact = frozenset(keys)
    return lambda k: k in exact or k.startswith(prefixes)


# SGLang's server_args: speculative decoding resets max_running_requests (W22), turns the overlap
# scheduler off for spec v1 (W24), disables mixed chunked prefill for ngram (W29), and changes the
# CUDA-graph batch list (capped by the new max running requests); the draft model adds KV pages.
_SPEC_DERIVED = frozenset({"max_running_requests", "cuda_graph_max_bs", "cuda_graph_bs", "cuda_graph_bs_list",
                           "disable_overlap_schedule", "enable_mixed_chunk", "max_total_tokens",
                           "mem_fraction_static"})
FACTORS: dict[str, Factor] = {
    "speculative": Factor(
        "speculative",
        _prefix("speculative_", "env:SGLANG_ENABLE_SPEC", "env:SGLANG_SPEC",
                keys=("enable_beta_spec", "model_class_draft")),
        _SPEC_DERIVED,
        "speculative decoding (algorithm, draft model, steps, top-k, draft tokens) and what SGLang derives "
        "from it: max_running_requests, the overlap schedule, the CUDA-graph batch list",
    ),
    "cuda-graph": Factor(
        "cuda-graph",
        _prefix("cuda_graph_", "disable_cuda_graph", "piecewise_cuda_graph", "enable_piecewise_cuda_graph",
                keys=("enable_torch_compile", "torch_compile_max_bs")),
        note="CUDA graphs: on/off, padding, max batch size and the captured batch sizes",
    ),
    "nccl": Factor(
        "nccl",
        _prefix("env:NCCL_", "nccl_", "env:TORCH_NCCL_",
                keys=("disable_custom_all_reduce", "enable_nccl_nvls", "enable_symm_mem", "enable_mscclpp")),
        note="NCCL: version, NCCL_* variables, custom all-reduce and NVLS",
    ),
    "attention-backend": Factor(
        "attention-backend",
        _prefix(keys=("attention_backend", "prefill_attention_backend", "decode_attention_backend",
                      "mm_attention_backend")),
        frozenset({"page_size"}),  # FlashMLA / TRT-LLM MLA / cutlass MLA force their page size
        "the attention backend (SGLang sets the page size some backends need)",
    ),
    "moe-backend": Factor(
        "moe-backend",
        _prefix("deepep_", keys=("moe_runner_backend", "moe_a2a_backend", "enable_deepep_moe",
                                 "enable_flashinfer_cutlass_moe", "enable_flashinfer_trtllm_moe",
                                 "enable_triton_kernel_moe", "enable_ep_moe", "flashinfer_mxfp4_moe_precision")),
        note="the MoE runner and all-to-all backends",
    ),
    "quantization": Factor(
        "quantization",
        _prefix(keys=("quantization", "quantization_param_path", "kv_cache_dtype", "dtype", "weights_dtype",
                      "weights_quant", "modelopt_quant", "torchao_config")),
        note="weights and KV-cache quantization",
    ),
}

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$")


class FactorError(ValueError):
    """A --vary / --allow name that is no factor, server argument or variable name."""


def key_of(name: str) -> str:
    """A setting name as a user types it → its key: '--mem-fraction-static' / 'mem-fraction-static'
    → 'mem_fraction_static'; 'NCCL_PROTO' (upper case) → 'env:NCCL_PROTO'; 'env:X' and 'bench:x' kept."""
    name = name.strip()
    if name.startswith(("env:", "bench:")):
        return name
    bare = name.lstrip("-")
    if not _NAME.match(bare):
        raise FactorError(f"not a factor, server argument or environment variable: {name!r}")
    if bare.isupper() or (bare.upper() == bare and "_" in bare):
        return f"env:{bare}"
    return bare.replace("-", "_").lower()


def resolve(names: Iterable[str]) -> list[Factor]:
    """--vary names → factors: a named factor, else the single setting it names."""
    out: list[Factor] = []
    for name in names:
        low = name.strip().lower().replace("_", "-")
        if low in FACTORS:
            out.append(FACTORS[low])
            continue
        key = key_of(name)
        out.append(Factor(key, _prefix(keys=(key,)), note=f"the setting {key}"))
    return out
