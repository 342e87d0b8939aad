"""Start-up stays cheap: which modules a short run imports (counted, not timed).

`logdiag analyze --format json` on a small log must not import the heavy optional libraries
(pandas, numpy, pyarrow, matplotlib, jinja2), lark (the fast path's data is cached), tomllib (the
message catalog's parsed TOML is cached) or the process pool (one small file stays in one
process); `check` without a configuration file and without --jobs work needs neither tomllib nor
multiprocessing. The first run in a fresh cache folder builds the caches (and may import lark);
the second run is the measured one, as for every start-up number in README "Performance"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

# Never imported by a warm short run of the commands below.
HEAVY = ("pandas", "numpy", "pyarrow", "matplotlib", "jinja2", "lark", "regex", "distributed", "dask")
# A short run in one process without a configuration file needs none of these either.
NOT_AT_START = ("tomllib", "multiprocessing", "concurrent", "socket", "csv")
# Nor does a short `analyze` need hashlib (it loads OpenSSL, ~10 ms): the caches are keyed with zlib
# checksums (grammar/cache.content_key). `check` does: its findings' fingerprints are sha256. Nor
# pathlib (with urllib.parse and ipaddress): the grammar and cache files are found with os.path.
NOT_IN_ANALYZE = ("hashlib", "_hashlib", "pathlib", "urllib", "ipaddress")

_PROBE = """
import contextlib, io, json, sys
from logparse.cli.main import main
sys.argv = ["logdiag", *json.loads(sys.argv[1])]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit as done:
        code = done.code
redact = sys.modules.get("logparse.render.redact")
print(json.dumps({"code": code, "modules": sorted(sys.modules), "out": len(out.getvalue()),
                  "redact_scanners": getattr(redact, "_SCANNERS", None) is not None}))
