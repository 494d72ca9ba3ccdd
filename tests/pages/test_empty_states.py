"""Every page's empty states and the radar's defaults through Streamlit's AppTest, on the small
known datasets of tests/guidance_fixtures.py in a real DuckDB file: the message names its cause
and next step, the command lines are shown as code, the buttons open the right page (filling a
queue first where they say so), Coverage shows without scores, and the radar starts from the
best-scored models (checked against pandas on the store)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.views import queues
from tests.guidance_fixtures import BLANK_MODELS, INSTANCES, JUDGE, UNSCORED, write_guidance

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture
def db(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "g.duckdb"
    s = Store(path)
    s.ensure()
    write_guidance(s)
    monkeypatch.setenv("FINEGRAIN_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def _page(page: str, dataset: str, **state) -> AppTest:
    """Open ``page`` on ``dataset`` with these session-state values set before the first run
    (AppTest under st.navigation keeps sidebar state only from before the first run)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = dataset
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _text(md: str) -> str:
    """A markdown body as the text a person reads (plain() escapes punctuation)."""
    return re.sub(r"\\(.)", r"\1", md).replace("**", "").replace("\u2060", "")


def _infos(at: AppTest) -> str:
    return " ".join(_text(i.value) for i in at.info)


def _buttons(at: AppTest) -> dict[str, object]:
    return {b.label: b for b in at.button}


def _figs(at: AppTest) -> dict[str, dict]:
    out = {}
    for el in at.get("plotly_chart"):
        fig = json.loads(el.proto.spec)
        out[fig["layout"].get("title", {}).get("text", "")] = fig
    return out


def _instances() -> pd.DataFrame:
    rows = [(i, d) for i, (_, d, _, _) in INSTANCES.items()]
    return pd.DataFrame(rows, columns=["instance_id", "domains"])


def test_overview_without_scores_explains_offers_steps_and_draws_coverage(db):
    at = _page("pages/overview.py", "blank")
    info = _infos(at)
    assert "No scores yet." in info and "The dataset blank has no scores at all" in info
    codes = [c.value for c in at.code]
    assert f"finegrain import-scores FILE --dataset blank --db {db}" in codes
    assert any(c.startswith("finegrain judge --backend openai") for c in codes)
    assert {"Re-judge this slice", "Annotate 20 responses of this slice"} <= set(_buttons(at))
    cov = next(f for t, f in _figs(at).items() if t.startswith("Coverage"))
    heat = cov["data"][0]
    per_domain = _instances().explode("domains").groupby("domains")["instance_id"].nunique()
    assert list(heat["x"]) == sorted(per_domain.index, key=["Math", "Coding"].index) or set(
        heat["x"]
    ) == set(per_domain.index)
    texts = {(y, x): t for y, row in zip(heat["y"], heat["text"], strict=True)
             for x, t in zip(heat["x"], row, strict=True)}  # fmt: skip
    for (_, domain), t in texts.items():
        assert int(t) == per_domain[domain]


def test_rejudge_this_slice_opens_rejudge_by_the_sidebars_filters(db):
    at = _page("pages/overview.py", "blank", **{"domains::blank": ["Math"]})
    _buttons(at)["Re-judge this slice"].click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.title[0].value == "Re-judge"
    assert at.query_params.get("source") == "filters"
    assert at.query_params.get("dataset") == "blank"
    assert at.query_params.get("domains") == "Math"  # the sidebar's view travels along
    assert at.radio(key="rj_source::blank").value == "filters"
    math = sum("Math" in d for d in _instances()["domains"]) * len(BLANK_MODELS)
    assert f"{math} responses selected" in " ".join(c.value for c in at.caption)


def test_annotate_button_fills_the_queue_and_opens_annotate(db):
    at = _page("pages/breakdowns.py", "blank")
    assert "No scores yet." in _infos(at)
    _buttons(at)["Annotate 20 responses of this slice"].click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.title[0].value == "Annotate"
    queued = [q.key for q in queues.items(Store(db), queues.ANNOTATE, "blank")]
    expected = [(i, m) for i in sorted(INSTANCES, key=int) for m in sorted(BLANK_MODELS)]
    assert queued == expected  # all 18 (fewer than 20), in instance order


