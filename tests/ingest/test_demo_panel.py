"""The demo's simulated judge panel (analysis/ingest/demo_panel.py): deterministic, written in
one transaction, built on the base demo's own truth, its biases what they claim (checked with
pandas on the stored scores), its repeat run written as history (the judge's current scores
stay the base demo's), and the base demo's rows left as they were."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from analysis.core import score_sums
from analysis.core.store import Store
from analysis.core.taxonomy import SKILL_ORDER
from analysis.ingest.demo import DEFAULT_SEED, JUDGE, user_work
from analysis.ingest.demo_model import MODELS
from analysis.ingest.demo_panel import (
    CLAUDE,
    LENIENT,
    LENIENT_SKILLS,
    OWN_MODEL,
    PANEL,
    REPEAT_INSTANCES,
    REPEAT_RUN_SUFFIX,
    VERBOSE,
    build_and_write_demo_with_panel,
    build_panel,
    replay,
    write_panel,
)

KEY = ["instance_id", "model", "skill"]
BASE_RUN = f"demo-{DEFAULT_SEED}-{JUDGE}"
REPEAT_RUN = f"{BASE_RUN}-{REPEAT_RUN_SUFFIX}"


def _df(db: Path, sql: str) -> pd.DataFrame:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


@pytest.fixture(scope="module")
def latest(demo_db: Path) -> pd.DataFrame:
    return _df(demo_db, "SELECT * FROM latest_scores WHERE dataset = 'demo'")


def _paired(latest: pd.DataFrame, judge: str, ref: str = JUDGE) -> pd.DataFrame:
    """judge's and ref's scores of the items both scored (N/A left out)."""
    a = latest[latest["judge"] == judge].set_index(KEY)["score"].rename("a")
    b = latest[latest["judge"] == ref].set_index(KEY)["score"].rename("b")
    return pd.concat([a, b], axis=1, join="inner").dropna().reset_index()


def test_the_panel_is_a_function_of_the_seed():
    one, two, other = build_panel(7), build_panel(7), build_panel(8)
    for part in ("judgments", "scores"):
        assert_frame_equal(getattr(one, part), getattr(two, part))
    assert not one.scores["score"].equals(other.scores["score"])
    assert one.runs == two.runs and one.families == two.families


def test_it_replays_the_base_demos_world(demo_db: Path):
    """The stored base judge scores are the replayed simulation's: the panel sees its truth."""
    w = replay(DEFAULT_SEED)
    base = _df(demo_db, f"SELECT instance_id, model, skill, score FROM scores "
                        f"WHERE run_id = '{BASE_RUN}'")  # fmt: skip
    row = {i: k for k, i in enumerate(w.ids)}
    col = {m: k for k, m in enumerate(MODELS)}
    slot = [list(np.array(SKILL_ORDER)[w.sk[row[i]]]).index(s)
            for i, s in zip(base["instance_id"], base["skill"], strict=True)]  # fmt: skip
    sim = w.sim["judge"][base["instance_id"].map(row), base["model"].map(col), slot]
    assert np.array_equal(sim, base["score"].to_numpy(float), equal_nan=True)
    humans = _df(demo_db, "SELECT DISTINCT instance_id FROM scores WHERE judge = 'annotator_1'")
    assert set(humans["instance_id"]) == set(w.ids[w.human])


def test_every_panel_judge_scores_the_humans_instances(latest, demo_db: Path):
    humans = set(latest.loc[latest["judge"] == "annotator_1", "instance_id"])
    judges = _df(demo_db, "SELECT * FROM judges").set_index("judge")
    for judge in PANEL:
        assert set(latest.loc[latest["judge"] == judge, "instance_id"]) == humans
        row = judges.loc[judge]
        assert (row["kind"], row["backend"]) == ("llm", "simulation")
        assert '"simulated_bias"' in row["params"]
    fam = _df(demo_db, "SELECT * FROM families")
    assert set(map(tuple, fam[["kind", "name", "family"]].to_numpy())) >= {
        ("judge", JUDGE, "openai"), ("judge", CLAUDE, "anthropic"), ("model", "gpt4", "openai"),
        ("model", "chatgpt", "openai"), ("model", "claude_v1", "anthropic")}  # fmt: skip


