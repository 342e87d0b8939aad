"""The report's data model: one JSON-friendly dict per report, built from an Analysis.

Every renderer (HTML, Markdown, JSON) reads only this model, so the three show the same
content and the golden tests can pin the content without pinning a format. Plot series (the
numbers behind the SVG plots) travel beside the model, not in it: they are large and their
pictures are compared by their data, not their bytes.

Secrets are redacted here, once, on the whole model (see `logparse/render/redact.py`), before any
renderer runs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BenchOneBatchResult,
    BenchServingResult,
    LaunchCommand,
    WeightLoadBegin,
)
from logparse.render.redact import redact_coverage
from logparse.render.sanitize import Sanitizer
from logparse.render.summary import file_summary
from logparse.report.memory import memory_section
from logparse.report.serving import serving_section
from logparse.report.speculative import baseline_section, speculative_section
from logparse.report.timing import DEFAULT_GAP_S, timing_section

if TYPE_CHECKING:
    from logparse.engine.core import Analysis

REPORT_SCHEMA = 1
SECTIONS = (
    "summary",
    "findings",
    "startup",
    "serving",
    "speculative",
    "benchmarks",
    "configuration",
    "coverage",
)
SECTION_TITLES = {
    "summary": "Summary",
    "findings": "Findings",
    "startup": "Startup",
    "serving": "Serving",
    "speculative": "Speculative decoding",
    "benchmarks": "Benchmarks",
    "configuration": "Configuration",
    "coverage": "Log coverage",
}
OUTCOME_TEXT = {
    "ready": "started and ready; the log shows no traffic",
    "serving": "started and served requests",
    "stopped": "served, then shut down",
    "crashed-at-startup": "crashed while starting",
    "crashed-while-serving": "crashed while serving",
    "hung": "hung",
    "incomplete": "startup did not finish within the log",
    None: "the log does not tell",
}
KEY_FLAGS = (
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "moe_runner_backend",
    "moe_a2a_backend",
    "mem_fraction_static",
    "max_running_requests",
    "cuda_graph_max_bs",
    "chunked_prefill_size",
    "context_length",
    "disable_cuda_graph",
    "enable_dp_attention",
    "mamba_scheduler_strategy",
)
ONE_BATCH_ROWS = (
    "phase",
    "batch_size",
    "prefill_latency_s",
    "prefill_throughput",
    "decode_median_latency_s",
    "decode_median_throughput",
    "total_latency_s",
    "total_throughput",
)
MAX_EVIDENCE_CHARS = 1000


@dataclass
class Report:
    """The data model (`data`, JSON-friendly) and the plot series beside it."""

    data: dict[str, Any]
    series: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- sections


def _summary(
    analysis: Analysis,
    entry: dict[str, Any],
    timing: dict[str, Any],
    serving: dict[str, Any],
    spec: dict[str, Any] | None,
    source: str,
) -> dict[str, Any]:
    views = analysis.views
    cfg = entry["config"]
    facts = entry["facts"]
    hardware: dict[str, Any] = {}
    for key in ("tp_size", "dp_size", "ep_size", "pp_size", "ranks_seen", "gpus_seen"):
        if cfg.get(key) is not None:
            hardware[key] = cfg[key]
    if facts.get("nccl_version"):
        hardware["nccl_version"] = facts["nccl_version"]
    first_load = analysis.log.of(WeightLoadBegin)
    if first_load and first_load[0].avail_mem_gb is not None:
        hardware["gpu_mem_free_at_start_gb"] = first_load[0].avail_mem_gb
    flags = {k: cfg[k] for k in KEY_FLAGS if k in cfg}
    if spec and spec.get("config"):
        flags = {"speculative": spec["config"], **flags}
    if cfg.get("env"):
        flags["env"] = cfg["env"]
    root = entry.get("root_cause")
    severities: dict[str, int] = {}
    for f in entry["findings"]:
        severities[f["severity"]] = severities.get(f["severity"], 0) + 1
    headline: dict[str, Any] = {}
    overall = serving.get("overall", {})
    if overall.get("gen_throughput"):
        headline["gen_throughput_median"] = overall["gen_throughput"]["median"]
    if overall.get("running"):
        headline["running_max"] = overall["running"]["max"]
    if spec and spec.get("accept_len"):
        headline["accept_len_mean"] = spec["accept_len"]["mean"]
    return {
        "source": source,
        "lines": entry["lines"]["total"],
        "model": cfg.get("model"),
        "model_class": cfg.get("model_class"),
        "hardware": hardware,
        "ranks": views.ranks,
        "key_flags": flags,
        "outcome": analysis.outcome,
        "outcome_text": OUTCOME_TEXT.get(analysis.outcome, analysis.outcome),
        "root_cause": None
        if root is None
        else {k: root[k] for k in ("code", "name", "severity", "message", "remedy")}
        | {"first_line": root["evidence"][0]["line"] if root["evidence"] else None},
        "time_to_ready_s": timing.get("time_to_ready_s"),
        "ready": timing.get("ready"),
        "ready_line": timing.get("ready_line"),
        # Launch attempts (when the log holds several): each one's outcome and root cause.
        "launches": entry["launches"] if len(entry["launches"]) > 1 else [],
        "findings_by_severity": dict(sorted(severities.items())),
        "headline": headline,
    }


def _cut_evidence(f: dict[str, Any]) -> dict[str, Any]:
    for ev in f.get("evidence", []):
        if len(ev["text"]) > MAX_EVIDENCE_CHARS:
            ev["text"] = ev["text"][:MAX_EVIDENCE_CHARS] + " …"
    for c in f.get("consequences", []):
        _cut_evidence(c)
    return f


def _findings(entry: dict[str, Any], analysis: Analysis) -> dict[str, Any]:
    root = entry.get("root_cause")
    items = []
    for f in entry["findings"]:
        f = _cut_evidence(dict(f))
        f["is_root"] = (
            root is not None and f["code"] == root["code"] and f["evidence"] == root["evidence"]
        )
        items.append(f)
    return {"items": items, "errors": entry["errors"], "rule_errors": list(analysis.rule_errors)}


def _label(field_name: str) -> str:
    from logparse.parsing.benchblocks import SERVING_FIELDS

    for label, (name, _parse) in SERVING_FIELDS.items():
        if name == field_name:
            return label
    return field_name.replace("_", " ")


def _commands_before(commands: list[LaunchCommand]) -> Callable[[int, int], LaunchCommand | None]:
    """lookup(lo, hi): the last of `commands` on a line in [lo, hi), or None.

    A bench result's command is the last one printed since the previous result. Scanning the
    commands for each result was quadratic: at 1M lines of the corpus profile (15,000 results,
    thousands of commands) it took 5 s of a 10 s report model. Commands come in line order, so a
    binary search finds the same one; in any other order the scan is kept (it means "last in the
    list", which is then not "the highest line")."""
    lines = [c.line for c in commands]
    if any(a > b for a, b in pairwise(lines)):
        return lambda lo, hi: next((c for c in reversed(commands) if lo <= c.line < hi), None)

    def lookup(lo: int, hi: int) -> LaunchCommand | None:
        i = bisect_left(lines, hi) - 1
        return commands[i] if i >= 0 and lines[i] >= lo else None

    return lookup


def _benchmarks(analysis: Analysis) -> dict[str, Any]:
    from logparse.parsing.benchblocks import SERVING_FIELDS

    log = analysis.log
    commands = [e for e in log.of(LaunchCommand) if "bench" in (e.program or "")]
    command_before = _commands_before(commands)
    serving_runs: list[dict[str, Any]] = []
    one_runs: list[dict[str, Any]] = []
    prev = 0
    for e in log.events:
        if not isinstance(e, (BenchServingResult, BenchOneBatchResult)):
            continue
        cmd = command_before(prev, e.line)
        prev = e.line
        item = {
            "line": e.line,
            "end_line": e.end_line,
            "command": cmd.text if cmd else None,
            "command_line": cmd.line if cmd else None,
        }
        if isinstance(e, BenchServingResult):
            serving_runs.append(
                item | {"title": e.title, "complete": e.complete, "fields": dict(e.fields)}
            )
        else:
            fields = {k: v for k, v in e.fields.items() if k != "decode_steps"}
            one_runs.append(
                item | {"fields": fields, "decode_steps": len(e.fields.get("decode_steps") or [])}
            )
    order: list[str] = []
    for name, _parse in SERVING_FIELDS.values():
        if name not in order:
            order.append(name)
    present = {k for r in serving_runs for k in r["fields"]}
    names = [n for n in order if n in present] + sorted(present - set(order))
    serving_rows = [
        {"field": n, "label": _label(n), "values": [r["fields"].get(n) for r in serving_runs]}
        for n in names
    ]
    one_present = {k for r in one_runs for k in r["fields"]}
    one_rows = [
        {"field": n, "label": n.replace("_", " "), "values": [r["fields"].get(n) for r in one_runs]}
        for n in ONE_BATCH_ROWS
        if n in one_present
    ]
    for i, r in enumerate(serving_runs, 1):
        r["index"] = i
    for i, r in enumerate(one_runs, 1):
        r["index"] = i
    return {
        "serving": {"runs": serving_runs, "rows": serving_rows},
        "one_batch": {"runs": one_runs, "rows": one_rows},
    }


def _shown(value: Any) -> bool:
    """Server args worth showing: not None / False / empty."""
    return not (
        value is None
        or value is False
        or value in ("", "{}", "[]", "None")
        or value == []
        or value == {}
    )


def _configuration(analysis: Analysis, entry: dict[str, Any]) -> dict[str, Any]:
    views = analysis.views
    args = views.server_args
    commands = []
    for e in analysis.log.of(LaunchCommand):
        commands.append(
            {
                "line": e.line,
                "program": e.program,
                "env": dict(e.env),
                "flags": dict(e.flags),
                "text": e.text,
            }
        )
    return {
        "server_args": {k: v for k, v in args.items() if _shown(v)},
        "server_args_total": len(args),
        "server_args_hidden": sum(1 for v in args.values() if not _shown(v)),
        "launch_commands": commands,
        "env": dict(sorted(views.env_vars.items())),
        "run": entry["config"],
    }


def _coverage(entry: dict[str, Any], analysis: Analysis, sanitizer: Sanitizer) -> dict[str, Any]:
    from logparse.parsing.coverage import template_of

    read = entry["read"]
    flags = {
        k: v for k, v in read.items() if k not in ("path",) and v not in (0, False, None, [], "")
    }
    cov = dict(entry["coverage"])
    if sanitizer.redact:
        # A template masks a line's digits, which can hide a secret's shape from the redaction:
        # a template whose first line holds a secret is made from the redacted line (counted).
        cov = redact_coverage(cov, analysis.log.texts, sanitizer, template_of)
    return cov | {"read": flags}


# --------------------------------------------------------------------------- build


def build_report(
    analysis: Analysis,
    baseline: Analysis | None = None,
    *,
    source: str | None = None,
    baseline_source: str | None = None,
    gap_threshold_s: float = DEFAULT_GAP_S,
    redact: bool = True,
    generated: str | None = None,
) -> Report:
    """The report of one analysis (and a baseline to compare with). `source` is the name shown for
    the log (default: its path); `generated` a timestamp to print (default: none, deterministic)."""
    from logparse.engine.gcpace import fewer_collections

    # The model is hundreds of thousands of new dicts and lists beside the analysis's millions of
    # objects, and no reference cycles: with the default young threshold the collector ran ~400
    # times and walked the whole analysis in full collections while a report of 1M lines of the
    # failure-heavy profile was built and rendered (0.5 s of collections; 0.1 s with this).
    with fewer_collections():
        return _build_report(
            analysis,
            baseline,
            source=source,
            baseline_source=baseline_source,
            gap_threshold_s=gap_threshold_s,
            redact=redact,
            generated=generated,
        )


def _build_report(
    analysis: Analysis,
    baseline: Analysis | None,
    *,
    source: str | None,
    baseline_source: str | None,
    gap_threshold_s: float,
    redact: bool,
    generated: str | None,
) -> Report:
    source = source or analysis.log.path
    sanitizer = Sanitizer(redact)
    entry = file_summary(analysis)
    timing = timing_section(analysis, gap_threshold_s)
    serving, serving_series = serving_section(analysis)
    spec, spec_series = speculative_section(analysis, serving, serving_series)
    benchmarks = _benchmarks(analysis)
    data: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "source": source,
        "baseline_source": None,
        "generated": generated,
        "summary": _summary(analysis, entry, timing, serving, spec, source),
        "findings": _findings(entry, analysis),
        "timing": timing,
        "memory": memory_section(entry),
        "serving": serving,
        "speculative": spec,
        "baseline": None,
        "baseline_verdict": None,
        "benchmarks": benchmarks,
        "configuration": _configuration(analysis, entry),
        "coverage": _coverage(entry, analysis, sanitizer),
    }
    series: dict[str, Any] = {"serving": serving_series, "speculative": spec_series}
    if baseline is not None:
        base_source = baseline_source or baseline.log.path
        data["baseline_source"] = base_source
        base_data, base_series = baseline_section(
            analysis, baseline, base_source, spec, benchmarks, _benchmarks(baseline)
        )
        data["baseline"] = base_data
        series["baseline"] = base_series
        # The same verdict as `logdiag compare BASELINE RUN --vary speculative`, shown at the top.
        from logparse.compare.comparison import verdict_summary

        data["baseline_verdict"] = verdict_summary(baseline.log, analysis.log, ("speculative",), base_source, source)
    from logparse.report.plots import plan

    data["plots"] = plan(data, series)
    # Secrets masked (unless redact=False) and CI workflow commands defused, counted by kind.
    # The sanitizer's JSON-safe walk does what clean() did (NaN/inf -> None, tuples -> lists,
    # keys -> str) on its way: one walk of the document, not two (~270k values at 1M lines).
    sanitizer.json_safe = True
    data = sanitizer.data(data)
    by_kind = sanitizer.summary()
    data["redaction"] = {"enabled": redact, "masked": sum(by_kind.values()), "by_kind": by_kind}
    return Report(data=data, series=series)
