"""Stability between a judge's runs (analysis/views/judge_stability.py) against the
``krippendorff`` package and hand counts: stores built through the real score importer (each
file a run; a later run supersedes the older scores, which stay as history), with ties, small
n, three runs, N/A, items scored in one run only, a repeat split over two runs; then the demo's
simulated repeat run of gpt-4."""

from __future__ import annotations

from pathlib import Path

import duckdb
import krippendorff
import numpy as np
import pandas as pd
import pytest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views.judge_stability import UNSTABLE_ALPHA, stability, stability_table
from tests.store_fixtures import query

JUDGE = "judge-x"


def _store(tmp_path: Path, runs: list[list[tuple]], humans: list[tuple] = ()) -> Store:
    """One import per run of JUDGE (rows: instance, model, skill, score; None = N/A), in order,
    then the humans' rows (annotator, instance, model, skill, score)."""
    store = Store(tmp_path / "s.duckdb")
    for k, rows in enumerate(runs):
        frame = pd.DataFrame(rows, columns=["instance_id", "model", "skill", "score"])
        frame = frame.assign(judge=JUDGE, kind="llm", instruction="Say something.",
                             response=[f"answer {i} {m}" for i, m, *_ in rows])  # fmt: skip
        frame.to_csv(tmp_path / f"run{k}.csv", index=False)
        import_scores(store, tmp_path / f"run{k}.csv", dataset="t")
    if humans:
        cols = ["judge", "instance_id", "model", "skill", "score"]
        frame = pd.DataFrame(humans, columns=cols).assign(kind="human")
        frame.to_csv(tmp_path / "humans.csv", index=False)
        import_scores(store, tmp_path / "humans.csv", dataset="t")
    return store


def _kripp(runs: list[dict], level: str) -> float:
    """α of the runs as raters (rows) over the union of their units (NaN where unscored)."""
    units = sorted({u for r in runs for u in r})
    data = np.array([[r.get(u, np.nan) for u in units] for r in runs], dtype=float)
    return krippendorff.alpha(reliability_data=data, level_of_measurement=level)


def _row(result, skill):
    t = result.table
    sel = t["skill"].isna() if skill is None else t["skill"] == skill
    (row,) = t[(t["judge"] == JUDGE) & sel].to_dict("records")
    return row


def _rows(values: dict, skill: str = "correctness") -> list[tuple]:
    return [(i, m, skill, v) for (i, m), v in values.items()]


# Two runs on 12 items of 4 instances, many ties; two items of the first run only.
FIRST = {("1", "a"): 3, ("1", "b"): 4, ("1", "c"): 4, ("2", "a"): 2, ("2", "b"): 5,
         ("2", "c"): 3, ("3", "a"): 1, ("3", "b"): 3, ("3", "c"): 3, ("4", "a"): 5,
         ("4", "b"): 4, ("4", "c"): 2, ("5", "a"): 4, ("5", "b"): 1}  # fmt: skip
SECOND = {("1", "a"): 3, ("1", "b"): 3, ("1", "c"): 4, ("2", "a"): 2, ("2", "b"): 4,
          ("2", "c"): 3, ("3", "a"): 2, ("3", "b"): 3, ("3", "c"): 4, ("4", "a"): 5,
          ("4", "b"): 4, ("4", "c"): 2}  # fmt: skip


def test_two_runs_alpha_against_krippendorff_and_the_same_score_rate_by_hand(tmp_path):
    store = _store(tmp_path, [_rows(FIRST), _rows(SECOND)])
    r = stability(store, Filters("t"), n_boot=200)
    row = _row(r, "correctness")
    for level in ("ordinal", "interval"):
        assert row[f"alpha_{level}"] == pytest.approx(_kripp([FIRST, SECOND], level), abs=1e-12)
    assert row["n_items"] == 12 and row["n_runs"] == 2 and row["n_instances"] == 4
    same = np.mean([FIRST[k] == SECOND[k] for k in SECOND])  # 8 of 12
    assert row["same_rate"] == pytest.approx(same)
    assert row["alpha_ordinal_low"] <= row["alpha_ordinal"] <= row["alpha_ordinal_high"]
    assert row["same_rate_low"] <= same <= row["same_rate_high"]
    assert len(r.table) == 1  # a single criterion: no pooled row
    # History kept: the first run's scores are superseded rows, still read.
    assert query(store, "SELECT count(*) FROM scores WHERE superseded") == [(12,)]


