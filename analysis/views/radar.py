"""Data behind the Skill radar page: per-model means over the 12 skills (or 4 abilities, or a
dataset's own criteria) with instance-clustered CIs and n, the FLASK paper's published scores
as an optional overlay, and a paired comparison of two models with Holm-corrected p-values."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.core.taxonomy import ABILITIES, SKILL_ORDER
from analysis.ingest.demo import DEMO_DATASET
from analysis.ingest.published import published_skill_scores
from analysis.stats.means import N_BOOT, TESTS, holm, paired_bootstrap
from analysis.stats.ranks import MIN_INSTANCES, mean_ranks
from analysis.views.cells import (
    CELL_COLS,
    CELL_GROUPS,
    JOIN_INSTANCES,
    JOIN_SKILLS,
    means,
    needs_instances,
    query_moments,
)
from analysis.views.tables import fmt_ci, for_people, people_csv

# Two models' scores of one skill side by side, counted per distinct pair (one judge: one score
# per instance, model and skill, so no per-instance sums are needed). One scan of both models'
# rows, paired by grouping on the instance and skill (no self-join).
PAIRED_SCORES = """
WITH pairs AS (
    SELECT s.instance_id, s.skill,
           max(s.score) FILTER (WHERE s.model = ?) AS s_a,
           max(s.score) FILTER (WHERE s.model = ?) AS s_b
    FROM latest_scores s {join}
    WHERE {where} AND s.score IS NOT NULL
    GROUP BY s.instance_id, s.skill
)
SELECT skill AS grp, s_a, 1.0 AS c_a, s_b, 1.0 AS c_b, count(*) AS count
FROM pairs
WHERE s_a IS NOT NULL AND s_b IS NOT NULL
GROUP BY ALL
"""

# Two models' per-instance sums of each ability side by side, from the sums the writes keep
# (core/score_sums.py; one judge chosen), counted per distinct pattern.
PAIRED_SUMS = """
WITH sums AS (
    SELECT s.instance_id, s.grp, s.total, s.n, s.model = ? AS is_a
    FROM score_sums s {join}
    WHERE {where} AND s.grp IS NOT NULL AND s.n > 0
)
SELECT a.grp, a.total AS s_a, a.n AS c_a, b.total AS s_b, b.n AS c_b, count(*) AS count
FROM sums a JOIN sums b USING (grp, instance_id)
WHERE a.is_a AND NOT b.is_a
GROUP BY ALL
"""

# Two models' per-instance sums side by side, counted per distinct pattern: the input of the
# paired bootstrap (stats.paired_bootstrap). {grp} is a CELL_GROUPS expression aliased grp.
PAIRED_PATTERNS = """
WITH per_instance AS (
    SELECT s.model, {grp}, s.instance_id, sum(s.score) AS t, count(s.score) AS c
    FROM latest_scores s {join}
    WHERE {where}
    GROUP BY ALL
), a AS (SELECT * FROM per_instance WHERE model = ?),
   b AS (SELECT * FROM per_instance WHERE model = ?)
SELECT a.grp, a.t AS s_a, a.c AS c_a, b.t AS s_b, b.c AS c_b, count(*) AS count
FROM a JOIN b USING (grp, instance_id)
WHERE a.c > 0 AND b.c > 0
GROUP BY ALL
"""

# Per model and criterion scale: the sum and count of the judge's non-N/A scores under the
# filters, from which the radar ranks its models by Overall (its default picks).
MODEL_TOTALS = """
SELECT s.model, COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max,
       sum(s.score) AS total, count(s.score) AS n
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE {where}
GROUP BY ALL
"""

# The models that share instances with model A (both with a non-N/A score from the judge
# under the filters) and how many: Compare's default B is the best-ranked of them. From the
# per-instance sums the writes keep (a pooled row per judge, model and instance).
SHARED_WITH = """
WITH per AS (
    SELECT DISTINCT s.model, s.instance_id FROM score_sums s {join}
    WHERE {where} AND s.grp IS NULL AND s.n > 0
)
SELECT b.model, count(*) AS shared
FROM per a JOIN per b USING (instance_id)
WHERE a.model = ? AND b.model <> a.model
GROUP BY b.model
"""

# The dataset's criteria: its own, else the shared skills (criteria belong to their dataset).
SKILL_LABELS = """
SELECT skill, label, ability, display_order, scale_min, scale_max, custom
FROM dataset_skills WHERE dataset = ?
"""


AXES = ("skill", "ability")
COMPARE_COLS = (
    "axis label mean_a mean_b diff ci_low ci_high p p_holm significant n_shared few_instances "
    "test note"
).split()
# Datasets whose models and instances are FLASK's, so the paper's figures are comparable (the
# demo is simulated to match them). FLASK-Hard only → Table 10, else Table 9.
_PUBLISHED = {"flask": "full", "flask-hard": "hard", DEMO_DATASET: "full"}
ALPHA = 0.05
DEFAULT_MODELS = 4  # on the radar by default: the best-scored (one radar holds up to 4 well)
FEW_MARK = "†"  # after a difference whose CI rests on fewer than MIN_INSTANCES instances


@dataclass(frozen=True)
class RadarData:
    """``table``: model, axis, label, mean, ci_low, ci_high, n, n_instances, n_na, scale_min,
    scale_max (one row per model × axis with scores). ``axes``: axis ids in display order.
    ``published``: model, axis, mean of the paper (empty when not applicable)."""

    table: pd.DataFrame
    axes: tuple[str, ...]
    labels: dict[str, str]
    published: pd.DataFrame = field(default_factory=pd.DataFrame)
    published_subset: str | None = None

    @property
    def empty(self) -> bool:
        return self.table.empty


def published_subset(f: Filters) -> str | None:
    """'full' (Table 9), 'hard' (Table 10) or None when the paper's figures do not apply."""
    base = _PUBLISHED.get(f.dataset)
    if base is None:
        return None
    return "hard" if f.flask_hard_only else base


