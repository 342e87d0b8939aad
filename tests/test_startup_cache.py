"""The first run after an install or an edit stays short: the per-user cache is keyed by contents
(never by file dates), and a non-strict lark build skips lark's terminal-collision check (~30 s of
CPU with interegular), which only a strict build acts on."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

_TINY = 'line: WORD ":" WORD\nunparsed_line: WORD\nWORD: /[a-z]+/\nNAME: /[a-z]+x/\n%ignore " "\n'


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "logdiag"


def test_the_cache_key_follows_contents_not_dates(cache_home: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.grammar import cache

    module = tmp_path / "keyed.py"
    module.write_text("A = 1\n", encoding="utf-8")
    monkeypatch.setattr(cache, "_KEYED_MODULES", (str(module),))
    first = cache._cache_path("grammar", False)
    assert first is not None
    os.utime(module, (1_000_000_000, 1_000_000_000))  # a reinstall or a checkout: new dates
    assert cache._cache_path("grammar", False) == first
    module.write_text("A = 2\n", encoding="utf-8")  # an edit: same size, new content
    assert cache._cache_path("grammar", False) != first
    assert cache._cache_path("grammar!", False) != cache._cache_path("grammar", False)
    assert cache._cache_path("grammar", True) != cache._cache_path("grammar", False)


def test_content_key_separates_parts() -> None:
    from logparse.grammar.cache import content_key

    assert content_key([b"ab", b"c"]) != content_key([b"a", b"bc"])
    assert content_key([b"ab", b"c"]) == content_key([b"ab", b"c"])
    assert content_key([]) != content_key([b""])


@pytest.mark.parametrize("strict", [False, True])
def test_only_a_strict_build_checks_terminal_collisions(strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import lark.lexer

    from logparse.grammar import build

    if not getattr(lark.lexer, "has_interegular", False):
        pytest.skip("interegular is not installed: lark never checks")
    checked: list[int] = []
    real = lark.lexer._check_regex_collisions

    def spy(*args: Any, **kwargs: Any) -> None:
        checked.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(lark.lexer, "_check_regex_collisions", spy)
    parser = build.build_lark(None, strict=strict, cache=False, text=_TINY)
    assert parser.parse("ab : cd", start="line") is not None
    assert bool(checked) == strict
    assert lark.lexer.has_interegular is True  # the switch is back for the next build


def test_a_failed_non_strict_build_restores_the_check() -> None:
    import lark.lexer

    from logparse.grammar import build

    if not getattr(lark.lexer, "has_interegular", False):
        pytest.skip("interegular is not installed")
    with pytest.raises(Exception):  # noqa: B017 — any lark grammar error
        build.build_lark(None, strict=False, cache=False, text="line: MISSING\nunparsed_line: MISSING\n")
    assert lark.lexer.has_interegular is True


def test_the_catalog_prefilter_finds_the_same_candidates_before_and_after_its_full_trie(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A short run uses the cheap trie of needle heads; a long one switches to the trie of whole
    needles after _FULL_TRIE_AFTER texts. Both must give the same candidates on every sample."""
    from logparse.grammar import messages

    shipped = messages.catalog()
    texts = [s for spec in shipped.specs.values() for s in spec.samples]
    texts += [t.upper() for t in texts] + [t[5:] for t in texts] + ["nothing here", ""]
    monkeypatch.setattr(messages, "_FULL_TRIE_AFTER", 2)
    cat = messages.Catalog(dict(shipped.specs))
    cat.candidates("warm-up")  # call 1: the heads' trie
    heads_only = cat._prefilter[0]
    early = [cat.candidates(t) for t in texts[:1]]  # call 2: the switch
    assert cat._prefilter[0] is not heads_only
    late = [cat.candidates(t) for t in texts]
    fresh = messages.Catalog(dict(shipped.specs))
    monkeypatch.setattr(messages, "_FULL_TRIE_AFTER", 10**9)
    assert [fresh.candidates(t) for t in texts] == late
    assert early == late[:1]
    assert all(spec.code in cat.candidates(s) for spec in shipped.specs.values() for s in spec.samples)
