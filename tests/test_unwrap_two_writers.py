"""Two writers' repeating prefixes interleaved (a Ray scheduler actor and a server actor, two
compose services) are both remembered: the prefix regexes run once per writer, not once every
other line, and the lines unwrap exactly as a fresh unwrapper (no memo) unwraps each of them."""

from __future__ import annotations

import pytest

from logparse.io import wrappers
from logparse.io.wrappers import Unwrapper

_SCHED = "(SchedulerActor pid=534, ip=10.0.1.15) [2026-04-14 11:54:{s:02d} TP0] Decode batch, #running-req: {n}"
_SERVER = '(ServerActor pid=1889, ip=10.0.1.15) [2026-04-14 11:54:{s:02d}] INFO:     10.0.6.12:{n} - "GET /health"'
_COMPOSE = "sglang-{k}  | [2026-04-14 09:21:{s:02d} TP0] Prefill batch, #new-seq: {n}"


def _lines(n: int) -> list[str]:
    out = []
    for i in range(n):
        out.append(_SCHED.format(s=i % 60, n=i))
        out.append(_SERVER.format(s=i % 60, n=40000 + i))
        out.append(_COMPOSE.format(k=i % 2, s=i % 60, n=i))
    # A third writer, an indented line and a non-envelope rest after a remembered prefix.
    out += ["(Other pid=7) [2026-04-14 11:54:00] x", "   indented", "(SchedulerActor pid=534, ip=10.0.1.15) not an envelope"]
    return out


def _prefix_calls(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    calls = 0
    real = wrappers._match_prefix

    def counted(s: str) -> object:
        nonlocal calls
        calls += 1
        return real(s)

    monkeypatch.setattr(wrappers, "_match_prefix", counted)
    u = Unwrapper()
    for line in lines:
        u(line)
    monkeypatch.setattr(wrappers, "_match_prefix", real)
    return calls


def test_interleaved_writers_match_their_prefix_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two Ray actors, and two compose services: the regexes run once per writer (they ran on
    # every other line: 2n calls), whatever the number of lines.
    for start in ("(S", "sglang-"):
        counts = [_prefix_calls([x for x in _lines(n) if x.startswith(start)], monkeypatch) for n in (20, 80, 320)]
        assert counts[0] == counts[-1] <= 4, (start, counts)


def test_interleaved_writers_unwrap_as_without_the_memo() -> None:
    lines = _lines(50)
    u = Unwrapper()
    for line in lines:
        assert u(line) == Unwrapper()(line), line
