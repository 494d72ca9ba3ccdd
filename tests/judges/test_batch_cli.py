"""``judge --backend openai-batch``, ``judge --resume`` and ``batches`` on the command line,
against the loopback Files and Batches emulation: a process killed with SIGKILL while it polls
is resumed without a second submission; the key goes only where the operator sent it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from analysis.cli.main import main
from tests.openai_batches import BatchService
from tests.openai_server import OpenAIServer
from tests.store_fixtures import query

REPO = Path(__file__).resolve().parents[2]
JUDGE = "judge-test (openai, flask-v1)"


def _judge(store, srv, *extra: str) -> list[str]:
    return ["judge", "--db", str(store.path), "--backend", "openai-batch", "--model",
            "judge-test", "--base-url", srv.base_url, "--dataset", "demo", "--poll", "0.05",
            *extra]  # fmt: skip


def _wait(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _items(store) -> list[tuple]:
    return query(store, "SELECT instance_id, model, parse_status FROM judgments WHERE judge = ?",
                 [JUDGE])  # fmt: skip


def test_sigkill_while_polling_then_the_same_command_resumes_without_resubmitting(store):
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()  # the batch waits at the service: the command polls
        cmd = [sys.executable, "-m", "analysis", *_judge(store, srv, "--limit", "150")]
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)  # fmt: skip
        _wait(lambda: service.submissions == 1 and service.polls >= 3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert query(store, "SELECT count(*) FROM batches WHERE batch_id IS NOT NULL") == [(1,)]
        service.resume()
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert service.submissions == 1  # picked up again, never submitted twice
        assert srv.count() == 0
    assert "150 waiting in a pending batch" in done.stdout
    rows = _items(store)
    assert len(rows) == 150 and len(set(rows)) == 150 and {r[2] for r in rows} == {"ok"}
    runs = query(store, "SELECT status, n_ok FROM runs WHERE judge = ?", [JUDGE])
    assert runs == [("complete", 150)]


def test_no_wait_then_batches_lists_it_and_resume_stores_it(store, capsys):
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()
        assert main(_judge(store, srv, "--limit", "40", "--no-wait")) == 0
        out = capsys.readouterr().out
        assert "40 requests are still at the batch service" in out
        assert main(["batches", "--db", str(store.path)]) == 0
        listed = capsys.readouterr().out
        (batch_id,) = list(service.batches)
        assert JUDGE in listed and batch_id in listed and "0 of 40 answered" in listed
        service.resume()
        service.wait_for(batch_id)
        assert main(["judge", "--db", str(store.path), "--resume", "--poll", "0.05"]) == 0
        resumed = capsys.readouterr().out
        assert service.submissions == 1
    assert "40 scored" in resumed and "completed, stored, 40 of 40 answered" in resumed
    assert len(_items(store)) == 40
    assert main(["batches", "--db", str(store.path)]) == 0
    assert "No pending batches" in capsys.readouterr().out
    assert main(["judge", "--db", str(store.path), "--resume"]) == 0
    assert "No pending batches" in capsys.readouterr().out


def test_batches_cancel_then_resume_records_the_cancelled_requests(store, capsys):
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()
        assert main(_judge(store, srv, "--limit", "12", "--no-wait")) == 0
        (run_id,) = [r for (r,) in query(store, "SELECT run_id FROM runs WHERE judge = ?",
                                          [JUDGE])]  # fmt: skip
        capsys.readouterr()
        assert main(["batches", "--db", str(store.path), "--cancel", run_id]) == 0
        assert "cancel" in capsys.readouterr().out
        assert main(["judge", "--db", str(store.path), "--resume", "--poll", "0.05"]) == 0
    assert {r[2] for r in _items(store)} == {"error"} and len(_items(store)) == 12
    assert main(["batches", "--db", str(store.path), "--cancel", "nope"]) == 2


def test_resume_refuses_judge_options_and_judge_needs_a_dataset(store, capsys):
    code = main(["judge", "--db", str(store.path), "--resume", "--model", "x"])
    assert code == 2 and "--model cannot be given" in capsys.readouterr().err
    for extra in (["--limit", "3"], ["--estimate-only"], ["--api-key-env", "OTHER"],
                  ["--max-batch-requests", "5"]):  # fmt: skip
        code = main(["judge", "--db", str(store.path), "--resume", *extra])
        assert code == 2 and f"{extra[0]} cannot be given" in capsys.readouterr().err
    code = main(["judge", "--db", str(store.path), "--backend", "openai", "--model", "x"])
    assert code == 2 and "Missing option --dataset" in capsys.readouterr().err


def test_the_key_goes_to_the_operators_batch_service_and_is_stored_nowhere(store, monkeypatch,
                                                                           capsys):  # fmt: skip
    secret = "sk-finegrain-BATCH-SECRET-0987654321"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with OpenAIServer(batches=BatchService()) as srv:
        assert main(_judge(store, srv, "--limit", "5")) == 0
        auth = {r.header("authorization") for r in srv.requests}
    assert auth == {f"Bearer {secret}"}
    out = capsys.readouterr()
    assert secret not in out.out + out.err
    assert secret.encode() not in store.path.read_bytes()
    assert query(store, "SELECT key_env FROM batches") == [("OPENAI_API_KEY",)]


def test_a_visitors_base_url_gets_no_key_now_or_on_resume(store, monkeypatch):
    """A configuration from the app (trust_base_url False) with a server that is not the
    operator's: the batch is sent without the key, and resumed without it."""
    from judges.batch_run import resume
    from judges.config import JudgeConfig
    from judges.plan import Selection
    from judges.runner import RunOptions, run

    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-only")
    service = BatchService()
    with OpenAIServer(batches=service) as srv:
        service.pause()
        cfg = JudgeConfig("openai-batch", "judge-test", base_url=srv.base_url,
                          trust_base_url=False)  # fmt: skip
        run(store, cfg, Selection("demo", limit=6), RunOptions(wait=False))
        service.resume()
        (done,) = resume(store, options=RunOptions(poll_s=0.05))
        auth = {r.header("authorization") for r in srv.requests}
    assert done.ok == 6 and auth == {"Bearer unused"}
    assert query(store, "SELECT key_env FROM batches") == [(None,)]
