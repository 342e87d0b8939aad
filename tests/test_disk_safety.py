"""Outputs never delete or overwrite what logdiag did not write: no writing over an input (also
through a link), no deleting an earlier report's plots or the user's files, no writing through
symlinks; caches hold data only and are read only when they are the user's own and private."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.render.outfiles import MANIFEST, OutputError, overwritten_input, write_plots
from tests.conftest import REPO

HEALTHY = REPO / "fixtures" / "logs" / "spec-serving-healthy.log"
CRASH = REPO / "fixtures" / "logs" / "eagle3-kv-pool.log"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


# --------------------------------------------------------------------------- outputs over inputs


@pytest.mark.parametrize("fmt", ["html", "json", "markdown"])
def test_report_refuses_to_overwrite_its_input(tmp_path: Path, fmt: str) -> None:
    log = _copy(CRASH, tmp_path / "run.log")
    before = log.read_bytes()
    r = run("report", str(log), "-o", str(log), "--format", fmt)
    assert r.exit_code == 2 and "input" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert log.read_bytes() == before


def test_report_refuses_an_output_linked_to_an_input(tmp_path: Path) -> None:
    log = _copy(CRASH, tmp_path / "run.log")
    base = _copy(CRASH, tmp_path / "base.log")
    before = base.read_bytes()
    (tmp_path / "out.html").symlink_to(base)
    os.link(base, tmp_path / "hard.json")
    for out in ("out.html", "hard.json"):
        r = run("report", str(log), "--baseline", str(base), "-o", str(tmp_path / out))
        assert r.exit_code == 2, (out, r.output)
    assert base.read_bytes() == before


def test_check_refuses_to_write_over_an_input(tmp_path: Path) -> None:
    log = _copy(CRASH, tmp_path / "run.log")
    before = log.read_bytes()
    for args in (["-o", str(log)], ["--write-baseline", str(log)]):
        r = run("check", str(log), "--format", "json", *args)
        assert r.exit_code == 2 and "refusing" in r.stderr, r.output
    assert log.read_bytes() == before
    assert run("check", str(log), "--exit-zero", "-o", str(tmp_path / "out.json")).exit_code == 0


def test_overwritten_input_compares_files_not_names(tmp_path: Path) -> None:
    a = tmp_path / "a.log"
    a.write_text("x")
    (tmp_path / "sub").mkdir()
    assert overwritten_input(str(tmp_path / "sub" / ".." / "a.log"), [str(a)]) == str(a)
    assert overwritten_input(str(tmp_path / "new.html"), [str(a)]) is None
    assert overwritten_input(str(a), ["-"]) is None


# --------------------------------------------------------------------------- plot folders


def test_plots_never_replace_a_users_file_or_follow_a_symlink(tmp_path: Path) -> None:
    folder = tmp_path / "r-plots"
    folder.mkdir()
    mine = folder / "serving-load.svg"
    mine.write_text("the user's own drawing")
    with pytest.raises(OutputError, match="did not write it"):
        write_plots(folder, {"serving-load.svg": "<svg/>", "other.svg": "<svg/>"})
    assert mine.read_text() == "the user's own drawing" and not (folder / "other.svg").exists()

    target = tmp_path / "precious.txt"
    target.write_text("keep")
    mine.unlink()
    mine.symlink_to(target)
    with pytest.raises(OutputError, match="symbolic link"):
        write_plots(folder, {"serving-load.svg": "<svg/>"})
    assert target.read_text() == "keep" and mine.is_symlink()

    linked = tmp_path / "linked-plots"
    linked.symlink_to(folder)
    with pytest.raises(OutputError, match="symbolic link"):
        write_plots(linked, {"a.svg": "<svg/>"})


def test_plots_replace_only_what_logdiag_wrote_and_delete_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "r-plots"
    write_plots(folder, {"a.svg": "<svg>1</svg>", "b.svg": "<svg>2</svg>"})
    manifest = json.loads((folder / MANIFEST).read_text())
    assert set(manifest["files"]) == {"a.svg", "b.svg"}
    (folder / "user.svg").write_text("user")
    # A rerun replaces its own files; a plot it no longer makes stays (never deleted).
    write_plots(folder, {"a.svg": "<svg>3</svg>"})
    assert (folder / "a.svg").read_text() == "<svg>3</svg>"
    assert (folder / "b.svg").read_text() == "<svg>2</svg>" and (folder / "user.svg").read_text() == "user"
    # A plot the user edited since is theirs now.
    (folder / "a.svg").write_text("edited")
    with pytest.raises(OutputError):
        write_plots(folder, {"a.svg": "<svg>4</svg>"})
    assert (folder / "a.svg").read_text() == "edited"
    # A forged or damaged manifest grants nothing.
    (folder / MANIFEST).write_text("{not json")
    with pytest.raises(OutputError):
        write_plots(folder, {"b.svg": "<svg>5</svg>"})
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]  # no temporary left


def test_markdown_report_leaves_plot_named_user_files_alone(tmp_path: Path) -> None:
    """The reproducer: user files named like plots in NAME-plots/ were deleted or overwritten."""
    from logparse.report.plots import PLOTS

    folder = tmp_path / "report-plots"
    folder.mkdir()
    outside = tmp_path / "outside.svg"
    outside.write_text("outside")
    users = {}
    for k, spec in enumerate(PLOTS):
        path = folder / f"{spec.name}.svg"
        if k == 0:
            path.symlink_to(outside)
        else:
            path.write_text(f"user file {k}")
            users[path] = path.read_text()
    r = run("report", str(HEALTHY), "-o", str(tmp_path / "report.md"))
    assert r.exit_code == 2 and "refusing" in r.stderr
    assert outside.read_text() == "outside"
    assert all(p.read_text() == text for p, text in users.items())
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{s.name}.svg" for s in PLOTS)


# --------------------------------------------------------------------------- caches


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "logdiag"


class _Planted:
    """A pickle that runs code when loaded (what a planted cache file would do)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {os.environ['LOGDIAG_TEST_MARKER']}",))


