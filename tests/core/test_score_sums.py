"""The model × instance sums (table score_sums) equal the aggregate recomputed from the scores
after every kind of write: the demo import, score-file imports (new judge, then a newer run of
the same judge superseding some scores, an idempotent repeat, a new own criterion), judging
runs' answers, annotation saves and edits, a demo rebuild that deletes the old rows, and the
in-place upgrade of a v4 store."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from analysis.core import score_sums
from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from analysis.ingest.score_files import import_scores
from analysis.views.annotate import Answer, save_answer
from judges.records import CallRecord, write_records

KEYS = ["dataset", "judge", "model", "instance_id", "grp"]

# The expectation, computed with pandas from the current scores (never by the code under test):
# per (dataset, judge, model, instance) and ability group, plus all groups pooled (grp None).
CURRENT = """
SELECT s.dataset, s.judge, s.model, s.instance_id, s.skill, s.score,
       k.ability, k.label
FROM scores s LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE NOT s.superseded
"""


POOLED_M1_1 = """
SELECT total, n, n_rows FROM score_sums
WHERE judge = 'ext' AND model = 'm1' AND instance_id = '1' AND grp IS NULL
"""
FIRST_RESPONSE = """
SELECT instance_id, model FROM responses WHERE dataset = 'demo' ORDER BY instance_id, model LIMIT 1
"""


def expected(store: Store) -> pd.DataFrame:
    with store.read() as con:
        rows = con.execute(CURRENT).df()
    rows["grp"] = rows["ability"].fillna(rows["label"]).fillna(rows["skill"])
    keys = KEYS[:4]

    def agg(frame, by):
        g = frame.groupby(by, dropna=False)["score"]
        return pd.DataFrame({"total": g.sum(min_count=1), "n": g.count(), "n_rows": g.size()})

    per = agg(rows, [*keys, "grp"]).reset_index()
    pooled = agg(rows, keys).reset_index().assign(grp=None)
    return _canon(pd.concat([per, pooled], ignore_index=True))


def stored(store: Store) -> pd.DataFrame:
    with store.read() as con:
        return _canon(con.execute("SELECT * FROM score_sums").df())


def _canon(df: pd.DataFrame) -> pd.DataFrame:
    df = df[[*KEYS, "total", "n", "n_rows"]].copy()
    df["grp"] = df["grp"].astype(object).where(df["grp"].notna(), "<pooled>")
    df["n"], df["n_rows"] = df["n"].astype("int64"), df["n_rows"].astype("int64")
    df["total"] = df["total"].astype("float64")
    return df.sort_values(KEYS).reset_index(drop=True)


def assert_current(store: Store) -> None:
    got, exp = stored(store), expected(store)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, exp)


@pytest.fixture
def demo(demo_db, tmp_path) -> Store:
    shutil.copy(demo_db, tmp_path / "demo.duckdb")
    return Store(tmp_path / "demo.duckdb")


def _csv(tmp_path, name: str, rows: list[tuple]) -> str:
    path = tmp_path / name
    pd.DataFrame(rows, columns=["instance_id", "model", "skill", "score"]).to_csv(path, index=False)
    return str(path)


def test_demo_import(demo):
    assert_current(demo)


def test_score_imports_supersession_and_new_criteria(demo, tmp_path):
    first = [("1", "m1", "correctness", 4), ("1", "m1", "readability", None),
             ("2", "m1", "correctness", 2), ("2", "m2", "factuality", 5)]  # fmt: skip
    import_scores(demo, _csv(tmp_path, "a.csv", first), judge="ext", dataset="demo")
    assert_current(demo)
    # A newer run of the same judge: replaces two scores (one N/A now), adds one.
    newer = [("1", "m1", "correctness", None), ("2", "m1", "correctness", 3),
             ("3", "m1", "harmlessness", 1)]  # fmt: skip
    import_scores(demo, _csv(tmp_path, "b.csv", newer), judge="ext", dataset="demo")
    assert_current(demo)
    with demo.read() as con:
        row = con.execute(POOLED_M1_1).fetchone()
    assert row == (None, 0, 2)  # both of the instance's scores are N/A now
    import_scores(demo, _csv(tmp_path, "b.csv", newer), judge="ext", dataset="demo")  # repeat
    assert_current(demo)
    # A dataset's own criterion (scale 1-3): its own group, named by its label.
    own = [("1", "m1", "coherence", 3), ("2", "m1", "coherence", 1)]
    import_scores(demo, _csv(tmp_path, "c.csv", own), judge="ext", dataset="demo", scale=(1, 3))
    assert_current(demo)


def _call(instance: str, model: str, scores: dict, run: str = "r1") -> CallRecord:
    return CallRecord(run, "demo", instance, model, "gpt-4 (simulated)", f"k{instance}{model}",
                      "raw", None, "ok", None, 10.0, 1, 1, scores)  # fmt: skip


def test_judging_runs_answers(demo):
    with demo.write() as con:
        con.execute("INSERT INTO runs (run_id, judge, dataset, status, started_at) VALUES "
                    "('r1', 'gpt-4 (simulated)', 'demo', 'running', now()::TIMESTAMP)")  # fmt: skip
        skills = con.execute("SELECT skills FROM instances WHERE dataset = 'demo' AND "
                             "instance_id = '5'").fetchone()[0]  # fmt: skip
    recs = [_call("5", "gpt-4-0613", {s: 1.0 for s in skills}),
            _call("6", "gpt-4-0613", {})]  # fmt: skip
    assert write_records(demo, recs) >= 1
    assert_current(demo)


def test_annotation_save_and_edit(demo):
    with demo.read() as con:
        inst, model = con.execute(FIRST_RESPONSE).fetchone()
        skills = con.execute("SELECT skills FROM instances WHERE dataset = 'demo' AND "
                             "instance_id = ?", [inst]).fetchone()[0]  # fmt: skip
    save_answer(demo, Answer("rater", "demo", inst, model, {s: 4 for s in skills}))
    assert_current(demo)
    edited = {s: (None if i == 0 else 2) for i, s in enumerate(skills)}
    save_answer(demo, Answer("rater", "demo", inst, model, edited))  # supersedes the first
    assert_current(demo)


def test_rebuild_deletes_the_old_sums(demo, tmp_path):
    import_scores(demo, _csv(tmp_path, "a.csv", [("1", "m1", "correctness", 4)]),
                  judge="ext", dataset="demo")  # fmt: skip
    build_and_write_demo(demo, force=True)
    assert_current(demo)
    with demo.read() as con:
        assert con.execute("SELECT count(*) FROM score_sums WHERE judge = 'ext'").fetchone() == (0,)


def test_v4_store_is_filled_when_upgraded(demo):
    with demo.write() as con:  # the v4 store: no table, version 4
        con.execute("DROP TABLE score_sums")
        con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    upgraded = Store(demo.path)
    upgraded.ensure()
    assert_current(upgraded)
    upgraded.ensure()  # idempotent: nothing added twice
    assert_current(upgraded)


def test_whole_judges_recomputed_in_bulk(demo, tmp_path, monkeypatch):
    """Past BULK_KEYS keys a write recomputes its judges whole: the same table."""
    monkeypatch.setattr(score_sums, "BULK_KEYS", 0)
    build_and_write_demo(demo, force=True)
    assert_current(demo)
    newer = [("1", "m1", "correctness", None), ("2", "m1", "correctness", 3)]
    import_scores(demo, _csv(tmp_path, "a.csv", newer), judge="gpt-4 (simulated)", dataset="demo")
    assert_current(demo)