def _axis_info(crit: pd.DataFrame, by: str) -> pd.DataFrame:
    """axis, label, scale_min, scale_max, order for every possible axis of ``by``."""
    if by == "skill":
        info = crit.assign(axis=crit["skill"])
        info["order"] = [
            SKILL_ORDER.index(s) if s in SKILL_ORDER else 100 + o
            for s, o in zip(info["skill"], info["display_order"], strict=True)
        ]
        return info[["axis", "label", "scale_min", "scale_max", "order"]]
    # Abilities group FLASK's skills; a custom criterion is its own group (named by its label).
    grp = crit["ability"].fillna(crit["label"]).fillna(crit["skill"])
    info = crit.assign(axis=grp, label=grp)
    info["order"] = [
        ABILITIES.index(a) if a in ABILITIES else 100 + o
        for a, o in zip(grp, info["display_order"], strict=True)
    ]
    info = info.groupby("axis", as_index=False).agg(
        label=("label", "first"),
        scale_min=("scale_min", "min"),
        scale_max=("scale_max", "max"),
        order=("order", "min"),
    )
    return info


def radar_data(store: Store, f: Filters, by: str = "skill") -> RadarData:
    """Means per model × axis (``by`` = "skill" or "ability") under the filters."""
    if by not in AXES:
        raise ValueError(f"unknown axis kind {by!r}; expected one of {', '.join(AXES)}")
    with store.read() as con:  # one connection: opening the file is a good part of the cost
        cells = means(query_moments(con, f, ("model", by)), ("model", by))
        crit = con.execute(SKILL_LABELS, [f.dataset]).df()
    cells = cells.rename(columns={by: "axis"})
    if cells.empty:
        return RadarData(cells, (), {})
    info = _axis_info(crit, by)
    table = cells.merge(info, on="axis", how="left")
    table["label"] = table["label"].fillna(table["axis"])
    table["order"] = table["order"].fillna(1000)
    table = table.sort_values(["order", "axis", "model"]).reset_index(drop=True)
    axes = tuple(dict.fromkeys(table["axis"]))
    labels = dict(zip(table["axis"], table["label"], strict=False))
    table = table[["model", "axis", "label", *CELL_COLS, "scale_min", "scale_max"]]
    subset = published_subset(f) if by == "skill" else None
    published = pd.DataFrame(columns=["model", "axis", "mean"])
    if subset:
        pub = published_skill_scores()
        pub = pub[(pub["subset"] == subset) & pub["model_id"].isin(set(table["model"]))]
        published = pub.rename(
            columns={"model_id": "model", "skill": "axis", "mean_score": "mean"}
        )[["model", "axis", "mean"]]
        published = published[published["axis"].isin(axes)].reset_index(drop=True)
    return RadarData(table, axes, labels, published, subset if len(published) else None)


