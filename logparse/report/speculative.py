"""Speculative decoding for a report: acceptance over time and as a distribution (per DP rank when
DP attention is on), tokens per verify step, and — with a baseline log — the speedup at matched
concurrency, the break-even acceptance, and the settings that differ besides speculation.

`accept len` in a decode stats line is the mean number of tokens a request gains per verify
step (accepted draft tokens plus the target's own token), so it is also the tokens per verify
step per request. SGLang releases print `accept rate` two ways: accept_len / num_draft_tokens,
or (accept_len − 1) / num_steps; which one a log uses is detected from its numbers.

Speedup at matched concurrency: per #running-req bucket present in both logs, the ratio of the
median per-request decode throughput (gen throughput / #running-req). At equal concurrency a
verify step costs step_time, so throughput ∝ accept_len / step_time, and the accept length at
which this run would only match the baseline is accept_len / speedup (the break-even).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logparse.compare.factors import NEVER_DIFFERENT
from logparse.model.events import KnownMessage
from logparse.report.fmt import val
from logparse.report.serving import DECODE, PREFILL, arr, by_concurrency, columns, stat
from logparse.run.ranks import rank_key
from logparse.run.speculative import break_even_accept_len

if TYPE_CHECKING:
    import numpy as np

    from logparse.engine.core import Analysis

HIST_BIN = 0.1
MIN_LINES_PER_BUCKET = 2

# Settings that never change performance, or always differ between two launches (the compare
# layer owns the list), and the report's own summary keys that are no setting.
IGNORED_SETTINGS = NEVER_DIFFERENT | {"model", "ranks_seen", "gpus_seen", "model_class"}
# Settings that SGLang changes by itself when speculative decoding is on (when not set explicitly).
SPEC_DERIVED = {
    "max_running_requests": "SGLang caps it for speculative decoding unless it is set explicitly",
    "cuda_graph_max_bs": "SGLang lowers the default for speculative decoding unless it is set explicitly",
    "disable_overlap_schedule": "speculative decoding (spec v1) turns the overlap scheduler off",
}


def spec_config(analysis: Analysis) -> dict[str, Any]:
    """The speculative server arguments of the run (run/speculative.py owns the configuration)."""
    from logparse.run.speculative import args_of
    from logparse.run.speculative import spec_config as run_spec_config

    return args_of(run_spec_config(analysis.log, analysis.views))


def rate_definition(d: dict[str, np.ndarray], cfg: dict[str, Any]) -> str | None:
    """Which formula the log's `accept rate` uses (None if it cannot tell)."""
    import numpy as np

    m = ~np.isnan(d["accept_len"]) & ~np.isnan(d["accept_rate"])
    if not m.any():
        return None
    length, rate = d["accept_len"][m], d["accept_rate"][m]
    draft, steps = cfg.get("num_draft_tokens"), cfg.get("num_steps")
    if isinstance(draft, int) and draft > 0 and np.all(np.abs(length / draft - rate) <= 0.011):
        return "accept_len / num_draft_tokens"
    if (
        isinstance(steps, int)
        and steps > 0
        and np.all(np.abs((length - 1) / steps - rate) <= 0.011)
    ):
        return "(accept_len - 1) / num_steps"
    return None


def _rate_of(length: float | None, definition: str | None, cfg: dict[str, Any]) -> float | None:
    if length is None or definition is None:
        return None
    if definition.startswith("accept_len /"):
        return round(length / cfg["num_draft_tokens"], 3)
    return round(max(0.0, (length - 1) / cfg["num_steps"]), 3)


MAX_HIST_BINS = 1000


