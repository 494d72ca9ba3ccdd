"""The Re-judge page never reports success for a run whose answers are not all safe: a journal
that cannot be written (a full disk) fails the run, and the page says so in an error box."""

from __future__ import annotations

import errno
from pathlib import Path

from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.views import queues
from judges import records
from tests.openai_server import OpenAIServer

REPO = Path(__file__).resolve().parents[2]


def test_a_run_stopped_by_a_full_disk_is_an_error_not_a_success(app_db, monkeypatch):
    import duckdb

    con = duckdb.connect(str(app_db), read_only=True)
    try:
        items = con.execute(
            "SELECT DISTINCT instance_id, model FROM responses WHERE dataset = 'demo' "
            "ORDER BY 1, 2 LIMIT 6"
        ).fetchall()
    finally:
        con.close()
    queues.add(Store(app_db), queues.REJUDGE, "demo", items)

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(records, "_write_all", full)
    with OpenAIServer(latency=0.02) as srv:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
        form = {"rj_model": "judge-test", "rj_base_url": srv.base_url, "rj_concurrency": 1}
        for key, value in form.items():
            at.session_state[key] = value
        at.run()
        at.switch_page("pages/rejudge.py").run()
        next(b for b in at.button if b.label == "Run").click().run()
        assert at.session_state["rj_job"].wait(60)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        asked = srv.count()
    errors = " ".join(e.value for e in at.error)
    assert "run failed" in errors and "No space left on device" in errors
    assert not at.success  # not shown as a success
    assert asked == 1  # the first answer could not be journalled: no other call was made
    summary = at.session_state["rj_job"].summary
    assert summary.halted and summary.done == 1 and summary.unstored == 0
