"""Means with instance-clustered 95% CIs for any grouping of the filtered scores (model ×
skill × difficulty …), in one DuckDB pass: the shared engine of the radar and breakdown pages.

A cell's mean is over its non-N/A scores; ``n`` counts them, ``n_na`` the N/A ones,
``n_instances`` the instances with a score. A cell with only N/A scores has n = 0 and a NaN
mean; a cell with no rows at all is simply absent (charts show it empty, never as 0).
"""

from __future__ import annotations

import pandas as pd

from analysis import queries
from analysis.filters import Filters
from analysis.stats import moment_means
from analysis.store import Store

GROUPS = tuple(queries.CELL_GROUPS)
CELL_COLS = ["mean", "ci_low", "ci_high", "n", "n_instances", "n_na"]
_INSTANCE_GROUPS = {"difficulty", "source_task", "flask_hard"}


def needs_instances(f: Filters, groups: tuple[str, ...]) -> bool:
    filtered = f.domains or f.difficulties or f.source_tasks or f.flask_hard_only
    return bool(filtered or _INSTANCE_GROUPS & set(groups))


def cell_sql(f: Filters, groups: tuple[str, ...]) -> tuple[str, list]:
    """The moments query for ``groups`` under the filters, and its parameters."""
    unknown = [g for g in groups if g not in queries.CELL_GROUPS]
    if unknown:
        raise ValueError(f"unknown group {unknown[0]!r}; expected one of {', '.join(GROUPS)}")
    where, params = queries.filter_sql(f)
    joins: list[str] = []
    if needs_instances(f, groups):
        joins.append(queries.JOIN_INSTANCES)
    if "ability" in groups:
        joins.append(queries.JOIN_SKILLS)
    if "domain" in groups:
        joins.append(queries.JOIN_DOMAINS)
        params = [f.dataset, *params]
    exprs = ", ".join(queries.CELL_GROUPS[g] for g in groups)
    # One score per instance per cell only when the cell is a single skill of a single judge.
    per_score = "skill" in groups and bool(f.judge)
    template = queries.CELL_MOMENTS_PER_SCORE if per_score else queries.CELL_MOMENTS_PER_INSTANCE
    sql = template.format(
        groups=exprs, aliases=", ".join(groups), join=" ".join(joins), where=where
    )
    return sql, params


def cell_moments(store: Store, f: Filters, groups: tuple[str, ...]) -> pd.DataFrame:
    """The raw per-cell moments (additive: cells can be summed before ``means``). With a
    domain filter, only the chosen domains are kept as cells."""
    sql, params = cell_sql(f, groups)
    with store.read() as con:
        raw = con.execute(sql, params).df()
    if "domain" in groups and f.domains:
        raw = raw[raw["domain"].isin(f.domains)]
    return raw


def means(moments: pd.DataFrame, groups: tuple[str, ...]) -> pd.DataFrame:
    """Moments → the group columns, then mean, ci_low, ci_high, n, n_instances, n_na."""
    if moments.empty:
        return pd.DataFrame(columns=[*groups, *CELL_COLS])
    out = moment_means(moments)
    for col in ("n", "n_instances", "n_na"):
        out[col] = out[col].astype("int64")
    return out[[*groups, *CELL_COLS]].reset_index(drop=True)


def cell_means(store: Store, f: Filters, groups: tuple[str, ...]) -> pd.DataFrame:
    """One row per non-empty cell: the group columns, then mean, ci_low, ci_high, n,
    n_instances, n_na."""
    return means(cell_moments(store, f, groups), groups)
