"""Cut fragments: a line that is the tail of a known message, or a cut piece of CPython's own
fixed traceback texts.

A pasted excerpt starts wherever the reader's selection started and a hard wrap (a terminal, a
web page) breaks a line at a column, so a log holds lines like `eted NCCL work: 1522788.` or
`vail mem=24.47 GB`: the end of a message whose start is on the line before or was never copied.
`grammar/sourcemsgs.py` knows the cut *heads* of the templates; this module knows their cut
*tails* (same templates: SGLang's and the libraries' files in `grammars/source-messages/`).

Safeguards: a tail must keep at least MIN_TAIL characters of literal text (values not counted),
MIN_TAIL_LETTERS of them letters, and the cut must fall inside a word (the fragment starts with a
letter or digit and so does the template's character before it): that is what a selection or a
column break does, while a whole message that happens to end like a longer one starts at a word
boundary. Values are compared as
masked numbers on both sides (`{}`), so a tail whose cut-off part held a value still matches.

Cost: the index (the templates reversed, sorted) is built on the first line that reaches it (or
read from the per-user cache); a lookup is one number mask, one reversal and one bisection.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache
from typing import Any

__all__ = ["is_cut_after_head", "is_cut_python_text", "is_cut_tail"]

MIN_TAIL = 12
MIN_TAIL_LETTERS = 8
MIN_HEAD = 12
# Candidates sharing a tail that are looked at (templates repeat across releases with other heads).
MAX_CANDIDATES = 16
HOLE = "{}"
_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|\d+(?:\.\d+)*")
_LETTER = re.compile(r"[A-Za-z]")

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
    from logparse.grammar.cache import content_key, read_data, write_data
    from logparse.grammar.sourcemsgs import _texts

    texts = [text for library in (False, True) for _, text in sorted(_texts(library).items())]
    key = content_key([f"cuttails{_CACHE_FORMAT}".encode(), *(t.encode("utf-8", "surrogatepass") for t in texts)])
    cached = read_data("cuttails", key)
    if (isinstance(cached, dict) and isinstance(cached.get("tails"), list) and isinstance(cached.get("heads"), dict)
            and all(isinstance(t, str) for t in cached["tails"])
            and all(isinstance(v, list) and all(isinstance(h, str) for h in v) for v in cached["heads"].values())):
        return cached
    lines = _template_lines(texts)
    built = {"tails": sorted({_masked(t)[::-1] for t in lines}), "heads": _heads_by_word(lines)}
    write_data("cuttails", key, built)
    return built


def _reversed_templates() -> list[str]:
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
    if len(body) < MIN_TAIL or not body[0].isalnum():
        return False
    query = _masked(body)
    rev = query[::-1]
    index = _reversed_templates()
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
