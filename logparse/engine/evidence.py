"""Evidence text: rules name evidence by line numbers; the engine fetches their text once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from logparse.model.findings import Finding
from logparse.parsing.pipeline import fetch_lines

if TYPE_CHECKING:
    from logparse.engine.analysis import Analysis
    from logparse.parsing.pipeline import ParsedLog


def walk(findings: list[Finding]) -> Iterator[Finding]:
    """Every finding, consequences included (depth first)."""
    for f in findings:
        yield f
        yield from walk(f.consequences)


def fill_evidence(analysis: Analysis) -> None:
    """Fetch the text of every evidence line of every finding (one read for all)."""
    wanted: set[int] = set()
    every = list(walk(analysis.findings))
    for f in every:
        for ev in f.evidence:
            if not ev.lines:
                wanted.update(range(ev.line, ev.end_line + 1))
    if not wanted:
        return
    if "origins" in analysis.log.derived:
        _fill_merged(analysis.log, every, wanted)
        return
    texts = fetch_lines(analysis.log, wanted)
    for f in every:
        for ev in f.evidence:
            if not ev.lines:
                ev.lines = [(n, texts[n]) for n in range(ev.line, ev.end_line + 1) if n in texts]


def _fill_merged(log: ParsedLog, every: list[Finding], wanted: set[int]) -> None:
    """A run merged from several files: evidence names each line's own file and line number, and
    the text comes from that file (run/merge.py)."""
    origins = log.derived["origins"]
    parts = {p.path: p for p in log.derived["parts"]}
    where = {n: loc for n in wanted if (loc := origins.locate(n)) is not None}
    by_file: dict[str, set[int]] = {}
    for path, real in where.values():
        by_file.setdefault(path, set()).add(real)
    texts = {path: fetch_lines(parts[path], lines) for path, lines in by_file.items()}
    for f in every:
        for ev in f.evidence:
            if ev.lines:
                continue
            places = [where[n] for n in range(ev.line, ev.end_line + 1) if n in where]
            if not places:
                continue
            path = places[0][0]
            mine = [real for p, real in places if p == path]
            ev.file, ev.line, ev.end_line = path, mine[0], mine[-1]
            ev.lines = [(real, texts[path][real]) for real in mine if real in texts[path]]
