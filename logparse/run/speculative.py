"""Speculative decoding as run facts: the configuration a log (or one launch attempt) shows, the
acceptance it measured, and the break-even accept length against a run without speculation.

One owner for the rules (`rules/speculative/`) and the report (`report/speculative.py`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BenchServingResult,
    CaptureEnd,
    Event,
    GraphKind,
    KnownMessage,
    ServerArgs,
)
from logparse.model.text import short
from logparse.parsing import colstats

if TYPE_CHECKING:
    from logparse.parsing.columns import StatsColumns
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.views import Views

# Known messages that only a run with speculative decoding prints (see sglang-log-formats §4.3).
SPEC_CODES = frozenset({"spec-v2-enabled", "overlap-disabled-spec-v1", "spec-v2-non-overlap", "mixed-chunk-disabled-spec",
                        "spec-draft-tokens-adjusted", "mtp-draft-path-unneeded", "draft-load-format",
                        "ngram-overlap-disabled", "ngram-draft-tokens-default", "draft-attention-override",
                        "draft-max-position-override"})
_ON = frozenset({"1", "true", "yes", "on"})


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    # a steps / topk / draft-token count: a longer digit run is damage (and int() of 4,300+ digits raises)
    if isinstance(v, str) and v.strip().isdigit() and len(v.strip()) <= 9:
        return int(v.strip())
    return None


def _set(v: Any) -> str | None:
    return str(v) if v not in (None, "None", "") else None


# The three classes below are plain slotted classes, not dataclasses: each is built empty (or
# once, in one call) and filled in, never compared or printed, and @dataclass's generated
# methods cost ~0.3 ms a class at every start-up.


class SpecConfig:
    """What the log says about the speculative-decoding configuration."""

    __slots__ = ("algorithm", "draft_model", "num_steps", "topk", "num_draft_tokens", "spec_v2",
                 "spec_v2_source", "configured", "explicitly_off", "evidence", "reasons")

    def __init__(self) -> None:
        self.algorithm: str | None = None
        self.draft_model: str | None = None
        self.num_steps: int | None = None
        self.topk: int | None = None
        self.num_draft_tokens: int | None = None
        self.spec_v2: bool | None = None  # SGLANG_ENABLE_SPEC_V2 / --enable-beta-spec / W23
        self.spec_v2_source: str | None = None
        self.configured = False  # speculation is set up in this log
        self.explicitly_off = False  # server_args prints speculative_algorithm=None
        self.evidence: list[Event] = []
        self.reasons: list[str] = []

    @property
    def depth(self) -> int | None:
        """Draft steps per verify (the accept length is at most depth + 1)."""
        if self.num_steps:
            return self.num_steps
        if self.num_draft_tokens and self.topk in (1, None):
            return self.num_draft_tokens - 1
        return None

    @property
    def width(self) -> int | None:
        """The largest possible accept length (draft steps + the bonus token)."""
        d = self.depth
        return d + 1 if d else None

    def topk_data(self) -> dict[str, Any]:
        """The draft-tree settings a finding reports (only those the log shows)."""
        return {k: v for k, v in (("topk", self.topk), ("num_steps", self.num_steps),
                                  ("num_draft_tokens", self.num_draft_tokens), ("spec_v2", self.spec_v2_source))
                if v is not None}


class _LogScan:
    """What spec_config reads from the whole log, whatever the line: scanned once per log (rules
    ask for the configuration once per traceback; a scan of every decode line and known message
    each time made analysis quadratic on failure-heavy logs)."""

    __slots__ = ("spec_v2", "message", "draft_capture", "accept_len", "bench_accept", "explicitly_off")

    def __init__(self, spec_v2: Any, message: Any, draft_capture: Any, accept_len: bool, bench_accept: bool,
                 explicitly_off: bool) -> None:
        self.spec_v2 = spec_v2  # the first `spec-v2-enabled` message (file order), or None
        self.message = message  # the first message showing speculative decoding, or None
        self.draft_capture = draft_capture  # the first draft CUDA graph capture, or None
        self.accept_len = accept_len  # decode lines print accept len
        self.bench_accept = bench_accept  # a benchmark reports an accept length
        self.explicitly_off = explicitly_off  # a server_args dump says speculative_algorithm=None


def _log_scan(log: ParsedLog) -> _LogScan:
    scan = log.derived.get("spec_scan")
    if scan is None:
        known = log.of(KnownMessage)
        spec_v2 = next((e for e in known if e.code == "spec-v2-enabled"), None)
        message = next((e for e in known if e.code in SPEC_CODES or (
            e.code == "max-running-reset" and "specul" in str(e.fields.get("reason", e.text)))), None)
        draft = next((c for c in log.of(CaptureEnd) if c.graph_kind in (GraphKind.DRAFT, GraphKind.DRAFT_EXTEND)), None)
        scan = log.derived["spec_scan"] = _LogScan(
            spec_v2, message, draft,
            any(not math.isnan(x) for x in log.decode.column("accept_len")),
            any("accept_length" in b.fields for b in log.of(BenchServingResult)),
            any("speculative_algorithm" in sa.args and sa.args["speculative_algorithm"] in (None, "None")
                for sa in log.of(ServerArgs)))
    return scan  # type: ignore[no-any-return]


def spec_config(log: ParsedLog, views: Views, line: int | None = None) -> SpecConfig:
    """The speculative configuration of the whole log, or of the launch attempt `line` belongs to when
    the log holds several attempts."""
    launches = views.run.launches
    if line is not None and len(launches) > 1:
        launch = views.run.launch_at(line)
        arg = launch.arg
        env = launch.env
    else:
        arg = views.arg
        # the pasted commands' environment only: `env_vars` also takes names that warnings merely
        # suggest ("You can set env SGLANG_ENABLE_SPEC_V2=True …")
        env = views.launch_env
    cfg = SpecConfig()
    cfg.algorithm = _set(arg("speculative_algorithm"))
    cfg.draft_model = _set(arg("speculative_draft_model_path"))
    cfg.num_steps = _int(arg("speculative_num_steps"))
    cfg.topk = _int(arg("speculative_eagle_topk"))
    cfg.num_draft_tokens = _int(arg("speculative_num_draft_tokens"))
    flag = env.get("SGLANG_ENABLE_SPEC_V2")
    if flag is not None:
        cfg.spec_v2 = flag.strip().lower() in _ON
        cfg.spec_v2_source = f"SGLANG_ENABLE_SPEC_V2={flag}"
    if arg("enable_beta_spec") is True:
        cfg.spec_v2, cfg.spec_v2_source = True, "--enable-beta-spec"
    scan = _log_scan(log)
    v2 = scan.spec_v2
    if v2 is not None and cfg.spec_v2 is None and (line is None or v2.line < line):
        cfg.spec_v2, cfg.spec_v2_source = True, f"line {v2.line}: spec v2 is enabled"
    if cfg.algorithm:
        cfg.configured = True
        cfg.reasons.append(f"--speculative-algorithm {cfg.algorithm}")
    if scan.message is not None:
        e = scan.message
        cfg.configured = True
        cfg.evidence.append(e)
        cfg.reasons.append(f"line {e.line}: {short(e.text, 80)}")
    if scan.draft_capture is not None:
        c = scan.draft_capture
        cfg.configured = True
        cfg.evidence.append(c)
        cfg.reasons.append(f"line {c.line}: draft CUDA graph captured")
    if scan.accept_len:
        cfg.configured = True
        cfg.reasons.append("decode lines print accept len")
    if scan.bench_accept:
        cfg.reasons.append("the benchmark reports an accept length")
    if scan.explicitly_off:
        cfg.explicitly_off = True
    if cfg.explicitly_off and not cfg.algorithm:
        cfg.configured = False
    return cfg


def args_of(cfg: SpecConfig) -> dict[str, Any]:
    """The speculative server arguments the configuration shows, short names (`num_steps`: 3)."""
    pairs = (("algorithm", cfg.algorithm), ("draft_model_path", cfg.draft_model), ("num_steps", cfg.num_steps),
             ("eagle_topk", cfg.topk), ("num_draft_tokens", cfg.num_draft_tokens))
    return {k: v for k, v in pairs if v is not None}


def break_even_accept_len(accept_len: float | None, speedup: float | None) -> float | None:
    """The accept length at which speculation would only match the run without it:
    accept_len / speedup (speedup = throughput with speculation / without)."""
    if accept_len is None or not speedup or speedup <= 0:
        return None
    return round(accept_len / speedup, 2)


# --------------------------------------------------------------------------- acceptance

BISECTION_STEPS = 60


def finite(values: Any) -> list[float]:
    return [float(v) for v in values if not math.isnan(v)]


def implied_token_acceptance(accept_len: float, depth: int) -> float | None:
    """The per-draft-token acceptance p for which a chain of `depth` drafts gives this mean accept
    length: (1 − p^(depth+1)) / (1 − p) = accept_len (bisection)."""
    if depth < 1 or accept_len < 1:
        return None
    if accept_len >= depth + 1:
        return 1.0

    def expected(p: float) -> float:
        return float(depth + 1) if p >= 1 else (1 - p ** (depth + 1)) / (1 - p)

    lo, hi = 0.0, 1.0
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        if expected(mid) < accept_len:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 3)


class Acceptance:
    """The mean accept length of a log and where it comes from."""

    __slots__ = ("mean", "rate_mean", "lines", "first_line", "last_line", "source", "bench")

    def __init__(self) -> None:
        self.mean: float | None = None
        self.rate_mean: float | None = None
        self.lines = 0
        self.first_line = 0
        self.last_line = 0
        self.source = ""
        self.bench: BenchServingResult | None = None


def acceptance(log: ParsedLog) -> Acceptance:
    """From the decode stats lines that print `accept len`, else from bench_serving results;
    computed once per parsed log (two rules and compare ask for it)."""
    cached = log.derived.get("acceptance")
    if cached is None:
        cached = log.derived["acceptance"] = _acceptance(log)
    return cached  # type: ignore[no-any-return]


def _acceptance(log: ParsedLog) -> Acceptance:
    d = log.decode
    out = Acceptance()
    found = _accept_sums(d)
    if found is not None:
        total, lines, rate_total, rates, first, last = found
        out.mean = round(total / lines, 3)
        out.rate_mean = round(rate_total / rates, 3) if rates else None
        out.lines = lines
        out.first_line = d.line[first]
        out.last_line = d.line[last]
        out.source = "decode lines"
        return out
    for b in log.of(BenchServingResult):
        if isinstance(b.fields.get("accept_length"), (int, float)):
            out.mean = float(b.fields["accept_length"])
            out.first_line = b.line
            out.last_line = b.end_line or b.line
            out.source = "benchmark"
            out.bench = b
    return out


_SUM_CHUNK = 16_384  # rows per slice: the sums never hold more than this many values at once


def _accept_sums(d: StatsColumns) -> tuple[float, int, float, int, int, int] | None:
    """(sum of accept len, lines printing it, sum of their finite accept rates, how many, first row,
    last row), or None when no line prints it. One pass of `sum` over each column in file order
    (the same additions, in the same order, as a sum of the list of values), slice by slice: a
    list of the values and of their row numbers was ~130 MB at 4M serving lines."""
    total = rate_total = 0.0
    lines = rates = 0
    first = last = -1
    for lo in range(0, len(d), _SUM_CHUNK):
        a, r = d.column("accept_len", lo, lo + _SUM_CHUNK), d.column("accept_rate", lo, lo + _SUM_CHUNK)
        # NaN != NaN: `v == v` keeps the printed values.
        rows = [i for i, v in enumerate(a) if v == v]
        if not rows:
            continue
        if first < 0:
            first = lo + rows[0]
        last = lo + rows[-1]
        lines += len(rows)
        total = sum((a[i] for i in rows), total)
        rs = [r[i] for i in rows if r[i] == r[i]]
        rates += len(rs)
        rate_total = sum(rs, rate_total)
    return None if first < 0 else (total, lines, rate_total, rates, first, last)


def break_even(log: ParsedLog, acc: Acceptance) -> dict[str, Any] | None:
    """The accept length at which speculation only breaks even, when the log also holds a run
    without speculation to compare with: decode throughput per running request at the same batch
    sizes (decode lines without accept fields), or bench_serving results at the same concurrency.
    speedup = spec / baseline; break-even accept length = accept_len / speedup."""
    if acc.mean is None:
        return None
    d = log.decode
    spec, base = per_request_throughput(d)
    common = sorted(set(spec) & set(base))
    if common:
        speedup = median([spec[b] / base[b] for b in common])
        return {"method": "decode throughput per running request, spec vs no-spec lines at the same batch sizes",
                "speedup": round(speedup, 3), "break_even_accept_len": break_even_accept_len(acc.mean, speedup),
                "batch_buckets": [2 ** b for b in common]}
    benches = log.of(BenchServingResult)
    with_acc = [b for b in benches if "accept_length" in b.fields and b.fields.get("output_throughput")]
    without = [b for b in benches if "accept_length" not in b.fields and b.fields.get("output_throughput")]
    for s in with_acc:
        for b in without:
            if s.fields.get("max_concurrency") == b.fields.get("max_concurrency"):
                speedup = float(s.fields["output_throughput"]) / float(b.fields["output_throughput"])
                mean = float(s.fields["accept_length"])
                return {"method": "bench_serving output throughput with vs without speculation at the same concurrency",
                        "speedup": round(speedup, 3), "break_even_accept_len": break_even_accept_len(mean, speedup),
                        "bench_lines": [b.line, s.line]}
    return None


def per_request_throughput(d: StatsColumns) -> tuple[dict[int, float], dict[int, float]]:
    """Median decode throughput per running request, by batch-size bucket (int(log2(#running))),
    for lines with accept fields (speculative) and without (baseline). numpy on large logs, slice
    by slice: only the valid rows' ratio, bucket and kind are kept (the three whole columns and
    their temporaries were ~70 bytes a row at once)."""
    if len(d) >= colstats.NUMPY_FROM:
        import numpy as np

        parts: list[tuple[Any, Any, Any]] = []
        for lo in range(0, len(d), colstats.SLICE_ROWS):
            hi = lo + colstats.SLICE_ROWS
            r, g, a = (np.frombuffer(d.column(name, lo, hi), dtype=np.float64)
                       for name in ("running", "gen_throughput", "accept_len"))
            valid = (r > 0) & (g > 0)  # NaN compares False
            rv = r[valid]
            parts.append((np.trunc(np.log2(rv)).astype(np.int16), g[valid] / rv, ~np.isnan(a[valid])))
        buckets, ratio, is_spec = (np.concatenate([p[k] for p in parts]) for k in range(3))
        del parts
        out: tuple[dict[int, float], dict[int, float]] = ({}, {})
        for which, mask in ((0, is_spec), (1, ~is_spec)):
            for b in np.unique(buckets[mask]).tolist():
                out[which][int(b)] = float(np.median(ratio[mask & (buckets == b)]))
        return out
    run, gen, acc = d.column("running"), d.column("gen_throughput"), d.column("accept_len")
    spec: dict[int, list[float]] = {}
    base: dict[int, list[float]] = {}
    for i in range(len(run)):
        rr, gg = run[i], gen[i]
        if math.isnan(rr) or math.isnan(gg) or rr <= 0 or gg <= 0:
            continue
        bucket = int(math.log2(rr))
        (base if math.isnan(acc[i]) else spec).setdefault(bucket, []).append(gg / rr)
    return ({b: median(v) for b, v in spec.items()}, {b: median(v) for b, v in base.items()})


def median(values: list[float]) -> float:
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
