"""Messages as their source prints them: is an unparsed line one of SGLang's, or of a library's?

`grammars/source-messages/sglang.txt` holds the templates of every logging call, `print` (and
names bound to it), `warnings.warn`, stream write and logging wrapper of 20 SGLang releases
(0.1.20 … 0.5.23, test helpers included; `extract.py` there rebuilds it), `{}` marking a formatted
value; deep_gemm's and flashinfer's files also hold their shipped C/C++ headers' printf/std::cerr text. The other files there (`torch.txt`, `transformers.txt`, `uvicorn.txt`,
…) hold the same for the libraries SGLang runs on, whose output a real server log carries too
(each file's header names the wheels it was read from). A line the grammar has no rule for, but
whose text is one of these templates, is that program's informational output and counts as
recognized (`coverage.classify`: kinds `sglang-source`, `library-source`); it stays an `Unparsed`
line for everything else (no rule reads it, tracebacks may still claim it).

Safeguards (the same for every file): a line must match a whole template (or be the cut head of
one's literal start, at least MIN_CUT_PREFIX characters); a template that starts with a value is
tried only when a literal piece of at least MIN_FLOATING_PIECE characters is in the line; a template
whose literal text has fewer than MIN_LITERAL_ALNUM letters and digits (`{}: {}`, `Error {}`) is
dropped when the index is built.

Cost: only lines the grammar could not parse get here (rare lines), and the libraries' index is
built only when a line is not one of SGLang's. Building an index is one pass of string splits;
templates are grouped by their first word and compiled into one alternation per word on first use;
templates that start with a value are keyed by a whole word of their longest literal piece, so a
line looks up only the templates that share one of its words.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Callable
from functools import cache
from typing import Any

from logparse.grammar.resources import grammar_folder
from logparse.grammar.wordtrie import trie_regex
from logparse.model.lazyre import lazy_compile

__all__ = ["LibraryMessages", "SourceMessages", "is_cut_library_message", "is_cut_source_message",
           "is_library_message", "is_source_message", "library_messages", "source_messages",
           "template_paths", "template_texts"]

FOLDER = "source-messages"  # under the grammar folder
SGLANG = "sglang.txt"
HOLE = "{}"
# A line longer than this is not compared: a message is one line, a pasted blob is not, and the
# lazy gaps of a template must not meet an unbounded line.
MAX_LINE = 1000
# A floating template (one that starts with a value) needs a literal piece at least this long,
# else it would match too much (`{} is {}`).
MIN_FLOATING_PIECE = 12
# A cut line must keep at least this much of a template's head to count as that message.
MIN_CUT_PREFIX = 12
# A template must say something: this many letters and digits outside its holes (as extract.py).
MIN_LITERAL_ALNUM = 10
# A key word of a floating template: a whole word of its longest piece.
_WORD = lazy_compile(r"[A-Za-z0-9_]{4,}")
_WORD_CHAR = lazy_compile(r"[A-Za-z0-9_]")
_NOT_ALNUM = lazy_compile(r"[^A-Za-z0-9]+")


def _pieces(template: str) -> list[str]:
    """Literal pieces of a template, around its holes; `{{`/`}}` are literal braces."""
    raw = template.replace("{{", "\x01").replace("}}", "\x02")
    return [p.replace("\x01", "{").replace("\x02", "}") for p in raw.split(HOLE)]


def _regex(template: str) -> str:
    # A value never spans lines; it may be empty (`Loaded {} weights` with an empty name).
    return ".*?".join(re.escape(p) for p in _pieces(template))


def _first_word(text: str) -> str:
    i = text.find(" ")  # not split(): that would copy the rest of the line too
    return text if i < 0 else text[:i]


# The words of the last line looked up (`(text, words)`): classify asks SGLang's index and then the
# libraries' about the same line, and both key their floating templates by the line's words.
_last_words: tuple[str, list[str]] = ("", [])


def _words(text: str) -> list[str]:
    global _last_words
    last = _last_words
    if last[0] == text and text:
        return last[1]
    words = _WORD.findall(text)
    _last_words = (text, words)
    return words


def _alnum(pieces: list[str]) -> int:
    return len(_NOT_ALNUM.sub("", "".join(pieces)))


def _key_word(piece: str) -> str | None:
    """The longest word that is whole inside `piece` whatever the holes around it hold: a word at
    an edge of the piece may run on into the value next to it (`{}ing done`), so it is not used."""
    words = _WORD.findall(piece)
    if words and _WORD_CHAR.match(piece[0]) and piece.startswith(words[0]):
        words = words[1:]
    if words and _WORD_CHAR.match(piece[-1]) and piece.endswith(words[-1]):
        words = words[:-1]
    return max(words, key=len) if words else None


class SourceMessages:
    """The templates of one program, indexed for one lookup per unparsed line. Building the index
    is one pass of string splits (no regex is compiled until a line asks for its templates)."""

    def __init__(self, templates: list[str], index: dict[str, Any] | None = None) -> None:
        if index is not None:
            self._adopt(index)
            return
        by_word: dict[str, list[str]] = {}
        floating: dict[str, list[tuple[str, str]]] = {}  # key word -> (longest piece, template)
        unkeyed: list[tuple[str, str]] = []
        heads: list[str] = []
        for raw in templates:
            t = raw.strip()
            if not t or t.startswith("# "):
                continue
            if "{" not in t:
                if _alnum([t]) < MIN_LITERAL_ALNUM:
                    continue
                # A fixed message: its first word is literal and whole.
                by_word.setdefault(_first_word(t), []).append(t)
                heads.append(t)
                continue
            pieces = _pieces(t)
            if _alnum(pieces) < MIN_LITERAL_ALNUM:
                continue  # only values and punctuation: it would match anything of its shape
            head = pieces[0]
            if len(pieces) == 1 or " " in head:
                # The first word is literal and whole (`Registering {} cuda graph addresses`): a
                # line that starts with another word cannot be this one.
                heads.append(head.rstrip())
                by_word.setdefault(_first_word(head), []).append(t)
                continue
            if head.strip():
                heads.append(head.rstrip())
            # Starts with a value, or the first word runs into one (`Load{} …`): try it only when
            # its longest literal piece is in the line.
            longest = max(pieces, key=len)
            if len(longest.strip()) < MIN_FLOATING_PIECE:
                continue
            key = _key_word(longest)
            if key is None:
                unkeyed.append((longest, t))
            else:
                floating.setdefault(key, []).append((longest, t))
        heads.sort()
        self._adopt({"heads": heads, "by_word": by_word, "floating": floating, "unkeyed": unkeyed})

    def _adopt(self, index: dict[str, Any]) -> None:
        self._heads: list[str] = index["heads"]
        self._sources: dict[str, list[str]] = index["by_word"]
        self._floating: dict[str, list[tuple[str, str]]] = index["floating"]
        self._unkeyed: list[tuple[str, str]] = index["unkeyed"]
        self._compiled: dict[str, re.Pattern[str]] = {}
        self._floating_compiled: dict[str, re.Pattern[str]] = {}
        # The key words as a set: a line's words are intersected with it in one call.
        self._floating_keys = frozenset(self._floating)
        # The unkeyed templates by their longest piece (some share one): one `in` test per piece.
        unkeyed: dict[str, list[tuple[str, str]]] = {}
        for piece, template in self._unkeyed:
            unkeyed.setdefault(piece, []).append((piece, template))
        self._unkeyed_by_piece = list(unkeyed.items())
        # Any unkeyed piece, as one trie regex (built on the first lookup): most lines hold none,
        # and one C-level search tells so instead of a Python `in` test per piece (~100 between
        # SGLang's index and the libraries', ~8 µs a line of foreign text).
        self._unkeyed_any: re.Pattern[str] | None = None

    def index(self) -> dict[str, Any]:
        """The built index as plain data (JSON makes its pairs lists), for the per-user cache."""
        return {"heads": self._heads, "by_word": self._sources, "floating": self._floating,
                "unkeyed": self._unkeyed}

    @staticmethod
    def valid_index(data: Any) -> bool:
        """Whether cached data has the index's shape (a damaged or foreign file is rebuilt)."""
        def pairs(v: Any) -> bool:
            return isinstance(v, list) and all(
                isinstance(pt, list) and len(pt) == 2 and all(isinstance(x, str) for x in pt) for pt in v)

        return (isinstance(data, dict) and isinstance(data.get("heads"), list)
                and isinstance(data.get("by_word"), dict) and isinstance(data.get("floating"), dict)
                and all(isinstance(h, str) for h in data["heads"])
                and all(isinstance(v, list) and all(isinstance(t, str) for t in v) for v in data["by_word"].values())
                and all(pairs(v) for v in data["floating"].values()) and pairs(data.get("unkeyed")))

    def __len__(self) -> int:
        return (sum(len(v) for v in self._sources.values()) + sum(len(v) for v in self._floating.values())
                + len(self._unkeyed))

    def _for_word(self, word: str) -> re.Pattern[str] | None:
        pattern = self._compiled.get(word)
        if pattern is not None:
            return pattern
        sources = self._sources.get(word)
        if not sources:
            return None  # not a template's first word: nothing to compile, nothing to remember
        # Bounded by the index's first words (a junk word is never a key here).
        pattern = self._compiled[word] = re.compile("(?:" + "|".join(_regex(t) for t in sources) + r")\s*")
        return pattern

    def _floating_match(self, text: str, candidates: list[tuple[str, str]]) -> bool:
        for piece, template in candidates:
            if piece in text:
                rx = self._floating_compiled.get(template)
                if rx is None:
                    rx = self._floating_compiled[template] = re.compile(_regex(template) + r"\s*")
                if rx.fullmatch(text):
                    return True
        return False

    def match(self, text: str) -> bool:
        """Whether `text` (a message without its envelope) is one of the templates, whole."""
        text = text.strip()
        if not text or len(text) > MAX_LINE:
            return False
        pattern = self._for_word(_first_word(text))
        if pattern is not None and pattern.fullmatch(text):
            return True
        if self._floating:
            # Only the key words the line holds (usually none): a set intersection, in C.
            for word in self._floating_keys.intersection(_words(text)):
                if self._floating_match(text, self._floating[word]):
                    return True
        if self._unkeyed_by_piece:
            any_piece = self._unkeyed_any
            if any_piece is None:
                any_piece = self._unkeyed_any = trie_regex(piece for piece, _ in self._unkeyed_by_piece)
            if any_piece.search(text) is None:
                return False
            for piece, candidates in self._unkeyed_by_piece:
                if piece in text and self._floating_match(text, candidates):
                    return True
        return False

    def is_cut_prefix(self, text: str) -> bool:
        """Whether `text` is the start of a template's literal head, cut short (an excerpt that ends
        or a hard wrap that falls inside a message: `Ignore import error when lo`)."""
        text = text.strip()
        if len(text) < MIN_CUT_PREFIX or " " not in text:
            return False
        i = bisect_left(self._heads, text)
        return i < len(self._heads) and self._heads[i].startswith(text) and self._heads[i] != text


