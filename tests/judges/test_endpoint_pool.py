"""A pool of OpenAI-compatible servers behind one judge (judges/endpoints.py), against real
loopback servers (tests/openai_server.py) at 200 ms: the work spreads over every server; a server
stopped mid-run is taken out with its reason and the run completes on the others with every item
stored exactly once; a server restarted on its port is taken back; the judgments equal a
single-server run's; the command line's repeated --base-url and a judge file's list; bad lists.
Counts only, no durations."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from analysis.cli.judge import judge_config
from analysis.cli.main import main
from analysis.core.errors import InputError
from analysis.core.store import Store
from judges.config import JudgeConfig
from judges.endpoints import Endpoint, endpoints_from
from judges.plan import Selection, plan_run
from judges.runner import RunOptions, run
from tests.openai_server import FaultPlan, OpenAIServer, scores_for
from tests.store_fixtures import demo_copy, query

LATENCY = 0.2
FAST = dict(backoff_s=0.02, backoff_cap_s=0.2, max_retries=4, flush_s=0.1)


def _config(url: str = "http://127.0.0.1:9/v1", **kw) -> JudgeConfig:
    return JudgeConfig("openai", "judge-test", base_url=url, timeout_s=5.0, **kw)


def _pool(servers, concurrency: int = 4, probe_s: float = 60.0) -> RunOptions:
    eps = tuple(Endpoint(s.base_url, concurrency) for s in servers)
    return RunOptions(endpoints=eps, probe_s=probe_s, **FAST)


def _rows(store: Store, judge: str) -> list[tuple]:
    return query(
        store,
        "SELECT instance_id, model, cache_key, raw_output, parse_status FROM judgments "
        "WHERE judge = ? ORDER BY instance_id, model",
        [judge],
    )


def _scores(store: Store, judge: str) -> list[tuple]:
    return query(
        store,
        "SELECT j.instance_id, j.model, j.cache_key, s.skill, s.score FROM latest_scores s "
        "JOIN judgments j USING (judgment_id) WHERE s.judge = ? ORDER BY ALL",
        [judge],
    )


def _once_each(store: Store, judge: str, plan) -> None:
    """Every planned item stored exactly once, answered (none lost, none twice)."""
    rows = _rows(store, judge)
    per_item = Counter((r[0], r[1]) for r in rows)
    assert per_item == Counter((c.item.instance_id, c.item.model) for c in plan.calls)
    assert {r[2] for r in rows} == {c.cache_key for c in plan.calls}
    assert all(r[4] == "ok" for r in rows)
    # each item's scores are what a server answered for that item's prompt
    expected = {c.cache_key: scores_for({"messages": c.messages}) for c in plan.calls}
    got = _scores(store, judge)
    assert len(got) == sum(len(v) for v in expected.values())
    assert all(expected[key][skill] == score for _i, _m, key, skill, score in got)


def _servers(n: int = 4):
    return [OpenAIServer(latency=LATENCY).__enter__() for _ in range(n)]


def _close(servers) -> None:
    for s in servers:
        s.close()


def test_a_run_spreads_over_four_servers_and_equals_a_single_server_run(store, demo_db, tmp_path):
    sel = Selection("demo", limit=48)
    servers = _servers()
    try:
        cfg = _config(servers[0].base_url)
        plan = plan_run(store, cfg, sel)
        summary = run(store, cfg, sel, _pool(servers))
        counts = [s.count() for s in servers]
        pool_bodies = {r.raw for s in servers for r in s.requests}
    finally:
        _close(servers)
    assert summary.ok == 48 and summary.errors == 0 and not summary.endpoints
    assert all(c > 0 for c in counts) and sum(counts) == 48  # all four used, each call once
    assert len(summary.endpoint_status) == 4
    _once_each(store, cfg.judge, plan)

    (tmp_path / "single").mkdir()
    single = demo_copy(demo_db, tmp_path / "single")
    with OpenAIServer(latency=0.0) as one:
        run(single, _config(one.base_url), sel, RunOptions(concurrency=8, **FAST))
        single_bodies = {r.raw for r in one.requests}
    # the same request bytes, raw outputs, parses, cache keys and scores
    assert pool_bodies == single_bodies
    assert _rows(store, cfg.judge) == _rows(single, cfg.judge)
    assert _scores(store, cfg.judge) == _scores(single, cfg.judge)


def _watch(until, then, stop: threading.Event) -> threading.Thread:
    """Call ``then()`` once ``until()`` holds (polled), unless ``stop`` is set first."""

    def loop() -> None:
        while not stop.is_set():
            if until():
                then()
                return
            time.sleep(0.01)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def test_a_server_stopped_mid_run_is_taken_out_and_nothing_is_lost_or_stored_twice(store):
    sel = Selection("demo", limit=240)
    servers = _servers()
    victim = servers[1]
    stop = threading.Event()
    try:
        cfg = _config(servers[0].base_url)
        plan = plan_run(store, cfg, sel)
        watcher = _watch(lambda: victim.count() >= 8, victim.close, stop)
        summary = run(store, cfg, sel, _pool(servers))
        stop.set()
        watcher.join()
        counts = [s.count() for s in servers]
    finally:
        stop.set()
        _close(servers)
    assert counts[1] >= 8 and all(c > counts[1] for i, c in enumerate(counts) if i != 1)
    assert summary.ok == 240 and summary.errors == 0 and summary.failed == 0
    out = [n for n in summary.endpoints if victim.base_url in n]
    assert out and "taken out: connection failed" in out[0]
    assert any(victim.base_url in s and "out (connection failed" in s
               for s in summary.endpoint_status)  # fmt: skip
    assert any(victim.base_url in line and "taken out" in line for line in summary.lines())
    _once_each(store, cfg.judge, plan)


def test_a_server_restarted_on_its_port_is_taken_back(store):
    sel = Selection("demo", limit=600)
    servers = _servers()
    victim = servers[2]
    port = int(victim.base_url.rsplit(":", 1)[1].split("/")[0])
    notes: list[str] = []
    reborn: list[OpenAIServer] = []
    stop = threading.Event()

    def restart() -> None:
        reborn.append(OpenAIServer(latency=LATENCY, port=port).__enter__())

    def progress(s) -> None:
        notes[:] = list(s.endpoints)

    try:
        cfg = _config(servers[0].base_url)
        plan = plan_run(store, cfg, sel)
        kill = _watch(lambda: victim.count() >= 4, victim.close, stop)
        back = _watch(lambda: any("taken out" in n for n in notes), restart, stop)
        summary = run(store, cfg, sel, _pool(servers, probe_s=0.2), progress=progress)
        stop.set()
        kill.join()
        back.join()
        again = reborn[0].count() if reborn else 0
    finally:
        stop.set()
        _close(servers + reborn)
    assert reborn and again > 0  # the restarted server received calls again
    url = victim.base_url
    assert [n.split(": ")[0] for n in summary.endpoints if url in n][:2] == [
        f"endpoint {url} taken out",
        f"endpoint {url} taken back",
    ]
    assert summary.ok == 600 and summary.errors == 0
    _once_each(store, cfg.judge, plan)


def test_a_server_answering_500_again_and_again_is_taken_out_after_three(store):
    sel = Selection("demo", limit=60)
    servers = _servers(3)
    broken = OpenAIServer(latency=0.0, faults=FaultPlan(rate=1.0, kinds=["500"])).__enter__()
    try:
        cfg = _config(servers[0].base_url)
        plan = plan_run(store, cfg, sel)
        summary = run(store, cfg, sel, _pool([*servers, broken]))
        tried = broken.count()
    finally:
        _close([*servers, broken])
    # three 500s in a row take it out; calls that were already there may add their own
    assert 3 <= tried <= 3 + 4
    assert summary.endpoints == [f"endpoint {broken.base_url} taken out: 3 × HTTP 500"]
    assert summary.ok == 60 and summary.errors == 0
    _once_each(store, cfg.judge, plan)


def test_when_every_server_is_down_each_item_fails_once_with_its_reason(store):
    sel = Selection("demo", limit=6)
    servers = _servers(2)
    _close(servers)  # nothing listens there any more: connection refused
    cfg = _config(servers[0].base_url)
    plan = plan_run(store, cfg, sel)
    summary = run(store, cfg, sel, _pool(servers))
    assert summary.errors == 6 and summary.ok == 0
    assert len(summary.endpoints) == 2 and all("taken out" in n for n in summary.endpoints)
    rows = _rows(store, cfg.judge)
    assert Counter((r[0], r[1]) for r in rows) == Counter(
        (c.item.instance_id, c.item.model) for c in plan.calls
    )
    errors = query(store, "SELECT DISTINCT error FROM judgments WHERE judge = ?", [cfg.judge])
    assert errors == [("connection failed (APIConnectionError)",)]


def test_the_key_goes_to_every_endpoint_only_when_the_operator_gave_them(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-pool-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    sel = Selection("demo", limit=8)
    with OpenAIServer() as a, OpenAIServer() as b:
        opts = _pool([a, b], concurrency=1)
        run(store, _config(a.base_url), sel, opts)  # the command line: trusted
        trusted = {r.header("authorization") for s in (a, b) for r in s.requests}
        seen = {id(s): s.count() for s in (a, b)}
        # another fingerprint (not answered from the cache), as a visitor of the app builds it
        visitor_cfg = _config(a.base_url, trust_base_url=False, max_tokens=512)
        run(store, visitor_cfg, sel, opts)
        visitor = {r.header("authorization") for s in (a, b) for r in s.requests[seen[id(s)] :]}
        assert sum(s.count() - seen[id(s)] for s in (a, b)) == 8
    assert trusted == {"Bearer sk-pool-test"}
    assert visitor == {"Bearer unused"}


def test_repeated_base_url_flags_make_a_pool(demo_db, tmp_path, capsys):
    db = tmp_path / "d.duckdb"
    db.write_bytes(Path(demo_db).read_bytes())
    with OpenAIServer(latency=0.05) as a, OpenAIServer(latency=0.05) as b:
        code = main(["judge", "--db", str(db), "--dataset", "demo", "--limit", "12",
                     "--backend", "openai", "--model", "judge-test", "--concurrency", "2",
                     "--base-url", a.base_url, "--base-url", b.base_url])  # fmt: skip
        counts = a.count(), b.count()
    out = capsys.readouterr().out
    assert code == 0, out
    assert all(c > 0 for c in counts) and sum(counts) == 12
    assert f"endpoint {a.base_url}:" in out and f"endpoint {b.base_url}:" in out
    assert query(Store(db), "SELECT count(*) FROM judgments")[0][0] >= 12


def test_a_judge_file_lists_endpoints_with_their_own_limits(demo_db, tmp_path, capsys):
    db = tmp_path / "d.duckdb"
    db.write_bytes(Path(demo_db).read_bytes())
    with OpenAIServer(latency=0.05) as a, OpenAIServer(latency=0.05) as b:
        file = tmp_path / "judge.yaml"
        file.write_text(
            "backend: openai\nmodel: judge-test\nbase_url:\n"
            f"  - url: {a.base_url}\n    concurrency: 3\n    rpm: 6000\n  - {b.base_url}\n"
        )
        pool: dict = {}
        config = judge_config({}, str(file), pool)
        assert config.base_url == a.base_url
        assert endpoints_from(pool["base_url"], "f", concurrency=5) == (
            Endpoint(a.base_url, 3, 6000.0, None),
            Endpoint(b.base_url, 5, None, None),
        )
        code = main(["judge", "--db", str(db), "--dataset", "demo", "--limit", "10",
                     "--config", str(file)])  # fmt: skip
        counts = a.count(), b.count()
    out = capsys.readouterr().out
    assert code == 0, out
    assert all(c > 0 for c in counts) and sum(counts) == 10


@pytest.mark.parametrize(
    ("value", "where", "problem"),
    [
        ([], "base_url", "non-empty list"),
        (["http://a:1/v1", "localhost:8000"], "base_url[2]", "http:// or https://"),
        (["http://a:1/v1", "http://a:1/v1/"], "base_url[2]", "listed twice"),
        ([{"url": "http://a:1/v1", "concurrency": 0}], "base_url[1].concurrency", "above 0"),
        ([{"url": "http://a:1/v1", "rpm": "fast"}], "base_url[1].rpm", "above 0"),
        ([{"uri": "http://a:1/v1"}], "base_url[1]", "unknown key 'uri'"),
        ([{"concurrency": 2}], "base_url[1].url", "expected a server URL"),
        ([3], "base_url[1]", "expected a server URL"),
    ],
)
def test_a_bad_list_is_a_clear_input_error(value, where, problem):
    with pytest.raises(InputError) as e:
        endpoints_from(value, "judge.yaml")
    assert e.value.field == where and problem in e.value.problem


def test_a_bad_flag_url_fails_before_anything_runs(demo_db, tmp_path, capsys):
    db = tmp_path / "d.duckdb"
    db.write_bytes(Path(demo_db).read_bytes())
    code = main(["judge", "--db", str(db), "--dataset", "demo", "--backend", "openai",
                 "--model", "judge-test", "--base-url", "http://127.0.0.1:9/v1",
                 "--base-url", "not a url"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "base_url[2]" in err and "http:// or https://" in err
    assert query(Store(db), "SELECT count(*) FROM runs WHERE source LIKE 'judge run%'")[0][0] == 0


def test_a_pool_needs_the_openai_backend(store):
    local = JudgeConfig("transformers", "some/model")
    opts = RunOptions(endpoints=(Endpoint("http://127.0.0.1:9/v1"), Endpoint("http://x:1/v1")))
    with pytest.raises(InputError, match="several base URLs need the openai backend"):
        run(store, local, Selection("demo", limit=2), opts)
    assert query(store, "SELECT count(*) FROM runs WHERE source LIKE 'judge run%'")[0][0] == 0