def _shift(p: pd.DataFrame) -> tuple[float, float]:
    """mean(a − b) and its standard error with the instance as the cluster."""
    d = p.assign(d=p["a"] - p["b"])
    per = d.groupby("instance_id")["d"].agg(["sum", "size"])
    mean = per["sum"].sum() / per["size"].sum()
    k = len(per)
    se = np.sqrt(k / (k - 1) * ((per["sum"] - mean * per["size"]) ** 2).sum()) / per["size"].sum()
    return mean, se


def _expected(shift: float, ref: pd.Series) -> float:
    """What a latent shift shows in integer scores capped at 5: each score moves up one with
    probability ``shift`` (the latent's fractional part is about uniform), unless it is 5."""
    return shift * (ref < 5).mean()


def test_the_lenient_judge_is_lenient_on_its_skills_only(latest):
    p = _paired(latest, LENIENT)
    for skill, g in p.groupby("skill"):
        mean, se = _shift(g)
        want = _expected(0.8, g["b"]) if skill in LENIENT_SKILLS else 0.0
        assert abs(mean - want) < 3 * se + 0.05, (skill, mean, want, se)
    both = p[p["skill"].isin(["robustness", "correctness"])]  # scored mid-scale: seen whole
    assert _shift(both)[0] > 0.6


def test_the_self_preferring_judge_favours_its_own_family_only(latest):
    p = _paired(latest, CLAUDE)
    for model, g in p.groupby("model"):
        mean, se = _shift(g)
        want = _expected(0.7, g["b"]) if model == OWN_MODEL else 0.0
        assert abs(mean - want) < 3 * se + 0.05, (model, mean, want, se)
    assert _shift(p[p["model"] == OWN_MODEL])[0] > 0.35


def _length_r(latest: pd.DataFrame, lengths: pd.DataFrame) -> pd.Series:
    """Per scorer (the humans: their mean per item), the correlation of score with log length
    across the models' answers within each instance and skill (both centred there)."""
    humans = latest[latest["judge"].str.startswith("annotator_")]
    mean = humans.groupby(KEY, as_index=False)["score"].mean().assign(judge="humans")
    d = pd.concat([latest[~latest["judge"].isin(humans["judge"])], mean])
    d = d[d["instance_id"].isin(humans["instance_id"]) & (d["skill"] != "conciseness")]
    d = d.merge(lengths, on=["instance_id", "model"]).dropna(subset=["score"])
    d["log_len"] = np.log(d["length"])
    grp = d.groupby(["judge", "instance_id", "skill"])
    d["s"] = d["score"] - grp["score"].transform("mean")
    d["l"] = d["log_len"] - grp["log_len"].transform("mean")
    return d.groupby("judge")[["s", "l"]].apply(lambda g: g["s"].corr(g["l"]))


def test_the_verbose_judge_follows_length_within_instances(latest, demo_db: Path):
    r = _length_r(latest, _df(demo_db, "SELECT instance_id, model, length FROM responses"))
    # Stronger models write longer answers, so the humans' scores follow length too; the
    # verbose judge follows it far more, the lenient and self-preferring ones as they do.
    assert r[VERBOSE] > r["humans"] + 0.25 and r[VERBOSE] > r[JUDGE] + 0.08
    for judge in (LENIENT, CLAUDE):
        assert abs(r[judge] - r["humans"]) < 0.05
    p = _paired(latest, VERBOSE)
    # Unbiased in mean but for clipping: a longer answer's gain is capped at 5, a shorter
    # one's loss is not (skills scored near 5 lose a little).
    assert abs(_shift(p)[0]) < 0.15


