"""What a person sees, in Debian chromium: a batch run left at the (loopback) batch service by
an earlier process is listed on the Re-judge page of a freshly started app, and Resume stores
its answers without sending the batch again."""

from __future__ import annotations

import duckdb
import pytest

from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.runner import RunOptions, run
from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser, settled
from tests.openai_batches import BatchService
from tests.openai_server import OpenAIServer

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402


def test_a_pending_batch_is_listed_and_resume_stores_it(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    db = tmp_path / "b.duckdb"
    build_and_write_demo(Store(db))
    con = duckdb.connect(str(db), read_only=True)
    try:
        items = con.execute(
            "SELECT instance_id, model FROM responses WHERE dataset = 'demo' "
            "AND text IS NOT NULL ORDER BY 1, 2 LIMIT 3"
        ).fetchall()
    finally:
        con.close()
    with OpenAIServer(batches=BatchService()) as srv:
        srv.batches.pause()
        cfg = JudgeConfig("openai-batch", "judge-test", base_url=srv.base_url, name="night judge")
        sent = run(Store(db), cfg, Selection("demo", items=tuple(items)), RunOptions(wait=False))
        assert sent.pending == 3
        srv.batches.resume()  # the service finishes while nobody is looking
        srv.batches.wait_for(next(iter(srv.batches.batches)), "completed")
        with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
            browser = launch_browser(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(f"{url}/rejudge")
            page.get_by_role("heading", name="Batches at the service").wait_for(timeout=120_000)
            settled(page)
            page.get_by_text(f"run {sent.run_id} · night judge").wait_for(timeout=30_000)
            resume = page.get_by_role("button", name="Resume", exact=True)
            resume.wait_for(state="visible", timeout=30_000)
            assert resume.is_enabled()
            page.screenshot(path=str(ARTIFACTS / "rejudge_batch_pending.png"), full_page=True)
            resume.click()
            page.get_by_text("3 scored").first.wait_for(timeout=120_000)
            settled(page)
            page.get_by_role("heading", name="Batches at the service").wait_for(
                state="detached", timeout=30_000
            )
            page.screenshot(path=str(ARTIFACTS / "rejudge_batch_resumed.png"), full_page=True)
            browser.close()
        assert srv.batches.submissions == 1  # resumed, never sent again
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute(
            "SELECT count(*) FILTER (parse_status = 'ok'), count(*) FROM judgments "
            "WHERE run_id = ?",
            [sent.run_id],
        ).fetchone()
        status = con.execute("SELECT status FROM runs WHERE run_id = ?", [sent.run_id])
        assert status.fetchone() == ("complete",)
    finally:
        con.close()
    assert stored == (3, 3)
