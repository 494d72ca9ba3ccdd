"""A batch run interrupted at each step it can be: the answers are neither lost nor paid for
twice, nothing is submitted twice, and a plan made meanwhile leaves out what the run asks."""

from __future__ import annotations

from analysis.core.errors import StoreBusyError
from analysis.core.store import Store
from judges import batch_store, batch_tend
from judges.backends.openai_batch import BatchClient
from judges.batch_run import cancel_run, forget_run, resume
from judges.config import JudgeConfig
from judges.plan import Selection, plan_run
from judges.runner import RunOptions, run
from tests.openai_batches import BatchService
from tests.openai_server import OpenAIServer
from tests.store_fixtures import query

FAST = RunOptions(poll_s=0.02, backoff_s=0.01, backoff_cap_s=0.05)
JUDGE = "judge-test (openai, flask-v1)"


def _batch(srv: OpenAIServer) -> JudgeConfig:
    return JudgeConfig("openai-batch", "judge-test", base_url=srv.base_url)


def _items(store: Store) -> list[tuple]:
    return query(store, "SELECT instance_id, model, parse_status, error FROM judgments "
                 "WHERE judge = ? ORDER BY ALL", [JUDGE])  # fmt: skip


def test_cancel_finds_the_batch_a_kill_left_unwritten_and_cancels_it_there(store, monkeypatch):
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()
        real = batch_store.set_state

        def killed(*a, **kw):
            raise KeyboardInterrupt  # between the service's answer and writing the id down

        monkeypatch.setattr(batch_tend.batch_store, "set_state", killed)
        run(store, _batch(srv), Selection("demo", limit=10), FAST)
        monkeypatch.setattr(batch_tend.batch_store, "set_state", real)
        assert query(store, "SELECT batch_id, status FROM batches") == [(None, "uploaded")]
        (lines,) = cancel_run(store, query(store, "SELECT run_id FROM batches")[0][0])
        (batch_id,) = list(service.batches)
        assert batch_id in lines and service.batches[batch_id].status in ("cancelling",
                                                                          "cancelled")  # fmt: skip
        service.resume()
        (done,) = resume(store, options=FAST)
        assert service.submissions == 1
    assert done.errors == 10 and {r[3] for r in _items(store)} == {
        "not run: the batch was cancelled"}  # fmt: skip


def test_the_last_part_and_the_runs_close_are_one_transaction(store, monkeypatch):
    real, calls = batch_tend.finish_in, []

    def busy(*a, **kw):
        calls.append(1)
        raise StoreBusyError("The store is busy (an import is writing it).")

    with OpenAIServer(batches=BatchService()) as srv:
        monkeypatch.setattr(batch_tend, "finish_in", busy)
        halted = run(store, _batch(srv), Selection("demo", limit=12), FAST)
        assert calls and halted.incomplete and "busy" in halted.halted
        # Nothing of the part was kept without the run's close: the part is still to store.
        assert _items(store) == [] and len(batch_store.pending_runs(store)) == 1
        monkeypatch.setattr(batch_tend, "finish_in", real)
        (done,) = resume(store, options=FAST)
        assert srv.batches.submissions == 1
    assert done.ok == 12 and len(_items(store)) == 12
    assert query(store, "SELECT status, n_ok FROM runs WHERE judge = ?", [JUDGE]) == [
        ("complete", 12)]  # fmt: skip


def test_every_part_is_written_before_any_upload_so_no_plan_asks_them_again(store, monkeypatch):
    real, seen = BatchClient.upload, []

    def upload(self, name, data):
        if not seen:  # while the first part uploads: another process plans the same items live
            live = JudgeConfig("openai", "judge-test", base_url=self.base_url)
            seen.append(plan_run(store, live, Selection("demo", limit=30)).estimate)
        return real(self, name, data)

    with OpenAIServer(batches=BatchService()) as srv:
        monkeypatch.setattr(BatchClient, "upload", upload)
        options = RunOptions(**{**vars(FAST), "batch_max_requests": 10})
        summary = run(store, _batch(srv), Selection("demo", limit=30), options)
        assert srv.batches.submissions == 3
    (estimate,) = seen
    assert (estimate.calls, estimate.waiting) == (0, 30)
    assert summary.ok == 30 and len(_items(store)) == 30


def test_parts_never_sent_before_ctrl_c_are_sent_by_the_resume(store, monkeypatch):
    real, uploads = BatchClient.upload, []

    def upload(self, name, data):
        uploads.append(name)
        if len(uploads) == 2:
            raise KeyboardInterrupt
        return real(self, name, data)

    with OpenAIServer(batches=BatchService()) as srv:
        monkeypatch.setattr(BatchClient, "upload", upload)
        options = RunOptions(**{**vars(FAST), "batch_max_requests": 10})
        stopped = run(store, _batch(srv), Selection("demo", limit=30), options)
        assert stopped.cancelled and srv.batches.submissions == 1
        assert any("20 requests are not sent yet" in n for n in stopped.notes)
        (done,) = resume(store, options=FAST)
        assert srv.batches.submissions == 3  # the two parts never sent, each sent once
    assert done.ok + stopped.ok == 30 and len(_items(store)) == 30
    journal = store.path.with_name(store.path.name + ".journal")
    assert list(journal.glob("*.part*.jsonl")) == []  # local copies dropped once sent


def test_forget_gives_up_a_batch_whose_service_is_gone(store):
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()
        left = run(store, _batch(srv), Selection("demo", limit=8), RunOptions(wait=False))
        waiting = plan_run(store, _batch(srv), Selection("demo", limit=8)).estimate.waiting
        service.resume()
    assert waiting == 8
    (line,) = forget_run(store, left.run_id)  # the server is gone now: nothing is asked
    assert "8 requests recorded as failed" in line
    assert {r[3] for r in _items(store)} == {
        "given up (finegrain batches --forget): no answer of the service was stored"}  # fmt: skip
    assert query(store, "SELECT status FROM runs WHERE run_id = ?", [left.run_id]) == [
        ("cancelled",)]  # fmt: skip
    assert batch_store.pending_runs(store) == []
    assert plan_run(store, _batch(srv), Selection("demo", limit=8)).estimate.calls == 8
