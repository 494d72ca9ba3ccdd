"""The judging runner against a real OpenAI-compatible server on loopback (tests/openai_server.py)
with latency and faults: no lost or duplicated judgments, retries, Retry-After, cancellation,
the cache, resume after a kill, and no API key anywhere."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from analysis.core.errors import InputError, NotFoundError
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from judges import backends
from judges.config import JudgeConfig
from judges.plan import Selection, plan_run
from judges.runner import RunOptions, run
from tests.openai_server import FaultPlan, OpenAIServer, scores_for
from tests.store_fixtures import query

REPO = Path(__file__).resolve().parents[2]
FAST = RunOptions(concurrency=32, backoff_s=0.02, backoff_cap_s=0.2, max_retries=4, flush_s=0.1)


_q = query


def _config(srv, **kw) -> JudgeConfig:
    return JudgeConfig("openai", "judge-test", base_url=srv.base_url, timeout_s=0.5, **kw)


def _judgments(store: Store, judge: str) -> list[tuple]:
    return _q(
        store,
        "SELECT instance_id, model, parse_status, cache_key, raw_output, error FROM judgments "
        "WHERE judge = ?",
        [judge],
    )


def test_1000_calls_with_20_percent_faults_lose_and_duplicate_nothing_then_resume(store):
    sel = Selection("demo", limit=1000)
    plan = None
    with OpenAIServer(latency=0.01, faults=FaultPlan(rate=0.2, seed=7), hang_seconds=1.5) as srv:
        cfg = _config(srv)
        plan = plan_run(store, cfg, sel)
        first = run(store, cfg, sel, FAST)
        faults = sum(1 for r in srv.requests if r.fault is not None)
    assert first.items == 1000 and faults >= 150  # ~20% of the calls, retries included
    rows = _judgments(store, cfg.judge)
    keys = [r[3] for r in rows]
    assert len(rows) == 1000 and len(set(keys)) == 1000  # every item once: none lost, none twice
    assert {r[3] for r in rows} == {c.cache_key for c in plan.calls}
    final = [r for r in rows if r[2] != "ok"]
    assert len(final) == first.failed + first.errors > 0
    assert all(r[5] for r in final)  # every final failure says why
    # Stored scores are exactly what the server answered for that prompt.
    expected = {c.cache_key: scores_for({"messages": c.messages}) for c in plan.calls}
    got = _q(
        store,
        "SELECT j.cache_key, s.skill, s.score FROM latest_scores s JOIN judgments j "
        "USING (judgment_id) WHERE s.judge = ?",
        [cfg.judge],
    )
    assert len(got) == sum(len(expected[r[3]]) for r in rows if r[2] == "ok")
    assert all(expected[k][skill] == score for k, skill, score in got)

    with OpenAIServer(latency=0.01) as srv2:  # the faults are gone: a resume completes the rest
        second = run(store, _config(srv2), sel, FAST)
        assert srv2.count() == len(final)  # only the failed items are asked again
    assert second.cache_hits == 1000 - len(final) and second.ok == len(final)
    ok = _q(
        store,
        "SELECT cache_key, count(*) FROM judgments WHERE judge = ? AND parse_status = 'ok' "
        "GROUP BY 1",
        [cfg.judge],
    )
    assert len(ok) == 1000 and all(n == 1 for _, n in ok)
    runs = _q(store, "SELECT status, n_items FROM runs WHERE judge = ?", [cfg.judge])
    assert sorted(runs) == [("complete", 1000), ("complete", 1000)]


def test_rerunning_a_finished_run_makes_no_call_and_a_new_name_reuses_the_answers(store):
    sel = Selection("demo", limit=40)
    with OpenAIServer() as srv:
        first = run(store, _config(srv), sel, FAST)
        n = srv.count()
        again = run(store, _config(srv), sel, FAST)
        assert srv.count() == n == 40 and again.calls == 0 and again.cache_hits == 40
        renamed = run(store, _config(srv, name="same judge, new name"), sel, FAST)
        assert srv.count() == 40 and renamed.cache_hits == 40
        warmer = run(store, _config(srv, temperature=0.7), sel, FAST)
        assert srv.count() == 80 and warmer.ok == 40  # another configuration: new calls
    assert first.ok == 40
    n_scores = _q(
        store, "SELECT count(*) FROM latest_scores WHERE judge = ?", ["same judge, new name"]
    )
    assert (
        n_scores[0][0]
        == _q(store, "SELECT count(*) FROM latest_scores WHERE judge = ?", [_config(srv).judge])[0][
            0
        ]
        > 0
    )


def test_a_call_that_always_fails_is_retried_then_recorded(store, tmp_path):
    rows = [
        dict(instance_id="x1", model="m", skill="correctness", judge="h", kind="human", score=3,
             instruction="Add 2 and 2.", response="<<FAIL-500>> 4"),
        dict(instance_id="x2", model="m", skill="correctness", judge="h", kind="human", score=4,
             instruction="Add 3 and 3.", response="6"),
    ]  # fmt: skip
    import pandas as pd

    pd.DataFrame(rows).to_csv(tmp_path / "tiny.csv", index=False)
    import_scores(store, tmp_path / "tiny.csv", dataset="tiny")
    with OpenAIServer(faults=FaultPlan(by_marker={"<<FAIL-500>>": "500"})) as srv:
        s = run(store, _config(srv), Selection("tiny"), FAST)
        marked = [r for r in srv.requests if r.fault is not None]
    assert s.ok == 1 and s.errors == 1 and len(marked) == FAST.max_retries + 1
    err = [r for r in _judgments(store, _config(srv).judge) if r[2] == "error"]
    assert len(err) == 1 and err[0][0] == "x1" and "HTTP 500" in err[0][5]


def test_retry_after_is_honoured(store):
    with OpenAIServer(faults=FaultPlan(first_n={"429": 1}, retry_after=0.4)) as srv:
        s = run(store, _config(srv), Selection("demo", limit=1), FAST)
        times = [r.timestamp for r in srv.requests if r.path.endswith("/chat/completions")]
    assert s.ok == 1 and len(times) == 2
    assert times[1] - times[0] >= 0.4  # not the 0.02 s backoff


def test_cancel_keeps_what_was_answered_and_a_rerun_finishes(store):
    cancel = threading.Event()

    def progress(summary):
        if summary.done >= 20:
            cancel.set()

    sel = Selection("demo", limit=200)
    with OpenAIServer(latency=0.05) as srv:
        opts = RunOptions(concurrency=4, flush_s=0.05)
        s = run(store, _config(srv), sel, opts, progress=progress, cancel=cancel)
        assert s.cancelled and 20 <= s.done < 200
        status = _q(store, "SELECT status FROM runs WHERE run_id = ?", [s.run_id])
        assert status == [("cancelled",)]
        stored = len(_judgments(store, _config(srv).judge))
        assert stored == s.ok + s.failed + s.errors
        rest = run(store, _config(srv), sel, opts)
    assert rest.cache_hits == stored and rest.ok + rest.cache_hits + rest.failed == 200
    keys = [r[3] for r in _judgments(store, _config(srv).judge) if r[2] == "ok"]
    assert len(keys) == len(set(keys))


def test_sigkill_mid_run_then_rerun_resumes_without_duplicates_or_repaying(store):
    with OpenAIServer(latency=0.15) as srv:
        cmd = [sys.executable, "-m", "analysis", "judge", "--db", str(store.path), "--backend",
               "openai", "--model", "judge-test", "--base-url", srv.base_url, "--dataset", "demo",
               "--limit", "120", "--concurrency", "4", "--timeout", "5"]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        journal = store.path.with_name(store.path.name + ".journal")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = (
                sum(len(p.read_text().splitlines()) for p in journal.glob("*.jsonl"))
                if journal.exists()
                else 0
            )
            if lines >= 30:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        answered_before = srv.count()
        assert 30 <= answered_before < 120
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        asked_again = srv.count() - answered_before
    # Everything paid before the kill was recovered from the journal, not asked again: only
    # the calls in flight at the kill (at most the concurrency) are repeated.
    assert asked_again <= 120 - answered_before + 4
    assert "recovered" in done.stdout
    rows = _judgments(store, "judge-test (openai, flask-v1)")
    keys = [r[3] for r in rows]
    assert len(rows) == 120 and len(set(keys)) == 120
    statuses = _q(store, "SELECT status FROM runs WHERE judge = ? ORDER BY started_at",
                  ["judge-test (openai, flask-v1)"])  # fmt: skip
    assert statuses == [("interrupted",), ("complete",)]


def test_the_api_key_never_reaches_the_store_journal_or_output(store, monkeypatch, capsys):
    secret = "sk-finegrain-SECRET-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    from analysis.cli.main import main

    with OpenAIServer(faults=FaultPlan(first_n={"500": 2})) as srv:
        code = main(["judge", "--db", str(store.path), "--backend", "openai", "--model",
                     "judge-test", "--base-url", srv.base_url, "--dataset", "demo", "--limit", "5",
                     "--retries", "0"])  # fmt: skip
        auth = {r.header("authorization") for r in srv.requests}
    assert code == 0 and auth == {f"Bearer {secret}"}  # it was used…
    out = capsys.readouterr()
    assert secret not in out.out + out.err  # …and shown nowhere
    assert secret.encode() not in store.path.read_bytes()
    wal = Path(f"{store.path}.wal")
    assert not wal.exists() or secret.encode() not in wal.read_bytes()
    journal = store.path.with_name(store.path.name + ".journal")
    for p in journal.glob("*") if journal.exists() else []:
        assert secret not in p.read_text()
    params = _q(store, "SELECT params FROM judges WHERE backend = 'openai'")
    assert params and all(secret not in p for (p,) in params)


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(NotFoundError, match="Known backends: openai, openai-batch, transformers"):
        backends.create(JudgeConfig("nonesuch", "m"))


def test_estimate_uses_the_price_table(store, tmp_path):
    prices = tmp_path / "p.json"
    prices.write_text('{"my-model": [1.0, 2.0]}')
    cfg = JudgeConfig("openai", "my-model-2026", base_url="http://127.0.0.1:9/v1")
    plan = plan_run(store, cfg, Selection("demo", limit=10), prices=str(prices))
    est = plan.estimate
    assert est.calls == 10 and est.cache_hits == 0
    assert est.cost_usd == pytest.approx(
        (est.prompt_tokens * 1.0 + est.completion_tokens * 2.0) / 1e6
    )
    unknown = plan_run(
        store, JudgeConfig("openai", "zzz", base_url="http://x/v1"), Selection("demo", limit=2)
    )
    assert unknown.estimate.cost_usd is None


def test_the_key_goes_only_to_a_trusted_server(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with OpenAIServer() as srv:
        visitor = _config(srv, trust_base_url=False)  # as the app builds it
        run(store, visitor, Selection("demo", limit=1), FAST)
        assert {r.header("authorization") for r in srv.requests} == {"Bearer unused"}
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)  # the operator's own server
        run(store, visitor, Selection("demo", limit=2), FAST)
        assert srv.requests[-1].header("authorization") == "Bearer sk-operator"


def test_a_judge_cannot_take_a_human_scorers_name(store):
    with OpenAIServer() as srv, pytest.raises(InputError, match="already names a human scorer"):
        run(store, _config(srv, name="annotator_1"), Selection("demo", limit=1), FAST)
    human = _q(store, "SELECT count(*) FROM latest_scores WHERE judge = 'annotator_1'")[0][0]
    assert human > 0 and _q(store, "SELECT kind FROM judges WHERE judge = 'annotator_1'") == [
        ("human",)
    ]


def test_a_second_live_run_of_the_same_judge_is_refused(store):
    from judges.records import Journal

    with OpenAIServer() as srv:
        cfg = _config(srv)
        run(store, cfg, Selection("demo", limit=1), FAST)
        with store.write() as con:  # a run another process holds right now
            con.execute(
                "INSERT INTO runs (run_id, judge, dataset, source, status) "
                "VALUES ('live1', ?, 'demo', 'x', 'running')",
                [cfg.judge],
            )
        journal = Journal(store, "live1")
        try:
            with pytest.raises(InputError, match="already running on 'demo'"):
                run(store, cfg, Selection("demo", limit=2), FAST)
        finally:
            journal.close(remove=True)
        assert run(store, cfg, Selection("demo", limit=2), FAST).ok == 1  # free again


def test_retry_after_headers_are_read_and_capped():
    from types import SimpleNamespace

    from judges.backends.openai_compat import _retry_after

    def err(headers):
        return SimpleNamespace(response=SimpleNamespace(headers=headers))

    assert _retry_after(err({"retry-after": "2.5"})) == 2.5
    assert _retry_after(err({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert _retry_after(err({"retry-after": "100000"})) == 100000  # read as sent: see below
    assert _retry_after(err({"retry-after": "inf"})) is None
    assert _retry_after(err({"retry-after": "soon"})) is None
    assert _retry_after(err({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # past
    assert _retry_after(err({})) is None


def test_a_retry_after_beyond_the_cap_is_not_retried():
    from types import SimpleNamespace

    from judges.backends.openai_compat import MAX_RETRY_AFTER_S, _status_error

    def status(code, wait):
        headers = {"retry-after": str(wait)}
        return SimpleNamespace(status_code=code, response=SimpleNamespace(headers=headers))

    within = _status_error(status(429, MAX_RETRY_AFTER_S))
    assert within.retryable and within.retry_after == MAX_RETRY_AFTER_S
    beyond = _status_error(status(503, 3600))
    assert not beyond.retryable and "wait 3600 s (Retry-After)" in beyond.message


def test_default_name_carries_the_settings_that_change_answers():
    assert JudgeConfig("openai", "m").judge == "m (openai, flask-v1)"
    warm = JudgeConfig("openai", "m", temperature=0.7, max_tokens=300, structured=True)
    assert warm.judge == "m (openai, flask-v1, t=0.7, max 300 tokens, json)"


def test_a_429_pauses_every_task_not_only_the_one_told(store):
    with OpenAIServer(latency=0.05, faults=FaultPlan(first_n={"429": 1}, retry_after=0.6)) as srv:
        s = run(store, _config(srv), Selection("demo", limit=24), RunOptions(concurrency=4))
        reqs = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert s.ok == 24
    told = next(r.timestamp for r in reqs if r.fault is not None)
    # Requests already in flight when the 429 came back may land; no new one starts during
    # the pause (0.05 s answer + 0.6 s pause, with slack either side).
    during = [r for r in reqs if told + 0.15 < r.timestamp < told + 0.55]
    assert during == []
    assert any(r.timestamp >= told + 0.6 for r in reqs)


def test_a_late_replay_of_an_older_run_does_not_hide_newer_answers(store):
    from judges.records import CallRecord, write_records

    with store.write() as con:
        con.execute("INSERT INTO judges (judge, kind, backend) VALUES ('J', 'llm', 'openai')")
        for run_id, started in (
            ("old", "2026-01-01"),
            ("new", "2026-06-01"),
            ("newest", "2026-09-01"),
        ):
            con.execute(
                "INSERT INTO runs (run_id, judge, dataset, source, status, started_at) "
                "VALUES (?, 'J', 'demo', 'test', 'complete', ?::TIMESTAMP)",
                [run_id, started],
            )

    def answer(run_id: str, score: float) -> CallRecord:
        return CallRecord(run_id, "demo", "1", "gpt4", "J", f"key-{run_id}", "raw", None, "ok",
                          None, 1.0, 1, 1, {"correctness": score})  # fmt: skip

    write_records(store, [answer("new", 5.0)])
    write_records(store, [answer("old", 2.0)])  # a killed older run, replayed late
    sql = "SELECT run_id, score FROM latest_scores WHERE judge = 'J'"
    assert _q(store, sql) == [("new", 5.0)]
    history = "SELECT run_id, score, superseded FROM scores WHERE judge = 'J' ORDER BY run_id"
    assert _q(store, history) == [("new", 5.0, False), ("old", 2.0, True)]
    write_records(store, [answer("newest", 4.0)])  # the usual order: the newer run wins
    assert _q(store, sql) == [("newest", 4.0)]
