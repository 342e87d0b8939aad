"""A shell prompt glued after output that did not end its last line.

`curl` prints a JSON answer without a final newline, so the terminal's next prompt follows it on
the same line: `{"text":"", …,"e2e_latency":0.0797}}root@pod-7hls2:/# tail -f prefiller.log`.
The copy is one line; the reader gives the answer and the prompt (with what was typed at it) one
logical line each, with the same physical line number and wrapper, as it does for a record glued
after a progress bar.

The prompt is a bash prompt as shell.lark's SHELL_PROMPT takes it (`user@host:path# `, `[user@host
dir]$ `, a conda env's `(base) ` before either), right after the closing `}` or `]` of the output
(a JSON document, a list); not after a quote, where the "prompt" would be a string's own text.
"""

from __future__ import annotations

from logparse.io.readreport import Line, ReadReport
from logparse.model.lazyre import lazy_compile

__all__ = ["GLUED_PROMPT_PRECHECK", "split_glued_prompts"]

_PROMPT = (
    r"(?:\([\w.@+-]+\) +)?"
    r"(?:[a-z_][\w.-]{0,31}@[\w.-]{1,253}:[~/][^\s#$]{0,200}[#$]|\[[a-z_][\w.-]{0,31}@[\w.-]{1,253}(?: [^\]\s]+)?\][#$])"
    r"(?: |$)"
)
# Searched in a whole block: it starts at a literal, so the scan is fast where there is none.
GLUED_PROMPT_PRECHECK = lazy_compile(r"[}\]]" + _PROMPT)
_GLUED_PROMPT = lazy_compile(r"(?<=[}\]])" + _PROMPT)


def split_glued_prompts(lines: list[Line], report: ReadReport) -> list[Line]:
    """`lines` (one physical line's logical lines) with a glued prompt split off its output."""
    out: list[Line] = []
    for no, text, wrapper in lines:
        m = _GLUED_PROMPT.search(text)
        if m is None or m.start() == 0:
            out.append((no, text, wrapper))
            continue
        report.glued_splits += 1
        out.append((no, text[: m.start()], wrapper))
        out.append((no, text[m.start() :], wrapper))
    return out
