"""What a person sees, in Debian chromium: select responses on the Samples page into the
re-judge queue, run another judge (the loopback OpenAI server) on the Re-judge page, and read
the before/after comparison."""

from __future__ import annotations

import pytest

from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from tests.live_app import ARTIFACTS, StreamlitServer, click_row, launch_browser, settled
from tests.openai_server import OpenAIServer

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402


def test_select_run_diff(tmp_path, monkeypatch):
    ARTIFACTS.mkdir(exist_ok=True)
    db = tmp_path / "b.duckdb"
    build_and_write_demo(Store(db))
    with OpenAIServer(latency=0.05) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)  # the page's default server
        with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
            browser = launch_browser(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(f"{url}/samples")
            page.get_by_text("responses match").first.wait_for(timeout=120_000)
            settled(page)
            for row in range(3):
                click_row(page, row)
                page.get_by_text(f"{row + 1} selected").wait_for(timeout=30_000)
            page.get_by_role("button", name="Add to re-judge queue").click()
            page.get_by_text("Re-judge these: 3").wait_for(timeout=30_000)

            page.get_by_role("link", name="Re-judge").click()
            page.get_by_text("3 responses selected").wait_for(timeout=60_000)
            model = page.get_by_label("Model", exact=True)
            model.fill("judge-test")
            model.press("Enter")
            settled(page)
            page.get_by_text("3 calls to make").wait_for(timeout=60_000)
            page.get_by_role("button", name="Run").click()
            page.get_by_role("heading", name="Before and after, per sample and skill").wait_for(
                timeout=120_000
            )
            settled(page)
            tables = page.locator("[data-testid='stDataFrame']")
            tables.first.wait_for(timeout=60_000)  # the before/after table is drawn
            assert page.get_by_text("3 scored").first.is_visible()
            assert page.get_by_text("responses judged").count() == 0  # progress gone when done
            assert srv.count() == 3
            page.screenshot(path=str(ARTIFACTS / "rejudge.png"), full_page=True)
            browser.close()
