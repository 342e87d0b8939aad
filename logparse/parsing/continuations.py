"""Lines known only by their neighbours: what `parsing/classify.py` (a line's text alone) cannot
tell, decided once the whole log is read (`Coverage.settle`), from the lines around each line the
grammar and classify() both left unknown.

Kinds (counted in `Coverage.classified`; the lines stay `Unparsed` for every other purpose, so
the rules still see a real error on a cut or wrapped line):
- `cut-line`: where a pasted excerpt ends, the selection often stops inside a word (`Fil`,
  `Assertio`, `(SGLan`, `… model size: 0.00 GB, av`). The log's last non-blank line — or the last
  one before a code fence or a shell prompt, where a paste block ends — is such a cut when its last
  word is known only as the start of a longer word (a word of the lines around it or of the
  source-message templates) and is no word itself. A line that is a strict prefix, cut inside a
  word, of the line before or after it (a viewer that cut a line and printed it again) is one too.
- `wrapped-continuation`: a terminal or a web page broke a long line at a fixed width, and its
  rest stands as a line of its own, starting mid-token (`_attention=False, enable_ep_moe=False, …`,
  `ed/incomplete data.`). The line before it is long (a wrap falls only past a terminal's width)
  and either opened a bracket it did not close (`server_args=ServerArgs(…`, a dict print) or
  stopped inside a token; this line starts inside one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping
from functools import cache

from logparse.model.lazyre import lazy_compile

__all__ = ["CUT_LINE", "WRAPPED", "context_kind", "is_cut_end", "is_cut_repeat", "opens_wrap"]

CUT_LINE = "cut-line"
WRAPPED = "wrapped-continuation"

# Words taken from the lines around a candidate (before and after): a cut last line repeats what
# the log printed just before it (every rank prints the same line), and a bounded window keeps a
# large log's one candidate cheap.
VOCABULARY_LINES = 400
# A cut last line is looked at only up to this length: an excerpt's last line cut by a selection
# is a fragment of one record line, and SGLang's longest ordinary records (a server_args dump
# aside, which ends in `)`) stay below it.
MAX_CUT_CHARS = 300
# A line repeated after its cut must keep this much of it (a short scrap is a prefix of many lines).
MIN_REPEAT_CHARS = 8
# A hard wrap falls only on a line at least this long (80 columns: the narrowest terminal a log is
# read in); shorter lines ended where their program ended them.
MIN_WRAP_WIDTH = 80

_WORD = lazy_compile(r"\w+")
_LAST_WORD = lazy_compile(r"[A-Za-z_]\w*$")
# Where a paste block ends: a markdown code fence, or a shell prompt (`$ cmd`, `root@host:~# cmd`).
_BLOCK_END = lazy_compile(r"\s*(?:`{3,}|~{3,})|(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:[^#$\s]*[#$](?: |$)|\$(?: |$)")
# A line that starts inside a token: the lowercase rest of a word, an identifier's underscore, a
# separator or a closing bracket of a repr (`, tokenizer_mode='auto'`, `)`, `'}`), a quote ending a string.
_STARTS_INSIDE = lazy_compile(r"[a-z_,)\]}'\".:=/-]")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
# A traceback frame's location line ends in the function's whole name: the line after it is the
# frame's source line (its indentation lost in a paste), never the rest of a wrap.
_FRAME_LINE = lazy_compile(r'.*\bFile "[^"]*", line \d+, in [\w<>.]+$')
_ALNUM_RUN = lazy_compile(r"[0-9A-Za-z]+$")
# A wrap inside a hash or an id (`…5e092ebca197cdcd8d8` + `b195040accf2…`): the run of letters and
# digits before the break is at least this long (a value such as `num_warps=4` ends in a short one).
MIN_ID_RUN = 8
# How far back a run of wrap-width lines is followed for the brackets it opened (a server_args dump
# wrapped at 80 columns is ~40 lines).
MAX_RUN = 64


@cache
def _template_words() -> tuple[frozenset[str], tuple[str, ...]]:
    """The words of the source-message templates (`parsing/fragments.py`'s index: SGLang's and
    every library's), as a set and sorted for prefix look-ups."""
    from logparse.parsing.fragments import HOLE, reversed_templates

    words: set[str] = set()
    for reversed_template in reversed_templates():
        words.update(_WORD.findall(reversed_template[::-1].replace(HOLE, " ")))
    return frozenset(words), tuple(sorted(words))


def _near_words(texts: Mapping[int, str], no: int) -> set[str]:
    words: set[str] = set()
    for k in range(max(1, no - VOCABULARY_LINES), no + VOCABULARY_LINES):
        text = texts.get(k)
        if text is not None and k != no:
            words.update(_WORD.findall(text))
    return words


def _starts_longer(word: str, words: set[str] | frozenset[str], ordered: tuple[str, ...] | None = None) -> bool:
    if ordered is not None:
        i = bisect_left(ordered, word)
        return any(w.startswith(word) and len(w) > len(word) for w in ordered[i:i + 2])
    return any(len(w) > len(word) and w.startswith(word) for w in words)


def is_cut_end(text: str, near: set[str] | Callable[[], set[str]]) -> bool:
    """Whether a log's (or a paste block's) last line stops inside a word: its last word is no
    word of the log around it (`near`) nor of the templates, but the start of one of them. A
    complete message ends in a whole word, a number or punctuation (`Killed`, `Aborted (core
    dumped)`, `… out of memory`); a number cut short cannot be told from a whole one, so a line
    that ends in a digit or a sign is left alone. (`near` may be a function: the words are then
    gathered only for a line that passes the cheaper tests.)"""
    body = text.strip()
    if not body or len(body) > MAX_CUT_CHARS or len(text.rstrip()) < len(text):
        return False  # (trailing blanks: the line ended, it was not cut)
    m = _LAST_WORD.search(body)
    if m is None:
        return False
    word = m.group()
    known, ordered = _template_words()
    if word in known:
        return False
    if callable(near):
        near = near()
    if word in near:
        return False
    return _starts_longer(word, near) or _starts_longer(word, known, ordered)


def is_cut_repeat(text: str, neighbour: str | None, min_chars: int = MIN_REPEAT_CHARS) -> bool:
    """Whether `text` is `neighbour`'s message cut inside a word (a viewer printed the line again
    whole): `neighbour` is the line as read, its envelope (a timestamp of its own) before the text.
    A piece shorter than MIN_REPEAT_CHARS (asked for a log's last line: `D` after `[…] Detected …`)
    must stand where the neighbour's message starts, right after its envelope."""
    if neighbour is None:
        return False
    body = text.strip()
    n = len(body)
    if n < min_chars or not body or not body[-1].isalnum():
        return False
    i = neighbour.find(body)
    while i >= 0:
        end = i + n
        head = neighbour[:i].rstrip()
        starts = i == 0 or (head.endswith("]") if n < MIN_REPEAT_CHARS else neighbour[i - 1] in " ]|:")
        if starts and end < len(neighbour) and neighbour[end].isalnum():
            return True
        i = neighbour.find(body, i + 1)
    return False


def _balance(text: str, depth: int) -> int:
    """Brackets left open after `text`, starting with `depth` open (never below 0; counted, not
    matched: a wrapped repr's pieces only need to tell whether its brackets are still open)."""
    if "(" not in text and "[" not in text and "{" not in text and depth == 0:
        return 0
    opened = text.count("(") + text.count("[") + text.count("{")
    closed = text.count(")") + text.count("]") + text.count("}")
    return max(0, depth + opened - closed)


def opens_wrap(prev: str) -> bool:
    """Whether a hard wrap may have broken `prev`: long enough, and no blank at its end (a wrap
    leaves none at the break: the rest goes on on the next line)."""
    return len(prev) >= MIN_WRAP_WIDTH and not prev[-1].isspace()


def _joins(prev: str, body: str) -> bool:
    """Whether `body` goes on with the token `prev` stopped in: a word's rest after a letter
    (`compl` + `eted`), digits after digits, an identifier's or a hash's rest after its digits
    (`…cdcd8d8` + `b195…`), anything after an identifier's `_` or a separator a repr or a command
    breaks at (`, `, `=`, `(`, `/`). A sentence's `.` ends a line, it does not break one."""
    last, first = prev[-1], body[0]
    if last.isalpha():
        return first.islower() or first.isdigit() or first == "_"
    if last.isdigit():
        # (a hash or an id: a run of letters and digits long enough not to be a value's number)
        run = _ALNUM_RUN.search(prev)
        token = run.group() if run is not None else ""
        return first.isdigit() or (first.isalnum() and len(token) >= MIN_ID_RUN and not token.isdigit())
    return last == "_" or (last in ",([{=:'\"/-" and _STARTS_INSIDE.match(body) is not None)


def _spaced(no: int, texts: Mapping[int, str], step: int) -> bool:
    """Whether a blank line, then a line, follows `no` in direction `step` (±1)."""
    return no + step not in texts and no + 2 * step in texts


def _before(no: int, texts: Mapping[int, str]) -> int | None:
    """The number of the line before `no`, or None. In a double-spaced paste (a blank line after
    every line: another such gap next to this one) the blank between them is skipped."""
    if no - 1 in texts:
        return no - 1
    k = no - 2
    return k if k in texts and (_spaced(no, texts, 1) or _spaced(k, texts, -1)) else None


def _after(no: int, texts: Mapping[int, str]) -> int | None:
    if no + 1 in texts:
        return no + 1
    k = no + 2
    return k if k in texts and (_spaced(no, texts, -1) or _spaced(k, texts, 1)) else None


def _run_depth(k: int, texts: Mapping[int, str], loose: Collection[int], memo: dict[int, int]) -> int:
    """The brackets open after line `k` in the run of wrap-width lines it ends: back through the
    lines that are no record of their own (`loose`: the ones classify() knew, a repr's pieces such
    as `name=value, …`) to the line that started the run (a parsed `server_args=ServerArgs(…`).
    Each line's answer is kept in `memo` (one pass over a run, however many lines ask)."""
    start = k
    while (start not in memo and start in loose and k - start < MAX_RUN and start - 1 in texts
           and opens_wrap(texts[start - 1])):
        start -= 1
    if start in memo:  # (k itself, or where an earlier look-up's pass stopped)
        depth = memo[start]
        start += 1
    else:
        depth = 0
    for j in range(start, k + 1):
        depth = memo[j] = _balance(texts[j], depth)
    return depth


def _wrapped(no: int, text: str, texts: Mapping[int, str], open_depth: dict[int, int],
             loose: Collection[int]) -> int | None:
    """The brackets still open after this line when it continues the line before it, or None."""
    k = _before(no, texts)
    prev = texts.get(k) if k is not None else None
    if k is None or prev is None or not text or text[0].isspace() or not opens_wrap(prev) or _FRAME_LINE.match(prev):
        return None
    # Inside brackets a wrap left open (a chain's, or the run's up to the line that opened them),
    # any piece of the repr goes on with it (`None, enable_torch_compile=False, …)`); otherwise the
    # break must fall inside a token.
    depth = _run_depth(k, texts, loose, open_depth)
    if depth > 0 or (_STARTS_INSIDE.match(text) is not None and _joins(prev, text)):
        return _balance(text, depth)
    return None


def _at_block_end(no: int, texts: Mapping[int, str], last_line: int) -> bool:
    if no == last_line:
        return True
    after = next((texts[k] for k in range(no + 1, min(no + 4, last_line + 1)) if k in texts), None)
    return after is not None and _BLOCK_END.match(after) is not None


def context_kind(no: int, text: str, enveloped: bool, texts: Mapping[int, str], last_line: int | None,
                 open_depth: dict[int, int], loose: Collection[int] = ()) -> str | None:
    """The kind of unknown line `no` (message `text`, after an envelope when `enveloped`: then it
    starts a record and continues none) from its neighbours in `texts` (line number → the line as
    read, its wrapper removed), or None. `open_depth` holds the brackets open after each line of a
    wrap chain or run looked at (the caller passes the same dict for the lines of one log, in order); `loose` holds
    the lines classify() knew (no record of their own: a wrapped repr's pieces may be among them)."""
    before, after = _before(no, texts), _after(no, texts)
    if ((after is not None and is_cut_repeat(text, texts[after]))
            or (before is not None and is_cut_repeat(text, texts[before]))):
        return CUT_LINE
    if last_line is not None and _at_block_end(no, texts, last_line) and (
            is_cut_end(text, lambda: _near_words(texts, no))
            or (before is not None and is_cut_repeat(text, texts[before], 1))):
        return CUT_LINE
    depth = None if enveloped else _wrapped(no, text, texts, open_depth, loose)
    if depth is not None:
        open_depth[no] = depth
        return WRAPPED
    return None
