"""Means with instance-clustered 95% CIs for any grouping of the filtered scores (model ×
skill × difficulty …), in one DuckDB pass: the shared engine of the radar and breakdown pages.

A cell's mean is over its non-N/A scores; ``n`` counts them, ``n_na`` the N/A ones,
``n_instances`` the instances with a score. A cell with only N/A scores has n = 0 and a NaN
mean; a cell with no rows at all is simply absent (charts show it empty, never as 0).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from analysis import queries
from analysis.filters import Filters
from analysis.stats import moment_means
from analysis.store import Store

GROUPS = tuple(queries.CELL_GROUPS)
CELL_COLS = ["mean", "ci_low", "ci_high", "n", "n_instances", "n_na"]
_INSTANCE_GROUPS = {"difficulty", "source_task", "flask_hard"}  # attributes of the instance
MAX_ABILITY_COLUMNS = 16  # past this many ability groups, the generic per-instance query


def _score_level(f: Filters) -> Filters:
    """The filters that a score row answers by itself (no instance attributes)."""
    return replace(f, domains=(), difficulties=(), source_tasks=(), flask_hard_only=False)


def needs_instances(f: Filters, groups: tuple[str, ...]) -> bool:
    filtered = f.domains or f.difficulties or f.source_tasks or f.flask_hard_only
    return bool(filtered or _INSTANCE_GROUPS & set(groups))


def cell_sql(
    f: Filters,
    groups: tuple[str, ...],
    abilities: list[str] | None = None,
    *,
    generic: bool = False,
) -> tuple[str, list]:
    """The moments query for ``groups`` under the filters, and its parameters. ``abilities``
    (every ability name in the skills table) enables the fast model × ability query;
    ``generic`` forces the general per-instance query (tests compare the two)."""
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
    join = " ".join(joins)
    exprs = ", ".join(f"{queries.CELL_GROUPS[g]} AS {g}" for g in groups)
    aliases = ", ".join(groups)
    rest = groups[1:] if groups[:1] == ("model",) and not generic else None
    if "skill" in groups and f.judge and not generic:
        # One score per instance per cell (a single skill of a single judge): the rows are the
        # per-instance sums already.
        sql = queries.CELL_MOMENTS_PER_SCORE.format(groups=exprs, join=join, where=where)
    elif rest and set(rest) <= _INSTANCE_GROUPS:
        inner_where, inner_params = queries.filter_sql(_score_level(f))
        outer_where, outer_params = queries.filter_sql(replace(f, judge=None))
        attrs = ", ".join(f"{queries.CELL_GROUPS[g]} AS {g}" for g in rest)
        sql = queries.CELL_MOMENTS_BY_INSTANCE.format(
            attrs=attrs, inner_where=inner_where, where=outer_where
        )
        params = [*inner_params, *outer_params]
    elif rest == ("ability",) and abilities and len(abilities) <= MAX_ABILITY_COLUMNS:
        inner_where, inner_params = queries.filter_sql(_score_level(f))
        outer_where, outer_params = queries.filter_sql(replace(f, judge=None))
        idx = range(len(abilities))
        sql = queries.CELL_MOMENTS_BY_ABILITY.format(
            inner_where=inner_where,
            where=outer_where,
            join=queries.JOIN_INSTANCES if needs_instances(f, ()) else "",
            inner=", ".join(queries.ABILITY_INNER.format(j=j, g=j + 1) for j in idx),
            outer=", ".join(queries.ABILITY_OUTER.format(j=j) for j in idx),
        )
        params = [list(abilities), *inner_params, *abilities, *outer_params]
    else:
        sql = queries.CELL_MOMENTS_PER_INSTANCE.format(
            groups=exprs, aliases=aliases, join=join, where=where
        )
    return sql, params


def query_moments(con, f: Filters, groups: tuple[str, ...]) -> pd.DataFrame:
    """The raw per-cell moments on an open connection (additive: cells can be summed before
    ``means``). With a domain filter, only the chosen domains are kept as cells."""
    abilities = None
    if "ability" in groups:
        abilities = [a for (a,) in con.execute(queries.ABILITY_NAMES).fetchall()]
    sql, params = cell_sql(f, groups, abilities)
    raw = con.execute(sql, params).df()
    if "n_rows" in raw:  # the ability query lists every ability: keep those with scores
        raw = raw[raw["n_rows"] > 0].drop(columns="n_rows")
    if "domain" in groups and f.domains:
        raw = raw[raw["domain"].isin(f.domains)]
    return raw


def cell_moments(store: Store, f: Filters, groups: tuple[str, ...]) -> pd.DataFrame:
    with store.read() as con:
        return query_moments(con, f, groups)


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
