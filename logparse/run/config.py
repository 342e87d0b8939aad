"""Run configuration: ranks and parallelism, server arguments, launch flags and environment, and
the `config` summary (model, parallelism, speculative decoding, quantization, backends, memory)."""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    CaptureBatchSizes,
    CaptureBegin,
    CaptureEnd,
    DistInitBegin,
    DistInitEnd,
    Event,
    ExceptionHeader,
    KvCacheAllocated,
    MemoryPoolEnd,
    NcclLog,
    ServerArgs,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.model.numbers import to_int
from logparse.run.launches import FLAG_ALIASES
from logparse.run.model import run_of
from logparse.run.ranks import is_sglang_rank, rank_key

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


class ConfigView:
    """Configuration facts of one parsed log (a mixin of `Views`)."""

    log: ParsedLog

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
        return is_sglang_rank(e)

    @cached_property
    def server_args(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for e in self.log.of(ServerArgs):
            merged.update(e.args)
        return merged

    @cached_property
    def _launch(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Flags and environment of the log's server launch commands, merged in file order (the
        environment includes the variables exported in the pasted shell before a command)."""
        flags: dict[str, Any] = {}
        env: dict[str, str] = {}
        for launch in run_of(self.log).launches:
            flags.update(launch.flags)
            env.update(launch.env)
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
        for alias in FLAG_ALIASES.get(name, ()):
            if alias in flags:
                return flags[alias]
        return None

    def _size_from_tags(self, prefix: str) -> int | None:
        nums = set()
        for tag in self.ranks:
            for part in tag.split():
                n = to_int(part[len(prefix):]) if part.startswith(prefix) and part[len(prefix):].isdigit() else None
                if n is not None:
                    nums.add(n)
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
        # The scheduler's own exception header prints its rank tag whenever there is more than one
        # (`[… TP3] Scheduler hit an exception`), so a dated one without a tag is TP=1 too.
        if any(e.process == "Scheduler" and e.ts is not None and e.ts.year > 1900
               for e in self.log.of(ExceptionHeader)):
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
