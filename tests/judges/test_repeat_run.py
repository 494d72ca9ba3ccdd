"""Repeat runs against the loopback OpenAI-compatible server: a stored judge asked again on a
sample of the items it scored, at a temperature above 0. One call per sampled item although
the cache holds every one of them, the original prompt's bytes at the new temperature, a new
run whose scores are history from the start (the judge's current scores are untouched: only
Stability reads a repeat); a finished repeat rerun makes no
call, a killed one resumed pays for the rest only; temperature 0 is refused."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from analysis.cli.main import main
from analysis.core.errors import InputError, NotFoundError
from analysis.core.store import Store
from judges.config import JudgeConfig, cache_key
from judges.plan import Selection, plan_run
from judges.repeat import plan_repeat
from judges.runner import RunOptions, run
from tests.openai_server import OpenAIServer, judge_answer, scores_for
from tests.store_fixtures import query

REPO = Path(__file__).resolve().parents[2]
NAME = "loop judge"
FAST = RunOptions(concurrency=4, flush_s=0.05)


def _answer(body: dict) -> str:
    """The default judge answer, its scores moved by one point when sampled (temperature > 0):
    a repeat's scores differ from the original's, so which one is current is visible."""
    if not body.get("temperature"):
        return judge_answer(body)
    moved = {k: v % 5 + 1 for k, v in scores_for(body).items()}
    return "Sampled again.\n\n" + json.dumps(moved)


def _original(store: Store, srv: OpenAIServer, n: int = 12) -> JudgeConfig:
    config = JudgeConfig("openai", "judge-test", base_url=srv.base_url, name=NAME)
    s = run(store, config, Selection("demo", limit=n), FAST)
    assert s.ok == n and srv.count() == n
    return config


def _messages(bodies) -> list[str]:
    return [json.dumps(b["messages"], ensure_ascii=False) for b in bodies]


def test_a_repeat_asks_each_sampled_item_once_with_the_same_prompt_and_is_history(store):
    with OpenAIServer(responder=_answer) as srv:
        config = _original(store, srv)
        first = srv.requests
        rp = plan_repeat(store, NAME, "demo", sample=5, seed=3, temperature=0.8,
                         runtime={"base_url": srv.base_url})  # fmt: skip
        # Every item is answered in the store, yet the repeat is answered by none of it.
        again = plan_run(store, config, Selection("demo", items=rp.selection.items))
        assert again.estimate.calls == 0 and again.estimate.cache_hits == 5
        assert (rp.plan.estimate.calls, rp.plan.estimate.cache_hits) == (5, 0)
        summary = run(store, rp.config, rp.selection, FAST)
        repeat = srv.requests[len(first) :]
    assert summary.ok == 5 and summary.cache_hits == 0 and len(repeat) == 5
    assert {b.body["temperature"] for b in repeat} == {0.8}
    assert {b.body.get("temperature", 0) for b in first} == {0}
    # The prompt sent is the original's, byte for byte (and each sampled item once).
    assert len(set(_messages(b.body for b in repeat))) == 5
    assert set(_messages(b.body for b in repeat)) <= set(_messages(b.body for b in first))
    runs = query(store, "SELECT run_id, source, status, n_items FROM runs WHERE judge = ? "
                 "ORDER BY started_at", [NAME])  # fmt: skip
    assert [r[1:] for r in runs] == [
        ("judge run on demo", "complete", 12),
        ("repeat 1 on demo at temperature 0.8", "complete", 5),
    ]
    new_run = runs[1][0]
    assert query(store, "SELECT repeat_number FROM runs WHERE run_id = ?", [new_run]) == [(1,)]
    # Scores: the original's stay current everywhere; the repeat's are history from the start
    # (only Stability reads them), one row per skill of each sampled item.
    current = query(store, "SELECT DISTINCT run_id FROM latest_scores WHERE judge = ?", [NAME])
    assert current == [(runs[0][0],)]
    assert query(store, "SELECT count(*) FROM scores WHERE judge = ? AND superseded "
                 "AND run_id <> ?", [NAME, new_run]) == [(0,)]  # fmt: skip
    history = query(store, "SELECT instance_id, model, score, superseded FROM scores "
                    "WHERE run_id = ?", [new_run])  # fmt: skip
    assert history and all(sup for *_, sup in history)
    assert {(i, m) for i, m, _, _ in history} == set(rp.selection.items)
    expected = {}
    for b in repeat:
        moved = {k: v % 5 + 1 for k, v in scores_for(b.body).items()}
        expected[json.dumps(b.body["messages"], ensure_ascii=False)] = moved
    totals = query(store, "SELECT count(*) FROM judgments WHERE judge = ?", [NAME])
    assert totals == [(17,)]
    got = sorted(s for _, _, s, _ in history)
    assert got == sorted(v for d in expected.values() for v in d.values())


def test_a_finished_repeat_rerun_makes_no_call_and_the_next_repeat_has_keys_of_its_own(store):
    with OpenAIServer(responder=_answer) as srv:
        _original(store, srv)
        url = {"base_url": srv.base_url}
        one = plan_repeat(store, NAME, "demo", sample=6, temperature=1.0, runtime=url)
        run(store, one.config, one.selection, FAST)
        calls = srv.count()
        same = plan_repeat(store, NAME, "demo", sample=6, temperature=1.0, repeat=1, runtime=url)
        assert same.resumes and same.plan.estimate.calls == 0
        rerun = run(store, same.config, same.selection, FAST)
        assert srv.count() == calls and rerun.calls == 0
        two = plan_repeat(store, NAME, "demo", sample=6, temperature=1.0, runtime=url)
        assert two.selection.repeat == 2 and not two.resumes
        assert two.selection.items == one.selection.items  # same seed, same sample
        run(store, two.config, two.selection, FAST)
        assert srv.count() == calls + 6
    keys = query(store, "SELECT cache_key FROM judgments WHERE judge = ?", [NAME])
    assert len(keys) == 12 + 6 + 6 and len(set(keys)) == 24  # no key shared by two runs


def test_a_larger_sample_with_the_same_seed_extends_the_repeat(store):
    with OpenAIServer(responder=_answer) as srv:
        _original(store, srv)
        url = {"base_url": srv.base_url}
        small = plan_repeat(store, NAME, "demo", sample=4, seed=9, temperature=0.5, runtime=url)
        run(store, small.config, small.selection, FAST)
        big = plan_repeat(store, NAME, "demo", sample=9, seed=9, temperature=0.5, repeat=1,
                          runtime=url)  # fmt: skip
    assert set(small.selection.items) < set(big.selection.items)
    assert (big.plan.estimate.calls, big.plan.estimate.cache_hits) == (5, 4)


def test_killed_half_way_the_same_command_resumes_and_pays_for_the_rest(store):
    with OpenAIServer(latency=0.15, responder=_answer) as srv:
        _original(store, srv, n=60)
        before = srv.count()
        cmd = [sys.executable, "-m", "analysis", "judge", "--db", str(store.path), "--repeat-of",
               NAME, "--dataset", "demo", "--sample", "40", "--temperature", "0.7",
               "--base-url", srv.base_url, "--concurrency", "2", "--timeout", "5"]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)  # fmt: skip
        journal = store.path.with_name(store.path.name + ".journal")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = list(journal.glob("*.jsonl")) if journal.exists() else []
            if sum(len(p.read_text().splitlines()) for p in found) >= 10:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        paid = srv.count() - before
        assert 10 <= paid < 40
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        asked_again = srv.count() - before - paid
    assert "resumes repeat 1 at temperature 0.7" in done.stdout
    # What was answered before the kill is recovered, not asked again: only the calls in
    # flight at the kill (at most the concurrency) are repeated.
    assert 40 - paid <= asked_again <= 40 - paid + 2
    rows = query(store, "SELECT j.cache_key FROM judgments j JOIN runs r USING (run_id) "
                 "WHERE r.repeat_number IS NOT NULL AND r.judge = ?", [NAME])  # fmt: skip
    assert len(rows) == 40 and len(set(rows)) == 40
    runs = query(store, "SELECT source, status FROM runs WHERE judge = ? ORDER BY started_at",
                 [NAME])  # fmt: skip
    assert runs == [("judge run on demo", "complete"),
                    ("repeat 1 on demo at temperature 0.7", "interrupted"),
                    ("repeat 1 on demo at temperature 0.7", "complete")]  # fmt: skip


def test_temperature_zero_is_refused(store, capsys):
    with OpenAIServer(responder=_answer) as srv:
        _original(store, srv)  # stored at temperature 0
        with pytest.raises(InputError, match="temperature above 0"):
            plan_repeat(store, NAME, "demo", temperature=0.0)
        with pytest.raises(InputError, match="temperature above 0"):
            plan_repeat(store, NAME, "demo")  # the judge's own temperature, 0
        code = main(["judge", "--db", str(store.path), "--repeat-of", NAME, "--dataset", "demo",
                     "--temperature", "0"])  # fmt: skip
        assert srv.count() == 12
    err = capsys.readouterr().err
    assert code == 2 and "temperature above 0" in err and "Traceback" not in err


def test_only_a_judge_run_by_finegrain_can_be_repeated(store):
    with pytest.raises(NotFoundError, match="can be repeated: none yet"):
        plan_repeat(store, "nobody", "demo", temperature=1.0)
    with pytest.raises(InputError, match="no configuration to call again"):
        plan_repeat(store, "gpt-4 (simulated)", "demo", temperature=1.0)
    with pytest.raises(InputError, match="scored nothing in 'demo'"):
        con = duckdb.connect(str(store.path))
        con.execute("INSERT INTO judges VALUES ('idle', 'llm', 'openai', 'm', 'flask-v1', ?)",
                    [JudgeConfig("openai", "m").params_json()])  # fmt: skip
        con.close()
        plan_repeat(store, "idle", "demo", temperature=1.0)


def test_an_item_whose_prompt_changed_is_left_out(store):
    with OpenAIServer(responder=_answer) as srv:
        _original(store, srv, n=20)  # the responses of 2 or 3 instances
        (first,) = query(store, "SELECT instance_id FROM judgments WHERE judge = ? "
                         "ORDER BY instance_id LIMIT 1", [NAME])  # fmt: skip
        con = duckdb.connect(str(store.path))
        con.execute("UPDATE instances SET instruction = instruction || ' (edited)' "
                    "WHERE dataset = 'demo' AND instance_id = ?", [first[0]])  # fmt: skip
        con.close()
        rp = plan_repeat(store, NAME, "demo", temperature=1.0, runtime={"base_url": srv.base_url})
    changed = sum(1 for i, _ in query(store, "SELECT instance_id, model FROM judgments "
                  "WHERE judge = ?", [NAME]) if i == first[0])  # fmt: skip
    assert 0 < changed < 20 and rp.left_out == changed and rp.pool == 20 - changed
    assert all(i != first[0] for i, _ in rp.selection.items)
    assert any("left out" in line for line in rp.lines())


def test_the_judge_settings_cannot_be_changed_on_a_repeat(store, capsys):
    code = main(["judge", "--db", str(store.path), "--repeat-of", NAME, "--dataset", "demo",
                 "--model", "other", "--limit", "3"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--model" in err and "--limit" in err
    code = main(["judge", "--db", str(store.path), "--backend", "openai", "--model", "m",
                 "--dataset", "demo", "--sample", "3"])  # fmt: skip
    assert code == 2 and "--repeat-of" in capsys.readouterr().err


def test_a_repeat_number_changes_the_cache_key_and_no_number_keeps_the_stored_keys():
    config = JudgeConfig("openai", "m", temperature=0.7, name=NAME)
    messages = [{"role": "user", "content": "Score keys: correctness"}]
    before = hashlib.sha256(  # the key as every stored judgment has it
        json.dumps([config.fingerprint(), messages], sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    keys = [
        cache_key(config, messages),
        cache_key(config, messages, 1),
        cache_key(config, messages, 2),
    ]
    assert keys[0] == before and len(set(keys)) == 3
