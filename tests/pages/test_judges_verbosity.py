"""The Judges page's Verbosity section through AppTest on the demo: the empty state before any
check, a stored check's chart, table, pairs with links to both texts, and a check launched
from the form against the loopback OpenAI server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import judge_verbosity as jv
from judges.config import JudgeConfig
from judges.outcome import RunOptions
from judges.plan import Selection
from judges.rewrite import rewriter_config
from judges.runner import run
from judges.verbosity import CheckRequest, run_check
from tests.judges.verbosity_fixtures import rewrite_calls, rewrite_or_judge
from tests.openai_server import OpenAIServer
from tests.store_fixtures import query

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
JUDGE = "judge-test (openai, flask-v1)"
DERIVED = "demo · verbose (rw-test)"


def _page(state: dict | None = None, params: dict | None = None, page: str = "judges") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["jd_section"] = "Verbosity"
    for k, v in (state or {}).items():
        at.session_state[k] = v
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _table(at: AppTest, column: str):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError([list(d.value.columns) for d in at.dataframe])


def _texts(at: AppTest) -> str:
    shown = " ".join(str(e.value) for e in [*at.info, *at.caption, *at.markdown, *at.success])
    return shown.replace("\\", "")  # markdown escapes (plain()) aside


def test_without_a_check_the_section_says_why_and_how(app_db):
    at = _page()
    text = _texts(at)
    assert "No verbosity check yet." in text
    # The demo's judges are simulated: none can be asked again, and the form says so.
    assert "No judge of this dataset can be asked again here" in text
    assert not at.get("plotly_chart")


def _stored_check(store: Store, model: str = "rw-test") -> None:
    items = jv.sample(store, Filters("demo"), 12, 3)
    with OpenAIServer(responder=rewrite_or_judge) as srv:
        rewriter = rewriter_config(
            {"backend": "openai", "model": model, "base_url": srv.base_url}, "test"
        )
        judge = JudgeConfig("openai", "judge-test", base_url=srv.base_url)
        run_check(store, CheckRequest("demo", judge, rewriter, items, RunOptions(concurrency=4)))


def test_the_section_shows_a_stored_check(app_db):
    store = Store(app_db)
    _stored_check(store)
    report = jv.verbosity_report(store, Filters("demo"))
    at = _page()
    (fig,) = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    names = [t.get("name") for t in fig["data"]]
    assert names.count(JUDGE) == 2  # one judge: a trace per panel
    assert "FLASK: about 53% same score" in names  # FLASK's figure as context
    table = _table(at, "Same score (rate)")
    want = report.table
    assert len(table) == len(want)
    for got, (_, row) in zip(table.to_dict("records"), want.iterrows(), strict=True):
        assert got["Judge"] == JUDGE
        assert float(got["Same score (rate)"]) == pytest.approx(row["same_rate"], abs=5e-4)
        assert float(got["Mean shift (rewrite − original)"]) == pytest.approx(
            row["shift"], abs=5e-3
        )
        assert int(got["Pairs (n)"]) == int(row["n"])
    pairs = _table(at, "Rewrite")
    key = pairs[["Instance", "Model"]].iloc[0]
    assert pairs["Rewrite"].iloc[0] == jv.sample_link(DERIVED, key["Instance"], key["Model"])
    assert pairs["Original"].iloc[0] == jv.sample_link("demo", key["Instance"], key["Model"])
    assert any(b.proto.label == "Download (CSV)" for b in at.get("download_button"))
    assert "12 rewrites stored, 0 failed" in _texts(at)


def test_a_check_launched_from_the_form(app_db):
    store = Store(app_db)
    with OpenAIServer(latency=0.01, responder=rewrite_or_judge) as srv:
        # A judge run before in this store: the one the form can check.
        judge = JudgeConfig("openai", "judge-test", base_url=srv.base_url)
        run(store, judge, Selection("demo", limit=3))
        asked = srv.count()
        at = _page({
            "jd_vb_judge_url": srv.base_url, "jd_vb_model": "rw-test",
            "jd_vb_url": srv.base_url, "jd_vb_n": 6, "jd_vb_seed": 2,
        })  # fmt: skip
        assert at.selectbox(key="jd_vb_judge").value == JUDGE
        text = _texts(at)
        assert "6 calls to make" in text and "Estimate for 6 responses" in text
        assert srv.count() == asked  # an estimate costs nothing
        at.button(key="jd_vb_launch").click().run()
        job = at.session_state["jd_vb_job"]
        assert job.wait(60) and job.error is None, job.error
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert rewrite_calls(srv) == 6
    assert job.result.derived == DERIVED
    assert "rewrite: 6 items, 6 new" in _texts(at)
    assert len(_table(at, "Same score (rate)")) > 0
    [(n,)] = query(store, "SELECT count(*) FROM responses WHERE dataset = ?", [DERIVED])
    assert n == 6
    # The key never went to a URL typed on the page (the rewriter's is not $OPENAI_BASE_URL).
    assert not job.req.rewriter.trust_base_url and not job.req.judge.trust_base_url


def test_the_rewrites_dataset_points_back_and_its_texts_open_in_samples(app_db):
    store = Store(app_db)
    _stored_check(store)
    at = _page(params={"dataset": DERIVED})
    text = _texts(at)
    assert "These are rewritten responses." in text and "Run a verbosity check" not in text
    [(iid, model, rewrite)] = query(
        store, "SELECT instance_id, model, text FROM responses WHERE dataset = ? LIMIT 1", [DERIVED]
    )
    at = _page(params={"dataset": DERIVED, "instance": iid, "model": model}, page="samples")
    assert rewrite in [t.value for t in at.text]  # the rewrite, as plain text


def test_two_checks_are_picked_by_a_selectbox_newest_first(app_db):
    store = Store(app_db)
    _stored_check(store)
    _stored_check(store, "rw-other")
    at = _page()
    pick = at.selectbox(key="jd_vb_check::demo")
    assert pick.options == ["demo · verbose (rw-other)", DERIVED]
    assert "check 'demo · verbose (rw-other)'" in _texts(at)
    pick.select(DERIVED).run()
    assert not at.exception and f"check '{DERIVED}'" in _texts(at)
