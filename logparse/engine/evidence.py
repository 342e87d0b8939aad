"""Evidence text: rules name evidence by line numbers; the engine fetches their text once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from logparse.model.findings import Finding
from logparse.parsing.pipeline import fetch_lines

if TYPE_CHECKING:
    from logparse.engine.analysis import Analysis


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
    texts = fetch_lines(analysis.log, wanted)
    for f in every:
        for ev in f.evidence:
            if not ev.lines:
                ev.lines = [(n, texts[n]) for n in range(ev.line, ev.end_line + 1) if n in texts]
