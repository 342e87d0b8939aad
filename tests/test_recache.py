"""Patterns rebuilt from the regex disk cache behave exactly like freshly compiled ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logparse.model import recache
from logparse.grammar.build import get_parser

SAMPLES = [
    "[2026-03-07 15:31:10 TP0] Decode batch, #running-req: 32, #token: 25316",
    'INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK',
    "Capturing batches (bs=1 avail_mem=7.26 GB): 100%|██| 36/36 [00:06<00:00,  5.77it/s]",
    "ValueError: é ü 日本",
    "",
]


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(recache, "_cache", None)
    monkeypatch.setattr(recache, "_dirty", False)
    return tmp_path


def test_round_trip_through_disk(fresh_cache: Path) -> None:
    parser = get_parser()
    parser.fast.compile_all()  # type: ignore[union-attr]
    patterns = [alt.regex.pattern for alts in parser.fast._alts.values() for alt in alts]  # type: ignore[union-attr]
    patterns += [r"(?P<A>\d+)|(?P<B>[a-z]+)", r"(?>(?P<k0>x+))y", r"^\[(\d{4})-(?:\d\d)\]$"]
    first = [recache.compile_cached(p) for p in patterns]
    recache.save()
    assert list(fresh_cache.glob("logdiag/regex-*.pickle")), "the cache was written"
    recache._cache = None  # a new process: read it back from disk
    second = [recache.compile_cached(p) for p in patterns]
    assert recache._cache and len(recache._cache) >= len(set(patterns))
    for p, a, b in zip(patterns, first, second, strict=True):
        c = re.compile(p)
        assert (b.pattern, b.flags, b.groups, b.groupindex) == (c.pattern, c.flags, c.groups, c.groupindex)
        for text in SAMPLES:
            for x in (a, b):
                mx, mc = x.match(text), c.match(text)
                assert (mx and (mx.span(), mx.groups(), mx.lastgroup)) == (mc and (mc.span(), mc.groups(), mc.lastgroup))


def test_disabled_or_broken_cache_falls_back(fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = recache._path()
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a pickle")
    assert recache.compile_cached(r"a(b)c").match("abc").group(1) == "b"  # type: ignore[union-attr]
    monkeypatch.setattr(recache, "_disabled", True)
    assert recache.compile_cached(r"x+").fullmatch("xxx")
