"""The Skill radar and Breakdowns pages through Streamlit's AppTest on the simulated demo:
default view, changed filters and page controls, a filter that leaves nothing, and a dataset
with its own criteria."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.ingest.score_files import import_scores

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
RADAR = "pages/radar.py"
BREAKDOWNS = "pages/breakdowns.py"
BREAKDOWN_SECTIONS = (
    "By difficulty", "Difficulty trends", "By domain", "By source task", "FLASK-Hard vs full",
)  # fmt: skip


@pytest.fixture
def db(app_db: Path) -> Path:
    return app_db


def _page(page: str, **state) -> AppTest:
    """Open ``page`` with these session-state values, set before the first run (AppTest under
    st.navigation keeps sidebar state only from before the first run). The router runs first,
    as in the app; then the page."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert os.environ["FINEGRAIN_DB"]
    return at


def _figs(at: AppTest) -> dict[str, dict]:
    """Plotly charts by title (their proto holds the figure JSON)."""
    out = {}
    for el in at.get("plotly_chart"):
        fig = json.loads(el.proto.spec)
        title = fig["layout"].get("title", {}).get("text", "")
        out[title.replace("<br>", " ")] = fig  # titles are wrapped to fit a phone
    return out


def _arr(v) -> np.ndarray:
    """A figure array from the JSON: plotly writes numeric arrays as base64 typed arrays."""
    if isinstance(v, dict) and "bdata" in v:
        out = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return out.reshape(v["shape"]) if "shape" in v else out
    return np.asarray(v)


def _frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def test_radar_default_four_models_overlaid_and_compared(db, monkeypatch):
    from analysis.views import radar as views

    pairs = []
    real = views.compare

    def counted(store, f, a, b, by):
        pairs.append((a, b))
        return real(store, f, a, b, by)

    monkeypatch.setattr(views, "compare", counted)
    at = _page(RADAR)
    assert at.title[0].value == "Skill radar"
    figs = _figs(at)
    radar = next(f for t, f in figs.items() if t.startswith("Mean score per axis"))
    lines = [t for t in radar["data"] if t["mode"] == "lines+markers"]
    assert len(lines) == 4 and all(len(_arr(t["r"])) == 13 for t in lines)  # 12 skills, closed
    assert "polar2" not in radar["layout"]  # overlaid, not small multiples
    table = next(df for df in _frames(at) if "N/A scores" in df.columns)
    assert len(table) == 48 and table["Scores (n)"].gt(0).all()
    # The paired comparison is a closed section on arrival: neither computed nor drawn.
    assert pairs == [] and len(figs) == 1 and "compare" not in at.query_params
    assert not [df for df in _frames(at) if "p (Holm)" in df.columns]
    at.session_state["radar_compare"] = True  # the visitor opens it
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert len(pairs) == 1 and at.query_params["compare"] == "1"
    figs = _figs(at)
    diff = next(df for df in _frames(at) if "p (Holm)" in df.columns)
    assert len(diff) == 12 and {"A − B [95% CI]", "Test", "Note"} <= set(diff.columns)
    assert diff["A − B [95% CI]"].str.match(r"^-?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\]$").all()
    compare = next(f for t, f in figs.items() if "paired difference" in t)
    assert len(_arr(compare["data"][0]["x"])) == 12
    assert any(b.label == "Download (CSV)" for b in at.get("download_button"))


