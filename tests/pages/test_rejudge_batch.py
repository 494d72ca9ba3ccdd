"""The Re-judge page with the OpenAI Batch API (backend openai-batch), through AppTest against
the loopback batch emulator (tests/openai_batches.py): a run that waits for its batch, a
pending batch listed from the store after a restart and resumed without a second submission,
a batch cancelled at the service, and the hint and limit for large selections.

Expected scores come from the emulator's own answer (``scores_for``: what the default responder
says for a prompt), expected counts and statuses from what each test set up by hand."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.views import queues
from judges.config import JudgeConfig
from judges.plan import Selection, plan_run
from judges.runner import RunOptions, run
from tests.app_fixtures import open_page
from tests.openai_batches import BatchService
from tests.openai_server import OpenAIServer, judge_answer, scores_for

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
JUDGE = "batch judge"
CANCELLED = "not run: the batch was cancelled"


def _items(db: Path, n: int) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT DISTINCT instance_id, model FROM responses WHERE dataset = 'demo' "
            "AND text IS NOT NULL ORDER BY 1, 2 LIMIT ?",
            [n],
        ).fetchall()
    finally:
        con.close()


def _query(db: Path, sql: str, params: list) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _page(state: dict) -> AppTest:
    st.cache_data.clear()  # a fresh app: nothing but the store remembers the batches
    return open_page("pages/rejudge.py", state)


def _form(srv: OpenAIServer, **extra) -> dict:
    return {"rj_model": "judge-test", "rj_base_url": srv.base_url, "rj_name": JUDGE,
            "rj_poll_s": 0.5, **extra}  # fmt: skip


def _expected(db: Path, items, base_url: str) -> dict[tuple[str, str, str], float]:
    """(instance, model, skill) → the score the emulator's answer to that prompt carries."""
    cfg = JudgeConfig("openai", "judge-test", base_url=base_url, name=JUDGE)
    plan = plan_run(Store(db), cfg, Selection("demo", items=tuple(items)))
    return {
        (c.item.instance_id, c.item.model, k): float(v)
        for c in plan.calls
        for k, v in scores_for({"messages": c.messages}).items()
    }


def _scores(db: Path, run_id: str) -> dict[tuple[str, str, str], float]:
    rows = _query(
        db,
        "SELECT s.instance_id, s.model, s.skill, s.score FROM scores s "
        "JOIN judgments j USING (judgment_id) WHERE j.run_id = ?",
        [run_id],
    )
    return {(i, m, k): v for i, m, k, v in rows}


def _pending_table(at: AppTest):
    return next((d.value for d in at.dataframe if "Statuses" in d.value.columns), None)


def _submit_paused(db: Path, srv: OpenAIServer, items) -> str:
    """A batch run sent without waiting (as ``finegrain judge --no-wait`` would), left at the
    service: its run id."""
    cfg = JudgeConfig("openai-batch", "judge-test", base_url=srv.base_url, name=JUDGE)
    summary = run(Store(db), cfg, Selection("demo", items=tuple(items)), RunOptions(wait=False))
    assert summary.pending == len(items) and summary.ok == 0
    return summary.run_id


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def test_a_batch_run_waits_for_its_batch_and_stores_every_answer(app_db):
    items = _items(app_db, 6)
    queues.add(Store(app_db), queues.REJUDGE, "demo", items)
    with OpenAIServer(batches=BatchService(item_s=0.0)) as srv:
        at = _page(_form(srv, rj_backend="openai-batch"))
        estimate = " ".join(m.value for m in at.markdown)
        assert "6 calls to make" in estimate and "within 24 h" in estimate
        next(b for b in at.button if b.label == "Run").click().run()
        job = at.session_state["rj_job"]
        assert job.batch and job.wait(60)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert srv.batches.submissions == 1 and srv.count() == 0  # no live call
    summary = job.summary
    assert (summary.ok, summary.errors, summary.pending) == (6, 0, 0)
    shown = " ".join(s.value for s in at.success).replace("\\", "")  # markdown escapes
    assert "6 scored" in shown and "part 1/1 (batch batch_" in shown  # the part's line
    assert "completed, stored, 6 of 6 answered" in shown
    assert _scores(app_db, summary.run_id) == _expected(app_db, items, srv.base_url)
    assert _query(app_db, "SELECT status FROM runs WHERE run_id = ?", [summary.run_id]) == [
        ("complete",)
    ]
    assert _pending_table(at) is None  # nothing left at the service
    assert any(c for c in at.dataframe if "Change" in c.value.columns)  # before/after shown


