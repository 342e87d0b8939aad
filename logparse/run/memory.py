"""The memory budget of each rank of a launch: where the GPU's memory went, step by step, from the
start-up lines SGLang prints (weights, KV / mamba / SWA pools, target and draft graphs).

SGLang sizes the KV pool as `avail_after_weights − free_at_start × (1 − mem_fraction_static)`
(`model_runner.profile_max_num_token`), so the part of the free memory outside the static pool
(`free_at_start × (1 − f)`) is what activations and CUDA graphs live in. Every number here is one the
log printed, or a difference of two printed numbers; nothing is assumed about the GPU.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import TYPE_CHECKING, Any, TypeGuard

from logparse.model.events import (
    CaptureBatchSizes,
    CaptureBegin,
    CaptureEnd,
    Event,
    ExceptionHeader,
    GraphKind,
    KvCacheAllocated,
    KvCacheDtype,
    MambaCacheAllocated,
    MemoryPoolEnd,
    SwaPoolAllocated,
    Traceback,
    WeightLoadBegin,
    WeightLoadEnd,
)
from logparse.model.record import Record, record

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.launches import Launch

GIB = 1 << 30
# Graphs whose batch sizes `--cuda-graph-max-bs` bounds (piecewise / prefill graphs are bounded by tokens).
DECODE_GRAPHS = frozenset(
    {GraphKind.TARGET, GraphKind.DRAFT, GraphKind.DRAFT_EXTEND, GraphKind.VERIFY}
)


def present(v: Any) -> TypeGuard[float]:
    """A real number (not a bool, not NaN)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


def _gb(v: Any) -> float | None:
    return round(float(v), 2) if present(v) else None


@record
class KvPool(Record):
    """One `KV Cache is allocated` line: the target pool, or a draft model's own pool."""

    role: str  # 'target' or 'draft'
    line: int
    tokens: int | None
    k_gb: float | None
    v_gb: float | None
    kv_gb: float | None  # single-buffer (MLA) pools print one size
    dtype: str | None

    @property
    def gb(self) -> float | None:
        if self.kv_gb is not None:
            return self.kv_gb
        if self.k_gb is None and self.v_gb is None:
            return None
        return round((self.k_gb or 0.0) + (self.v_gb or 0.0), 2)

    @property
    def bytes_per_token(self) -> int | None:
        """KV bytes per token of this pool (GB / #tokens; GB as SGLang prints them: GiB)."""
        gb = self.gb
        return round(gb * GIB / self.tokens) if gb and self.tokens else None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role,
            "line": self.line,
            "tokens": self.tokens,
            "gb": self.gb,
        }
        if self.kv_gb is None:
            out.update(k_gb=self.k_gb, v_gb=self.v_gb)
        out.update(dtype=self.dtype, bytes_per_token=self.bytes_per_token)
        return out


@record
class GraphCapture(Record):
    """One `Capture … graph begin/end` pair: the memory the graphs took."""

    graph: str  # as printed ('cuda graph', 'draft cuda graph', 'target decode CUDA graph', …)
    kind: str  # GraphKind
    line: int
    begin_avail_gb: float | None
    end_avail_gb: float | None
    printed_gb: float | None  # `mem usage=` of the end line
    sizes: tuple[int, ...] = ()

    @property
    def gb(self) -> float | None:
        """GB the capture took: as printed, else the drop of free memory from begin to end."""
        if self.printed_gb is not None:
            return self.printed_gb
        if self.begin_avail_gb is not None and self.end_avail_gb is not None:
            return round(max(0.0, self.begin_avail_gb - self.end_avail_gb), 2)
        return None

    @property
    def finished(self) -> bool:
        return self.end_avail_gb is not None or self.printed_gb is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "finished": self.finished,
            "kind": self.kind,
            "line": self.line,
            "gb": self.gb,
            "avail_before_gb": self.begin_avail_gb,
            "avail_after_gb": self.end_avail_gb,
            "max_bs": max(self.sizes) if self.sizes else None,
        }