def compare(
    store: Store, f: Filters, a: str, b: str, by: str = "skill", *, n_boot: int = N_BOOT
) -> pd.DataFrame:
    """Model ``a`` minus model ``b`` per axis over the instances both scored: the difference
    with a paired instance-bootstrap 95% CI, its p-value and the Holm-corrected p-value over
    the axes tested (significant = Holm p < 0.05).

    Small samples are not dressed up: one shared instance gives no CI and no p-value; up to 16
    the p-value is the exact sign-flip test (stats.sign_flip_p), beyond it the bootstrap's.

    Columns: axis, label, mean_a, mean_b, diff, ci_low, ci_high, p, p_holm, significant,
    n_shared (instances scored by both), few_instances (the CI rests on fewer than 5), test
    (which test gave p), note (why, in words).
    """
    if by not in AXES:
        raise ValueError(f"unknown axis kind {by!r}; expected one of {', '.join(AXES)}")
    cols = COMPARE_COLS
    if a == b:
        return pd.DataFrame(columns=cols)
    pair = replace(f, models=(a, b))
    where, where_params = filter_sql(pair)
    joins = [JOIN_INSTANCES] if needs_instances(pair, (by,)) else []
    joins += [JOIN_SKILLS] if by == "ability" else []
    join = " ".join(joins)
    if by == "skill" and f.judge:  # one score per instance: pair the scores directly
        sql = PAIRED_SCORES.format(join=join, where=where)
        params = [a, b, *where_params]
    elif f.judge:  # abilities of one judge: the stored per-instance sums
        inst = JOIN_INSTANCES if needs_instances(pair, ()) else ""
        sql = PAIRED_SUMS.format(join=inst, where=where)
        params = [a, *where_params]
    else:
        grp = f"{CELL_GROUPS[by]} AS grp"
        sql = PAIRED_PATTERNS.format(grp=grp, join=join, where=where)
        params = [*where_params, a, b]
    with store.read() as con:
        pat = con.execute(sql, params).df()
        crit = con.execute(SKILL_LABELS, [f.dataset]).df()
    if pat.empty:
        return pd.DataFrame(columns=cols)
    info = _axis_info(crit, by).set_index("axis")
    groups = sorted(set(pat["grp"]), key=lambda g: (info["order"].get(g, 1000), g))
    res = paired_bootstrap(pat, groups, n_boot=n_boot)
    w = pat.assign(
        sa=pat["s_a"] * pat["count"],
        ca=pat["c_a"] * pat["count"],
        sb=pat["s_b"] * pat["count"],
        cb=pat["c_b"] * pat["count"],
    )
    tot = w.groupby("grp")[["sa", "ca", "sb", "cb"]].sum().reindex(groups)
    out = pd.DataFrame(
        {
            "axis": groups,
            "label": [info["label"].get(g, g) for g in groups],
            "mean_a": (tot["sa"] / tot["ca"]).to_numpy(),
            "mean_b": (tot["sb"] / tot["cb"]).to_numpy(),
            "diff": res.diff,
            "ci_low": res.lo,
            "ci_high": res.hi,
            "p": res.p,
            "p_holm": holm(res.p),
            "n_shared": res.n_shared,
        }
    )
    out["significant"] = out["p_holm"] < ALPHA
    out["few_instances"] = out["n_shared"] < MIN_INSTANCES
    out["test"] = [TESTS[t] for t in res.test]
    out["note"] = [_test_note(n, t) for n, t in zip(res.n_shared, res.test, strict=True)]
    return out[cols]


def _test_note(n: int, test: str) -> str:
    """Why a row of ``compare`` has the p-value (or none) it has, in words."""
    if test == "none":
        return "one shared instance: too few for a test or a CI"
    if test == "bootstrap":
        return ""
    note = f"{n} shared instances: p from all {2**n:,} swaps of A and B within instances"
    return note + (f"; CI from fewer than {MIN_INSTANCES}" if n < MIN_INSTANCES else "")


def compare_table(diff: pd.DataFrame) -> pd.DataFrame:
    """``compare`` for reading (views/tables.py's formats): the axis by its label, the
    difference as 'd [lo, hi]' marked FEW_MARK when the CI rests on fewer than 5 instances,
    p-values to 3 decimals, blanks where there is no test."""
    if diff.empty:
        return pd.DataFrame()
    shown = pd.DataFrame(
        {
            "axis": diff["label"],
            "mean_a": diff["mean_a"],
            "mean_b": diff["mean_b"],
            "diff": [
                fmt_ci(*row[:3]) + (f" {FEW_MARK}" if row[3] else "")
                for row in diff[["diff", "ci_low", "ci_high", "few_instances"]].to_numpy()
            ],
            "p": diff["p"],
            "p_holm": diff["p_holm"],
            "significant": diff["significant"].where(diff["p"].notna(), None),
            "n_shared": diff["n_shared"],
            "test": diff["test"],
            "note": diff["note"],
        }
    )
    names = {"diff": "A − B [95% CI]", "test": "Test", "note": "Note"}
    return for_people(shown, labels=_as_is(shown), headers=names)


@dataclass(frozen=True)
class ModelRanking:
    """The models the radar offers: those with scores from the judge under the filters, best
    Overall first (ties by name), then those without (offered, labelled, never a default)."""

    ranked: tuple[str, ...]
    overall: dict[str, float]  # the leaderboard's Overall (on 0–1 when criteria scales differ)
    unscored: tuple[str, ...]
    judge: str | None = None

    @property
    def options(self) -> list[str]:
        return [*self.ranked, *self.unscored]

    def defaults(self, k: int = DEFAULT_MODELS) -> list[str]:
        return list(self.ranked[:k])

    def label(self, model: str) -> str:
        return f"{model} (no scores from {self.judge})" if model in self.unscored else model

    def order(self, picked: list[str]) -> list[str]:
        """Picked models best first: Compare's defaults are the first two (the top two)."""
        rank = {m: i for i, m in enumerate(self.options)}
        return sorted(picked, key=lambda m: rank.get(m, len(rank)))