class _FakeParser:
    lark = None


def _fake_data(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """from_lark replaced by a counter (building lark is slow); returns the call log."""
    from logparse.grammar import build

    calls: list[int] = []
    real = build.FastPathData

    def from_lark(lark: Any) -> Any:
        calls.append(1)
        return real(prefix={"P": "p"}, start=[("A", "a")], after_prefix=[], firsts={"A": frozenset("a"), "B": None},
                    literal_prefixes={"A": "a"}, alternatives={"A": [("(?>a)", (("k0", "A"),), "cb")]},
                    terminal_patterns={"A": "a"})

    monkeypatch.setattr(build.FastPathData, "from_lark", staticmethod(from_lark))
    return calls


def test_fast_path_cache_is_json_and_round_trips(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.grammar import build

    calls = _fake_data(monkeypatch)
    first = build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    files = list(cache_home.glob("*.fastpath.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["format"] == build.FASTPATH_FORMAT
    assert files[0].stat().st_mode & 0o077 == 0
    again = build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    assert again == first and calls == [1]  # the second came from the cache


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"format": 1}', json.dumps({"format": 4, "prefix": {"a": 1}}).encode(), b"\xff\xfe"],
)
def test_a_damaged_or_foreign_cache_is_ignored_never_fatal(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    from logparse.grammar import build

    calls = _fake_data(monkeypatch)
    build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    (path,) = cache_home.glob("*.fastpath.json")
    path.write_bytes(content)
    data = build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    assert data.prefix == {"P": "p"} and calls == [1, 1]  # rebuilt, and rewritten
    assert build.FastPathData.from_json(path.read_text()) == data


def test_a_planted_pickle_is_never_loaded(cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old pickle names and the JSON name, planted with code: nothing runs."""
    from logparse.grammar import build
    from logparse.grammar.resources import grammar_text

    marker = tmp_path / "ran"
    monkeypatch.setenv("LOGDIAG_TEST_MARKER", str(marker))
    _fake_data(monkeypatch)
    stem = build._cache_path(grammar_text(), False)
    assert stem is not None
    for name in (f"{stem}.fastpath", f"{stem}.fastpath.json"):
        Path(name).write_bytes(pickle.dumps(_Planted()))
    build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    assert not marker.exists()


def test_lark_reads_its_pickle_cache_only_when_private(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lark

    from logparse.grammar import build
    from logparse.grammar.resources import grammar_text

    seen: list[Any] = []

    class FakeLark:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            seen.append(kwargs["cache"])

    monkeypatch.setattr(lark, "Lark", FakeLark)
    stem = build._cache_path(grammar_text(), False)
    assert stem is not None
    build.build_lark(None)
    assert seen[-1] == stem  # no file yet: lark may create it
    Path(stem).write_bytes(b"planted")
    os.chmod(stem, 0o666)  # writable by anyone: someone else may have put it there
    build.build_lark(None)
    assert seen[-1] is False
    os.chmod(stem, 0o600)
    build.build_lark(None)
    assert seen[-1] == stem
    os.unlink(stem)
    os.symlink(cache_home / "elsewhere", stem)
    build.build_lark(None)
    assert seen[-1] is False


def test_no_cache_in_a_folder_others_can_write(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.grammar import build
    from logparse.grammar.resources import grammar_text

    cache_home.mkdir(parents=True)
    os.chmod(cache_home, 0o777)
    assert build._cache_path(grammar_text(), False) is None
    os.chmod(cache_home, 0o700)
    assert build._cache_path(grammar_text(), False) is not None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_cache_file_owned_by_someone_else_is_not_read(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.grammar import build

    calls = _fake_data(monkeypatch)
    build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    (path,) = cache_home.glob("*.fastpath.json")
    os.chown(path, 12345, -1)
    build._cached_fast_data(_FakeParser(), False)  # type: ignore[arg-type]
    assert calls == [1, 1]


def test_the_cache_is_keyed_by_logdiag_itself(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another logdiag (version or code) never reads this one's cache: the re-layout crash."""
    import logparse._version
    from logparse.grammar import build
    from logparse.grammar.resources import grammar_text

    text = grammar_text()
    mine = build._cache_path(text, False)
    monkeypatch.setattr(logparse._version, "__version__", "999.0")
    assert build._cache_path(text, False) != mine
