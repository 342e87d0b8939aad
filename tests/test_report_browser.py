"""Every fixture's HTML report, rendered in headless Chromium (selenium + chromedriver).

For each whole-run fixture (every `fixtures/logs/*.log`), the `report --baseline` pairs of the
fixtures (the README's speculative-vs-baseline case and the compare story), and a derived log with
an idle gap and a log-scale plot, the report is written by the CLI and loaded from a `file://`
URL at 1280 and 800 px. With every `<details>` opened (the worst case), the page must not scroll
sideways, every table box must fit in the page, every plot must have a non-zero rendered size,
the console must have no error (a CSP violation is one), and no text may be math text: no
`\\mathdefault` anywhere, no `$` in a plot's drawn text (matplotlib's `<!-- text -->` comments,
the plots' text being glyph paths), no TeX-shaped `$…$` in the page's prose.

Screenshots (full page, details as a reader first sees them) go to `$LOGDIAG_SCREENSHOTS`, else a
fresh temporary folder; the path is printed. The test skips, with the reason, only when selenium,
Chromium or chromedriver cannot be found (`LOGDIAG_CHROMIUM` / `LOGDIAG_CHROMEDRIVER` point at
other binaries); `.ci/run` installs Debian's `chromium` and `chromium-driver`.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from tests.conftest import REPO
from tests.test_report_plots import idle_gap_log

LOGS = REPO / "fixtures" / "logs"
COMPARE = REPO / "fixtures" / "compare"
WIDTHS = (1280, 800)
WINDOW_HEIGHT = 900
# (case name, log, baseline or None); the derived idle-gap log is added by the `reports` fixture.
CASES: list[tuple[str, Path, Path | None]] = [
    *((p.stem, p, None) for p in sorted(LOGS.glob("*.log"))),
    ("spec-serving-healthy-vs-baseline", LOGS / "spec-serving-healthy.log",
     LOGS / "baseline-cuda-graph-false.log"),
    ("eagle3-vs-remeasured", COMPARE / "eagle3-75.9.log", COMPARE / "baseline-62.9-remeasured.log"),
    ("eagle3-vs-nccl-tuned", COMPARE / "eagle3-75.9.log", COMPARE / "baseline-90-nccl-tuned.log"),
    ("other-model-vs-remeasured", COMPARE / "other-model-kimi.log",
     COMPARE / "baseline-62.9-remeasured.log"),
]
DERIVED = "idle-gap-and-log-scale"
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # a container's small /dev/shm must not stall the renderer
)
# `$…$` around TeX: a backslash command, a superscript or a brace group between two dollars.
TEX = re.compile(r"\$[^$\s][^$\n]*?(\\[A-Za-z]+|\^\{|_\{)[^$\n]*?\$")

MEASURE = """
document.querySelectorAll('details').forEach(d => { d.open = true; });
const root = document.documentElement;
const main = document.querySelector('main').getBoundingClientRect();
const topLevel = [...document.querySelectorAll('svg, img')]
  .filter(e => !e.parentElement.closest('svg'));
const plots = topLevel.map(e => {
  const b = e.getBoundingClientRect();
  return {id: (e.closest('figure') || {}).id || e.tagName, w: b.width, h: b.height};
});
const boxes = [...document.querySelectorAll('.tbl')].map(e => {
  const b = e.getBoundingClientRect();
  return {section: (e.closest('section') || {}).id, right: b.right, width: b.width};
}).filter(b => b.right > main.right + 1);
const drawn = [];
for (const svg of topLevel) {
  const walk = document.createTreeWalker(svg, NodeFilter.SHOW_COMMENT);
  while (walk.nextNode()) drawn.push(walk.currentNode.nodeValue.trim());
  svg.querySelectorAll('text').forEach(t => drawn.push(t.textContent));
}
const prose = [];
const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walk.nextNode()) {
  const n = walk.currentNode;
  if (!n.parentElement.closest('pre, code, svg, style')) prose.push(n.nodeValue);
}
return {
  scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
  height: root.scrollHeight, figures: document.querySelectorAll('figure').length,
  plots: plots, boxes: boxes, drawn: drawn, prose: prose.join(' '),
  all: document.documentElement.outerHTML.includes('mathdefault'),
};
"""


def _binary(env: str, *names: str) -> str | None:
    if os.environ.get(env):
        return os.environ[env] if Path(os.environ[env]).exists() else None
    for name in names:
        found = shutil.which(name)
        if found:
            return found
        if Path(f"/usr/bin/{name}").exists():
            return f"/usr/bin/{name}"
    return None


def _missing() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if _binary("LOGDIAG_CHROMIUM", "chromium", "chromium-browser") is None:
        return "Chromium not found (apt-get install chromium; or set LOGDIAG_CHROMIUM)"
    if _binary("LOGDIAG_CHROMEDRIVER", "chromedriver") is None:
        return "chromedriver not found (apt-get install chromium-driver, or LOGDIAG_CHROMEDRIVER)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


@pytest.fixture(scope="module")
def shots(request: pytest.FixtureRequest) -> Path:
    chosen = os.environ.get("LOGDIAG_SCREENSHOTS")
    folder = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="logdiag-report-shots-"))
    folder.mkdir(parents=True, exist_ok=True)
    message = f"report screenshots: {folder} (LOGDIAG_SCREENSHOTS chooses the folder)"
    # Printed past pytest's output capture, so that the path shows even when the tests pass.
    capman = request.config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        with capman.global_and_fixture_disabled():
            print(f"\n{message}")
    else:
        print(message)
    return folder


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Case name → the HTML report the CLI wrote for it."""
    folder = tmp_path_factory.mktemp("browser-reports")
    cases = [*CASES, (DERIVED, idle_gap_log(folder), None)]
    out: dict[str, Path] = {}
    for name, log, base in cases:
        html = folder / f"{name}.html"
        args = ["report", str(log), "-o", str(html)]
        if base is not None:
            args += ["--baseline", str(base)]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0 and html.is_file(), (name, r.output)
        out[name] = html
    return out


