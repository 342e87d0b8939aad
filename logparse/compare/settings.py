"""Each compared run's settings: its measured launch attempt and every setting it states (read
from the run model, `run/settings.py`), with the parsed log kept for the metrics."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from logparse.run.settings import LaunchSettings, launch_settings, measured_launch

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.launches import Launch
    from logparse.run.speculative import SpecConfig
    from logparse.run.views import Views


@dataclass
class RunSettings:
    """One compared log: where it came from, its role, and what it states."""

    source: str
    role: str  # 'baseline' or 'candidate'
    log: ParsedLog

    @cached_property
    def views(self) -> Views:
        from logparse.run.views import Views

        return Views(self.log)

    @cached_property
    def launch(self) -> Launch:
        return measured_launch(self.views.run)

    @cached_property
    def settings(self) -> LaunchSettings:
        out = launch_settings(self.launch)
        if len(self.views.run.launches) == 1:
            # not stated as an argument: the rank tags the log prints (TP0..TP7) tell the sizes
            for key, value in (("tp_size", self.views.tp_size), ("dp_size", self.views.dp_size)):
                if key not in out and value is not None:
                    out.put(key, value, "ranks")
        return out

    @cached_property
    def spec(self) -> SpecConfig:
        from logparse.run.speculative import spec_config

        line = self.launch.command.line if self.launch.command is not None else self.launch.first_line
        return spec_config(self.log, self.views, line)


def load(path: str, role: str, source: str | None = None, *, jobs: int = 1) -> RunSettings:
    """Parse a log for a comparison (OSError / ValueError for unreadable input)."""
    from logparse.parsing.pipeline import parse_file

    return RunSettings(source or path, role, parse_file(path, jobs=jobs))


def of_log(log: ParsedLog, role: str, source: str | None = None) -> RunSettings:
    """An already parsed log (the report's analyses) as a compared run."""
    return RunSettings(source or log.path, role, log)
