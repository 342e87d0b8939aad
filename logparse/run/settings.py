"""Every setting a launch attempt states, with where it was stated: server arguments, launch
flags, environment (exported, inline, printed by SGLang or NCCL), NCCL version, CUDA-graph batch
sizes, weights, and the settings of the benchmark that measured it.

A key a log does not state is absent here, never defaulted: comparing two runs must tell "not
stated" from "equal". Keys: server arguments by their `server_args` names (`tp_size`), `env:NAME`,
`nccl_version`, `sglang_version`, `cuda_graph_bs` (the captured batch sizes), `weights_dtype`,
`weights_quant`, `model_class`, and `bench:NAME` for the benchmark (`bench:dataset_name`,
`bench:random_input_len`, `bench:num_prompts`, `bench:max_concurrency`, …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BenchServingResult,
    CaptureBatchSizes,
    LaunchCommand,
    NcclLog,
    NcclVersion,
    ShellCommand,
    WeightLoadEnd,
)
from logparse.run.launches import FLAG_ALIASES, arg_name

if TYPE_CHECKING:
    from logparse.run.launches import Launch
    from logparse.run.model import Run

# `NCCL INFO NCCL_PROTO set by environment to LL128` (NCCL_DEBUG=INFO prints every variable it read).
_NCCL_ENV = re.compile(r"\b(NCCL_[A-Z0-9_]+) set by environment to (\S+)")
# The SGLang release of a docker image tag or a pip pin: `lmsysorg/sglang:v0.5.4.post1-cu129`, `sglang==0.5.4`.
_SGLANG_VERSION = re.compile(r"sglang(?::v?|\[[\w,]+\]==|==)(\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)")
# The benchmark client's flags that decide what was measured (bench_serving's argument names).
BENCH_FLAGS = frozenset({
    "dataset_name", "dataset_path", "num_prompts", "random_input_len", "random_output_len",
    "random_range_ratio", "sharegpt_output_len", "sharegpt_context_len", "max_concurrency",
    "request_rate", "backend", "apply_chat_template", "tokenize_prompt", "seed", "warmup_requests",
    "gsp_num_groups", "gsp_prompts_per_group", "gsp_system_prompt_len", "gsp_question_len",
    "gsp_output_len", "input_len", "output_len", "batch_size",
})
# bench_serving's flags that change nothing it measures.
_BENCH_IGNORED = frozenset({"port", "host", "base_url", "output_file", "disable_tqdm", "model", "tokenizer",
                            "seed", "disable_stream", "profile", "pd_separated"})
# Short flags of SGLang's argument parser, reversed: '--tp' → 'tp_size'.
_ALIAS_TO_ARG = {alias: name for name, aliases in FLAG_ALIASES.items() for alias in aliases}


@dataclass(frozen=True)
class Setting:
    """One stated setting: its value and where the log states it."""

    key: str
    value: Any
    source: str  # 'server_args', 'command', 'export', 'inline', 'printed', 'log', 'bench'
    line: int | None = None


@dataclass
class LaunchSettings:
    """Every setting one launch attempt states."""

    values: dict[str, Setting] = field(default_factory=dict)
    # The log shows how the environment was set up (exports in a pasted shell, or `VAR=… cmd`):
    # a variable not set there was not set. Without it, an unlisted variable is unknown.
    env_captured: bool = False
    explicit: frozenset[str] = frozenset()  # server arguments set on the command line
    bench: bool = False  # a benchmark's settings or results are in the log

    def get(self, key: str) -> Any:
        s = self.values.get(key)
        return None if s is None else s.value

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def put(self, key: str, value: Any, source: str, line: int | None = None) -> None:
        # `server_args` print every argument: None there is a stated "not set", elsewhere no statement
        if value is None and source != "server_args":
            return
        self.values[key] = Setting(key, _hashable(value), source, line)


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value


def measured_launch(run: Run) -> Launch:
    """The attempt that was measured: the last one that came up (else the last one)."""
    for lc in reversed(run.lifecycles):
        if lc.up_line is not None:
            return lc.launch
    return run.last.launch


def launch_settings(launch: Launch) -> LaunchSettings:
    """Every setting the attempt states (server_args win over the command line: they are what ran)."""
    out = LaunchSettings()
    line = launch.command.line if launch.command is not None else None
    explicit: set[str] = set()
    for flag, value in launch.flags.items():
        name = _ALIAS_TO_ARG.get(flag, arg_name(flag))
        explicit.add(name)
        out.put(name, value, "command", line)
    out.explicit = frozenset(explicit)
    for name, value in launch.server_args.items():
        out.put(name, value, "server_args", _first_line(launch, name))
    _env(launch, out)
    _printed(launch, out)
    _bench(launch, out)
    return out


def _first_line(launch: Launch, name: str) -> int | None:
    from logparse.model.events import ServerArgs

    for e in launch.of(ServerArgs):
        if name in e.args:
            return int(e.line)
    return None


def _env(launch: Launch, out: LaunchSettings) -> None:
    cmd_line = launch.command.line if launch.command is not None else None
    for name, value in launch.exported.items():
        out.put(f"env:{name}", value, "export")
    for name, value in launch.inline_env.items():
        out.put(f"env:{name}", value, "inline", cmd_line)
    for name, value in launch.printed_env.items():
        out.put(f"env:{name}", value, "printed")
    for e in launch.of(NcclLog):
        m = _NCCL_ENV.search(e.text)
        if m:
            out.put(f"env:{m.group(1)}", m.group(2).rstrip(".,"), "printed", e.line)
    out.env_captured = bool(launch.exported or launch.inline_env)


def _printed(launch: Launch, out: LaunchSettings) -> None:
    """What the log prints about the run it is: NCCL, CUDA graphs, weights, SGLang release."""
    for e in launch.of(NcclVersion):
        out.put("nccl_version", e.version, "log", e.line)
        break
    else:
        for n in launch.of(NcclLog):
            if n.version:
                out.put("nccl_version", n.version, "log", n.line)
                break
    for c in launch.of(CaptureBatchSizes):
        if c.what == "bs" and c.sizes:
            out.put("cuda_graph_bs", tuple(c.sizes), "log", c.line)
            break
    loads = launch.of(WeightLoadEnd)
    if loads:
        w = loads[0]
        out.put("model_class", w.model_class, "log", w.line)
        out.put("weights_dtype", w.dtype, "log", w.line)
        out.put("weights_quant", w.quant, "log", w.line)
    for e in (*launch.of(LaunchCommand), *launch.of(ShellCommand)):
        m = _SGLANG_VERSION.search(e.text)
        if m:
            out.put("sglang_version", m.group(1), "command", e.line)
            break


def _bench(launch: Launch, out: LaunchSettings) -> None:
    """The benchmark client's settings (its command) and what its result blocks state."""
    values: dict[str, list[tuple[Any, int]]] = {}
    for cmd in launch.of(LaunchCommand):
        if "bench" not in (cmd.program or ""):
            continue
        out.bench = True
        for flag, value in cmd.flags.items():
            name = arg_name(flag)
            if name in _BENCH_IGNORED:
                continue
            values.setdefault(name, []).append((value, cmd.line))
    blocks = launch.of(BenchServingResult)
    if blocks:
        out.bench = True
    for b in blocks:
        for name in ("max_concurrency", "request_rate"):
            if name in b.fields:
                values.setdefault(name, []).append((b.fields[name], b.line))
        if "backend" in b.fields and "backend" not in values:
            values.setdefault("backend", []).append((b.fields["backend"], b.line))
    for name, seen in values.items():
        distinct = sorted({_bench_value(v) for v, _ in seen}, key=str)
        # a sweep (several concurrencies) is its set of values; one value is itself
        out.put(f"bench:{name}", distinct[0] if len(distinct) == 1 else tuple(distinct), "bench", seen[0][1])


def _bench_value(value: Any) -> Any:
    """A concurrency or rate as the block prints it and as the flag gives it (`1` == `1.0`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is None:
        return "not set"
    return _hashable(value)
