"""``finegrain verbosity`` against the loopback OpenAI server: a stored judge checked, the
report printed and as JSON (equal to the view's numbers), a rerun that asks nothing, and bad
input as one paragraph with exit status 2."""

from __future__ import annotations

import json
import shutil

import pytest

from analysis.cli.main import main
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import judge_verbosity as jv
from judges.config import JudgeConfig
from judges.plan import Selection
from judges.runner import run
from tests.judges.verbosity_fixtures import rewrite_calls, rewrite_or_judge
from tests.openai_server import OpenAIServer

JUDGE = "judge-test (openai, flask-v1)"


@pytest.fixture
def db(demo_db, tmp_path):
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, path)
    return path


def test_a_stored_judge_checked_then_the_report_as_json(db, capsys):
    with OpenAIServer(responder=rewrite_or_judge) as srv:
        run(Store(db), JudgeConfig("openai", "judge-test", base_url=srv.base_url),
            Selection("demo", limit=2))  # fmt: skip
        args = ["verbosity", "--db", str(db), "--dataset", "demo", "--judge", JUDGE,
                "--rewriter-model", "rw-test", "--base-url", srv.base_url, "--sample", "15",
                "--seed", "4", "--concurrency", "4"]  # fmt: skip
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "Same score (rate)" in out and "15 rewrites stored, 0 failed" in out
        assert rewrite_calls(srv) == 15
        asked = srv.count()
        assert main([*args, "--json"]) == 0
        assert srv.count() == asked  # a rerun asks nothing
    report = json.loads(capsys.readouterr().out)
    view = jv.verbosity_report(Store(db), Filters("demo"))
    assert report["check"] == "demo · verbose (rw-test)" == view.check
    assert [r["skill"] for r in report["table"]] == list(view.table["skill"])
    for got, want in zip(report["table"], view.table.to_dict("records"), strict=True):
        for col in ("n", "same_rate", "same_low", "same_high", "shift", "length_ratio"):
            assert got[col] == pytest.approx(want[col])
        assert got["flagged"] == want["flagged"]
    assert main(["verbosity", "--db", str(db), "--dataset", "demo", "--report-only"]) == 0
    assert "Mean shift" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--judge", "gpt-4 (simulated)", "--rewriter-model", "m"], "cannot be asked again"),
        (["--judge", "nobody", "--rewriter-model", "m"], "No judge named 'nobody'"),
        (["--rewriter-model", "m"], "--judge NAME or --judge-config FILE"),
        (["--judge", JUDGE], "--rewriter-model"),
    ],
)
def test_bad_input_is_one_paragraph_and_exit_2(db, capsys, extra, says):
    code = main(["verbosity", "--db", str(db), "--dataset", "demo", *extra])
    err = capsys.readouterr().err
    assert code == 2 and says in err and "Traceback" not in err
