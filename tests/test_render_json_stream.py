"""`render.json.write` streams analyze's JSON: the same text as `render`, written in chunks that
do not grow with the document (the whole text of a large log's document was held at once, as a
token list and then as one string, before it was written), and each file's long lists made one
item at a time while they are written (the document and its sanitized copy were held whole)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.render import json as render_json

_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                    st.floats(allow_nan=False, allow_infinity=False))
_DOCS = st.recursive(_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=8),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=8)),
                     max_leaves=200)


class _Recorder:
    def __init__(self) -> None:
        self.chunks: list[str] = []

    def write(self, text: str) -> int:
        self.chunks.append(text)
        return len(text)


def _streamed(doc: Any, monkeypatch: pytest.MonkeyPatch, chunk: int | None = None) -> _Recorder:
    if chunk is not None:
        monkeypatch.setattr(render_json, "_CHUNK", chunk)
    out = _Recorder()
    render_json.stream_value(doc, out)
    return out


@settings(max_examples=200, deadline=None)
@given(_DOCS)
def test_same_text_as_pretty_at_any_chunk_size(doc: Any) -> None:
    with pytest.MonkeyPatch.context() as mp:
        out = _streamed(doc, mp, chunk=3)
    assert "".join(out.chunks) == render_json.pretty(doc) + "\n"


def _findings(n: int) -> dict[str, Any]:
    return {"files": [{"path": "x.log", "findings": [
        {"code": f"E{i}", "lines": [i, i + 1], "evidence": [{"line": i, "text": "x" * 40}]} for i in range(n)]}]}


def test_largest_write_does_not_grow_with_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    largest = []
    for n in (2_000, 20_000):
        out = _streamed(_findings(n), monkeypatch)
        assert "".join(out.chunks) == render_json.pretty(_findings(n)) + "\n"
        largest.append(max(map(len, out.chunks)))
    # A bounded chunk: ten times the findings, not ten times the largest write.
    assert largest[1] < 1.5 * largest[0]
    assert largest[1] < 64 * render_json._CHUNK


def test_analyze_json_is_the_rendered_document(tmp_path: Path) -> None:
    from logparse.engine.core import analyze

    log = tmp_path / "run.log"
    log.write_text("[2026-04-14 10:00:00] server_args=ServerArgs(tp_size=2)\n"
                   "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                   "RuntimeError: CUDA error: out of memory\n", encoding="utf-8")
    a = analyze(str(log), jobs=1)
    buf = io.StringIO()
    render_json.write([a], buf)
    assert buf.getvalue() == render_json.render([a])


def _lazy(doc: Any, draw: Any) -> Any:
    """`doc` with some of its lists and objects replaced by lazy ones (made while written)."""
    if isinstance(doc, list):
        items = [_lazy(v, draw) for v in doc]
        return render_json.LazyList(iter(items)) if draw(st.booleans()) else items
    if isinstance(doc, dict):
        pairs = {k: _lazy(v, draw) for k, v in doc.items()}
        return render_json.LazyObject(iter(pairs.items())) if draw(st.booleans()) else pairs
    return doc


@settings(max_examples=200, deadline=None)
@given(_DOCS, st.data())
def test_lazy_lists_and_objects_write_the_same_text(doc: Any, data: st.DataObject) -> None:
    with pytest.MonkeyPatch.context() as mp:
        out = _streamed(_lazy(doc, data.draw), mp, chunk=3)
    assert "".join(out.chunks) == render_json.pretty(doc) + "\n"


def _oom_log(tmp_path: Path, attempts: int) -> Path:
    """Launch attempts that each fail the same way: a finding, a launch, an error apiece."""
    block = ("[2026-04-14 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)\n"
             "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
             "capacity of 79.19 GiB of which 1.00 GiB is free.\n")
    log = tmp_path / "run.log"
    log.write_text(block * attempts, encoding="utf-8")
    return log


def test_findings_are_made_while_written_not_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each finding's JSON is made just before it is written: when the n-th is made, the text
    written so far already holds all but the last few (at most one chunk of tokens held)."""
    from logparse.engine.core import analyze
    from logparse.render import summary

    a = analyze(str(_oom_log(tmp_path, 40)), jobs=1)
    assert len(a.findings) >= 20
    out = _Recorder()
    made: list[int] = []  # per finding made: how many findings' codes were written before it
    real = summary._finding_dict

    def spy(f: Any, merged: bool) -> dict[str, Any]:
        made.append("".join(out.chunks).count('"code": '))
        return real(f, merged)

    monkeypatch.setattr(summary, "_finding_dict", spy)
    monkeypatch.setattr(render_json, "_CHUNK", 4)
    render_json.write([a], out)
    assert len(made) == len(a.findings) + (a.root_cause is not None)
    # eager: every finding would be made before the first one is written (all zeros)
    lag = [i - w for i, w in enumerate(made[-len(a.findings):])]
    assert max(lag) <= 3, lag
    monkeypatch.setattr(summary, "_finding_dict", real)
    assert "".join(out.chunks) == render_json.render([a])
