"""Time windows (`--since` / `--until`): what a bound may say, and the window it gives on one log.

The log is the clock. A relative bound (`2h`, `30m`, `1d`, `1h30m`) counts back from the log's
last timestamp, not from now, so a postmortem run tomorrow gives the same answer as one run
today. A time of day alone (`12:00`, `[12:00:00]`) is the latest such moment at or before the
log's last timestamp. A full date and time (`2025-01-01 12:00:00`, `2025-01-01T12:00Z`, SGLang's
own `[2025-01-01 12:00:00]`) is taken as is; log timestamps carry no zone and are read as UTC,
so a value with a zone is converted to UTC first. A log that prints no year (`MM-DD HH:MM:SS`) or
no date at all (`HH:MM:SS`, releases 0.2.15–0.3.3) is compared on what it prints. Both bounds are
inclusive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

__all__ = ["Bound", "TimeWindow", "WindowError", "parse_bound", "window_of"]


class WindowError(ValueError):
    """A bound that cannot be read, or a window that is empty by construction."""


_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_RELATIVE = re.compile(r"(?:\d+(?:\.\d+)?[smhdw])+")
_RELATIVE_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
# Logs print without a year in some releases (MM-DD or time only); the parser dates them 1900.
_NO_YEAR = 1900


@dataclass(frozen=True, slots=True)
class Bound:
    """One side of a window, as given. Exactly one of `seconds`, `moment`, `clock` is set."""

    text: str
    seconds: float | None = None  # relative: this long before the log's last timestamp
    moment: datetime | None = None  # absolute, naive UTC
    clock: time | None = None  # a time of day alone

    @property
    def kind(self) -> str:
        if self.seconds is not None:
            return "relative"
        return "absolute" if self.moment is not None else "time-of-day"

    def resolve(self, last: datetime, *, time_only: bool | None = None) -> datetime:
        """The moment this bound names in a log whose last timestamp is `last` (naive).
        `time_only`: the log prints only times of day (dated 1900-01-01 by the parser, a day
        added after each midnight it crosses); None: told from `last`."""
        if time_only is None:
            time_only = (last.year, last.month, last.day) == (_NO_YEAR, 1, 1)
        if self.seconds is not None:
            return last - timedelta(seconds=self.seconds)
        if self.moment is not None:
            if last.year == _NO_YEAR and self.moment.year != _NO_YEAR:
                if time_only:  # only the time counts: that time on the log's last day
                    day = datetime.combine(last.date(), self.moment.time())
                    # after a midnight the log crossed, a later time is the day before
                    crossed = last.day > 1
                    return day - timedelta(days=1) if crossed and day > last else day
                return self.moment.replace(year=_NO_YEAR)  # 'MM-DD HH:MM:SS': no year printed
            return self.moment
        assert self.clock is not None
        day = datetime.combine(last.date(), self.clock)
        return day if day <= last else day - timedelta(days=1)


def parse_bound(text: str, option: str = "--since") -> Bound:
    """Read one bound; WindowError names the option and the value on anything else."""
    raw = text.strip()
    value = raw[1:-1].strip() if raw.startswith("[") and raw.endswith("]") else raw
    if not value:
        raise WindowError(f"{option}: empty value")
    if _RELATIVE.fullmatch(value):
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in _RELATIVE_PART.findall(value))
        return Bound(text=raw, seconds=seconds)
    iso = value.replace(",", ".")
    if len(iso) > 10 and iso[10] == " ":
        iso = iso[:10] + "T" + iso[11:]
    if ":" in iso and "-" not in iso[:8]:  # no date part: a time of day
        try:
            clock = time.fromisoformat(iso)
        except ValueError:
            clock = None
        if clock is not None and clock.tzinfo is None:
            return Bound(text=raw, clock=clock)
    else:
        try:
            moment = datetime.fromisoformat(iso)
        except ValueError:
            moment = None
        if moment is not None:
            if moment.tzinfo is not None:
                moment = moment.astimezone(UTC).replace(tzinfo=None)
            return Bound(text=raw, moment=moment)
    raise WindowError(
        f"{option}: cannot read '{raw}' as a time (use e.g. 2h, 30m, 1d, 12:00:00 or "
        "2025-01-01 12:00:00)"
    )


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """`--since` / `--until` together; a side that is None is open."""

    since: Bound | None = None
    until: Bound | None = None

    def resolve(self, last: datetime, *, time_only: bool | None = None
                ) -> tuple[datetime | None, datetime | None]:
        """Both sides as moments in a log whose last timestamp is `last`; WindowError when the
        window is empty (since after until)."""
        lo = self.since.resolve(last, time_only=time_only) if self.since is not None else None
        hi = self.until.resolve(last, time_only=time_only) if self.until is not None else None
        if lo is not None and hi is not None and lo > hi:
            raise WindowError(
                f"--since {self.since.text if self.since else ''} ({lo:%Y-%m-%d %H:%M:%S}) is after "
                f"--until {self.until.text if self.until else ''} ({hi:%Y-%m-%d %H:%M:%S})"
            )
        return lo, hi

    @property
    def needs_clock(self) -> bool:
        """Whether a bound depends on the log's last timestamp (relative, or a time of day)."""
        return any(b is not None and b.moment is None for b in (self.since, self.until))

    def anchored(self, last: datetime) -> TimeWindow:
        """The window with every bound resolved against `last` (a run's last timestamp), so that
        each file of the run is cut at the same moments; the bounds keep their text."""
        lo, hi = self.resolve(last)
        return TimeWindow(
            None if self.since is None or lo is None else Bound(text=self.since.text, moment=lo),
            None if self.until is None or hi is None else Bound(text=self.until.text, moment=hi),
        )

    def as_dict(self) -> dict[str, str | None]:
        return {
            "since": self.since.text if self.since is not None else None,
            "until": self.until.text if self.until is not None else None,
        }


def _comparable(since: Bound, until: Bound) -> bool | None:
    """Whether since ≤ until can be told without a log (None: only a log can tell)."""
    if since.seconds is not None and until.seconds is not None:
        return since.seconds >= until.seconds
    if since.moment is not None and until.moment is not None:
        return since.moment <= until.moment
    return None


def window_of(since: str | None, until: str | None) -> TimeWindow | None:
    """The window the two options give (None when neither is set). A window that is empty
    whatever the log (since after until) is a WindowError here, before any log is read."""
    if since is None and until is None:
        return None
    lo = parse_bound(since, "--since") if since is not None else None
    hi = parse_bound(until, "--until") if until is not None else None
    if lo is not None and hi is not None and _comparable(lo, hi) is False:
        raise WindowError(f"--since {lo.text} is after --until {hi.text}")
    return TimeWindow(lo, hi)
