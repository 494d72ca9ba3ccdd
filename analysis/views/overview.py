"""Data behind the Overview page and the sidebar: datasets, filter options, coverage and the
leaderboard (mean per ability and overall, with instance-bootstrap CIs and n)."""

from __future__ import annotations

import pandas as pd

from analysis.core.filters import FilterOptions, Filters, filter_sql
from analysis.core.store import Store
from analysis.core.taxonomy import ABILITIES, DIFFICULTY_LEVELS
from analysis.ingest.demo import build_and_write_demo
from analysis.stats.means import grouped_means
from analysis.views.scorers import JUDGES_OF_DATASET

DATASET_SUMMARY = """
SELECT d.dataset, d.title,
       (SELECT count(*) FROM instances i WHERE i.dataset = d.dataset) AS instances,
       (SELECT count(DISTINCT model) FROM responses r WHERE r.dataset = d.dataset) AS models,
       (SELECT count(*) FROM responses r WHERE r.dataset = d.dataset) AS responses,
       (SELECT count(DISTINCT judge) FROM latest_scores s WHERE s.dataset = d.dataset) AS judges,
       (SELECT count(*) FROM latest_scores s WHERE s.dataset = d.dataset) AS scores,
       d.simulated, d.seed, d.source, d.imported_at, d.description
FROM datasets d
ORDER BY d.simulated, d.imported_at DESC
"""


MODELS_OF_DATASET = """
SELECT model FROM (
    SELECT model FROM responses WHERE dataset = ?
    UNION SELECT model FROM latest_scores WHERE dataset = ?
) GROUP BY model ORDER BY model
"""

INSTANCE_FACETS = """
SELECT list_sort(list_distinct(flatten(list(domains)))) AS domains,
       list_sort(list_distinct(list(difficulty) FILTER (WHERE difficulty IS NOT NULL))) AS levels,
       list_sort(list_distinct(list(source_task) FILTER (WHERE source_task IS NOT NULL))) AS tasks,
       bool_or(flask_hard) AS has_hard
FROM instances WHERE dataset = ?
"""

# Instances in the filtered slice (scores of the chosen judge), counted per skill × domain.
# An instance counts toward each of its domains (FLASK's rule); no domain → "(unlabeled)".
# The second parameter restricts the columns to the domains the filter asked for (empty = all).
COVERAGE = """
WITH picked AS (
    SELECT DISTINCT s.instance_id, s.skill,
           CASE WHEN len(i.domains) = 0 THEN ['(unlabeled)'] ELSE i.domains END AS domains
    FROM latest_scores s JOIN instances i USING (dataset, instance_id)
    WHERE {where}
)
SELECT skill, domain, count(*) AS instances
FROM (SELECT skill, unnest(domains) AS domain FROM picked)
WHERE len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], domain)
GROUP BY ALL
"""

# Per model × group × instance sums, the input of the instance-level (cluster) bootstrap.
SCORE_SUMS_BY_ABILITY = """
SELECT s.model, COALESCE(k.ability, k.label, s.skill) AS grp, s.instance_id,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max,
       sum(s.score) AS total, count(s.score) AS n, count(*) - count(s.score) AS n_na,
       -- on 0-1, for pooling criteria whose scales differ
       sum((s.score - COALESCE(k.scale_min, 1)) / (COALESCE(k.scale_max, 5)
           - COALESCE(k.scale_min, 1))) AS total01
FROM latest_scores s
JOIN instances i USING (dataset, instance_id)
LEFT JOIN skills k ON k.skill = s.skill
WHERE {where}
GROUP BY ALL
"""


COUNT_DATASETS = "SELECT count(*) FROM datasets"


OVERALL = "Overall"
OVERALL_01 = "Overall (0–1, criteria rescaled)"


def ensure_data(store: Store) -> bool:
    """Create the store, and build the simulated demo when it holds no dataset yet.

    Returns True when the demo was built now.
    """
    store.ensure()
    with store.read() as con:
        empty = con.execute(COUNT_DATASETS).fetchone()[0] == 0
    if empty:
        build_and_write_demo(store)
    return empty


