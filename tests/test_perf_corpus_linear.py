"""Analysis of the real corpus repeated (benchmark profile `corpus`) is linear: counted, not timed.

The corpus files concatenated hold ~150 launch attempts, each with its findings, tracebacks and
catalog lines; repeated 4x as often, a log has 4x the attempts *and* 4x the findings. A question
asked per attempt or per finding that scans the whole log (the attempt a line belongs to by a scan
of every attempt; the first traceback on a finding's lines by a scan of every traceback; an
attempt's answered request by a filter of the whole log's candidate list; NCCL terminates paired
by a scan of every terminate) then grows ~16x. Counted: logparse function calls, events handed
out by `ParsedLog.of`, and elements read from the shared catalog-candidate lists.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from logparse.parsing.candidates import Hits
from tests.test_perf_linear import counting

_SHARED = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "shared-dev"


class _CountedHits(Hits):
    """A code's candidates that count the elements iterated over (a bisected slice is not)."""

    counts: Counter[str] | None = None

    def __iter__(self) -> Any:
        for item in super().__iter__():
            if self.counts is not None:
                self.counts["candidate elements read"] += 1
            yield item


class _Derived(dict):  # type: ignore[type-arg]
    """`ParsedLog.derived` that wraps the candidate index's lists as they are stored."""

    counts: Counter[str] | None = None

    def __setitem__(self, key: str, value: Any) -> None:
        if key == "message_candidates":
            wrapped = {}
            for code, lines in value.items():
                counted = _CountedHits()
                counted.lines, counted.texts = lines.lines, lines.texts
                counted.counts = self.counts
                wrapped[code] = counted
            value = wrapped
        super().__setitem__(key, value)


def _corpus(path: Path, repeats: int) -> None:
    """The shared corpus files in name order, each ending in a newline, `repeats` times."""
    one = b""
    for f in sorted(_SHARED.glob("*.log")):
        data = f.read_bytes()
        one += data if data.endswith(b"\n") else data + b"\n"
    path.write_bytes(one * repeats)


def _analyse(path: Path) -> Counter[str]:
    from logparse.engine.core import analyze_log
    from logparse.parsing.pipeline import parse_file
    from logparse.render.json import render

    log = parse_file(str(path), jobs=1)
    with counting() as counts:
        derived = _Derived(log.derived)
        derived.counts = counts
        log.derived = derived
        render([analyze_log(log)], redact=True)
    return counts


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Counter[str], Counter[str]]:
    if not any(_SHARED.glob("*.log")):
        pytest.skip("no shared-dev corpus copy")
    folder = tmp_path_factory.mktemp("corpus-linear")
    warm, small, large = folder / "warm.log", folder / "small.log", folder / "large.log"
    _corpus(warm, 1)
    _corpus(small, 2)
    _corpus(large, 8)
    _analyse(warm)  # the catalog, grammar and lazy patterns are built once, not counted
    return _analyse(small), _analyse(large)


@pytest.mark.parametrize("primitive", ["logparse calls", "ParsedLog.of events", "candidate elements read"])
def test_repeated_corpus_grows_no_faster_than_the_input(counted: tuple[Counter[str], Counter[str]],
                                                        primitive: str) -> None:
    small, large = counted
    assert small[primitive] > 0, (primitive, small)
    # 4x the lines, attempts and findings: linear work grows ~4x; per-attempt scans grew ~8-16x.
    assert large[primitive] <= 4.8 * small[primitive], (primitive, small[primitive], large[primitive])


def test_launch_at_bisects_as_the_scan_did() -> None:
    """`launch_at` with the attempts' first lines answers as the scan of every attempt, for lines
    before, inside, between and after the attempts."""
    from types import SimpleNamespace

    from logparse.run.launches import disjoint_firsts, launch_at

    def attempt(first: int, last: int) -> Any:
        return SimpleNamespace(first_line=first, last_line=last,
                               contains=lambda n, a=first, b=last: a <= n <= b)

    for bounds in ([(1, 10)], [(1, 4), (5, 9), (10, 30)], [(3, 4), (8, 9), (20, 20)]):
        launches = [attempt(a, b) for a, b in bounds]
        firsts = disjoint_firsts(launches)  # type: ignore[arg-type]
        assert firsts == [a for a, _ in bounds]
        for line in range(-1, 35):
            assert launch_at(launches, line, firsts) is launch_at(launches, line), (bounds, line)  # type: ignore[arg-type]
    overlapping = [attempt(1, 10), attempt(5, 20)]
    assert disjoint_firsts(overlapping) is None  # type: ignore[arg-type]


def test_repeated_commands_are_split_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pasted session repeats its commands: each distinct command line is split by `shlex`
    once (`grammar.transform.startup.shell_split`), so 4x the repeats is not 4x the splits."""
    import shlex

    from logparse.grammar.transform import startup
    from logparse.parsing.pipeline import parse_file

    if not any(_SHARED.glob("*.log")):
        pytest.skip("no shared-dev corpus copy")
    calls = Counter[str]()
    original = shlex.split

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls["split"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(shlex, "split", counted)
    seen = []
    for repeats in (2, 8):
        path = tmp_path / f"r{repeats}.log"
        _corpus(path, repeats)
        clear = getattr(getattr(startup, "shell_split", None), "cache_clear", None)
        if clear is not None:
            clear()
        calls.clear()
        parse_file(str(path), jobs=1)
        seen.append(calls["split"])
    small, large = seen
    assert small > 0
    assert large <= 1.25 * small, (small, large)