class RankBudget:
    """The memory budget of one rank in one launch (GB as SGLang prints them); filled line by line."""

    __slots__ = (
        "avail_after_pools_gb",
        "avail_after_weights_gb",
        "draft_weights_gb",
        "free_at_start_gb",
        "full_tokens",
        "graphs",
        "lines",
        "mamba_gb",
        "mamba_size",
        "pools",
        "rank",
        "swa_gb",
        "swa_tokens",
        "weights_gb",
    )

    def __init__(self, rank: str | None) -> None:
        self.rank = rank
        self.free_at_start_gb: float | None = None  # `Load weight begin. avail mem=`
        self.weights_gb: float | None = None
        self.avail_after_weights_gb: float | None = None
        self.draft_weights_gb: float | None = None
        self.pools: list[KvPool] = []
        self.mamba_gb: float | None = None
        self.mamba_size: int | None = None
        self.swa_gb: float | None = None
        self.swa_tokens: int | None = None
        self.full_tokens: int | None = None
        self.avail_after_pools_gb: float | None = None  # `Memory pool end. avail mem=`
        self.graphs: list[GraphCapture] = []
        self.lines: list[int] = []

    def __repr__(self) -> str:
        return f"RankBudget({self.as_dict()!r})"

    @property
    def kv(self) -> KvPool | None:
        return next((p for p in self.pools if p.role == "target"), None)

    @property
    def draft_kv(self) -> KvPool | None:
        return next((p for p in self.pools if p.role == "draft"), None)

    def graph_gb(self, *kinds: str) -> float | None:
        """GB taken by the captures of these kinds (all when none given); None when none printed one."""
        values = [g.gb for g in self.graphs if (not kinds or g.kind in kinds) and g.gb is not None]
        return round(sum(values), 2) if values else None

    @property
    def target_graph_gb(self) -> float | None:
        return self.graph_gb(
            GraphKind.TARGET, GraphKind.VERIFY, GraphKind.PIECEWISE, GraphKind.PREFILL
        )

    @property
    def draft_graph_gb(self) -> float | None:
        return self.graph_gb(GraphKind.DRAFT, GraphKind.DRAFT_EXTEND)

    @property
    def free_after_gb(self) -> float | None:
        """Free memory after the last step the log shows (what the server runs its activations in)."""
        for g in reversed(self.graphs):
            if g.end_avail_gb is not None:
                return g.end_avail_gb
            if g.begin_avail_gb is not None:  # unfinished: what it started from
                return g.begin_avail_gb
        return (
            self.avail_after_pools_gb
            if self.avail_after_pools_gb is not None
            else self.avail_after_weights_gb
        )

    @property
    def bytes_per_token(self) -> int | None:
        kv = self.kv
        return kv.bytes_per_token if kv is not None else None

    def steps(self) -> list[tuple[str, float | None, float | None]]:
        """(step, GB it took, GB free after it) in start-up order."""
        out: list[tuple[str, float | None, float | None]] = []
        if self.weights_gb is not None or self.avail_after_weights_gb is not None:
            out.append(("weights", self.weights_gb, self.avail_after_weights_gb))
        pools_gb = [
            x
            for x in (self.kv.gb if self.kv else None, self.mamba_gb, self.swa_gb)
            if x is not None
        ]
        if pools_gb or self.avail_after_pools_gb is not None:
            out.append(
                ("pools", round(sum(pools_gb), 2) if pools_gb else None, self.avail_after_pools_gb)
            )
        for g in self.graphs:
            out.append((f"{g.kind} graphs", g.gb, g.end_avail_gb))
        return out

    def as_dict(self) -> dict[str, Any]:
        kv = self.kv
        return {
            "rank": self.rank,
            "free_at_start_gb": self.free_at_start_gb,
            "weights_gb": self.weights_gb,
            "avail_after_weights_gb": self.avail_after_weights_gb,
            "draft_weights_gb": self.draft_weights_gb,
            "kv_tokens": kv.tokens if kv else None,
            "kv_gb": kv.gb if kv else None,
            "kv_dtype": kv.dtype if kv else None,
            "kv_bytes_per_token": self.bytes_per_token,
            "pools": [p.as_dict() for p in self.pools],
            "mamba_gb": self.mamba_gb,
            "mamba_cache_size": self.mamba_size,
            "swa_gb": self.swa_gb,
            "swa_tokens": self.swa_tokens,
            "full_tokens": self.full_tokens,
            "avail_after_pools_gb": self.avail_after_pools_gb,
            "target_graph_gb": self.target_graph_gb,
            "draft_graph_gb": self.draft_graph_gb,
            "draft_kv_gb": self.draft_kv.gb if self.draft_kv else None,
            "graphs": [g.as_dict() for g in self.graphs],
            "free_after_gb": self.free_after_gb,
            "steps": [
                {"step": s, "gb": gb, "avail_after_gb": left} for s, gb, left in self.steps()
            ],
        }


