"""The phase a CUDA OOM happened in: from the traceback's frame names, SGLang's graph-capture
wrapper, else the start-up phase the rank was in. Frame names are compared as plain strings."""

from __future__ import annotations

from logparse.model.events import Traceback
from logparse.model.record import Record, record
from logparse.rules.context import RuleContext
from logparse.rules.frames import file_name
from logparse.run.timeline import startup_phases

# cuda-oom phases that only happen while the server starts.
STARTUP_OOM_PHASES = frozenset({"weight-load", "kv-alloc", "cuda-graph-capture"})


@record  # frozen and keyword-only like the @dataclass it was, without code generation at import
class FrameNames(Record):
    """A family of function / file names of SGLang's code across releases."""

    exact: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    contains: tuple[str, ...] = ()  # lower-case; compared with the lower-cased name

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or not name:
            return False
        low = name.lower()
        return (
            name in self.exact
            or name.startswith(self.prefixes)
            or name.endswith(self.suffixes)
            or any(part in low for part in self.contains)
        )


# Checked in this order, because a graph capture runs forward passes and a decode step samples.
PHASE_FRAMES: tuple[tuple[str, FrameNames], ...] = (
    ("cuda-graph-capture", FrameNames(
        contains=("capture", "cuda_graph", "graph_runner", "init_device_graphs", "init_cuda_graphs"))),
    ("weight-load", FrameNames(
        exact=frozenset({"load_model", "_load_weights", "get_model", "load_weights_and_postprocess",
                         "loader.py", "weight_utils.py"}),
        prefixes=("load_weights", "weight_loader", "model_loader"),
        suffixes=("_weight_loader",))),  # default_weight_loader, sharded_weight_loader
    ("kv-alloc", FrameNames(
        # 0.5.10+ moved the pool setup to model_runner_kv_cache_mixin.py / pool_configurator.py.
        exact=frozenset({"init_memory_pool", "profile_max_num_token", "_create_buffers", "memory_pool.py",
                         "model_runner_kv_cache_mixin.py", "pool_configurator.py"}),
        prefixes=("init_kv_cache", "alloc_kv"))),
    ("sampling", FrameNames(
        exact=frozenset({"sample", "sampler.py", "sampling.py"}),
        prefixes=("top_k_top_p", "min_p_sampling", "_sample"),
        suffixes=("sampling_from_probs",))),
    ("prefill", FrameNames(
        exact=frozenset({"forward_extend", "forward_prefill_batch"}),
        prefixes=("run_prefill", "forward_prefill"))),
    ("decode", FrameNames(
        exact=frozenset({"forward_decode", "forward_decode_batch", "forward_idle"}),
        prefixes=("run_decode",))),
)
_PHASE_OF_STARTUP = {
    "weight-load": "weight-load",
    "kv-alloc": "kv-alloc",
    "capture-target": "cuda-graph-capture",
    "capture-draft": "cuda-graph-capture",
    "capture-draft-extend": "cuda-graph-capture",
    "capture-piecewise": "cuda-graph-capture",
    "capture-prefill": "cuda-graph-capture",
}


def _frame_names(tb: Traceback) -> list[str]:
    names: list[str] = []
    for f in tb.frames:
        if f.func:
            names.append(f.func)
        names.append(file_name(f.path))
    return names


def oom_phase(
    ctx: RuleContext, tb: Traceback | None, text: str, line: int, rank: str | None
) -> tuple[str, str]:
    """(phase, why) of a CUDA OOM: from the traceback frames, the wrapping message, else the startup
    phase the rank was in when the OOM was logged."""
    if tb is not None:
        names = _frame_names(tb)
        for phase, family in PHASE_FRAMES:
            hit = next((n for n in names if n in family), None)
            if hit is not None:
                return phase, f"frame {hit}"
    if ctx.match("cuda-graph-capture-failed", text) is not None:
        return "cuda-graph-capture", "the 'Capture … graph failed' wrapper"
    phases = startup_phases(ctx.log)
    for key in ([rank] if rank else []) + ["main"] + sorted(phases):
        plist = [
            p
            for p in phases.get(key, [])
            if p.start_line < line and (p.end_line is None or p.end_line > line)
        ]
        if plist:
            current = max(plist, key=lambda p: p.start_line)
            if current.name in _PHASE_OF_STARTUP:
                why = f"startup phase {current.name} in progress on {current.rank}"
                return _PHASE_OF_STARTUP[current.name], why
    return "unknown", "neither the traceback frames nor the surrounding lines show the phase"
