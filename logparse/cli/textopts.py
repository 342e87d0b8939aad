"""The text-layout options that `analyze` and `check` share: `--wide` and `--color/--no-color`.

The width and the colour are decided here, once, from the options, the environment and whether
stdout is a terminal (`render/layout.py` states the rules); the renderers only receive them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def text_options(f: F) -> F:
    """`--wide` and `--color/--no-color`, passed as `wide` and `color` (None: automatic)."""
    f = click.option(
        "--color/--no-color", "color", default=None,
        help="Colour the text output (default: only on a terminal, never with NO_COLOR set).",
    )(f)
    f = click.option(
        "--wide", is_flag=True,
        help="Print every line whole (no wrapping); text is wrapped to COLUMNS, the terminal's width, "
             "or 100 columns otherwise.",
    )(f)
    return f


def text_layout(wide: bool, color: bool | None, to_file: bool = False) -> tuple[int | None, bool]:
    """(width or None for --wide, colour on?) for output to stdout (or to a file: no terminal)."""
    from logparse.render.layout import output_width, use_color

    isatty = not to_file and _stdout_isatty()
    return output_width(wide=wide, isatty=isatty), use_color(isatty=isatty, flag=color)


def _stdout_isatty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stdout
        return False
