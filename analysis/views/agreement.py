"""Human vs judge agreement: the data behind the page and ``python -m analysis agreement``.

A scorer is a judge's name or a group ``kind:human`` / ``kind:llm`` (the mean of that kind's
scorers per item). An item is one (instance, model, skill); A and B are aligned on the items both
scored with a number (N/A on either side is counted, not paired). Correlations are computed at
the level the user picks (pooled items, within instances, or over model means); MAE, exact and
±1 agreement, quadratic-weighted κ and Krippendorff's α are always over the aligned items.
Slices (by domain, difficulty or model) use the pooled level. Every CI resamples instances.

Criteria and the aggregate never share a key. Every result frame has a ``scope`` column:
``criterion`` rows carry the criterion's name in ``skill``; the ``all_criteria`` row (present
with two or more criteria) pools the aligned items of every criterion and has ``skill`` None, so
a criterion may be called anything, ``overall`` included. ``for_skill(frame, None)``, ``worst(r,
None)`` and the charts' ``None`` mean "all criteria". The fair human ceiling is in
``views/ceiling.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats import agreement_bootstrap as boot
from analysis.stats.agreement import CORRELATIONS
from analysis.stats.means import N_BOOT, bootstrap_weights
from analysis.stats.ranks import MIN_INSTANCES
from analysis.views.ceiling import Group, human_ceiling, raters_alpha
from analysis.views.scorers import Scorer, apart, resolve, scorer_options, skill_order
from analysis.views.tables import skill_label

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


LEVELS = ("pooled", "instance", "system")
SLICE_FIELDS = ("domain", "difficulty", "model")
SCOPE_CRITERION = "criterion"  # a row of one criterion (named in ``skill``)
SCOPE_ALL = "all_criteria"  # the row pooling every criterion's items (``skill`` None)
ALL_LABEL = "All criteria (pooled)"  # how tables and charts name the all-criteria row
_ITEM = ["instance_id", "model", "skill"]


@dataclass(frozen=True)
class AgreementQuery:
    """What to compare: A and B over the sidebar's slice (its judge is ignored)."""

    filters: Filters
    a: str
    b: str
    level: str = "pooled"
    skill: str | None = None
    by: str | None = None
    n_boot: int = N_BOOT
    seed: int = 0
    items: tuple[tuple[str, str], ...] = ()  # only these (instance_id, model); empty: all


@dataclass(frozen=True)
class Agreement:
    query: AgreementQuery
    a: Scorer
    b: Scorer
    stats: pd.DataFrame  # scope, skill, statistic, level, value, ci_low, ci_high, n, n_instances
    slices: pd.DataFrame  # scope, skill, slice, statistic, value, ci_low, ci_high, n, …
    ceiling: pd.DataFrame  # scope, skill, figure, statistic, value, CI, n … (views/ceiling.py)
    ranks: pd.DataFrame  # scope, skill, value (Kendall τ-b of model rankings), CI, n
    pairs: pd.DataFrame  # instance_id, model, skill, a, b, abs_diff, difficulty, domains
    counts: pd.DataFrame  # skill, aligned, a_na, b_na, a_only, b_only
    scales: dict[str, tuple[float, float]]
    notes: tuple[str, ...]
    humans: tuple[str, ...] = ()  # the human raters behind the ceiling (A's own excluded)
    # skill id → the dataset's label (its own criteria's, else FLASK's: dataset_skills)
    labels: dict[str, str] | None = None

    def label(self, skill: str | None) -> str:
        """A criterion for people: the dataset's label; None: all criteria pooled."""
        return ALL_LABEL if skill is None else skill_label(skill, self.labels or {})


def scopes(skills: list[str]) -> list[Group]:
    """(scope, skill) of each result row group: every criterion, then all of them (2+)."""
    return [(SCOPE_CRITERION, s) for s in skills] + ([(SCOPE_ALL, None)] if len(skills) > 1 else [])


