"""Analysis is linear in the lines of a log: counted, not timed.

A small failure-heavy log (stats and access lines with multi-rank tracebacks, warnings and NCCL
lines interleaved between them) is analysed at two sizes, 4x apart, with the expensive primitives
counted: Python function calls in logparse (every rule, view, renderer and helper), events handed
out by `ParsedLog.of`, index rebuilds, lines that fall back to the LALR parser, catalog
prefilter passes (candidates, and the digit-masked prefilter that fronts it) and catalog matches, lines re-read for evidence, redaction
scans of output strings. Each count may grow at most as
fast as the input (with a margin for the fixed start-up part being smaller in relative terms, the
ratio of a linear step is below 4); a step that scans all events per event or per finding grows
~16x and fails. Wall time is never asserted (a shared 2-core machine is not a stopwatch).
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# The lines of one scheduler traceback on rank {k}; other lines are interleaved between them.
_TRACEBACK = [
    "[{ts} TP{k}] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 3183, in run_scheduler_process',
    "    scheduler.event_loop_normal()",
    '  File "/usr/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 1104, in event_loop_normal',
    "    result = self.run_batch(batch)",
    "             ^^^^^^^^^^^^^^^^^^^^^",
    '  File "/usr/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 2806, in all_reduce',
    "    work = group.allreduce([tensor], opts)",
    "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    "",
    '[rank{k}]:[W0414 15:14:22.379423546 ProcessGroupNCCL.cpp:1826] [PG ID 0 PG GUID 0 Rank {k}] Failed to check the "should dump" flag on TCPStore',
]

_HEAD = [
    "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 8 --port 30000",
    "[2026-04-14 09:12:10] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=8, port=30000, mem_fraction_static=0.85)",
    *(f"[2026-04-14 09:12:{20 + k} TP{k}] Load weight begin. avail mem=78.31 GB" for k in range(8)),
    *(f"[2026-04-14 09:12:{40 + k} TP{k}] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, mem usage=16.21 GB." for k in range(8)),
    "[2026-04-14 09:13:00] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
    "[2026-04-14 09:13:05] The server is fired up and ready to roll!",
]


def failure_heavy(path: Path, lines: int, seed: int = 3, start_s: float = 0.0) -> None:
    """Write a failure-heavy log of `lines` lines (deterministic), serving from `start_s` on."""
    rng = random.Random(seed)
    out = list(_HEAD)
    t = start_s
    pending: list[Iterator[str]] = []

    def ts() -> str:
        s = int(t)
        return f"2026-04-14 {10 + s // 3600 % 12:02d}:{s // 60 % 60:02d}:{s % 60:02d}"

    while len(out) < lines:
        t += rng.random() * 0.3
        r = rng.random()
        if r < 0.30:
            out.append(f"[{ts()} TP0] Decode batch, #running-req: {rng.randint(1, 48)}, #token: {rng.randint(1000, 400000)}, "
                       f"token usage: {rng.random():.2f}, cuda graph: True, gen throughput (token/s): {rng.random() * 4000:.2f}, "
                       f"#queue-req: {rng.randint(0, 5)}")
        elif r < 0.40:
            out.append(f"[{ts()} TP0] Prefill batch, #new-seq: 1, #new-token: {rng.randint(1, 8192)}, #cached-token: 0, "
                       f"token usage: {rng.random():.2f}, #running-req: {rng.randint(0, 48)}, #queue-req: 0")
        elif r < 0.50:
            out.append(f'[{ts()}] INFO:     10.0.0.{rng.randint(1, 200)}:{rng.randint(30000, 60000)} - "POST /generate HTTP/1.1" 200 OK')
        elif r < 0.56:
            out.append("/usr/lib/python3.12/site-packages/torch/cuda/memory.py:491: FutureWarning: "
                       "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats")
        elif r < 0.60:
            out.append(f"[{ts()} TP{rng.randint(0, 7)}] WARNING: request aborted: client disconnected")
        elif r < 0.64:
            k = rng.randint(0, 7)
            out.append(f"node1:{600 + k}:{1880 + k} [{k}] NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7")
        elif r < 0.67 and len(pending) < 3:
            k = rng.randint(0, 7)
            pending.append(iter([line.format(ts=ts(), k=k) for line in _TRACEBACK]))
        elif pending:
            it = rng.choice(pending)
            line = next(it, None)
            if line is None:
                pending.remove(it)
            else:
                out.append(line)
    path.write_text("\n".join(out[:lines]) + "\n", encoding="utf-8")


def _wrap(counts: Counter[str], name: str, owner: Any, attr: str, size: Callable[[Any], int] | None = None,
          patches: list[tuple[Any, str, Any]] | None = None) -> None:
    original = getattr(owner, attr)

    def counted(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        counts[name] += 1 if size is None else size(out)
        return out

    assert patches is not None
    patches.append((owner, attr, original))
    setattr(owner, attr, counted)


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count the expensive primitives (and every logparse function call) while analysing."""
    from logparse.grammar.build import LineParser
    from logparse.grammar.messages import MessageSpec, catalog
    from logparse.parsing import pipeline

    counts: Counter[str] = Counter()
    patches: list[tuple[Any, str, Any]] = []
    _wrap(counts, "ParsedLog.of events", pipeline.ParsedLog, "of", len, patches)
    _wrap(counts, "ParsedLog.of calls", pipeline.ParsedLog, "of", None, patches)
    _wrap(counts, "ParsedLog.reindex", pipeline.ParsedLog, "reindex", None, patches)
    _wrap(counts, "LALR fallbacks", LineParser, "parse_lalr", None, patches)
    from logparse.engine import evidence

    _wrap(counts, "evidence lines re-read", evidence, "fetch_lines", len, patches)  # its own import
    from logparse.render.redact import Redactor

    _wrap(counts, "redaction scans", Redactor, "_spans", None, patches)
    cat = catalog()
    _wrap(counts, "catalog candidates", type(cat), "candidates", None, patches)
    _wrap(counts, "catalog prefilter", type(cat), "candidates_masked", None, patches)
    _wrap(counts, "catalog match", MessageSpec, "match", None, patches)
    root = str(Path(pipeline.__file__).parents[1])

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(root):
            counts["logparse calls"] += 1

    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)
        for owner, attr, original in reversed(patches):
            setattr(owner, attr, original)


