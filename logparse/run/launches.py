"""Launch attempts: where each pasted server launch starts and ends in a log, and what it set.

Engineers paste attempt after attempt into one log. A server command (`python -m
sglang.launch_server`, `sglang serve`, `docker run … sglang …`) starts an attempt; so does a
`server_args=` line when the current attempt already printed one (launches that fail during
argument checks print no `server_args=`, so the command lines matter). Variables exported in the
pasted shell session before a command belong to that command's environment (exports persist in a
shell), and an attempt starts at the exports that directly precede its command.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from logparse.model import events as _events
from logparse.model.events import Event, KnownMessage, LaunchCommand, ServerArgs

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# `export VAR=value` in a pasted shell session (added to the grammar in parallel; absent in older
# checkouts, where only inline `VAR=value cmd` prefixes are known).
ShellExport: type[Event] | None = getattr(_events, "ShellExport", None)
# An empty prompt line between the exports and the command does not separate them.
_TRANSPARENT: tuple[type[Event], ...] = tuple(c for c in (getattr(_events, "ShellPrompt", None),) if c)

# Short flags SGLang's argument parser accepts for a server argument (`--tp 8` = tp_size 8).
FLAG_ALIASES: dict[str, tuple[str, ...]] = {
    "tp_size": ("--tp", "--tensor-parallel-size"),
    "dp_size": ("--dp", "--data-parallel-size"),
    "ep_size": ("--ep", "--expert-parallel-size"),
    "pp_size": ("--pp", "--pipeline-parallel-size"),
    "model_path": ("--model", "--model-path"),
}


def is_server_command(e: LaunchCommand) -> bool:
    """Whether a pasted command starts an SGLang server (not a benchmark or another tool)."""
    program = e.program or ""
    if not program or "bench" in program or not ("launch_server" in program or "serve" in program):
        return False
    # Usage text (`Example: sglang serve --model-path <model> [options]`) is not a launch.
    return not any(_placeholder(v) for v in e.flags.values())


def _placeholder(value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(isinstance(v, str) and v.startswith("<") and v.endswith(">") for v in values)


def flag_name(arg: str) -> str:
    """'tp_size' → '--tp-size' (the command-line spelling of a server argument)."""
    return "--" + arg.replace("_", "-")


def arg_name(flag: str) -> str:
    """'--tp-size' → 'tp_size' (the server_args spelling of a command-line flag)."""
    return flag.lstrip("-").replace("-", "_")


@dataclass
class Launch:
    """One launch attempt: lines first_line..last_line of the log, its command and settings."""

    log: ParsedLog
    index: int  # 1-based, in file order
    first_line: int
    last_line: int
    count: int  # how many attempts the log holds
    command: LaunchCommand | None = None
    exported: dict[str, str] = field(default_factory=dict)  # `export` lines of the shell before the command

    # -- duck-typing ParsedLog for timeline.startup_phases, and the old (start, end) names
    @property
    def start(self) -> int:
        return self.first_line

    @property
    def end(self) -> int:
        return self.last_line

    @property
    def launches(self) -> int:
        return self.count

    def contains(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line

    @cached_property
    def events(self) -> list[Event]:
        """The launch's non-hot events, in file order."""
        events = self.log.events
        lo = bisect_left(events, self.first_line, key=lambda e: e.line)
        hi = bisect_right(events, self.last_line, key=lambda e: e.line)
        return events[lo:hi]

    def of(self, *classes: type[Event]) -> list[Any]:
        """The launch's events of the given classes, in file order."""
        return within(self.log.shared(*classes), self.first_line, self.last_line)

    # -- settings
    @cached_property
    def _commands(self) -> list[LaunchCommand]:
        """The server command and its continuation lines (command events without a program)."""
        if self.command is None:
            return []
        out = [self.command]
        for e in self.of(LaunchCommand):
            if e.line <= self.command.line:
                continue
            if e.program:
                break
            out.append(e)
        return out

    @cached_property
    def flags(self) -> dict[str, Any]:
        """The command's flags as typed (`--tp`: 8), continuation lines merged."""
        out: dict[str, Any] = {}
        for e in self._commands:
            out.update(e.flags)
        return out

    @cached_property
    def inline_env(self) -> dict[str, str]:
        """`VAR=value` prefixes of the command itself."""
        out: dict[str, str] = {}
        for e in self._commands:
            out.update(e.env)
        return out

    @cached_property
    def printed_env(self) -> dict[str, str]:
        """Variables SGLang printed the value of (`… os.environ.get('CUDA_VISIBLE_DEVICES')='0,1' …`)."""
        out: dict[str, str] = {}
        for e in self.of(KnownMessage):
            if e.code == "gpu-context":
                value = e.fields.get("cuda_visible_devices")
                if isinstance(value, str) and value not in ("", "None"):
                    out.setdefault("CUDA_VISIBLE_DEVICES", value.strip("'\""))
        return out

    @cached_property
    def env(self) -> dict[str, str]:
        """The environment the attempt ran with, as far as the log shows: exported in the pasted
        shell before the command, then the command's own `VAR=value` prefixes, then what SGLang
        printed (the process's own view wins)."""
        return {**self.exported, **self.inline_env, **self.printed_env}

    @cached_property
    def server_args(self) -> dict[str, Any]:
        """`server_args=` printed by this attempt (merged when printed more than once)."""
        merged: dict[str, Any] = {}
        for e in self.of(ServerArgs):
            merged.update(e.args)
        return merged

    def arg(self, name: str) -> Any:
        """A server argument: printed server_args, else the command's flag (`--kebab-case` or alias)."""
        if name in self.server_args:
            return self.server_args[name]
        flags = self.flags
        for flag in (flag_name(name), *FLAG_ALIASES.get(name, ())):
            if flag in flags:
                return flags[flag]
        return None

    def sets(self, setting: str) -> bool:
        """Whether the attempt already set a remedy's `--flag value` or `VAR=value` (the same value)."""
        setting = setting.strip().strip("`")
        if setting.startswith("--"):
            flag, _, value = setting.replace("=", " ", 1).partition(" ")
            # A flag written without a value is a switch (`--disable-radix-cache`): set when on.
            # (`raise --mem-fraction-static to 0.92` names a flag, it does not ask for a value.)
            value = value.strip() or "true"
            have = self.flags.get(flag, _MISSING)
            if have is _MISSING:
                have = self.server_args.get(arg_name(flag), _MISSING)
            return have is not _MISSING and _same(have, value)
        name, eq, value = setting.partition("=")
        if not eq or name not in self.env:
            return False
        return _same(self.env[name], value)

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "command": self.command.text if self.command is not None else None,
            "command_line": self.command.line if self.command is not None else None,
            "env": dict(sorted(self.env.items())),
        }


