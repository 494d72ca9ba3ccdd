"""What a person sees: the Skill radar and Breakdowns pages in Debian chromium on the demo,
with their charts drawn (plotly's points and heatmaps counted in the DOM)."""

from __future__ import annotations

import pytest

from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402


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
        # 4 models × 12 skills markers on the radar, 12 on the paired-difference chart
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .polarlayer .point').length >= 48"
            " && document.querySelectorAll('.js-plotly-plot .cartesianlayer .point').length"
            " >= 12",
            timeout=90_000,
        )
        assert _count(page, ".js-plotly-plot .polarlayer .trace") == 8  # lines + CI whiskers
        assert page.get_by_text("Compare two models").is_visible()
        assert page.get_by_text("Simulated data").first.is_visible()
        # Streamlit scrolls inside its main block, so a tall viewport is the full-page shot
        page.set_viewport_size({"width": 1400, "height": 2300})
        page.screenshot(path=str(ARTIFACTS / "radar.png"))

        page.set_viewport_size({"width": 1400, "height": 1500})
        _open(page, url, "Breakdowns")
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .heatmaplayer .hm').length >= 3"
            " && document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length"
            " >= 8 * 12 * 4",
            timeout=90_000,
        )
        assert page.get_by_text("counts toward both").is_visible()
        assert page.get_by_role("heading", name="FLASK-Hard vs the full set").is_visible()
        page.set_viewport_size({"width": 1400, "height": 4600})
        page.get_by_role("heading", name="FLASK-Hard vs the full set").wait_for()
        page.screenshot(path=str(ARTIFACTS / "breakdowns.png"))
        browser.close()
