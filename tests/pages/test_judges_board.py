"""The Judges page's Leaderboard through AppTest: the heatmap holds a cell per judge × skill
with the view's value (and the ceiling in a row of its own), names stay text, the statistic
picked in the session changes the figure and the table, and a store without human labels says
why the board is empty. On the demo: every simulated LLM judge gets a row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.stats.agreement import LABELS
from analysis.views.agreement import SCOPE_CRITERION
from analysis.views.judge_board import CEILING, BoardQuery, judge_board
from tests.app_fixtures import judges_page, plotly_array
from tests.views.test_judge_board import DATASET, HOSTILE, board_rows, build_store

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGE = "pages/judges.py"


def _page(state: dict | None = None) -> AppTest:
    return judges_page("Leaderboard", state)


def _arr(v) -> np.ndarray:
    return plotly_array(v)


def _board_chart(at: AppTest) -> dict:
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    heat = [s for s in specs if s["data"] and s["data"][0]["type"] == "heatmap"]
    assert len(heat) == 1, [s["data"][0].get("type") for s in specs if s["data"]]
    return heat[0]


def _use(monkeypatch, store: Store) -> None:
    monkeypatch.setenv("FINEGRAIN_DB", str(store.path))
    st.cache_data.clear()


@pytest.fixture
def store(tmp_path, monkeypatch):
    s = build_store(tmp_path)
    _use(monkeypatch, s)
    yield s
    st.cache_data.clear()


def _expected(store: Store, stat: str):
    board = judge_board(store, BoardQuery(Filters(DATASET)))
    rows = board.stats[board.stats["statistic"] == stat]
    pooled = rows[rows["scope"] != SCOPE_CRITERION]
    judges = list(pooled.sort_values("value", ascending=stat == "mae")["judge"])  # best first
    skills = list(dict.fromkeys(rows.loc[rows["scope"] == SCOPE_CRITERION, "skill"]))
    grid = np.full((len(judges), len(skills) + 1), np.nan)
    for r in rows.itertuples():
        col = skills.index(r.skill) if r.scope == SCOPE_CRITERION else len(skills)
        grid[judges.index(r.judge), col] = r.value
    ceiling = board.ceiling[board.ceiling["statistic"] == stat]
    return judges, grid, ceiling["value"].to_numpy(float)


def _check(at: AppTest, store: Store, stat: str) -> None:
    fig = _board_chart(at)
    judges, grid, ceiling = _expected(store, stat)
    z = _arr(fig["data"][0]["z"])
    assert z.shape == grid.shape == (3, 5)  # judges with aligned items × 4 skills + pooled
    np.testing.assert_array_equal(z, grid)
    np.testing.assert_array_equal(_arr(fig["data"][1]["z"]).ravel(), ceiling)
    ticks = fig["layout"]["yaxis"]["ticktext"]
    assert [
        t.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for t in ticks
    ] == judges
    assert "&lt;b&gt;judge-c&lt;/b&gt; &amp; 100%" in ticks and HOSTILE not in ticks
    assert [t.replace("<br>", " ") for t in fig["layout"]["yaxis2"]["ticktext"]] == [CEILING]
    table = next(df.value for df in at.dataframe if "Gap to the ceiling" in df.value.columns)
    assert list(dict.fromkeys(table["Judge"])) == [*judges, CEILING]  # ranked, ceiling last
    got = table.set_index(["Judge", "Skill"])["Value"]
    assert got[("judge-a", "Factuality")] == pytest.approx(
        grid[judges.index("judge-a"), 1], abs=5e-4
    )


def test_leaderboard_chart_and_table_hold_the_view(store):
    at = _page()
    assert at.session_state["jd_stat"] == "spearman"
    _check(at, store, "spearman")
    assert any(b.label.startswith("Download the leaderboard") for b in at.get("download_button"))


def test_statistic_from_the_session(store):
    at = _page({"jd_stat": "mae", "jd_level": "instance"})
    _check(at, store, "mae")  # MAE is over items at any level
    layout = json.dumps(_board_chart(at)["layout"], ensure_ascii=False)
    assert f"{LABELS['mae']} of each LLM judge" in layout


def test_no_human_labels_says_why(tmp_path, monkeypatch):
    rows = board_rows()
    s = build_store(tmp_path, rows[rows["kind"] == "llm"])
    _use(monkeypatch, s)
    at = _page()
    assert not at.get("plotly_chart")
    assert any("No human labels yet" in i.value for i in at.info)
    st.cache_data.clear()


def test_demo_has_a_row_per_simulated_judge(app_db):
    at = _page()
    fig = _board_chart(at)
    board = judge_board(Store(app_db), BoardQuery(Filters("demo")))
    judges = [j for j in board.judges if j in set(board.stats["judge"])]
    assert len(judges) >= 1
    assert _arr(fig["data"][0]["z"]).shape[0] == len(judges)
