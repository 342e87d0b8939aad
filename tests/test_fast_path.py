"""The fast path (regexes compiled from the grammar) gives exactly the LALR parser's events."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logparse.grammar.build import get_parser
from logparse.grammar.resources import grammar_text
from logparse.io.reader import ReadReport, read_lines
from logparse.model.events import (
    EVENT_CLASSES,
    BenchOneBatchResult,
    BenchServingResult,
    Traceback,
    Unparsed,
)
from tests.conftest import CORPUS, FIXTURES

FILES = sorted(CORPUS.glob("**/*.log")) + sorted(p for p in FIXTURES.glob("**/*.log") if "shared-dev" not in p.parts)


@pytest.fixture(scope="module")
def parser():  # type: ignore[no-untyped-def]
    return get_parser(strict=True)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(p.parents[1])) for p in FILES])
def test_fast_path_equals_lalr(parser, path: Path) -> None:  # type: ignore[no-untyped-def]
    report = ReadReport(path=str(path))
    mismatches = []
    fast_hits = 0
    for no, text, _wrapper in read_lines(str(path), report):
        fast = parser.fast.parse(text)
        lalr = parser.parse_lalr(text)
        if fast is not None:
            fast_hits += 1
            if fast != lalr:
                mismatches.append(f"line {no}: fast={fast!r}\n   lalr={lalr!r}\n   text={text!r}")
        assert parser.parse(text) == lalr
    assert not mismatches, "\n".join(mismatches[:5])


def test_fast_path_covers_the_hot_shapes(parser) -> None:  # type: ignore[no-untyped-def]
    """The lines that dominate real logs must not fall back to LALR (that is the point of it)."""
    hot = [
        ("[2026-03-07 15:31:10 TP0] Decode batch, #running-req: 32, #token: 25316, token usage: 0.06, "
         "cuda graph: True, gen throughput (token/s): 2876.45, #queue-req: 0"),
        ("[2026-04-05 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 1024, #cached-token: 0, token usage: 0.01, "
         "#running-req: 0, #queue-req: 0, cuda graph: False, input throughput (token/s): 88.41"),
        '[2026-02-26 16:40:58] INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK',
    ]
    for line in hot:
        assert parser.fast.parse(line) is not None, line


def test_every_alias_is_an_event_class(parser) -> None:  # type: ignore[no-untyped-def]
    """Grammar aliases (or rule names) and event classes match one to one (records and Unparsed
    have no grammar rule; the envelope rules produce no event)."""
    structural = {"line", "unparsed_line", "prefix", "unparsed_prefix"}
    produced = set()
    for rule in parser.lark.rules:
        name = rule.alias or rule.origin.name
        if rule.options.expand1 or name in structural or name.endswith("_prefix") or name.startswith("_"):
            continue
        produced.add(name)
    unknown = produced - set(EVENT_CLASSES)
    assert not unknown, f"grammar rules without an event class: {sorted(unknown)}"
    records = {c.kind for c in (Traceback, BenchServingResult, BenchOneBatchResult, Unparsed)}
    orphans = set(EVENT_CLASSES) - produced - records
    assert not orphans, f"event classes no grammar rule produces: {sorted(orphans)}"


def test_aliases_are_written_in_the_grammar() -> None:
    """Aliases in the grammar text name event classes (a typo would silently call no callback)."""
    aliases = set(re.findall(r"->\s*([a-z_][a-z0-9_]*)", grammar_text()))
    unknown = {a for a in aliases if not a.endswith("_prefix")} - set(EVENT_CLASSES)
    assert not unknown, sorted(unknown)


def test_learned_shapes_equal_lalr_on_long_runs() -> None:
    """Frequent lines get one-regex shapes and fused stats shapes (learned after 128 lines); the
    lines parsed through them must still equal LALR, including varied values and heads."""
    import random

    from logparse.grammar.build import LineParser
    from logparse.grammar.transform import LineTransformer

    parser = LineParser(LineTransformer())  # fresh: no shapes learned from other tests' lines
    rng = random.Random(0)
    lines = []
    for i in range(600):  # shapes are learned after 128 lines of a kind, fused ones 128 later
        lines.append(
            f"[2026-04-14 09:40:{i % 60:02d} TP0] Decode batch, #running-req: {rng.randint(1, 64)}, "
            f"#token: {rng.randint(100, 99999)}, token usage: {rng.random():.2f}, accept len: {1 + rng.random() * 3:.2f}, "
            f"accept rate: {rng.random():.2f}, cuda graph: {rng.choice(['True', 'False'])}, "
            f"gen throughput (token/s): {rng.random() * 3000:.2f}, #queue-req: {rng.randint(0, 9)}")
        lines.append(
            f"[2026-04-14 09:40:{i % 60:02d} TP1] Prefill batch [{i}], #new-seq: 1, #new-token: {rng.randint(1, 9000)}, "
            f"#cached-token: 0, token usage: 0.31, #running-req: 40, #queue-req: {rng.randint(0, 3)}, "
            f"cuda graph: True, input throughput (token/s): {rng.random() * 9000:.2f}")
        lines.append(f'[2026-04-14 09:40:{i % 60:02d}] INFO:     10.0.0.{i % 250}:5{i:04d} - "POST /generate HTTP/1.1" 200 OK')
        if i % 7 == 0:  # shapes must not swallow near-misses
            lines.append(f"[2026-04-14 09:40:{i % 60:02d} TP0] Decode batch, #running-req: {i}, cuda gra")
    for line in lines:
        assert parser.parse(line) == parser.parse_lalr(line), line
    assert parser.fast._shapes and parser.fast._stats_shapes  # type: ignore[union-attr]


def test_near_misses_are_decided_without_lalr() -> None:
    """A line whose first message terminal starts only flat alternatives, none of which matches,
    is `unparsed_line` in LALR too: the fast path decides it (lark is ~100x slower per line) and
    gives LALR's answer, with and without a prefix, for every first terminal of the grammar."""
    from logparse.grammar.build import LineParser
    from logparse.grammar.transform import LineTransformer

    parser = LineParser(LineTransformer())
    fast = parser.fast
    assert fast is not None
    lines = ["[2026-04-14 09:14:31 TP5] WARNING: request 25 aborted: client disconnected",
             "WARNING: request 25 aborted: client disconnected"]
    # Every flat alternative's head token followed by text no alternative expects.
    for src, _kept, _cb in (a for alts in fast.data.alternatives.values() for a in alts):
        m = re.match(r"\(\?>\(\?P<k0>((?:\\.|[A-Za-z ,:#])+)\)\)", src)
        if m:
            head = re.sub(r"\\(.)", r"\1", m.group(1))
            lines += [f"{head} ~~ zz", f"[2026-04-14 09:14:31 TP0] {head} ~~ zz"]
    decided = 0
    for line in lines:
        got = fast.parse(line)
        if got is not None:
            decided += 1
            assert got == parser.parse_lalr(line), line
    assert fast.parse(lines[0]) is not None and fast.parse(lines[1]) is not None
    assert decided >= len(lines) // 2


