"""Cut lines: what is left of a known line where an excerpt ended or a hard wrap fell
(`coverage` kind `cut-line`, asked by `parsing/classify.py`).

A pasted excerpt starts wherever the reader's selection started and a hard wrap (a terminal, a
web page) breaks a line at a column, so a log holds lines like `eted NCCL work: 1522788.`,
`vail mem=24.47 GB`, `I0421 09:34:39.701891  4670 rd` or `The above exception was the direct
cause of th`. Known starts: envelopes (SGLang's, glog's, torch's C++ prefix, router's, dated ones,
NCCL's, uvicorn's), CPython's traceback texts, frame lines; known messages: the templates of
`grammars/source-messages/` (SGLang's and the libraries'), cut in their head (`grammar/sourcemsgs.py`),
after their head (inside a value or a later piece) or at their start (their *tail*, here).

Safeguards: a tail must keep at least MIN_TAIL characters of literal text (values not counted),
MIN_TAIL_LETTERS of them letters, and the cut must fall inside a word (the fragment starts with a
lowercase letter and the template's character before it is a letter or digit): that is what a
selection or a column break does, while a whole message that happens to end like a longer one
starts at a word boundary. Values are compared as masked numbers on both sides (`{}`), so a tail whose cut-off part
held a value still matches. A head must be at least MIN_HEAD characters of two words. An envelope
cut anywhere must still hold its distinctive anchor whole (a lone word is never a cut envelope).

Cost: the index (the templates reversed, sorted; the heads by first word) is built on the first
line that reaches it (or read from the per-user cache); a tail lookup is one number mask, one
reversal and one bisection, a head lookup one dict lookup and a few `startswith`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache
from typing import Any

from logparse.grammar.sourcemsgs import is_cut_library_message, is_cut_source_message
from logparse.model.lazyre import lazy_compile

__all__ = ["is_cut_after_head", "is_cut_envelope", "is_cut_late", "is_cut_python_text", "is_cut_tail"]

MIN_TAIL = 12
MIN_TAIL_LETTERS = 8
MIN_HEAD = 12
# Candidates sharing a tail that are looked at (templates repeat across releases with other heads).
MAX_CANDIDATES = 16
HOLE = "{}"
_NUMBER = lazy_compile(r"0x[0-9A-Fa-f]+|\d+(?:\.\d+)*")
_LETTER = lazy_compile(r"[A-Za-z]")

# CPython's fixed texts around a traceback (traceback.py, faulthandler), `{}` for a value. They are
# the runtime's, not a package's, so no source-message file holds them.
PYTHON_TEXTS = (
    "Traceback (most recent call last):",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
    "Current thread {} (most recent call first):",
    "Thread {} (most recent call first):",
    "Stack (most recent call first):",
)


def _masked(text: str) -> str:
    """Numbers as holes: a template's literal numbers and a line's values compare alike."""
    return _NUMBER.sub(HOLE, text.replace("{{", "{").replace("}}", "}"))


# Bump when the masked form or the templates taken change (the cached index would be stale).
_CACHE_FORMAT = 3


def _template_lines(texts: list[str]) -> list[str]:
    out = list(PYTHON_TEXTS)
    for text in texts:
        out.extend(t.strip() for t in text.splitlines() if t.strip() and not t.startswith("# "))
    return out


def _heads_by_word(lines: list[str]) -> dict[str, list[str]]:
    """The literal text before the first value of each template that has one, by its first word:
    at least MIN_HEAD characters of two words or more (`Uvicorn running on `)."""
    heads: dict[str, set[str]] = {}
    for t in lines:
        if "{{" in t:
            continue  # a literal brace: the first `{}` may not be the first value
        i = t.find(HOLE)
        head = t[:i] if i > 0 else ""
        if len(head.strip()) >= MIN_HEAD and " " in head.strip():
            heads.setdefault(head.split(" ", 1)[0], set()).add(head)
    return {word: sorted(h) for word, h in heads.items()}


@cache
def _index() -> dict[str, Any]:
    """The masked templates reversed and sorted (`tails`) and the templates' heads by first word
    (`heads`), from the per-user cache when it was built from these very files (building takes
    ~80 ms of a run that meets such a line, loading a few ms)."""
    # The same files `grammar/sourcemsgs.py` indexes (SGLang's and every library's).
    from logparse.grammar.cache import files_key, read_data, write_data
    from logparse.grammar.sourcemsgs import template_paths, template_texts

    def texts() -> list[str]:
        return [text for library in (False, True) for _, text in sorted(template_texts(library).items())]

    tag = f"cuttails{_CACHE_FORMAT}"
    paths = [path for library in (False, True) for _, path in sorted(template_paths(library).items())]
    key = files_key(tag, paths, lambda: [tag.encode(), *(t.encode("utf-8", "surrogatepass") for t in texts())])
    cached = read_data("cuttails", key)
    if (isinstance(cached, dict) and isinstance(cached.get("tails"), list) and isinstance(cached.get("heads"), dict)
            and all(isinstance(t, str) for t in cached["tails"])
            and all(isinstance(v, list) and all(isinstance(h, str) for h in v) for v in cached["heads"].values())):
        return cached
    lines = _template_lines(texts())
    built = {"tails": sorted({_masked(t)[::-1] for t in lines}), "heads": _heads_by_word(lines)}
    write_data("cuttails", key, built)
    return built


def reversed_templates() -> list[str]:
    tails: list[str] = _index()["tails"]
    return tails


def is_cut_after_head(text: str) -> bool:
    """Whether `text` starts with the whole literal head of a template that has values and stops
    before the template's end (cut inside a value or a later piece: `Uvicorn running on
    http://0.0.0.0:9254 (Press CTRL+C to qui`). A line that is the whole message was matched as one
    already; one that stops inside the head is `sourcemsgs`' cut prefix."""
    body = text.strip()
    i = body.find(" ")
    if i < 0 or len(body) <= MIN_HEAD:
        return False
    heads: list[str] | None = _index()["heads"].get(body[:i])
    return heads is not None and any(len(body) > len(head) and body.startswith(head) for head in heads)