_MISSING: Any = object()
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", "none", ""})


def _same(have: Any, value: str) -> bool:
    """A setting's value compared as the shell and SGLang read it (1 == True == 'true')."""
    a, b = str(have).strip().strip("'\"").lower(), value.strip().strip("'\"").lower()
    if a == b:
        return True
    if (a in _TRUE and b in _TRUE) or (a in _FALSE and b in _FALSE):
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def within(events: Sequence[Event], start: int, end: int) -> list[Any]:
    """The events (in file order) whose first line lies in start..end."""
    lo = bisect_left(events, start, key=lambda e: e.line)
    hi = bisect_right(events, end, key=lambda e: e.line)
    return list(events[lo:hi])


def last_line_of(log: ParsedLog) -> int:
    """The last line number of the log (events, stats columns or the line count)."""
    last = log.coverage.total
    if log.events:
        last = max(last, max(e.end_line or e.line for e in log.events[-8:]))
    for cols in (log.decode, log.prefill, log.access):
        if len(cols):
            last = max(last, cols.line[-1])
    return last


def boundaries(log: ParsedLog) -> list[tuple[int, int, LaunchCommand | None]]:
    """(first line, last line, server command) of each launch attempt, in file order."""
    commands = [e for e in log.of(LaunchCommand) if is_server_command(e)]
    marks = sorted([(e.line, 0, e) for e in commands] + [(e.line, 1, e) for e in log.of(ServerArgs)],
                   key=lambda m: (m[0], m[1]))
    # Per source file (a run merged from per-node files, run/merge.py): the files of one run each
    # print their command and server_args once; only a file's second one starts a new attempt.
    starts: list[tuple[int, LaunchCommand | None]] = []
    seen: set[str] = set()  # sources with a command or server_args in the current attempt
    with_args: set[str] = set()  # sources with server_args in the current attempt
    for line, kind, e in marks:
        src = e.source or ""
        if kind == 0:
            if not starts or src in seen:
                starts.append((line, e))
                seen, with_args = set(), set()
            elif starts[-1][1] is None:
                starts[-1] = (starts[-1][0], e)
            seen.add(src)
        else:
            if not starts or src in with_args:
                starts.append((line, None))
                seen, with_args = set(), set()
            seen.add(src)
            with_args.add(src)
    last = last_line_of(log)
    if len(starts) <= 1:
        return [(1, max(last, 1), starts[0][1] if starts else None)]
    previous = [0, *(line for line, _ in starts)]
    firsts = [_attempt_start(log, line, prev) for (line, _), prev in zip(starts, previous, strict=False)]
    firsts[0] = 1  # what precedes the first command belongs to the first attempt
    out = []
    for i, (first, (_, cmd)) in enumerate(zip(firsts, starts, strict=True)):
        end = firsts[i + 1] - 1 if i + 1 < len(firsts) else max(last, first)
        out.append((first, end, cmd))
    return out


