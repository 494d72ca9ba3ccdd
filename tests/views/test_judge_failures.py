"""Failures (analysis/views/judge_failures.py) on hand-built judgments: unparseable outputs,
failed calls, N/A scores, a re-judge that replaces a failure and one that fails after a success;
rates by hand, CIs against scipy's Wilson interval and a bootstrap done by replicating rows."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    JudgeRecord,
    RunRecord,
    write_batch,
)
from analysis.ingest.demo_panel import CLAUDE, VERBOSE
from analysis.stats.means import bootstrap_weights
from analysis.views import judge_failures as jf

DS = "t"
NA = None
SKILLS = {"1": ["correctness", "readability", "factuality"],
          "2": ["correctness", "comprehension", "harmlessness"],
          "3": ["readability", "conciseness", "correctness"]}  # fmt: skip
# (run, judge, instance, model, status, scores by skill); runs are written in this order.
FIRST = [
    ("r1", "j", "1", "m1", "ok", {"correctness": 4, "readability": NA, "factuality": 3}),
    ("r1", "j", "1", "m2", "failed", {}),
    ("r1", "j", "2", "m1", "error", {}),
    ("r1", "j", "2", "m2", "ok", {"correctness": NA, "comprehension": 2, "harmlessness": 5}),
    ("r1", "j", "3", "m1", "ok", {"readability": 5, "conciseness": 4, "correctness": 3}),
    ("r1", "j", "3", "m2", "failed", {}),
    ("rk", "k", "1", "m1", "failed", {}),
    ("rk", "k", "2", "m1", "ok", {"correctness": 1, "comprehension": 2, "harmlessness": 3}),
    ("rh", "h", "1", "m1", "failed", {}),  # a human's: never counted here
]
SECOND = [  # a re-judge of j: fixes (1, m2), fails on (3, m1) whose old scores stay current
    ("r2", "j", "1", "m2", "ok", {"correctness": 2, "readability": 3, "factuality": NA}),
    ("r2", "j", "3", "m1", "error", {}),
]


def _batch(rows: list[tuple], first: bool) -> Batch:
    judgments = pd.DataFrame([{
        "run_id": run, "dataset": DS, "instance_id": i, "model": m, "judge": j,
        "raw_output": None if st == "error" else f"output of {j} on {i}/{m}\n{{",
        "rationale": None, "parse_status": st,
        "error": {"ok": None, "failed": "no scores", "error": "HTTP 500"}[st],
        "latency_ms": 1.0, "prompt_tokens": 1, "completion_tokens": 1,
    } for run, j, i, m, st, _ in rows], columns=JUDGMENT_COLS)  # fmt: skip
    scores = pd.DataFrame([(run, DS, i, m, j, s, v) for run, j, i, m, _, sc in rows
                           for s, v in sc.items()], columns=SCORE_COLS)  # fmt: skip
    b = Batch(judges=[JudgeRecord("j", "llm"), JudgeRecord("k", "llm"), JudgeRecord("h", "human")],
              runs=[RunRecord(r, j, DS, "test") for r, j in
                    dict.fromkeys((r[0], r[1]) for r in rows)],
              judgments=judgments, scores=scores)  # fmt: skip
    if first:
        b.datasets = [DatasetRecord(DS, "T", "test")]
        b.instances = pd.DataFrame([{
            "dataset": DS, "instance_id": i, "instruction": "q", "reference": None,
            "source_task": "x", "difficulty": 1, "domains": ["Math"], "skills": sk,
            "flask_hard": False} for i, sk in SKILLS.items()], columns=INSTANCE_COLS)  # fmt: skip
        b.responses = pd.DataFrame([(DS, i, m, "a") for i in SKILLS for m in ("m1", "m2")],
                                   columns=RESPONSE_COLS)  # fmt: skip
    return b


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    s = Store(tmp_path_factory.mktemp("failures") / "f.duckdb")
    write_batch(s, _batch(FIRST, True))
    write_batch(s, _batch(SECOND, False))
    return s


def _cell(r: jf.Failures, judge: str, skill: str | None) -> pd.Series:
    rows = r.rates[
        (r.rates["judge"] == judge)
        & (r.rates["skill"].isna() if skill is None else r.rates["skill"] == skill)
    ]
    assert len(rows) == 1
    return rows.iloc[0]


# By hand. j's latest judgments: (1,m1) ok, (1,m2) ok (re-judged), (2,m1) error, (2,m2) ok,
# (3,m1) error (re-judged), (3,m2) failed; k's: (1,m1) failed, (2,m1) ok. A judgment counts
# for each skill of its instance. j's latest scores: (3,m1)'s from the first run stay current.
HAND = {
    ("j", "correctness"): dict(n_failed=6, count_failed=1, n_error=6, count_error=2,
                               n_na=4, count_na=1),
    ("j", "readability"): dict(n_failed=4, count_failed=1, n_error=4, count_error=1,
                               n_na=3, count_na=1),
    ("j", "factuality"): dict(n_failed=2, count_failed=0, n_error=2, count_error=0,
                              n_na=2, count_na=1),
    ("j", "conciseness"): dict(n_failed=2, count_failed=1, n_error=2, count_error=1,
                               n_na=1, count_na=0),
    ("j", "comprehension"): dict(n_failed=2, count_failed=0, n_error=2, count_error=1,
                                 n_na=1, count_na=0),
    ("j", None): dict(n_failed=6, count_failed=1, n_error=6, count_error=2, n_na=12, count_na=3),
    ("k", "correctness"): dict(n_failed=2, count_failed=1, n_error=2, count_error=0,
                               n_na=1, count_na=0),
    ("k", "factuality"): dict(n_failed=1, count_failed=1, n_na=0, count_na=0),
    ("k", None): dict(n_failed=2, count_failed=1, n_error=2, count_error=0, n_na=3, count_na=0),
}  # fmt: skip


def test_counts_and_rates_by_hand(store):
    r = jf.failures(store, jf.FailuresQuery(Filters(DS), n_boot=100))
    assert r.judges == ("j", "k") and r.empty is None
    for (judge, skill), want in HAND.items():
        got = _cell(r, judge, skill)
        assert {k: got[k] for k in want} == want, (judge, skill)
        for rate in ("failed", "error", "na"):
            if f"n_{rate}" in want and want[f"n_{rate}"]:
                exp = want[f"count_{rate}"] / want[f"n_{rate}"]
                assert got[f"rate_{rate}"] == pytest.approx(exp, abs=1e-12)
    assert np.isnan(_cell(r, "k", "factuality")["rate_na"])  # no score of it: no rate


def test_cis_are_the_wider_of_wilson_and_a_direct_bootstrap(store):
    r = jf.failures(store, jf.FailuresQuery(Filters(DS), n_boot=300, seed=4))
    inst = sorted(SKILLS)  # every instance has an LLM judgment or score
    w = bootstrap_weights(len(inst), 300, 4)
    # j's correctness parse failures, per judgment of an item needing correctness (instance,
    # failed?): all of j's latest judgments, every instance needs correctness.
    events = pd.DataFrame({"instance_id": ["1", "1", "2", "2", "3", "3"],
                           "hit": [0, 0, 0, 0, 0, 1]})  # fmt: skip
    boot = []
    for row in w:
        counts = dict(zip(inst, row.astype(int), strict=True))
        rep = events.loc[events.index.repeat(events["instance_id"].map(counts))]
        boot.append(rep["hit"].mean() if len(rep) else np.nan)
    b_lo, b_hi = np.nanquantile(boot, [0.025, 0.975])
    wil = binomtest(1, 6).proportion_ci(confidence_level=0.95, method="wilson")
    got = _cell(r, "j", "correctness")
    assert got["low_failed"] == pytest.approx(min(b_lo, wil.low), abs=1e-12)
    assert got["high_failed"] == pytest.approx(max(b_hi, wil.high), abs=1e-12)
    # A rate of 0: the bootstrap's [0, 0] says nothing; Wilson's upper bound stays.
    zero = _cell(r, "j", "factuality")
    wil0 = binomtest(0, 2).proportion_ci(confidence_level=0.95, method="wilson")
    assert zero["low_failed"] == 0 and zero["high_failed"] == pytest.approx(wil0.high)


def test_the_failing_list_holds_the_latest_failures_with_links(store):
    r = jf.failures(store, jf.FailuresQuery(Filters(DS), n_boot=10))
    got = list(zip(r.failing["judge"], r.failing["instance_id"], r.failing["model"],
                   r.failing["status"], strict=True))  # fmt: skip
    assert got == [("j", "2", "m1", "call failed"), ("j", "3", "m1", "call failed"),
                   ("j", "3", "m2", "unparseable output"),
                   ("k", "1", "m1", "unparseable output")]  # fmt: skip
    link = urlparse(r.failing["link"].iloc[2])
    assert link.path == "samples"
    assert parse_qs(link.query) == {"dataset": [DS], "instance": ["3"], "model": ["m2"]}
    view = jf.failing_view(r)
    assert view["Output (start)"].iloc[0] == "(no output)"
    assert view["Output (start)"].iloc[2] == "output of j on 3/m2 ⏎ {"


def test_filters_apply(store):
    r = jf.failures(store, jf.FailuresQuery(Filters(DS, models=("m2",)), n_boot=10))
    assert list(r.failing["model"]) == ["m2"] and r.judges == ("j",)
    assert _cell(r, "j", None)[["n_failed", "count_failed", "count_error"]].tolist() == [3, 1, 0]
    none = jf.failures(store, jf.FailuresQuery(Filters(DS, models=("nobody",))))
    assert none.empty is not None and none.rates.empty and none.failing.empty


def test_on_the_demo_the_panel_has_failures_of_both_kinds(demo_db: Path):
    r = jf.failures(Store(demo_db), jf.FailuresQuery(Filters("demo"), n_boot=50))
    statuses = r.failing.groupby("judge")["status"].unique().map(set)
    assert statuses[VERBOSE] == statuses[CLAUDE] == {"call failed", "unparseable output"}
    pooled = r.rates[r.rates["skill"].isna()].set_index("judge")
    assert (pooled["count_failed"] + pooled["count_error"]).sum() == len(r.failing)


def test_names_are_text_in_the_figure(store):
    from analysis.charts.judges_scores import failure_rates

    r = jf.failures(store, jf.FailuresQuery(Filters(DS), n_boot=10))
    bad = r.rates.assign(judge=r.rates["judge"].replace("j", "<b>j</b>"))
    fig = failure_rates(jf.Failures(bad, r.failing, r.judges, None), None)
    text = fig.to_json()
    assert "<b>" not in text and "&lt;b&gt;j&lt;" in text  # (JSON writes "/" as \u002f)