@record
class MemoryBudget(Record):
    """The memory budget of one launch: per rank, the fraction in effect, the captured sizes."""

    ranks: list[RankBudget]
    mem_fraction_static: float | None
    # 'command' (set by the user), 'server_args' (SGLang's default), None
    fraction_source: str | None
    captured_sizes: tuple[int, ...]
    gpu_total_gb: float | None = None  # torch's `total capacity` where an OOM printed it

    def __bool__(self) -> bool:
        return bool(self.ranks)

    @property
    def tightest(self) -> RankBudget | None:
        """The rank with the least free memory after start-up (ties: the first)."""
        known = [r for r in self.ranks if r.free_after_gb is not None]
        return min(known, key=lambda r: r.free_after_gb or 0.0) if known else None

    def rank(self, rank: str | None) -> RankBudget | None:
        """The budget of a rank (the first rank's when the rank printed none: ranks are symmetric)."""
        return next(
            (r for r in self.ranks if r.rank == rank), self.ranks[0] if self.ranks else None
        )

    @property
    def bytes_per_token(self) -> int | None:
        return next((r.bytes_per_token for r in self.ranks if r.bytes_per_token), None)

    @property
    def reserved_gb(self) -> float | None:
        """Free memory outside the static pool on the tightest rank: free_at_start × (1 − f)."""
        r = self.tightest or (self.ranks[0] if self.ranks else None)
        f = self.mem_fraction_static
        if r is None or f is None or r.free_at_start_gb is None:
            return None
        return round(r.free_at_start_gb * (1 - f), 2)

    def as_dict(self) -> dict[str, Any]:
        tight = self.tightest
        return {
            "mem_fraction_static": self.mem_fraction_static,
            "mem_fraction_static_source": self.fraction_source,
            "gpu_total_gb": self.gpu_total_gb,
            "captured_max_bs": max(self.captured_sizes) if self.captured_sizes else None,
            "kv_bytes_per_token": self.bytes_per_token,
            "reserved_outside_static_gb": self.reserved_gb,
            "tightest_rank": tight.rank if tight else None,
            "ranks": [r.as_dict() for r in self.ranks],
        }


def _fraction(launch: Launch) -> tuple[float | None, str | None]:
    """mem_fraction_static in effect and where it came from: the user's command line, else the
    printed server_args (SGLang derives the default from the GPU memory, TP size and graph sizes)."""
    from logparse.run.launches import FLAG_ALIASES, flag_name

    flags = launch.flags
    for flag in (flag_name("mem_fraction_static"), *FLAG_ALIASES.get("mem_fraction_static", ())):
        v = flags.get(flag)
        if present(v):
            printed = launch.server_args.get("mem_fraction_static")
            return float(printed if present(printed) else v), "command"
    printed = launch.server_args.get("mem_fraction_static")
    if present(printed):
        return float(printed), "server_args"
    return None, None


def _captured(launch: Launch) -> tuple[int, ...]:
    sizes: set[int] = set()
    for e in launch.of(CaptureBatchSizes):
        if e.what == "bs":
            sizes.update(e.sizes)
    for e in launch.of(CaptureEnd, CaptureBegin):
        if e.graph_kind in DECODE_GRAPHS:
            sizes.update(e.sizes)
    if not sizes:
        for name in (
            "cuda_graph_max_bs",
            "cuda_graph_max_bs_decode",
        ):  # 0.5.23 names the decode one
            stated = launch.arg(name)
            if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
                return (stated,)
    return tuple(sorted(sizes))


