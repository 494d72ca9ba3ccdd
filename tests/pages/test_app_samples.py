"""The Samples and Annotate pages through Streamlit's AppTest on a real store: search, filter and
select into the queues; a link opens a response's detail; three items annotated, then a fresh
session (a browser refresh) finds them answered and stored as a human judge."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.views import queues
from tests.samples_fixtures import DATASET, write_mini

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def mini(tmp_path, monkeypatch):
    path = tmp_path / "mini.duckdb"
    monkeypatch.setenv("FINEGRAIN_DB", str(path))
    frames = write_mini(Store(path))
    st.cache_data.clear()
    yield Store(path), frames
    st.cache_data.clear()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def open_page(page: str, state: dict | None = None, params: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (state or {}).items():
        at.session_state[k] = v
    for k, v in (params or {}).items():
        at.query_params[k] = v
    _ok(at.run())
    at.switch_page(page)
    return _ok(at.run())


def shown_keys(at: AppTest) -> list[tuple[str, str]]:
    df = next(d.value for d in at.dataframe if "Instance" in d.value.columns)
    return list(df[["Instance", "Model"]].itertuples(index=False, name=None))


def test_search_filter_select_and_queue(mini):
    store, f = mini
    at = open_page(
        "pages/samples.py",
        state={f"s_text::{DATASET}": "haystack", f"models::{DATASET}": ["beta", "gamma"]},
    )
    # Independent truth: the fixture's responses containing the word, of those two models.
    r = f["responses"]
    want = r[r["text"].str.lower().str.contains("haystack") & r["model"].isin(["beta", "gamma"])]
    want = sorted(zip(want["instance_id"], want["model"], strict=True),
                  key=lambda k: (int(k[0]), k[1]))  # fmt: skip
    assert shown_keys(at) == want and len(want) >= 4
    assert any(f"{len(want)} responses match" in c.value for c in at.caption)

    at.session_state["samples_table"] = {"selection": {"rows": [0, 2], "columns": [], "cells": []}}
    _ok(at.run())
    assert any(c.value == "2 selected" for c in at.caption)
    at.button(key="add_annotate").click()
    _ok(at.run())
    at.button(key="add_rejudge").click()
    _ok(at.run())
    picked = [want[0], want[2]]
    assert [i.key for i in queues.items(store, queues.ANNOTATE, DATASET)] == picked
    assert [i.key for i in queues.items(store, queues.REJUDGE, DATASET)] == picked
    # The detail view shows the first selected response, and the URL now links to it.
    d = f["responses"].set_index(["instance_id", "model"]).loc[want[0], "text"]
    assert d in [t.value for t in at.text]
    assert at.query_params["instance"] == want[0][0] and at.query_params["model"] == want[0][1]
    at.button(key="rm_rejudge").click()
    _ok(at.run())
    assert queues.items(store, queues.REJUDGE, DATASET) == []
    # A new session (another page visit, a refresh) still sees the annotate queue.
    fresh = open_page("pages/samples.py")
    assert "Annotate these: 2" in " ".join(e.label for e in fresh.expander)


def test_score_range_and_disagreement_controls_filter_the_table(mini):
    store, f = mini
    at = open_page(
        "pages/samples.py",
        state={f"s_rj::{DATASET}": ["judge-a"], f"s_range::{DATASET}::judge-a": (4.5, 5.0),
               f"s_dis::{DATASET}": 3.0},
    )  # fmt: skip
    sc = f["scores"]
    means = sc[sc["judge"] == "judge-a"].groupby(["instance_id", "model"])["score"].mean()
    valid = sc.dropna(subset=["score"]).groupby(["instance_id", "model", "skill"])["score"]
    spread = (valid.max() - valid.min())[valid.count() >= 2].groupby(level=[0, 1]).max()
    want = sorted((k for k, v in means.items() if 4.5 <= v <= 5 and spread.get(k, -1) >= 3),
                  key=lambda k: (int(k[0]), k[1]))  # fmt: skip
    if want:
        assert shown_keys(at) == want
    else:
        assert any("No responses match" in i.value for i in at.info)
    # without the threshold, more rows: the control really filters
    loose = open_page(
        "pages/samples.py",
        state={f"s_rj::{DATASET}": ["judge-a"], f"s_range::{DATASET}::judge-a": (4.5, 5.0)},
    )
    assert len(shown_keys(loose)) == sum(4.5 <= v <= 5 for v in means) > len(want)


def test_link_opens_a_responses_detail(mini):
    _, f = mini
    at = open_page(
        "pages/samples.py", params={"dataset": DATASET, "instance": "3", "model": "beta"}
    )
    texts = [t.value for t in at.text]
    assert texts[:3] == [
        "Instruction number 3: explain the topic.",
        "Reference for 3.",
        "Response of beta to 3. 100% sure_thing.",
    ]
    for judge in ("judge-a", "judge-b", "human-x"):
        assert f"Rationale of {judge} for 3" in texts
    # A stale link says what is missing instead of failing; the table still shows.
    bad = AppTest.from_file(APP, default_timeout=120)
    bad.query_params.update({"dataset": DATASET, "instance": "nope", "model": "x"})
    bad.run()
    bad.switch_page("pages/samples.py").run()
    assert not bad.exception
    assert [e.value for e in bad.error] == [
        "**Not found.** No response of model 'x' to instance 'nope' in dataset 'mini'\\. "
        "The link may be out of date, or the dataset was rebuilt\\."
    ]
    assert len(shown_keys(bad)) == 50  # first page of the 72 responses


def _annotate_all(at: AppTest, n: int) -> None:
    for i in range(n):
        for r in at.radio:
            r.set_value("N/A" if r.key.endswith("::correctness") else 1 + i % 5)
        at.text_area[0].set_value(f"comment {i}")
        at.button[0].click()  # the form's "Save and next"
        _ok(at.run())


def test_annotate_three_items_then_a_refresh_finds_them(mini):
    store, _ = mini
    items = [("3", "beta"), ("4", "alpha"), ("6", "gamma"), ("7", "beta")]
    queues.add(store, queues.ANNOTATE, DATASET, items)
    at = open_page("pages/annotate.py", state={"annotator": "alice"})
    assert at.query_params["annotator"] == "alice"  # the URL keeps the name across a refresh
    assert "0 of 4 answered" in at.get("progress")[0].proto.text
    _annotate_all(at, 3)
    assert "3 of 4 answered" in at.get("progress")[0].proto.text
    # Refresh: a new session with only the URL; it resumes at item 4 with 3 answered.
    again = open_page("pages/annotate.py", params={"annotator": "alice"})
    assert "3 of 4 answered" in again.get("progress")[0].proto.text
    assert again.number_input[0].value == 4
    assert "**Item 4 of 4**" in again.markdown[0].value
    # Going back to item 1 shows the saved answer.
    again.number_input[0].set_value(1)
    _ok(again.run())
    assert [r.value for r in again.radio] == [1, "N/A", 1]
    assert again.text_area[0].value == "comment 0"
    # In the store (read-only connection): a human judge with 9 scores on 3 responses.
    with duckdb.connect(str(store.path), read_only=True) as con:
        kind = con.execute("SELECT kind FROM judges WHERE judge = 'alice'").fetchone()
        got = con.execute(
            "SELECT instance_id, model, skill, score FROM latest_scores WHERE judge = 'alice' "
            "ORDER BY instance_id, skill"
        ).fetchall()
    assert kind == ("human",)
    value = {k: 1.0 + n for n, k in enumerate(items[:3])}  # item n got 1 + n (correctness N/A)
    want = [(i, m, s, None if s == "correctness" else value[(i, m)])
            for i, m, s, _ in got]  # fmt: skip
    assert got == want and sorted({(i, m) for i, m, _, _ in got}) == sorted(items[:3])
    assert len(got) == 9 and ("3", "beta", "correctness", None) in got


def test_annotate_is_blind_by_default_and_keeps_two_annotators(mini):
    store, _ = mini
    queues.add(store, queues.ANNOTATE, DATASET, [("3", "beta")])
    at = open_page("pages/annotate.py", state={"annotator": "bob"})
    header = at.markdown[0].value
    assert "hidden (blind)" in header and "beta" not in header
    assert not at.expander  # other scorers hidden
    _annotate_all(at, 1)
    other = open_page("pages/annotate.py", state={"annotator": "carol", "ann_blind": False})
    assert "beta" in other.markdown[0].value
    assert "Other scorers" in [e.label for e in other.expander]
    assert "bob" in [m.value.split("**")[1] for m in other.markdown if m.value.startswith("**b")]
    _annotate_all(other, 1)
    with store.read() as con:
        got = con.execute(
            "SELECT judge, count(*) FROM latest_scores WHERE judge IN ('bob', 'carol') "
            "GROUP BY judge ORDER BY judge"
        ).fetchall()
    assert got == [("bob", 3), ("carol", 3)]


def test_annotate_without_a_name_or_queue_explains(mini):
    at = open_page("pages/annotate.py")
    assert any("Enter your name" in i.value for i in at.info)
    at = open_page("pages/annotate.py", state={"annotator": "dora"})
    assert any("queue of this dataset is empty" in i.value for i in at.info)


def test_clear_button_empties_one_queue(mini):
    store, _ = mini
    queues.add(store, queues.ANNOTATE, DATASET, [("1", "alpha"), ("2", "beta")])
    queues.add(store, queues.REJUDGE, DATASET, [("1", "alpha")])
    at = open_page("pages/samples.py")
    assert "Re-judge these: 1 · Annotate these: 2" in [e.label for e in at.expander]
    at.button(key="clear::annotate").click()
    _ok(at.run())
    assert queues.items(store, queues.ANNOTATE, DATASET) == []
    assert [i.key for i in queues.items(store, queues.REJUDGE, DATASET)] == [("1", "alpha")]
    assert "Re-judge these: 1 · Annotate these: 0" in [e.label for e in at.expander]
