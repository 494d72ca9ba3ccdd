"""Data behind the Breakdowns page: skill means by difficulty level, by domain (FLASK's rule:
an instance counts toward each of its domains), by source task, and FLASK-Hard against the
full set. Every cell carries its n and an instance-clustered 95% CI (see views/cells.py)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.stats.means import MOMENT_COLS
from analysis.views.cells import CELL_COLS, cell_means, cell_moments, means


def by_difficulty(store: Store, f: Filters) -> pd.DataFrame:
    """model, skill, difficulty (1-5; NaN = unlabeled), cell columns."""
    return cell_means(store, f, ("model", "skill", "difficulty"))


def by_domain(store: Store, f: Filters) -> pd.DataFrame:
    """model, skill, domain, cell columns. A two-domain instance's scores count in both."""
    return cell_means(store, f, ("model", "skill", "domain"))


def by_source_task(store: Store, f: Filters) -> pd.DataFrame:
    """model, source_task, cell columns (all skills of an instance pooled, instance-clustered
    CI), sorted by model then mean descending."""
    out = cell_means(store, f, ("model", "source_task"))
    return out.sort_values(["model", "mean"], ascending=[True, False]).reset_index(drop=True)


def hard_vs_full(store: Store, f: Filters) -> pd.DataFrame:
    """Per model × skill: the mean on the full set and on its FLASK-Hard instances, with CIs
    and n, and the relative change (hard - full) / full. Empty when no instance is in
    FLASK-Hard. The other filters apply to both sides; the FLASK-Hard toggle is ignored."""
    keys = ("model", "skill")
    m = cell_moments(store, replace(f, flask_hard_only=False), (*keys, "flask_hard"))
    if m.empty or not m["flask_hard"].any():
        return pd.DataFrame(columns=[*keys, *_side_cols("full"), *_side_cols("hard"), "rel_change"])
    full = m.groupby(list(keys), as_index=False).agg(
        **{c: (c, "sum") for c in (*MOMENT_COLS, "n_na")},
        lowest=("lowest", "min"),
        highest=("highest", "max"),
    )
    full = means(full, keys)  # moments add up across the two parts
    hard = means(m[m["flask_hard"].astype(bool)].drop(columns="flask_hard"), keys)
    out = full.merge(hard, on=list(keys), how="left", suffixes=("_full", "_hard"))
    out["rel_change"] = (out["mean_hard"] - out["mean_full"]) / out["mean_full"]
    return out[[*keys, *_side_cols("full"), *_side_cols("hard"), "rel_change"]]


def _side_cols(side: str) -> list[str]:
    return [f"{c}_{side}" for c in CELL_COLS]


def task_table(table: pd.DataFrame, model: str) -> pd.DataFrame:
    """The source-task rows of one model, for the sortable table."""
    rows = table[table["model"] == model].drop(columns="model")
    return rows.round({"mean": 3, "ci_low": 3, "ci_high": 3}).reset_index(drop=True)


def hard_table(table: pd.DataFrame) -> pd.DataFrame:
    """hard_vs_full, rounded for reading (relative change in %)."""
    if table.empty:
        return table
    out = table.copy()
    out["rel_change_%"] = (100 * out.pop("rel_change")).round(1)
    return out.round(3)
