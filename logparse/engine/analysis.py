"""The result of analysing one log: findings, root cause and outcome, per launch attempt and overall."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.engine.evidence import walk
from logparse.model.findings import Finding

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pandas as pd

    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.launches import Launch
    from logparse.run.model import Run
    from logparse.run.views import Views


@dataclass
class Attempt:
    """One launch attempt's verdict: its outcome, root cause and top-level findings (root first)."""

    launch: Launch
    outcome: str | None = None
    root_cause: Finding | None = None
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """`files[].launches[]` of the JSON output: `findings` are the names of the attempt's
        top-level findings (its root cause first; consequences are nested under the root cause in
        `files[].findings`); `root_cause` is a short form of the full finding found there."""
        root = self.root_cause
        out = self.launch.as_dict()
        out["outcome"] = self.outcome
        out["root_cause"] = None if root is None else {
            "code": root.code, "name": root.name, "message": root.message, "remedy": root.remedy,
            "first_line": root.first_line,
        }
        out["findings"] = [f.name for f in self.findings]
        return out


@dataclass
class Analysis:
    """The result for one log file. `outcome` and `root_cause` are those of the last launch attempt."""

    log: ParsedLog
    views: Views
    findings: list[Finding] = field(default_factory=list)
    outcome: str | None = None
    root_cause: Finding | None = None
    # Rules that raised (a bug in logdiag): "CODE name: ExceptionType: message". Empty normally.
    rule_errors: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.log.path

    @property
    def run(self) -> Run:
        """The run model (launch attempts, lifecycles) of the analysed log."""
        return self.views.run

    def all_findings(self) -> list[Finding]:
        """Every finding, consequences included (depth first)."""
        return list(walk(self.findings))

    def fired(self) -> set[str]:
        """Names of every diagnosis that fired, nested consequences included."""
        return {f.name for f in self.all_findings()}

    # -- the Python API (`logparse.analyze`): facts and tables, read from their owners

    @property
    def launches(self) -> list[Attempt]:
        """Each launch attempt's verdict (launch, outcome, root cause, findings), in file order."""
        return self.attempts

    @property
    def facts(self) -> dict[str, Any]:
        """What the log states, in the corpus vocabulary (`tp_size`, `ready`, `bench`, ...): the
        `facts` of the JSON output (only the keys the log states)."""
        return self.views.facts()

    @property
    def tables(self) -> Tables:
        """Every table with rows, by name: the event kinds the log has, `findings` and `runs`.
        Each DataFrame is built when first asked for and kept."""
        tables: Tables | None = self.log.derived.get("api_tables")
        if tables is None or tables.analysis is not self:
            tables = self.log.derived["api_tables"] = Tables(self)
        return tables

    def table(self, kind: str) -> pd.DataFrame:
        """One table as a pandas DataFrame with typed columns (docs/export.md lists them): an event
        kind (`decode_batch`, `traceback`, ...; no rows when the log has none), `findings` or
        `runs` (one row per launch attempt). ValueError for an unknown kind."""
        return self.tables.get_table(kind)


class Tables(Mapping[str, "pd.DataFrame"]):
    """An analysis's tables by name, built on first access (pandas and pyarrow load then)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self._frames: dict[str, pd.DataFrame] = {}
        self._builder: Any = None
        self._names: list[str] | None = None

    def _kinds(self) -> list[str]:
        if self._names is None:
            from logparse.run.tables import kinds_present

            self._names = [*kinds_present(self.analysis.log), "findings", "runs"]
        return self._names

    def get_table(self, kind: str) -> pd.DataFrame:
        from logparse.engine.tables import ENGINE_TABLES, engine_table
        from logparse.run.tables import TableBuilder, event_columns, event_kinds, run_id, to_frame

        if kind in self._frames:
            return self._frames[kind]
        if kind not in ENGINE_TABLES and kind not in event_kinds():
            names = ", ".join([*event_kinds(), *ENGINE_TABLES])
            raise ValueError(f"unknown table {kind!r}: one of {names}")
        log = self.analysis.log
        if self._builder is None:
            self._builder = TableBuilder(log, run_id(log.path), log.path)
        if kind in ENGINE_TABLES:
            frame = to_frame(engine_table(self.analysis, kind, self._builder), ENGINE_TABLES[kind])
        else:
            frame = to_frame(self._builder.event_table(kind), event_columns(kind))
        self._frames[kind] = frame
        return frame

    def __getitem__(self, kind: str) -> pd.DataFrame:
        if kind not in self._kinds():
            raise KeyError(kind)
        return self.get_table(kind)

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds())

    def __len__(self) -> int:
        return len(self._kinds())

    def __repr__(self) -> str:
        return f"Tables({', '.join(self._kinds())})"
