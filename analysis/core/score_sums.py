"""The model × instance sums of the latest scores (table ``score_sums``, schema.sql), kept
current by every write, in the write's own transaction.

Pages that pool several scores of an instance (abilities, source tasks, Overall) need each
instance's sum and count before they can aggregate with the instance as the unit. Grouping
millions of score rows per model × instance on every page view costs several times a plain
aggregate; this table holds that inner step: one row per (dataset, judge, model, instance,
ability group) and one pooled row per (dataset, judge, model, instance) with ``grp`` NULL.
``total`` is the sum of the non-N/A scores (NULL when all are N/A), ``n`` their count,
``n_rows`` all rows (N/A included), exactly what the per-instance step of the queries computed.

Every code path that changes ``scores`` (or a dataset's criteria, which decide the ability
groups) calls ``refresh`` with the keys it touched; tests/core/test_score_sums.py checks the
table against the recomputed aggregate after imports, supersession, annotation edits and
deletes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

KEY_COLS = ("dataset", "judge", "model", "instance_id")

# The groups, as the pages name them: a dataset's own criterion or FLASK's ability, else the
# criterion's label, else the skill itself.
GROUP = "COALESCE(k.ability, k.label, s.skill)"

# The keys to refresh, from the caller's SELECT (columns dataset, judge, model, instance_id).
CREATE_KEYS = """
CREATE OR REPLACE TEMP TABLE score_sum_keys AS
SELECT DISTINCT dataset, judge, model, instance_id FROM ({keys})
"""

# The semi-join on the instance id first: DuckDB then reads only those instances' rows before
# matching the whole key (a judging run's flush touches a few instances of a large store).
DELETE_SUMS = """
DELETE FROM score_sums USING score_sum_keys k
WHERE score_sums.instance_id IN (SELECT instance_id FROM score_sum_keys)
  AND score_sums.dataset = k.dataset AND score_sums.judge = k.judge
  AND score_sums.model = k.model AND score_sums.instance_id = k.instance_id
"""

INSERT_SUMS = f"""
INSERT INTO score_sums (dataset, judge, model, instance_id, grp, total, n, n_rows)
SELECT s.dataset, s.judge, s.model, s.instance_id, {GROUP} AS grp,
       sum(s.score), count(s.score), count(*)
FROM latest_scores s
JOIN score_sum_keys USING (dataset, judge, model, instance_id)
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE s.instance_id IN (SELECT instance_id FROM score_sum_keys)
GROUP BY GROUPING SETS ((s.dataset, s.judge, s.model, s.instance_id, grp),
                        (s.dataset, s.judge, s.model, s.instance_id))
"""

DROP_KEYS = "DROP TABLE IF EXISTS score_sum_keys"

# Past this many keys (an import of a whole judge's scores), recomputing each (dataset, judge)
# the keys belong to costs one aggregate over its scores, far less than matching every key.
BULK_KEYS = 20_000

COUNT_KEYS = "SELECT count(*) FROM score_sum_keys"
KEY_JUDGES = "SELECT DISTINCT dataset, judge FROM score_sum_keys"
DELETE_JUDGE_SUMS = "DELETE FROM score_sums WHERE dataset = ? AND judge = ?"
INSERT_JUDGE_SUMS = f"""
INSERT INTO score_sums (dataset, judge, model, instance_id, grp, total, n, n_rows)
SELECT s.dataset, s.judge, s.model, s.instance_id, {GROUP} AS grp,
       sum(s.score), count(s.score), count(*)
FROM latest_scores s
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE s.dataset = ? AND s.judge = ?
GROUP BY GROUPING SETS ((s.dataset, s.judge, s.model, s.instance_id, grp),
                        (s.dataset, s.judge, s.model, s.instance_id))
"""

DELETE_DATASETS = "DELETE FROM score_sums WHERE list_contains(?::VARCHAR[], dataset)"

# A new criterion may regroup scores already stored under its (dataset, skill): a dataset's
# own (the parameters: datasets and skills, pairwise) or a shared one (any dataset).
CRITERION_KEYS = """
SELECT s.dataset, s.judge, s.model, s.instance_id
FROM scores s JOIN (SELECT unnest(?::VARCHAR[]) AS dataset, unnest(?::VARCHAR[]) AS skill) c
     USING (dataset, skill)
UNION ALL
SELECT dataset, judge, model, instance_id FROM scores WHERE list_contains(?::VARCHAR[], skill)
"""


def refresh(con, keys: str, params: list | None = None) -> None:
    """Recompute the sums of every (dataset, judge, model, instance) that ``keys`` (a SELECT
    with those columns, or a registered relation's name) lists, on the caller's connection and
    inside its transaction."""
    con.execute(CREATE_KEYS.format(keys=keys), params or [])
    if con.execute(COUNT_KEYS).fetchone()[0] > BULK_KEYS:
        for pair in con.execute(KEY_JUDGES).fetchall():
            con.execute(DELETE_JUDGE_SUMS, list(pair))
            con.execute(INSERT_JUDGE_SUMS, list(pair))
    else:
        con.execute(DELETE_SUMS)
        con.execute(INSERT_SUMS)
    con.execute(DROP_KEYS)


def after_write(con, scores: pd.DataFrame, criteria: list, dropped: list[str]) -> None:
    """What the batch writer calls last in its transaction: forget the sums of the datasets
    it deleted (``dropped``), then recompute those of every key among the written ``scores``
    (columns dataset, judge, model, instance_id at least) and of the scores stored under new
    ``criteria`` (``Criterion`` records: a dataset's own, or a shared one when its dataset is
    None)."""
    if dropped:
        con.execute(DELETE_DATASETS, [dropped])
    if len(scores):
        con.register("score_sum_batch", scores[list(KEY_COLS)])
        refresh(con, "SELECT * FROM score_sum_batch")
        con.unregister("score_sum_batch")
    own = [c for c in criteria if c.dataset is not None]
    shared = [c.skill for c in criteria if c.dataset is None]
    if own or shared:
        params = [[c.dataset for c in own], [c.skill for c in own], shared]
        refresh(con, CRITERION_KEYS, params)
