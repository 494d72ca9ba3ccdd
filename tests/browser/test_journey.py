"""The first real-data journey, as a new user walks it in Debian chromium: a fresh server on an
empty store → Load FLASK (the real files) → Re-judge 5 responses chosen by the sidebar's filters
against the loopback OpenAI server → without a reload, Overview, Skill radar and Samples show that
judge's scores → import-scores from another process → one rerun → visible → reload → the same
view → the URL on a second fresh server → the same view and the same numbers."""

from __future__ import annotations

import shutil
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import duckdb
import pandas as pd
import pytest

from tests.browser.test_browser_url import CHARTS, VIEW, _charts_drawn, _pick, _query, _ready
from tests.live_app import ARTIFACTS, REPO, StreamlitServer, click_row, launch_browser, settled
from tests.openai_server import OpenAIServer

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

MODELS = ("vicuna_13b", "tulu_30b")
DOMAIN = "Coding"


def _rows(db, sql: str, params: list) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params).df()


def _board(page) -> dict[str, float]:
    """The Overview leaderboard chart: model → mean, as drawn."""
    chart = next(c for c in page.evaluate(CHARTS) if "mean score with 95% CI" in c["title"])
    name, x, y = chart["traces"][0][:3]
    return {m: round(v, 9) for m, v in zip(y, x, strict=True)}


def _means(scores: pd.DataFrame) -> dict[str, float]:
    """Overall per model: the mean of every non-N/A skill score (pandas, not the app)."""
    return {m: round(v, 9) for m, v in scores.dropna().groupby("model")["score"].mean().items()}


def _judge_scores(db, judge: str) -> pd.DataFrame:
    return _rows(db, "SELECT instance_id, model, skill, score FROM latest_scores "
                 "WHERE dataset = 'flask' AND judge = ?", [judge])  # fmt: skip


def _open(page, title: str) -> None:
    page.get_by_role("link", name=title).click()  # the sidebar's menu: no reload
    _ready(page, title)


def test_real_data_journey(flask_dir, tmp_path, monkeypatch):
    ARTIFACTS.mkdir(exist_ok=True)
    db = tmp_path / "journey.duckdb"  # nothing there: the server starts on an empty store
    with OpenAIServer(latency=0.02) as srv, sync_api.sync_playwright() as p:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)  # the Re-judge page's server
        monkeypatch.setenv("OPENAI_API_KEY", "sk-journey")
        browser = launch_browser(p)
        with StreamlitServer(db) as url:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(url)
            _ready(page, "Overview")
            # ---- Load FLASK from the real files
            page.get_by_label("Source: base URL or local folder").fill(str(flask_dir))
            page.get_by_role("button", name="Load FLASK").click()
            page.get_by_text("FLASK imported").wait_for(timeout=300_000)
            page.get_by_role("button", name="Show FLASK").click()
            settled(page)
            assert _query(page)["dataset"] == ["flask"]
            # ---- the sidebar's filters choose what to re-judge
            for model in MODELS:
                _pick(page, "Models", model)
            _pick(page, "Domain", DOMAIN)
            _open(page, "Re-judge")
            page.get_by_test_id("stRadioGroup").get_by_text("The sidebar's filters").click()
            settled(page)
            limit = page.get_by_label("At most (by filters)")
            limit.fill("5")
            limit.press("Enter")
            settled(page)
            page.get_by_text("5 responses selected").wait_for(timeout=60_000)
            model = page.get_by_label("Model", exact=True)
            model.fill("judge-journey")
            model.press("Enter")
            settled(page)
            page.get_by_text("5 calls to make").wait_for(timeout=60_000)
            page.get_by_role("button", name="Run").click()
            page.get_by_text("No other judge of this dataset").wait_for(timeout=180_000)
            settled(page)
            assert srv.count() == 5
            ((judge,),) = _rows(db, "SELECT DISTINCT judge FROM latest_scores "
                                "WHERE dataset = 'flask'", []).itertuples(index=False)  # fmt: skip
            judged = _judge_scores(db, judge)
            assert set(judged["model"]) <= set(MODELS) and len(judged) >= 5
            assert _query(page)["judge"] == [judge]  # the sidebar selected the run's judge
            # ---- without a reload: Overview, Skill radar and Samples show its scores
            _open(page, "Overview")
            _charts_drawn(page, 2)
            assert _board(page) == _means(judged)
            _open(page, "Skill radar")
            radar = _charts_drawn(page, 1)[0]
            assert {t[0] for t in radar["traces"] if t[3]} >= set(judged["model"])
            _open(page, "Samples")
            order = judged.assign(n=judged["instance_id"].astype(int)).sort_values(["n", "model"])
            first = order.iloc[0]  # the slice's first response: the table's first row
            click_row(page, 0)
            settled(page)
            page.get_by_text(judge).first.wait_for(timeout=30_000)  # its card in the detail
            mine = judged[(judged["instance_id"] == first["instance_id"])
                          & (judged["model"] == first["model"])]  # fmt: skip
            want = sorted("N/A" if pd.isna(v) else f"{v:g}" for v in mine["score"])
            blocks = page.locator("[data-testid='stText']").all_inner_texts()
            cards = [sorted(line.rsplit(": ", 1)[-1] for line in b.splitlines()) for b in blocks]
            assert want in cards, (want, blocks)  # the card's scores are that judge's
            assert _query(page)["instance"] == [str(first["instance_id"])]
            # ---- import-scores from another process; one rerun shows them
            lab = judged.assign(score=(judged["score"].fillna(3) % 5) + 1)
            lab.to_csv(tmp_path / "lab.csv", index=False)
            out = subprocess.run(
                [sys.executable, "-m", "analysis", "import-scores", str(tmp_path / "lab.csv"),
                 "--db", str(db), "--dataset", "flask", "--judge", "lab-judge", "--kind", "llm"],
                cwd=REPO, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert out.returncode == 0, out.stderr
            _open(page, "Overview")  # one rerun (any click)
            judge_box = page.locator("[data-testid='stSidebar']").get_by_role(
                "combobox", name="Judge"
            )
            judge_box.click()
            page.get_by_role("option", name="lab-judge", exact=False).click()
            settled(page)
            _charts_drawn(page, 2)
            assert _board(page) == _means(lab) and _query(page)["judge"] == ["lab-judge"]
            # ---- reload: the same dataset, judge, filters and numbers
            view, board, link = page.evaluate(VIEW), _board(page), page.url
            page.reload()
            _ready(page, "Overview")
            _charts_drawn(page, 2)
            assert page.evaluate(VIEW) == view and _board(page) == board
            assert view["Models"] == list(MODELS) and view["Domain"] == [DOMAIN]
            page.screenshot(path=str(ARTIFACTS / "journey_a.png"))
            shutil.copy(db, tmp_path / "other.duckdb")  # another server, the same data
        with StreamlitServer(tmp_path / "other.duckdb") as other_url:
            other = browser.new_page(viewport={"width": 1400, "height": 1600})
            other.goto(link.replace(url, other_url))
            _ready(other, "Overview")
            _charts_drawn(other, 2)
            assert other.evaluate(VIEW) == view and _board(other) == board
            assert parse_qs(urlsplit(other.url).query) == parse_qs(urlsplit(link).query)
            other.screenshot(path=str(ARTIFACTS / "journey_b.png"))
        browser.close()
