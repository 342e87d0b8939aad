"""The report as one self-contained HTML file: inline CSS, inline SVG plots, no script.

Long content folds without script: tables longer than `LONG_ROWS` rows, the configuration's
tables and evidence past the first `EVIDENCE_SHOWN` lines sit in `<details>` elements; every
table sits in a box that scrolls sideways when it is wider than the page.

The template (`reports/report.html.j2`) is rendered with autoescape on, so every value from
the log is escaped; the only unescaped inserts are the stylesheet (`reports/report.css`, ours)
and the SVG plots (made by matplotlib from numbers, with their ids prefixed, see `plots.py`).
A Content-Security-Policy meta tag forbids scripts and any fetch, as a second line of defence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from logparse.report.fmt import FILTERS

if TYPE_CHECKING:
    from jinja2 import Environment

OK_OUTCOMES = frozenset({"ready", "serving", "stopped"})
# A table with more rows than this is folded behind a <details> summary (a 128-row server-args
# table made the page 12,000 px tall); configuration tables are folded whatever their length,
# benchmark results never (they are what a reader comes for).
LONG_ROWS = 25
# Evidence lines shown before the rest of a finding's evidence is folded.
EVIDENCE_SHOWN = 5
_TICKS = re.compile(r"`([^`\n]+)`")


# A large log's report shows the same few messages and remedies thousands of times (one per
# finding: 20,000 findings at 1M lines of the corpus profile), and laying out a remedy is a
# character-by-character walk (`render/bullets.py`, ~0.3 ms): the filters' results are kept per
# distinct text. Only plain `str` texts are cached: a Markup text equal to a str must not share
# the str's (escaped) result.
_FILTER_CACHE = 4096


def _ticks(text: Any) -> Any:
    """Escape, then show `backticked` spans (remedies quote flags that way) as <code>."""
    if type(text) is str:
        return _ticks_str(text)
    return _ticks_uncached(text)


@lru_cache(maxsize=_FILTER_CACHE)
def _ticks_str(text: str) -> Any:
    return _ticks_uncached(text)


def _ticks_uncached(text: Any) -> Any:
    from markupsafe import Markup, escape

    escaped = str(escape("" if text is None else text))
    return Markup(_TICKS.sub(lambda m: f"<code>{m.group(1)}</code>", escaped))


def _fix(text: Any) -> Any:
    """A remedy as the terminal lays it out (`render/bullets.py`), asides kept: one action stays
    a sentence, alternatives become a list (a 620-character fix was one bold paragraph)."""
    return _fix_str("" if text is None else str(text))


@lru_cache(maxsize=_FILTER_CACHE)
def _fix_str(text: str) -> Any:
    from markupsafe import Markup

    from logparse.render.bullets import remedy_bullets

    bullets, _ = remedy_bullets(text, shorten=False)
    if len(bullets) == 1 and not bullets[0].items:
        return _ticks(bullets[0].text)
    out = ["<ul>"]
    for b in bullets:
        items = "".join(f"<li>{_ticks(i)}</li>" for i in b.items)
        out.append(f"<li>{_ticks(b.text)}" + (f"<ul>{items}</ul>" if items else "") + "</li>")
    return Markup("".join(out) + "</ul>")


@lru_cache(maxsize=1)
def environment() -> Environment:
    from jinja2 import Environment, FileSystemLoader

    from logparse.grammar.resources import reports_dir

    env = Environment(
        loader=FileSystemLoader(str(reports_dir())),
        autoescape=True,  # every template of this environment is HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.filters["ticks"] = _ticks
    env.filters["fix"] = _fix
    return env


def phase_names(data: dict[str, Any]) -> list[str]:
    from logparse.report.timing import PHASE_ORDER

    names = {
        p["phase"] for r in data["timing"]["ranks"] for p in r["phases"] if p["phase"] != "ready"
    }
    return sorted(names, key=lambda p: (PHASE_ORDER.get(p, 99), p))


def outcome_class(outcome: str | None) -> str:
    if outcome is None:
        return "unknown"
    return "ok" if outcome in OK_OUTCOMES else "bad"


def context(data: dict[str, Any]) -> dict[str, Any]:
    from logparse._version import __version__
    from logparse.report.model import SECTION_TITLES, SECTIONS

    return {
        "report": data,
        "sections": SECTIONS,
        "titles": SECTION_TITLES,
        "phase_names": phase_names(data),
        "outcome_class": outcome_class(data["summary"]["outcome"]),
        "plot_titles": {p["name"]: p["title"] for p in data.get("plots", [])},
        "version": __version__,
        "long_rows": LONG_ROWS,
        "evidence_shown": EVIDENCE_SHOWN,
    }


def render_html(data: dict[str, Any], svgs: dict[str, str]) -> str:
    """The HTML report; `svgs` maps plot names to SVG text (see plots.render)."""
    from markupsafe import Markup

    from logparse.engine.gcpace import fewer_collections
    from logparse.grammar.resources import reports_dir

    env = environment()
    css = (reports_dir() / "report.css").read_text(encoding="utf-8")
    ctx = context(data)
    ctx["css"] = Markup(css)
    ctx["svgs"] = {name: Markup(svg) for name, svg in svgs.items()}
    # Rendering allocates a string per value shown and no cycles (see build_report).
    with fewer_collections():
        return env.get_template("report.html.j2").render(ctx)