_MEMORY_EVENTS: tuple[type[Event], ...] = (
    WeightLoadBegin,
    WeightLoadEnd,
    KvCacheAllocated,
    KvCacheDtype,
    MambaCacheAllocated,
    SwaPoolAllocated,
    MemoryPoolEnd,
    CaptureBegin,
    CaptureEnd,
)


def _rank_budget(rank: str | None, events: list[Event], dtype: str | None) -> RankBudget:
    """Fold one rank's memory lines, in order; a second weight load is the draft model's."""
    b = RankBudget(rank)
    loads = 0
    begins: dict[str, CaptureBegin] = {}
    for e in events:
        b.lines.append(e.line)
        if isinstance(e, WeightLoadBegin):
            loads += 1
            if loads == 1:
                b.free_at_start_gb = _gb(e.avail_mem_gb)
        elif isinstance(e, WeightLoadEnd):
            if e.committed_after_capture:
                continue
            if loads <= 1 and b.weights_gb is None and b.avail_after_weights_gb is None:
                loads = max(loads, 1)
                b.weights_gb = _gb(e.mem_usage_gb)
                b.avail_after_weights_gb = _gb(e.avail_mem_gb)
                if (
                    b.free_at_start_gb is None
                    and b.weights_gb is not None
                    and b.avail_after_weights_gb is not None
                ):
                    # `mem usage` is free-before − free-after (§2.1 of the formats), so it gives the start.
                    b.free_at_start_gb = round(b.weights_gb + b.avail_after_weights_gb, 2)
            elif b.draft_weights_gb is None:
                b.draft_weights_gb = _gb(e.mem_usage_gb)
        elif isinstance(e, KvCacheAllocated):
            if e.upper_bound:
                continue
            role = "target" if b.kv is None and loads <= 1 else "draft"
            b.pools.append(
                KvPool(
                    role=role,
                    line=e.line,
                    tokens=e.tokens,
                    k_gb=_gb(e.k_size_gb),
                    v_gb=_gb(e.v_size_gb),
                    kv_gb=_gb(e.kv_size_gb),
                    dtype=e.dtype or dtype,
                )
            )
        elif isinstance(e, MambaCacheAllocated):
            parts = [e.conv_gb, e.ssm_gb, e.intermediate_ssm_gb, e.intermediate_conv_gb]
            vals = [float(p) for p in parts if present(p)]
            if vals and b.mamba_gb is None:
                b.mamba_gb, b.mamba_size = round(sum(vals), 2), e.max_size
        elif isinstance(e, SwaPoolAllocated):
            b.swa_gb = _gb(e.mem_usage_gb) if b.swa_gb is None else b.swa_gb
            b.swa_tokens = e.swa_tokens if b.swa_tokens is None else b.swa_tokens
            b.full_tokens = e.full_tokens if b.full_tokens is None else b.full_tokens
        elif isinstance(e, MemoryPoolEnd):
            if b.avail_after_pools_gb is None:
                b.avail_after_pools_gb = _gb(e.avail_mem_gb)
        elif isinstance(e, CaptureBegin):
            begins[e.graph_kind] = e
        elif isinstance(e, CaptureEnd):
            begin = begins.pop(e.graph_kind, None)
            b.graphs.append(
                GraphCapture(
                    graph=e.graph,
                    kind=str(e.graph_kind),
                    line=e.line,
                    begin_avail_gb=_gb(begin.avail_mem_gb) if begin is not None else None,
                    end_avail_gb=_gb(e.avail_mem_gb),
                    printed_gb=_gb(e.mem_usage_gb),
                    sizes=tuple(e.sizes) or (tuple(begin.sizes) if begin is not None else ()),
                )
            )
    for begin in begins.values():  # a capture that never ended (it failed, or the log stops)
        b.graphs.append(
            GraphCapture(
                graph=begin.graph,
                kind=str(begin.graph_kind),
                line=begin.line,
                begin_avail_gb=_gb(begin.avail_mem_gb),
                end_avail_gb=None,
                printed_gb=None,
                sizes=tuple(begin.sizes),
            )
        )
    return b