def datasets(store: Store) -> pd.DataFrame:
    """One row per dataset with provenance and counts, real data first."""
    with store.read() as con:
        return con.execute(DATASET_SUMMARY).df()


def filter_options(store: Store, dataset: str) -> FilterOptions:
    with store.read() as con:
        judges = con.execute(JUDGES_OF_DATASET, [dataset]).fetchall()
        models = con.execute(MODELS_OF_DATASET, [dataset, dataset]).fetchall()
        domains, levels, tasks, has_hard = con.execute(INSTANCE_FACETS, [dataset]).fetchone()
    return FilterOptions(
        judges=tuple(j for j, _, _ in judges),
        judge_kinds={j: k or "llm" for j, k, _ in judges},
        models=tuple(m for (m,) in models),
        domains=tuple(domains or ()),
        difficulties=tuple(int(x) for x in levels or ()),
        source_tasks=tuple(tasks or ()),
        has_flask_hard=bool(has_hard),
    )


def coverage(store: Store, filters: Filters) -> pd.DataFrame:
    """Instances per skill × domain in the slice (long format: skill, domain, instances)."""
    where, params = filter_sql(filters)
    domains = list(filters.domains)
    with store.read() as con:
        return con.execute(COVERAGE.format(where=where), [*params, domains, domains]).df()


def leaderboard(store: Store, filters: Filters, *, n_boot: int = 1000) -> pd.DataFrame:
    """Long format: model, group (an ability or Overall), mean, ci_low, ci_high, n,
    n_instances, n_na. Overall pools every skill score of the model (the mean over all
    non-N/A skill scores); the CI resamples instances."""
    where, params = filter_sql(filters)
    with store.read() as con:
        rows = con.execute(SCORE_SUMS_BY_ABILITY.format(where=where), params).df()
    if rows.empty:
        return grouped_means(rows, ["model", "group"])
    # Pooling criteria with different scales (custom datasets) is only meaningful on 0-1.
    mixed = rows[["scale_min", "scale_max"]].drop_duplicates().shape[0] > 1
    pooled = rows.assign(total=rows["total01"]) if mixed else rows
    overall = (
        pooled.groupby(["model", "instance_id"], as_index=False)[["total", "n", "n_na"]]
        .sum()
        .assign(grp=OVERALL_01 if mixed else OVERALL)
    )
    both = pd.concat([rows, overall], ignore_index=True).rename(columns={"grp": "group"})
    table = grouped_means(both, ["model", "group"], n_boot=n_boot)
    order = {g: i for i, g in enumerate((*ABILITIES, OVERALL, OVERALL_01))}
    table["_o"] = table["group"].map(order).fillna(len(order) - 0.5)
    return table.sort_values(["model", "_o"]).drop(columns="_o").reset_index(drop=True)


def leaderboard_wide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per model, ranked by Overall: 'mean [lo, hi]' per group, and n."""
    if table.empty:
        return pd.DataFrame()
    text = table.assign(
        cell=table.apply(lambda r: f"{r['mean']:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]", axis=1)
    )
    wide = text.pivot(index="model", columns="group", values="cell")
    top = OVERALL if OVERALL in wide.columns else OVERALL_01
    overall = table[table["group"] == top].set_index("model")
    cols = [c for c in (top, *ABILITIES) if c in wide.columns]
    cols += [c for c in wide.columns if c not in cols]
    wide = wide[cols]
    wide["n scores"] = overall["n"]
    wide["n instances"] = overall["n_instances"]
    wide = wide.loc[overall["mean"].sort_values(ascending=False).index]
    wide = wide.reset_index()
    wide.insert(0, "rank", range(1, len(wide) + 1))
    return wide


def difficulty_label(level: int) -> str:
    return f"{level} · {DIFFICULTY_LEVELS.get(level, '?')}"


def simulated_info(sets: pd.DataFrame, dataset: str) -> tuple[bool, int | None]:
    """(simulated?, seed) of a dataset, read off ``datasets()`` (no second query): for the
    banner every page shows on simulated data."""
    row = sets[sets["dataset"] == dataset]
    if row.empty:
        return False, None
    seed = row["seed"].iloc[0]
    return bool(row["simulated"].iloc[0]), None if pd.isna(seed) else int(seed)
