"""The unparsed-line path's shortcuts give the same answers as the plain work they skip, and
do the work once per distinct text (counts, never a clock)."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse.io import wrappers
from logparse.io.wrappers import Unwrapper
from logparse.parsing import coverage
from logparse.parsing.coverage import MAX_TEMPLATE_CHARS, Coverage, template_of

# The masks applied one by one, without the checks that skip one that cannot match:
# coverage's own patterns (one owner); what the shortcuts skip is checked against applying each.
_PLAIN_MASKS = coverage._MASKS


def _plain_template(text: str) -> str:
    t = text[: MAX_TEMPLATE_CHARS * 2]
    for pattern, repl in _PLAIN_MASKS:
        t = pattern.sub(repl, t)
    return " ".join(t.split())[:MAX_TEMPLATE_CHARS]


def test_the_masks_are_coverages_own() -> None:
    assert [(p.pattern, r) for p, r in coverage._MASKS] == [(p.pattern, r) for p, r in _PLAIN_MASKS]


@pytest.mark.parametrize("text", [
    "loaded /models/x/y.safetensors at 0x7f00aa in 1.25 s from 10.0.0.7:30000",
    "addr 0x1F and deadbeefcafe00 and -3.5e2",
    "no digits here at all",
    "/a/b",
    "1.2.3.4 1.2.3 0x 0xg /x",
    "",
])
def test_template_of_equals_the_plain_masks(text: str) -> None:
    assert template_of(text) == _plain_template(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789abcdefx./:- _AZ", max_size=80))
def test_template_of_equals_the_plain_masks_on_any_text(text: str) -> None:
    assert template_of(text) == _plain_template(text)


def test_each_distinct_text_is_classified_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = coverage.classify

    def counting(text: str) -> str | None:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(coverage, "classify", counting)
    cov = Coverage()
    lines = ["processed batch 7 in 0.3s", "Requirement already satisfied: x in /y", "processed batch 7 in 0.3s"] * 50
    for no, text in enumerate(lines, 1):
        cov.add_unparsed(no, text)
    assert sorted(set(calls)) == sorted(calls)  # each text once
    assert cov.unparsed == 100 and cov.classified == {"pip": 50}
    assert cov.first_line == {"processed batch <n> in <n>s": 1}


def test_the_memo_is_bounded_and_not_pickled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coverage, "MEMO_ENTRIES", 10)
    cov = Coverage()
    for no in range(1, 40):
        cov.add_unparsed(no, f"line number {no} of a log")
    cov.add_unparsed(40, "x" * (coverage.MEMO_TEXT_CHARS + 1))
    assert len(cov._memo) <= 10
    assert all(len(t) <= coverage.MEMO_TEXT_CHARS for t in cov._memo)
    back = pickle.loads(pickle.dumps(cov))
    assert back._memo == {} and back.templates == cov.templates and back.unparsed == 40


class _PlainOrder:
    """_match_prefix's ISO-stamp branch as it was: rust tracing tried first on every such line."""

    @staticmethod
    def prefix(s: str) -> tuple[str, int] | None:
        m = wrappers._RUST_RE.match(s)
        if m:
            return "rust-tracing", m.end()
        m = wrappers._ISO_RE.match(s)
        return ("iso", m.end()) if m else None


@pytest.mark.parametrize("line", [
    "2025-11-05T01:56:54.292138Z  INFO dynamo_runtime::x: started",
    "2025-11-05T01:56:54.292138Z ERROR dynamo_llm::y",
    "2025-11-05T01:56:54.292138Z          WARN   far::away: many spaces",
    "2025-11-05T01:56:54.123456789Z [2025-11-05 01:56:54 TP0] Decode batch",
    "2025-11-05T01:56:54+05:30 DEBUG a::b: c",
    "2025-11-05T01:56:54+0530 Ignore this",
    "2025-11-05T01:56:54 E",
    "2025-11-05T01:56:54",
    "2025-11-05T01:56:54Zx",
])
def test_rust_tracing_is_found_as_when_tried_first(line: str) -> None:
    got = wrappers._match_prefix(line)
    plain = _PlainOrder.prefix(line)
    if plain is None:
        assert got is None or got[0] not in ("rust-tracing", "iso-timestamp", "k8s")
    elif plain[0] == "rust-tracing":
        assert got is not None and got[0] == "rust-tracing" and got[8] == plain[1]
    else:
        assert got is not None and got[0] in ("iso-timestamp", "k8s") and got[8] == plain[1]


@pytest.mark.parametrize("line", [
    "sglang-1  | [2026-04-14 09:16:40 TP0] Decode batch, #running-req: 1",
    "(SchedulerActor pid=42) [2026-04-14 09:16:40 TP0] Prefill batch",
    "2026-04-14T09:16:40.123456789Z [2026-04-14 09:16:40] INFO:     ready",
    "2026-04-14T09:16:40.123Z sglang-1  | [2026-04-14 09:16:40] nested",
    "2025-06-18 13:43:34 ERROR 31423 [ TP6 PP0 scheduler.py:2547] Scheduler hit an exception",
    "2025-02-26 15:44:36,973 - INFO - flashinfer.jit: Loading JIT ops",
    "Nov 05 01:56:54.292 INFO padded line   ",
])
def test_one_prefix_lines_unwrap_as_nested_ones_do(line: str) -> None:
    # The one-prefix shortcut and the general loop agree: the same line through a fresh
    # Unwrapper twice (the second a cache hit) and with a markdown quote around it (the loop).
    w1, rest1 = Unwrapper()(line)
    u = Unwrapper()
    u(line)
    assert u(line) == (w1, rest1)
    wq, restq = Unwrapper()("> " + line)
    assert restq == rest1
    if w1 is not None:
        assert wq is not None and (wq.kind, wq.ts, wq.stream, wq.level) == (w1.kind, w1.ts, w1.stream, w1.level)
