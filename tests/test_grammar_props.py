"""Property tests: no line crashes the grammar, and every input line is counted exactly once."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.grammar.build import get_parser
from logparse.model.events import EVENT_CLASSES
from logparse.parsing.pipeline import parse_file

# Text that looks like log lines: envelopes, known message heads, and noise.
PIECES = st.sampled_from([
    "[2026-03-07 15:31:10 TP0] ", "[2026-03-07 15:31:10] ", "[15:31:10 TP1] ", "[rank0]: ", "INFO:     ",
    "Decode batch, ", "Prefill batch. ", "#running-req: ", "32", ", ", "token usage: 0.5", "cuda graph: True",
    "Load weight begin. avail mem=", "GB", "Traceback (most recent call last):", '  File "x.py", line 3, in f',
    "RuntimeError: ", "Killed", "Capture cuda graph end. Time elapsed: ", "=====", " Serving Benchmark Result ",
    "Successful requests:", "   ", ":", "[", "]", "\t", "é", "\x00", "%", "|", "it/s]",
])
LINE = st.one_of(st.text(max_size=200), st.lists(PIECES, max_size=12).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINE.filter(lambda s: "\n" not in s and "\r" not in s))
def test_any_line_parses_to_an_event(line: str) -> None:
    parser = get_parser()
    _env, cls, kw = parser.parse(line)
    assert cls.kind in EVENT_CLASSES
    assert isinstance(kw, dict)
    # The fast path and LALR agree on arbitrary input too.
    assert parser.parse(line) == parser.parse_lalr(line)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(LINE, max_size=40), st.binary(max_size=64))
def test_every_line_counted_once(tmp_path: Path, lines: list[str], noise: bytes) -> None:
    path = tmp_path / "prop.log"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + noise)
    log = parse_file(str(path))
    cov = log.coverage
    assert cov.total == cov.recognized + cov.unparsed
    assert cov.total == log.report.lines
    assert cov.unparsed >= 0
