"""Judging through the OpenAI Batch API (``--backend openai-batch``), against the loopback
emulation of the Files and Batches endpoints (tests/openai_batches.py) driven by the real SDK:
a 1,000-item run split into parts, failed requests resubmitted alone, expired, cancelled and
failed batches, and the same judgment whichever way an item went (live, pool, batch)."""

from __future__ import annotations

import json

import pytest

from analysis.core.store import Store
from judges import batch_store
from judges.batch_run import cancel_run, resume
from judges.config import JudgeConfig
from judges.endpoints import Endpoint
from judges.plan import Selection, plan_run
from judges.runner import RunOptions, run
from tests.openai_batches import BatchService
from tests.openai_server import FaultPlan, OpenAIServer, scores_for
from tests.store_fixtures import query

FAST = RunOptions(poll_s=0.02, backoff_s=0.01, backoff_cap_s=0.05, concurrency=16, flush_s=0.1)
JUDGE = "judge-test (openai, flask-v1)"


def _batch(srv: OpenAIServer, model: str = "judge-test", **kw) -> JudgeConfig:
    return JudgeConfig("openai-batch", model, base_url=srv.base_url, **kw)


def _stored(store: Store, judge: str = JUDGE) -> list[tuple]:
    return query(
        store,
        "SELECT instance_id, model, cache_key, parse_status, raw_output, error, run_id "
        "FROM judgments WHERE judge = ? ORDER BY instance_id, model, run_id",
        [judge],
    )


def _lines(srv: OpenAIServer, batch_id: str) -> list[dict]:
    state = srv.batches.batches[batch_id]
    return [json.loads(line) for line in state.data.splitlines() if line.strip()]


def test_1000_items_in_three_parts_stored_exactly_once_with_the_servers_scores(store):
    sel = Selection("demo", limit=1000)
    options = RunOptions(**{**vars(FAST), "batch_max_requests": 400})
    with OpenAIServer(batches=BatchService()) as srv:
        cfg = _batch(srv)
        plan = plan_run(store, cfg, sel)
        summary = run(store, cfg, sel, options)
        service = srv.batches
        assert service.submissions == 3 and srv.count() == 0  # no live chat call at all
        sizes = sorted(len(_lines(srv, b)) for b in service.batches)
    assert sizes == [200, 400, 400]
    assert (summary.ok, summary.errors, summary.calls, summary.pending) == (1000, 0, 1000, 0)
    rows = _stored(store)
    assert len(rows) == 1000 and len({r[2] for r in rows}) == 1000
    assert {r[2] for r in rows} == {c.cache_key for c in plan.calls}
    expected = {c.cache_key: scores_for({"messages": c.messages}) for c in plan.calls}
    got = query(
        store,
        "SELECT j.cache_key, s.skill, s.score FROM latest_scores s JOIN judgments j "
        "USING (judgment_id) WHERE s.judge = ?",
        [JUDGE],
    )
    assert len(got) == sum(len(v) for v in expected.values())
    assert all(expected[k][skill] == score for k, skill, score in got)
    runs = query(store, "SELECT status, n_items, n_ok, source FROM runs WHERE judge = ?", [JUDGE])
    assert runs == [("complete", 1000, 1000, "batch judge run on demo")]
    parts = query(store, "SELECT part, n_requests, status, stored_at IS NOT NULL FROM batches "
                  "ORDER BY part")  # fmt: skip
    assert parts == [(1, 400, "completed", True), (2, 400, "completed", True),
                     (3, 200, "completed", True)]  # fmt: skip
    assert batch_store.pending_runs(store) == []
    journal = store.path.with_name(store.path.name + ".journal")
    assert list(journal.glob("*.batch.lock")) == []  # a finished run leaves no lock file