class LibraryMessages:
    """The templates of every library file: one index per package (to tell which package a line
    is from) and their union (one lookup per line whatever the number of packages: what
    `classify` asks)."""

    def __init__(self, packages: dict[str, list[str]]) -> None:
        self._set({name: SourceMessages(lines) for name, lines in packages.items()})

    @classmethod
    def of(cls, built: dict[str, SourceMessages]) -> LibraryMessages:
        """From indices built (or cached) already."""
        libs = cls({})
        libs._set(built)
        return libs

    def _set(self, built: dict[str, SourceMessages]) -> None:
        self.packages = dict(sorted(built.items()))
        by_word: dict[str, list[str]] = {}
        floating: dict[str, list[tuple[str, str]]] = {}
        unkeyed: list[tuple[str, str]] = []
        heads: list[str] = []
        for m in self.packages.values():
            index = m.index()
            for word, templates in index["by_word"].items():
                by_word.setdefault(word, []).extend(templates)
            for word, pairs in index["floating"].items():
                floating.setdefault(word, []).extend(pairs)
            unkeyed.extend(index["unkeyed"])
            heads.extend(index["heads"])
        heads.sort()
        self._all = SourceMessages([], {"heads": heads, "by_word": by_word, "floating": floating, "unkeyed": unkeyed})

    def __len__(self) -> int:
        return sum(len(s) for s in self.packages.values())

    def match(self, text: str) -> bool:
        """Whether `text` is one of any library's templates, whole."""
        return self._all.match(text)

    def which(self, text: str) -> str | None:
        """The package whose template `text` is, or None."""
        if not self._all.match(text):
            return None
        for name, messages in self.packages.items():
            if messages.match(text):
                return name
        return None

    def is_cut_prefix(self, text: str) -> bool:
        return self._all.is_cut_prefix(text)