def test_three_runs_two_skills_na_and_pooled(tmp_path):
    rng = np.random.default_rng(4)
    keys = [(str(i), m) for i in range(1, 9) for m in "ab"]
    skills = ("correctness", "readability")
    runs = []
    for _ in range(3):
        run = {(k, s): int(rng.integers(1, 6)) for k in keys for s in skills}
        runs.append(run)
    runs[1][(keys[0], "correctness")] = None  # N/A: no rating
    del runs[2][(keys[1], "readability")]  # not scored in the third run
    files = [[(i, m, s, v) for ((i, m), s), v in run.items()] for run in runs]
    store = _store(tmp_path, files)
    r = stability(store, Filters("t"), n_boot=200)

    def numeric(run, skill=None):
        return {u: v for u, v in run.items() if v is not None and (skill is None or u[1] == skill)}

    for skill in (*skills, None):
        row = _row(r, skill)
        per_run = [numeric(run, skill) for run in runs]
        for level in ("ordinal", "interval"):
            assert row[f"alpha_{level}"] == pytest.approx(_kripp(per_run, level), abs=1e-12)
        assert row["n_runs"] == 3
    assert _row(r, None)["n_items"] == len(keys) * 2  # every item is in 2+ runs
    assert list(r.table["skill"])[:2] == list(skills)


def test_items_of_one_run_only_and_a_single_instance(tmp_path):
    # Instance 1 only is scored twice: the other items are left out, no CI from 1 instance.
    first = {("1", "a"): 2, ("1", "b"): 4, ("1", "c"): 5, ("2", "a"): 3, ("3", "a"): 1}
    second = {("1", "a"): 2, ("1", "b"): 5, ("1", "c"): 5, ("4", "a"): 3}
    store = _store(tmp_path, [_rows(first), _rows(second)])
    row = _row(stability(store, Filters("t"), n_boot=100), "correctness")
    assert row["n_items"] == 3 and row["n_instances"] == 1
    assert row["alpha_ordinal"] == pytest.approx(_kripp([first, second], "ordinal"), abs=1e-12)
    assert np.isnan(row["alpha_ordinal_low"]) and np.isnan(row["same_rate_high"])
    assert row["same_rate"] == pytest.approx(2 / 3)
    assert not row["unstable"]  # below the minimum n, never flagged


def test_a_repeat_split_over_two_runs_is_one_rater(tmp_path):
    later = dict(list(SECOND.items())[:6]), dict(list(SECOND.items())[6:])
    store = _store(tmp_path, [_rows(FIRST), _rows(later[0]), _rows(later[1])])
    con = duckdb.connect(str(store.path))
    ids = [
        r
        for (r,) in con.execute(
            "SELECT run_id FROM runs WHERE judge = ? ORDER BY started_at", [JUDGE]
        ).fetchall()
    ]
    con.execute(
        "UPDATE runs SET source = 'repeat 1 on t at temperature 1' WHERE run_id IN (?, ?)", ids[1:]
    )  # an interrupted repeat and its rest
    con.close()
    row = _row(stability(store, Filters("t"), n_boot=100), "correctness")
    assert row["n_runs"] == 2 and row["n_items"] == 12
    assert row["alpha_ordinal"] == pytest.approx(_kripp([FIRST, SECOND], "ordinal"), abs=1e-12)


HUMANS = {("1", "a"): (3, 4), ("1", "b"): (2, 2), ("2", "a"): (5, 4), ("2", "b"): (1, 2),
          ("3", "a"): (4, 4)}  # fmt: skip


