"""What a person sees of a verbosity check: chromium on a demo store holding one check (run
against the loopback OpenAI server before the app starts): the Verbosity tab draws its chart,
and a rewritten response opens on the Samples page of the derived dataset."""

from __future__ import annotations

import shutil
from urllib.parse import urlencode

import pytest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import judge_verbosity as jv
from judges.config import JudgeConfig
from judges.outcome import RunOptions
from judges.rewrite import rewriter_config
from judges.verbosity import CheckRequest, run_check
from tests.judges.verbosity_fixtures import rewrite_or_judge
from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser, settled
from tests.openai_server import OpenAIServer
from tests.store_fixtures import query

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

DERIVED = "demo · verbose (rw-test)"
DRAWN = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.checkVisibility());
  return plots.length >= 1 && plots.every(p => p._fullLayout && p.querySelector('.point'));
}"""


def test_the_verbosity_tab_draws_and_a_rewrite_opens_in_samples(demo_db, tmp_path):
    path = tmp_path / "v.duckdb"
    shutil.copy(demo_db, path)
    store = Store(path)
    items = jv.sample(store, Filters("demo"), 12, 3)
    with OpenAIServer(responder=rewrite_or_judge) as srv:
        rewriter = rewriter_config(
            {"backend": "openai", "model": "rw-test", "base_url": srv.base_url}, "test"
        )
        judge = JudgeConfig("openai", "judge-test", base_url=srv.base_url)
        run_check(store, CheckRequest("demo", judge, rewriter, items, RunOptions(concurrency=4)))
    [(iid, model, text)] = query(
        store, "SELECT instance_id, model, text FROM responses WHERE dataset = ? "
        "ORDER BY instance_id, model LIMIT 1", [DERIVED],
    )  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    with StreamlitServer(path) as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        page.goto(f"{url}/judges?{urlencode({'dataset': 'demo', 'section': 'Verbosity'})}")
        page.get_by_role("heading", name="Judges", exact=True).wait_for(timeout=120_000)
        settled(page)
        page.wait_for_function(DRAWN, timeout=90_000)
        assert page.locator(".js-plotly-plot .point").count() >= 2  # both panels' markers
        assert not page.locator("[data-testid='stException']").count()
        page.get_by_text("12 rewrites stored, 0 failed").first.wait_for(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "judges-verbosity-check.png"))
        query_ = urlencode({"dataset": DERIVED, "instance": iid, "model": model})
        page.goto(f"{url}/samples?{query_}")
        settled(page)
        # The detail view shows the whole rewrite as plain text (the table above it only a
        # clipped cell): its first line and the rewriter's added phrase.
        shown = page.locator("[data-testid='stText']", has_text=text.splitlines()[0][:60])
        shown.first.wait_for(timeout=60_000)
        assert "In other words, to say the very same thing once more" in shown.first.inner_text()
        browser.close()
