"""The fast path's per-text and per-character reuse (failure-heavy logs): a repeated non-hot line is
parsed once, a blank line tries no terminal, and shapes are kept per first character so that many
frequent line kinds keep theirs beside the stats and access shapes. Answers stay LALR's."""

from __future__ import annotations

import re
from typing import Any

from logparse.grammar.build import LineParser
from logparse.grammar.transform import LineTransformer

FRAMES = [
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3183, in run_scheduler_process',
    "    scheduler.event_loop_normal()",
    '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 1042, in event_loop_normal',
    "    result = self.run_batch(batch)",
    "             ^^^^^^^^^^^^^^^^^^^^^",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "",
]


def _fresh() -> LineParser:
    return LineParser(LineTransformer())  # no memo or shapes from other tests' lines


def _count_calls(obj: Any, name: str) -> list[int]:
    calls = [0]
    inner = getattr(obj, name)

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return inner(*args)

    setattr(obj, name, counted)
    return calls


def test_repeated_lines_are_dispatched_once() -> None:
    """Eight ranks print the same traceback 40 times: each distinct line is lexed once, every
    repeat gets the same answer as LALR (the texts are below the shape threshold: without the
    memo every line went through the dispatcher)."""
    parser = _fresh()
    fast = parser.fast
    assert fast is not None
    calls = _count_calls(fast._start, "match")
    lines = [f"[2026-04-14 09:15:{i % 60:02d} TP{i % 8}] Scheduler hit an exception: Traceback (most recent call last):"
             for i in range(40)]
    for _ in range(40):
        lines += FRAMES
    for line in lines:
        assert parser.parse(line) == parser.parse_lalr(line), line
    assert calls[0] <= 40 + len(FRAMES), calls[0]


def test_blank_line_tries_no_terminal() -> None:
    """Nothing matches at the end of a text (lark's lexer has no zero-width terminals): the
    dispatcher answers at once, without building the candidate list of every terminal."""
    parser = _fresh()
    fast = parser.fast
    assert fast is not None
    assert fast._start.match("", 0) is None
    assert fast._after_prefix.match("[2026-04-14 09:15:00 TP0] ", 26) is None
    assert "" not in fast._start._cands and "" not in fast._after_prefix._cands
    for text in ("", "[2026-04-14 09:15:00 TP0] "):
        assert parser.parse(text) == parser.parse_lalr(text)


def test_shapes_are_kept_per_first_character() -> None:
    """Stats, access, frames, source lines and NCCL lines, all frequent: each kind gets its shape
    (six shapes in all used to be the limit, so tracebacks and the hot lines evicted each other),
    and a line tries only the shapes of its first character."""
    parser = _fresh()
    fast = parser.fast
    assert fast is not None
    lines = []
    for i in range(400):
        ts = f"2026-04-14 09:{i // 60 % 60:02d}:{i % 60:02d}"
        lines += [
            f"[{ts} TP{i % 8}] Decode batch, #running-req: {i % 64}, #token: {1000 + i}, token usage: 0.{i % 90 + 10}, "
            f"cuda graph: True, gen throughput (token/s): {i * 3.5:.2f}, #queue-req: {i % 5}",
            f'[{ts}] INFO:     10.0.0.{i % 250}:5{i:04d} - "POST /generate HTTP/1.1" 200 OK',
            f'  File "/usr/lib/python3.12/site-packages/sglang/srt/m{i}.py", line {i + 10}, in f{i}',
            f"    result = self.run_batch(batch_{i})",
            f"node1:{600 + i}:{1800 + i} [{i % 8}] NCCL INFO Channel {i % 16:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM",
            f"RuntimeError: CUDA error: an illegal memory access was encountered ({i})",
            f"[rank{i % 8}]:   File \"/usr/lib/python3.12/site-packages/torch/d{i}.py\", line {i + 3}, in g",
        ]
    for line in lines:
        assert parser.parse(line) == parser.parse_lalr(line), line
    # One shape per kind (stats lines: their plain shape, which feeds the fused one).
    assert len(fast._shapes) >= 7, [s.regex.pattern[:40] for s in fast._shapes]
    assert fast._stats_shapes
    for char, shapes in fast._shapes_at.items():
        assert all(s.regex.pattern.startswith(f"(?={re.escape(char)})") for s in shapes)


class _CountingDict(dict):  # type: ignore[type-arg]
    asked = 0

    def get(self, key: Any, default: Any = None) -> Any:
        _CountingDict.asked += 1
        return super().get(key, default)


def test_hot_lines_are_not_looked_up_in_the_memo() -> None:
    """A line of a learned access (or fused stats) shape goes to the columns without its text
    being hashed for the memo: the memo is for non-hot lines."""
    from logparse.parsing.columns import AccessColumns, HotRows, decode_columns, prefill_columns

    parser = _fresh()
    fast = parser.fast
    assert fast is not None
    access = [f'[2026-04-14 09:40:{i % 60:02d}] INFO:     10.0.0.{i % 250}:5{i:04d} - "POST /generate HTTP/1.1" 200 OK'
              for i in range(600)]
    for line in access[:300]:  # learn the access shape
        assert parser.parse(line) == parser.parse_lalr(line)
    rows = HotRows(decode_columns(), prefill_columns(), AccessColumns(), lambda ts: 0.0)
    fast._memo = _CountingDict()
    _CountingDict.asked = 0
    for no, line in enumerate(access[300:]):
        assert fast.parse_hot(line, no, None, rows) is not None
    assert len(rows.access) == 300
    assert _CountingDict.asked == 0
