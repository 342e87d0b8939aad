"""Assemble benchmark line events (BenchBanner, BenchRow, OneBatchLine) into result records.

`BenchAssembler` is fed every parsed line of one source in file order and returns the records
that a line completes:

- `BenchServingResult`: one bench_serving / bench_offline_throughput block (formats §7.1/§7.2).
  A block opens at a `=` banner whose title names a result block (`Serving Benchmark Result`,
  `Offline Throughput Benchmark Result`) or, when the excerpt starts inside a block, at its first
  row or section rule (then `title` is ""). Section rules (`---End-to-End Latency---`) only change
  the current section. The block closes at the all-`=` footer (`complete=True`), or — cut —
  at a line that is neither row, banner nor blank once it has a row, at a new header, at a row
  whose field the block already holds (a second, headless block), or at the end of input.
  `fields` is keyed by the normalised names of `SERVING_FIELDS` (the corpus facts vocabulary),
  typed: int for counts, float for rates and latencies, str for `backend`; `max_concurrency` is
  None for `not set`, `request_rate` a float, 'inf' or 'trace'; `%` values are floats in percent.
- `BenchOneBatchResult`: one bench_one_batch run (formats §7.3): `Prefill.`, `Decode N.` steps,
  `Decode.  median`, ending at `Total.`. Fields `prefill_latency_s`, `prefill_throughput`,
  `decode_median_latency_s`, `decode_median_throughput`, `total_latency_s`, `total_throughput`
  (those printed), `batch_size` (from the decode steps), `decode_steps` (list of
  {step, batch_size, latency_s, throughput}) and `phase` ('warmup' / 'benchmark' after the
  `Warmup ...` / `Benchmark ...` markers, else None). A run cut before `Total.` is returned by
  a following marker or `Prefill.` line, or by `finish()`, without the `total_*` fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logparse.model.events import (
    BenchBanner,
    BenchOneBatchResult,
    BenchRow,
    BenchServingResult,
    Event,
    KnownMessage,
    OneBatchLine,
    Unparsed,
)
from logparse.model.numbers import MAX_COUNT, to_float_or_none, to_int

__all__ = ["BLOCK_TITLES", "SECTION_TITLES", "SERVING_FIELDS", "BenchAssembler", "serving_field"]


def _int(value: str) -> int | None:
    """An integer field ('42' or '42.0'); None for damaged text (inf, nan, oversized)."""
    t = value.strip()
    if t.lstrip("+-").isdigit():
        return to_int(t)
    num = _float(t)
    return int(num) if num is not None and num.is_integer() and abs(num) <= MAX_COUNT else None


def _float(value: str) -> float | None:
    """A finite float field ('12.5', '97%'); None for damaged text (inf, nan, oversized)."""
    return to_float_or_none(value.rstrip("%"))


def _str(value: str) -> str:
    return value


def _rate(value: str) -> float | str | None:
    if value in ("inf", "trace"):
        return value
    return _float(value)


def _concurrency_cap(value: str) -> int | None:
    return None if value == "not set" else _int(value)


def _slos(value: str) -> dict[str, float] | str:
    """`ttft:2000 e2e:60000` → {'ttft': 2000.0, 'e2e': 60000.0} (the raw text if it is not that)."""
    out: dict[str, float] = {}
    for item in value.split():
        key, sep, num = item.partition(":")
        parsed = _float(num) if sep else None
        if parsed is None:
            return value
        out[key] = parsed
    return out


Parser = Callable[[str], Any]

# Row label as printed (without its colon) → (field name, value parser).
SERVING_FIELDS: dict[str, tuple[str, Parser]] = {
    "Backend": ("backend", _str),
    "Traffic request rate": ("request_rate", _rate),
    "Max request concurrency": ("max_concurrency", _concurrency_cap),
    "Max reqeuest concurrency": ("max_concurrency", _concurrency_cap),  # 0.4.0 – 0.4.8 typo
    "Successful requests": ("successful_requests", _int),
    "Benchmark duration (s)": ("duration_s", _float),
    "Total input tokens": ("total_input_tokens", _int),
    "Total input text tokens": ("total_input_text_tokens", _int),
    "Total input vision tokens": ("total_input_vision_tokens", _int),
    "Total generated tokens": ("total_generated_tokens", _int),
    "Total generated tokens (retokenized)": ("total_generated_tokens_retokenized", _int),
    "Request throughput (req/s)": ("request_throughput", _float),
    "Input token throughput (tok/s)": ("input_throughput", _float),
    "Output token throughput (tok/s)": ("output_throughput", _float),
    "Peak output token throughput (tok/s)": ("peak_output_throughput", _float),
    "Peak concurrent requests": ("peak_concurrent_requests", _int),
    "Total token throughput (tok/s)": ("total_throughput", _float),
    "Total Token throughput (tok/s)": ("total_throughput", _float),  # 2024 releases' spelling
    "Last generation throughput (tok/s)": ("last_generation_throughput", _float),
    "Concurrency": ("concurrency", _float),
    "Accept length": ("accept_length", _float),
    # Goodput section (0.5.2x, --goodput)
    "SLOs (ms)": ("slos_ms", _slos),
    "Request goodput (req/s)": ("request_goodput", _float),
    "SLO attainment (%)": ("slo_attainment_pct", _float),
    "TTFT SLO attainment (%)": ("ttft_slo_attainment_pct", _float),
    "TPOT SLO attainment (%)": ("tpot_slo_attainment_pct", _float),
    "ITL SLO attainment (%)": ("itl_slo_attainment_pct", _float),
    "E2E SLO attainment (%)": ("e2e_slo_attainment_pct", _float),
    # Cache Hit Details section (0.5.14+, --cache-report); tier rows: see _TIER_PARENTS
    "Total prompt tokens": ("total_prompt_tokens", _int),
    "Total cached tokens": ("total_cached_tokens", _int),
    "Cache hit rate": ("cache_hit_rate_pct", _float),
}
for _stat in ("Mean", "Median", "P90", "P95", "P99"):
    SERVING_FIELDS[f"{_stat} E2E Latency (ms)"] = (f"{_stat.lower()}_e2e_latency_ms", _float)
    SERVING_FIELDS[f"{_stat} TTFT (ms)"] = (f"{_stat.lower()}_ttft_ms", _float)
    SERVING_FIELDS[f"{_stat} TPOT (ms)"] = (f"{_stat.lower()}_tpot_ms", _float)
for _stat in ("Mean", "Median", "P90", "P95", "P99", "Max"):
    SERVING_FIELDS[f"{_stat} ITL (ms)"] = (f"{_stat.lower()}_itl_ms", _float)

# Indented tier rows (`  Device:`) belong to the row above them: field name template and parser.
_TIER_PARENTS: dict[str, tuple[str, Parser]] = {
    "total_cached_tokens": ("cached_tokens_{tier}", _int),
    "cache_hit_rate_pct": ("cache_hit_rate_{tier}_pct", _float),
}

# `=` banner titles that open a result block.
BLOCK_TITLES = frozenset({"Serving Benchmark Result", "Offline Throughput Benchmark Result"})
# `-` section titles of a result block (a headless excerpt may start at one of them).
SECTION_TITLES = frozenset(
    {
        "Goodput",
        "End-to-End Latency",
        "Time to First Token",
        "Time per Output Token (excl. 1st token)",
        "Inter-Token Latency",
        "Inter-token Latency",  # 2024 releases' spelling
        "Cache Hit Details",
    }
)


def serving_field(label: str, value: str) -> tuple[str, Any] | None:
    """A top-level row as (normalised field name, typed value); None for an unknown label."""
    spec = SERVING_FIELDS.get(label)
    if spec is None:
        return None
    name, parse = spec
    return name, parse(value)


class _Block:
    __slots__ = ("end_line", "fields", "line", "parent", "rows", "section", "title", "ts")

    def __init__(self, title: str, line: int, ts: Any) -> None:
        self.title = title
        self.line = line
        self.ts = ts
        self.end_line = line
        self.fields: dict[str, Any] = {}
        self.rows = 0
        self.section: str | None = None
        self.parent: str | None = None  # field name of the last top-level row (for tier rows)


class _Run:
    __slots__ = ("end_line", "fields", "line", "steps", "ts")

    def __init__(self, line: int, ts: Any, phase: str | None) -> None:
        self.line = line
        self.ts = ts
        self.end_line = line
        self.fields: dict[str, Any] = {"phase": phase}
        self.steps: list[dict[str, Any]] = []


_ONE_BATCH_PHASES = {"one-batch-warmup": "warmup", "one-batch-benchmark": "benchmark"}


class BenchAssembler:
    """Turns the benchmark line events of one source into BenchServingResult / BenchOneBatchResult."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._block: _Block | None = None
        self._run: _Run | None = None
        self._phase: str | None = None

    # ------------------------------------------------------------------ public

    def feed(self, line_no: int, ts: Any, cls: type, kw: dict[str, Any]) -> list[Event]:
        """Called for every parsed line in file order; returns completed BenchServingResult /
        BenchOneBatchResult events. `cls`/`kw` are what the line parser returned; `ts` is stored
        as given in the result's `ts` (the timestamp of the block's or run's first line)."""
        out: list[Event] = []
        if cls is BenchRow:
            self._row(line_no, ts, kw["label"], kw["value"], out)
        elif cls is BenchBanner:
            self._banner(line_no, ts, kw["title"], kw["rule"], out)
        elif cls is Unparsed and not kw.get("text", "").strip():
            pass  # blank lines neither close nor extend a block
        else:
            if self._block is not None and self._block.rows:
                out.append(self._close_block(complete=False))
            if cls is OneBatchLine:
                self._one_batch(line_no, ts, kw, out)
            elif cls is KnownMessage and kw.get("code") in _ONE_BATCH_PHASES:
                if self._run is not None:
                    out.append(self._close_run())
                self._phase = _ONE_BATCH_PHASES[kw["code"]]
        return out

    def finish(self) -> list[Event]:
        """Close open blocks at end of input (a block cut before its footer: complete=False)."""
        out: list[Event] = []
        if self._block is not None:
            out.append(self._close_block(complete=False))
        if self._run is not None:
            out.append(self._close_run())
        return out

    # ------------------------------------------------------------------ bench_serving blocks

    def _banner(self, line_no: int, ts: Any, title: str, rule: str, out: list[Event]) -> None:
        block = self._block
        if rule == "=":
            if not title:  # footer
                if block is not None:
                    block.end_line = line_no
                    out.append(self._close_block(complete=True))
                return
            if block is not None:
                out.append(self._close_block(complete=False))
            if title in BLOCK_TITLES or title.endswith("Benchmark Result"):
                self._block = _Block(title, line_no, ts)
            return
        # a `-` section rule
        if block is None:
            if title not in SECTION_TITLES:
                return
            block = self._block = _Block("", line_no, ts)
        block.section = title
        block.parent = None
        block.end_line = line_no

    def _row(self, line_no: int, ts: Any, label: str, value: str, out: list[Event]) -> None:
        tier = label.startswith(" ")
        block = self._block
        if not tier:
            spec = SERVING_FIELDS.get(label)
            if spec is None:
                return
            name, parse = spec
            if block is not None and name in block.fields:
                # The same row again: a second block whose header is not in the excerpt.
                out.append(self._close_block(complete=False))
                block = None
        if block is None:
            block = self._block = _Block("", line_no, ts)
        block.rows += 1
        block.end_line = line_no
        if not value:
            return  # cut right after the label
        if tier:
            tier_name = label.strip().lower()
            spec_t = _TIER_PARENTS.get(block.parent or "")
            if spec_t is None:
                block.fields[f"tier_{tier_name}"] = _float(value)
            else:
                block.fields[spec_t[0].format(tier=tier_name)] = spec_t[1](value)
            return
        block.fields[name] = parse(value)
        block.parent = name

    def _close_block(self, *, complete: bool) -> BenchServingResult:
        block = self._block
        assert block is not None
        self._block = None
        return BenchServingResult(
            line=block.line,
            end_line=block.end_line,
            ts=block.ts,
            source=self.source,
            title=block.title,
            fields=block.fields,
            complete=complete,
        )

    # ------------------------------------------------------------------ bench_one_batch runs

    def _one_batch(self, line_no: int, ts: Any, kw: dict[str, Any], out: list[Event]) -> None:
        stage = kw["stage"]
        run = self._run
        if stage == "prefill" and run is not None:
            out.append(self._close_run())
            run = None
        if run is None:
            run = self._run = _Run(line_no, ts, self._phase)
        run.end_line = line_no
        latency, throughput = kw.get("latency_s"), kw.get("throughput")
        if stage == "prefill":
            run.fields["prefill_latency_s"] = latency
            run.fields["prefill_throughput"] = throughput
        elif stage == "decode-step":
            run.steps.append(
                {
                    "step": kw.get("step"),
                    "batch_size": kw.get("batch_size"),
                    "latency_s": latency,
                    "throughput": throughput,
                }
            )
            if kw.get("batch_size") is not None:
                run.fields["batch_size"] = kw["batch_size"]
        elif stage == "decode-median":
            run.fields["decode_median_latency_s"] = latency
            run.fields["decode_median_throughput"] = throughput
        else:  # total: the run is over
            run.fields["total_latency_s"] = latency
            run.fields["total_throughput"] = throughput
            out.append(self._close_run())

    def _close_run(self) -> BenchOneBatchResult:
        run = self._run
        assert run is not None
        self._run = None
        fields = dict(run.fields)
        fields["decode_steps"] = run.steps
        return BenchOneBatchResult(
            line=run.line, end_line=run.end_line, ts=run.ts, source=self.source, fields=fields
        )