def test_humans_alpha_beside_and_a_judge_without_repeat(tmp_path):
    humans = [
        (h, i, m, "correctness", v)
        for (i, m), vs in HUMANS.items()
        for h, v in zip(("h1", "h2"), vs, strict=True)
    ]
    h1 = {k: v[0] for k, v in HUMANS.items()}
    h2 = {k: v[1] for k, v in HUMANS.items()}
    (tmp_path / "one").mkdir()
    r = stability(_store(tmp_path / "one", [_rows(FIRST)], humans), Filters("t"), n_boot=100)
    assert r.table.empty and r.without_repeat == (JUDGE,)
    assert r.note is not None and "No item scored in two or more runs" in r.note.message
    assert r.repeatable == ()  # imported scores: nothing to call again
    h = r.humans
    ref = h[(h["statistic"] == "alpha_ordinal") & (h["skill"] == "correctness")]
    assert ref["value"].iloc[0] == pytest.approx(_kripp([h1, h2], "ordinal"), abs=1e-12)
    (tmp_path / "two").mkdir()
    store = _store(tmp_path / "two", [_rows(FIRST), _rows(SECOND)], humans)
    row = _row(stability(store, Filters("t"), n_boot=100), "correctness")
    assert row["human_alpha_ordinal"] == pytest.approx(_kripp([h1, h2], "ordinal"), abs=1e-12)


@pytest.fixture(scope="module")
def demo_result(demo_db):
    return stability(Store(demo_db), Filters("demo"))


def _demo_pairs(demo_db) -> pd.DataFrame:
    """gpt-4's numeric scores on the items both its runs scored, read directly."""
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        rows = con.execute(
            "SELECT run_id, instance_id, model, skill, score FROM scores "
            "WHERE judge = 'gpt-4 (simulated)' AND dataset = 'demo' AND score IS NOT NULL"
        ).df()
    finally:
        con.close()
    wide = rows.pivot_table(index=["instance_id", "model", "skill"], columns="run_id",
                            values="score")  # fmt: skip
    assert wide.shape[1] == 2  # the original run and the panel's repeat
    return wide.dropna()


def test_the_demo_repeat_of_gpt4(demo_db, demo_result):
    r, both = demo_result, _demo_pairs(demo_db)
    t = r.table[r.table["judge"] == "gpt-4 (simulated)"]
    assert len(t) == 13 and set(r.table["judge"]) == {"gpt-4 (simulated)"}
    pooled = t[t["skill"].isna()].iloc[0]
    assert pooled["n_items"] == len(both) and pooled["n_runs"] == 2
    assert pooled["n_instances"] == both.index.get_level_values(0).nunique()
    ref = krippendorff.alpha(both.to_numpy().T, level_of_measurement="ordinal")
    assert pooled["alpha_ordinal"] == pytest.approx(ref, abs=1e-9)
    same = (both.iloc[:, 0] == both.iloc[:, 1]).mean()
    assert pooled["same_rate"] == pytest.approx(same)
    for _, row in t[t["skill"].notna()].iterrows():
        sub = both.xs(row["skill"], level="skill")
        assert row["n_items"] == len(sub)
        ref = krippendorff.alpha(sub.to_numpy().T, level_of_measurement="interval")
        assert row["alpha_interval"] == pytest.approx(ref, abs=1e-9)
        assert row["alpha_ordinal_low"] <= row["alpha_ordinal"] <= row["alpha_ordinal_high"]
        assert row["unstable"] == (row["alpha_ordinal_high"] < UNSTABLE_ALPHA)  # n is large
        # Each level flags on its own CI: the interval flag follows the interval α.
        assert row["unstable_alpha_interval"] == (row["alpha_interval_high"] < UNSTABLE_ALPHA)
    assert t["human_alpha_ordinal"].notna().all()
    assert set(r.without_repeat) == {"lenient-judge (simulated)", "verbose-judge (simulated)",
                                     "claude-judge (simulated)"}  # fmt: skip
    assert len(r.published) == 12 and r.published["gpt4_repeat_alpha"].between(0, 1).all()
    shown = stability_table(r, "alpha_interval")
    assert "α (interval) between runs" in shown.columns and len(shown) == 13


def test_a_slice_without_llm_scores_says_so(demo_db):
    r = stability(Store(demo_db), Filters("demo", models=("no such model",)), n_boot=50)
    assert r.table.empty and r.judges == () and r.note.cause == "no_llm_judge"
    assert stability_table(r).empty
