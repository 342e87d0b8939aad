"""Text for a person: what happened first, then the details, in the order people ask."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from logparse.render.neutral import one_line
from logparse.render.summary import file_summary

WIDTH = 100


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.2f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _cut(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def finding_lines(f: dict[str, Any], indent: str = "  ") -> list[str]:
    out = [f"{indent}[{f['severity'].upper()}] {f['name']} ({f['code']}): {f['message']}"]
    if f.get("ranks"):
        out.append(f"{indent}  ranks: {', '.join(f['ranks'])}")
    for ev in f.get("evidence", [])[:6]:
        # A run merged from several files (`--run`): each line says which file it is from.
        where = f"{ev['file'].rsplit('/', 1)[-1]}:{ev['line']}" if ev.get("file") else f"{ev['line']:>7}"
        out.append(f"{indent}  {where} | {_cut(ev['text'], WIDTH - 12)}")
    if len(f.get("evidence", [])) > 6:
        out.append(f"{indent}          … {len(f['evidence']) - 6} more evidence lines")
    if f.get("remedy"):
        out.append(f"{indent}  fix: {f['remedy']}")
    for c in f.get("consequences", []):
        out.append(f"{indent}  ↳ consequence: {c['name']}: {_cut(c['message'], WIDTH - 20)}")
    return out


def _attempt_line(a: dict[str, Any]) -> str:
    """'attempt 1 (lines 1–24): crashed-at-startup — spec-v2-topk-conflict, fix …'."""
    last = a["last_line"]
    head = f"  attempt {a['index']} (lines {a['first_line']}–{last}): {a.get('outcome') or 'outcome unknown'}"
    root = a.get("root_cause")
    if root:
        head += f" — {root['name']}"
        if root.get("remedy"):
            head += f", fix: {root['remedy']}"
    elif a.get("findings"):
        head += f" — {', '.join(a['findings'][:3])}" + (" …" if len(a["findings"]) > 3 else "")
    return _cut(head, WIDTH + 60)


def _memory_lines(launches: list[dict[str, Any]], max_rows: int = 16) -> list[str]:
    """The last launch's memory budget: one row per rank (GB; ranks with the same numbers share a
    row), the tightest rank marked with `*` when the ranks differ."""
    mem = next((a["memory"] for a in reversed(launches) if a.get("memory")), None)
    if not mem:
        return []
    how = {"command": "set on the command line", "server_args": "SGLang's default, from server_args"}
    notes = []
    if mem.get("mem_fraction_static") is not None:
        source = how.get(mem.get("mem_fraction_static_source") or "", "?")
        notes.append(f"mem_fraction_static {mem['mem_fraction_static']:g} ({source})")
    if mem.get("kv_bytes_per_token"):
        notes.append(f"KV {mem['kv_bytes_per_token']:,} bytes/token")
    if mem.get("gpu_total_gb"):
        notes.append(f"GPU total {mem['gpu_total_gb']:.2f} GiB")
    out = ["memory (GB per rank)" + (": " + "; ".join(notes) if notes else ":"),
           (f"  {'rank':>12}  {'start':>6} {'weights':>7} {'KV pool (tokens)':>20} {'other':>6} "
            f"{'graphs':>6} {'draft':>6} {'free':>6}")]

    def g(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, (int, float)) else "-"

    def total(*values: Any) -> float | None:
        nums = [v for v in values if isinstance(v, (int, float))]
        return round(sum(nums), 2) if nums else None

    ranks = mem.get("ranks") or []
    frees = {r.get("free_after_gb") for r in ranks}
    tight = mem.get("tightest_rank") if len(frees) > 1 else None
    rows: list[tuple[list[str], str]] = []  # (rank names, cells)
    for r in ranks:
        kv = f"{g(r.get('kv_gb'))} ({r['kv_tokens']:,})" if r.get("kv_tokens") else g(r.get("kv_gb"))
        other = total(r.get("mamba_gb"), r.get("swa_gb"))
        draft = total(r.get("draft_weights_gb"), r.get("draft_kv_gb"), r.get("draft_graph_gb"))
        cells = (f"{g(r.get('free_at_start_gb')):>6} {g(r.get('weights_gb')):>7} {kv:>20} {g(other):>6} "
                 f"{g(r.get('target_graph_gb')):>6} {g(draft):>6} {g(r.get('free_after_gb')):>6}")
        name = r.get("rank") or "-"
        if rows and rows[-1][1] == cells and name != tight and rows[-1][0][-1] != tight:
            rows[-1][0].append(name)
        else:
            rows.append(([name], cells))
    for names, cells in rows[:max_rows]:
        label = names[0] if len(names) == 1 else f"{names[0]}–{names[-1]}"
        mark = "*" if tight in names else " "
        out.append(f" {mark}{label:>12}  {cells}")
    if len(rows) > max_rows:
        out.append(f"  … {len(rows) - max_rows} more rows")
    legend = "other = mamba/SWA pools; draft = draft weights + KV + graphs; free = free after start-up"
    out.append(f"  * tightest rank: {tight}; {legend}" if tight else f"  {legend}")
    return out


def render_one(entry: dict[str, Any]) -> str:
    out: list[str] = []
    lines = entry["lines"]
    out.append(f"== {one_line(str(entry['path']))}  ({lines['total']} lines)")
    if entry.get("outcome"):
        out.append(f"outcome: {entry['outcome']}")
    launches = entry.get("launches") or []
    if len(launches) > 1:
        out.append(f"launch attempts: {len(launches)} (outcome and root cause above are the last one's)")
        out.extend(_attempt_line(a) for a in launches)
    root = entry.get("root_cause")
    if root:
        out.append("root cause:")
        out.extend(finding_lines(root))
    others = [f for f in entry.get("findings", []) if not root or f["code"] != root["code"] or f["evidence"] != root["evidence"]]
    if others:
        out.append("findings:")
        for f in others:
            out.extend(finding_lines(f))

    cfg = entry.get("config") or {}
    if cfg:
        out.append("run:")
        for key, value in cfg.items():
            if key == "env":
                value = " ".join(f"{k}={v}" for k, v in value.items())
            elif isinstance(value, dict):
                value = ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
            out.append(f"  {key}: {_cut(_fmt(value), WIDTH - len(key) - 4)}")

    st = entry["startup"]
    if st["ranks"]:
        ready = st["ready"]
        head = "startup: ready" if ready else "startup: NOT ready" if ready is False else "startup:"
        if st.get("ready_at"):
            where = f"{st['ready_file']}:" if st.get("ready_file") else "line "
            head += f" at {st['ready_at']} ({where}{st['ready_line']})"
        if st.get("time_to_ready_s") is not None:
            head += f", {st['time_to_ready_s']} s after the first timestamp"
        out.append(head)
        for rank, info in st["ranks"].items():
            parts = []
            for p in info["phases"]:
                d = p["duration_s"]
                mark = "" if p["complete"] else " (unfinished)"
                parts.append(f"{p['phase']} {_fmt(d)+'s' if d is not None else '?'}{mark}")
            out.append(f"  {rank:>10}: " + _cut(", ".join(parts), WIDTH - 14))
        if st.get("slowest_rank"):
            s = st["slowest_rank"]
            out.append(f"  slowest rank: {s['rank']} ({_fmt(s['phases_s'])} s in logged phases; longest: {s['slowest_phase']})")

    out.extend(_memory_lines(entry.get("launches") or []))

    sv = entry["serving"]
    if sv.get("decode_lines") or sv.get("prefill_lines") or sv.get("http_requests"):
        out.append("serving:")
        out.append(f"  stats lines: {sv['decode_lines']} decode, {sv['prefill_lines']} prefill; "
                   f"{sv['http_requests']} HTTP requests {sv.get('http_status', '')}")
        if "gen_throughput" in sv:
            g = sv["gen_throughput"]
            out.append(f"  decode throughput (token/s): median {_fmt(g['median'])}, max {_fmt(g['max'])}")
            out.append(f"  running requests: median {_fmt(sv['running_req']['median'])}, max {_fmt(sv['running_req']['max'])}; "
                       f"queued: max {_fmt(sv['queue_req']['max'])}; token usage: max {_fmt(sv['token_usage']['max'])}")
        if "accept_len" in sv:
            a = sv["accept_len"]
            rate = sv.get("accept_rate", {}).get("mean")
            out.append(f"  speculative accept length: mean {_fmt(a['mean'])} (min {_fmt(a['min'])}, max {_fmt(a['max'])})"
                       + (f"; accept rate mean {_fmt(rate)}" if rate is not None else ""))
        if sv.get("cuda_graph_false_lines"):
            out.append(f"  decode lines without CUDA graph: {sv['cuda_graph_false_lines']}")
        if sv.get("retractions"):
            out.append(f"  retractions: {sv['retractions']}")

    for b in entry["benchmarks"]:
        f = b["fields"]
        keys = [k for k in ("successful_requests", "duration_s", "max_concurrency", "request_throughput",
                            "output_throughput", "total_throughput", "mean_ttft_ms", "mean_itl_ms", "accept_length",
                            "prefill_throughput", "decode_median_throughput", "total_throughput") if k in f]
        out.append(f"benchmark ({b['kind']}, line {b['line']}): " + ", ".join(f"{k}={_fmt(f[k])}" for k in keys))

    if entry["errors"]:
        out.append("errors seen:")
        for e in entry["errors"][:20]:
            if e["kind"] == "traceback":
                what = f"{e.get('exception') or '(cut before the exception)'}: {e.get('message', '')}"
            else:
                what = f"{e['kind']} {e.get('detail', '')}"
            where = f"line {e['line']}" + (f"-{e['end_line']}" if e["end_line"] != e["line"] else "")
            out.append(f"  {where:>16} {e['rank'] or '':>8} " + _cut(what, WIDTH - 28))
        if len(entry["errors"]) > 20:
            out.append(f"  … {len(entry['errors']) - 20} more")

    cov = entry["coverage"]
    out.append(f"coverage: {cov['recognized']}/{cov['total']} lines recognized ({cov['recognized_share']:.1%})")
    for t in cov["top_unparsed"][:5]:
        out.append(f"  {t['count']:>7}× (first line {t['first_line']}) {_cut(t['template'], WIDTH - 30)}")
    rd = entry["read"]
    damage = [f"{k.replace('_', ' ')}: {rd[k]}" for k in ("bad_utf8", "nul_bytes", "long_lines") if rd.get(k)]
    if rd.get("damaged"):
        damage.append(rd["damaged"])
    if damage:
        out.append("input damage: " + "; ".join(damage))
    return "\n".join(out) + "\n"


def render(analyses: Sequence[Any], *, redact: bool = True) -> str:
    """Secrets masked unless redact=False; no output line can be a CI workflow command."""
    from logparse.render.neutral import neutralize
    from logparse.render.sanitize import clean_entry

    return neutralize("\n".join(render_one(clean_entry(file_summary(a), a, redact)) for a in analyses))
