"""The report as Markdown: the same content as the HTML report, plots as SVG files beside it.

`report.md` links its plots as `report-plots/<name>.svg` (relative), so the folder travels with
the file. Log text is put in code spans and fenced blocks; see `fmt.md`/`fmt.code`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from logparse.report.fmt import FILTERS, fence

if TYPE_CHECKING:
    from jinja2 import Environment

MAX_EVIDENCE = 20
_BLANKS = re.compile(r"\n{3,}")
_TRAILING = re.compile(r"[ \t]+\n")


def evidence_block(lines: list[dict[str, Any]], limit: int = MAX_EVIDENCE) -> str:
    width = max((len(str(ev["line"])) for ev in lines), default=1)
    body = [f"{ev['line']:>{width}} | {ev['text']}" for ev in lines[:limit]]
    if len(lines) > limit:
        rest = ", ".join(str(ev["line"]) for ev in lines[limit:])
        body.append(f"… {len(lines) - limit} more evidence lines (lines {rest})")
    return fence(body)


@lru_cache(maxsize=1)
def environment() -> Environment:
    from jinja2 import Environment, FileSystemLoader

    from logparse.grammar.resources import reports_dir

    env = Environment(
        loader=FileSystemLoader(str(reports_dir())),
        autoescape=False,  # Markdown: escaping is done by the |md, |code and |cell filters
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.globals["fence"] = fence
    env.globals["evidence"] = evidence_block
    return env


def plots_dir_name(md_name: str) -> str:
    """'report.md' → 'report-plots'."""
    stem = md_name.rsplit("/", 1)[-1]
    stem = stem[: -len(".md")] if stem.endswith(".md") else stem.rsplit(".", 1)[0]
    return f"{stem}-plots"


def render_markdown(data: dict[str, Any], plot_dir: str | None) -> str:
    """The Markdown report; plots are linked as `<plot_dir>/<name>.svg` (none when plot_dir is None)."""
    from logparse.report.html import context

    ctx = context(data)
    ctx["plot_files"] = (
        {}
        if plot_dir is None
        else {p["name"]: f"{plot_dir}/{p['name']}.svg" for p in data.get("plots", [])}
    )
    text = environment().get_template("report.md.j2").render(ctx)
    text = _TRAILING.sub("\n", text)
    text = _BLANKS.sub("\n\n", text)
    return text.strip() + "\n"