def is_cut_tail(text: str) -> bool:
    """Whether `text` is the end of a known message cut inside a word (`ected all trees`)."""
    body = text.strip()
    # A cut inside a word leaves the word's lowercase rest first (`ected`, `vail`, `ormers`); a
    # number there would be masked anyway.
    if len(body) < MIN_TAIL or not body[0].islower():
        return False
    query = _masked(body)
    rev = query[::-1]
    index = reversed_templates()
    i = bisect_left(index, rev)
    n = len(rev)
    for candidate in index[i:i + MAX_CANDIDATES]:
        if not candidate.startswith(rev):
            return False
        # The template goes on before the fragment, and the character before it is inside a word.
        if len(candidate) > n and candidate[n].isalnum():
            return _enough_left(query)
    return False


def _enough_left(query: str) -> bool:
    # What is left of the message is its literal text: the values (holes) do not count.
    return (len(query) - len(HOLE) * query.count(HOLE) >= MIN_TAIL
            and len(_LETTER.findall(query)) >= MIN_TAIL_LETTERS)


@cache
def _python_heads() -> tuple[str, ...]:
    return tuple(sorted(_masked(t) for t in PYTHON_TEXTS))


# The first characters of each text: a line that starts otherwise is refused before it is masked.
_STARTS = 3
_PYTHON_STARTS = frozenset(t[:_STARTS] for t in PYTHON_TEXTS)


def is_cut_python_text(text: str) -> bool:
    """Whether `text` is the cut head of one of CPython's fixed traceback texts
    (`The above exception was the direct cause of th`)."""
    body = text.strip()
    if len(body) < MIN_HEAD or body[:_STARTS] not in _PYTHON_STARTS or " " not in body:
        return False
    query = _masked(body)
    return any(head.startswith(query) and head != query for head in _python_heads())


# What is left of an SGLang envelope cut at the end of an excerpt: `[2025-`, `[2025-05-14 12:0`,
# or the whole envelope and nothing after it (`[2025-10-06 20:05:27 DP5 TP5]`).
# Other envelopes and heads cut where an excerpt ends: a uvicorn access line after its level
# (`INFO:     11.251.218.2`), vLLM's and torch's C++ envelopes inside their file name
# (`ERROR 12-01 12:00:00 tp_worker_overlap_`, `[rank4]:[E304 12:54:52.123710302 ProcessGroup`), a
# progress bar before its percentage (`Loading safetensors checkpoint shards:`).
_CUT_HEAD = lazy_compile(
    r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):\s+[\w.:\[\]-]*\s*$"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2} \[?[\w.]*\s*$"
    # (torch's C++ prefix as the grammar takes it: `[rank4]:` or a launcher's `[Rank7]:`, and any
    # capital where the severity letter was once the date and time follow)
    r"|(?:\[[Rr]ank\d+\]:)?\[[A-Z]\d{3,4} \d{2}:\d{2}:\d{2}\.\d+(?: \d+)? [\w.]*\s*$"
    r"|(?:Loading (?:safetensors|pt|np_cache) checkpoint shards|Multi-thread loading(?: pt checkpoint)? shards"
    r"|Capturing batches \([^)]*\)|Capturing num tokens \([^)]*\)|Compiling num tokens \([^)]*\))\s*:?\s*$"
)
# A traceback frame line whose start a paste elided or cut (`…/srt/speculative/eagle_info.py", line
# 781, in merge_batch`): the end of `File "…", line N, in name`, the path's tail still there.
_CUT_FRAME = lazy_compile(r'\S*\.py", line \d+, in [\w<>.]+\s*$')
# uvicorn's level column (`INFO:     `, Python logging's levelname padded) before a message cut short,
# which is then looked up as a cut library or SGLang message (`INFO:     Uvicorn running on
# http://0.0.0.0:9254 (Press CTRL+C to qui`).
_LEVEL_COLUMN = lazy_compile(r"(?:TRACE|DEBUG|INFO|WARNING|ERROR|CRITICAL): +(?=\S)")
_CUT_ENVELOPE = lazy_compile(r"\[\d{1,4}(?:-\d{0,2}){0,2}(?: [\d:.,]*)?(?: (?:[A-Z]+_)?[A-Z]{1,3}\d*)*\]?\s*$")


