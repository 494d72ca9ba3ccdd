"""The Re-judge page through AppTest against the loopback OpenAI server: the queue's
selection, the estimate, a run in the background, then before/after and agreement."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.views import queues
from judges.config import JudgeConfig
from judges.plan import Selection, plan_run
from tests.openai_server import OpenAIServer, scores_for

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
JUDGE = "gpt-4 (simulated)"


@pytest.fixture
def db(app_db: Path) -> Path:
    return app_db


def _human_items(db: Path, n: int) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT DISTINCT instance_id, model FROM latest_scores WHERE judge = 'annotator_1' "
            "ORDER BY instance_id, model LIMIT ?",
            [n],
        ).fetchall()
    finally:
        con.close()


def _page(state: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    at.switch_page("pages/rejudge.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _frame(at: AppTest, column: str):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(
        f"no table with {column!r}: {[list(d.value.columns) for d in at.dataframe]}"
    )


def test_queue_estimate_run_then_before_after_and_agreement(db):
    items = _human_items(db, 5)
    queues.add(Store(db), queues.REJUDGE, "demo", items)
    with OpenAIServer(latency=0.02) as srv:
        at = _page({"rj_model": "judge-test", "rj_base_url": srv.base_url, "rj_name": "new judge"})
        text = " ".join(m.value for m in at.markdown)
        assert "5 calls to make" in text and "5 responses selected" in " ".join(
            c.value for c in at.caption
        )
        assert srv.count() == 0  # an estimate costs nothing
        next(b for b in at.button if b.label == "Run").click().run()
        job = at.session_state["rj_job"]
        assert job.wait(60)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert srv.count() == 5
    assert "5 scored" in " ".join(s.value for s in at.success)
    table = _frame(at, "Change")
    cfg = JudgeConfig("openai", "judge-test", base_url=srv.base_url, name="new judge")
    plan = plan_run(Store(db), cfg, Selection("demo", items=tuple(items)))
    expected = {
        (c.item.instance_id, c.item.model, k): v
        for c in plan.calls
        for k, v in scores_for({"messages": c.messages}).items()
    }
    assert len(table) == len(expected)
    skill_ids = {c.label: k for k, c in SKILLS.items()}  # the table shows skills by label
    for rec in table.to_dict("records"):
        after, before = rec["After: new judge"], rec[f"Before: {JUDGE}"]
        assert float(after) == expected[(rec["Instance"], rec["Model"], skill_ids[rec["Skill"]])]
        if before == "":  # blank, never "None": the old judge gave no score
            assert rec["Change"] == ""
        else:  # shown with 2 decimals
            assert float(rec["Change"]) == pytest.approx(float(after) - float(before), abs=0.006)
    agree = _frame(at, "Statistic")
    assert set(agree["Judge"]) == {f"before: {JUDGE}", "after: new judge"}
    assert (agree["n"] > 0).all()


def test_empty_queue_says_how_to_fill_it(db):
    at = _page({})
    shown = " ".join(i.value for i in at.info).replace("\\", "")  # markdown escapes dropped
    assert "re-judge queue on the Samples page" in shown


def test_by_filters_selects_the_first_responses_of_the_slice(db):
    at = _page({"rj_source::demo": "filters", "rj_limit": 7, "models::demo": ["gpt4"]})
    assert "7 responses selected" in " ".join(c.value for c in at.caption)
    assert "7 calls to make" in " ".join(m.value for m in at.markdown)


def test_cancel_stops_the_run_and_keeps_what_was_answered(db):
    items = _human_items(db, 12)
    queues.add(Store(db), queues.REJUDGE, "demo", items)
    with OpenAIServer(latency=0.5) as srv:
        at = _page({"rj_model": "judge-test", "rj_base_url": srv.base_url, "rj_concurrency": 1})
        next(b for b in at.button if b.label == "Run").click().run()
        job = at.session_state["rj_job"]
        assert not job.done and at.get("progress")  # the progress bar of the running job
        deadline = time.monotonic() + 30
        while (job.progress is None or job.progress.done < 2) and time.monotonic() < deadline:
            time.sleep(0.05)  # let two answers arrive first
        next(b for b in at.button if b.label == "Cancel").click().run()
        assert job.wait(30)
        at.run()
        asked = srv.count()
    assert job.summary.cancelled and job.summary.ok >= 2 and asked < 12
    assert "run the same command again" in " ".join(w.value for w in at.warning)
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute(
            "SELECT count(*) FROM judgments WHERE run_id = ?", [job.summary.run_id]
        ).fetchone()[0]
        status = con.execute("SELECT status FROM runs WHERE run_id = ?", [job.summary.run_id])
        assert status.fetchone() == ("cancelled",)
    finally:
        con.close()
    assert stored == job.summary.ok + job.summary.failed + job.summary.errors


def test_page_files_and_model_folders_must_be_in_the_stores_folder(db, tmp_path):
    from analysis.core.errors import InputError
    from analysis.views.rejudge import user_file, user_model

    store = Store(db)
    inside = db.parent / "my-rubric.json"
    inside.write_text("[]")
    assert user_file(store, "my-rubric.json") == f"file:{inside.resolve()}"
    assert user_file(store, f"{inside}#2") == f"file:{inside.resolve()}#2"
    assert user_file(store, "  ") is None
    for outside in ("/etc/passwd", "../../etc/hosts"):
        with pytest.raises(InputError, match="must be in"):
            user_file(store, outside)
    with pytest.raises(InputError, match="local models named on this page must be in"):
        user_model(store, "transformers", str(REPO))
    assert user_model(store, "transformers", "Qwen/Qwen2.5-0.5B-Instruct") == (
        "Qwen/Qwen2.5-0.5B-Instruct"
    )  # a hub name (from the offline cache), not a path
    assert user_model(store, "openai", str(REPO)) == str(REPO)  # an API name is just a name