def histogram(values: np.ndarray, upper: float | None) -> dict[str, Any]:
    import numpy as np

    v = values[~np.isnan(values)]
    lo = 1.0 if v.size == 0 or v.min() >= 1.0 else float(np.floor(v.min()))
    hi = max(float(np.ceil(v.max() * 10) / 10) if v.size else 1.0, upper or 0.0, lo + HIST_BIN)
    # A damaged accept length (1e40) must not make a bin per 0.1 up to it: cap the bins.
    n = min(round((hi - lo) / HIST_BIN), MAX_HIST_BINS)
    edges = [round(lo + i * HIST_BIN, 2) for i in range(n + 1)]
    counts, _ = np.histogram(v, bins=np.asarray(edges, dtype="float64"))
    return {"bin_width": HIST_BIN, "edges": edges, "counts": [int(c) for c in counts]}


def _by_rank(d: dict[str, np.ndarray], names: list[str | None]) -> list[dict[str, Any]]:
    import numpy as np

    out = []
    codes = sorted((int(c) for c in np.unique(d["rank"])), key=lambda c: rank_key(names[c] or ""))
    for code in codes:
        m = (d["rank"] == code) & ~np.isnan(d["accept_len"])
        if not m.any():
            continue
        out.append(
            {
                "rank": names[code] or "(untagged)",
                "decode_lines": int(m.sum()),
                "accept_len": stat(d["accept_len"][m]),
                "accept_rate": stat(d["accept_rate"][m], nd=3),
                "gen_throughput": stat(d["gen_throughput"][m]),
            }
        )
    return out


def _trend(x: np.ndarray, values: np.ndarray) -> dict[str, Any] | None:
    """Mean acceptance in the first and last quarter of the stats lines (drift over the run)."""
    import numpy as np

    m = ~np.isnan(values)
    v = values[m][np.argsort(x[m], kind="stable")]
    if v.size < 8:
        return None
    q = v.size // 4
    first, last = float(v[:q].mean()), float(v[-q:].mean())
    return {
        "first_quarter_mean": round(first, 2),
        "last_quarter_mean": round(last, 2),
        "change": round(last - first, 2),
    }