def test_a_pending_batch_shows_after_a_restart_and_resume_stores_it_without_resending(app_db):
    items = _items(app_db, 5)
    queues.add(Store(app_db), queues.REJUDGE, "demo", items)
    with OpenAIServer(batches=BatchService(item_s=0.0)) as srv:
        srv.batches.pause()  # the service holds the batch: nothing answered yet
        run_id = _submit_paused(app_db, srv, items)
        at = _page(_form(srv))  # a new session, as after an app restart
        table = _pending_table(at)
        assert table is not None and list(table["Run"]) == [run_id]
        row = table.iloc[0]
        assert (row["Judge"], row["Model"], int(row["Parts"]), int(row["Requests"])) == (
            JUDGE, "judge-test", 1, 5,
        )  # fmt: skip
        assert (int(row["Answered"]), int(row["Failed"])) == (0, 0)
        assert row["Statuses"] == "in_progress" and row["Started"][:2] == "20"
        srv.batches.resume()
        batch_id = next(iter(srv.batches.batches))
        srv.batches.wait_for(batch_id, "completed")
        _button(at, f"rj_resume::{run_id}").click().run()
        job = at.session_state["rj_job"]
        assert job.batch and job.run_id == run_id and job.wait(60)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert srv.batches.submissions == 1  # resumed, never sent again
        assert srv.count() == 0
    assert job.summary.ok == 5 and job.summary.pending == 0
    assert "5 scored" in " ".join(s.value for s in at.success)
    assert _scores(app_db, run_id) == _expected(app_db, items, srv.base_url)
    assert _pending_table(at) is None  # stored: no longer pending
    assert _query(app_db, "SELECT status FROM runs WHERE run_id = ?", [run_id]) == [("complete",)]


def test_cancel_at_the_service_stores_the_answered_and_fails_the_rest(app_db):
    items = _items(app_db, 6)
    queues.add(Store(app_db), queues.REJUDGE, "demo", items)
    service = BatchService(item_s=0.0)
    answered: list[dict] = []

    def two_then_hold(body: dict) -> str:
        answered.append(body)
        if len(answered) == 2:
            service.pause()  # the batch holds before its third request
        return judge_answer(body)

    with OpenAIServer(batches=service, responder=two_then_hold) as srv:
        run_id = _submit_paused(app_db, srv, items)
        batch_id = next(iter(service.batches))
        deadline = time.monotonic() + 20
        while service.batches[batch_id].completed < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        at = _page(_form(srv))
        assert list(_pending_table(at)["Run"]) == [run_id]
        _button(at, f"rj_stop::{run_id}").click().run()
        job = at.session_state["rj_job"]
        assert job.wait(60)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert service.batches[batch_id].status == "cancelled"
        assert service.submissions == 1
    assert len(answered) == 2
    rows = _query(
        app_db,
        "SELECT instance_id, model, parse_status, error FROM judgments WHERE run_id = ?",
        [run_id],
    )
    ok = {(i, m) for i, m, status, _ in rows if status == "ok"}
    failed = [(i, m, e) for i, m, status, e in rows if status == "error"]
    assert len(ok) == 2 and len(failed) == 4 and len(rows) == 6
    assert {e for *_, e in failed} == {CANCELLED}
    assert ok | {(i, m) for i, m, _ in failed} == set(items)
    expected = _expected(app_db, items, srv.base_url)
    assert _scores(app_db, run_id) == {k: v for k, v in expected.items() if k[:2] in ok}
    assert _query(app_db, "SELECT status FROM runs WHERE run_id = ?", [run_id]) == [("cancelled",)]
    status = _query(
        app_db, "SELECT status, stored_at IS NOT NULL FROM batches WHERE run_id = ?", [run_id]
    )
    assert status == [("cancelled", True)]
    assert _pending_table(at) is None
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "2 scored" in shown and "4 failed calls" in shown and CANCELLED in shown
    assert f"part 1/1 (batch {batch_id}): cancelled, stored, 2 of 6 answered" in shown