def _analyse(path: Path) -> Counter[str]:
    from logparse.engine.core import analyze
    from logparse.render.json import render

    with counting() as counts:
        render([analyze(str(path), jobs=1)], redact=True)
    return counts


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Counter[str], Counter[str]]:
    folder = tmp_path_factory.mktemp("linear")
    small, large = folder / "small.log", folder / "large.log"
    warm = folder / "warm.log"
    failure_heavy(small, 2_000)
    failure_heavy(large, 8_000)
    # Warm: the catalog, grammar, shapes and lazy regexes are built once, not counted. Other
    # times of day, so that the per-prefix caches hold none of the measured logs' envelopes.
    failure_heavy(warm, 2_000, seed=4, start_s=5 * 3600)
    _analyse(warm)
    return _analyse(small), _analyse(large)


PRIMITIVES = ["logparse calls", "ParsedLog.of events", "ParsedLog.of calls", "ParsedLog.reindex",
              "LALR fallbacks", "evidence lines re-read", "catalog candidates", "catalog prefilter",
              "catalog match", "redaction scans"]


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_primitive_grows_no_faster_than_the_input(counted: tuple[Counter[str], Counter[str]], primitive: str) -> None:
    small, large = counted
    # 4x the lines: a linear count grows at most 4x (the fixed start-up part makes it less).
    # A quadratic step grows ~16x; a 20 % margin absorbs where tracebacks fall at the cut.
    assert large[primitive] <= 4.8 * max(small[primitive], 1), (primitive, small[primitive], large[primitive])


def test_the_log_exercises_the_expensive_paths(counted: tuple[Counter[str], Counter[str]]) -> None:
    """The counts are not vacuous: the log has events, evidence, catalog lines and calls."""
    small, large = counted
    for primitive in ["logparse calls", "ParsedLog.of events", "evidence lines re-read",
                      "catalog prefilter", "catalog match", "redaction scans"]:
        assert small[primitive] > 0 and large[primitive] > small[primitive], (primitive, small, large)


