"""Which unanchored lines are the paste's own text rather than a program's output.

An unanchored line (`ParsedLog.unanchored`: no envelope, no capture tool's prefix, no message the
grammar knows, no record took it) can still be output — native code prints without an envelope
(`CUDA Error: an illegal memory access was encountered (…/prefill.cuh: line 2349)`) — or it can be
what the person who pasted the log wrote around it. This module decides the second from the
paste's structure only, never from a sentence's words:
- markdown: outside the fenced code blocks of a paste that fences its log (the prose between the
  blocks, an issue template's fields), an emphasised field name (`**Describe the bug** …`), a line
  holding an inline code span (`` I see `CUDA out of memory` ``), and the lines `classify` already
  calls markdown or a heading;
- code: a Python statement that passes a string (`logger.error("…")`, `raise RuntimeError("…")`,
  `assert x, "…"`), a compound statement's header (`if "CUDA out of memory" in str(e):`);
- a shell command typed without a prompt that prints or searches for text (`echo "…"`, `grep -n '…' log`)
  and the other commands `classify` knows.
A catalog message on such a line is quoted, not raised (`rules.context`)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping

from logparse.model.lazyre import lazy_compile
from logparse.parsing.classify import classify, paste_kind
from logparse.parsing.linetexts import lines_in_order

__all__ = ["is_code", "quoted_lines"]

# A code fence: its marker and the info string after it (`log`, `bash`, `python` …), if any.
_FENCE = lazy_compile(r"\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$")
# Markdown inside a line of prose: an emphasised field name at the start (`**Describe the bug**`,
# `__Note__`), an inline code span anywhere (`` `x` ``, not the ``` of a fence). (Not a list item's
# `- ` / `1. `: programs print lists too — sgl_kernel's `- ImportError: …` report lines.)
_MARKDOWN_LINE = lazy_compile(
    r"\s{0,3}(?:\*\*|__)\S[^*_]*(?:\*\*|__)"
    r"|.*(?<!`)`[^`\s][^`]*`(?!`)"
)
# A Python statement handing a string to a call, `raise` or `assert`: the string is the code's
# text, not a message a program printed.
_PYTHON_STATEMENT = lazy_compile(
    r"\s*(?:(?:raise|return|yield|await) +)?[A-Za-z_][\w.]*\(\s*(?:[rbfu]{1,2})?[\"']"
    r"|\s*assert +\S.*, *(?:[rbfu]{1,2})?[\"']"
    # a membership test on a string, the way code looks for an error's text: `if "…" in str(e):`
    r"|\s*(?:(?:el)?if|while) +(?:[rbfu]{1,2})?[\"'].*[\"'] +(?:not +)?in +\S.*:\s*$"
)
# A record quoted inside a line of words: a log envelope (SGLang's `[2025-03-08 12:29:12 TP0]`,
# torch's `[rank4]:[E304 12:54:52…`) or an exception line (`RuntimeError: …`, `torch.OutOfMemoryError:
# …`) after words a program did not print before it — a record starts its line, or follows its
# writer's prefix, which makes the line anchored. (Not on the lines of a writer's shape, below.)
_EMBEDDED_RECORD = lazy_compile(
    r".*?[\w,.;:!?)`'\"] +(?:\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}|\[rank\d+\]:"
    r"|(?:[a-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception)|Exception):(?: |$))"
)
# Kinds whose shape is a writer's record around the words (another logger's envelope, a test
# runner's report, a library's fixed advice, a warning's location): an embedded record there is
# that writer's message.
_WRITER_KINDS = frozenset({"foreign-logger", "test-runner", "library-text", "python-warning"})
# A command typed without a prompt that prints or searches for text.
_SHELL_TEXT_COMMAND = lazy_compile(r"\s*(?:echo|printf|grep|egrep|fgrep|zgrep|rg) +\S")


def _outside_fences(texts: Mapping[int, str], candidates: list[int], lines: list[int]) -> set[int]:
    """The `lines` outside the paste's fenced blocks (`candidates`: the lines that may be fences, in
    order), when its fences pair up unambiguously; otherwise none. A fence with an info string always
    opens a block; a bare one closes the open block or opens one. The fences before the first
    info-string fence are read backwards from it (the one just before it closes a block), so an
    excerpt that starts inside a block is read right; with bare fences only, an odd count leaves it
    unknown which side is code."""
    fences: list[tuple[int, str]] = []
    for no in candidates:
        m = _FENCE.match(texts.get(no, ""))
        if m is not None:
            fences.append((no, m[2]))
    if not fences:
        return set()
    first_info = next((i for i, (_, info) in enumerate(fences) if info), None)
    if first_info is None and len(fences) % 2:
        return set()
    # Which fences open a block: from the first info-string fence on, forwards; before it, backwards.
    start = first_info or 0
    opens: dict[int, bool] = {}
    open_block = False
    for no, info in fences[start:]:
        if open_block:
            if not info:  # (a fence with an info string cannot close a block: it is the block's text)
                opens[no] = False
                open_block = False
        else:
            opens[no] = True
            open_block = True
    closing = True
    for no, _ in reversed(fences[:start]):
        opens[no] = not closing
        closing = not closing
    # Each line is inside or outside by the last fence before it that opened or closed a block.
    marks = sorted(opens)
    outside: set[int] = set()
    for no in lines:
        i = bisect_right(marks, no) - 1
        if i < 0:
            # Before the first fence: inside when that fence closes a block (the excerpt starts in one).
            if opens[marks[0]]:
                outside.add(no)
        elif not opens[marks[i]] and marks[i] != no:
            outside.add(no)
    return outside


def is_code(text: str) -> bool:
    """Whether a line is a Python statement (a call or `raise`/`assert` handing a string, a compound
    statement's header): an indented one is a source line to the grammar, whoever quoted it."""
    return _PYTHON_STATEMENT.match(text) is not None or paste_kind(text) == "python-source"


def quoted_lines(texts: Mapping[int, str], unanchored: Iterable[int], asked: Iterable[int]) -> set[int]:
    """Which of the `asked` lines are unanchored lines that are the paste's own text (module doc):
    `unanchored` (numbers into `texts`) gives the fences; only the asked lines' shapes are read."""
    wanted = set(asked).intersection(unanchored)
    if not wanted:
        return set()
    # (The kept texts in line order, tested for the fence literals first: a lookup per unanchored
    # line costs a bisection in `LineTexts`, and most lines hold neither literal.)
    anchorless = unanchored if isinstance(unanchored, (set, frozenset)) else set(unanchored)
    fences = [no for no, t in lines_in_order(texts) if ("``" in t or "~~" in t) and no in anchorless]
    quoted = _outside_fences(texts, fences, sorted(wanted)) if fences else set()
    for no in wanted - quoted:
        text = texts.get(no, "")
        # (Each shape is tried only when the line holds its literal: native output can be many lines.)
        if (("`" in text or "**" in text or "__" in text) and _MARKDOWN_LINE.match(text)
                or ("'" in text or '"' in text) and _PYTHON_STATEMENT.match(text) or _SHELL_TEXT_COMMAND.match(text)
                or paste_kind(text) is not None):
            quoted.add(no)
        elif (("[" in text or "Error:" in text or "Exception:" in text) and _EMBEDDED_RECORD.match(text)
                and classify(text) not in _WRITER_KINDS):
            quoted.add(no)
    return quoted