def _attempt_start(log: ParsedLog, line: int, previous: int) -> int:
    """The first line of the attempt whose command is on `line`: the `export` lines that directly
    precede it (after the previous attempt's start) belong to it."""
    if ShellExport is None:
        return line
    first = line
    exports = {e.line: e for e in within(log.shared(ShellExport), previous + 1, line - 1)}
    if not exports:
        return line
    others = {e.line for e in within(log.events, previous + 1, line - 1)
              if not isinstance(e, (ShellExport, *_TRANSPARENT))}
    for n in range(line - 1, previous, -1):
        if n in exports:
            first = n
        elif n in others:
            break
    return first


def launch_attempts(log: ParsedLog) -> list[Launch]:
    """Every launch attempt of the log (at least one), with its command and exported environment."""
    bounds = boundaries(log)
    exports = log.of(ShellExport) if ShellExport is not None else []
    out: list[Launch] = []
    # The exports before each cut, accumulated as the cuts advance (exports are in file order; a
    # rebuild per attempt was attempts x exports). A later export of a name overrides its value
    # but keeps its place, as the old per-attempt dict comprehension did.
    exported: dict[str, str] = {}
    taken, prev_cut = 0, -1
    for i, (first, last, cmd) in enumerate(bounds, 1):
        cut = cmd.line if cmd is not None else last
        if cut < prev_cut:  # not expected (attempts are in file order): start over
            exported, taken = {}, 0
        prev_cut = cut
        while taken < len(exports) and exports[taken].line < cut:
            e = exports[taken]
            exported[str(getattr(e, "name", ""))] = str(getattr(e, "value", ""))
            taken += 1
        out.append(Launch(log, i, first, last, len(bounds), cmd, {k: v for k, v in exported.items() if k}))
    return out


def launch_at(launches: Sequence[Launch], line: int, firsts: Sequence[int] | None = None) -> Launch:
    """The attempt that line belongs to (the last one for lines past the end). `firsts`: the
    attempts' first lines when they are sorted and disjoint (`disjoint_firsts`), to bisect."""
    if firsts is not None:
        k = bisect_right(firsts, line) - 1
        if k >= 0 and launches[k].contains(line):
            return launches[k]  # disjoint and sorted: the only attempt that holds the line
        return launches[-1] if line > launches[-1].last_line else launches[0]
    for launch in launches:
        if launch.contains(line):
            return launch
    return launches[-1] if line > launches[-1].last_line else launches[0]


def disjoint_firsts(launches: Sequence[Launch]) -> list[int] | None:
    """The attempts' first lines if the attempts are sorted and do not overlap (what `boundaries`
    makes), so that `launch_at` may bisect them (a scan per question was attempts x questions on
    a log of thousands of pasted attempts); None otherwise."""
    for a, b in zip(launches, launches[1:]):
        if not (a.first_line <= a.last_line < b.first_line):
            return None
    return [x.first_line for x in launches]
