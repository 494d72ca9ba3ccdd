"""Nothing paid is lost and nothing is reported as done that is not stored: a journal that cannot
be written (a full disk) stops the run, whose answers are stored all the same; a store another
process holds (tests/store_fixtures.py) is waited for, and a run that could not store its
answers says so and exits non-zero, and the next run stores them without paying again; a
Retry-After beyond the cap fails the item at once (tests/openai_server.py serves the calls)."""

from __future__ import annotations

import errno
import re
import subprocess

import pytest

from analysis.core.errors import StoreError
from analysis.core.store import Store
from judges import records
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.runner import RunOptions, run
from tests.conftest import REPO
from tests.openai_server import FaultPlan, OpenAIServer
from tests.store_fixtures import hold_store, query

FAST = RunOptions(concurrency=4, backoff_s=0.02, backoff_cap_s=0.2, max_retries=4, flush_s=0.1)
JUDGE = "judge-test (openai, flask-v1)"


_q = query


def _config(srv) -> JudgeConfig:
    return JudgeConfig("openai", "judge-test", base_url=srv.base_url, timeout_s=5)


def _disk_full_after(monkeypatch, lines: int) -> list[int]:
    """The journal's writes succeed ``lines`` times, then fail as on a full disk."""
    written = [0]
    real = records._write_all

    def write(fd: int, data: bytes) -> None:
        if written[0] >= lines:
            raise OSError(errno.ENOSPC, "No space left on device")
        written[0] += 1
        real(fd, data)

    monkeypatch.setattr(records, "_write_all", write)
    return written


def test_a_full_disk_stops_the_run_and_every_answer_received_is_stored(store, monkeypatch):
    _disk_full_after(monkeypatch, 5)
    sel = Selection("demo", limit=60)
    with OpenAIServer(latency=0.05) as srv:
        s = run(store, _config(srv), sel, FAST)
        asked = srv.count()
    # The sixth answer could not be journalled: no call starts after it; at most the three
    # other calls in flight then were sent (concurrency 4), not the other 54.
    assert asked <= 6 + 3
    assert s.halted and "No space left on device" in s.halted and s.incomplete
    assert not s.cancelled and s.lost == 0 and s.unstored == 0
    stored = _q(store, "SELECT cache_key, parse_status FROM judgments WHERE run_id = ?", [s.run_id])
    # Every answer that came back is in the store (six or more), each once.
    assert len(stored) == s.ok + s.failed + s.errors >= 6
    assert len({k for k, _ in stored}) == len(stored)
    assert _q(store, "SELECT status FROM runs WHERE run_id = ?", [s.run_id]) == [("failed",)]
    assert any("run failed" in line and "No space left" in line for line in s.lines())

    monkeypatch.undo()  # space again: the rerun asks only for what was never answered
    with OpenAIServer() as srv:
        again = run(store, _config(srv), sel, FAST)
        assert srv.count() == 60 - len(stored)
    assert again.cache_hits == len(stored) and not again.incomplete
    ok = _q(store, "SELECT count(DISTINCT cache_key), count(*) FROM judgments "
                   "WHERE judge = ? AND parse_status = 'ok'", [JUDGE])  # fmt: skip
    assert ok == [(60, 60)]


