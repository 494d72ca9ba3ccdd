"""The view in the URL, through AppTest on real stores: every page's picks go into the URL and
come back from it in a new session (a reload, a bookmark, a link opened on another server);
a sidebar switch after a Samples link sticks; an annotator resumes after a reload; scores that
another process writes into a dataset that had none show on the next rerun; a new session opens
a stable default dataset; unknown values in a link fall back with a note."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.ingest.flask_source import import_flask
from analysis.views import queues
from analysis.views.state import default_dataset
from tests.mini_flask import build_flask
from tests.openai_server import OpenAIServer
from tests.page_fixtures import write_hand
from tests.samples_fixtures import write_mini

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
SIM = "gpt-4 (simulated)"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def open_app(page: str | None = None, params: dict | None = None, **state) -> AppTest:
    """A new session (a new tab, a reload, a bookmark) on ``page`` with this URL."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update(params or {})
    for k, v in state.items():
        at.session_state[k] = v
    _ok(at.run())
    if page:
        _ok(at.switch_page(f"pages/{page}.py").run())
    return at


def url(at: AppTest) -> dict:
    return dict(at.query_params)


def notes(at: AppTest) -> str:
    return " ".join(i.value for i in at.info)


def _sql(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def _overall(at: AppTest) -> dict[str, float]:
    """The leaderboard's Overall mean per model, read off the table the page shows."""
    for df in at.dataframe:
        cols = {c.lower(): c for c in df.value.columns}
        if "overall" in cols and "model" in cols:
            t = df.value
            first = t[cols["overall"]].map(lambda s: float(re.match(r"\s*(\d+\.\d+)", s)[1]))
            return dict(zip(t[cols["model"]], first, strict=True))
    raise AssertionError("no leaderboard on the page")


# ---------------------------------------------------------------- the default dataset
def test_default_dataset_rule():
    def sets(*rows):
        return pd.DataFrame(rows, columns=["dataset", "simulated", "scores"])

    # The real dataset with the most scores, not the first (newest) row; ties by name.
    assert default_dataset(sets(("new-test", False, 10), ("flask", False, 900),
                                ("demo", True, 5000))) == "flask"  # fmt: skip
    assert default_dataset(sets(("b", False, 7), ("a", False, 7), ("demo", True, 1))) == "a"
    # No real dataset with scores: the demo, even when listed after real ones.
    assert default_dataset(sets(("flask", False, 0), ("demo", True, 40))) == "demo"
    # Neither: the first by name (stable across sessions), None for an empty store.
    assert default_dataset(sets(("zeta", False, 0), ("alpha", False, 0))) == "alpha"
    assert default_dataset(sets()) is None


def test_new_session_opens_the_real_dataset_with_most_scores_not_the_newest(app_db):
    write_mini(Store(app_db))
    write_hand(Store(app_db))  # imported last, with fewer scores than mini
    counts = dict(_sql(app_db, "SELECT dataset, count(*) FROM latest_scores GROUP BY 1"))
    assert counts["mini"] > counts["hand"] > 0
    at = open_app()
    assert at.session_state["filters"].dataset == "mini"
    assert url(at)["dataset"] == "mini"


def test_new_session_opens_the_demo_when_no_real_dataset_has_scores(app_db, tmp_path):
    import_flask(Store(app_db), str(build_flask(tmp_path / "flask", reviews=False)))
    at = open_app()
    assert at.session_state["filters"].dataset == "demo"
    assert url(at)["dataset"] == "demo" and url(at)["judge"] == SIM


# ---------------------------------------------------------------- every page's picks
SIDEBAR = {"models::demo": ["bard", "gpt4", "vicuna_13b"], "domains::demo": ["Math", "Coding"],
           "levels::demo": [4, 5], "tasks::demo": ["Koala"], "hard::demo": False,
           "judge::demo": SIM}  # fmt: skip
SIDEBAR_URL = {"dataset": "demo", "judge": SIM, "models": ["bard", "gpt4", "vicuna_13b"],
               "domains": ["Math", "Coding"], "levels": ["4", "5"], "tasks": "Koala"}  # fmt: skip
PICKS = {
    "overview": ({"lb_group": "Logical Thinking"}, {"rank": "Logical Thinking"}),
    "radar": (
        {
            "radar_models::demo::bard,gpt4,vicuna_13b": ["vicuna_13b", "bard"],
            "radar_axes": "ability",
            "radar_published": True,
            "radar_compare": True,
            "radar_a": "vicuna_13b",
            "radar_b": "bard",
        },
        {
            "radar": ["vicuna_13b", "bard"],
            "axes": "ability",
            "published": "1",
            "compare": "1",
            "ca": "vicuna_13b",
            "cb": "bard",
        },
    ),  # fmt: skip
    "breakdowns": (
        {"bd_model": "vicuna_13b", "bd_section": "By domain"},
        {"model": "vicuna_13b", "section": "By domain"},
    ),
    "agreement": (
        {
            "agr_a::demo": "annotator_1",
            "agr_b::demo": "kind:llm",
            "agr_level": "system",
            "agr_skill::demo": "correctness",
            "agr_by": "model",
            "agr_stat": "spearman",
        },
        {
            "a": "annotator_1",
            "b": "kind:llm",
            "level": "system",
            "skill": "correctness",
            "by": "model",
            "stat": "spearman",
        },
    ),  # fmt: skip
    "samples": (
        {
            "s_text::demo": "the",
            "s_fields::demo": ["response"],
            "s_skill::demo": "correctness",
            "s_sort::demo": "longest",
        },
        {"q": "the", "in": "response", "skill": "correctness", "sort": "longest"},
    ),  # fmt: skip
    "annotate": ({"annotator": "alice"}, {"annotator": "alice"}),
    "rejudge": (
        {"rj_source::demo": "filters", "rj_limit": 7},
        {"source": "filters", "limit": "7"},
    ),  # fmt: skip
}


@pytest.mark.parametrize("page", list(PICKS))
def test_view_to_url_and_back_in_a_new_session(app_db, page):
    state, want = PICKS[page]
    at = open_app(page, **SIDEBAR, **state)
    assert url(at) == {**SIDEBAR_URL, **want}  # view → URL, written by hand above
    fresh = open_app(page, params=url(at))  # a reload, a bookmark, a shared link
    for key, value in {**SIDEBAR, **state}.items():
        assert fresh.session_state[key] == value, key
    assert fresh.session_state["filters"] == at.session_state["filters"]
    assert url(fresh) == url(at) and not notes(fresh).count("not available")
    if page == "overview":  # the same numbers, not only the same widgets
        assert _overall(fresh) == _overall(at) and len(_overall(at)) == 3


def test_unknown_link_values_fall_back_with_a_note(app_db):
    at = open_app("radar", params={"dataset": "nope", "judge": "nobody", "models": ["gpt4", "x9"],
                                   "radar": ["zz"], "levels": "high"})  # fmt: skip
    f = at.session_state["filters"]
    assert (f.dataset, f.judge, f.models, f.difficulties) == ("demo", SIM, ("gpt4",), ())
    text = notes(at)
    for name in ("'nope'", "'nobody'", "'x9'", "'high'", "'zz'"):
        assert name in text.replace("\\", ""), name
    assert url(at)["dataset"] == "demo" and url(at)["models"] == "gpt4"
    assert url(at)["radar"] == "gpt4"  # the default: the one model the sidebar leaves


# ---------------------------------------------------------------- Samples: a dataset switch
def test_samples_dataset_switch_after_a_detail_link_sticks(app_db):
    store = Store(app_db)
    write_mini(store)
    at = open_app("samples", params={"dataset": "mini", "instance": "3", "model": "beta"})
    assert "Response of beta to 3. 100% sure_thing." in [t.value for t in at.text]
    at.session_state["dataset"] = "demo"  # the visitor switches the sidebar
    _ok(at.run())
    assert at.session_state["filters"].dataset == "demo"
    assert url(at) == {"dataset": "demo", "judge": SIM}  # the old detail left the URL
    at.session_state["s_text::demo"] = "e"
    _ok(at.run())
    assert at.session_state["filters"].dataset == "demo" and url(at)["q"] == "e"
    at.session_state["samples_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    _ok(at.run())
    at.button(key="add_rejudge").click()
    _ok(at.run())
    assert at.session_state["filters"].dataset == "demo"  # still: never undone by the URL
    assert len(queues.items(store, queues.REJUDGE, "demo")) == 1
    assert queues.items(store, queues.REJUDGE, "mini") == []
    shown = queues.items(store, queues.REJUDGE, "demo")[0].key
    assert (url(at)["instance"], url(at)["model"]) == shown  # the detail follows the new row


# ---------------------------------------------------------------- Annotate: a reload
def test_annotator_reload_resumes_at_the_first_unanswered_item(app_db):
    store = Store(app_db)
    write_mini(store)
    items = [("3", "beta"), ("4", "alpha"), ("6", "gamma")]
    queues.add(store, queues.ANNOTATE, "mini", items)
    at = open_app("annotate", params={"dataset": "mini"}, annotator="alice")
    for _ in range(2):
        for r in at.radio:
            r.set_value(3)
        at.button[0].click()
        _ok(at.run())
    assert "2 of 3 answered" in at.get("progress")[0].proto.text
    assert url(at) == {"dataset": "mini", "judge": url(at)["judge"], "annotator": "alice"}
    again = open_app("annotate", params=url(at))  # F5: a new session with only the URL
    assert again.session_state["filters"].dataset == "mini"
    assert "2 of 3 answered" in again.get("progress")[0].proto.text
    assert again.number_input[0].value == 3
    answered = _sql(app_db, "SELECT DISTINCT instance_id, model FROM latest_scores "
                    "WHERE judge = 'alice' ORDER BY 1")  # fmt: skip
    assert answered == sorted(items[:2])


# ---------------------------------------------------------------- new scores appear
@pytest.fixture
def unscored(app_db, tmp_path) -> Path:
    """The demo plus a FLASK-shaped dataset without any scores (FLASK right after Load FLASK)."""
    import_flask(Store(app_db), str(build_flask(tmp_path / "flask", n=8, reviews=False)))
    return app_db


def _write_scores(db: Path, csv: Path, skip: int = 0) -> pd.DataFrame:
    rows = _sql(
        db,
        "SELECT r.instance_id, r.model, unnest(i.skills) FROM responses r JOIN "
        "instances i USING (dataset, instance_id) WHERE r.dataset = 'flask' ORDER BY 1, 2",
    )
    frame = pd.DataFrame(rows, columns=["instance_id", "model", "skill"])
    frame["score"] = [1 + (n * 7 + skip) % 5 for n in range(len(frame))]
    frame.to_csv(csv, index=False)
    return frame


def _cli(*args: str, env: dict | None = None) -> None:
    out = subprocess.run([sys.executable, "-m", "analysis", *args], cwd=REPO, text=True,
                         capture_output=True, timeout=300, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr


def test_scores_from_another_process_show_on_the_next_rerun(unscored, tmp_path):
    at = open_app(params={"dataset": "flask"})
    assert at.session_state["filters"].judge is None and "judge" not in url(at)
    frame = _write_scores(unscored, tmp_path / "s.csv")
    _cli("import-scores", str(tmp_path / "s.csv"), "--db", str(unscored), "--dataset", "flask",
         "--judge", "cli-judge", "--kind", "llm")  # fmt: skip
    _ok(at.run())  # the next rerun of the same session
    assert at.session_state["filters"].judge == "cli-judge" and url(at)["judge"] == "cli-judge"
    want = {m: round(v, 2) for m, v in frame.groupby("model")["score"].mean().items()}
    assert _overall(at) == want  # Overall = mean of every skill score, by pandas
    for page in ("radar", "breakdowns"):
        _ok(at.switch_page(f"pages/{page}.py").run())
        assert "no scores" not in notes(at).lower()
        assert at.get("plotly_chart"), page
    # Another judge's scores arrive (a CLI judging run): the visitor's choice stays.
    with OpenAIServer(latency=0.01) as srv:
        _cli("judge", "--db", str(unscored), "--backend", "openai", "--model", "judge-x",
             "--base-url", srv.base_url, "--dataset", "flask", "--limit", "3",
             env={**os.environ, "OPENAI_API_KEY": "sk-test"})  # fmt: skip
    _ok(at.run())
    assert at.session_state["filters"].judge == "cli-judge"
    assert (
        len(_sql(unscored, "SELECT DISTINCT judge FROM latest_scores WHERE dataset='flask'")) == 2
    )


def test_cli_judge_on_a_dataset_without_scores_is_selected(unscored):
    at = open_app("radar", params={"dataset": "flask"})
    with OpenAIServer(latency=0.01) as srv:
        _cli("judge", "--db", str(unscored), "--backend", "openai", "--model", "judge-y",
             "--base-url", srv.base_url, "--dataset", "flask", "--limit", "4",
             env={**os.environ, "OPENAI_API_KEY": "sk-test"})  # fmt: skip
    (judge,) = _sql(unscored, "SELECT DISTINCT judge FROM latest_scores WHERE dataset='flask'")
    _ok(at.run())
    assert at.session_state["filters"].judge == judge[0] == url(at)["judge"]
    assert at.get("plotly_chart")  # the radar draws that judge's scores


def test_in_app_rejudge_run_selects_its_judge(unscored, monkeypatch):
    st.cache_data.clear()
    with OpenAIServer(latency=0.01) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        at = open_app(
            "rejudge",
            params={"dataset": "flask", "source": "filters", "limit": "5"},
            rj_model="judge-z",
            rj_base_url=srv.base_url,
            rj_name="in-app judge",
        )
        assert at.session_state["filters"].judge is None
        next(b for b in at.button if b.label == "Run").click().run()
        assert at.session_state["rj_job"].wait(60)
        _ok(at.run())
        assert srv.count() == 5
    assert at.session_state["filters"].judge == "in-app judge" == url(at)["judge"]
    _ok(at.switch_page("pages/overview.py").run())
    scored = pd.DataFrame(_sql(unscored, "SELECT model, score FROM latest_scores WHERE judge = "
                               "'in-app judge'"), columns=["model", "score"])  # fmt: skip
    means = scored.dropna().groupby("model")["score"].mean()
    assert _overall(at) == {m: round(v, 2) for m, v in means.items()} and len(means) >= 1
