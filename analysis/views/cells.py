"""Means with instance-clustered 95% CIs for any grouping of the filtered scores (model ×
skill × difficulty …), in one DuckDB pass: the shared engine of the radar and breakdown pages.

A cell's mean is over its non-N/A scores; ``n`` counts them, ``n_na`` the N/A ones,
``n_instances`` the instances with a score. A cell with only N/A scores has n = 0 and a NaN
mean; a cell with no rows at all is simply absent (charts show it empty, never as 0).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats.means import moment_means

CELL_GROUPS = {  # group name → its SQL expression (selected AS the name)
    "model": "s.model",
    "skill": "s.skill",
    "ability": "COALESCE(k.ability, k.label, s.skill)",
    "difficulty": "i.difficulty::INTEGER",
    "domain": "d.domain",
    "source_task": "COALESCE(i.source_task, '(none)')",
    "flask_hard": "i.flask_hard",
}

JOIN_INSTANCES = "JOIN instances i USING (dataset, instance_id)"

# A dataset's own criterion, else the shared skill (schema.sql: criteria belong to a dataset).
JOIN_SKILLS = "LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill"

# FLASK's rule: an instance counts toward each of its domains; no domain → "(unlabeled)".
JOIN_DOMAINS = """JOIN (
    SELECT dataset, instance_id,
           unnest(CASE WHEN len(domains) = 0 THEN ['(unlabeled)'] ELSE domains END) AS domain
    FROM instances WHERE dataset = ?
) d USING (dataset, instance_id)"""

# A cell that holds at most one score per instance (its groups include the skill and one judge
# is chosen: latest_scores is unique per dataset, instance, model, judge, skill): the rows are
# the per-instance sums already, so no inner aggregate is needed.
CELL_MOMENTS_PER_SCORE = """
SELECT {groups},
       sum(s.score) AS total, count(s.score) AS n, sum(s.score * s.score) AS total_sq,
       sum(s.score) AS cross, count(s.score) AS n_sq, count(s.score) AS n_instances,
       count(*) - count(s.score) AS n_na, min(s.score) AS lowest, max(s.score) AS highest
FROM latest_scores s {join}
WHERE {where}
GROUP BY ALL
"""

# Cells that pool several scores of an instance: sum per instance first, so the CI treats the
# instance as the unit. {per_instance} is one of the CTE bodies below.
_OUTER_MOMENTS = """
       sum(t) AS total, sum(c) AS n, sum(t * t) AS total_sq, sum(t * c) AS cross,
       sum(c * c) AS n_sq, count(*) FILTER (WHERE c > 0) AS n_instances, sum(na) AS n_na,
       min(t / c) AS lowest, max(t / c) AS highest"""

# Any groups: one inner group per cell × instance (the general case, e.g. no judge chosen).
CELL_MOMENTS_PER_INSTANCE = (
    """
WITH per_instance AS (
    SELECT {groups}, s.instance_id,
           sum(s.score) AS t, count(s.score) AS c, count(*) - count(s.score) AS na
    FROM latest_scores s {join}
    WHERE {where}
    GROUP BY ALL
)
SELECT {aliases},"""
    + _OUTER_MOMENTS
    + """
FROM per_instance
GROUP BY ALL
"""
)

# Model × attributes of the instance (source task, difficulty …): sum per model × instance
# first, straight off the scores (3× fewer groups than with a skill, and no join yet), then join
# the instances for their attributes and filters. {inner_where} holds the score-level filters,
# {where} all of them (alias s = the per-instance rows).
CELL_MOMENTS_BY_INSTANCE = (
    """
WITH per_instance AS (
    SELECT s.dataset, s.model, s.instance_id,
           sum(s.score) AS t, count(s.score) AS c, count(*) - count(s.score) AS na
    FROM latest_scores s
    WHERE {inner_where}
    GROUP BY s.dataset, s.model, s.instance_id
)
SELECT s.model AS model, {attrs},"""
    + _OUTER_MOMENTS
    + """
FROM per_instance s JOIN instances i USING (dataset, instance_id)
WHERE {where}
GROUP BY ALL
"""
)

# Model × ability: per model × instance one sum/count per ability (FILTER on the ability's
# position g in the bound list), then one row per ability again (unnest). {inner} / {outer}
# repeat per ability j; {join} adds the instances when the filters need them.
ABILITY_NAMES = """
SELECT DISTINCT COALESCE(ability, label, skill) FROM dataset_skills WHERE dataset = ? ORDER BY 1
"""

ABILITY_INNER = """sum(score) FILTER (WHERE g = {g}) AS t{j},
    count(score) FILTER (WHERE g = {g}) AS c{j}, count(*) FILTER (WHERE g = {g}) AS r{j}"""

ABILITY_OUTER = """struct_pack(ability := ?::VARCHAR, total := sum(t{j}), n := sum(c{j}),
    total_sq := sum(t{j} * t{j}), cross := sum(t{j} * c{j}), n_sq := sum(c{j} * c{j}),
    n_instances := count(*) FILTER (WHERE c{j} > 0), n_na := sum(r{j}) - sum(c{j}),
    n_rows := sum(r{j}), lowest := min(t{j} / c{j}), highest := max(t{j} / c{j}))"""

CELL_MOMENTS_BY_ABILITY = (
    """