def test_a_journal_that_cannot_be_opened_makes_no_call_and_writes_nothing(store, monkeypatch):
    def refuse(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(records, "_open_append", refuse)
    with OpenAIServer() as srv, pytest.raises(records.JournalError, match="No space left"):
        run(store, _config(srv), Selection("demo", limit=5), FAST)
    monkeypatch.undo()
    assert srv.count() == 0
    assert _q(store, "SELECT count(*) FROM runs WHERE judge = ?", [JUDGE]) == [(0,)]


def test_answers_the_journal_and_the_store_both_refuse_are_counted_as_lost(store, monkeypatch):
    _disk_full_after(monkeypatch, 0)

    def busy(*_a, **_k):
        raise records.StoreBusyError("The store is held by process 1.")

    monkeypatch.setattr("judges.runner.write_records", busy)
    with OpenAIServer(latency=0.05) as srv:
        s = run(store, _config(srv), Selection("demo", limit=8), RunOptions(
            concurrency=1, flush_s=0.1, store_wait_s=0))  # fmt: skip
        asked = srv.count()
    assert asked == 1 and s.lost == 1 and s.unstored == 0 and s.incomplete
    assert any("1 answers could be neither journalled nor stored" in x for x in s.lines())


def _hold(path, seconds: float) -> subprocess.Popen:
    """Take the store for writing like a long import; the run may hold it for a moment."""
    for _ in range(50):
        try:
            return hold_store(path, "rw", seconds)
        except AssertionError:  # the run was writing just then: try again
            continue
    raise AssertionError("could not take the store")


def _judge_while_held(store: Store, srv, monkeypatch, hold_s: float, wait_s: float):
    """``finegrain judge`` in this process; a writer takes the store as the last answer
    arrives, so the run's last answers meet a held store."""
    from analysis.cli import judge as judge_cli
    from analysis.cli.main import main

    holders: list[subprocess.Popen] = []

    def progress_factory(total: int):
        def progress(s) -> None:
            if s.done == total and not holders:
                holders.append(_hold(store.path, hold_s))

        return progress, lambda: None

    monkeypatch.setattr(judge_cli, "_progress", progress_factory)
    argv = ["judge", "--db", str(store.path), "--backend", "openai", "--model", "judge-test",
            "--base-url", srv.base_url, "--dataset", "demo", "--limit", "20",
            "--store-wait", str(wait_s)]  # fmt: skip
    code = main(argv)
    monkeypatch.undo()
    return code, holders, argv


def test_a_store_held_past_the_wait_is_reported_and_the_next_run_stores_it(
    store, monkeypatch, capsys
):
    from analysis.cli.main import main

    with OpenAIServer() as srv:
        code, holders, argv = _judge_while_held(store, srv, monkeypatch, 120, 0.5)
        out = capsys.readouterr()
        for h in holders:
            h.kill()
            h.wait()
        assert code == 1 and holders
        said = re.search(r"(\d+) answers are NOT yet in the store", out.err)
        assert said, out.err
        assert "stored before anything else by the next judge command" in out.err
        assert "20 scored" in out.out  # what was answered, next to what was not stored
        missing = int(said.group(1))
        stored = _q(store, "SELECT count(*) FROM judgments WHERE judge = ?", [JUDGE])[0][0]
        assert missing > 0 and stored == 20 - missing  # the message names exactly the gap
        assert _q(store, "SELECT status FROM runs WHERE judge = ?", [JUDGE]) == [("running",)]

        assert main(argv) == 0  # the store is free: the journal is stored first, nothing paid
        assert srv.count() == 20
    rerun = capsys.readouterr().out
    assert f"{missing} answers of an interrupted run recovered first" in rerun
    assert re.search(r"\b0 calls to make, 20 answered by the cache", rerun)  # estimate after it
    ok = _q(store, "SELECT count(DISTINCT cache_key), count(*) FROM judgments "
                   "WHERE judge = ? AND parse_status = 'ok'", [JUDGE])  # fmt: skip
    assert ok == [(20, 20)]
    statuses = _q(store, "SELECT status FROM runs WHERE judge = ? ORDER BY started_at", [JUDGE])
    assert statuses == [("interrupted",), ("complete",)]


def test_a_store_held_for_a_while_is_waited_for_and_everything_is_stored(
    store, monkeypatch, capsys
):
    with OpenAIServer() as srv:
        # Held longer than one store write waits (5 s) but less than the run waits (60 s).
        code, holders, _ = _judge_while_held(store, srv, monkeypatch, 8, 60)
        for h in holders:
            h.wait(timeout=60)
        asked = srv.count()
    out = capsys.readouterr()
    assert code == 0 and holders and asked == 20, out.err
    assert "the store was busy; waited" in out.out
    assert _q(store, "SELECT count(DISTINCT cache_key), count(*) FROM judgments "
                     "WHERE judge = ?", [JUDGE]) == [(20, 20)]  # fmt: skip
    assert _q(store, "SELECT status FROM runs WHERE judge = ?", [JUDGE]) == [("complete",)]
    journal = records.journal_dir(store)
    assert not journal.exists() or list(journal.iterdir()) == []


@pytest.mark.timeout(60)
def test_a_retry_after_beyond_the_cap_fails_the_item_at_once(store):
    with OpenAIServer(faults=FaultPlan(first_n={"429": 1}, retry_after=3600)) as srv:
        s = run(store, _config(srv), Selection("demo", limit=1), FAST)
        asked = srv.count()
    assert asked == 1 and s.errors == 1 and s.ok == 0  # not retried after a wait
    assert "3600" in s.failures[0] and "Retry-After" in s.failures[0]
    error = _q(store, "SELECT error FROM judgments WHERE judge = ?", [JUDGE])
    assert len(error) == 1 and "3600 s" in error[0][0]


def test_the_app_stores_a_blocked_runs_answers_when_it_starts(store, monkeypatch, capsys):
    """Answers a run could not store wait in its journal; opening the app stores them at once
    (no judge command needed), so the pages show them and nothing is paid twice."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    with OpenAIServer() as srv:
        code, holders, _ = _judge_while_held(store, srv, monkeypatch, 120, 0.5)
        for h in holders:
            h.kill()
            h.wait()
    said = re.search(r"(\d+) answers are NOT yet in the store", capsys.readouterr().err)
    assert code == 1 and said
    missing = int(said.group(1))
    assert missing > 0 and list(records.journal_dir(store).glob("*.jsonl"))

    monkeypatch.setenv("FINEGRAIN_DB", str(store.path))
    st.cache_data.clear()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    st.cache_data.clear()
    assert not at.exception, [e.message for e in at.exception]
    assert [t.value for t in at.toast] == [
        f"{missing} judge answers of an interrupted run were stored."
    ]
    ok = _q(store, "SELECT count(DISTINCT cache_key), count(*) FROM judgments "
                   "WHERE judge = ? AND parse_status = 'ok'", [JUDGE])  # fmt: skip
    assert ok == [(20, 20)]
    assert _q(store, "SELECT status FROM runs WHERE judge = ?", [JUDGE]) == [("interrupted",)]
    assert not list(records.journal_dir(store).glob("*.jsonl"))  # nothing left to recover


def test_a_full_disk_under_the_store_is_not_waited_for(store, monkeypatch):
    """Only a busy store is worth ``--store-wait``: a store write that fails for want of space
    is tried once at the end, the answers stay in the journal for the next run, and the run
    says why (before: it retried every second until the wait ran out)."""
    attempts = []

    def full(*_a, **_k):
        attempts.append(1)
        raise StoreError("The disk holding the store x is full.", title="Disk full")

    monkeypatch.setattr("judges.runner.write_records", full)
    with OpenAIServer() as srv:
        s = run(store, _config(srv), Selection("demo", limit=6), RunOptions(
            concurrency=2, flush_s=3600, store_wait_s=3600))  # fmt: skip
    # one attempt while running at most (the flush interval is an hour), one at the end
    assert len(attempts) <= 2 and s.unstored == 6 and s.lost == 0 and s.incomplete
    assert s.store_busy == "The disk holding the store x is full."
    monkeypatch.undo()
    with OpenAIServer() as srv:
        again = run(store, _config(srv), Selection("demo", limit=6), FAST)
        assert srv.count() == 0  # recovered from the journal, nothing paid twice
    assert again.cache_hits == 6