def _has_numbers(b: RankBudget) -> bool:
    return any(
        v is not None
        for v in (
            b.free_at_start_gb,
            b.weights_gb,
            b.avail_after_weights_gb,
            b.avail_after_pools_gb,
            b.kv,
        )
    ) or any(g.gb is not None or g.begin_avail_gb is not None for g in b.graphs)


def launch_budget(launch: Launch) -> MemoryBudget:
    """The memory budget of one launch attempt (empty when it printed no memory line)."""
    events = launch.of(*_MEMORY_EVENTS)
    dtypes = [e.dtype for e in events if isinstance(e, KvCacheDtype) and e.dtype]
    by_rank: dict[str | None, list[Event]] = {}
    for e in events:
        if not isinstance(e, KvCacheDtype):
            by_rank.setdefault(e.rank, []).append(e)
    from logparse.run.ranks import rank_key

    ranks = [
        b
        for b in (_rank_budget(r, evs, dtypes[0] if dtypes else None) for r, evs in by_rank.items())
        if _has_numbers(b)
    ]
    ranks.sort(key=lambda b: rank_key(b.rank or ""))
    frac, source = _fraction(launch)
    return MemoryBudget(
        ranks=ranks,
        mem_fraction_static=frac,
        fraction_source=source,
        captured_sizes=_captured(launch),
        gpu_total_gb=_gpu_total(launch),
    )


def _gpu_total(launch: Launch) -> float | None:
    """The GPU's total memory where torch printed it (an OOM's `total capacity`; GiB)."""
    from logparse.run.oom import oom_numbers

    for e in launch.of(Traceback, ExceptionHeader):
        text = f"{getattr(e, 'exc_type', '') or ''}: {getattr(e, 'message', '') or ''}"
        if "capac" not in text:
            continue
        total = oom_numbers(text).get("total_capacity_gib")
        if total:
            return float(total)
    return None


def budgets(log: ParsedLog) -> list[MemoryBudget]:
    """The memory budget of every launch attempt of a log (computed once, kept with the log)."""
    cached: Any = log.derived.get("memory")
    if cached is None:
        from logparse.run.model import run_of

        cached = log.derived["memory"] = [launch_budget(x) for x in run_of(log).launches]
    return cached  # type: ignore[no-any-return]


def budget_at(log: ParsedLog, line: int) -> MemoryBudget:
    """The memory budget of the launch a line belongs to."""
    from logparse.run.model import run_of

    run = run_of(log)
    return budgets(log)[run.launch_at(line).index - 1]


def decode_range(log: ParsedLog, first_line: int, last_line: int) -> tuple[int, int]:
    """[lo, hi) of the decode stats rows between two lines (the rows are in file order)."""
    lines = log.decode.line
    return bisect_left(lines, first_line), bisect_left(lines, last_line + 1)


def peak_running(log: ParsedLog, first_line: int, last_line: int) -> dict[str, int]:
    """The largest `#running-req` of the decode lines between two lines, per rank (a DP rank's
    TP0 prints its own batch; CUDA graphs are captured per DP rank)."""
    from logparse.parsing.colstats import NUMPY_FROM

    d = log.decode
    lo, hi = decode_range(log, first_line, last_line)
    running, codes = d.column("running", lo, hi), d.rank[lo:hi]
    names = d.ranks.values
    out: dict[str, int] = {}
    if len(running) >= NUMPY_FROM:  # a busy server: numpy on the column, not a Python loop
        import numpy as np

        values, ranks = np.asarray(running, dtype=np.float64), np.asarray(codes)
        ok = ~np.isnan(values)
        for code in np.unique(ranks[ok]).tolist():
            out[names[code] or ""] = int(values[ok & (ranks == code)].max())
        return out
    for v, code in zip(running, codes, strict=True):
        if not math.isnan(v):
            key = names[code] or ""
            if v > out.get(key, -1):
                out[key] = int(v)
    return out
