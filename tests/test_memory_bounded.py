"""The hot columns are held once: counted, not measured.

Stage 1 appends every stats and access line to typed columns; a merge that copied them into the
log's own columns held them twice at the end of stage 1 (the peak RSS of a serving-heavy log grew
with the file at twice the column size). The columns a one-process parse returns are the ones
stage 1 filled (no `extend` at all); a split parse extends only by the parts after the first.
Peak RSS itself is never asserted here (a shared machine's allocator is not a measuring tape).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logparse.parsing import columns, pipeline


def _serving_log(path: Path, lines: int) -> None:
    """Decode, prefill and access lines on two ranks (every line a hot line)."""
    out = []
    for i in range(lines):
        s = i // 10
        ts = f"2026-04-14 10:{s // 60 % 60:02d}:{s % 60:02d}"
        if i % 3 == 0:
            out.append(f"[{ts} TP{i % 2}] Decode batch. #running-req: {i % 7}, #token: {100 + i}, "
                       "token usage: 0.05, cuda graph: True, gen throughput (token/s): 1234.56, #queue-req: 0, ")
        elif i % 3 == 1:
            out.append(f"[{ts} TP{i % 2}] Prefill batch. #new-seq: 1, #new-token: {i % 500}, #cached-token: 0, "
                       "token usage: 0.01, #running-req: 0, #queue-req: 0, ")
        else:
            out.append(f'[{ts}] INFO:     127.0.0.1:{40000 + i % 1000} - "POST /generate HTTP/1.1" 200 OK')
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture
def extends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for cls in (columns.StatsColumns, columns.AccessColumns):
        original = cls.extend

        def counted(self: Any, other: Any, _original: Any = original, _name: str = cls.__name__) -> None:
            if len(other):
                calls.append(_name)
            _original(self, other)

        monkeypatch.setattr(cls, "extend", counted)
    return calls


@pytest.mark.parametrize("lines", [2_000, 8_000])
def test_one_process_parse_keeps_stage1_columns(tmp_path: Path, extends: list[str], lines: int) -> None:
    path = tmp_path / "serving.log"
    _serving_log(path, lines)
    log = pipeline.parse_file(str(path), jobs=1)
    assert len(log.decode) + len(log.prefill) + len(log.access) == lines
    assert min(len(log.decode), len(log.prefill), len(log.access)) > 0
    assert extends == []  # no copy of any column, whatever the size


def test_split_parse_extends_only_by_later_parts(tmp_path: Path, extends: list[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "serving.log"
    _serving_log(path, 6_000)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1)
    split = pipeline.parse_file(str(path), jobs=2)
    parts = len(pipeline.split_points(str(path), 2, 1))
    assert parts == 2
    # Each kind: the first part's columns are taken over, the second part's appended.
    assert sorted(extends) == ["AccessColumns", "StatsColumns", "StatsColumns"]
    one = pipeline.parse_file(str(path), jobs=1)
    for kind in ("decode", "prefill", "access"):
        a, b = getattr(split, kind), getattr(one, kind)
        assert list(a.line) == list(b.line) and list(a.ts) == list(b.ts)
