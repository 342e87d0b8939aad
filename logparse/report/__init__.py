"""Reports for people: one log (and optionally a baseline) as self-contained HTML, Markdown with
SVG plots, or JSON. `build_report` makes the data model; `html`, `markdown` and `plots` render it.

Nothing here is imported by `logdiag analyze`; matplotlib and numpy are imported inside the
functions that need them.
"""

from logparse.report.model import Report, build_report

__all__ = ["Report", "build_report"]
