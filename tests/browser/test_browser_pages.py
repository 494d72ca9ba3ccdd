"""What a person sees: the Skill radar and Breakdowns pages in Debian chromium on the demo,
with their charts drawn (plotly's points and heatmaps counted in the DOM); the radar's
comparison and each Breakdowns tab opened by a click, its chart drawn and written into the URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser, settled

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

# Breakdowns' tabs and what each draws: a heatmap (the model's skills × levels or domains), the
# lines (8 models × 12 skills at 4 levels at least), the source-task table, the FLASK-Hard
# heatmap (relative change per skill × model).
ONE_HEATMAP = "() => document.querySelectorAll('.js-plotly-plot .heatmaplayer .hm').length === 1"
BREAKDOWN_TABS = (
    ("By difficulty", ONE_HEATMAP),
    (
        "Difficulty trends",
        "() => document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length"
        " >= 8 * 12 * 4",
    ),
    ("By domain", ONE_HEATMAP),
    (
        "By source task",
        "() => document.querySelectorAll('[data-testid=\"stDataFrame\"]').length === 1"
        " && !document.querySelector('.js-plotly-plot')",
    ),
    (
        "FLASK-Hard vs full",
        "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
        ".some((t) => t.textContent.startsWith('FLASK-Hard vs full set'))"
        " && document.querySelectorAll('.js-plotly-plot .heatmaplayer .hm').length === 1",
    ),
)


def _slug(tab: str) -> str:
    return tab.lower().replace(" ", "-")


def _count(page, selector: str) -> int:
    return page.evaluate(f"() => document.querySelectorAll({selector!r}).length")


def _open(page, url: str, title: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="Leaderboard").wait_for(timeout=120_000)
    page.get_by_role("link", name=title).click()  # through the router, as a person does
    page.get_by_role("heading", name=title, exact=True).wait_for(timeout=60_000)


def test_radar_and_breakdowns_draw_their_charts(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    with StreamlitServer(tmp_path / "b.duckdb") as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1500})
        _open(page, url, "Skill radar")
        # 4 models × 12 skills markers on the radar; the comparison's section arrives closed
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .polarlayer .point').length >= 48",
            timeout=90_000,
        )
        assert _count(page, ".js-plotly-plot .polarlayer .trace") == 8  # lines + CI whiskers
        assert _count(page, ".js-plotly-plot") == 1  # the radar alone
        page.get_by_text("Compare two models").click()  # opened: computed and drawn now
        settled(page)
        page.wait_for_function(  # 12 markers on the paired-difference chart
            "() => document.querySelectorAll('.js-plotly-plot .cartesianlayer .point').length"
            " >= 12",
            timeout=90_000,
        )
        assert parse_qs(urlsplit(page.url).query)["compare"] == ["1"]
        assert page.get_by_text("Simulated data").first.is_visible()
        # Streamlit scrolls inside its main block, so a tall viewport is the full-page shot
        page.set_viewport_size({"width": 1400, "height": 2300})
        page.screenshot(path=str(ARTIFACTS / "radar.png"))

        page.set_viewport_size({"width": 1400, "height": 1500})
        _open(page, url, "Breakdowns")
        # Only the open tab is drawn: each tab opened in turn, its chart or table waited for.
        for tab, drawn in BREAKDOWN_TABS:
            if tab != "By difficulty":  # the first tab is open on arrival
                page.get_by_role("tab", name=tab, exact=True).click()
                settled(page)
            page.wait_for_function(drawn, timeout=90_000)
            assert (
                page.get_by_role("tab", name=tab, exact=True).get_attribute("aria-selected")
                == "true"
            )
            want = [] if tab == "By difficulty" else [tab]  # the first tab leaves it out
            assert parse_qs(urlsplit(page.url).query).get("section", []) == want
            if tab == "By domain":
                assert page.get_by_text("counts toward both").is_visible()
            page.screenshot(path=str(ARTIFACTS / f"breakdowns-{_slug(tab)}.png"))
        page.get_by_role("tab", name="By difficulty", exact=True).click()
        settled(page)
        page.wait_for_function(BREAKDOWN_TABS[0][1], timeout=90_000)
        page.screenshot(path=str(ARTIFACTS / "breakdowns.png"))
        browser.close()
