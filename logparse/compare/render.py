"""A comparison as text (for a person), JSON (for machines) or Markdown (for a PR comment)."""

from __future__ import annotations

import json
from typing import Any

from logparse.compare.comparison import Comparison, Pair
from logparse.compare.metrics import Metric
from logparse.compare.verdict import Difference

FORMATS = ("text", "json", "md")
MAX_LIST = 6  # list values (CUDA-graph batch sizes) longer than this are shortened


def value_text(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        items = [value_text(x) for x in v]
        if len(items) > MAX_LIST:
            return f"[{', '.join(items[:3])}, …, {items[-1]}] ({len(items)} values)"
        return "[" + ", ".join(items) + "]"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def difference_text(d: Difference) -> str:
    text = f"{d.key}: {value_text(d.baseline)} → {value_text(d.candidate)}"
    if d.derived:
        text += f" (SGLang derives it from {d.factor})"
    elif d.factor:
        text += f" ({d.factor})"
    elif d.allowed:
        text += " (allowed)"
    return text


def headline(cmp: Comparison) -> str:
    """One line: the verdict."""
    blocking = sum(len(p.verdict.blocking) for p in cmp.pairs)
    if not cmp.comparable:
        return f"NOT COMPARABLE: {blocking} difference(s) outside the declared factors"
    unknown = sum(len(p.verdict.unknown) for p in cmp.pairs)
    return "comparable" + (f" as far as the logs show ({unknown} setting(s) unknown)" if unknown else "")


def _speedup_text(spec: dict[str, Any] | None) -> str | None:
    if not spec:
        return None
    if spec.get("speedup") is None:
        return f"speculative decoding: {spec.get('note', 'no speedup measured')}"
    parts = [f"speculative decoding: {spec['speedup']:.2f}× speedup ({spec['method']})"]
    if spec.get("accept_len") is not None:
        parts.append(f"accept length {spec['accept_len']:g}")
    if spec.get("break_even_accept_len") is not None:
        parts.append(f"break-even accept length {spec['break_even_accept_len']:g}")
    return ", ".join(parts)


def _rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    """One table across all runs: a row per metric and concurrency, a column per run."""
    header = ["metric", "concurrency", "baseline"]
    header += [f"run {i}" if len(cmp.pairs) > 1 else "candidate" for i, _ in enumerate(cmp.pairs, 1)]
    header += ["ratio"] if len(cmp.pairs) == 1 else []
    header += ["assessment"] if len(cmp.pairs) == 1 else []
    keys: list[tuple[str, Any]] = []
    table: dict[tuple[str, Any], dict[int, Metric]] = {}
    base: dict[tuple[str, Any], float] = {}
    for i, p in enumerate(cmp.pairs):
        for metric in p.metrics:
            k = (metric.name, metric.concurrency)
            if k not in table:
                keys.append(k)
                table[k] = {}
            table[k][i] = metric
            base[k] = metric.baseline
    rows = []
    for k in keys:
        row = [k[0], "not set" if k[1] is None else str(k[1]), f"{base[k]:g}"]
        for i in range(len(cmp.pairs)):
            cell = table[k].get(i)
            if cell is None:
                row.append("—")
            elif len(cmp.pairs) == 1 or cell.ratio is None:
                row.append(f"{cell.candidate:g}")
            else:
                row.append(f"{cell.candidate:g} ({cell.ratio:g}×)")
        if len(cmp.pairs) == 1:
            only = table[k][0]
            row += [f"{only.ratio:g}×" if only.ratio is not None else "—", only.assessment]
        rows.append(row)
    return header, rows


def _pair_lines(p: Pair, many: bool) -> list[str]:
    lines = []
    if many:
        lines.append(f"run: {p.candidate.source}: {'comparable' if p.verdict.comparable else 'NOT COMPARABLE'}")
    blocking = p.verdict.blocking
    if blocking:
        lines.append("differences outside the declared factors:")
        lines += [f"  {difference_text(d)}" for d in blocking]
    expected = [d for d in p.verdict.differences if d.expected]
    if expected:
        lines.append("expected differences:")
        lines += [f"  {difference_text(d)}" for d in expected]
    unknown = [u for u in p.verdict.unknown if u.kind != "release"]
    if unknown:
        lines.append("unknown (never taken as equal):")
        lines += [f"  {u.key}: {u.reason}" if u.stated_in == "neither" else
                  f"  {u.key} = {value_text(u.value)}: {u.reason}" for u in unknown]
    release = [u for u in p.verdict.unknown if u.kind == "release"]
    if release:
        names = ", ".join(u.key for u in release[:MAX_LIST])
        more = f" and {len(release) - MAX_LIST} more" if len(release) > MAX_LIST else ""
        lines.append(f"unknown: {len(release)} server argument(s) printed by one release only: {names}{more}")
    return lines


def render_text(cmp: Comparison) -> str:
    many = len(cmp.pairs) > 1
    out = [f"baseline:  {cmp.baseline.source}"]
    out += [f"candidate: {p.candidate.source}" for p in cmp.pairs]
    if cmp.factors:
        out.append("factors:   " + "; ".join(f"{f.name} ({f.note})" for f in cmp.factors))
    out.append(f"verdict:   {headline(cmp)}")
    for p in cmp.pairs:
        out += _pair_lines(p, many)
    notes = sorted({n for p in cmp.pairs for n in p.verdict.notes})
    out += [f"note: {n}" for n in notes]
    if not cmp.comparable:
        out.append("Re-measure the baseline under the candidate's settings, declare what the comparison is "
                   "about with --vary FACTOR, or accept a key with --allow KEY.")
        return "\n".join(out) + "\n"
    header, rows = _rows(cmp)
    if rows:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        out.append("")
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    else:
        out.append("no benchmark result or decode bucket measured in both runs: nothing to put side by side")
    for p in cmp.pairs:
        text = _speedup_text(p.speculative)
        if text:
            out.append((f"{p.candidate.source}: " if many else "") + text)
    return "\n".join(out) + "\n"


def render_json(cmp: Comparison) -> str:
    from logparse._version import __version__

    doc = {"logdiag_version": __version__, **cmp.as_dict()}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_md(cmp: Comparison) -> str:
    icon = "✅" if cmp.comparable else "❌"
    out = [f"### {icon} logdiag compare: {headline(cmp)}", "",
           f"Baseline `{cmp.baseline.source}` vs " + ", ".join(f"`{p.candidate.source}`" for p in cmp.pairs)]
    if cmp.factors:
        out.append("Declared factors: " + ", ".join(f"`{f.name}`" for f in cmp.factors))
    for p in cmp.pairs:
        diffs = p.verdict.differences
        if diffs:
            out += ["", f"| setting | baseline | {_md_cell(p.candidate.source)} | |", "|---|---|---|---|"]
            for d in diffs:
                why = "expected" if d.expected else "**not comparable**"
                if d.factor:
                    why += f" ({d.factor}{', derived' if d.derived else ''})"
                out.append(f"| `{_md_cell(d.key)}` | {_md_cell(value_text(d.baseline))} | "
                           f"{_md_cell(value_text(d.candidate))} | {why} |")
        if p.verdict.unknown:
            out += ["", "<details><summary>Unknown settings (stated by one log only)</summary>", ""]
            out += [f"- `{_md_cell(u.key)}`: {_md_cell(u.reason)}" for u in p.verdict.unknown]
            out += ["", "</details>"]
    if cmp.comparable:
        header, rows = _rows(cmp)
        if rows:
            out += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
        for p in cmp.pairs:
            text = _speedup_text(p.speculative)
            if text:
                out += ["", f"**{_md_cell(text)}**"]
    notes = sorted({n for p in cmp.pairs for n in p.verdict.notes})
    if notes:
        out += [""] + [f"> {_md_cell(n)}" for n in notes]
    return "\n".join(out) + "\n"


def render(cmp: Comparison, fmt: str) -> str:
    return {"text": render_text, "json": render_json, "md": render_md}[fmt](cmp)
