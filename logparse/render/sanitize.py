"""What every output does to its data before writing it: secrets redacted (unless --no-redact)
and workflow commands defused, with a count of what was masked by kind.

One entry point per kind of output data, so that no command can forget a field: the per-file
summary of `analyze` (text and JSON), the flattened findings of `check` (all five formats), the
event rows of `events`, any JSON-like document (`report`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from logparse.render.neutral import csv_cell, neutralize
from logparse.render.redact import Redactor, redact_coverage

if TYPE_CHECKING:
    from logparse.gate.report import CheckReport


class Sanitizer(Redactor):
    """A Redactor that also defuses workflow commands; with redact=False it only defuses."""

    def __init__(self, redact: bool = True) -> None:
        super().__init__()
        self.redact = redact
        self.mask_keys = redact

    def text(self, value: str) -> str:
        return neutralize(super().text(value) if self.redact else value)

    def lines(self, values: list[str]) -> list[str]:
        return super().lines(values) if self.redact else [neutralize(v) for v in values]

    def summary(self) -> dict[str, int]:
        """The counts by kind, sorted (deterministic JSON)."""
        return dict(sorted(self.counts.items()))


def clean_summary(analysis: Any, redact: bool = True) -> dict[str, Any]:
    """The per-file summary of an analysis (`render.summary.summary_entry`), safe to print, with
    `redactions` by kind, in one walk: the sanitizer also makes it JSON-safe (a 1M-line
    startup-heavy summary holds ~1.3M values)."""
    return {k: list(v) if isinstance(v, Iterator) else v for k, v in summary_items(analysis, redact)}


def summary_items(analysis: Any, redact: bool = True) -> Iterator[tuple[str, Any]]:
    """`clean_summary(analysis)`'s items in order, made as they are asked for: the long lists
    (`render.summary.STREAMED`) as iterators of their sanitized items, each to be used up before
    the next pair is asked for (the sanitizer walks the entry in order: its redaction state and
    counts are those of one walk); last `redactions`, the counts by kind. A writer that writes
    each item as it comes never holds the document or its sanitized copy whole."""
    from logparse.render.summary import STREAMED, summary_entry

    s = Sanitizer(redact)
    s.json_safe = True
    entry = _redacted_coverage(summary_entry(analysis, lazy=True), analysis, s, redact)
    for k, v in entry.items():
        yield s.name(k), s.items(v) if k in STREAMED else s.field(k, v)
    yield "redactions", s.summary()


def _redacted_coverage(entry: dict[str, Any], analysis: Any, s: Sanitizer, redact: bool) -> dict[str, Any]:
    """The entry with its coverage's unparsed templates redacted against the kept texts."""
    cov = entry.get("coverage")
    if redact and isinstance(cov, dict):
        from logparse.parsing.coverage import template_of

        texts = getattr(getattr(analysis, "log", None), "texts", None)
        entry = entry | {"coverage": redact_coverage(cov, texts, s, template_of)}
    return entry


def clean_document(doc: Any, redact: bool = True) -> tuple[Any, dict[str, int]]:
    """(a JSON-like document safe to write, the redactions by kind)."""
    s = Sanitizer(redact)
    return s.data(doc), s.summary()


def _clean_finding(f: Any, s: Sanitizer) -> Any:
    evidence = [
        dataclasses.replace(ev, lines=list(zip([n for n, _ in ev.lines], s.lines([t for _, t in ev.lines]), strict=True)))
        for ev in f.evidence
    ]
    return dataclasses.replace(
        f,
        message=s.text(f.message),
        remedy=s.text(f.remedy),
        evidence=evidence,
        ranks=[s.text(r) for r in f.ranks],
        data=s.data(f.data),
        consequences=[],  # `check` flattens consequences into items of their own
    )


def clean_check(report: CheckReport, redact: bool = True) -> CheckReport:
    """A copy of a check report whose findings are safe for every check format (text, JSON,
    SARIF, JUnit, GitHub annotations); fingerprints stay those of the raw findings, so
    baselines match with or without --no-redact."""
    s = Sanitizer(redact)
    files = []
    for cf in report.files:
        items = [dataclasses.replace(i, finding=_clean_finding(i.finding, s), cause=s.text(i.cause) if i.cause else i.cause)
                 for i in cf.items]
        files.append(dataclasses.replace(cf, items=items, rule_errors=[s.text(e) for e in cf.rule_errors]))
    return dataclasses.replace(report, files=files, redactions=s.summary())


def clean_rows(rows: Iterable[dict[str, Any]], redact: bool = True, csv: bool = False) -> Iterator[dict[str, Any]]:
    """Event rows safe to export; CSV cells also cannot start a spreadsheet formula."""
    s = Sanitizer(redact)
    for row in rows:
        out = s.data(row)
        if csv:
            out = {k: csv_cell(v) for k, v in out.items()}
        yield out
