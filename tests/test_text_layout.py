"""The text of `logdiag analyze` as a person reads it: golden files of every whole-run fixture at
80 and at 200 columns, and the layout rules every output keeps — no line wider than the width
(unless --wide), no word cut, no finding printed twice, no Python repr, colour only when asked.

`LOGDIAG_UPDATE_GOLDEN=1 pytest tests/test_text_layout.py` (or `--update-golden`) rewrites
tests/golden/text/ for review.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.engine.core import analyze
from logparse.render.bullets import remedy_bullets, split_top
from logparse.render.layout import output_width, table, use_color, visible_len, wrap
from logparse.render.text import _error_text, fmt, render
from tests.conftest import REPO, write_log

GOLDEN = REPO / "tests" / "golden" / "text"
# Every whole-run log the repository carries: the fixtures and the comparison runs.
WHOLE_RUNS = sorted(
    str(p.relative_to(REPO)) for p in [*(REPO / "fixtures" / "logs").glob("*.log"), *(REPO / "fixtures" / "compare").glob("*.log")]
)
WIDTHS = (80, 200)
TITLE = re.compile(r"^\s*\[(ERROR|WARNING|INFO)\] \S+ \([A-Z]+\d+\): ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@cache
def _analysis(source: str):  # type: ignore[no-untyped-def]
    cwd = os.getcwd()
    os.chdir(REPO)  # the header names the file as the command line would: relative
    try:
        return analyze(source)
    finally:
        os.chdir(cwd)


def _text(source: str, width: int | None) -> str:
    return render([_analysis(source)], width=width)


def _name(source: str) -> str:
    return Path(source).parent.name + "-" + Path(source).stem


@pytest.fixture
def update(update_golden: bool) -> bool:
    return update_golden or os.environ.get("LOGDIAG_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("source", WHOLE_RUNS)
def test_golden_text(source: str, width: int, update: bool) -> None:
    text = _text(source, width)
    path = GOLDEN / f"{_name(source)}.{width}.txt"
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"missing {path.relative_to(REPO)}: run LOGDIAG_UPDATE_GOLDEN=1 pytest {__file__} and review it")
    want = path.read_text(encoding="utf-8")
    if text != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden", "now", n=2))
        pytest.fail(f"{path.relative_to(REPO)} differs (LOGDIAG_UPDATE_GOLDEN=1 rewrites it):\n{diff[:6000]}")


def test_there_are_whole_runs() -> None:
    assert len(WHOLE_RUNS) >= 9 and "fixtures/logs/nextn-hybrid-launch.log" in WHOLE_RUNS


@pytest.mark.parametrize("width", (40, 60, 80, 200))
@pytest.mark.parametrize("source", WHOLE_RUNS)
def test_no_line_is_wider_than_the_width(source: str, width: int) -> None:
    for line in _text(source, width).splitlines():
        assert len(line) <= width, line


@pytest.mark.parametrize("source", WHOLE_RUNS)
def test_wide_prints_every_evidence_line_whole(source: str) -> None:
    texts = {t for f in _analysis(source).all_findings() for ev in f.evidence for _, t in ev.lines}
    rows = [m.group(1) for line in _text(source, None).splitlines()
            if (m := re.match(r"^\s+[\d, +]+ \| (.*)$", line))]
    assert rows
    for row in rows:
        assert row in texts, row  # the log's line, whole: not a prefix ending in an ellipsis


def test_wide_is_wider_than_100_somewhere() -> None:
    assert max(len(line) for line in _text("fixtures/logs/eagle3-kv-pool.log", None).splitlines()) > 100


@pytest.mark.parametrize("width", (80, None))
@pytest.mark.parametrize("source", WHOLE_RUNS)
def test_each_finding_title_is_printed_once(source: str, width: int | None) -> None:
    titles = [line.strip() for line in _text(source, width).splitlines() if TITLE.match(line)]
    assert titles, "every whole-run fixture has a finding"
    assert len(titles) == len(set(titles)), [t for t in titles if titles.count(t) > 1]
    # A finding's fix is printed once too (per finding, not per attempt that saw it).
    names = [TITLE.match(t).group(0) for t in titles]  # type: ignore[union-attr]
    wide = _text(source, None)
    for name in set(names):
        rule = name.split("] ")[1].split(" (")[0]
        assert wide.count(f"logdiag rule {rule}\n") <= 1


def test_a_finding_two_attempts_share_is_one_entry() -> None:
    text = _text("fixtures/logs/nextn-hybrid-launch.log", 200)
    assert text.count("custom-allreduce-unavailable (DIST003)") == 1
    assert "[attempts 3 and 4]" in text
    assert text.count("NCCL_P2P_LEVEL=SYS") == 1


def _own_lines(text: str) -> list[str]:
    """The lines logdiag writes itself (evidence lines quote the log, which may hold anything)."""
    return [line for line in text.splitlines() if " | " not in line and not line.startswith("  run")]


@pytest.mark.parametrize("source", WHOLE_RUNS)
def test_no_python_repr_leaks(source: str) -> None:
    text = _text(source, None)
    for line in _own_lines(text):
        assert not re.search(r"[{}]|\bNone\b|\bTrue\b|\bFalse\b|\[\]|'\d+'|=None", line), line
    bench = [line for line in text.splitlines() if line.startswith("benchmark")]
    for line in bench:
        assert line.count("total throughput") <= 1, line


def test_root_cause_comes_first_with_rank_evidence_and_fix() -> None:
    lines = _text("fixtures/logs/eagle3-kv-pool.log", 80).splitlines()
    first = lines[:24]  # one terminal screen
    assert first[1].startswith("outcome: crashed-at-startup")
    assert first[2] == "root cause:" and "kv-pool-no-room" in first[3]
    assert any("ranks: TP0–TP7" in line for line in first)
    assert any(" | RuntimeError: Not enough memory" in line for line in first), "the exception line is shown"
    assert any(line.strip().startswith("fix:") for line in first)


def test_attempts_are_on_the_first_screen() -> None:
    first = _text("fixtures/logs/nextn-hybrid-launch.log", 80).splitlines()[:24]
    assert sum(line.startswith("  attempt ") for line in first) == 4


def test_startup_phases_are_never_cut() -> None:
    for width in (80, 200):
        text = _text("fixtures/logs/nextn-4-serving.log", width)
        assert "capture-dra…" not in text and "…" not in "".join(line for line in text.splitlines() if "TP0" in line)
        assert "capture-draft" in text and "capture-draft-extend" in text or "capture-draft" in text


def test_long_remedy_is_bullets_with_a_pointer() -> None:
    text = _text("fixtures/logs/nextn-4-serving.log", 100)
    assert "· `NCCL_P2P_LEVEL=SYS`" in text
    assert "logdiag rule custom-allreduce-unavailable" in text
    # The long asides stay in JSON and in `logdiag rule`; the terminal gets the actions.
    assert "PHB/SYS paths" not in text


def test_queue_max_counts_the_prefill_lines(tmp_path: Path) -> None:
    stats = []
    for i in range(3):
        stats.append(f"[2026-04-21 08:50:0{i} TP0] Prefill batch, #new-seq: 1, #new-token: 500, #cached-token: 0, "
                     f"token usage: 0.01, #running-req: 4, #queue-req: {24 - i}, input throughput (token/s): 657.70, "
                     "cuda graph: False")
        stats.append(f"[2026-04-21 08:50:1{i} TP0] Decode batch, #running-req: 4, #token: 1000, token usage: 0.02, "
                     "cuda graph: True, gen throughput (token/s): 200.00, #queue-req: 0")
    a = analyze(write_log(tmp_path, "\n".join(stats) + "\n"))
    text = render([a], width=100)
    assert "queued: max 24" in text, text


# ------------------------------------------------------------------------------- the pieces


def test_fmt_is_for_people() -> None:
    assert fmt(None) == "not set" and fmt(True) == "yes" and fmt(1600) == "1,600"
    assert fmt(3826.07) == "3,826.07" and fmt(48.0) == "48" and fmt(0.5) == "0.5"
    assert fmt({"200": 617}) == "200 617" and fmt([]) == "none" and fmt({}) == "none"


def test_error_records_read_as_words() -> None:
    assert _error_text({"kind": "killed", "detail": {}}) == "killed"
    assert _error_text({"kind": "sigquit_received", "detail": {"phase": "launch"}}) == "sigquit received (phase launch)"
    assert _error_text({"kind": "traceback", "exception": "ValueError", "message": "bad"}) == "ValueError: bad"


def test_wrap_keeps_every_word_whole() -> None:
    text = ("Not enough memory for the KV pool after loading the weights on TP0–TP7 (8 times) "
            "(--mem-fraction-static=0.85): the weights take 16.44 GB of the 19.03 GB free")
    for width in (30, 45, 80):
        lines = wrap(text, width, "  - ", "    ")
        assert all(len(line) <= width for line in lines)
        if width == 30:
            continue  # "(--mem-fraction-static=0.85):" does not fit: it breaks after `=`
        assert " ".join(line.strip().removeprefix("- ") for line in lines) == text
        assert lines[0].startswith("  - ") and all(line.startswith("    ") for line in lines[1:])


def test_wrap_breaks_a_long_token_after_a_separator() -> None:
    path = "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py"
    lines = wrap(path, 40, "| ", "| ")
    assert all(len(line) <= 40 for line in lines)
    assert "".join(line[2:] for line in lines) == path
    assert all(line.endswith("/") for line in lines[:-1])


def test_wrap_without_a_width_is_one_line_and_escapes_control_characters() -> None:
    assert wrap("a b\x1b[31mc", None, "> ") == ["> a b\\x1b[31mc"]


def test_wrap_keeps_a_frame_indent() -> None:
    assert wrap('  File "x.py", line 3', 80, "  7 | ") == ['  7 |   File "x.py", line 3']


def test_table_falls_back_when_it_does_not_fit() -> None:
    rows = [["rank", "dist-init", "weight-load"], ["TP0", "2.9 s", "289.12 s"]]
    assert table(rows, 80) == ["  rank  dist-init  weight-load", "  TP0       2.9 s     289.12 s"]
    assert table(rows, 20) is None


def test_remedy_bullets() -> None:
    bullets, shortened = remedy_bullets(
        "`--a 1` (why a), or unset `B` (why b); reduce host-side memory: fewer processes, a smaller `--c`"
    )
    assert [b.text for b in bullets] == ["`--a 1` (why a)", "or unset `B` (why b)", "reduce host-side memory:"]
    assert bullets[2].items == ["fewer processes", "a smaller `--c`"] and not shortened
    assert split_top("a (x; y); b `c; d`; e", "; ") == ["a (x; y)", "b `c; d`", "e"]


def test_width_rules() -> None:
    assert output_width(wide=True, isatty=True, env={"COLUMNS": "80"}) is None
    assert output_width(isatty=False, env={}) == 100
    assert output_width(isatty=False, env={"COLUMNS": "132"}) == 132
    assert output_width(isatty=True, env={"COLUMNS": "90"}) == 90
    assert output_width(isatty=False, env={"COLUMNS": "10"}) == 40  # a hanging indent needs room
    assert output_width(isatty=False, env={"COLUMNS": "wide"}) == 100


def test_colour_rules() -> None:
    assert use_color(isatty=True, env={}) and not use_color(isatty=False, env={})
    assert not use_color(isatty=True, env={"NO_COLOR": "1"})
    assert use_color(isatty=False, flag=True, env={"NO_COLOR": "1"}) and not use_color(isatty=True, flag=False, env={})
    assert visible_len("\x1b[1;31mab\x1b[0m") == 2


# ------------------------------------------------------------------------------- the CLI


LOG = str(REPO / "fixtures" / "logs" / "eagle3-kv-pool.log")


def _run(*args: str, env: dict[str, str] | None = None) -> str:
    r = CliRunner().invoke(main, ["analyze", *args], env=env or {})
    assert r.exit_code == 0, r.output
    return r.stdout


def test_cli_wraps_to_columns_and_wide_does_not() -> None:
    narrow = _run(LOG, env={"COLUMNS": "60"})
    assert max(len(line) for line in narrow.splitlines()) <= 60
    wide = _run(LOG, "--wide", env={"COLUMNS": "60"})
    assert max(len(line) for line in wide.splitlines()) > 100
    default = _run(LOG, env={"COLUMNS": ""})
    assert max(len(line) for line in default.splitlines()) <= 100


def test_cli_colour_only_when_asked_or_on_a_terminal() -> None:
    assert not ANSI.search(_run(LOG))  # CliRunner's stdout is not a terminal
    coloured = _run(LOG, "--color", env={"COLUMNS": "80"})
    assert ANSI.search(coloured)
    assert max(visible_len(line) for line in coloured.splitlines()) <= 80
    assert ANSI.sub("", coloured) == _run(LOG, env={"COLUMNS": "80"})
    assert not ANSI.search(_run(LOG, "--no-color"))


def test_consequences_are_printed_once_under_their_cause(tmp_path: Path) -> None:
    from tests.test_engine import CRASH_LOG

    text = render([analyze(write_log(tmp_path, CRASH_LOG))], width=80)
    titles = [line for line in text.splitlines() if TITLE.match(line)]
    assert len(titles) == 1 and "cuda-oom (MEM001)" in titles[0]  # nccl-error is not a finding of its own
    block = text.split("consequences (the teardown of this failure):\n", 1)[1]
    assert block.startswith("      - nccl-error (DIST002) on TP0, line 12: ")
    assert text.count("nccl-error") == 1
    assert "errors seen: 4 (all evidence of the findings above)" in text


def _check(*args: str, env: dict[str, str] | None = None) -> str:
    r = CliRunner().invoke(main, ["check", "--exit-zero", *args], env=env or {})
    assert r.exit_code == 0, r.output
    return r.stdout


def test_check_text_wraps_and_never_cuts() -> None:
    narrow = _check(LOG, env={"COLUMNS": "72"})
    assert max(len(line) for line in narrow.splitlines()) <= 72
    wide = _check(LOG, "--wide", env={"COLUMNS": "72"})
    lines = wide.splitlines()
    assert max(len(line) for line in lines) > 150
    # Evidence is whole: every shown line is the log's line, not a prefix of it with an ellipsis.
    log = Path(LOG).read_text(encoding="utf-8").splitlines()
    for line in lines:
        m = re.match(r"^ {4}\s*(\d+) \| (.*)$", line)
        if m:
            assert m.group(2) == log[int(m.group(1)) - 1], line
    assert ANSI.search(_check(LOG, "--color")) and not ANSI.search(_check(LOG))


def test_a_terminal_without_columns_uses_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    import os as _os
    import shutil

    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(100, 24): _os.terminal_size((132, 40)))
    assert output_width(isatty=True, env={}) == 132
    assert output_width(isatty=False, env={}) == 100  # a pipe: the same text every time


def test_a_merged_run_names_each_evidence_file_in_one_column() -> None:
    logs = [str(REPO / "fixtures" / "logs" / n) for n in ("nextn-1-topk.log", "nextn-2-mamba.log")]
    text = _run(*logs, "--run", env={"COLUMNS": "80"})
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if re.match(r"^\s+nextn-1-topk\.log:\d+ \| ", line)]
    assert len(rows) >= 2 and len({row.index(" | ") for row in rows}) == 1


def test_wrapping_never_starts_a_workflow_command(tmp_path: Path) -> None:
    # A message whose `::` is mid-line in the log could start a wrapped line: defused after layout.
    words = " ".join(["padding"] * 9)
    log = (f"[2026-04-21 08:47:36 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           f'  File "/x/scheduler.py", line 1, in run\n'
           f"RuntimeError: {words} ::error file=a::pwned {words} ::warning::again\n")
    path = write_log(tmp_path, log)
    command = re.compile(r"^\s*::|##\[", re.MULTILINE)
    for width in ("40", "52", "64", "80"):
        for cmd in ("analyze", "check"):
            r = CliRunner().invoke(main, [cmd, path, "--exit-zero"] if cmd == "check" else [cmd, path],
                                   env={"COLUMNS": width})
            assert r.exit_code == 0, r.output
            assert "pwned" in r.stdout and not command.search(r.stdout), r.stdout


@pytest.mark.parametrize("source", WHOLE_RUNS)
def test_the_first_screen_answers(source: str) -> None:
    """80 × 24: the outcome, the root cause with its fix (or the first finding's), every attempt."""
    a = _analysis(source)
    screen = _text(source, 80).splitlines()[:24]
    assert screen[1].startswith(f"outcome: {a.outcome}")
    if a.root_cause is not None:
        assert screen[2] == "root cause:" and f"] {a.root_cause.name} (" in screen[3]
    assert any(line.lstrip().startswith("fix") for line in screen)
    if len(a.attempts) > 1:
        assert sum(line.startswith("  attempt ") for line in screen) == len(a.attempts)


def test_every_corpus_log_fits_and_prints_each_finding_once() -> None:
    from tests.conftest import corpus_logs

    logs = corpus_logs()
    assert logs
    for path in logs:
        a = analyze(str(path))
        for width in (40, 80):
            for line in render([a], width=width).splitlines():
                assert len(line) <= width, (path.name, line)
        titles = [line for line in render([a], width=None).splitlines() if TITLE.match(line)]
        assert len(titles) == len(set(titles)), path.name


def test_damaged_numbers_are_named_in_the_text(tmp_path: Path) -> None:
    """A stats line whose numbers are inf or 400 digits is kept; the text says how many numbers
    could not be read, and the statistics say `no value`, not `not set` (that is for settings)."""
    from click.testing import CliRunner

    from logparse.cli.main import main

    log = tmp_path / "damaged.log"
    log.write_text("[2025-01-01 10:00:00 TP0] Decode batch. #running-req: inf, #token: 5, token usage: 0.01, "
                   f"gen throughput (token/s): 9{'9' * 400}, #queue-req: 0\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["analyze", str(log)]).output
    assert "unreadable numbers (kept as no value): 2" in out
    assert "median no value" in out and "not set" not in out
