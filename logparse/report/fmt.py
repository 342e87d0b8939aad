"""Value formatting shared by the HTML and Markdown reports (Jinja2 filters), and the Markdown
escaping rules.

Numbers are shown as people read them (thousands separators, trailing zeros trimmed), durations
in seconds with minutes for long ones. Log-derived text in Markdown goes into code spans or
fenced blocks (rendered literally by every Markdown renderer); other text is backslash-escaped
so that a log line cannot become a tag, a link or a table cell boundary.
"""

from __future__ import annotations

import math
import re
from typing import Any

DASH = "–"


def num(value: Any, digits: int | None = None) -> str:
    """1234567 → '1,234,567'; 3776.730 → '3,776.73'; 0.7125 → '0.713'; None → '–'."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return DASH
        nd = (
            digits
            if digits is not None
            else (3 if abs(value) < 10 else 2 if abs(value) < 100_000 else 0)
        )
        text = f"{value:,.{nd}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    return str(value)


def dur(value: Any) -> str:
    """Seconds: 75.0 → '75 s'; 289.12 → '4 min 49 s'; 5000 → '1 h 23 min'."""
    if value is None:
        return DASH
    v = float(value)
    if abs(v) < 120:
        return f"{num(round(v, 2))} s"
    minutes, seconds = divmod(round(v), 60)
    if minutes >= 60:
        hours, minutes = divmod(minutes, 60)
        return f"{hours} h {minutes} min"
    return f"{minutes} min {seconds} s"


def pct(value: Any) -> str:
    if value is None:
        return DASH
    return f"{num(round(float(value) * 100, 1))} %"


def val(value: Any) -> str:
    """A setting's value as text: dicts as k=v lists, lists comma-separated."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(f"{k}={val(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(val(v) for v in value)
    return str(value)


def auto(value: Any) -> str:
    """Numbers as numbers (`num`), anything else as a setting value (`val`); None → '–'."""
    if value is None:
        return DASH
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return num(value)
    return val(value)


def stat_text(s: dict[str, Any] | None, unit: str = "") -> str:
    """'median 557.7 · p90 1,415.83 · max 1,825.42'."""
    if not s:
        return DASH
    u = f" {unit}" if unit else ""
    return f"median {num(s.get('median'))}{u} · p90 {num(s.get('p90'))} · max {num(s.get('max'))}"


# --------------------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~])")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def md(text: Any) -> str:
    """Prose for Markdown: `code spans` kept (they come from remedies), everything else escaped."""
    if text is None:
        return DASH
    parts = _CODE_SPAN.split(str(text).replace("\r", " ").replace("\n", " "))
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(code(part[1:-1]))
        else:
            out.append(_MD_SPECIAL.sub(r"\\\1", part))
    return "".join(out)


def code(text: Any) -> str:
    """Any text as one Markdown code span (literal in every renderer); `|` escaped for tables."""
    s = val(text) if not isinstance(text, str) else text
    s = s.replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    if not s:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = (
        " "
        if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" "))
        else ""
    )
    return f"{fence}{pad}{s}{pad}{fence}"


def cell(text: Any) -> str:
    """A plain table cell for Markdown: escaped, on one line."""
    if text is None:
        return DASH
    return _MD_SPECIAL.sub(r"\\\1", val(text) if not isinstance(text, str) else text).replace(
        "\n", " "
    )


def fence(lines: list[str]) -> str:
    """A fenced code block that no line of the content can close."""
    body = "\n".join(line.replace("\r", " ") for line in lines)
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    f = "`" * max(3, longest + 1)
    return f"{f}text\n{body}\n{f}"


FILTERS = {
    "auto": auto,
    "num": num,
    "dur": dur,
    "pct": pct,
    "val": val,
    "stat": stat_text,
    "md": md,
    "code": code,
    "cell": cell,
}
