"""Text for a person at a terminal: the first screen answers what happened (outcome), why (root
cause: rank, evidence, fix) and which launch attempt; the details follow in the order people ask.

Layout rules (`render/layout.py` wraps): lines fit the width (`--wide`: none is ever broken), a
wrapped line keeps a hanging indent, no text is cut. Each finding is printed once — a finding
that two launch attempts share (same rule, message and fix) is one entry naming both attempts,
and an error record that is a finding's evidence is not listed again under "errors". Remedies
are short bullets (`render/bullets.py`); the whole text is in `logdiag rule NAME` and JSON.
Numbers are formatted for people (`fmt`): no Python repr reaches the output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from logparse.render.bullets import remedy_bullets
from logparse.render.layout import GLUE, Doc, Paint, table, wrap
from logparse.render.neutral import one_line
from logparse.run.ranks import rank_key, rank_range

WIDTH = 100  # the default width (layout.DEFAULT_WIDTH); kept for callers that import it
ROOT_EVIDENCE = 4  # evidence lines shown for the root cause
EVIDENCE = 3  # … and for any other finding
MAX_ERRORS = 12

_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": None}
_OUTCOME_STYLE = {"serving": "green", "ready": "green", "stopped": None}
_OUTCOME_MEANS = {
    "ready": "the server came up; no request was served in this log",
    "serving": "the server came up and served requests",
    "stopped": "the server came up and was shut down",
    "crashed-at-startup": "the server failed before it became ready",
    "crashed-while-serving": "the server failed after it had served requests",
    "hung": "the server stopped making progress",
    "incomplete": "the log ends before the server became ready, with no error",
}


def fmt(v: Any) -> str:
    """A value for people: 1,600 · 3,826.07 · 0.5 · yes/no · not set; lists and mappings
    as `a, b` / `k v, k v` (never a Python repr)."""
    if v is None:
        return "not set"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 2**53:
            return f"{int(v):,}"
        return f"{v:,.2f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, dict):
        return ", ".join(f"{k} {fmt(x)}" for k, x in v.items()) or "none"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt(x) for x in v) or "none"
    return str(v)


# ------------------------------------------------------------------------------------ findings


def _title(f: dict[str, Any]) -> str:
    return f"[{f['severity'].upper()}] {f['name']} ({f['code']}): {f['message']}"


def _where(ev: dict[str, Any]) -> str:
    # A run merged from several files (`--run`): each line says which file it is from.
    if ev.get("file"):
        return f"{ev['file'].rsplit('/', 1)[-1]}:{ev['line']}"
    return str(ev["line"])


def _is_caret(text: str) -> bool:
    """A caret/tilde line under a source line (`   ^^^^~~~`): it points, it says nothing."""
    body = text.strip()
    return bool(body) and not body.strip("^~ ")


def _pick_evidence(evidence: list[dict[str, Any]], limit: int, reaction: set[int]) -> list[dict[str, Any]]:
    """At most `limit` lines, in log order. When some must go, keep first the exception lines
    (an unindented line right after a traceback's indented frames), then the other unindented
    lines in log order, then SGLang's reaction lines (`reaction`: sigquit, Killed), then the
    innermost frame (the last `File …` line: where it raised, not `<frozen runpy>`), then the
    indented lines nearest the exception; caret lines go first of all."""
    if len(evidence) <= limit:
        return evidence
    indented = {ev["line"] for ev in evidence if ev["text"][:1].isspace()}
    frames = [i for i, ev in enumerate(evidence) if ev["text"].lstrip().startswith("File ")]
    innermost = frames[-1] if frames else -1

    def priority(i: int) -> tuple[int, int]:
        ev = evidence[i]
        if _is_caret(ev["text"]):
            return (5, i)
        if i == innermost:  # the frame that raised says where
            return (3, i)
        if ev["line"] in indented:  # then the lines nearest to it
            return (4, -i)
        if ev["line"] in reaction:
            return (2, i)
        return (0 if ev["line"] - 1 in indented else 1, i)

    ranked = sorted(range(len(evidence)), key=priority)
    return [evidence[i] for i in sorted(ranked[:limit])]


# A log line's own prefix (`[2026-04-14 10:09:22 TP7] `): lines that differ only there (the
# same warning from every rank) share one evidence row.
_LOG_PREFIX = re.compile(r"^\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[^\]]*\] ")
# An evidence line wraps to at most this many rows at a terminal width (a pasted HTML page
# in an exception message ran to 17); the rest is named, and `--wide` prints it whole.
MAX_EVIDENCE_ROWS = 8


def _same_text(text: str) -> str:
    return _LOG_PREFIX.sub("", text, count=1)


def _line_list(lines: list[int]) -> str:
    """`33–40` for a run of consecutive lines, `3, 27, 55, 163` for up to four, else the first
    and how many more (`92 +7`): the column stays narrow."""
    if lines == list(range(lines[0], lines[0] + len(lines))):
        return f"{lines[0]}–{lines[-1]}"
    return ", ".join(map(str, lines)) if len(lines) <= 4 else f"{lines[0]} +{len(lines) - 1}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def add_evidence(doc: Doc, evidence: list[dict[str, Any]], indent: str, limit: int,
                 reaction: set[int] | None = None) -> None:
    """Evidence lines as `  line | text`, in log order, wrapped under the text; lines with the
    same text but for the log prefix (a warning every rank or launch printed) share one row
    that names every line number (the text shown is the first one's)."""
    rows: list[dict[str, Any]] = []
    same: dict[str, dict[str, Any]] = {}
    if not any(ev.get("file") for ev in evidence):  # a merged run keeps its files' order
        evidence = sorted(evidence, key=lambda ev: ev["line"])
    for ev in evidence:
        key = _same_text(ev["text"])
        if ev.get("file") or key not in same:
            row = dict(ev, lines=[ev["line"]])
            rows.append(row)
            if not ev.get("file"):
                same[key] = row
        else:
            same[key]["lines"].append(ev["line"])
    shown = _pick_evidence(rows, limit, reaction or set())
    wheres = [_where(row) if len(row["lines"]) == 1 else _line_list(row["lines"]) for row in shown]
    pad = max([7, *(len(w) for w in wheres)])  # one column for every row
    for row, where in zip(shown, wheres, strict=True):
        where = where.rjust(pad)
        first, rest = f"{indent}{where} | ", f"{indent}{' ' * len(where)} | "
        lines = wrap(row["text"], doc.width, first, rest)
        if len(lines) > MAX_EVIDENCE_ROWS:
            kept = lines[: MAX_EVIDENCE_ROWS - 1]
            shown_chars = len(kept[0]) - len(first) + sum(len(ln) - len(rest) + 1 for ln in kept[1:])
            left = max(1, len(one_line(row["text"]).strip()) - shown_chars)
            lines = [*kept, *wrap(f"[+{_plural(left, 'character')}: --wide prints the line whole]",
                                  doc.width, rest, rest)]
        doc.extend(lines)
    more = len(evidence) - sum(len(row["lines"]) for row in shown)
    if more > 0:
        doc.add(f"+ {more} more evidence line{'s' if more != 1 else ''} (--format json lists them all)",
                f"{indent}{' ' * 7}   ")


class Shown:
    """The long fixes already printed for earlier files of one output: the NCCL paragraph of
    every PCIe log is printed once, later files point back to it."""

    MAX_REPEAT = 2  # a fix this many lines long is printed again; a longer one is pointed to

    def __init__(self) -> None:
        self.path = ""
        self.fixes: dict[tuple[str, str], str] = {}


def add_remedy(doc: Doc, f: dict[str, Any], indent: str, shown: Shown | None = None) -> bool:
    """The fix as bullets; True when detail was left out (the caller points to the rule)."""
    if not f.get("remedy"):
        return False
    key = (f["name"], f["remedy"])
    if shown is not None and key in shown.fixes and shown.fixes[key] != shown.path:
        doc.add(f"as for {shown.fixes[key]} above", f"{indent}fix: ", f"{indent}     ")
        return False  # the fix above carries the pointer to the rule
    start = len(doc.lines)
    bullets, shortened = remedy_bullets(f["remedy"])
    if len(bullets) == 1 and not bullets[0].items:
        doc.add(bullets[0].text, f"{indent}fix: ", f"{indent}     ")
    else:
        doc.add("fix:", indent)
        for b in bullets:
            doc.add(b.text, f"{indent}  - ", f"{indent}    ")
            for item in b.items:
                doc.add(item, f"{indent}      · ", f"{indent}        ")
    if shown is not None and len(doc.lines) - start > Shown.MAX_REPEAT:
        shown.fixes.setdefault(key, shown.path)
    return shortened


def _finding(doc: Doc, f: dict[str, Any], indent: str, limit: int, note: str = "",
             more: bool = False, shown: Shown | None = None) -> None:
    doc.add(_title(f) + note, indent, indent + "    ", style=_SEVERITY_STYLE.get(f["severity"]))
    ranks = f.get("ranks") or []
    if ranks:
        doc.add(f"{'ranks' if len(ranks) > 1 else 'rank'}: {rank_range(ranks)}", indent + "  ", indent + "    ")
    reaction = set((f.get("data") or {}).get("consequence_lines") or [])
    add_evidence(doc, f.get("evidence") or [], indent + "  ", limit, reaction)
    shortened = add_remedy(doc, f, indent + "  ", shown)
    consequences = f.get("consequences") or []
    if consequences:
        doc.add("consequences (the teardown of this failure):", indent + "  ")
        for c in consequences:
            where = f" on {rank_range(c['ranks'])}" if c.get("ranks") else ""
            doc.add(f"{c['name']} ({c['code']}){where}, line {_first_line(c)}: {c['message']}",
                    indent + "    - ", indent + "      ")
    if more or shortened:
        doc.add(f"{'why, and the full fix' if shortened else 'more'}: logdiag rule {f['name']}", indent + "  ")


def finding_lines(f: dict[str, Any], indent: str = "  ", width: int | None = WIDTH) -> list[str]:
    """One finding as `analyze` prints it (title, ranks, evidence, fix, consequences), for the
    other commands that show findings the same way (`follow`)."""
    doc = Doc(width)
    _finding(doc, f, indent, EVIDENCE, more=True)
    return doc.lines


def _first_line(f: dict[str, Any]) -> str:
    ev = f.get("evidence") or []
    return str(ev[0]["line"]) if ev else "?"


def _key(f: dict[str, Any]) -> tuple[str, str, str]:
    return (f["code"], f["message"], f.get("remedy") or "")


def _attempts_of(f: dict[str, Any], launches: list[dict[str, Any]]) -> list[int]:
    """The launch attempts whose lines hold the finding's evidence (none in a merged run: its
    evidence lines are numbered per file)."""
    found: list[int] = []
    for ev in f.get("evidence") or []:
        if ev.get("file"):
            return []
        n = next((a["index"] for a in launches if a["first_line"] <= ev["line"] <= a["last_line"]), None)
        if n is not None and n not in found:
            found.append(n)
    return sorted(found)


def _grouped(findings: list[dict[str, Any]], launches: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[int]]]:
    """Findings with the same rule, message and fix (one per launch attempt that shows it)
    as one entry with the attempts it was seen in."""
    groups: dict[tuple[str, str, str], tuple[dict[str, Any], list[int]]] = {}
    for f in findings:
        _, attempts = groups.setdefault(_key(f), (f, []))
        attempts.extend(n for n in _attempts_of(f, launches) if n not in attempts)
    return [(f, sorted(attempts)) for f, attempts in groups.values()]


def _attempts_note(attempts: list[int], launches: list[dict[str, Any]]) -> str:
    if len(launches) < 2 or not attempts:
        return ""
    if len(attempts) == 1:
        return f" [attempt {attempts[0]}]"
    return f" [attempts {', '.join(map(str, attempts[:-1]))} and {attempts[-1]}]"


# ------------------------------------------------------------------------------------ sections


def _outcome(doc: Doc, entry: dict[str, Any]) -> None:
    outcome = entry.get("outcome")
    if not outcome:
        doc.add("outcome: unknown — this log does not show how the run ended")
        return
    means = _OUTCOME_MEANS.get(outcome)
    doc.add(f"outcome: {outcome}" + (f" — {means}" if means else ""), "", "  ",
            style=_OUTCOME_STYLE.get(outcome, "red"))


def _attempts(doc: Doc, launches: list[dict[str, Any]]) -> None:
    if len(launches) < 2:
        return
    doc.add(f"launch attempts: {len(launches)} (the outcome and root cause above are the last one's)")
    for a in launches:
        head = f"attempt {a['index']} (lines {a['first_line']}–{a['last_line']}): {a.get('outcome') or 'outcome unknown'}"
        root = a.get("root_cause")
        if root:
            head += f" — root cause {root['name']}"
        elif a.get("findings"):
            head += f" — {', '.join(a['findings'])}"
        doc.add(head, "  ", "      ")


def _startup(doc: Doc, st: dict[str, Any], failed: bool) -> None:
    if not st["ranks"]:
        return
    ready = st["ready"]
    head = "startup: ready" if ready else "startup: NOT ready" if ready is False else "startup:"
    if st.get("ready_at"):
        where = f"{one_line(st['ready_file'])}:" if st.get("ready_file") else "line "  # glue-safe
        head += f" at {st['ready_at']} ({where}{st['ready_line']})"
    if st.get("time_to_ready_s") is not None:
        head += f", {fmt(st['time_to_ready_s'])}{GLUE}s after the first timestamp"
    doc.add(head, glue=True)
    ranks = st["ranks"]
    workers = {r: info["phases"] for r, info in ranks.items() if r != "main"}
    lines = _phase_table(workers, doc.width)
    rest = {r: info["phases"] for r, info in ranks.items() if r == "main" or lines is None}
    if lines is not None:
        doc.extend(lines)
    # Ranks whose phases read the same share a line (`TP1–TP7: dist-init 1.84s, …`).
    same: dict[str, list[str]] = {}
    for rank, phases in rest.items():
        same.setdefault(", ".join(f"{p['phase']} {_phase_cell(p)}" for p in phases), []).append(rank)
    for text, who in same.items():
        doc.add(text, f"  {rank_range(who)}: ", "    ")
    if failed:
        stopped: dict[str, list[str]] = {}
        for rank, info in ranks.items():
            for p in info["phases"]:
                if not p["complete"]:
                    stopped.setdefault(p["phase"], []).append(rank)
        for phase, who in stopped.items():
            doc.add(f"unfinished when the log ends: {phase} on {rank_range(who)}", "  ", "    ")
    if st.get("slowest_rank"):
        s = st["slowest_rank"]
        longest, which = s["slowest_phase"], "logged"
        if s.get("slowest_phase_at_least_s") is not None:
            longest += f", unfinished after at least {fmt(s['slowest_phase_at_least_s'])}{GLUE}s"
            which = "finished"
        doc.add(f"slowest rank: {s['rank']} ({fmt(s['phases_s'])}{GLUE}s in {which} phases; longest: {longest})",
                "  ", "    ", glue=True)


def _phase_table(workers: dict[str, list[dict[str, Any]]], width: int | None) -> list[str] | None:
    """The ranks' start-up phases as the widest table that fits: a row per rank, else a row per
    phase with a column per rank, else a row per phase with the range over the ranks and the
    slowest rank. None when the ranks logged different phases or nothing fits."""
    names = {tuple(p["phase"] for p in phases) for phases in workers.values()}
    if len(names) != 1:
        return None
    (order,) = names
    by_rank = list(workers.items())
    per_rank = [["rank", *order]] + [[r, *(_phase_cell(p) for p in phases)] for r, phases in by_rank]
    per_phase = [["phase", *(r for r, _ in by_rank)]] + [
        [name, *(_phase_cell(phases[i]) for _, phases in by_rank)] for i, name in enumerate(order)
    ]
    found = table(per_rank, width) or (table(per_phase, width) if len(by_rank) > 1 else None)
    if found is not None:
        return found
    unfinished = any(not p["complete"] for _, phases in by_rank for p in phases)
    summary = [["phase", "shortest", "longest", "slowest rank"] + (["unfinished on"] if unfinished else [])]
    for i, name in enumerate(order):
        done = sorted((phases[i]["duration_s"], rank_key(r), r) for r, phases in by_rank
                      if phases[i]["duration_s"] is not None)
        open_ = [r for r, phases in by_rank if not phases[i]["complete"]]
        row = [name, f"{fmt(done[0][0])}s" if done else "-", f"{fmt(done[-1][0])}s" if done else "-",
               done[-1][2] if done and done[-1][0] > done[0][0] else "-"]
        summary.append(row + ([rank_range(open_) if open_ else "-"] if unfinished else []))
    return table(summary, width, align="lrrll")


def _phase_cell(p: dict[str, Any]) -> str:
    # `2.9s`, not `2.9 s`: a wrapped line must never part a number from its unit.
    took = "?" if p["duration_s"] is None else f"{fmt(p['duration_s'])}s"
    if p["complete"]:
        return took
    if p["duration_s"] is None and p.get("at_least_s") is not None:
        return f"≥{fmt(p['at_least_s'])}s unfinished"  # a progress bar ran that long in it
    return "unfinished" if p["duration_s"] is None else f"{took} unfinished"


def _memory(doc: Doc, launches: list[dict[str, Any]], max_rows: int = 16) -> None:
    """The last launch's memory budget: one row per rank (GB; ranks with the same numbers share a
    row), the tightest rank marked with `*` when the ranks differ."""
    mem = next((a["memory"] for a in reversed(launches) if a.get("memory")), None)
    if not mem:
        return
    how = {"command": "set on the command line", "server_args": "SGLang's default, from server_args"}
    notes = []
    if mem.get("mem_fraction_static") is not None:
        source = how.get(mem.get("mem_fraction_static_source") or "", "source unknown")
        notes.append(f"mem_fraction_static {mem['mem_fraction_static']:g} ({source})")
    if mem.get("kv_bytes_per_token"):
        notes.append(f"KV {mem['kv_bytes_per_token']:,} bytes/token")
    if mem.get("gpu_total_gb"):
        notes.append(f"GPU total {mem['gpu_total_gb']:.2f} GiB")
    doc.add("memory (GB per rank)" + (": " + "; ".join(notes) if notes else ":"), "", "  ")

    def g(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, (int, float)) else "-"

    def total(*values: Any) -> float | None:
        nums = [v for v in values if isinstance(v, (int, float))]
        return round(sum(nums), 2) if nums else None

    ranks = mem.get("ranks") or []
    frees = {r.get("free_after_gb") for r in ranks}
    tight = mem.get("tightest_rank") if len(frees) > 1 else None
    rows: list[tuple[list[str], list[str]]] = []  # (rank names, cells)
    for r in ranks:
        kv = f"{g(r.get('kv_gb'))} ({r['kv_tokens']:,})" if r.get("kv_tokens") else g(r.get("kv_gb"))
        other = total(r.get("mamba_gb"), r.get("swa_gb"))
        draft = total(r.get("draft_weights_gb"), r.get("draft_kv_gb"), r.get("draft_graph_gb"))
        cells = [g(r.get("free_at_start_gb")), g(r.get("weights_gb")), kv, g(other),
                 g(r.get("target_graph_gb")), g(draft), g(r.get("free_after_gb"))]
        name = r.get("rank") or "-"
        if rows and rows[-1][1] == cells and name != tight and rows[-1][0][-1] != tight:
            rows[-1][0].append(name)
        else:
            rows.append(([name], cells))
    header = ["rank", "start", "weights", "KV pool (tokens)", "other", "graphs", "draft", "free"]
    body = []
    for names, cells in rows[:max_rows]:
        label = names[0] if len(names) == 1 else f"{names[0]}–{names[-1]}"
        body.append([("*" if tight in names else "") + label, *cells])
    lines = table([header, *body], doc.width)
    if lines is not None:
        doc.extend(lines)
    else:
        for row in body:
            doc.add(", ".join(f"{h} {c}" for h, c in zip(header[1:], row[1:], strict=True)), f"  {row[0]}: ", "    ")
    if len(rows) > max_rows:
        doc.add(f"+ {len(rows) - max_rows} more rows (--format json lists every rank)", "  ")
    legend = "other = mamba/SWA pools; draft = draft weights + KV + graphs; free = free after start-up"
    doc.add(f"* tightest rank: {tight}; {legend}" if tight else legend, "  ", "    ")


def _serving(doc: Doc, sv: dict[str, Any]) -> None:
    if not (sv.get("decode_lines") or sv.get("prefill_lines") or sv.get("http_requests")):
        return
    doc.add("serving:")
    http = _plural(sv["http_requests"], "HTTP request")
    status = sv.get("http_status") or {}
    if status:
        http += " (status " + ", ".join(f"{k}: {fmt(v)}" for k, v in status.items()) + ")"
    doc.add(f"stats lines: {fmt(sv['decode_lines'])} decode, {fmt(sv['prefill_lines'])} prefill; {http}", "  ", "    ")
    if "gen_throughput" in sv:
        g = sv["gen_throughput"]
        doc.add(f"decode throughput (token/s): median {_stat(g['median'])}, max {_stat(g['max'])}", "  ", "    ")
    load = []
    if "running_req" in sv:
        load.append(f"running requests: median {_stat(sv['running_req']['median'])}, max {_stat(sv['running_req']['max'])}")
    if "queue_req" in sv:
        load.append(f"queued: max {_stat(sv['queue_req']['max'])}")
    if "token_usage" in sv:
        load.append(f"token usage: max {_stat(sv['token_usage']['max'])}")
    if load:
        doc.add("; ".join(load), "  ", "    ")
    if "accept_len" in sv:
        a = sv["accept_len"]
        rate = sv.get("accept_rate", {}).get("mean")
        doc.add(f"speculative accept length: mean {_stat(a['mean'])} (min {_stat(a['min'])}, max {_stat(a['max'])})"
                + (f"; accept rate mean {fmt(rate)}" if rate is not None else ""), "  ", "    ")
    if sv.get("cuda_graph_false_lines"):
        doc.add(f"decode lines without CUDA graph: {fmt(sv['cuda_graph_false_lines'])}", "  ")
    if sv.get("retractions"):
        doc.add(f"retractions: {fmt(sv['retractions'])}", "  ")


# The benchmark figures people compare, in the order they read them, one line per group:
# (field, label, unit).
_BENCH_GROUPS = (
    (("successful_requests", "successful requests", ""), ("duration_s", "duration", "s"),
     ("max_concurrency", "max concurrency", "")),
    (("request_throughput", "request throughput", "req/s"), ("output_throughput", "output throughput", "token/s"),
     ("total_throughput", "total throughput", "token/s")),
    (("mean_ttft_ms", "mean TTFT", "ms"), ("mean_itl_ms", "mean ITL", "ms")),
    (("accept_length", "accept length", ""),),
    (("prefill_throughput", "prefill throughput", "token/s"),
     ("decode_median_throughput", "decode median throughput", "token/s")),
)


def _stat(v: Any) -> str:
    """A statistic over the stats lines: `no value` when no line had a readable number (a
    damaged log), never `not set`, which is for settings."""
    return "no value" if v is None else fmt(v)


def _benchmarks(doc: Doc, benchmarks: list[dict[str, Any]]) -> None:
    for b in benchmarks:
        f = b["fields"]
        kind = b["kind"].replace("_", " ")
        doc.add(f"benchmark ({kind}, line {b['line']}):")
        shown = False
        for group in _BENCH_GROUPS:
            parts = []
            for key, label, unit in group:
                if key not in f:
                    continue
                if f[key] is None:
                    parts.append(f"{label} not set")
                else:
                    parts.append(f"{label} {fmt(f[key])}" + (f"{GLUE}{unit}" if unit else ""))
            if parts:
                doc.add(" · ".join(parts), "  ", "    ", glue=True)
                shown = True
        if not shown:
            doc.add("no figures this logdiag reads", "  ")


def _setting(value: Any) -> str:
    """A setting as the log stated it (0.871 stays 0.871; a measurement would be rounded)."""
    if isinstance(value, bool) or value is None:
        return fmt(value)
    if isinstance(value, (int, float)):
        return str(value)
    return fmt(value)


def _config(doc: Doc, cfg: dict[str, Any]) -> None:
    """The run's settings: short ones as a table of key/value pairs (as many per row as fit),
    long ones (speculative settings, environment) on lines of their own."""
    if not cfg:
        return
    doc.add("run:")
    short: list[tuple[str, str]] = []
    long: list[tuple[str, str]] = []
    for key, value in cfg.items():
        if key == "env" and isinstance(value, dict):
            text = " ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, dict):
            # speculative: {speculative_algorithm: EAGLE, …} → algorithm EAGLE, …
            text = ", ".join(f"{k.removeprefix(key + '_')} {_setting(v)}" for k, v in value.items())
        else:
            text = _setting(value)
        (long if isinstance(value, dict) or len(text) > 40 else short).append((key, text))
    lines = None
    for per_row in (3, 2):
        rows = []
        for i in range(0, len(short), per_row):
            row: list[str] = []
            for key, text in short[i : i + per_row]:
                row += ([""] if row else []) + [f"{key}:", text]  # an empty column parts the pairs
            rows.append(row)
        lines = table(rows, doc.width, align="l" * (3 * per_row)) if len(short) > per_row else None
        if lines is not None:
            break
    if lines is not None:
        doc.extend(lines)
    else:
        long = short + long
    for key, text in long:
        doc.add(text, f"  {key}: ", "      ")


def _explained_lines(entry: dict[str, Any]) -> set[int]:
    lines: set[int] = set()
    stack = list(entry.get("findings") or []) + ([entry["root_cause"]] if entry.get("root_cause") else [])
    while stack:
        f = stack.pop()
        lines.update(ev["line"] for ev in f.get("evidence") or [] if not ev.get("file"))
        lines.update((f.get("data") or {}).get("consequence_lines") or [])
        stack.extend(f.get("consequences") or [])
    return lines


def _error_text(e: dict[str, Any]) -> str:
    if e["kind"] == "traceback":
        exc = e.get("exception") or "traceback cut before the exception"
        return f"{exc}: {e['message']}" if e.get("message") else exc
    detail = e.get("detail") or {}
    what = e["kind"].replace("_", " ")
    if detail:
        what += " (" + ", ".join(f"{k.replace('_', ' ')} {fmt(v)}" for k, v in detail.items()) + ")"
    return what


def _errors(doc: Doc, entry: dict[str, Any]) -> None:
    errors = entry["errors"]
    if not errors:
        return
    explained = _explained_lines(entry)
    rest = [e for e in errors if not any(n in explained for n in range(e["line"], (e["end_line"] or e["line"]) + 1))]
    covered = len(errors) - len(rest)
    if not rest:
        n = len(errors)
        doc.add(f"errors seen: {n} ({'the evidence of a finding' if n == 1 else 'all evidence of the findings'} above)")
        return
    doc.add("errors seen" + (f" (besides {covered} that are evidence of findings above)" if covered else "") + ":")
    for e in rest[:MAX_ERRORS]:
        where = f"line {e['line']}" + (f"–{e['end_line']}" if e["end_line"] and e["end_line"] != e["line"] else "")
        if e.get("rank"):
            where += f" {e['rank']}"
        doc.add(_error_text(e), f"  {where}: ", "      ")
    if len(rest) > MAX_ERRORS:
        doc.add(f"+ {len(rest) - MAX_ERRORS} more (--format json lists them all)", "  ")


def _coverage(doc: Doc, entry: dict[str, Any]) -> None:
    cov = entry["coverage"]
    window = cov.get("window")
    if window:
        # recognized + unparsed + outside_window = total: a window never hides lines unseen.
        inside = cov["total"] - cov["outside_window"]
        bounds = ", ".join(f"--{side} {window[side]} = {window[at]}"
                           for side, at in (("since", "from"), ("until", "to")) if window.get(side))
        doc.add(f"coverage: {fmt(cov['recognized'])}/{fmt(inside)} lines in the window recognized "
                f"({cov['recognized_share']:.1%}); {fmt(cov['outside_window'])} of {fmt(cov['total'])} "
                f"lines outside it ({bounds})", "", "  ")
    else:
        doc.add(f"coverage: {fmt(cov['recognized'])}/{fmt(cov['total'])} lines recognized ({cov['recognized_share']:.1%})")
    for t in cov["top_unparsed"][:5]:
        lead = f"  {fmt(t['count']):>7}× (first line {t['first_line']}) "
        doc.add(t["template"], lead, " " * len(lead))
    rd = entry["read"]
    damage = [f"{k.replace('_', ' ')}: {fmt(rd[k])}" for k in ("bad_utf8", "nul_bytes", "long_lines") if rd.get(k)]
    if rd.get("damaged_numbers"):
        # Kept lines whose number did not parse (inf, nan, 400 digits): the value is "not a
        # number", the line still counts as recognized.
        damage.append(f"unreadable numbers (kept as no value): {fmt(rd['damaged_numbers'])}")
    if rd.get("damaged"):
        damage.append(str(rd["damaged"]))
    if damage:
        doc.add("input damage: " + "; ".join(damage), "", "  ")


# ------------------------------------------------------------------------------------ the page


def render_one(entry: dict[str, Any], width: int | None = WIDTH, paint: Paint | None = None,
               shown: Shown | None = None) -> str:
    doc = Doc(width, paint)
    if shown is not None:
        shown.path = entry["path"]
    doc.add(f"== {entry['path']}  ({fmt(entry['lines']['total'])} lines)", "", "   ", style="bold")
    _outcome(doc, entry)
    launches = entry.get("launches") or []
    root = entry.get("root_cause")
    if root:
        doc.add("root cause:", style="bold")
        _finding(doc, root, "  ", ROOT_EVIDENCE, _attempts_note(_attempts_of(root, launches), launches), more=True,
                 shown=shown)
    _attempts(doc, launches)
    root_key = _key(root) if root else None
    others = [(f, a) for f, a in _grouped(entry.get("findings") or [], launches) if _key(f) != root_key]
    if others:
        doc.add("findings:" if not root else "other findings:", style="bold")
        for f, attempts in others:
            _finding(doc, f, "  ", EVIDENCE, _attempts_note(attempts, launches), shown=shown)
    failed = (entry.get("outcome") or "").startswith("crashed") or entry.get("outcome") in ("hung", "incomplete")
    _startup(doc, entry["startup"], failed)
    _memory(doc, launches)
    _serving(doc, entry["serving"])
    _benchmarks(doc, entry["benchmarks"])
    _config(doc, entry.get("config") or {})
    _errors(doc, entry)
    _coverage(doc, entry)
    return doc.text()


def render(analyses: Sequence[Any], *, redact: bool = True, width: int | None = WIDTH,
           color: bool = False) -> str:
    """Secrets masked unless redact=False; no output line can be a CI workflow command;
    `width` None prints every line whole (`--wide`)."""
    from logparse.render.neutral import neutralize
    from logparse.render.sanitize import clean_summary

    paint = Paint(color)
    shown = Shown()
    return neutralize("\n".join(render_one(clean_summary(a, redact), width, paint, shown)
                                for a in analyses))