def for_skill(frame: pd.DataFrame, skill: str | None) -> pd.DataFrame:
    """The rows of one criterion of a result frame; None: the all-criteria rows (or, where the
    frame has a single criterion, its rows: they are all the items)."""
    if frame.empty:
        return frame
    if skill is not None:
        return frame[(frame["scope"] == SCOPE_CRITERION) & (frame["skill"] == skill)]
    pooled = frame[frame["scope"] == SCOPE_ALL]
    return pooled if not pooled.empty or frame["skill"].nunique() > 1 else frame


def worst(r: Agreement, skill: str | None, k: int = 200) -> pd.DataFrame:
    """The k items of a criterion (None: of all criteria) where A and B differ most, with a
    link to each."""
    top = (r.pairs if skill is None else r.pairs[r.pairs["skill"] == skill]).head(k)
    links = [
        _sample_link(r.query.filters.dataset, i, m)
        for i, m in zip(top["instance_id"], top["model"], strict=True)
    ]
    return top.assign(link=links)


def worst_keys(r: Agreement, skill: str | None, k: int = 200) -> list[tuple[str, str]]:
    """The (instance_id, model) responses behind the worst disagreements, each once."""
    top = worst(r, skill, k)
    return list(dict.fromkeys(zip(top["instance_id"], top["model"], strict=True)))


def _load(store: Store, q: AgreementQuery, judges: list[str]) -> pd.DataFrame:
    where, params = filter_sql(replace(q.filters, judge=None))
    skills = [q.skill] if q.skill else []
    with store.read() as con:
        return con.execute(
            AGREEMENT_SCORES.format(where=where), [*params, judges, skills, skills]
        ).df()