def test_shape_lookaheads_drop_only_terminals_that_cannot_match(parser) -> None:  # type: ignore[no-untyped-def]
    """A shape's negative lookahead lists only the earlier terminals that could match where the
    first terminal's literal prefix starts (`FastPathData.compatible`): on real lines, a dropped
    terminal never matches there; and a stats shape needs no lookahead at all."""
    fast = parser.fast
    data = fast.data
    assert data.compatible
    after = [(name, re.compile(regexp)) for name, regexp in data.after_prefix]
    checked = 0
    for path in FILES[::5]:
        for _no, text, _w in read_lines(str(path), ReadReport(path=str(path))):
            hit = fast._start.match(text, 0)
            pos = hit[2] if hit is not None and hit[0] in data.prefix else 0
            for first, keep in data.compatible.items():
                if not text.startswith(data.literal_prefixes[first], pos):
                    continue
                for name, regex in after:
                    if name != first and name not in keep:
                        checked += 1
                        assert regex.match(text, pos) is None, (first, name, text)
    assert checked > 1000
    from logparse.grammar.build import LineParser
    from logparse.grammar.transform import LineTransformer

    fresh = LineParser(LineTransformer()).fast
    assert fresh is not None
    line = ("[2026-03-07 15:31:10 TP0] Decode batch, #running-req: 32, #token: 25316, token usage: 0.06, "
            "cuda graph: True, gen throughput (token/s): 2876.45, #queue-req: 0")
    for _ in range(300):
        assert fresh.parse(line) == parser.parse_lalr(line)
    (shape,) = fresh._stats_shapes
    assert "(?!" not in shape.regex.pattern
