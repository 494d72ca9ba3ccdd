"""The Judges page's Leniency and Failures sections through AppTest on the demo: the figures
hold the view's numbers, flagged cells are outlined, the failing judgments link to Samples, and
a store without human labels says why Leniency is empty."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.demo import JUDGE
from analysis.ingest.demo_panel import LENIENT, LENIENT_SKILLS, PANEL
from analysis.views import judge_failures as jf
from analysis.views import judge_leniency as jl
from analysis.views.tables import judge_label
from tests.app_fixtures import judges_page, plotly_array

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGE = "pages/judges.py"


def _page(section: str, state: dict | None = None) -> AppTest:
    return judges_page(section, state)


def _arr(v) -> np.ndarray:
    return plotly_array(v)


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _table(at: AppTest, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError([list(d.value.columns) for d in at.dataframe])


@pytest.fixture
def view(app_db: Path) -> jl.Leniency:
    return jl.leniency(Store(app_db), jl.LeniencyQuery(Filters("demo")))


def test_leniency_draws_the_views_matrix_and_flags(app_db, view):
    at = _page("Leniency")
    matrix, dist = _charts(at)
    heat = matrix["data"][0]
    skills = [s for s in view.skills if s in set(view.cells["skill"].dropna())] + [None]
    want = np.array([[view.cells.loc[(view.cells["judge"] == j)
                                     & (view.cells["skill"].isna() if s is None
                                        else view.cells["skill"] == s), "diff"].squeeze()
                      for s in skills] for j in view.judges], dtype=float)  # fmt: skip
    assert np.allclose(_arr(heat["z"]), want, equal_nan=True, rtol=0, atol=1e-12)
    outlined = {(int(round(s["y0"] + 0.5)), int(round(s["x0"] + 0.5)))
                for s in matrix["layout"].get("shapes", [])}  # fmt: skip
    lenient = list(view.judges).index(LENIENT)
    assert outlined == {(lenient, skills.index(s)) for s in LENIENT_SKILLS}
    table = _table(at, "Flagged")
    flagged = table[table["Flagged"] != ""]
    assert sorted(flagged["Flagged"]) == ["lenient"] * 3 and set(flagged["Judge"]) == {LENIENT}
    # The distributions: the first skill by default, one bar series per scorer, humans first.
    first = skills[0]
    d = view.dist[view.dist["skill"] == first]
    assert dist["data"][0]["name"].startswith(jl.HUMANS)
    humans = d[d["scorer"] == jl.HUMANS].set_index("value")["share"]
    shown = dict(zip(dist["data"][0]["x"], _arr(dist["data"][0]["y"]), strict=True))
    assert shown == pytest.approx((humans * 100).to_dict())


def test_the_distribution_follows_the_chosen_skill(app_db, view):
    at = _page("Leniency", {"jd_ln_skill::demo": "readability"})
    dist = _charts(at)[1]
    assert "Readability" in dist["layout"]["title"]["text"]
    lenient = view.dist[(view.dist["skill"] == "readability") & (view.dist["scorer"] == LENIENT)]
    trace = next(t for t in dist["data"] if t["name"].startswith(LENIENT))
    shown = dict(zip(trace["x"], _arr(trace["y"]), strict=True))
    assert {k: v for k, v in shown.items() if v} == pytest.approx(
        (lenient.set_index("value")["share"] * 100).to_dict()
    )
    assert at.query_params.get("lnskill") in ("readability", ["readability"])


def test_failures_draws_the_views_rates_and_lists_the_failures(app_db):
    r = jf.failures(Store(app_db), jf.FailuresQuery(Filters("demo")))
    at = _page("Failures")
    (fig,) = _charts(at)
    pooled = r.rates[r.rates["skill"].isna()].reset_index(drop=True)
    for trace, key in zip(fig["data"], jf.RATES, strict=True):
        assert np.allclose(_arr(trace["x"]), pooled[f"rate_{key}"] * 100, rtol=0, atol=1e-12)
        assert np.allclose(
            _arr(trace["error_x"]["array"]),
            (pooled[f"high_{key}"] - pooled[f"rate_{key}"]) * 100,
            atol=1e-9,
        )
    failing = _table(at, "Sample")
    assert len(failing) == len(r.failing) > 0
    assert failing["Sample"].str.startswith("samples?dataset=demo&instance=").all()
    assert set(failing["Status"]) == {"call failed", "unparseable output"}
    rates = _table(at, "parse failure (%)")
    assert len(rates) == len(r.rates)


def test_leniency_without_human_labels_says_so(tmp_path, monkeypatch):
    import streamlit as st

    from tests.views.test_judge_leniency import DS, make_store

    store = make_store(tmp_path / "n.duckdb", [("1", "m", "j", "correctness", 3.0)],
                       {"j": "llm"})  # fmt: skip
    monkeypatch.setenv("FINEGRAIN_DB", str(store.path))
    st.cache_data.clear()
    at = _page("Leniency", {"dataset": DS})
    assert any("No human labels" in i.value for i in at.info)
    assert not at.get("plotly_chart")
    st.cache_data.clear()


def test_the_panel_leaves_gpt4_the_default_judge(app_db):
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    picker = at.sidebar.selectbox(key="judge::demo")
    assert picker.value == JUDGE  # the most scores: first, and the default
    assert {judge_label(j, "llm") for j in (JUDGE, *PANEL)} <= set(picker.options)