class Browser:
    """One headless Chromium for the module, started again when a page does not answer: on a
    loaded machine a renderer has been seen to stall for the whole page-load timeout on one page
    and pass at once when rerun alone, so a stalled page gets one fresh browser and one retry
    (a page that fails twice still fails the test)."""

    def __init__(self, profiles: pytest.TempPathFactory) -> None:
        self._profiles = profiles
        self.driver: Any = None
        self.restarts = 0
        self.start()

    def start(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        opts = webdriver.ChromeOptions()
        opts.binary_location = str(_binary("LOGDIAG_CHROMIUM", "chromium", "chromium-browser"))
        for flag in CHROME_FLAGS:
            opts.add_argument(flag)
        opts.add_argument(f"--user-data-dir={self._profiles.mktemp('chromium-profile')}")
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(str(_binary("LOGDIAG_CHROMEDRIVER", "chromedriver")))
        self.driver = webdriver.Chrome(service=service, options=opts)
        # A report page is one local file: a minute is long even on a busy machine.
        self.driver.set_page_load_timeout(PAGE_TIMEOUT_S)
        self.driver.set_script_timeout(PAGE_TIMEOUT_S)

    def restart(self) -> None:
        self.quit()
        self.restarts += 1
        self.start()

    def quit(self) -> None:
        # A stalled browser may not answer its quit either; the next start is a new process.
        with contextlib.suppress(Exception):
            self.driver.quit()


PAGE_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory)
    try:
        yield b
    finally:
        b.quit()


def _screenshot(driver: Any, path: Path) -> None:
    """The whole page, not just the window (Chrome's DevTools capture beyond the viewport)."""
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(shot["data"]))


def _load(browser: Browser, page: Path, width: int, shot: Path) -> tuple[dict[str, Any], list[Any]]:
    driver = browser.driver
    driver.set_window_size(width, WINDOW_HEIGHT)
    driver.get(page.resolve().as_uri())
    _screenshot(driver, shot)
    m = driver.execute_script(MEASURE)
    return m, [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", [c[0] for c in CASES] + [DERIVED])
def test_report_in_chromium(
    name: str, width: int, reports: dict[str, Path], browser: Browser, shots: Path
) -> None:
    from selenium.common.exceptions import TimeoutException, WebDriverException

    shot = shots / f"{name}-{width}.png"
    try:
        m, errors = _load(browser, reports[name], width, shot)
    except (TimeoutException, WebDriverException):
        browser.restart()
        m, errors = _load(browser, reports[name], width, shot)

    assert errors == [], f"console errors: {errors}"
    assert m["scrollWidth"] <= m["clientWidth"], (
        f"the page scrolls sideways at {width} px: {m['scrollWidth']} > {m['clientWidth']}"
    )
    assert m["boxes"] == [], f"table boxes wider than the page: {m['boxes']}"
    assert len(m["plots"]) == m["figures"], "every figure holds one plot"
    flat = [p for p in m["plots"] if p["w"] < 1 or p["h"] < 1]
    assert flat == [], f"plots with no rendered size: {flat}"
    assert not m["all"], "\\mathdefault in the page"
    assert not [t for t in m["drawn"] if "$" in t], [t for t in m["drawn"] if "$" in t]
    tex = TEX.findall(m["prose"])
    assert not tex, f"raw math text in the page: {tex}"


def test_cases_cover_every_fixture_and_plot(reports: dict[str, Path]) -> None:
    """Every whole-run fixture is rendered, and together the cases draw every plot there is
    (so no plot escapes the browser check), the failure marker and the log-scale axis included."""
    from logparse.report.plots import PLOTS

    assert {p.stem for p in LOGS.glob("*.log")} <= set(reports)
    compared = {path for _n, log, base in CASES for path in (log, base) if path is not None}
    assert set(COMPARE.glob("*.log")) <= compared
    html = {name: path.read_text(encoding="utf-8") for name, path in reports.items()}
    drawn = {p.name for p in PLOTS if any(f'id="plot-{p.name}"' in h for h in html.values())}
    assert drawn == {p.name for p in PLOTS}
    assert "<!-- TP1 failed after weight-load (line 92) -->" in html["eagle3-kv-pool"]
    assert "<!-- 1M -->" in html[DERIVED]