# Envelopes cut where an excerpt or a hard wrap ends, as (anchor, envelope): the line holds the
# anchor whole (so a lone word is never taken for a cut envelope) and is a proper start of the
# envelope (`regex`'s partial matching, imported only when a line gets here). glog's / torch's
# `I0820 0`, sglang-router's `[Router (R`, a dated envelope (loguru's ` 2024-03-03 15:15:25 | INF`,
# Rust tracing's `2025-10-07 23:32:33  INFO sglang_rou`, or the date-time alone), NCCL's own
# `host:183:183 [4] NCCL INF`, uvicorn's access line `INFO:     172.21.0.7:59180 - "PO`, a native
# backtrace frame cut in its path (` 7  /usr/local/lib/python`).
_LEVEL = r"(?:TRACE|DEBUG|INFO|SUCCESS|WARNING|WARN|ERROR|CRITICAL)"
_ENVELOPE_HEADS = (
    (r"[IWEF](?:\d{4})?\d{4} \d", r"[IWEF](?:\d{4})?\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [\w./-]+:\d+\] "),
    (r"\[Router \(", r"\[Router \((?:Python|Rust)\)\] "),
    # glibc's / UCX's backtrace frame (` 7  /usr/lib/libc.so.6(+0x1a07cd) [0x7f…]`) cut in its path
    (r"\d{1,3} +/", r"\d{1,3} +\S+\.so[\w.-]*\((?:[^()]|\(\))*\) \[0x[0-9a-f]+\]"),
    (r"\d{4}-\d{2}-",
     rf"\d{{4}}-\d{{2}}-\d{{2}}[ T]\d{{2}}:\d{{2}}:\d{{2}}(?:[.,]\d+)?Z? +(?:\| +)?{_LEVEL}(?: +(?:\| +)?[\w:.-]*)?"),
    (r"[\w.-]+:\d+:\d+ \[\d+\] ", r"[\w.-]+:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|ERROR|TRACE|ABORT) "),
    (r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL): +(?:\d{1,3}\.){3}\d{1,3}:\d+ -",
     r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL): +(?:\d{1,3}\.){3}\d{1,3}:\d+ - \"[A-Z]+ \S+ HTTP/[\d.]+\" \d{3}"),
)


_HEAD_ANCHORS = lazy_compile("|".join(f"(?:{anchor})" for anchor, _ in _ENVELOPE_HEADS))


@cache
def _envelope_heads() -> tuple[tuple[re.Pattern[str], Any], ...]:
    import regex  # partial matching, which `re` has not; only once a line holds an anchor

    return tuple((re.compile(anchor), regex.compile(envelope)) for anchor, envelope in _ENVELOPE_HEADS)


def _is_cut_envelope_head(body: str) -> bool:
    if not _HEAD_ANCHORS.match(body):
        return False
    return any(anchor.match(body) and envelope.fullmatch(body, partial=True) is not None
               for anchor, envelope in _envelope_heads())


def _is_cut_message(body: str) -> bool:
    """A known message cut after its literal head, alone or after uvicorn's level column."""
    if is_cut_after_head(body):
        return True
    m = _LEVEL_COLUMN.match(body)
    if m is None:
        return False
    rest = body[m.end():]
    return is_cut_after_head(rest) or is_cut_library_message(rest) or is_cut_source_message(rest)


def is_cut_envelope(body: str) -> bool:
    """An SGLang envelope cut or alone, or another envelope / a progress bar cut at a known head
    (tried before the data shapes: `[2025-10-06 20:05:27 DP5 TP5]` is not a list)."""
    return bool(_CUT_ENVELOPE.match(body) or _CUT_HEAD.match(body))


def is_cut_late(body: str) -> bool:
    """Every other cut line, tried after all the shapes (the costlier checks): a library message's
    cut head, an envelope cut after its anchor, CPython's texts cut, a frame line cut at its start,
    a known message's cut tail, or one cut after its head."""
    return bool(is_cut_library_message(body) or _is_cut_envelope_head(body) or is_cut_python_text(body)
                or _CUT_FRAME.match(body) or is_cut_tail(body) or _is_cut_message(body))