def compare_defaults(store: Store, f: Filters, ordered: tuple[str, ...]) -> tuple[str, str]:
    """Compare's default pair among the picked models (``ordered`` best first): the top two,
    unless they share no scored instance: then the best-ranked model that shares some with the
    top one, so the default comparison shows something (the second, when none does)."""
    a, b = ordered[0], ordered[1]
    picked = replace(f, models=tuple(ordered))
    where, params = filter_sql(picked)
    join = JOIN_INSTANCES if needs_instances(picked, ()) else ""
    sql = SHARED_WITH.format(join=join, where=where)
    with store.read() as con:
        shared = dict(con.execute(sql, [*params, a]).fetchall())
    return a, next((m for m in ordered[1:] if shared.get(m)), b)


def model_ranking(store: Store, f: Filters, all_models: tuple[str, ...]) -> ModelRanking:
    """Rank the models the radar may show (the sidebar's selection, else ``all_models``) by
    Overall: the mean of the judge's non-N/A scores under the filters, as the leaderboard's
    Overall (pooled on 0–1 when the criteria's scales differ)."""
    offered = [m for m in all_models if not f.models or m in f.models]
    where, params = filter_sql(f)
    with store.read() as con:
        sums = con.execute(MODEL_TOTALS.format(where=where), params).df() if f.judge else None
    sums = sums[sums["n"] > 0] if sums is not None else pd.DataFrame()
    if sums.empty:
        return ModelRanking((), {}, tuple(offered), f.judge)
    if sums[["scale_min", "scale_max"]].drop_duplicates().shape[0] > 1:
        width = sums["scale_max"] - sums["scale_min"]
        sums = sums.assign(total=(sums["total"] - sums["scale_min"] * sums["n"]) / width)
    per = sums.groupby("model")[["total", "n"]].sum()
    overall = {m: float(t) / int(n) for m, t, n in per.itertuples()}
    # Ordered on the exact means (stats.ranks): tied models share a rank and go by name,
    # whatever order the sums were added in (float means may differ in the last bit).
    rank = mean_ranks(per["total"].to_numpy(float), per["n"].to_numpy(float))
    ranked = [m for _, m in sorted(zip(rank.tolist(), per.index, strict=True))]
    unscored = tuple(m for m in offered if m not in overall)
    return ModelRanking(tuple(ranked), overall, unscored, f.judge)


def _table_rows(data: RadarData) -> pd.DataFrame:
    """One row per axis × model: its label, mean, CI, n's and scale."""
    if data.empty:
        return pd.DataFrame()
    t = data.table
    scale = [f"{lo:g}–{hi:g}" for lo, hi in zip(t["scale_min"], t["scale_max"], strict=True)]
    rows = t.drop(columns=["axis", "scale_min", "scale_max"]).rename(columns={"label": "axis"})
    return rows.assign(scale=scale)[["axis", "model", *CELL_COLS, "scale"]]


def _as_is(rows: pd.DataFrame) -> dict[str, str]:
    """The axis column holds the dataset's labels already (from dataset_skills): each stays as
    it is, never relabelled as FLASK's (a dataset's own criterion labelled "correctness" is not
    "Logical Correctness")."""
    return {a: a for a in rows["axis"] if isinstance(a, str)} if "axis" in rows else {}


def _axis_header(by: str) -> dict[str, str]:
    return {"axis": "Ability" if by == "ability" else "Skill"}


def display_table(data: RadarData, by: str = "skill") -> pd.DataFrame:
    """The radar's table for reading (views/tables.py's formats): one row per axis × model."""
    rows = _table_rows(data)
    return for_people(rows, labels=_as_is(rows), headers=_axis_header(by))


def table_csv(data: RadarData, by: str = "skill", fmt: str = "csv") -> bytes:
    """``display_table`` as CSV (or Parquet), numbers at full precision."""
    rows = _table_rows(data)
    return people_csv(rows, labels=_as_is(rows), headers=_axis_header(by), fmt=fmt)


def compare_csv(diff: pd.DataFrame, fmt: str = "csv") -> bytes:
    """The paired comparison as CSV: readable headers, axis labels, full-precision numbers."""
    if "label" in diff.columns:  # the axis by its label, as the chart shows it
        diff = diff.drop(columns="axis").rename(columns={"label": "axis"})
    return people_csv(diff, labels=_as_is(diff), fmt=fmt)
