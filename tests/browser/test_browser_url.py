"""What a person sees, in Debian chromium: the view lives in the URL (a link opened on a second,
fresh server shows the same widgets and the same numbers), and no source-file navigation is ever
listed in the sidebar, not even on a fresh server's very first request or a deep link."""

from __future__ import annotations

import shutil
from urllib.parse import parse_qs, urlsplit

import pytest

from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser, settled

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

PAGES = ("Overview", "Skill radar", "Breakdowns", "Human vs judge", "Samples", "Annotate",
         "Re-judge")  # fmt: skip
SOURCE_FILES = {"app", "common", "overview", "radar", "breakdowns", "agreement", "samples",
                "annotate", "rejudge", "__init__"}  # fmt: skip

# Records, from before the first byte of the page, every entry Streamlit's own sidebar
# navigation ever shows (a flash of the legacy pages/ listing is caught too).
RECORD_NAV = """
window.__nav = [];
new MutationObserver(() => {
  for (const a of document.querySelectorAll('[data-testid="stSidebarNav"] a,'
                                            + '[data-testid="stSidebarNavLink"]')) {
    const t = a.textContent.trim();
    if (!window.__nav.includes(t)) window.__nav.push(t);
  }
}).observe(document, {subtree: true, childList: true});
"""

# The widgets' values as a person reads them, by label (sidebar and page), and the charts' data.
VIEW = """() => {
  const out = {};
  const sel = '[data-testid="stSelectbox"], [data-testid="stMultiSelect"],'
            + '[data-testid="stTextInput"], [data-testid="stNumberInput"]';
  for (const w of document.querySelectorAll(sel)) {
    const label = w.querySelector('[data-testid="stWidgetLabel"]').innerText.trim();
    out[label] = w.dataset.testid === 'stMultiSelect'
      ? Array.from(w.querySelectorAll('[data-tag] [title]')).map(s => s.title)
      : w.querySelector('input').value;
  }
  for (const g of document.querySelectorAll('[role="radiogroup"]'))
    out[g.getAttribute('aria-label')] = Array.from(
      g.querySelectorAll('[aria-checked="true"]')).map(b => b.innerText.trim());
  for (const c of document.querySelectorAll('[data-testid="stCheckbox"]'))
    out[c.innerText.trim()] = c.querySelector('input').checked;
  return out;
}"""
# Each chart's traces as plain numbers: plotly's base64 arrays decoded, NaN as null.
CHARTS = """() => {
  const types = {f8: Float64Array, f4: Float32Array, i4: Int32Array, i2: Int16Array,
                 i1: Int8Array, u4: Uint32Array, u2: Uint16Array, u1: Uint8Array};
  const plain = v => {
    if (v && v.bdata !== undefined) {
      const bytes = Uint8Array.from(atob(v.bdata), c => c.charCodeAt(0));
      v = new types[v.dtype](bytes.buffer);
    }
    if (Array.isArray(v) || ArrayBuffer.isView(v))
      return Array.from(v, x => (typeof x === 'number' && Number.isNaN(x)) ? null : plain(x));
    return v === undefined ? null : v;
  };
  return Array.from(document.querySelectorAll('.js-plotly-plot')).map(g => ({
    title: (g.layout.title || {}).text || '',
    traces: g.data.map(t => ['name', 'x', 'y', 'r', 'theta', 'text'].map(k => plain(t[k]))),
  }));
}"""


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    path = tmp_path_factory.mktemp("url") / "demo.duckdb"
    build_and_write_demo(Store(path))
    return path


def _copy(src, tmp_path, name: str):
    dst = tmp_path / f"{name}.duckdb"
    shutil.copy(src, dst)
    return dst


def _ready(page, heading: str) -> None:
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=120_000)
    settled(page)


def _charts_drawn(page, n: int) -> list[dict]:
    # Count plots, not .main-svg elements: plotly draws two of those per plot, so n/2 plots
    # would pass for n on a slow machine.
    page.wait_for_function(
        "n => [...document.querySelectorAll('.js-plotly-plot')]"
        ".filter(p => p.querySelector('.main-svg')).length >= n",
        arg=n,
        timeout=90_000,
    )
    # A loaded machine may still be redrawing (a tab's rerun, a link's first run): the figures
    # count once no run is going and two reads a moment apart agree.
    last = None
    for _ in range(60):
        page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
            timeout=60_000
        )
        now = page.evaluate(CHARTS)
        if now == last:
            return now
        last = now
        page.wait_for_timeout(500)
    raise AssertionError("the charts kept changing for 30 s")