def _only(rows: pd.DataFrame, items: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The rows of the chosen responses (a re-judged selection), or all rows."""
    if not items:
        return rows
    keep = pd.MultiIndex.from_tuples(items, names=["instance_id", "model"])
    return rows[pd.MultiIndex.from_frame(rows[["instance_id", "model"]]).isin(keep)]


def _side(rows: pd.DataFrame, judges: tuple[str, ...]) -> pd.Series:
    """Per item: the scorer's score, or the mean over a group's non-N/A scores (N/A = NaN)."""
    return rows[rows["judge"].isin(judges)].groupby(_ITEM)["score"].mean()


def _sample_link(dataset: str, instance_id: str, model: str) -> str:
    """Link to a sample on the Samples page (its query-parameter contract)."""
    return "samples?" + urlencode({"dataset": dataset, "instance": instance_id, "model": model})


def _pairs(rows: pd.DataFrame, a: Scorer, b: Scorer):
    sa, sb = _side(rows, a.judges), _side(rows, b.judges)
    both = pd.concat({"a": sa, "b": sb}, axis=1)
    counts = (
        both.assign(
            aligned=both["a"].notna() & both["b"].notna(),
            a_na=both.index.isin(sa.index) & both["a"].isna() & both.index.isin(sb.index),
            b_na=both.index.isin(sb.index) & both["b"].isna() & both.index.isin(sa.index),
            a_only=~both.index.isin(sb.index),
            b_only=~both.index.isin(sa.index),
        )
        .groupby(level="skill")[["aligned", "a_na", "b_na", "a_only", "b_only"]]
        .sum()
        .reset_index()
    )
    info = rows.drop_duplicates(_ITEM).set_index(_ITEM)[["difficulty", "domains"]]
    pairs = both.dropna().join(info).reset_index()
    pairs["abs_diff"] = (pairs["a"] - pairs["b"]).abs()
    pairs = pairs.sort_values(
        ["abs_diff", "instance_id", "model", "skill"], ascending=[False, True, True, True]
    )
    return pairs.reset_index(drop=True), counts


def _groups(pairs: pd.DataFrame, skills: list[str], key: pd.Series | None = None):
    """Group codes per pair: each criterion, plus all criteria when there are several; with a
    slice key, one group per slice × scope. Returns (row index, group code, labels)."""
    slices = [None] if key is None else sorted(key.unique(), key=str)
    labels, rows, codes = [], [], []
    skill_of = pairs["skill"].to_numpy()
    for sl in slices:
        in_slice = np.ones(len(pairs), bool) if sl is None else (key == sl).to_numpy()
        for scope, name in scopes(skills):
            sel = np.flatnonzero(in_slice & ((skill_of == name) | (name is None)))
            if len(sel):
                rows.append(sel)
                codes.append(np.full(len(sel), len(labels)))
                labels.append((sl, scope, name))
    if not rows:
        return np.array([], int), np.array([], int), []
    return np.concatenate(rows), np.concatenate(codes), labels


def _pooled(pairs, skills, cluster, weights, key=None) -> pd.DataFrame:
    rows, codes, labels = _groups(pairs, skills, key)
    if not labels:
        return pd.DataFrame()
    a, b = pairs["a"].to_numpy(float)[rows], pairs["b"].to_numpy(float)[rows]
    out = boot.pooled(a, b, cluster[rows], codes, len(labels), weights)
    lab = pd.DataFrame(labels, columns=["slice", "scope", "skill"], dtype=object)
    lab = lab.rename_axis("group").reset_index()
    return lab.merge(out, on="group").drop(columns="group")


def _level(pairs, skills, cluster, weights, level: str) -> pd.DataFrame:
    """Correlations at the instance or system level, per criterion and over all of them."""
    parts = []
    model = pd.factorize(pairs["model"])[0]
    for scope, name in scopes(skills):
        sel = np.ones(len(pairs), bool) if name is None else (pairs["skill"] == name).to_numpy()
        a, b, c, m = (
            x[sel] for x in (pairs["a"].to_numpy(float), pairs["b"].to_numpy(float), cluster, model)
        )
        if level == "instance":
            unit = pd.factorize(pd.Series(c).astype(str) + "\x00" + pairs["skill"][sel].to_numpy())[
                0
            ]
            frame, used, skipped = boot.per_instance(a, b, c, unit, m, weights)
            frame = frame.assign(n=used, n_skipped=skipped)
        else:
            frame, n_models = boot.system(a, b, c, m, weights)
            frame = frame.assign(n=n_models, n_skipped=0)
        parts.append(frame.assign(scope=scope, skill=name, n_instances=len(np.unique(c))))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _slice_key(pairs: pd.DataFrame, by: str) -> tuple[pd.DataFrame, pd.Series]:
    if by == "domain":
        doms = pairs["domains"].map(
            lambda d: list(d) if d is not None and len(d) else ["(unlabeled)"]
        )
        exploded = pairs.assign(slice=doms).explode("slice")
        return exploded.drop(columns="slice").reset_index(drop=True), exploded["slice"].reset_index(
            drop=True
        )
    if by == "difficulty":
        key = pairs["difficulty"].map(lambda v: "unlabeled" if pd.isna(v) else str(int(v)))
        return pairs, key
    return pairs, pairs["model"].astype(str)


def rater_agreement(
    store: Store,
    filters: Filters,
    raters: str,
    skill: str | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Inter-rater α (ordinal, interval) among ``raters`` (kind:human|kind:llm|NAME,NAME,…)
    per criterion and over all criteria (``scope``), with CI and n (pairable ratings), n_units,
    n_instances, n_raters."""
    known = scorer_options(store, filters.dataset)
    if raters.startswith("kind:"):
        judges = resolve(raters, known).judges
    else:
        judges = tuple(
            dict.fromkeys(resolve(r, known).spec for r in raters.split(",") if r.strip())
        )
    if len(judges) < 2:
        raise InputError("--raters", None, None, f"need at least 2 raters, got {', '.join(judges)}")
    q = AgreementQuery(filters, judges[0], judges[1], skill=skill, n_boot=n_boot, seed=seed)
    rows = _load(store, q, list(judges))
    instances = pd.Index(rows["instance_id"].unique())
    if instances.empty:
        return pd.DataFrame()
    weights = bootstrap_weights(len(instances), n_boot, seed)
    out = _tidy(raters_alpha(rows, judges, scopes(skill_order(rows["skill"])), instances, weights))
    return out.assign(raters=", ".join(judges)) if not out.empty else out


def agreement(store: Store, q: AgreementQuery) -> Agreement:
    """Every number of the Human-vs-judge page (and the CLI) for one query."""
    if q.level not in LEVELS:
        raise InputError(
            "--level", None, None, f"unknown level '{q.level}'; use {', '.join(LEVELS)}"
        )
    if q.by is not None and q.by not in SLICE_FIELDS:
        raise InputError(
            "--by", None, None, f"unknown field '{q.by}'; use {', '.join(SLICE_FIELDS)}"
        )
    known = scorer_options(store, q.filters.dataset)
    a, b, notes = apart(resolve(q.a, known), resolve(q.b, known))
    humans = tuple(known.loc[known["kind"] == "human", "judge"])
    rows = _only(_load(store, q, sorted({*a.judges, *b.judges, *humans})), q.items)
    pairs, counts = _pairs(rows, a, b)
    skills = skill_order(pairs["skill"])
    per_skill = rows.drop_duplicates("skill")
    scales = {
        s: (float(lo), float(hi))
        for s, lo, hi in per_skill[["skill", "scale_min", "scale_max"]].itertuples(index=False)
    }
    labels = dict(zip(per_skill["skill"], per_skill["label"], strict=True))
    if pairs.empty:
        empty = pd.DataFrame()
        return Agreement(
            q, a, b, empty, empty, empty, empty, pairs, counts, scales, tuple(notes), (), labels
        )
    # The ceiling's panel: every human but A's own scorers (A is compared with the others).
    panel = tuple(h for h in humans if h not in a.judges)
    instances = pd.Index(pairs["instance_id"].unique())
    weights = bootstrap_weights(len(instances), q.n_boot, q.seed)
    cluster = instances.get_indexer(pairs["instance_id"])
    stats = _pooled(pairs, skills, cluster, weights).assign(level="pooled", n_skipped=0)
    if q.level != "pooled":
        level = _level(pairs, skills, cluster, weights, q.level).assign(level=q.level)
        stats = pd.concat([level, stats[~stats["statistic"].isin(CORRELATIONS)]], ignore_index=True)
    slices = pd.DataFrame()
    if q.by:
        sliced, key = _slice_key(pairs, q.by)
        slices = _pooled(sliced, skills, instances.get_indexer(sliced["instance_id"]), weights, key)
    system = _level(pairs, skills, cluster, weights, "system")
    ceiling = pd.DataFrame()
    if len(panel) >= 2:
        judge = _side(rows, a.judges)
        ceiling = human_ceiling(rows, panel, judge, scopes(skills), instances, weights)
    if ceiling.empty or "human_ceiling" not in set(ceiling["figure"]):
        notes.append(_no_ceiling(a, panel))
    return Agreement(
        q,
        a,
        b,
        stats=_tidy(stats),
        slices=_tidy(slices),
        ceiling=_tidy(ceiling),
        ranks=_tidy(system[system["statistic"] == "kendall"]),
        pairs=pairs,
        counts=counts,
        scales=scales,
        notes=tuple(notes),
        humans=panel,
        labels=labels,
    )


def _no_ceiling(a: Scorer, panel: tuple[str, ...]) -> str:
    if len(panel) < 2:
        return "Fewer than 2 human raters other than A in this slice: no human ceiling."
    return (
        f"No item in this slice was scored by {a.spec} and by two or more humans: no "
        "leave-one-out human ceiling."
    )


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Skills in taxonomy order (then slices); drop the slice column where there are none; no
    CI from a single instance (every resample would be that instance: a zero-width lie), and
    ``few_instances`` where a figure rests on fewer than MIN_INSTANCES instances."""
    if frame.empty:
        return frame
    frame = frame.copy()
    frame.loc[frame["n_instances"] < 2, ["ci_low", "ci_high"]] = np.nan
    frame["few_instances"] = frame["n_instances"] < MIN_INSTANCES
    named = frame["scope"] == SCOPE_CRITERION
    order = {s: i for i, s in enumerate(skill_order(frame.loc[named, "skill"]))}
    frame = frame.assign(_o=frame["skill"].where(named).map(order).fillna(len(order)))
    if "slice" in frame and frame["slice"].isna().all():
        frame = frame.drop(columns="slice")
    keys = ["_o"] + (["slice"] if "slice" in frame else [])
    frame = frame.sort_values(keys, kind="stable").drop(columns="_o").reset_index(drop=True)
    first = [c for c in ("scope", "skill", "slice") if c in frame]
    return frame[first + [c for c in frame if c not in first]]
