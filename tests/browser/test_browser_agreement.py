"""What a person sees: the Human-vs-judge page in Debian chromium draws its three charts, and
the human ceiling's chart when its tab is opened."""

from __future__ import annotations

import shutil

import pytest

from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

DRAWN = """(minBars) => {
  const bars = document.querySelectorAll('.js-plotly-plot .barlayer .point').length;
  const heat = document.querySelectorAll('.js-plotly-plot .heatmaplayer image').length;
  const gl = document.querySelectorAll('.js-plotly-plot canvas').length;
  return bars >= minBars && heat >= 1 && gl >= 1;
}"""


def test_agreement_page_draws_bars_heatmap_and_scatter(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    db = tmp_path / "b.duckdb"
    build_and_write_demo(Store(db))
    with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 2600})
        page.goto(f"{url}/agreement")
        page.get_by_role("heading", name="Human vs judge").wait_for(timeout=120_000)
        # Drawn, not just mounted: 13 judge bars, the heatmap image, the WebGL scatter's canvas.
        page.wait_for_function(DRAWN, arg=13, timeout=120_000)
        assert page.get_by_text("Worst disagreements").is_visible()
        # The ceiling is computed when its tab opens: 13 human + 13 judge bars beside the 13.
        page.get_by_role("tab", name="Human ceiling").click()
        page.wait_for_function(DRAWN, arg=39, timeout=120_000)
        assert page.get_by_text("Human ceiling (leave-one-out)").is_visible()
        assert page.get_by_text("Simulated data").first.is_visible()
        page.screenshot(path=str(ARTIFACTS / "agreement.png"), full_page=True)
        browser.close()
    shutil.copy(ARTIFACTS / "agreement.png", tmp_path / "agreement.png")