def _pick(page, label: str, option: str) -> None:
    """Choose one more option in a sidebar multiselect, as a person does (type, Enter)."""
    box = page.locator("[data-testid='stSidebar']").get_by_role("combobox", name=label)
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")
    settled(page)


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def _menu(page) -> list[str]:
    links = page.locator("[data-testid='stSidebar'] [data-testid='stPageLink'] a")
    return [links.nth(i).inner_text().split("\n")[-1].strip() for i in range(links.count())]


def test_no_source_file_navigation_on_a_fresh_servers_first_requests(demo_store, tmp_path):
    for name, path, heading in (("root", "/", "Overview"),
                                ("deep", "/agreement?dataset=demo", "Human vs judge")):  # fmt: skip
        db = _copy(demo_store, tmp_path, name)
        with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
            browser = launch_browser(p)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_init_script(RECORD_NAV)
            page = context.new_page()
            page.goto(url + path)  # the server's very first request
            _ready(page, heading)
            _charts_drawn(page, 2)  # the whole page drawn: a late listing is recorded too
            seen = page.evaluate("window.__nav")
            # Streamlit lists pages/ on a server's first run unless .streamlit/config.toml
            # sets client.showSidebarNavigation = false (app.py draws its own menu).
            assert not SOURCE_FILES & {s.lower() for s in seen}, seen
            assert seen == [], seen  # no built-in listing at all: the menu is ours
            assert [m for m in _menu(page) if m in PAGES] == list(PAGES)
            assert page.get_by_text("Page not found").count() == 0
            browser.close()


def test_a_link_opened_on_a_second_fresh_server_shows_the_same_view(demo_store, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    db_a, db_b = _copy(demo_store, tmp_path, "a"), _copy(demo_store, tmp_path, "b")
    with sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        with StreamlitServer(db_a) as url_a:
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto(url_a)
            _ready(page, "Overview")
            _pick(page, "Domain", "Math")
            _pick(page, "Models", "gpt4")
            _pick(page, "Models", "bard")
            _pick(page, "Models", "vicuna_13b")
            q = _query(page)  # a sidebar change updates the URL
            assert q["domains"] == ["Math"] and q["models"] == ["gpt4", "bard", "vicuna_13b"]
            assert q["dataset"] == ["demo"] and q["judge"] == ["gpt-4 (simulated)"]
            overview = (page.url, page.evaluate(VIEW), _charts_drawn(page, 2))
            page.get_by_role("link", name="Skill radar").click()
            _ready(page, "Skill radar")
            page.get_by_text("Compare two models").click()  # a section, closed on arrival
            settled(page)
            assert _query(page)["compare"] == ["1"]
            page.get_by_role("radio", name="4 abilities").click()
            settled(page)
            assert _query(page)["axes"] == ["ability"] and _query(page)["domains"] == ["Math"]
            radar = (page.url, page.evaluate(VIEW), _charts_drawn(page, 2))
            page.screenshot(path=str(ARTIFACTS / "url_state_a.png"))
            page.go_back()  # the browser's Back button: the previous URL is the view again
            page.wait_for_function("() => !location.search.includes('axes=')", timeout=30_000)
            settled(page)
            assert page.evaluate(VIEW)["Axes"] == ["12 skills"]
            assert page.evaluate(VIEW)["Domain"] == ["Math"]
            # Breakdowns draws only its open tab; the tab a person opens goes into the URL.
            page.get_by_role("link", name="Breakdowns").click()
            _ready(page, "Breakdowns")
            page.get_by_role("tab", name="By domain", exact=True).click()
            settled(page)
            assert _query(page)["section"] == ["By domain"] and _query(page)["domains"] == ["Math"]
            (domains,) = _charts_drawn(page, 1)
            assert "mean per skill × domain" in domains["title"].replace("<br>", " ")
            breakdowns = (page.url, page.evaluate(VIEW), [domains])
        with StreamlitServer(db_b) as url_b:  # another server: a fresh process and store file
            for heading, (link, view, charts) in (
                ("Overview", overview),
                ("Skill radar", radar),
                ("Breakdowns", breakdowns),  # the same tab open, its chart the same
            ):
                other = browser.new_page(viewport={"width": 1400, "height": 1400})
                other.goto(link.replace(url_a, url_b))
                _ready(other, heading)
                assert _charts_drawn(other, len(charts)) == charts  # the same numbers
                assert other.evaluate(VIEW) == view
                assert _query(other) == parse_qs(urlsplit(link).query)
            other.screenshot(path=str(ARTIFACTS / "url_state_b.png"))
        browser.close()