def test_filters_that_exclude_everything_say_which_to_widen(db):
    state = {"models::scored": ["a"], "domains::scored": ["Math"], "levels::scored": [5]}
    for page in ("pages/overview.py", "pages/radar.py", "pages/breakdowns.py"):
        info = _infos(_page(page, "scored", **state))
        assert "No scores match the current filters." in info, page
        assert "Widen Models (" in info and "or Difficulty (" in info, page
        assert "Widen Domain" not in info and "or Domain" not in info, page
    overview = _page("pages/overview.py", "scored", **state)
    assert any(t.startswith("Coverage") for t in _figs(overview))  # instances still match


def test_human_vs_judge_names_the_missing_scorer_and_notes_missing_humans(db):
    at = _page("pages/agreement.py", "scored")
    info = _infos(at)
    assert "One scorer only." in info and f"Only the LLM judge {JUDGE}" in info
    assert "missing: human labels" in info
    assert "Annotate 20 responses it scored" in _buttons(at)
    assert any("--kind human --judge NAME" in c.value for c in at.code)
    assert not _figs(at)
    twin = _page("pages/agreement.py", "twin")
    assert "No human labels yet." in _infos(twin)
    assert _figs(twin)  # a note: the page still compares the two LLM judges


def test_empty_annotate_queue_fills_from_the_slice(db):
    at = _page("pages/annotate.py", "blank", annotator="alice")
    assert "The annotate queue of this dataset is empty (blank)." in _infos(at)
    assert "Open Samples" in _buttons(at)
    _buttons(at)["Queue 20 responses of this slice"].click().run()
    assert not at.exception, [e.message for e in at.exception]
    n = len(INSTANCES) * len(BLANK_MODELS)
    assert at.get("progress")[0].proto.text == f"0 of {n} answered"


def test_empty_rejudge_queue_offers_the_filters(db):
    at = _page("pages/rejudge.py", "blank")
    assert "The re-judge queue of this dataset is empty (blank)." in _infos(at)
    _buttons(at)["Re-judge by the sidebar's filters"].click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.radio(key="rj_source::blank").value == "filters"


def test_samples_says_which_constraint_to_relax(db):
    at = _page("pages/samples.py", "scored", **{"s_text::scored": "no such words"})
    info = _infos(at)
    assert "No responses match the search and filters" in info
    assert "Relax the search 'no such words' (36 matches without it)" in info


def _pandas_top(db: Path, k: int) -> list[str]:
    with Store(db).read() as con:
        rows = con.execute(
            "SELECT model, score FROM latest_scores WHERE dataset = 'scored' AND judge = ?", [JUDGE]
        ).df()
    means = rows.dropna(subset=["score"]).groupby("model")["score"].mean()
    return sorted(means.index, key=lambda m: (-means[m], m))[:k]


def test_radar_defaults_to_the_best_scored_models_and_compares_the_top_two(db):
    at = _page("pages/radar.py", "scored", radar_compare=True)  # the comparison open
    picker = at.multiselect(key="radar_models::scored::")
    top = _pandas_top(db, 4)
    assert picker.value == top and UNSCORED not in picker.value
    assert UNSCORED in picker.options[-1] and "no scores from j" in picker.options[-1]
    radar = next(f for t, f in _figs(at).items() if t.startswith("Mean score per axis"))
    drawn = [t["name"] for t in radar["data"] if t.get("mode") == "lines+markers"]
    assert set(drawn) == set(top)
    assert at.selectbox(key="radar_a").value == top[0]
    assert at.selectbox(key="radar_b").value == top[1]
    assert any("paired difference" in t for t in _figs(at))


def test_radar_pair_without_shared_instances_and_unscored_picks(db):
    pair = {"radar_models::scored::": ["d", "e"], "radar_compare": True}  # the comparison open
    at = _page("pages/radar.py", "scored", **pair)
    info = _infos(at)
    assert "No shared instances." in info and "e and d share no instance" in info  # best first
    only = _page("pages/radar.py", "scored", **{"radar_models::scored::": [UNSCORED]})
    assert "None of the picked models" in _infos(only)
    assert f"(best Overall first): {', '.join(_pandas_top(db, 5))}" in _infos(only)