def _waiting(at: AppTest, srv: OpenAIServer, n: int):
    """Run with openai-batch on a held service, until the job shows its submitted part."""
    srv.batches.pause()
    next(b for b in at.button if b.label == "Run").click().run()
    job = at.session_state["rj_job"]
    deadline = time.monotonic() + 30
    while not (job.progress and job.progress.batches) and time.monotonic() < deadline:
        time.sleep(0.02)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    parts = " ".join(t.value for t in at.text)
    assert "part 1/1 (batch batch_" in parts and f"in_progress, 0 of {n} answered" in parts
    assert f"0 of {n} answers stored" in at.get("progress")[0].proto.text
    assert not job.done
    return job


def test_stop_waiting_leaves_the_batch_at_the_service_listed_to_resume(app_db):
    items = _items(app_db, 4)
    queues.add(Store(app_db), queues.REJUDGE, "demo", items)
    with OpenAIServer(batches=BatchService(item_s=0.0)) as srv:
        at = _page(_form(srv, rj_backend="openai-batch"))
        job = _waiting(at, srv, 4)
        _button(at, "rj_stop_waiting").click().run()
        assert job.wait(30)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        batch_id = next(iter(srv.batches.batches))
        assert srv.batches.batches[batch_id].status == "in_progress"  # not cancelled
    assert job.summary.pending == 4 and job.summary.ok == 0
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "4 requests are still at the batch service" in shown
    assert list(_pending_table(at)["Run"]) == [job.summary.run_id]


def test_cancel_the_batch_while_waiting_records_every_request_as_not_run(app_db):
    items = _items(app_db, 4)
    queues.add(Store(app_db), queues.REJUDGE, "demo", items)
    with OpenAIServer(batches=BatchService(item_s=0.0)) as srv:
        at = _page(_form(srv, rj_backend="openai-batch"))
        job = _waiting(at, srv, 4)
        _button(at, "rj_cancel_batch").click().run()
        assert job.wait(30)  # the job lets go of the run first…
        at.run()  # …then the page cancels it at the service and resumes it to store it
        after = at.session_state["rj_job"]
        assert after is not job and after.run_id == job.run_id
        assert after.wait(30)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert srv.batches.submissions == 1
    job = after
    assert (job.summary.ok, job.summary.errors, job.summary.pending) == (0, 4, 0)
    rows = _query(app_db, "SELECT error FROM judgments WHERE run_id = ?", [job.summary.run_id])
    assert rows == [(CANCELLED,)] * 4
    run_status = "SELECT status FROM runs WHERE run_id = ?"
    assert _query(app_db, run_status, [job.summary.run_id]) == [("cancelled",)]
    assert _pending_table(at) is None


@pytest.mark.parametrize(("backend", "hint"), [("openai", True), ("openai-batch", False)])
def test_a_large_selection_suggests_the_batch_service(app_db, backend, hint):
    state = {"rj_source::demo": "filters", "rj_limit": 1500, "rj_model": "gpt-4o",
             "rj_backend": backend}  # fmt: skip
    at = _page(state)
    n = at.session_state["rj_limit"]
    assert n == 1500
    selected = " ".join(c.value for c in at.caption)
    assert "1,500 responses selected" in selected
    infos = " ".join(i.value for i in at.info)
    assert ("costs half" in infos) is hint


@pytest.mark.parametrize(("backend", "estimated"), [("openai", False), ("openai-batch", True)])
def test_a_link_may_ask_for_50000_which_only_the_batch_service_takes(app_db, backend, estimated):
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["source"] = "filters"
    at.query_params["limit"] = "50000"
    at.run()
    at.session_state["rj_backend"] = backend
    at.switch_page("pages/rejudge.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["rj_limit"] == 50_000
    box = next(n for n in at.number_input if n.key == "rj_limit")
    assert box.max == 50_000
    n = int(_query(app_db, "SELECT count(*) FROM responses WHERE dataset = 'demo' "
                           "AND text IS NOT NULL", [])[0][0])  # fmt: skip
    assert n > 5_000  # the whole demo is selected: over the live cap, under the batch one
    warned = " ".join(w.value for w in at.warning)
    assert ("judges at most 5,000 with live calls" in warned) is not estimated
    assert any("Estimate for" in m.value for m in at.markdown) is estimated