WITH rows AS (
    SELECT s.dataset, s.model, s.instance_id, s.score,
           list_position(?::VARCHAR[], """
    + CELL_GROUPS["ability"]
    + """) AS g
    FROM latest_scores s
    LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
    WHERE {inner_where}
), per_instance AS (
    SELECT dataset, model, instance_id, {inner}
    FROM rows GROUP BY dataset, model, instance_id
), wide AS (
    SELECT s.model, [{outer}] AS cells
    FROM per_instance s {join}
    WHERE {where}
    GROUP BY s.model
)
SELECT model, unnest(cells, recursive := true) FROM wide
"""
)


# With one judge chosen, the pooled cells read the per-instance sums the writes keep
# (core/score_sums.py: one row per model × instance × ability group, grp NULL = all skills
# pooled), so no query groups the raw scores per instance. {join} adds the instances when the
# groups or filters need them; the moments are those of _OUTER_MOMENTS on the stored sums.
SUM_MOMENTS = """
SELECT s.model AS model, {groups},
       sum(s.total) AS total, sum(s.n) AS n, sum(s.total * s.total) AS total_sq,
       sum(s.total * s.n) AS cross, sum(s.n * s.n) AS n_sq,
       count(*) FILTER (WHERE s.n > 0) AS n_instances, sum(s.n_rows) - sum(s.n) AS n_na,
       min(s.total / s.n) AS lowest, max(s.total / s.n) AS highest
FROM score_sums s {join}
WHERE {where} AND s.grp IS {pooled}NULL
GROUP BY ALL
"""

GROUPS = tuple(CELL_GROUPS)
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
    unknown = [g for g in groups if g not in CELL_GROUPS]
    if unknown:
        raise ValueError(f"unknown group {unknown[0]!r}; expected one of {', '.join(GROUPS)}")
    where, params = filter_sql(f)
    joins: list[str] = []
    if needs_instances(f, groups):
        joins.append(JOIN_INSTANCES)
    if "ability" in groups:
        joins.append(JOIN_SKILLS)
    if "domain" in groups:
        joins.append(JOIN_DOMAINS)
        params = [f.dataset, *params]
    join = " ".join(joins)
    exprs = ", ".join(f"{CELL_GROUPS[g]} AS {g}" for g in groups)
    aliases = ", ".join(groups)
    rest = groups[1:] if groups[:1] == ("model",) and not generic else None
    if "skill" in groups and f.judge and not generic:
        # One score per instance per cell (a single skill of a single judge): the rows are the
        # per-instance sums already.
        sql = CELL_MOMENTS_PER_SCORE.format(groups=exprs, join=join, where=where)
    elif f.judge and rest and (rest == ("ability",) or set(rest) <= _INSTANCE_GROUPS):
        sql, params = stored_sums_sql(f, rest)
    elif rest and set(rest) <= _INSTANCE_GROUPS:
        inner_where, inner_params = filter_sql(_score_level(f))
        outer_where, outer_params = filter_sql(replace(f, judge=None))
        attrs = ", ".join(f"{CELL_GROUPS[g]} AS {g}" for g in rest)
        sql = CELL_MOMENTS_BY_INSTANCE.format(
            attrs=attrs, inner_where=inner_where, where=outer_where
        )
        params = [*inner_params, *outer_params]
    elif rest == ("ability",) and abilities and len(abilities) <= MAX_ABILITY_COLUMNS:
        inner_where, inner_params = filter_sql(_score_level(f))
        outer_where, outer_params = filter_sql(replace(f, judge=None))
        idx = range(len(abilities))
        sql = CELL_MOMENTS_BY_ABILITY.format(
            inner_where=inner_where,
            where=outer_where,
            join=JOIN_INSTANCES if needs_instances(f, ()) else "",
            inner=", ".join(ABILITY_INNER.format(j=j, g=j + 1) for j in idx),
            outer=", ".join(ABILITY_OUTER.format(j=j) for j in idx),
        )
        params = [list(abilities), *inner_params, *abilities, *outer_params]
    else:
        sql = CELL_MOMENTS_PER_INSTANCE.format(
            groups=exprs, aliases=aliases, join=join, where=where
        )
    return sql, params


def stored_sums_sql(f: Filters, rest: tuple[str, ...]) -> tuple[str, list]:
    """The moments of model × ``rest`` (the ability, or attributes of the instance) from the
    stored per-instance sums of the one judge ``f`` names."""
    where, params = filter_sql(f)
    by_ability = rest == ("ability",)
    attrs = ["s.grp AS ability"] if by_ability else [f"{CELL_GROUPS[g]} AS {g}" for g in rest]
    sql = SUM_MOMENTS.format(
        groups=", ".join(attrs),
        join=JOIN_INSTANCES if needs_instances(f, rest) else "",
        where=where,
        pooled="NOT " if by_ability else "",
    )
    return sql, params


def query_moments(con, f: Filters, groups: tuple[str, ...]) -> pd.DataFrame:
    """The raw per-cell moments on an open connection (additive: cells can be summed before
    ``means``). With a domain filter, only the chosen domains are kept as cells."""
    abilities = None
    if "ability" in groups and not f.judge:  # the generic ability query lists them
        abilities = [a for (a,) in con.execute(ABILITY_NAMES, [f.dataset]).fetchall()]
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