def test_failed_requests_are_recorded_then_only_those_resubmitted(store):
    sel = Selection("demo", limit=200)
    faults = FaultPlan(rate=0.05, kinds=("500", "429"), seed=11)
    with OpenAIServer(batches=BatchService(faults=faults)) as srv:
        first = run(store, _batch(srv), sel, FAST)
        failed = {(r[0], r[1]) for r in _stored(store) if r[3] == "error"}
        reasons = {r[5] for r in _stored(store) if r[3] == "error"}
        srv.batches.faults = FaultPlan()  # the service recovers
        second = run(store, _batch(srv), sel, FAST)
        resent = _lines(srv, list(srv.batches.batches)[-1])
        assert srv.batches.submissions == 2
    assert 3 <= len(failed) == first.errors <= 25
    assert all(r.startswith(("HTTP 500 (", "HTTP 429 (")) for r in reasons)
    # The second batch holds exactly the failed items' requests, nothing answered before.
    by_key = {r[2]: (r[0], r[1]) for r in _stored(store)}
    assert {by_key[line["custom_id"]] for line in resent} == failed
    assert len(resent) == len(failed) and second.ok == len(failed) and second.errors == 0
    assert second.cache_hits == 200 - len(failed)
    ok = query(store, "SELECT instance_id, model, count(*) FROM judgments WHERE judge = ? "
               "AND parse_status = 'ok' GROUP BY ALL", [JUDGE])  # fmt: skip
    assert len(ok) == 200 and all(n == 1 for *_, n in ok)


def test_an_expired_batch_stores_what_ran_and_records_the_rest(store):
    sel = Selection("demo", limit=100)
    with OpenAIServer(batches=BatchService(expire_after=30)) as srv:
        summary = run(store, _batch(srv), sel, FAST)
        srv.batches.expire_after = None
        again = run(store, _batch(srv), sel, FAST)
        assert len(_lines(srv, list(srv.batches.batches)[-1])) == 70
    assert (summary.ok, summary.errors) == (30, 70)
    errors = {r[5] for r in _stored(store) if r[3] == "error"}
    assert errors == {
        "batch_expired: This request could not be executed before the completion window expired."
    }
    assert query(store, "SELECT DISTINCT status FROM batches ORDER BY 1") == [
        ("completed",), ("expired",)]  # fmt: skip
    assert again.ok == 70
    statuses = query(store, "SELECT status FROM runs WHERE judge = ? ORDER BY started_at", [JUDGE])
    assert statuses == [("expired",), ("complete",)]


def test_a_batch_the_service_fails_records_every_item_with_its_reason(store):
    sel = Selection("demo", limit=20)
    with OpenAIServer(batches=BatchService()) as srv:
        srv.batches.fail_next = "The input file is not valid for this model."
        summary = run(store, _batch(srv), sel, FAST)
    assert summary.errors == 20 and summary.ok == 0
    reasons = {r[5] for r in _stored(store)}
    assert len(reasons) == 1 and "The input file is not valid for this model." in reasons.pop()
    assert query(store, "SELECT status FROM runs WHERE judge = ?", [JUDGE]) == [("failed",)]


def test_cancel_at_the_service_stores_what_was_answered(store):
    sel = Selection("demo", limit=30)
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()
        left = run(store, _batch(srv), sel, RunOptions(**{**vars(FAST), "wait": False}))
        assert left.pending == 30 and service.submissions == 1
        (pending,) = batch_store.pending_runs(store, "demo")
        assert (pending.run_id, pending.requests) == (left.run_id, 30)
        lines = cancel_run(store, left.run_id)
        assert len(lines) == 1 and "cancel" in lines[0]
        service.resume()
        (done,) = resume(store, options=FAST)
        assert service.submissions == 1
    assert done.errors == 30 and done.pending == 0
    assert {r[5] for r in _stored(store)} == {"not run: the batch was cancelled"}
    assert query(store, "SELECT status FROM runs WHERE judge = ?", [JUDGE]) == [("cancelled",)]
    assert batch_store.pending_runs(store) == []


def test_a_batch_made_but_never_written_down_is_found_not_made_again(store, monkeypatch):
    """A process killed between the service's answer and writing the batch id down."""
    from judges import batch_tend

    sel = Selection("demo", limit=25)
    real = batch_store.set_state

    def lost(*a, **kw):
        raise KeyboardInterrupt  # the kill, before the id is in the store

    with OpenAIServer(batches=BatchService()) as srv:
        monkeypatch.setattr(batch_tend.batch_store, "set_state", lost)
        stopped = run(store, _batch(srv), sel, FAST)  # Ctrl-C: stops, keeps what it has
        assert stopped.cancelled and stopped.pending == 25 and srv.batches.submissions == 1
        assert query(store, "SELECT batch_id, status FROM batches") == [(None, "uploaded")]
        monkeypatch.setattr(batch_tend.batch_store, "set_state", real)
        (done,) = resume(store, options=FAST)
        assert srv.batches.submissions == 1  # found by its input file, not created again
    assert done.ok == 25 and len(_stored(store)) == 25