def test_the_counter_catches_a_quadratic_step(tmp_path: Path) -> None:
    """The instrument itself: a rule-like step that scans all events once per event is caught."""
    from logparse.model.events import Event
    from logparse.parsing.pipeline import parse_file

    def per_event_scan(path: Path) -> int:
        log = parse_file(str(path))
        with counting() as counts:
            for _ in log.of(Event):
                log.of(Event)
        return counts["ParsedLog.of events"]

    small, large = tmp_path / "s.log", tmp_path / "l.log"
    failure_heavy(small, 1_000)
    failure_heavy(large, 4_000)
    assert per_event_scan(large) > 4.8 * per_event_scan(small)


# -- a sweep: many launch attempts in one log ------------------------------------------------

def sweep(path: Path, launches: int) -> None:
    """A parameter sweep: `launches` attempts, each with per-rank memory lines and decode lines."""
    out: list[str] = []
    for n in range(launches):
        stamp = f"2026-04-14 {10 + n // 60:02d}:{n % 60:02d}"
        out.append(f"python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 8 --port {30000 + n}")
        out.append(f"[{stamp}:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=8, port={30000 + n})")
        out.extend(f"[{stamp}:0{k} TP{k}] Load weight begin. avail mem=78.31 GB" for k in range(8))
        out.extend(f"[{stamp}:1{k} TP{k}] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, "
                   "avail mem=62.10 GB, mem usage=16.21 GB." for k in range(8))
        out.extend(f"[{stamp}:2{k} TP{k}] KV Cache is allocated. #tokens: 412345, K size: 28.31 GB, "
                   "V size: 28.31 GB" for k in range(8))
        out.append(f"[{stamp}:30] The server is fired up and ready to roll!")
        out.extend(f"[{stamp}:4{k % 10} TP0] Decode batch, #running-req: {k + 1}, #token: 9000, token usage: 1.00, "
                   "cuda graph: True, gen throughput (token/s): 900.00, #queue-req: 2" for k in range(20))
        out.append(f"[{stamp}:50 TP0] Prefill out of memory. Try to lower your batch size.")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def sweep_counted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Counter[str], Counter[str]]:
    folder = tmp_path_factory.mktemp("sweep")
    small, large, warm = folder / "small.log", folder / "large.log", folder / "warm.log"
    sweep(warm, 3)
    sweep(small, 6)
    sweep(large, 24)
    _analyse(warm)
    return _analyse(small), _analyse(large)


@pytest.mark.parametrize("primitive", ["logparse calls", "ParsedLog.of events"])
def test_a_sweep_grows_no_faster_than_its_launches(sweep_counted: tuple[Counter[str], Counter[str]],
                                                   primitive: str) -> None:
    """Per-launch questions (`Launch.of`: a launch's memory lines; kv-cache-exhausted's running
    count before each finding) cost the launch's share, not a pass over the whole log each:
    4x the launches, at most ~4x the work (quadratic was ~16x)."""
    small, large = sweep_counted
    assert small[primitive] > 0
    assert large[primitive] <= 4.8 * small[primitive], (primitive, small[primitive], large[primitive])


def test_running_before_is_the_scan_it_replaces() -> None:
    """kv-cache-exhausted's running count before a line (a prefix table and bisection) equals the
    plain scan: the last printed count among the decode rows before the first row after the line,
    in line order and out of it, with counts not printed (NaN)."""
    import math
    from types import SimpleNamespace

    from logparse.parsing.columns import decode_columns
    from logparse.rules.memory import kv_cache

    def scan(d: Any, line: int) -> int | None:
        best = None
        for i, n in enumerate(d.line):
            if n > line:
                break
            v = d.column("running")[i]
            if not math.isnan(v):
                best = int(v)
        return best

    rng = random.Random(7)
    for ordered in (True, False):
        d = decode_columns()
        lines = sorted(rng.sample(range(1, 400), 120)) if ordered else rng.sample(range(1, 400), 120)
        for n in lines:
            d.add(n, math.nan, None, {"running": math.nan if rng.random() < 0.4 else float(rng.randint(0, 64))})
        ctx = SimpleNamespace(log=SimpleNamespace(decode=d))
        for line in range(0, 402):
            assert kv_cache._running_before(ctx, line) == scan(d, line), (ordered, line)  # type: ignore[arg-type]
