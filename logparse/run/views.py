"""Views of a parsed log: one object that rules and renderers ask for run facts.

`Views` combines the configuration (`run/config.py`), the facts vocabulary (`run/facts.py`) and
the run model (`run/model.py`: launch attempts, readiness, traffic); the serving summary lives in
`run/serving.py`. Everything here is computed from `ParsedLog`; nothing below does I/O. The other
names are re-exported for the callers that import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from logparse.model.events import Event, Traceback
from logparse.run.config import ConfigView
from logparse.run.facts import FactsView
from logparse.run.model import Run, run_of
from logparse.run.ranks import rank_key
from logparse.run.serving import is_nan, serving_summary
from logparse.run.stage import traceback_phase
from logparse.run.vocab import STARTUP_CODES, STARTUP_EVENTS

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

__all__ = [
    "STARTUP_CODES",
    "STARTUP_EVENTS",
    "Views",
    "is_nan",
    "rank_key",
    "serving_summary",
    "traceback_phase",
]


@dataclass
class Views(ConfigView, FactsView):
    """Lazily computed views of one parsed log."""

    log: ParsedLog
    _cache: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def run(self) -> Run:
        """Launch attempts and their lifecycles (the owner of readiness, traffic and phases)."""
        return run_of(self.log)

    @cached_property
    def tracebacks(self) -> list[Traceback]:
        return self.log.of(Traceback)

    @property
    def readiness(self) -> Event | None:
        """The line that shows the last attempt was ready (ready marker, else uvicorn running)."""
        return self.run.last.ready_event

    @property
    def serving(self) -> bool:
        """The last attempt handled user traffic."""
        return self.run.last.serving

    @property
    def startup_evidence(self) -> bool:
        return self.run.last.startup_seen

    @property
    def ready(self) -> bool | None:
        """The last attempt reached readiness or served (True), was starting and never did (False),
        or the lines cannot tell (None)."""
        return self.run.ready