def test_a_link_naming_two_models_opens_the_comparison_and_closing_it_is_kept(db):
    """Links made before the comparison became a section carry ca and cb, not compare=1."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"radar": ["vicuna_13b", "bard"], "ca": "bard", "cb": "vicuna_13b"})
    at.run()
    at.switch_page(RADAR)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["radar_compare"] is True and at.query_params["compare"] == "1"
    (title,) = [t for t in _figs(at) if "paired difference" in t]
    assert title.index("bard") < title.index("vicuna_13b")  # A is the link's ca
    at.session_state["radar_compare"] = False  # the visitor closes it: out of the URL
    at.run()
    assert "compare" not in at.query_params
    assert not [t for t in _figs(at) if "paired difference" in t]


def test_radar_controls_and_sidebar_filters(db):
    models = ["bard", "chatgpt", "claude_v1", "gpt4", "tulu_65b", "vicuna_13b"]
    at = _page(RADAR, **{"models::demo": models, "radar_models::demo::" + ",".join(models): models,
                         "radar_published": True, "domains::demo": ["Math"]})  # fmt: skip
    radar = next(f for t, f in _figs(at).items() if t.startswith("Mean score per axis"))
    assert "polar6" in radar["layout"] and "polar7" not in radar["layout"]  # small multiples
    dashed = [t for t in radar["data"] if t.get("line", {}).get("dash") == "dash"]
    assert len(dashed) == 6  # published overlay, one per model
    table = next(df for df in _frames(at) if "N/A scores" in df.columns)
    assert set(table["Model"]) == set(models)
    abilities = _page(RADAR, **{"radar_axes": "ability"})  # its option values: skill, ability
    table = next(df for df in _frames(abilities) if "N/A scores" in df.columns)
    assert set(table["Ability"]) == {"Logical Thinking", "Background Knowledge",
                                  "Problem Handling", "User Alignment"}  # fmt: skip


def test_radar_filter_that_leaves_nothing(db):
    at = _page(RADAR, **{"hard::demo": True, "levels::demo": [1]})
    assert any("No scores match" in i.value for i in at.info)
    assert not any(t.startswith("Mean score per axis") for t in _figs(at))


def _sections(**state) -> list[AppTest]:
    """The Breakdowns page once per tab (only the open tab is computed and drawn)."""
    return [_page(BREAKDOWNS, bd_section=name, **state) for name in BREAKDOWN_SECTIONS]


def test_breakdowns_default_and_changed_model(db):
    first = _page(BREAKDOWNS, bd_model="gpt4", **{"levels::demo": [4, 5]})
    assert set(_figs(first)) == {"gpt4: mean per skill × difficulty"}  # the first tab only
    assert not _frames(first)
    runs = _sections(bd_model="gpt4", **{"levels::demo": [4, 5]})
    figs = {t: f for at in runs for t, f in _figs(at).items()}
    heat = figs["gpt4: mean per skill × difficulty"]
    assert [x.split(" ")[0] for x in heat["data"][0]["x"]] == ["4", "5"]  # the filter applies
    assert len(heat["data"][0]["y"]) == 12
    lines = figs["Mean score vs difficulty level per skill (95% CI bars)"]
    assert len(lines["data"]) == 8 * 12  # a line per model per skill
    assert any(t.startswith("gpt4: mean per skill × domain") for t in figs)
    assert "FLASK-Hard vs full set: relative change of the mean" in figs
    assert [len(_figs(at)) for at in runs] == [1, 1, 1, 0, 1]  # one section drawn per run
    tasks = next(df for df in _frames(runs[3]) if "Source task" in df.columns)
    assert tasks["Scores (n)"].gt(0).all() and "Model" not in tasks.columns
    captions = " ".join(c.value for c in runs[2].caption)
    assert "counts toward both" in captions


def test_breakdowns_filter_that_leaves_nothing(db):
    at = _page(BREAKDOWNS, **{"hard::demo": True, "levels::demo": [1]})
    assert any("No scores match" in i.value for i in at.info)
    assert not _figs(at)


def test_pages_on_a_dataset_with_its_own_criteria(db, tmp_path):
    csv = tmp_path / "custom.csv"
    csv.write_text(
        "instance_id,model,judge,skill,score,scale_min,scale_max,difficulty,domain\n"
        "1,a,lab,helpful,9,1,10,2,Math\n2,a,lab,helpful,4,1,10,3,Coding\n"
        "1,a,lab,safe,1,0,1,2,Math\n2,a,lab,safe,0,0,1,3,Coding\n"
        "1,b,lab,helpful,6,1,10,2,Math\n2,b,lab,helpful,,1,10,3,Coding\n"
    )
    import_scores(Store(db), csv, dataset="custom")
    try:
        at = _page(RADAR, dataset="custom")
        radar = next(f for t, f in _figs(at).items() if t.startswith("Mean score per axis"))
        assert "rescaled to 0–1" in radar["layout"]["title"]["text"]
        table = next(df for df in _frames(at) if "N/A scores" in df.columns)
        assert set(table["Skill"]) == {"helpful", "safe"}
        assert set(table["Scale"]) == {"1–10", "0–1"}
        bd = _page(BREAKDOWNS, dataset="custom", bd_model="a")
        assert any(t.startswith("a: mean per skill × difficulty") for t in _figs(bd))
        bd = _page(BREAKDOWNS, dataset="custom", bd_model="a", bd_section="FLASK-Hard vs full")
        infos = " ".join(i.value for i in bd.info).replace("\\", "")  # markdown escapes
        assert "No instance of custom is marked FLASK-Hard" in infos
    finally:
        with Store(db).write() as con:  # leave the shared demo store as it was
            for table in ("scores", "score_sums", "judgments", "runs", "responses", "instances",
                          "datasets"):  # fmt: skip
                con.execute(f"DELETE FROM {table} WHERE dataset = 'custom'")
