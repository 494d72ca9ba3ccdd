"""The report opened as a file in Debian chromium with no network: every request whose URL is
not ``file://`` is aborted and recorded, and none may be made. Each figure is drawn by the
inline plotly.js (a ``.js-plotly-plot`` with its ``.main-svg`` and text in it), no request
fails, no dialog opens, the store's hostile texts (a script tag, a markdown image, an outside
link) are on the page verbatim as text nodes and made no element, and printing to PDF works,
with the interactive toolbars hidden in print."""

from __future__ import annotations

import pytest

from analysis.charts.report import report
from analysis.core.filters import Filters
from tests.live_app import ARTIFACTS, launch_browser
from tests.report_fixtures import DATASET, HOSTILE, figures, hostile_report_store

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

SHOTS = ARTIFACTS / "report"

# Every figure block holds a drawn plotly chart: its SVG exists, has a size and has text.
DRAWN = """(n) => {
  const blocks = [...document.querySelectorAll('div.figure')];
  return blocks.length === n && blocks.every((b) => {
    const svg = b.querySelector('.js-plotly-plot .main-svg');
    const wide = svg && svg.getBoundingClientRect().width > 100;
    return wide && svg.querySelectorAll('text').length > 0;
  });
}"""

# The page's text nodes (outside script and style), and anything only markup could have made.
READ = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement.tagName;
    if (p !== 'SCRIPT' && p !== 'STYLE') texts.push(n.data);
  }
  const loaders = [...document.querySelectorAll('img, iframe, object, embed, link, script[src]')]
    .map((e) => e.outerHTML.slice(0, 200));
  const links = [...document.querySelectorAll('[href], [*|href]')]
    .filter((e) => {
      const h = e.getAttribute('href') || e.getAttribute('xlink:href') || '';
      return !h.startsWith('#') && !h.startsWith('data:image/');
    })
    .map((e) => e.outerHTML.slice(0, 200));
  return {texts, loaders, links};
}"""

MODEBAR_SHOWN = """() => [...document.querySelectorAll('.modebar-container')]
  .filter((e) => getComputedStyle(e).display !== 'none').length"""


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    store = hostile_report_store(root / "store.duckdb")
    data = report(store, Filters(DATASET))
    path = root / "report.html"
    path.write_bytes(data)
    return path, sum(len(v) for v in figures(data.decode("utf-8")).values())


def test_report_opens_offline_draws_every_chart_and_prints(report_file):
    path, n_figures = report_file
    assert n_figures >= 6  # leaderboard, radar, heatmaps, agreement, ceiling
    events: dict[str, list[str]] = {"blocked": [], "failed": [], "dialogs": [], "errors": []}

    def route(r) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            events["blocked"].append(r.request.url)
            r.abort()

    def dialog(d) -> None:
        events["dialogs"].append(f"{d.type}: {d.message}")
        d.dismiss()

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        context.route("**/*", route)
        page = context.new_page()
        page.on("dialog", dialog)
        page.on("requestfailed", lambda r: events["failed"].append(r.url))
        page.on("pageerror", lambda e: events["errors"].append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_function(DRAWN, arg=n_figures, polling=250, timeout=60_000)
        page.screenshot(path=str(SHOTS / "screen.png"), full_page=True)
        seen = page.evaluate(READ)
        assert page.evaluate(MODEBAR_SHOWN) > 0  # interactive on screen

        page.emulate_media(media="print")
        assert page.evaluate(MODEBAR_SHOWN) == 0  # no toolbar on paper
        pdf = page.pdf(print_background=True)
        browser.close()

    (SHOTS / "report.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
    assert events == {"blocked": [], "failed": [], "dialogs": [], "errors": []}
    for hostile in HOSTILE:
        assert any(hostile in t for t in seen["texts"]), hostile
    assert seen["loaders"] == [] and seen["links"] == []
