"""Assemble pasted shell commands split over several physical lines into one event, in file order.

The grammar classifies each line on its own (grammars/shell.lark, the startup family's
LAUNCH_CMD/LAUNCH_CONT); this module joins the lines of one typed command, as records.py joins the
lines of a traceback, and under the same rule: per **stream**, never across streams.

* A command opens at a `LaunchCommand`, a `ShellCommand` or a `CommandContinuation` (a
  continuation line whose head the excerpt lacks: it may still hold the launch, e.g. the last line
  of a `docker run … \\` command).
* While its last line ends in `\\`, the next line of the stream continues it, whatever the grammar
  made of it: a `> ` continuation-prompt line, an indented `-v /data:/data \\`, flags, an indented
  line taken for traceback source, or a line the grammar does not know (then it is reclaimed:
  counted as recognised).
* Without a `\\`, only indented flag lines (`  --tp 8`) continue a launch (commands pasted with
  their backslashes lost).
* Anything else in the stream ends the command. The lines are joined (continuation prompts and
  `\\` removed) and read again: a command that runs SGLang becomes one `LaunchCommand` spanning
  line..end_line, another one a `ShellCommand`. The single-line events it was built from are
  consumed (they are not emitted). A command of one line is emitted as the grammar made it.

`export A=1 B=2` lines yield one `ShellExport` per variable (see its docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from logparse.grammar.transform.shell import parse_command, program_of
from logparse.grammar.transform.startup import _parse_command
from logparse.model.events import (
    CommandContinuation,
    Event,
    LaunchCommand,
    ShellCommand,
    ShellExport,
    TracebackSource,
)

__all__ = ["CommandAssembler"]

_HEADS = (LaunchCommand, ShellCommand, CommandContinuation)
# What a line after a `\` can be, besides a line the grammar does not know.
_AFTER_BACKSLASH = frozenset({LaunchCommand, ShellCommand, CommandContinuation, TracebackSource})
# A command longer than this is not a command: emit what was joined so far.
MAX_COMMAND_LINES = 256


@dataclass(slots=True)
class _Command:
    head: Event
    parts: list[str] = field(default_factory=list)  # each physical line's command text
    end_line: int = 0
    continued: bool = False  # the last line ended in `\`


def _continued(text: str) -> bool:
    return text.rstrip().endswith("\\")


class CommandAssembler:
    """Stateful, O(1) per line; holds at most one open command per stream."""

    def __init__(self) -> None:
        self._open: dict[str, _Command] = {}

    def feed(
        self, stream: str, line: int, event: Event | None, text: str
    ) -> tuple[list[Event], bool]:
        """Called for every non-hot line in file order, with its event (None for a line the grammar
        does not know, or a blank one) and its text. Returns the events to emit now, in order, and
        whether the line was absorbed into a command (then its own event is not among them)."""
        out: list[Event] = []
        cmd = self._open.get(stream)
        if cmd is not None:
            if self._joins(cmd, event, text):
                part = event.text if isinstance(event, CommandContinuation) else text.strip()
                cmd.parts.append(part)
                cmd.end_line = line
                cmd.continued = _continued(part)
                if len(cmd.parts) >= MAX_COMMAND_LINES:
                    out.extend(self._close(stream))
                return out, True
            out.extend(self._close(stream))
        if event is None:
            return out, False
        if isinstance(event, _HEADS):
            head = str(getattr(event, "text", ""))  # the grammar's callbacks leave the prompt out
            self._open[stream] = _Command(event, [head], event.line, _continued(head))
        elif isinstance(event, ShellExport) and len(event.env) > 1:
            out.extend(replace(event, name=name, value=value) for name, value in event.env.items())
        else:
            out.append(event)
        return out, False

    def finish(self) -> list[Event]:
        """Emit the commands still open at the end of the input."""
        out: list[Event] = []
        for stream in list(self._open):
            out.extend(self._close(stream))
        return out

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _joins(cmd: _Command, event: Event | None, text: str) -> bool:
        if cmd.continued:
            if event is None:
                return bool(text.strip())  # a blank line ends the command
            return type(event) in _AFTER_BACKSLASH
        # No `\`: indented flags still continue a launch whose backslashes were lost.
        return (
            isinstance(event, LaunchCommand)
            and not event.program
            and isinstance(cmd.head, LaunchCommand)
            and text[:1] in (" ", "\t")
        )

    def _close(self, stream: str) -> list[Event]:
        cmd = self._open.pop(stream)
        head = cmd.head
        if len(cmd.parts) == 1 and not isinstance(head, CommandContinuation):
            return [head]
        joined = " ".join(p.rstrip().removesuffix("\\").strip() for p in cmd.parts).strip()
        where = {
            "line": head.line,
            "end_line": cmd.end_line,
            "ts": head.ts,
            "rank": head.rank,
            "source": head.source,
            "wrapper": head.wrapper,
        }
        fields = parse_command(joined)
        if fields is not None:
            return [LaunchCommand(**where, **fields)]
        if isinstance(head, LaunchCommand):  # continuation flags without their command's head
            return [LaunchCommand(**where, **_parse_command(joined))]
        if isinstance(head, ShellCommand):
            return [
                ShellCommand(**where, text=joined, program=program_of(joined), prompt=head.prompt)
            ]
        return [CommandContinuation(**where, text=joined)]
