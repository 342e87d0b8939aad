"""The HTML report: one self-contained file. Parsed with the stdlib html.parser: every section is
there, every inline <svg> is valid XML, nothing is fetched (no external URL in any src/href, no
<script> at all), hostile log lines render as text, secrets are redacted, no figure stays open."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from logparse.engine.core import analyze
from logparse.report.html import render_html
from logparse.report.model import SECTIONS, build_report
from logparse.report.plots import PLOTS, render
from tests.conftest import REPO

LOGS = REPO / "fixtures" / "logs"
WHOLE_RUNS = (
    "spec-serving-healthy.log",
    "nextn-hybrid-launch.log",
    "eagle3-kv-pool.log",
    "baseline-cuda-graph-false.log",
)

SECRETS = {
    "sk_key": "sk-live-0123456789abcdefABCDEF",
    "hf": "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0cGF5bG9hZA.sig",
    "url_password": "hunter2pass",
    "flag_key": "flagkey-7f3a9c",
}
HOSTILE = f"""$ HF_TOKEN={SECRETS["hf"]} NCCL_DEBUG=INFO python3 -m sglang.launch_server --model-path org/m --api-key {SECRETS["flag_key"]} --tp 2
[2026-04-21 08:47:27] server_args=ServerArgs(model_path='org/m', api_key='{SECRETS["sk_key"]}', admin_api_key=None, tp_size=2, port=30000)
[2026-04-21 08:47:33 TP0] Init torch distributed begin.
[2026-04-21 08:47:35 TP0] Init torch distributed ends. elapsed=2.04 s, mem usage=0.74 GB
<script>alert(1)</script>
curl -H "Authorization: Bearer {SECRETS["bearer"]}" http://localhost:30000/v1/models
[2026-04-21 08:47:36 TP0] fetching https://user:{SECRETS["url_password"]}@mirror.example.com/m <img src=x onerror=alert(2)>
[2026-04-21 08:47:36 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2753, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 312, in __init__
    self.tp_worker = TpModelWorker(
RuntimeError: bad <script>alert(3)</script> {SECRETS["hf"]} api_key='{SECRETS["sk_key"]}' </pre></table>

[2026-04-21 08:47:37] Received sigquit from a child process. It usually means the child failed.
Killed
"""


class Doc(HTMLParser):
    """Collects tags, attributes, ids, the text, and the raw <svg> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag not in ("meta", "br", "link", "img", "input", "hr", "path", "use", "rect", "stop"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if "style" not in self.stack:
            self.text.append(data)


def html_of(path: Path | str, baseline: Path | str | None = None, **kw: Any) -> str:
    base = analyze(str(baseline)) if baseline is not None else None
    rep = build_report(analyze(str(path)), base, source=Path(path).name, **kw)
    return render_html(rep.data, render(rep.data, rep.series))


@pytest.fixture(scope="module")
def healthy() -> str:
    return html_of(LOGS / "spec-serving-healthy.log", LOGS / "baseline-cuda-graph-false.log")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    log = tmp_path / "hostile.log"
    log.write_text(HOSTILE, encoding="utf-8")
    return log


def parse(html: str) -> Doc:
    doc = Doc()
    doc.feed(html)
    doc.close()
    return doc


def svgs_of(html: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", html, flags=re.DOTALL)


def external_refs(doc: Doc) -> list[tuple[str, str, str]]:
    bad = []
    for tag, attrs in doc.tags:
        for name in ("src", "href", "xlink:href", "data", "action", "poster"):
            value = (attrs.get(name) or "").strip()
            if value and not value.startswith("#"):
                bad.append((tag, name, value))
    return bad


@pytest.mark.parametrize("name", WHOLE_RUNS)
def test_structure_of_every_whole_run_report(name: str) -> None:
    html = html_of(LOGS / name)
    doc = parse(html)
    sections = [a.get("id") for t, a in doc.tags if t == "section"]
    assert sections == list(SECTIONS)
    assert all(any(t == "h2" for t, _ in doc.tags) for _ in sections)
    assert not [
        t
        for t, _ in doc.tags
        if t in ("script", "iframe", "object", "embed", "link", "img", "base")
    ]
    assert external_refs(doc) == []
    assert len(doc.ids) == len(set(doc.ids)), "duplicate element ids (plots must prefix theirs)"
    assert html.startswith("<!DOCTYPE html>")


def test_healthy_run_has_every_plot_and_section_content(healthy: str) -> None:
    doc = parse(healthy)
    figures = [a["id"] for t, a in doc.tags if t == "figure"]
    assert figures == [f"plot-{p.name}" for p in PLOTS]  # all eight, in order, with the baseline
    text = " ".join(doc.text)
    for needle in (
        "meta-llama/Llama-3.3-70B-Instruct",
        "serving",
        "Time to ready",
        "Phases by rank",
        "By concurrency",
        "accept length",
        "Compared with the baseline",
        "Speedup at matched concurrency",
        "Backend",
        "Server arguments",
        "lines recognized",
        "max-running-requests-capped",
    ):
        assert needle in text, needle


def test_inline_svg_is_valid_and_self_contained(healthy: str) -> None:
    svgs = svgs_of(healthy)
    assert len(svgs) == len(PLOTS)
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        for el in root.iter():
            for key, value in el.attrib.items():
                if key.endswith("href"):
                    assert value.startswith("#"), (key, value)
            assert not el.tag.endswith("}script") and not el.tag.endswith("}image")
        assert "<metadata" not in svg and "<?xml" not in svg and "DOCTYPE" not in svg


def test_no_script_no_external_url_csp_and_print_css(healthy: str) -> None:
    assert "<script" not in healthy.lower()
    assert not re.search(
        r"""(?:src|href)\s*=\s*["']?\s*(?:https?:|//|data:|javascript:)""", healthy, re.IGNORECASE
    )
    assert "@import" not in healthy and "url(http" not in healthy and "@font-face" not in healthy
    assert "Content-Security-Policy" in healthy and "default-src 'none'" in healthy
    assert "@media print" in healthy


def test_hostile_lines_render_as_text_and_secrets_are_redacted(hostile: Path) -> None:
    html = html_of(hostile)
    low = html.lower()
    assert "<script" not in low
    assert "<img" not in low
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html
    doc = parse(html)
    assert not [t for t, _ in doc.tags if t in ("script", "img")]
    text = " ".join(doc.text)
    assert "<script>alert(3)</script>" in text  # shown to the reader, as text
    for secret in SECRETS.values():
        assert secret not in html, secret
    assert "[REDACTED]" in text
    # The parts that are not secret survive.
    assert "user:[REDACTED]@mirror.example.com" in text
    assert "NCCL_DEBUG=INFO" in text


def test_no_redact_keeps_secrets(hostile: Path) -> None:
    html = html_of(hostile, redact=False)
    assert SECRETS["sk_key"] in html
    assert SECRETS["flag_key"] in html
    assert "NOT redacted" in html
    assert "<script" not in html.lower()  # escaping does not depend on redaction


def test_figures_are_closed(healthy: str) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    html_of(LOGS / "spec-serving-healthy.log")
    assert plt.get_fignums() == before == []


def test_svg_bytes_are_deterministic() -> None:
    rep = build_report(analyze(str(LOGS / "spec-serving-healthy.log")))
    assert render(rep.data, rep.series) == render(rep.data, rep.series)


def _corpus() -> list[Path]:
    from tests.conftest import corpus_logs

    return corpus_logs()


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_every_corpus_log_reports(path: Path) -> None:
    """Excerpts of every shape (no timestamps, time-only stamps, cut tracebacks, wrappers) report
    without error, with every section and only valid SVG."""
    from logparse.report.markdown import render_markdown

    rep = build_report(analyze(str(path)), source=path.name)
    svgs = render(rep.data, rep.series)
    html = render_html(rep.data, svgs)
    doc = parse(html)
    assert [a.get("id") for t, a in doc.tags if t == "section"] == list(SECTIONS)
    assert external_refs(doc) == [] and "<script" not in html.lower()
    for svg in svgs.values():
        ET.fromstring(svg)
    md = render_markdown(rep.data, "plots")
    assert md.count("\n## ") == len(SECTIONS)


def test_templates_ship_with_the_package() -> None:
    from logparse.grammar.resources import reports_dir

    names = {p.name for p in reports_dir().iterdir()}
    assert {"report.html.j2", "report.md.j2", "report.css"} <= names
