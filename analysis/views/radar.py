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
from analysis.stats.means import N_BOOT, holm, paired_bootstrap
from analysis.views.cells import (
    CELL_COLS,
    CELL_GROUPS,
    JOIN_INSTANCES,
    JOIN_SKILLS,
    means,
    needs_instances,
    query_moments,
)

# Two models' scores of one skill side by side, counted per distinct pair (one judge: one score
# per instance, model and skill, so no per-instance sums are needed).
PAIRED_SCORES = """
WITH a AS (SELECT s.instance_id, s.skill, s.score FROM latest_scores s {join}
           WHERE {where} AND s.model = ? AND s.score IS NOT NULL),
     b AS (SELECT s.instance_id, s.skill, s.score FROM latest_scores s {join}
           WHERE {where} AND s.model = ? AND s.score IS NOT NULL)
SELECT a.skill AS grp, a.score AS s_a, 1.0 AS c_a, b.score AS s_b, 1.0 AS c_b, count(*) AS count
FROM a JOIN b USING (instance_id, skill)
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

SKILL_LABELS = """
SELECT skill, label, ability, display_order, scale_min, scale_max, custom FROM skills
"""


AXES = ("skill", "ability")
# Datasets whose models and instances are FLASK's, so the paper's figures are comparable (the
# demo is simulated to match them). FLASK-Hard only → Table 10, else Table 9.
_PUBLISHED = {"flask": "full", "flask-hard": "hard", DEMO_DATASET: "full"}
ALPHA = 0.05


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
        crit = con.execute(SKILL_LABELS).df()
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
    the axes shown (significant = Holm p < 0.05).

    Columns: axis, label, mean_a, mean_b, diff, ci_low, ci_high, p, p_holm, significant,
    n_shared (instances scored by both).
    """
    if by not in AXES:
        raise ValueError(f"unknown axis kind {by!r}; expected one of {', '.join(AXES)}")
    cols = [
        "axis",
        "label",
        "mean_a",
        "mean_b",
        "diff",
        "ci_low",
        "ci_high",
        "p",
        "p_holm",
        "significant",
        "n_shared",
    ]
    if a == b:
        return pd.DataFrame(columns=cols)
    pair = replace(f, models=(a, b))
    where, where_params = filter_sql(pair)
    joins = [JOIN_INSTANCES] if needs_instances(pair, (by,)) else []
    joins += [JOIN_SKILLS] if by == "ability" else []
    join = " ".join(joins)
    if by == "skill" and f.judge:  # one score per instance: pair the scores directly
        sql = PAIRED_SCORES.format(join=join, where=where)
        params = [*where_params, a, *where_params, b]
    else:
        grp = f"{CELL_GROUPS[by]} AS grp"
        sql = PAIRED_PATTERNS.format(grp=grp, join=join, where=where)
        params = [*where_params, a, b]
    with store.read() as con:
        pat = con.execute(sql, params).df()
        crit = con.execute(SKILL_LABELS).df()
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
    return out[cols]


def model_choices(all_models: tuple[str, ...], f: Filters) -> list[str]:
    """The models the page may put on the radar: the sidebar's selection, else all."""
    return [m for m in all_models if not f.models or m in f.models]


def display_table(data: RadarData) -> pd.DataFrame:
    """The radar's table for reading: one row per axis × model, rounded, with the scale."""
    if data.empty:
        return pd.DataFrame()
    t = data.table.copy()
    for col in ("mean", "ci_low", "ci_high"):
        t[col] = t[col].round(3)
    t["scale"] = [f"{lo:g}–{hi:g}" for lo, hi in zip(t["scale_min"], t["scale_max"], strict=True)]
    return t.drop(columns=["axis", "scale_min", "scale_max"]).rename(columns={"label": "axis"})
