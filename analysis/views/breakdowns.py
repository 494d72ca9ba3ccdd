"""Data behind the Breakdowns page: skill means by difficulty level, by domain (FLASK's rule:
an instance counts toward each of its domains), by source task, and FLASK-Hard against the
full set. Every cell carries its n and an instance-clustered 95% CI (see views/cells.py)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.stats.means import MOMENT_COLS
from analysis.views.cells import CELL_COLS, cell_means, means, query_moments
from analysis.views.criteria import labels_in, split_labels, with_labels
from analysis.views.tables import for_people, people_csv


def _labelled(store: Store, f: Filters, groups: tuple[str, ...]) -> pd.DataFrame:
    """Cell means with the criteria's labels, on one connection (opening the file is a good
    part of a page query's cost)."""
    with store.read() as con:
        moments = query_moments(con, f, groups)
        labels = labels_in(con, f.dataset)
    return with_labels(means(moments, groups), labels)


def by_difficulty(store: Store, f: Filters) -> pd.DataFrame:
    """model, skill, label (the dataset's label of the criterion), difficulty (1-5; NaN =
    unlabeled), cell columns."""
    return _labelled(store, f, ("model", "skill", "difficulty"))


def by_domain(store: Store, f: Filters) -> pd.DataFrame:
    """model, skill, label, domain, cell columns. A two-domain instance's scores count in
    both."""
    return _labelled(store, f, ("model", "skill", "domain"))


def by_source_task(store: Store, f: Filters) -> pd.DataFrame:
    """model, source_task, cell columns (all skills of an instance pooled, instance-clustered
    CI), sorted by model then mean descending."""
    out = cell_means(store, f, ("model", "source_task"))
    return out.sort_values(["model", "mean"], ascending=[True, False]).reset_index(drop=True)


def hard_vs_full(store: Store, f: Filters) -> pd.DataFrame:
    """Per model × skill (and its label): the mean on the full set and on its FLASK-Hard
    instances, with CIs and n, and the relative change (hard - full) / full. Empty when no
    instance is in FLASK-Hard. The other filters apply to both sides; the FLASK-Hard toggle is
    ignored."""
    keys = ("model", "skill")
    with store.read() as con:
        m = query_moments(con, replace(f, flask_hard_only=False), (*keys, "flask_hard"))
        labels = labels_in(con, f.dataset)
    if m.empty or not m["flask_hard"].any():
        cols = [*keys, "label", *_side_cols("full"), *_side_cols("hard"), "rel_change"]
        return pd.DataFrame(columns=cols)
    full = m.groupby(list(keys), as_index=False).agg(
        **{c: (c, "sum") for c in (*MOMENT_COLS, "n_na")},
        lowest=("lowest", "min"),
        highest=("highest", "max"),
    )
    full = means(full, keys)  # moments add up across the two parts
    hard = means(m[m["flask_hard"].astype(bool)].drop(columns="flask_hard"), keys)
    out = full.merge(hard, on=list(keys), how="left", suffixes=("_full", "_hard"))
    out["rel_change"] = (out["mean_hard"] - out["mean_full"]) / out["mean_full"]
    out = out[[*keys, *_side_cols("full"), *_side_cols("hard"), "rel_change"]]
    return with_labels(out, labels)


def _side_cols(side: str) -> list[str]:
    return [f"{c}_{side}" for c in CELL_COLS]


def task_table(table: pd.DataFrame, model: str) -> pd.DataFrame:
    """The source-task rows of one model, for the sortable table (views/tables.py's formats;
    source tasks by their proper names)."""
    rows = table[table["model"] == model].drop(columns="model").reset_index(drop=True)
    return for_people(rows)


def _hard_rows(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["rel_change_%"] = 100 * out.pop("rel_change")
    return out


def hard_table(table: pd.DataFrame) -> pd.DataFrame:
    """hard_vs_full for reading: skill labels (the dataset's), relative change in %."""
    rows, labels = split_labels(_hard_rows(table))
    return for_people(rows, labels=labels)


def hard_csv(table: pd.DataFrame, fmt: str = "csv") -> bytes:
    """``hard_table`` as CSV (or Parquet), numbers at full precision."""
    rows, labels = split_labels(_hard_rows(table))
    return people_csv(rows, labels=labels, fmt=fmt)


def table_csv(table: pd.DataFrame, fmt: str = "csv") -> bytes:
    """A breakdown (by difficulty, domain or source task) as CSV: skill labels (the dataset's),
    source tasks by their proper names, readable headers, numbers at full precision; or the
    same as Parquet."""
    rows, labels = split_labels(table)
    return people_csv(rows, labels=labels, fmt=fmt)