"""


def _small_log(tmp_path: Path) -> Path:
    """A 1,000-line log of the benchmark generator's default mix (the start-up target's input)."""
    path = tmp_path / "small.log"
    subprocess.run([sys.executable, "-m", "benchmarks.generate", str(path), "--lines", "1000", "-q"],
                   cwd=REPO, check=True, timeout=300)
    return path


def _probe(args: list[str], cache: Path, cwd: Path) -> dict[str, Any]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert doc["out"] > 0  # the command printed its result
    return doc


def _modules(args: list[str], cache: Path, cwd: Path) -> tuple[int, set[str]]:
    doc = _probe(args, cache, cwd)
    return doc["code"], {m.split(".")[0] for m in doc["modules"]}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("startup")
    cache = tmp / "cache"
    cache.mkdir(mode=0o700)
    log = _small_log(tmp)
    _modules(["analyze", str(log), "--format", "json"], cache, tmp)  # builds the caches
    return log, cache


@pytest.mark.parametrize("args", [["analyze", "{log}", "--format", "json"], ["analyze", "{log}"]])
def test_a_warm_short_analyze_imports_nothing_heavy(small: tuple[Path, Path], args: list[str]) -> None:
    log, cache = small
    code, modules = _modules([a.format(log=log) for a in args], cache, log.parent)
    assert code in (0, None)
    assert sorted(modules & set(HEAVY)) == []
    assert sorted(modules & set(NOT_AT_START)) == []
    assert sorted(modules & set(NOT_IN_ANALYZE)) == []


def test_a_short_analyze_compiles_no_redaction_scanner(small: tuple[Path, Path]) -> None:
    """The output of a healthy short log holds no secret-shaped text: the needle prefilter rules
    out every string, and the two full redaction regexes (~4 ms to compile) are never built.
    SGLang's and logdiag's own `token` wording with a number (`token usage: 0.12`, `#token: 87950`,
    `… / 48132 bytes per token = 17623 tokens`) is no needle."""
    log, cache = small
    doc = _probe(["analyze", str(log), "--format", "json"], cache, log.parent)
    assert doc["redact_scanners"] is False


def test_a_warm_short_check_imports_no_pool_and_no_toml(small: tuple[Path, Path]) -> None:
    log, cache = small
    code, modules = _modules(["check", str(log), "--format", "json", "--jobs", "1"], cache, log.parent)
    assert code in (0, 1)
    assert sorted(modules & set(HEAVY)) == []
    assert sorted(modules & set(NOT_AT_START)) == []


def test_the_probe_sees_imports(small: tuple[Path, Path]) -> None:
    """The probe is not blind: a command that needs the TOML parser (a configuration file) shows it."""
    log, cache = small
    config = log.parent / "logdiag.toml"
    config.write_text('fail-on = "error"\n', encoding="utf-8")
    try:
        _, modules = _modules(["check", str(log), "--format", "json", "--jobs", "1", "--config", str(config)],
                              cache, log.parent)
    finally:
        config.unlink()
    assert "tomllib" in modules


_ONE_ENTRY = '[[message]]\ncode = "x-y"\nneedles = ["abc"]\npatterns = ["abc"]\n'


def test_the_catalog_cache_is_used_and_a_damaged_one_is_parsed_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.grammar import messages

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts = [("t", _ONE_ENTRY)]
    assert list(messages._load_cached(texts).specs) == ["x-y"]
    (cached,) = (tmp_path / "logdiag").glob("messages-*.json")
    doc = json.loads(cached.read_text(encoding="utf-8"))
    assert doc["data"] == [["t", {"message": [{"code": "x-y", "needles": ["abc"], "patterns": ["abc"]}]}]]
    # A cache hit does not parse the TOML: a cached entry edited by hand (same key) shows up...
    doc["data"][0][1]["message"][0]["summary"] = "from the cache"
    cached.write_text(json.dumps(doc), encoding="utf-8")
    assert messages._load_cached(texts)["x-y"].summary == "from the cache"
    # ...and one that fails the checks is ignored: the TOML is parsed again and the file rewritten.
    doc["data"][0][1]["message"][0]["code"] = "BAD CODE"
    cached.write_text(json.dumps(doc), encoding="utf-8")
    assert list(messages._load_cached(texts).specs) == ["x-y"]
    assert "BAD CODE" not in cached.read_text(encoding="utf-8")
    # Another text is another key: never the old entry.
    other = [("t", _ONE_ENTRY.replace("x-y", "z-w"))]
    assert list(messages._load_cached(other).specs) == ["z-w"]


_COMPILES = """
import contextlib, io, json, re, sys
seen = set()
_compile = re.compile
def counting(pattern, flags=0):
    if isinstance(pattern, str):
        seen.add((pattern, int(flags)))
    return _compile(pattern, flags)
re.compile = counting
from logparse.cli.main import main
from logparse.model.lazyre import BRANCHED
sys.argv = ["logdiag", "analyze", sys.argv[1], "--format", "json"]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
whole = {b.pattern for b in BRANCHED}
print(json.dumps({"patterns": len(seen), "chars": sum(len(p) for p, _ in seen),
                  "whole_families": sum(1 for p, _ in seen if p in whole)}))
"""
# Regex text a warm short run compiles (counted through `re.compile`): 23,900 characters in 193
# patterns when this was written (29,108 in 215 before the fast path's required literals and the
# classifier's per-character branches). A change that compiles whole families again fails here.
COMPILED_CHARS_BUDGET = 26_000


def test_a_short_analyze_compiles_only_what_its_lines_can_match(small: tuple[Path, Path]) -> None:
    log, cache = small
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _COMPILES, str(log)], capture_output=True, text=True,
                          env=env, cwd=log.parent, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    assert doc["patterns"] > 50  # the probe sees the compiles
    assert doc["chars"] <= COMPILED_CHARS_BUDGET, doc
    # The log's one foreign line (urllib3's DEBUG record) compiles none of the classifier's families whole.
    assert doc["whole_families"] == 0, doc
