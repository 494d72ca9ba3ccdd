"""The app through Streamlit's AppTest: first start on an empty store, the Overview's numbers,
filters that leave nothing, and a CLI import while the app is running."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


@pytest.fixture
def db(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "app.duckdb"
    monkeypatch.setenv("FINEGRAIN_DB", str(path))
    st.cache_data.clear()
    yield path
    st.cache_data.clear()


def _run(at: AppTest | None = None) -> AppTest:
    if at is None:  # not `at or …`: an AppTest with no elements yet is falsy
        at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _charts(at: AppTest) -> list[dict]:
    """Plotly charts show up as unknown elements whose proto holds the figure JSON."""
    out = []
    for el in at.get("plotly_chart"):
        out.append(json.loads(el.proto.spec))
    return out


def _frame(at: AppTest, with_column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if with_column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with column {with_column!r}")


def test_first_start_builds_demo_and_overview_shows_counts(db):
    assert not db.exists()
    at = _run()
    assert db.exists()
    sets = _frame(at, "Instances")
    demo = sets.set_index("Dataset").loc["demo"]
    assert demo["Instances"] == 1740 and demo["Models"] >= 8 and demo["Simulated"] == "yes"
    with Store(db).read() as con:
        n_scores = con.execute("SELECT count(*) FROM latest_scores WHERE dataset='demo'").fetchone()
    assert demo["Scores"] == n_scores[0] > 0
    banner = " ".join(w.value for w in at.warning)
    assert "Simulated data" in banner and "seed" in banner
    board = _frame(at, "Rank")
    assert len(board) == demo["Models"]
    assert board["Rank"].tolist() == list(range(1, len(board) + 1))
    assert board["Overall"].str.match(r"^\d\.\d\d \[\d\.\d\d, \d\.\d\d\]$").all()
    figs = _charts(at)
    assert len(figs) == 2  # leaderboard and coverage
    lb = figs[0]["data"][0]
    assert len(lb["y"]) == demo["Models"] and "error_x" in lb


def _with_state(**state) -> AppTest:
    """An app whose sidebar widgets start with these values. (AppTest 1.67 drops the router
    script's elements from the tree on a rerun under st.navigation, so widget changes are set
    before the first run rather than with set_value + rerun.)"""
    _run()  # build the demo first so the widget keys exist with their options
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    return _run(at)


def test_filter_that_leaves_nothing_shows_a_message(db):
    # FLASK-Hard instances are all expert level, so level 1 leaves nothing.
    at = _with_state(**{"hard::demo": True, "levels::demo": [1]})
    assert at.session_state["filters"].flask_hard_only
    assert any("No scores match" in i.value for i in at.info)
    assert not _charts(at) or all("annotations" in f["layout"] for f in _charts(at))


def test_changing_models_changes_leaderboard(db):
    models = _run().sidebar.multiselect(key="models::demo").options[:2]
    at = _with_state(**{"models::demo": models})
    assert sorted(_frame(at, "Rank")["Model"]) == sorted(models)
    assert len(_charts(at)[0]["data"][0]["y"]) == 2


def test_cli_import_while_app_runs_then_shows_after_rerun(db, tmp_path):
    at = _run()
    assert "labels" not in set(_frame(at, "Instances")["Dataset"])
    with Store(db).read() as con:
        rows = con.execute("SELECT instance_id, model, skill FROM latest_scores "
                           "WHERE dataset='demo' LIMIT 30").fetchall()  # fmt: skip
    csv = tmp_path / "labels.csv"
    csv.write_text("instance_id,model,skill,score\n"
                   + "".join(f"{i},{m},{s},{3}\n" for i, m, s in rows))  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "analysis", "import-scores", str(csv), "--db", str(db),
         "--dataset", "labels", "--judge", "lab-annotator", "--kind", "human"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    _run(at)  # the same session reruns: the page reads the new data (cache keyed by mtime)
    sets = _frame(at, "Instances").set_index("Dataset")
    assert sets.loc["labels", "Scores"] == len(rows)
    assert sets.loc["labels", "Judges"] == 1


def test_load_flask_button_imports_with_progress(db, flask_dir, monkeypatch):
    from tests.http_fixtures import FolderServer

    monkeypatch.setenv("FINEGRAIN_ALLOW_PRIVATE_URLS", "1")  # else the page refuses loopback
    at = _run()
    with FolderServer(flask_dir) as url:
        at.text_input(key="flask_source").set_value(url)
        at.button[0].click()
        _run(at)
    assert any("FLASK imported" in s.value for s in at.success), [e.value for e in at.error]
    assert at.session_state["next_dataset"] == "flask"  # app.py selects it on the next run
    with Store(db).read() as con:
        assert con.execute("SELECT count(*) FROM instances WHERE dataset = 'flask'").fetchone() == (
            1740,
        )
    fresh = _run()  # a new session lists the real dataset first (real data before simulated)
    assert _frame(fresh, "Instances")["Dataset"].tolist()[:2] == ["flask", "flask-hard"]


def test_app_says_clearly_when_an_import_holds_the_file(db):
    from tests.store_fixtures import hold_store

    _run()  # demo built, store ready
    st.cache_data.clear()
    holder = hold_store(db, "rw")  # a writer (CLI import or judging run) holds the file
    try:
        at = _run()
    finally:
        holder.kill()
        holder.wait()
    shown = " ".join(e.value for e in at.error)
    assert "Store busy" in shown and f"process {holder.pid}" in shown
    assert "writing it right now" in shown
