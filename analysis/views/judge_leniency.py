"""Judges page, Leniency: does an LLM judge score higher (or lower) than the humans, on which
skills, and how are its scores spread next to theirs?

An item is an instance × model × skill. The humans' score of an item is the mean of the human
scores of it (``kind:human``); an item counts for a judge when both the judge and at least one
human gave it a score (N/A on either side leaves it out). Per judge and skill, and for all of a
judge's skills pooled, the effect is mean(judge − humans) over those items, which is the
judge's mean minus the humans' mean on the same items. Its 95% CI resamples instances (the
scores of one instance are correlated: several skills, several models), with one weight matrix
shared by every cell, so cells are comparable. The pooled row puts every skill on the 1–5
scale's points (a criterion on another scale is rescaled by 4 / its range) so it means the same
whatever the criteria.

A cell is *flagged* when its CI excludes 0, its effect is at least ``PRACTICAL_POINTS`` (on a
1–5 scale; other scales in proportion) and it rests on at least ``MIN_FLAG_INSTANCES``
instances.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats.means import LEVEL, N_BOOT, bootstrap_weights, cluster_bootstrap_means
from analysis.views.guidance import EmptyState, import_command
from analysis.views.scorers import skill_order
from analysis.views.tables import table_bytes

# Every latest score of the filtered slice with its scorer's kind and its criterion's scale.
JUDGE_SCORES = """
SELECT s.instance_id, s.model, s.skill, s.judge, COALESCE(j.kind, 'llm') AS kind, s.score,
       COALESCE(k.label, s.skill) AS label,
       COALESCE(k.scale_min, 1)::DOUBLE AS scale_min, COALESCE(k.scale_max, 5)::DOUBLE AS scale_max
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN judges j USING (judge)  -- no row: an LLM judge, as kind:llm counts it
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE {where}
"""

ITEM = ["instance_id", "model", "skill"]
ALL_SKILLS = "All skills"  # the label of the pooled row (skill None)
HUMANS = "Humans"  # the humans' side in the distributions (every human score counted)

# A quarter of a point on the 1–5 scale: the spread between individual annotators' means in
# FLASK-style data is about that size (the demo's three differ by up to 0.3), so a smaller
# shift is within what swapping one careful human for another does; a quarter point moves a
# quarter of the scores of a skill across one score boundary, which changes model rankings.
PRACTICAL_POINTS = 0.25
# A percentile CI from fewer instances is too narrow to trust (few distinct resamples).
MIN_FLAG_INSTANCES = 10


@dataclass(frozen=True)
class LeniencyQuery:
    filters: Filters
    n_boot: int = N_BOOT
    seed: int = 0
    level: float = LEVEL


@dataclass(frozen=True)
class Leniency:
    cells: pd.DataFrame  # see CELL_COLS
    dist: pd.DataFrame  # see DIST_COLS
    judges: tuple[str, ...]  # LLM judges of the slice, by name
    humans: tuple[str, ...]
    skills: list[str]
    labels: dict[str, str]
    empty: EmptyState | None  # why there is nothing to compare, and what to do

    @property
    def unshared(self) -> tuple[str, ...]:
        """LLM judges that scored no item a human scored: no cell, said on the page."""
        return tuple(j for j in self.judges if j not in set(self.cells["judge"]))


CELL_COLS = ["judge", "skill", "label", "mean_judge", "mean_human", "diff", "ci_low", "ci_high",
             "n_items", "n_instances", "threshold", "flagged"]  # fmt: skip
DIST_COLS = ["scorer", "kind", "skill", "label", "value", "count", "n", "share"]


def load_scores(store: Store, filters: Filters) -> pd.DataFrame:
    """Latest scores of the slice (every scorer; the sidebar's judge does not apply)."""
    where, params = filter_sql(replace(filters, judge=None))
    with store.read() as con:
        return con.sql(JUDGE_SCORES.format(where=where), params=params).to_arrow_table().to_pandas()


def leniency(store: Store, q: LeniencyQuery) -> Leniency:
    rows = load_scores(store, q.filters)
    judges = tuple(sorted(rows.loc[rows["kind"] == "llm", "judge"].unique()))
    humans = tuple(sorted(rows.loc[rows["kind"] == "human", "judge"].unique()))
    labels = skill_labels(rows)
    pairs = shared_items(rows)
    cells = leniency_cells(pairs, q.n_boot, q.seed, q.level)
    cells["label"] = [labels.get(s, s) if s else ALL_SKILLS for s in cells["skill"]]
    skills = skill_order(rows["skill"].unique())
    return Leniency(cells, distributions(rows), judges, humans, skills, labels,
                    _empty(store, q.filters, rows, judges, humans, pairs))  # fmt: skip


def skill_labels(rows: pd.DataFrame) -> dict[str, str]:
    """Skill → its label (a criterion's own label, else the skill)."""
    pairs = rows[["skill", "label"]].drop_duplicates("skill")
    return dict(zip(pairs["skill"].tolist(), pairs["label"].tolist(), strict=True))


def shared_items(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (LLM judge, item) both it and the humans scored: judge, instance_id, model,
    skill, j (its score), h (the humans' mean), diff, unit (diff in 1–5 points), width, and
    flask_scale (the criterion is on 1–5)."""
    cols = ["judge", *ITEM, "j", "h", "diff", "unit", "width", "flask_scale"]
    human = rows[(rows["kind"] == "human")].groupby(ITEM)["score"].mean().rename("h")
    llm = rows[(rows["kind"] == "llm") & rows["score"].notna()]
    if human.empty or llm.empty:
        return pd.DataFrame(columns=cols)
    out = llm.join(human, on=ITEM, how="inner")
    out = out[out["h"].notna()].rename(columns={"score": "j"})
    out["diff"] = out["j"] - out["h"]
    out["width"] = out["scale_max"] - out["scale_min"]
    out["unit"] = out["diff"] * 4 / out["width"].where(out["width"] > 0, np.nan)
    out["flask_scale"] = (out["scale_min"] == 1) & (out["scale_max"] == 5)
    return out[cols].sort_values(["judge", *ITEM]).reset_index(drop=True)


def _groups(pairs: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Cell keys (judge, skill; skill None = pooled) and, per pair row, its two cell codes."""
    per_skill = pairs[["judge", "skill"]].drop_duplicates()
    pooled = pairs[["judge"]].drop_duplicates().assign(skill=None)
    keys = pd.concat([per_skill, pooled], ignore_index=True)
    order = {s: i for i, s in enumerate(skill_order(per_skill["skill"].unique()))}
    keys["_o"] = keys["skill"].map(lambda s: order.get(s, len(order)) if s else len(order) + 1)
    keys = keys.sort_values(["judge", "_o"]).drop(columns="_o").reset_index(drop=True)
    code = {(j, s): k for k, (j, s) in enumerate(zip(keys["judge"], keys["skill"], strict=True))}
    own = np.array([code[(j, s)] for j, s in zip(pairs["judge"], pairs["skill"], strict=True)])
    pool = np.array([code[(j, None)] for j in pairs["judge"]])
    return keys, own, pool


def leniency_cells(pairs: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0,
                   level: float = LEVEL) -> pd.DataFrame:  # fmt: skip
    """Per judge × skill and judge × all skills: the effect, its CI, n and the flag."""
    if pairs.empty:
        return pd.DataFrame(columns=CELL_COLS)
    keys, own, pool = _groups(pairs)
    inst, codes = np.unique(pairs["instance_id"].to_numpy(str), return_inverse=True)
    n_cells = len(keys)
    rows = np.concatenate([codes, codes])
    cols = np.concatenate([own, pool])
    vals = np.concatenate([pairs["diff"].to_numpy(float), pairs["unit"].to_numpy(float)])
    sums, counts = np.zeros((len(inst), n_cells)), np.zeros((len(inst), n_cells))
    np.add.at(sums, (rows, cols), vals)
    np.add.at(counts, (rows, cols), 1.0)
    w = bootstrap_weights(len(inst), n_boot, seed)
    ci = cluster_bootstrap_means(sums, counts, weights=w, level=level)
    out = keys.copy()
    both = pd.DataFrame({"cell": cols, "inst": rows, "v": vals,
                         "j": np.tile(pairs["j"].to_numpy(float), 2),
                         "h": np.tile(pairs["h"].to_numpy(float), 2),
                         "width": np.tile(pairs["width"].to_numpy(float), 2),
                         "flask": np.tile(pairs["flask_scale"].to_numpy(bool), 2)})  # fmt: skip
    g = both.groupby("cell")
    out["mean_judge"], out["mean_human"] = g["j"].mean(), g["h"].mean()
    out["diff"], out["ci_low"], out["ci_high"] = ci.mean, ci.lo, ci.hi
    out["n_items"] = g.size().astype(int)
    out["n_instances"] = g["inst"].nunique().astype(int)
    pooled = out["skill"].isna()
    # The pooled row is in 1–5 points; its judge and human means are too only when every
    # criterion it pools is on 1–5 (not 1–3, not 0–4).
    out.loc[pooled & ~g["flask"].all(), ["mean_judge", "mean_human"]] = np.nan
    out.loc[out["n_instances"] < 2, ["ci_low", "ci_high"]] = np.nan
    out["threshold"] = np.where(pooled, PRACTICAL_POINTS, PRACTICAL_POINTS * g["width"].first() / 4)
    out["flagged"] = flag(out)
    out["label"] = out["skill"].where(~pooled, ALL_SKILLS)
    return out[CELL_COLS]


def flag(cells: pd.DataFrame) -> pd.Series:
    """CI excludes 0, the effect is at least the threshold, enough instances."""
    excl = (cells["ci_low"] > 0) | (cells["ci_high"] < 0)
    big = cells["diff"].abs() >= cells["threshold"]
    return (excl & big & (cells["n_instances"] >= MIN_FLAG_INSTANCES)).fillna(False).astype(bool)


def distributions(rows: pd.DataFrame) -> pd.DataFrame:
    """Share of each score (and N/A) per scorer and skill, the humans' scores pooled as one
    scorer, on the items the humans labelled (all items when there are no humans), so every
    judge is seen on the same responses as the humans."""
    if rows.empty:
        return pd.DataFrame(columns=DIST_COLS)
    human = rows["kind"] == "human"
    if human.any():
        labelled = pd.MultiIndex.from_frame(rows.loc[human, ITEM]).unique()
        rows = rows[pd.MultiIndex.from_frame(rows[ITEM]).isin(labelled)]
    scorer = rows["judge"].where(rows["kind"] != "human", HUMANS)
    # Each distinct score formatted once: a FLASK-size slice has millions of rows, few values.
    names = {v: f"{v:g}" for v in rows["score"].dropna().unique()}
    value = rows["score"].map(names).fillna("N/A")
    d = rows.assign(scorer=scorer, value=value, _v=rows["score"].fillna(np.inf))
    out = d.groupby(["scorer", "kind", "skill", "label", "value"], as_index=False).agg(
        count=("judge", "size"), _v=("_v", "first")
    )
    out["n"] = out.groupby(["scorer", "skill"])["count"].transform("sum")
    out["share"] = out["count"] / out["n"]
    order = {s: i for i, s in enumerate(skill_order(out["skill"].unique()))}
    out = out.assign(_s=out["skill"].map(order), _h=out["scorer"] != HUMANS)
    out = out.sort_values(["_s", "_h", "scorer", "_v"]).reset_index(drop=True)
    return out[DIST_COLS]


def _empty(store: Store, f: Filters, rows: pd.DataFrame, judges: tuple, humans: tuple,
           pairs: pd.DataFrame) -> EmptyState | None:  # fmt: skip
    if rows.empty:
        return EmptyState("no_scores", "No scores in this slice.",
                          "Widen the sidebar's filters, or import scores.",
                          widen=("Models", "Domains", "Difficulty", "Source task"))  # fmt: skip
    if not judges:
        return EmptyState("no_llm", "No LLM judge has scored this slice.",
                          "Run a judge (Re-judge page), or import a judge's scores.")  # fmt: skip
    if not humans:
        return EmptyState("no_humans", "No human labels in this slice.",
                          "Leniency compares each judge with the humans: annotate responses "
                          "on the Annotate page, or import human scores.",
                          commands=(import_command(store, f.dataset, human=True),))  # fmt: skip
    if pairs.empty:
        return EmptyState("no_shared", "No item was scored by both a judge and the humans.",
                          "Judge the responses the humans labelled (Re-judge page).")  # fmt: skip
    return None


# ------------------------------------------------------------ tables for reading, CSV


def cells_table(r: Leniency) -> pd.DataFrame:
    """The cells as the page shows them: one row per judge × skill (then all skills)."""
    c = r.cells
    ci = [f"[{lo:+.2f}, {hi:+.2f}]" if lo == lo and hi == hi else "–"
          for lo, hi in zip(c["ci_low"], c["ci_high"], strict=True)]  # fmt: skip
    return pd.DataFrame({
        "Judge": c["judge"], "Skill": [r.labels.get(s, s) if s else ALL_SKILLS
                                       for s in c["skill"]],
        "Judge − humans": c["diff"].round(3), "95% CI": ci,
        "Judge mean": c["mean_judge"].round(3), "Human mean": c["mean_human"].round(3),
        "Items": c["n_items"], "Instances": c["n_instances"],
        "Flagged": np.where(c["flagged"], np.where(c["diff"] > 0, "lenient", "harsh"), ""),
    })  # fmt: skip


def cells_csv(r: Leniency, fmt: str = "csv") -> bytes:
    return table_bytes(r.cells, fmt)


def dist_skills(r: Leniency) -> list[str]:
    """The skills with a score distribution, in the dataset's order (the page's picker)."""
    shown = set(r.dist["skill"])
    return [s for s in r.skills if s in shown]


def dist_table(r: Leniency, skill: str) -> pd.DataFrame:
    """One row per scorer, one column per score (share, %), then N/A and n."""
    d = r.dist[r.dist["skill"] == skill]
    if d.empty:
        return pd.DataFrame(columns=["Scorer", "n"])
    wide = d.pivot_table(index="scorer", columns="value", values="share", sort=False,
                         fill_value=0.0, observed=True)  # fmt: skip
    values = sorted(wide.columns, key=lambda v: (v == "N/A", float(v) if v != "N/A" else 0))
    out = (wide[values] * 100).round(1).reset_index().rename(columns={"scorer": "Scorer"})
    out.columns = ["Scorer", *[f"{v} (%)" for v in values]]
    out["n"] = d.groupby("scorer", sort=False)["n"].first().reindex(out["Scorer"]).to_numpy()
    return out


def dist_csv(r: Leniency, fmt: str = "csv") -> bytes:
    return table_bytes(r.dist, fmt)
