"""Golden reports of the whole-run fixtures: the report's data model (JSON) and its Markdown.

`pytest --update-golden` rewrites the files under tests/golden/report/ for review. Plots are
compared through the data that draws them (in the JSON), never as image bytes.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from logparse._version import __version__
from logparse.engine.core import analyze
from logparse.report.markdown import render_markdown
from logparse.report.model import build_report
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "report"
LOGS = "fixtures/logs"
CASES = {
    "spec-serving-healthy": ("spec-serving-healthy.log", None),
    "nextn-hybrid-launch": ("nextn-hybrid-launch.log", None),
    "eagle3-kv-pool": ("eagle3-kv-pool.log", None),
    "baseline-cuda-graph-false": ("baseline-cuda-graph-false.log", None),
    "spec-serving-healthy-vs-baseline": (
        "spec-serving-healthy.log",
        "baseline-cuda-graph-false.log",
    ),
}


def _build(log: str, base: str | None) -> tuple[str, str]:
    source = f"{LOGS}/{log}"
    base_source = f"{LOGS}/{base}" if base else None
    rep = build_report(
        analyze(str(REPO / source)),
        analyze(str(REPO / base_source)) if base_source else None,
        source=source,
        baseline_source=base_source,
    )
    data = json.dumps(rep.data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    md = render_markdown(rep.data, "report-plots").replace(
        f"logdiag {__version__}", "logdiag VERSION"
    )
    return data, md


def _check(path: Path, text: str, update: bool) -> None:
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(
            f"missing golden file {path.relative_to(REPO)}: run pytest --update-golden and review it"
        )
    want = path.read_text(encoding="utf-8")
    if text != want:
        diff = "".join(
            difflib.unified_diff(want.splitlines(True), text.splitlines(True), "golden", "now", n=2)
        )
        pytest.fail(
            f"{path.relative_to(REPO)} differs (pytest --update-golden rewrites it):\n{diff[:6000]}"
        )


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_report(name: str, update_golden: bool) -> None:
    log, base = CASES[name]
    data, md = _build(log, base)
    _check(GOLDEN / f"{name}.json", data, update_golden)
    _check(GOLDEN / f"{name}.md", md, update_golden)


def test_golden_is_deterministic() -> None:
    assert _build("spec-serving-healthy.log", None) == _build("spec-serving-healthy.log", None)
