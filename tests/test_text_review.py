"""Regressions from re-testing issue 14 as its author (text that hid, repeated or misread):
each test names the log and what logdiag printed before the fix."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner

from logparse.cli.main import main
from logparse.engine.core import analyze
from logparse.model.text import short
from logparse.render.bullets import remedy_bullets
from logparse.render.layout import Doc
from logparse.render.text import MAX_EVIDENCE_ROWS, add_evidence, render
from tests.conftest import REPO, write_log

PCIE_LOGS = ("fixtures/logs/nextn-3-killed.log", "fixtures/logs/nextn-4-serving.log")


def _run(*args: str, columns: str = "80") -> str:
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        r = CliRunner().invoke(main, list(args), env={"COLUMNS": columns, "NO_COLOR": "1"})
    finally:
        os.chdir(cwd)
    assert r.exit_code in (0, 1), r.output
    return r.stdout


def test_short_cuts_at_a_space_never_inside_a_name() -> None:
    # nextn-2-mamba printed `... and set SGLANG_ENABL…`: a variable that does not exist.
    text = "please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
    for n in range(40, len(text)):  # a space in the second half of every cut
        cut = short(text, n)
        assert len(cut) <= n
        assert cut.endswith("…")
        kept = cut.removesuffix("…").split()
        assert all(word in text.split() for word in kept), cut
    assert short(text, len(text)) == text


def test_the_mamba_finding_names_the_variable_whole() -> None:
    a = analyze(str(REPO / "fixtures/logs/nextn-2-mamba.log"))
    assert a.root_cause is not None and a.root_cause.name == "spec-mamba-extra-buffer"
    assert "SGLANG_ENABLE_SPEC_V2=1" in a.root_cause.message
    assert "…" not in a.root_cause.message


def _doc_evidence(evidence: list[dict[str, object]], limit: int = 4, width: int | None = 80) -> list[str]:
    doc = Doc(width)
    add_evidence(doc, evidence, "  ", limit)  # type: ignore[arg-type]
    return doc.lines


def test_evidence_is_in_log_order() -> None:
    # dev-028 printed line 2 above line 1 (the finding listed its consequence line last).
    lines = _doc_evidence([{"line": 2, "text": "Scheduler hit an exception"},
                           {"line": 1, "text": "Received sigquit from a child process."}])
    numbers = [int(m.group(1)) for ln in lines if (m := re.match(r"\s+(\d+) \|", ln))]
    assert numbers == [1, 2], lines


def test_evidence_keeps_the_innermost_frame_and_drops_caret_lines() -> None:
    # nextn-1-topk showed `File "<frozen runpy>"` (the outermost frame) and dev-036 a line of `^^^^`.
    ev = [{"line": 1, "text": "Traceback (most recent call last):"},
          {"line": 2, "text": '  File "<frozen runpy>", line 198, in _run_module_as_main'},
          {"line": 3, "text": "    return _run_code(code, main_globals, None,"},
          {"line": 4, "text": '  File "/sglang/srt/server_args.py", line 2503, in _handle_speculative_decoding'},
          {"line": 5, "text": "    raise ValueError("},
          {"line": 6, "text": "    ^^^^^^^^^^^^^^^^^"},
          {"line": 7, "text": "ValueError: Spec v2 currently only supports topk = 1"}]
    text = "\n".join(_doc_evidence(ev, width=None))
    assert "server_args.py" in text and "ValueError: Spec v2" in text and "Traceback" in text
    assert "frozen runpy" not in text and "^^^" not in text


def test_a_warning_every_rank_printed_is_one_row() -> None:
    # nextn-3-killed: three 3-line paragraphs of the same custom-allreduce warning, + 5 more.
    ev = [{"line": 33 + i, "text": f"[2026-04-14 10:09:22 TP{r}] Custom allreduce is disabled."}
          for i, r in enumerate((7, 0, 4, 1, 2, 3, 5, 6))]
    lines = _doc_evidence(ev)
    assert len(lines) == 1 and lines[0].lstrip().startswith("33–40 | [2026-04-14 10:09:22 TP7]"), lines
    scattered = _doc_evidence([dict(e, line=n) for e, n in zip(ev, (3, 27, 55, 163, 200, 300, 400, 500))])
    assert scattered[0].lstrip().startswith("3 +7 |"), scattered


def test_a_huge_evidence_line_is_capped_and_says_where_the_rest_is() -> None:
    # dev-025: a Squid error page inside an AssertionError ran to 17 rows at 80 columns.
    text = "AssertionError: res=<Response [503]>, res.text='" + " ".join(["<meta name=x content=y>"] * 80)
    lines = _doc_evidence([{"line": 4, "text": text}])
    assert len(lines) <= MAX_EVIDENCE_ROWS and all(len(ln) <= 80 for ln in lines)
    assert "--wide prints the line whole" in lines[-1]
    left = int(re.search(r"\[\+([\d,]+) characters", lines[-1]).group(1).replace(",", ""))  # type: ignore[union-attr]
    shown = sum(len(ln.split(" | ", 1)[1]) + 1 for ln in lines[:-1])
    assert abs(shown + left - len(text.strip())) <= len(lines), (shown, left, len(text))
    whole = _doc_evidence([{"line": 4, "text": text}], width=None)
    assert whole == [f"        4 | {text}"], whole  # --wide: the line whole


def test_a_long_fix_is_printed_once_per_output() -> None:
    # `analyze fixtures/logs/` printed the 10-line NCCL fix for each of four PCIe logs.
    out = _run("analyze", *PCIE_LOGS)
    assert out.count("worth trying (measure each)") == 1, out
    assert f"fix: as for {PCIE_LOGS[0]} above" in out
    # one file alone still gets it in full
    assert "worth trying (measure each)" in _run("analyze", PCIE_LOGS[1])


def test_check_text_has_analyze_fix_bullets_and_evidence_rows() -> None:
    # check printed the NCCL fix as one 9-line paragraph, in full for every file, and
    # `… 1 more evidence lines`.
    out = _run("check", "--format", "text", *PCIE_LOGS)
    assert out.count("worth trying (measure each)") == 1, out
    assert "· `NCCL_P2P_LEVEL=SYS`" in out and "PHB/SYS paths" not in out
    assert "logdiag rule custom-allreduce-unavailable" in out
    assert "more evidence lines" not in out.replace("(--format json lists them all)", "")
    assert "33–40 | [2026-04-14 10:09:22 TP7] Custom allreduce" in out
    # the same warning in two launch attempts of one log: the second points to the first
    one = _run("check", "--format", "text", "fixtures/logs/nextn-hybrid-launch.log")
    assert one.count("worth trying (measure each)") == 1, one
    assert "fix: as for fixtures/logs/nextn-hybrid-launch.log:85 above" in one


def test_kv_pool_fix_parts_its_two_actions() -> None:
    # eagle3-kv-pool: `raise --mem-fraction-static to 0.92 or --tp 16, ...` read as raising it to --tp 16.
    a = analyze(str(REPO / "fixtures/logs/eagle3-kv-pool.log"))
    root = a.root_cause
    assert root is not None and root.remedy
    bullets, _ = remedy_bullets(root.remedy)
    assert [b.text for b in bullets] == ["raise `--mem-fraction-static` to 0.92",
                                         "or use `--tp 16`, a quantized checkpoint or a smaller `--context-length`"]
    # the setting is stated once, before the ranks: no `(8 times) (--mem-fraction-static=0.85)`
    assert ") (" not in root.message and "at --mem-fraction-static=0.85 after" in root.message


def test_one_http_request_is_singular(tmp_path: Path) -> None:
    # dev-038 printed `1 HTTP requests`.
    log = write_log(tmp_path, '[2026-01-01 10:00:00] INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK\n')
    text = render([analyze(log)], width=100)
    assert "1 HTTP request (status 200: 1)" in text, text


def test_json_keeps_the_whole_message() -> None:
    # The terminal shortens fixes; the JSON message of the mamba finding is the whole of it.
    d = json.loads(_run("analyze", "--format", "json", "fixtures/logs/nextn-2-mamba.log"))
    assert "SGLANG_ENABLE_SPEC_V2=1" in d["files"][0]["root_cause"]["message"]


def test_a_killed_checkpoint_load_is_the_longest_phase_in_text_json_and_report() -> None:
    # nextn-3-killed: the report drew weight-load as 128 s (its progress bars), while analyze
    # printed `weight-load unfinished` and `slowest rank: TP7 (...; longest: dist-init)`.
    from logparse.report.timing import timing_section

    a = analyze(str(REPO / "fixtures/logs/nextn-3-killed.log"))
    text = render([a], width=None)
    assert "≥128s unfinished" in text and "longest: weight-load, unfinished after at least 128" in text, text
    d = json.loads(_run("analyze", "--format", "json", "fixtures/logs/nextn-3-killed.log"))
    phases = d["files"][0]["startup"]["ranks"]["TP7"]["phases"]
    load = next(p for p in phases if p["phase"] == "weight-load")
    assert load["complete"] is False and load["at_least_s"] == 128
    rows = timing_section(a)["ranks"]
    tp7 = next(r for r in rows if r["rank"] == "TP7")
    report_load = next(p for p in tp7["phases"] if p["phase"] == "weight-load")
    assert report_load["duration_s"] >= load["at_least_s"]


def test_report_evidence_breaks_at_spaces_not_inside_words() -> None:
    # The HTML report's evidence boxes broke `To sile|nce` and `--max-running-re|quests`
    # (`word-break: break-all`); `overflow-wrap: anywhere` breaks inside only a token too wide.
    css = (REPO / "reports" / "report.css").read_text(encoding="utf-8")
    pre = re.search(r"(?m)^pre \{([^}]*)\}", css)
    assert pre is not None
    assert "break-all" not in pre.group(1) and "overflow-wrap: anywhere" in pre.group(1)


def test_report_fix_is_a_list_of_actions_with_the_asides_kept(tmp_path: Path) -> None:
    # The HTML report printed the NCCL fix as one 5-line bold paragraph.
    out = tmp_path / "r.html"
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        r = CliRunner().invoke(main, ["report", "fixtures/logs/nextn-3-killed.log", "-o", str(out)])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    after = html[html.index("custom-allreduce-unavailable"):]
    fix = re.search(r'<div class="fix">Fix: (.*?)</div>', after, re.DOTALL)
    assert fix is not None and fix.group(1).startswith("<ul><li>")
    assert "<li><code>NCCL_P2P_LEVEL=SYS</code>" in fix.group(1)
    assert "PHB/SYS paths" in fix.group(1)  # the report has room for the asides