# Bump when the index's cached form (SourceMessages.index) or the build's safeguards change.
_CACHE_FORMAT = 1


def _indices(read: Callable[[], dict[str, str]], paths: dict[str, str] | None = None) -> dict[str, SourceMessages]:
    """One index per template file (`read()`: the texts by package name), from the per-user cache
    when it was built from these very texts (building SGLang's and the libraries' ~13k templates
    takes ~0.1 s of a run that meets a line the grammar does not know; loading their JSON a few
    ms). The key is the content and this module's format number, never a file date; with the
    files' `paths` (name → path), `cache.files_key` spares reading unchanged files to compute it.
    Cached data of the wrong shape is rebuilt."""
    from logparse.grammar.cache import content_key, files_key, read_data, write_data

    tag = f"sourcemsgs{_CACHE_FORMAT}"

    def parts() -> list[bytes]:
        # zlib checksums (grammar/cache.content_key), not hashlib: hashlib loads OpenSSL at start-up.
        out = [tag.encode()]
        for name, text in sorted(read().items()):
            out += [name.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass")]
        return out

    key = content_key(parts()) if paths is None else files_key(tag, [paths[n] for n in sorted(paths)], parts)
    cached = read_data("sourcemsgs", key)
    names = sorted(paths) if paths is not None else sorted(read())
    if (isinstance(cached, dict) and sorted(cached) == names
            and all(SourceMessages.valid_index(v) for v in cached.values())):
        return {name: SourceMessages([], index) for name, index in cached.items()}
    texts = read()
    built = {name: SourceMessages(text.splitlines()) for name, text in texts.items()}
    if paths is None or key == content_key(parts()):  # the files did not change under the build
        write_data("sourcemsgs", key, {name: m.index() for name, m in built.items()})
    return built


@cache
def _all_template_paths() -> dict[str, str]:
    # os.path, not pathlib: pathlib (with urllib.parse and ipaddress) costs a short run's start-up.
    folder = os.path.join(grammar_folder(), FOLDER)
    if not os.path.isdir(folder):
        return {}
    return {name[: -len(".txt")]: os.path.join(folder, name)
            for name in sorted(os.listdir(folder)) if name.endswith(".txt")}


def template_paths(library: bool) -> dict[str, str]:
    """The template files' paths by package name: SGLang's alone, or every other one."""
    sglang = SGLANG[: -len(".txt")]
    return {name: path for name, path in _all_template_paths().items() if (name != sglang) == library}


@cache
def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def template_texts(library: bool) -> dict[str, str]:
    """The template files' texts by package name: SGLang's alone, or every other one (also read
    by `parsing/fragments.py` for its cut-tail index). Read once a process, and only when an index
    is (re)built or its key is not known yet."""
    return {name: _read(path) for name, path in template_paths(library).items()}


@cache
def source_messages() -> SourceMessages:
    """The templates of grammars/source-messages/sglang.txt (read once, on the first unparsed line)."""
    return _indices(lambda: template_texts(False), template_paths(False)).get(SGLANG[: -len(".txt")]) or SourceMessages([])


@cache
def library_messages() -> LibraryMessages:
    """The templates of the other files of grammars/source-messages/ (read once, on the first
    unparsed line that is not one of SGLang's messages)."""
    return LibraryMessages.of(_indices(lambda: template_texts(True), template_paths(True)))


def is_source_message(text: str) -> bool:
    return source_messages().match(text)


def is_cut_source_message(text: str) -> bool:
    return source_messages().is_cut_prefix(text)


def is_library_message(text: str) -> bool:
    return library_messages().match(text)


def is_cut_library_message(text: str) -> bool:
    return library_messages().is_cut_prefix(text)
