"""The aligned items behind the Human-vs-judge numbers: A's and B's score per item (instance ×
model × criterion), the counts of what could not be paired, and the bootstrap's resamples.

The page computes one section at a time (the one on screen), each through ``agreement()``;
they share this preparation through a small cache keyed by the store file's version and the
parts of the query it depends on (not the seed, the number of resamples, the level or the slice
field), so that a second section, another seed or another level does not load and align the
same scores again. Cached values are read, never modified, by the callers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.views.memo import Memo, resamples
from analysis.views.scorers import Scorer, apart, resolve, scorer_options, skill_order

# Scores of the chosen scorers in the filtered slice, for agreement statistics (one row per
# instance × model × skill × scorer; NULL score = N/A). The skill list is empty for "all".
AGREEMENT_SCORES = """
SELECT s.instance_id, s.model, s.skill, s.judge, s.score, i.difficulty, i.domains,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max,
       COALESCE(k.label, s.skill) AS label
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE {where}
  AND list_contains(?::VARCHAR[], s.judge)
  AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], s.skill))
"""
ITEM = ["instance_id", "model", "skill"]
_NULLABLE = {pa.int8(): pd.Int8Dtype()}  # the query's one integer column, with NULLs
_CACHED = 4  # prepared queries kept (a page's sections share one)


@dataclass(frozen=True)
class Aligned:
    """One query's aligned items and what every section needs beside them."""

    a: Scorer
    b: Scorer
    notes: tuple[str, ...]
    rows: pd.DataFrame  # the store rows of A, B and every human (NaN score = N/A)
    pairs: pd.DataFrame  # instance_id, model, skill, a, b, difficulty, domains, abs_diff
    counts: pd.DataFrame  # skill, aligned, a_na, b_na, a_only, b_only
    skills: list[str]
    scales: dict[str, tuple[float, float]]
    labels: dict[str, str]
    panel: tuple[str, ...]  # the ceiling's humans: every human but A's own scorers
    instances: pd.Index  # the instances of the pairs: the bootstrap's clusters
    weights: np.ndarray | None  # resamples × instances (None: no pairs)
    cluster: np.ndarray  # the instance (column of weights) of each pair
    # Seed-independent work of the sections (e.g. the ceiling's held-out pairs), shared by
    # every seed and level of the same prepared data: see ``kept``.
    extras: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def kept(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per prepared data (any seed, level, slice)."""
        if name not in self.extras:
            self.extras[name] = make()
        return self.extras[name]


_cache = Memo(_CACHED)  # without resamples: any seed, any n_boot


def aligned(store: Store, q: Any) -> Aligned:
    """The aligned items of an ``AgreementQuery`` and its resamples. Loading and pairing do not
    depend on the seed, the number of resamples, the level or the slice field: they are cached
    per store version, filters, scorers, criterion and responses, and the resamples apart, per
    (instances, resamples, seed)."""
    key = (str(store.path), store.version(), q.filters, q.a, q.b, q.skill, q.items)
    prepared = _cache.get(key, lambda: _align(store, q))
    if prepared.pairs.empty:
        return prepared
    n = len(prepared.instances)
    weights = resamples(n, q.n_boot, q.seed)
    return replace(prepared, weights=weights)


def _align(store: Store, q: Any) -> Aligned:
    known = scorer_options(store, q.filters.dataset)
    a, b, notes = apart(resolve(q.a, known), resolve(q.b, known))
    humans = tuple(known.loc[known["kind"] == "human", "judge"])
    judges = sorted({*a.judges, *b.judges, *humans})
    rows = _only(_load(store, q.filters, q.skill, judges), q.items)
    pairs, counts = _pairs(rows, a, b)
    per_skill = rows.drop_duplicates("skill")
    scales = {
        s: (float(lo), float(hi))
        for s, lo, hi in per_skill[["skill", "scale_min", "scale_max"]].itertuples(index=False)
    }
    labels = dict(zip(per_skill["skill"], per_skill["label"], strict=True))
    instances = pd.Index(pairs["instance_id"].unique())
    return Aligned(
        a,
        b,
        tuple(notes),
        rows,
        pairs,
        counts,
        skill_order(pairs["skill"]),
        scales,
        labels,
        tuple(h for h in humans if h not in a.judges),
        instances,
        None,
        instances.get_indexer(pairs["instance_id"]),
    )


def _load(store: Store, filters: Filters, skill: str | None, judges: list[str]) -> pd.DataFrame:
    where, params = filter_sql(replace(filters, judge=None))
    skills = [skill] if skill else []
    with store.read() as con:
        rel = con.sql(
            AGREEMENT_SCORES.format(where=where), params=[*params, judges, skills, skills]
        )
        table = rel.to_arrow_table()
    # Through Arrow: half the time of ``.df()`` for the same frame, dtypes included: like
    # ``.df()``, an integer column with NULLs becomes nullable (Int8), one without stays int8.
    nulls = any(pa.types.is_integer(c.type) and c.null_count for c in table.columns)
    return table.to_pandas(types_mapper=_NULLABLE.get if nulls else None)


def _only(rows: pd.DataFrame, items: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The rows of the chosen responses (a re-judged selection), or all rows."""
    if not items:
        return rows
    keep = pd.MultiIndex.from_tuples(items, names=["instance_id", "model"])
    return rows[pd.MultiIndex.from_frame(rows[["instance_id", "model"]]).isin(keep)]


def side(rows: pd.DataFrame, judges: tuple[str, ...]) -> pd.Series:
    """Per item: the scorer's score, or the mean over a group's non-N/A scores (N/A = NaN)."""
    return rows[rows["judge"].isin(judges)].groupby(ITEM)["score"].mean()


def _pairs(rows: pd.DataFrame, a: Scorer, b: Scorer) -> tuple[pd.DataFrame, pd.DataFrame]:
    sa, sb = side(rows, a.judges), side(rows, b.judges)
    both = pd.concat({"a": sa, "b": sb}, axis=1)
    in_a, in_b = both.index.isin(sa.index), both.index.isin(sb.index)
    counts = (
        both.assign(
            aligned=both["a"].notna() & both["b"].notna(),
            a_na=in_a & both["a"].isna() & in_b,
            b_na=in_b & both["b"].isna() & in_a,
            a_only=~in_b,
            b_only=~in_a,
        )
        .groupby(level="skill")[["aligned", "a_na", "b_na", "a_only", "b_only"]]
        .sum()
        .reset_index()
    )
    info = rows.drop_duplicates(ITEM).set_index(ITEM)[["difficulty", "domains"]]
    pairs = both.dropna().join(info).reset_index()
    pairs["abs_diff"] = (pairs["a"] - pairs["b"]).abs()
    pairs = pairs.sort_values(
        ["abs_diff", "instance_id", "model", "skill"], ascending=[False, True, True, True]
    )
    return pairs.reset_index(drop=True), counts


def slice_key(pairs: pd.DataFrame, by: str) -> tuple[pd.DataFrame, pd.Series]:
    """The pairs (a two-domain item once per domain) and the slice of each."""
    if by == "domain":
        doms = pairs["domains"].map(
            lambda d: list(d) if d is not None and len(d) else ["(unlabeled)"]
        )
        exploded = pairs.assign(slice=doms).explode("slice")
        key = exploded["slice"].reset_index(drop=True)
        return exploded.drop(columns="slice").reset_index(drop=True), key
    if by == "difficulty":
        key = pairs["difficulty"].map(lambda v: "unlabeled" if pd.isna(v) else str(int(v)))
        return pairs, key
    return pairs, pairs["model"].astype(str)