def test_the_same_judgment_live_through_a_pool_and_through_a_batch(demo_db, tmp_path):
    from tests.store_fixtures import demo_copy

    sel = Selection("demo", limit=60, skills=("robustness", "correctness", "readability"))
    tables = []
    with OpenAIServer() as a, OpenAIServer() as b, OpenAIServer(batches=BatchService()) as c:
        ways = {
            "live": (JudgeConfig("openai", "judge-test", base_url=a.base_url), FAST),
            "pool": (JudgeConfig("openai", "judge-test", base_url=a.base_url),
                     RunOptions(**{**vars(FAST), "endpoints": (Endpoint(a.base_url, 4),
                                                               Endpoint(b.base_url, 4))})),
            "batch": (_batch(c), FAST),
        }  # fmt: skip
        for way, (cfg, options) in ways.items():
            (tmp_path / way).mkdir()
            store = demo_copy(demo_db, tmp_path / way)
            summary = run(store, cfg, sel, options)
            assert summary.ok == 60, way
            tables.append(query(
                store,
                "SELECT j.instance_id, j.model, j.cache_key, j.raw_output, j.rationale, "
                "j.parse_status, j.prompt_tokens, j.completion_tokens, s.skill, s.score "
                "FROM judgments j JOIN scores s USING (judgment_id) WHERE j.judge = ? "
                "ORDER BY ALL", [JUDGE],
            ))  # fmt: skip
        assert b.count() > 0 and c.count() == 0  # the pool used both servers; batch no chat
    live, pool, batch = tables
    assert len(live) > 60 and live == pool == batch


def test_the_estimate_is_at_batch_prices_and_leaves_out_what_a_pending_batch_asks(store):
    sel = Selection("demo", limit=40)
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        live = plan_run(store, JudgeConfig("openai", "gpt-4o-mini", base_url=srv.base_url), sel)
        batch = plan_run(store, _batch(srv, model="gpt-4o-mini"), sel)
        assert batch.estimate.cost_usd == pytest.approx(live.estimate.cost_usd / 2)
        service.pause()
        run(store, _batch(srv), Selection("demo", limit=10), RunOptions(wait=False))
        later = plan_run(store, _batch(srv), sel)
        service.resume()
    assert len(later.calls) == 30 and later.estimate.waiting == 10
    assert "10 waiting in a pending batch" in later.estimate.lines()[0]


def test_a_lost_creation_answer_halts_then_resume_finds_the_batch(store, monkeypatch):
    """The service made the batch but its answer never arrived (a timeout): the run stops with
    the way to go on, and the resume finds that batch instead of paying for a second one."""
    from judges.backends.openai_batch import BatchClient, BatchError

    real = BatchClient.create

    def lost(self, *a, **kw):
        real(self, *a, **kw)
        raise BatchError("creating the batch: timed out", retryable=True)

    sel = Selection("demo", limit=15)
    with OpenAIServer(batches=BatchService()) as srv:
        monkeypatch.setattr(BatchClient, "create", lost)
        halted = run(store, _batch(srv), sel, FAST)
        monkeypatch.setattr(BatchClient, "create", real)
        assert halted.incomplete and "judge --resume" in halted.halted
        assert query(store, "SELECT batch_id, status FROM batches") == [(None, "uploaded")]
        (done,) = resume(store, options=FAST)
        assert srv.batches.submissions == 1
    assert done.ok == 15 and len(_stored(store)) == 15


def test_reads_that_fail_for_a_while_are_retried(store, monkeypatch):
    from judges.backends.openai_batch import BatchClient, BatchError

    real, failures = BatchClient.get, []

    def flaky(self, batch_id):
        if len(failures) < 3:
            failures.append(batch_id)
            raise BatchError(f"reading batch {batch_id}: connection failed", retryable=True)
        return real(self, batch_id)

    with OpenAIServer(batches=BatchService()) as srv:
        monkeypatch.setattr(BatchClient, "get", flaky)
        summary = run(store, _batch(srv), Selection("demo", limit=10), FAST)
    assert len(failures) == 3 and summary.ok == 10 and not summary.incomplete
