"""JSON for machines: deterministic (same input → same bytes), no wall-clock values."""

from __future__ import annotations

import json
from json.encoder import encode_basestring as _quote  # the stdlib's (C-accelerated) string quoting
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from logparse._version import __version__
from logparse.render.summary import clean


def document(analyses: Sequence[Any], errors: Sequence[dict[str, str]] = (), *, redact: bool = True) -> dict[str, Any]:
    """Secrets are masked unless redact=False; `redactions` counts them by kind (per file and in all)."""
    from collections import Counter

    from logparse.render.sanitize import clean_document, clean_summary

    files = [clean_summary(a, redact) for a in analyses]
    total: Counter[str] = Counter()
    for f in files:
        total.update(f["redactions"])
    doc: dict[str, Any] = {"logdiag_version": __version__, "files": files, "redactions": dict(sorted(total.items()))}
    if errors:
        doc["input_errors"] = clean_document(clean(list(errors)), redact)[0]
    return doc


def dumps(obj: Any) -> str:
    return json.dumps(clean(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render(analyses: Sequence[Any], errors: Sequence[dict[str, str]] = (), *, redact: bool = True) -> str:
    # `document` is JSON-safe already (each part went through `clean`, and the sanitizer's copy
    # keeps it so): no second walk of a document that holds every error and finding.
    return pretty(document(analyses, errors, redact=redact)) + "\n"


def write(analyses: Sequence[Any], stream: Any, errors: Sequence[dict[str, str]] = (), *,
          redact: bool = True) -> None:
    """`render`'s text written to `stream` (a text file) as it is made, in chunks of about
    `_CHUNK` tokens: each file's long lists (findings, launches, errors, benchmarks) are built,
    sanitized and written one item at a time (`sanitize.summary_items`), so neither the document
    nor its sanitized copy is held whole (at a 1M-line corpus log the two held ~200 MB), nor its
    text (a token list, then one string: ~+220 MiB at a startup-heavy 1M-line log)."""
    from collections import Counter

    from logparse.render.sanitize import clean_document, summary_items

    total: Counter[str] = Counter()

    def counted(pairs: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
        for k, v in pairs:
            if k == "redactions":
                total.update(v)
            yield k, LazyList(v) if isinstance(v, Iterator) else v

    def document_pairs() -> Iterator[tuple[str, Any]]:
        # `document`'s keys in its order; `redactions` is asked for after every file was written
        yield "logdiag_version", __version__
        yield "files", LazyList(LazyObject(counted(summary_items(a, redact))) for a in analyses)
        yield "redactions", dict(sorted(total.items()))
        if errors:
            yield "input_errors", clean_document(clean(list(errors)), redact)[0]

    stream_value(LazyObject(document_pairs()), stream)


def stream_value(value: Any, stream: Any) -> None:
    """`pretty(value)` and a line break written to `stream` in chunks of about `_CHUNK` tokens."""
    out = _Chunks(stream.write)
    _value(value, out, "\n")
    out.append("\n")
    out.flush()


class LazyList:
    """A JSON array whose items are made while it is written (used up once)."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


class LazyObject:
    """A JSON object whose (key, value) pairs are made while it is written (used up once)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: Iterable[tuple[Any, Any]]) -> None:
        self.pairs = pairs


# Tokens held before a write: a few hundred KiB of text, few enough writes to cost nothing.
_CHUNK = 8192


class _Chunks(list):  # type: ignore[type-arg]  # a list of str; `_value` appends to it
    """The token list of `_value`, emptied into `sink` every `_CHUNK` tokens (checked by
    `_value` between items, so appends stay the list's own C method)."""

    __slots__ = ("sink",)

    def __init__(self, sink: Callable[[str], Any]) -> None:
        super().__init__()
        self.sink = sink

    def flush(self) -> None:
        if self:
            self.sink("".join(self))
            self.clear()


def pretty(value: Any) -> str:
    """The same text as `json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)`.

    With `indent`, the stdlib encodes in Python through nested generators (a yield per token);
    this writes the same tokens into one list, scalars inline (~2x faster on a failure-heavy
    document). Strings are quoted by the stdlib's own `encode_basestring` (C when available);
    `tests/test_render_json_pretty.py` compares both on generated documents."""
    out: list[str] = []
    _value(value, out, "\n")
    return "".join(out)


def _float(value: float) -> str:
    if value != value or value in (_INF, -_INF):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return float.__repr__(value)


_INF = float("inf")


def _scalar(value: Any) -> str | None:
    """The token of a scalar in the stdlib's order of checks, else None (a container)."""
    if isinstance(value, str):
        return _quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    return None


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _quote(key)
    if isinstance(key, float):
        return _quote(_float(key))
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return _quote(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _value(value: Any, out: list[str], newline: str) -> None:
    """Append `value`'s text; `newline` is a line break plus the indent of the current level."""
    token = _scalar(value)
    if token is not None:
        out.append(token)
        return
    if isinstance(value, (list, tuple)):
        _items(value, out, newline)
    elif isinstance(value, dict):
        _pairs(value.items(), out, newline)
    elif isinstance(value, LazyList):
        _items(value.items, out, newline)
    elif isinstance(value, LazyObject):
        _pairs(value.pairs, out, newline)
    else:
        raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _items(items: Iterable[Any], out: list[str], newline: str) -> None:
    inner = newline + "  "
    sep = "[" + inner
    chunked = isinstance(out, _Chunks)
    for item in items:
        if chunked and len(out) > _CHUNK:
            out.flush()  # type: ignore[attr-defined]
        token = _scalar(item)
        if token is None:
            out.append(sep)
            _value(item, out, inner)
        else:
            out.append(sep + token)
        sep = "," + inner
    out.append("[]" if sep[0] == "[" else newline + "]")


def _pairs(pairs: Iterable[tuple[Any, Any]], out: list[str], newline: str) -> None:
    inner = newline + "  "
    sep = "{" + inner
    chunked = isinstance(out, _Chunks)
    for k, item in pairs:
        if chunked and len(out) > _CHUNK:
            out.flush()  # type: ignore[attr-defined]
        token = _scalar(item)
        if token is None:
            out.append(f"{sep}{_key(k)}: ")
            _value(item, out, inner)
        else:
            out.append(f"{sep}{_key(k)}: {token}")
        sep = "," + inner
    out.append("{}" if sep[0] == "{" else newline + "}")
