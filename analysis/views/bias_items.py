"""The items behind the Judges page's bias sections (length bias, self-preference): per item
(instance × model × criterion) the response's length, the humans' score (the mean of the human
scores of that item) and each LLM judge's score, side by side.

One query per (store version, filters), kept in a small cache: the two sections, a second
method or another scatter pick do not load the same scores again. Cached frames are read,
never modified, by the callers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.views.memo import Memo, resamples
from analysis.views.scorers import skill_order

# Latest non-N/A scores of the filtered slice with their response's length and their scorer's
# kind (a judge without a row in `judges` is an LLM judge, as the pickers take it).
ITEM_SCORES = """
SELECT s.instance_id, s.model, s.skill, s.judge, COALESCE(j.kind, 'llm') AS kind, s.score,
       r.length, COALESCE(k.label, s.skill) AS label,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN judges j USING (judge)
LEFT JOIN responses r
       ON r.dataset = s.dataset AND r.instance_id = s.instance_id AND r.model = s.model
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE {where} AND s.score IS NOT NULL
"""
ITEM = ["instance_id", "model", "skill"]
_CACHED = 4


@dataclass(frozen=True)
class Items:
    """``frame``: one row per item: instance_id, model, skill, length (NaN: no stored
    response) and humans (their mean; NaN: no human scored it). ``scores``: items × judges, each
    LLM judge's score (NaN: not scored, or N/A), apart from ``frame`` so that no judge's name can
    clash with a column. ``instances`` numbers the bootstrap's clusters (``cluster``: each
    item's)."""

    frame: pd.DataFrame
    scores: np.ndarray
    judges: tuple[str, ...]  # the LLM judges, by how many items they scored
    humans: tuple[str, ...]  # the human annotators whose mean is HUMANS
    skills: tuple[str, ...]  # taxonomy order
    labels: dict[str, str]
    scales: dict[str, tuple[float, float]]
    instances: pd.Index
    cluster: np.ndarray

    def judge(self, name: str) -> np.ndarray:
        return self.scores[:, self.judges.index(name)]

    def weights(self, n_boot: int, seed: int) -> np.ndarray:
        """The resamples (n_boot × instances), shared by every skill and scorer of a query so
        that their CIs are paired."""
        return resamples(len(self.instances), n_boot, seed)


_cache = Memo(_CACHED)


def items(store: Store, f: Filters) -> Items:
    """The items of the sidebar's slice (its Judge ignored: every judge is compared)."""
    key = (str(store.path), store.version(), replace(f, judge=None))
    return _cache.get(key, lambda: _load(store, replace(f, judge=None)))


def _load(store: Store, f: Filters) -> Items:
    where, params = filter_sql(f)
    with store.read() as con:
        rows = con.execute(ITEM_SCORES.format(where=where), params).df()
    humans = tuple(sorted(rows.loc[rows["kind"] == "human", "judge"].unique()))
    llm = rows[rows["kind"] != "human"]
    judges = tuple(llm["judge"].value_counts(sort=False).sort_index().sort_values(
        ascending=False, kind="stable").index)  # fmt: skip
    human = rows[rows["kind"] == "human"].groupby(ITEM)["score"].mean().rename("humans")
    frame = rows.drop_duplicates(ITEM).set_index(ITEM)[["length"]].astype(np.float64)
    frame = frame.join(human).sort_index().reset_index()
    at = pd.MultiIndex.from_frame(frame[ITEM])
    scores = np.full((len(frame), len(judges)), np.nan)
    # One latest score per judge and item; a mean all the same, should a store hold two.
    means = llm.groupby(["judge", *ITEM], sort=False)["score"].mean()
    col = pd.Index(judges).get_indexer(means.index.get_level_values("judge"))
    scores[at.get_indexer(means.index.droplevel("judge")), col] = means.to_numpy()
    per_skill = rows.drop_duplicates("skill")
    instances = pd.Index(sorted(frame["instance_id"].unique()))
    return Items(
        frame=frame,
        scores=scores,
        judges=judges,
        humans=humans,
        skills=tuple(skill_order(per_skill["skill"])),
        labels=dict(zip(per_skill["skill"], per_skill["label"], strict=True)),
        scales={s: (float(lo), float(hi)) for s, lo, hi in
                per_skill[["skill", "scale_min", "scale_max"]].itertuples(index=False)},
        instances=instances,
        cluster=instances.get_indexer(frame["instance_id"]),
    )  # fmt: skip
