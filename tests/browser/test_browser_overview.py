"""What a person sees: the Overview in Debian chromium draws the leaderboard."""

from __future__ import annotations

import pytest

from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402


def test_overview_shows_leaderboard(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    with StreamlitServer(tmp_path / "b.duckdb") as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(url)
        page.get_by_role("heading", name="Leaderboard").wait_for(timeout=120_000)
        chart = page.locator(".js-plotly-plot").first
        chart.wait_for(timeout=60_000)
        # Drawn, not just mounted: plotly rendered one marker per model.
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .scatterlayer .point').length >= 8",
            timeout=60_000,
        )
        assert page.get_by_text("Simulated data").first.is_visible()
        assert page.get_by_text("Overall").first.is_visible()
        page.screenshot(path=str(ARTIFACTS / "overview.png"), full_page=True)
        browser.close()


def test_load_flask_button_then_sidebar_shows_it(tmp_path, flask_dir):
    with StreamlitServer(tmp_path / "b.duckdb") as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(url)
        source = page.get_by_label("Source: base URL or local folder")
        source.wait_for(timeout=120_000)
        source.fill(str(flask_dir))
        source.press("Enter")
        page.get_by_role("button", name="Load FLASK").click()
        page.get_by_text("FLASK imported").wait_for(timeout=120_000)
        page.get_by_role("button", name="Show FLASK").click()
        page.get_by_text("has no scores at all").wait_for(timeout=60_000)
        side = page.locator("[data-testid='stSidebar']").inner_text()
        assert "FLASK" in side and "Simulated demo" not in side  # the dataset select's value
        assert page.get_by_text("Simulated data").count() == 0  # real data: no banner
        page.screenshot(path=str(ARTIFACTS / "overview-flask.png"), full_page=True)
        browser.close()