def test_the_repeat_run_is_history_and_the_judge_keeps_its_base_scores(demo_db: Path):
    s = _df(demo_db, f"SELECT * FROM scores WHERE judge = '{JUDGE}'")
    repeat = s[s["run_id"] == REPEAT_RUN]
    base = s[s["run_id"] == BASE_RUN]
    rescored = base.set_index(KEY).index.isin(repeat.set_index(KEY).index)
    assert rescored.sum() > 0 and not base["superseded"].any()
    assert repeat["superseded"].all()  # only Stability reads a repeat run
    runs = _df(demo_db, f"SELECT repeat_number FROM runs WHERE run_id = '{REPEAT_RUN}'")
    assert runs["repeat_number"].tolist() == [1]
    assert repeat["instance_id"].nunique() == REPEAT_INSTANCES
    humans = set(_df(demo_db, "SELECT instance_id FROM scores WHERE judge = 'annotator_1'")[
        "instance_id"])  # fmt: skip
    assert humans <= set(repeat["instance_id"])
    # A repeat that failed to parse scores nothing: the earlier score stays current there.
    failed = _df(demo_db, f"SELECT instance_id, model FROM judgments WHERE run_id = "
                          f"'{REPEAT_RUN}' AND parse_status <> 'ok'")  # fmt: skip
    assert len(failed) and not repeat.merge(failed).shape[0]
    same = repeat.merge(base, on=KEY, suffixes=("", "_base")).dropna(subset=["score", "score_base"])
    assert 0.5 < same["score"].corr(same["score_base"]) < 0.99  # same truth, fresh noise


def test_failed_judgments_have_no_scores_and_errors_no_output(demo_db: Path):
    j = _df(demo_db, "SELECT judge, judgment_id, parse_status, raw_output, error FROM judgments "
                     "WHERE run_id LIKE 'demo-%' AND judge <> 'annotator_1'")  # fmt: skip
    scored = set(_df(demo_db, "SELECT DISTINCT judgment_id FROM scores")["judgment_id"])
    bad = j[j["parse_status"] != "ok"]
    assert not set(bad["judgment_id"]) & scored
    assert bad.loc[bad["parse_status"] == "error", "raw_output"].isna().all()
    assert bad.loc[bad["parse_status"] == "failed", "raw_output"].notna().all()
    assert bad["error"].notna().all()
    assert set(bad.loc[bad["parse_status"] == "error", "judge"]) == {VERBOSE, CLAUDE}


def test_the_base_rows_are_untouched(demo_db: Path, base_demo_db: Path):
    cols = "run_id, instance_id, model, judge, skill, score"
    sql = (f"SELECT {cols} FROM scores WHERE run_id IN (SELECT run_id FROM runs WHERE NOT "
           f"starts_with(source, 'simulated panel') AND NOT contains(run_id, 'repeat')) "
           f"ORDER BY ALL")  # fmt: skip
    assert_frame_equal(_df(demo_db, sql), _df(base_demo_db, sql))


def test_a_rebuild_replaces_the_panel_and_it_is_no_users_work(tmp_path: Path):
    store = Store(tmp_path / "r.duckdb")
    tables = ("judges", "runs", "judgments", "scores", "families", "score_sums")
    count = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in tables)
    count += " UNION ALL SELECT 'superseded', count(*) FROM scores WHERE superseded"
    build_and_write_demo_with_panel(store, 7)
    first = _df(store.path, count)
    assert user_work(store) == []  # the panel's runs are the demo's: a rebuild may drop them
    report = build_and_write_demo_with_panel(store, 7)
    assert_frame_equal(_df(store.path, count), first)
    assert report.counts["panel judges"] == len(PANEL) and report.counts["instances"] == 1740


def test_the_panel_is_one_transaction(base_demo_db: Path, tmp_path: Path, monkeypatch):
    path = tmp_path / "d.duckdb"
    shutil.copy(base_demo_db, path)
    tables = ("judges", "runs", "judgments", "scores", "families", "score_sums")
    count = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in tables)
    before = _df(path, count + " UNION ALL SELECT 'superseded', count(*) FROM scores "
                       "WHERE superseded")  # fmt: skip

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(score_sums, "after_write", boom)  # the writer's last step
    with pytest.raises(RuntimeError):
        write_panel(Store(path), DEFAULT_SEED)
    after = _df(path, count + " UNION ALL SELECT 'superseded', count(*) FROM scores "
                      "WHERE superseded")  # fmt: skip
    assert_frame_equal(before, after)