def speculative_section(
    analysis: Analysis, serving: dict[str, Any], serving_series: dict[str, Any]
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(speculative data or None when the log shows no speculative decoding, plot series)."""
    import numpy as np

    log = analysis.log
    cfg = spec_config(analysis)
    d = columns(log.decode, DECODE)
    has_accept = bool((~np.isnan(d["accept_len"])).any())
    if not cfg and not has_accept:
        return None, {}
    data: dict[str, Any] = {"config": cfg}
    data["spec_v2"] = analysis.views.env_vars.get("SGLANG_ENABLE_SPEC_V2")
    capped = [e for e in log.of(KnownMessage) if e.code in ("max-running-reset",)]
    if capped:
        data["max_running_reset_line"] = capped[0].line
    if not has_accept:
        data["decode_lines_with_accept"] = 0
        return data, {}
    length = d["accept_len"]
    m = ~np.isnan(length)
    definition = rate_definition(d, cfg)
    draft = cfg.get("num_draft_tokens")
    mean_len = float(length[m].mean())
    running = d["running"]
    per_batch = length * running
    data.update(
        {
            "decode_lines_with_accept": int(m.sum()),
            "accept_len": stat(length, p10=True),
            "accept_rate": stat(d["accept_rate"], nd=3, p10=True),
            "rate_definition": definition,
            "tokens_per_verify_step": {
                "per_request_mean": round(mean_len, 2),
                "per_batch_median": round(float(np.nanmedian(per_batch)), 1)
                if (~np.isnan(per_batch)).any()
                else None,
                "draft_tokens_per_step": draft if isinstance(draft, int) else None,
                "draft_efficiency": round(mean_len / draft, 3)
                if isinstance(draft, int) and draft
                else None,
            },
            "histogram": histogram(length, float(draft) if isinstance(draft, int) else None),
            "trend": _trend(d["line"], length),
        }
    )
    names = log.decode.ranks.values
    ranks = _by_rank(d, names)
    dp = bool(serving.get("dp_attention")) or sum(1 for r in ranks if "DP" in r["rank"]) > 1
    data["per_rank"] = ranks if len(ranks) > 1 or dp else []
    series = {
        "x": serving_series.get("decode", {}).get("x", d["line"]),
        "timed": serving_series.get("timed", False),
        "t0": serving_series.get("t0"),
        "accept_len": length,
        "accept_rate": d["accept_rate"],
        "rank": np.asarray([name or "" for name in names], dtype=object)[d["rank"].astype(np.intp)].tolist(),
        "histogram": data["histogram"],
        "per_rank": bool(data["per_rank"]),
    }
    return data, series


# --------------------------------------------------------------------------- baseline comparison


def _fmt(v: Any) -> Any:
    return v if isinstance(v, (int, float, bool)) or v is None else str(v)


def setting_differences(
    run: Analysis, base: Analysis
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(differences other than speculation, speculative settings that differ, settings only one
    log states) — read from `logdiag compare`'s verdict with speculation as the declared factor, so
    the report and `compare` cannot disagree about what differs. A setting SGLang derives from
    speculation (and the command did not set) stays in the first list, with a note saying so."""
    from logparse.compare.comparison import compare_runs
    from logparse.compare.factors import FACTORS
    from logparse.compare.settings import of_log

    cmp = compare_runs(of_log(base.log, "baseline"), [of_log(run.log, "candidate")], ("speculative",))
    verdict = cmp.pairs[0].verdict
    diffs, spec = [], []
    for d in verdict.differences:
        if d.key in IGNORED_SETTINGS:
            continue
        item = {"setting": d.key, "run": _fmt(d.candidate), "baseline": _fmt(d.baseline)}
        if d.factor == "speculative" and not d.derived:
            spec.append(item)
            continue
        if d.derived and d.key in SPEC_DERIVED:
            item["note"] = SPEC_DERIVED[d.key]
        diffs.append(item)
    speculative = FACTORS["speculative"]
    unknown = []
    for u in verdict.unknown:
        if u.stated_in == "neither" or u.key in IGNORED_SETTINGS:
            continue
        if speculative.owns(u.key):  # one log has no speculative settings at all: that is the factor
            mine = u.value if u.stated_in == "candidate" else None
            theirs = u.value if u.stated_in == "baseline" else None
            spec.append({"setting": u.key, "run": _fmt(mine), "baseline": _fmt(theirs)})
            continue
        if u.kind == "release":  # a server argument another release does not print
            continue
        unknown.append({"setting": u.key, "stated_in": u.stated_in, "value": _fmt(u.value), "reason": u.reason})
    spec.sort(key=lambda item: item["setting"])
    return diffs, spec, unknown


def _bench_pairs(run: dict[str, Any], base: dict[str, Any]) -> list[dict[str, Any]]:
    """bench_serving results of both logs at the same max concurrency and request rate."""
    out = []
    base_runs = base.get("serving", {}).get("runs", [])
    for r in run.get("serving", {}).get("runs", []):
        rf = r["fields"]
        for b in base_runs:
            bf = b["fields"]
            if rf.get("max_concurrency") != bf.get("max_concurrency") or rf.get(
                "request_rate"
            ) != bf.get("request_rate"):
                continue
            item: dict[str, Any] = {
                "run_line": r["line"],
                "baseline_line": b["line"],
                "max_concurrency": rf.get("max_concurrency"),
                "request_rate": rf.get("request_rate"),
            }
            for key in (
                "output_throughput",
                "request_throughput",
                "median_tpot_ms",
                "median_itl_ms",
                "median_ttft_ms",
            ):
                if (
                    isinstance(rf.get(key), (int, float))
                    and isinstance(bf.get(key), (int, float))
                    and bf[key]
                ):
                    item[key] = {
                        "run": rf[key],
                        "baseline": bf[key],
                        "ratio": round(rf[key] / bf[key], 3),
                    }
            out.append(item)
            break
    return out


def baseline_section(
    run: Analysis,
    base: Analysis,
    base_source: str,
    spec: dict[str, Any] | None,
    run_bench: dict[str, Any],
    base_bench: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The comparison with a baseline log, and its plot series."""
    import numpy as np

    def buckets(a: Analysis) -> dict[str, dict[str, Any]]:
        d = columns(a.log.decode, DECODE)
        p = columns(a.log.prefill, PREFILL)
        return {row["running"]: row for row in by_concurrency(d, p, [])}

    mine, theirs = buckets(run), buckets(base)
    cfg = spec_config(run)
    definition = (spec or {}).get("rate_definition")
    matched = []
    for label, row in mine.items():
        other = theirs.get(label)
        if (
            other is None
            or row["decode_lines"] < MIN_LINES_PER_BUCKET
            or other["decode_lines"] < MIN_LINES_PER_BUCKET
        ):
            continue
        a, b = row["per_request_throughput"], other["per_request_throughput"]
        if not a or not b or not b["median"]:
            continue
        speedup = a["median"] / b["median"]
        length = row["accept_len"]["median"] if row["accept_len"] else None
        even = break_even_accept_len(length, speedup)
        matched.append(
            {
                "running": label,
                "lo": row["lo"],
                "hi": row["hi"],
                "run_lines": row["decode_lines"],
                "baseline_lines": other["decode_lines"],
                "run_gen_throughput": row["gen_throughput"]["median"]
                if row["gen_throughput"]
                else None,
                "baseline_gen_throughput": other["gen_throughput"]["median"]
                if other["gen_throughput"]
                else None,
                "run_per_request": a["median"],
                "baseline_per_request": b["median"],
                "speedup": round(speedup, 3),
                "accept_len": length,
                "break_even_accept_len": even,
                "break_even_accept_rate": _rate_of(even, definition, cfg),
                "pays_off": speedup > 1.0,
            }
        )
    data: dict[str, Any] = {
        "source": base_source,
        "baseline_speculative": spec_config(base) or None,
        "matched": matched,
    }
    if matched:
        weights = arr([m["run_lines"] for m in matched])
        speed = arr([m["speedup"] for m in matched])
        overall = float(np.exp((weights * np.log(speed)).sum() / weights.sum()))
        data["speedup"] = round(overall, 3)
        mean_len = spec["accept_len"]["mean"] if spec and spec.get("accept_len") else None
        data["accept_len_mean"] = mean_len
        data["break_even_accept_len"] = break_even_accept_len(mean_len, overall)
        data["break_even_accept_rate"] = _rate_of(data["break_even_accept_len"], definition, cfg)
    else:
        data["speedup"] = None
        data["note"] = (
            "no #running-req level has at least "
            f"{MIN_LINES_PER_BUCKET} decode stats lines in both logs: no matched comparison"
        )
    data["bench"] = _bench_pairs(run_bench, base_bench)
    diffs, spec_diffs, unknown = setting_differences(run, base)
    data["differences"] = diffs
    data["speculative_differences"] = spec_diffs
    data["unknown_settings"] = unknown
    warning = []
    if diffs:
        names = ", ".join(
            f"`{d['setting']}` ({val(d['run'])} vs {val(d['baseline'])})" for d in diffs[:12]
        )
        more = f" and {len(diffs) - 12} more" if len(diffs) > 12 else ""
        warning.append(
            f"The baseline differs from this run in {len(diffs)} setting(s) besides speculative "
            f"decoding: {names}{more}. The speedup mixes their effects with speculation's."
        )
    only_run = [u["setting"] for u in unknown if u["stated_in"] == "candidate"]
    if only_run:
        names = ", ".join(f"`{k}`" for k in only_run[:12]) + (f" and {len(only_run) - 12} more" if len(only_run) > 12 else "")
        warning.append(f"The baseline log does not say whether it had {names}: unknown, not equal.")
    data["warning"] = " ".join(warning) or None
    series = {"matched": matched, "run": mine, "baseline": theirs}
    return data, series
