"""Terminal layout for text output: the width to wrap to, word wrapping with a hanging indent,
tables that fall back to lines when they do not fit, and colour that only a terminal sees.

Width (`output_width`): `--wide` → no limit (every line whole). Otherwise `COLUMNS` when it is set
to a number, else the terminal's width when stdout is a terminal, else 100 — so a pipe, a file
or CI gets the same 100-column text every time. Widths below `MIN_WIDTH` are raised to it (a
hanging indent needs room).

Wrapping never cuts a word and never hides text behind `…`: a line breaks at spaces; a single
token longer than the room left (a path, a URL, a long flag list) breaks after `/`, `,`, `=`,
`_`, `.`, `-` or `:`, and only a token with none of those is split at the width.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from typing import ClassVar

from logparse.render.neutral import one_line

DEFAULT_WIDTH = 100
MIN_WIDTH = 40
_SOFT_BREAKS = ("/,=", "_.-:")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Joins words that must stay on one line (`41.3 token/s`), in text logdiag writes itself
# (`wrap(..., glue=True)`); in any other text it is a control character, escaped like the rest.
GLUE = "\x1f"


def output_width(*, wide: bool = False, isatty: bool = False, env: Mapping[str, str] | None = None) -> int | None:
    """The column budget for text output; None means unlimited (`--wide`)."""
    if wide:
        return None
    env = os.environ if env is None else env
    columns = (env.get("COLUMNS") or "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    if isatty:
        # COLUMNS is unset here, so get_terminal_size asks the terminal itself.
        return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    return DEFAULT_WIDTH


def use_color(*, isatty: bool, flag: bool | None = None, env: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, never with NO_COLOR set (https://no-color.org), unless
    `--color` / `--no-color` (flag) decides."""
    if flag is not None:
        return flag
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    return isatty and env.get("TERM") != "dumb"


def visible_len(text: str) -> int:
    """Length on screen: colour escapes take no columns."""
    return len(_ANSI.sub("", text))


def _split_long(token: str, room: int) -> list[str]:
    """A token longer than `room` in pieces of at most `room`, broken after a soft break
    character where there is one."""
    pieces: list[str] = []
    while len(token) > room:
        cut = room
        for group in _SOFT_BREAKS:  # a path breaks after `/` before it breaks after `_`
            at = max(token.rfind(c, 0, room) for c in group)
            if at + 1 > room // 3:
                cut = at + 1
                break
        pieces.append(token[:cut])
        token = token[cut:]
    if token:
        pieces.append(token)
    return pieces


def wrap(text: str, width: int | None, first: str = "", rest: str | None = None,
         glue: bool = False) -> list[str]:
    """`text` (one logical line; control characters escaped) as lines of at most `width`
    columns: the first starts with `first`, the others with `rest` (a hanging indent; default:
    as many spaces as `first` is wide)."""
    parts = text.split(GLUE) if glue else [text]
    text = "\x00".join(one_line(part) for part in parts)  # NUL stands for a glued space
    if rest is None:
        rest = " " * (len(first) + 2)
    body = text.lstrip(" ")
    lead = text[: len(text) - len(body)]  # an indented log line (a frame) keeps its indent…
    if width is not None:  # …as far as the width leaves room for the text (a caret line)
        lead = lead[: max(0, width - len(first) - max(1, min(len(body), 20)))]
    first += lead
    text = body
    if width is None:
        return [(first + text).replace("\x00", " ")]
    words = text.split(" ")
    lines: list[str] = []
    prefix = first
    line = ""
    for word in words:
        room = max(1, width - len(prefix))
        candidate = f"{line} {word}" if line else word
        if len(candidate) <= room:
            line = candidate
            continue
        if line:
            lines.append(prefix + line)
            prefix, line = rest, ""
            room = max(1, width - len(prefix))
        if len(word) <= room:
            line = word
            continue
        pieces = _split_long(word, room)
        for piece in pieces[:-1]:
            lines.append(prefix + piece)
            prefix = rest
        line = pieces[-1]
    if line or not lines:
        lines.append(prefix + line)
    return [ln.rstrip().replace("\x00", " ") for ln in lines]


def table(rows: Sequence[Sequence[str]], width: int | None, indent: str = "  ",
          align: str = "") -> list[str] | None:
    """Rows (the first is the header) as aligned columns, or None when they do not fit `width`.
    `align` has one letter per column, `l` or `r` (default: first left, the rest right)."""
    if not rows:
        return []
    ncol = max(len(r) for r in rows)
    cells = [[one_line(c) for c in r] + [""] * (ncol - len(r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(ncol)]
    align = align or "l" + "r" * (ncol - 1)
    out = []
    for r in cells:
        parts = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align, strict=False)]
        out.append((indent + "  ".join(parts)).rstrip())
    if width is not None and any(len(line) > width for line in out):
        return None
    return out


class Paint:
    """ANSI styles applied to whole, already wrapped lines (so widths never count escapes)."""

    _CODES: ClassVar[dict[str, str]] = {"bold": "1", "red": "1;31", "yellow": "33", "green": "32", "dim": "2", "cyan": "36"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str | None, line: str) -> str:
        if not self.enabled or not style or not line:
            return line
        return f"\x1b[{self._CODES[style]}m{line}\x1b[0m"


class Doc:
    """Lines of text under construction, wrapped to one width and painted with one palette."""

    def __init__(self, width: int | None, paint: Paint | None = None) -> None:
        self.width = width
        self.paint = paint or Paint(False)
        self.lines: list[str] = []

    def add(self, text: str, first: str = "", rest: str | None = None, style: str | None = None,
            glue: bool = False) -> None:
        """One logical line, wrapped; `style` paints its first physical line; `glue`: the text
        is logdiag's own, GLUE joins words."""
        wrapped = wrap(text, self.width, first, rest, glue)
        wrapped[0] = self.paint(style, wrapped[0])
        self.lines.extend(wrapped)

    def extend(self, lines: Sequence[str]) -> None:
        """Lines already laid out (a table)."""
        self.lines.extend(lines)

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)
