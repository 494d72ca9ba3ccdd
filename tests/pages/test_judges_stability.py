"""The Judges page's Stability section through AppTest on the demo: the α chart and table (the
simulated panel's repeat run of gpt-4), the note for judges without a repeat, and a repeat run
launched from the form against the loopback OpenAI server (a new run stored, the judge's
stability then shown)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.runner import RunOptions, run
from tests.app_fixtures import judges_page
from tests.openai_server import OpenAIServer
from tests.store_fixtures import query

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
GPT4 = "gpt-4 (simulated)"


def _page(state: dict | None = None) -> AppTest:
    return judges_page("Stability", state)


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _values(arr) -> list[float]:
    """A plotly array (a list, or numpy's typed-array JSON: dtype + base64 bytes)."""
    if isinstance(arr, dict):
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"]).tolist()
    return list(arr)


def _table(at: AppTest):
    for df in at.dataframe:
        if "Items in 2+ runs" in df.value.columns:
            return df.value
    raise AssertionError([list(d.value.columns) for d in at.dataframe])


def test_the_section_draws_the_repeat_of_gpt4_and_says_which_judges_have_none(app_db):
    at = _page()
    (fig,) = _figures(at)
    names = [t.get("name") for t in fig["data"]]
    assert GPT4 in names and "humans' α among themselves (reference)" in names
    assert "FLASK paper: GPT-4, 3 runs at temperature 1.0" in names
    judge = next(t for t in fig["data"] if t.get("name") == GPT4)
    assert len(_values(judge["y"])) == 13  # 12 skills, then all pooled
    table = _table(at)
    assert set(table["Judge"]) == {GPT4} and (table["Runs"] == 2).all()
    notes = " ".join(i.value for i in at.info).replace("\\", "")  # markdown escapes
    assert "No repeated run yet" in notes and "lenient-judge (simulated)" in notes
    # Simulated judges carry no configuration to call again: no form, a caption says why.
    assert any("imported and simulated scores" in c.value for c in at.caption)
    assert not [b for b in at.button if b.label == "Launch"]


def test_the_interval_level_is_in_the_url(app_db):
    at = _page({"jd_stab_level": "alpha_interval"})
    assert at.query_params.get("alpha") == "alpha_interval"
    assert "α (interval) between runs" in _table(at).columns


@pytest.fixture
def judged(app_db: Path):
    """The demo with a judge run by Finegrain on 6 responses (the loopback server)."""
    with OpenAIServer() as srv:
        config = JudgeConfig("openai", "judge-test", base_url=srv.base_url, name="loop judge")
        run(Store(app_db), config, Selection("demo", limit=6), RunOptions(concurrency=2))
        yield srv


def test_a_repeat_launched_from_the_form_is_stored_and_shown(judged, app_db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = judged
    before = srv.count()
    state = {
        "jd_stab_judge::demo": "loop judge",
        "jd_stab_sample": 4,
        "jd_stab_temperature": 0.7,
        "jd_stab_base_url": srv.base_url,
    }
    at = _page(state)
    text = " ".join(m.value for m in at.markdown)
    assert "starts repeat 1 at temperature 0\\.7" in text and "4 calls to make" in text
    assert srv.count() == before  # the estimate costs nothing
    # No repeat yet: the note gives the command line too.
    assert any("--repeat-of 'loop judge' --dataset demo" in c.value for c in at.code)
    next(b for b in at.button if b.label == "Launch").click().run()
    job = at.session_state["jd_stab_job"]
    assert job.wait(60) and job.error is None, job.error
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert srv.count() == before + 4  # one call per sampled item, none from the cache
    asked = [r.body for r in srv.requests[before:]]
    assert {b["temperature"] for b in asked} == {0.7}
    runs = query(
        Store(app_db),
        "SELECT source, status, n_items FROM runs WHERE judge = 'loop judge' ORDER BY started_at",
    )
    assert runs == [("judge run on demo", "complete", 6),
                    ("repeat 1 on demo at temperature 0.7", "complete", 4)]  # fmt: skip
    assert any("Repeat 1 of loop judge" in s.value for s in at.success)
    table = _table(at)
    mine = table[table["Judge"] == "loop judge"]
    assert not mine.empty and (mine["Runs"] == 2).all()


def test_temperature_zero_is_refused_on_the_form(judged, app_db):
    at = _page({"jd_stab_judge::demo": "loop judge", "jd_stab_temperature": 0.0})
    errors = " ".join(e.value for e in at.error)
    assert "temperature above 0" in errors
    assert not [b for b in at.button if b.label == "Launch"]
