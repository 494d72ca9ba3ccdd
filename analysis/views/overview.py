"""Data behind the Overview page and the sidebar: datasets, filter options, coverage and the
leaderboard (mean per ability and overall, with instance-bootstrap CIs and n)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from analysis.core.errors import StoreBusyError
from analysis.core.filters import FilterOptions, Filters, filter_sql
from analysis.core.store import Store
from analysis.core.taxonomy import ABILITIES, DIFFICULTY_LEVELS
from analysis.ingest.demo_panel import build_and_write_demo_with_panel
from analysis.stats.means import grouped_means
from analysis.stats.ranks import MIN_INSTANCES
from analysis.views.criteria import labels_in, with_labels
from analysis.views.scorers import JUDGES_OF_DATASET
from analysis.views.tables import fmt_ci, for_people
from judges.records import recover

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

# What the dataset asks for, per skill × domain: the slice's instances counted from the
# instances table alone (their own skill and domain labels), so Coverage needs no judge and
# shows before anything is scored. An instance counts toward each of its domains (FLASK's rule);
# no domain → "(unlabeled)". The last parameter keeps the domains the filter asked for (empty =
# all): an instance of Math and Coding, picked by Math, is not counted under Coding.
COVERAGE = """
WITH picked AS (
    SELECT i.instance_id, unnest(i.skills) AS skill,
           CASE WHEN len(i.domains) = 0 THEN ['(unlabeled)'] ELSE i.domains END AS domains
    FROM instances i
    WHERE {where}
)
SELECT skill, domain, count(DISTINCT instance_id) AS instances
FROM (SELECT instance_id, skill, unnest(domains) AS domain FROM picked)
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
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
WHERE {where}
GROUP BY ALL
"""


# The same sums read off the table the writes keep (core/score_sums.py), one judge chosen and
# every criterion on one scale: a row per model × ability group × instance, and the pooled row
# (grp NULL) per model × instance that Overall resamples.
STORED_SUMS = """
SELECT s.model, COALESCE(s.grp, ?) AS grp, s.instance_id, s.total, s.n, s.n_rows - s.n AS n_na
FROM score_sums s
JOIN instances i USING (dataset, instance_id)
WHERE {where}
"""

# Each ability group's scales in the dataset (as SCORE_SUMS_BY_ABILITY reads them).
GROUP_SCALES = """
SELECT COALESCE(ability, label, skill) AS grp, min(scale_min), max(scale_min), min(scale_max),
       max(scale_max)
FROM dataset_skills WHERE dataset = ?
GROUP BY 1
"""

COUNT_DATASETS = "SELECT count(*) FROM datasets"


OVERALL = "Overall"
OVERALL_01 = "Overall (0–1, criteria rescaled)"
FEW_MARK = "†"  # after a mean whose CI rests on fewer than MIN_INSTANCES instances


def ensure_data(store: Store) -> bool:
    """Create the store, and build the simulated demo when it holds no dataset yet.

    Returns True when the demo was built now.
    """
    store.ensure()
    with store.read() as con:
        empty = con.execute(COUNT_DATASETS).fetchone()[0] == 0
    if empty:
        build_and_write_demo_with_panel(store)  # the base demo and its simulated judge panel
    return empty


def recover_answers(store: Store) -> int:
    """Store the answers that judging runs paid for but could not store (killed, or the store
    was busy or the disk full: they wait in the run's journal), so the app shows them and no
    later run pays for them again. Returns how many. A store another process holds now leaves
    them for the next start or judging run, which recover them first too."""
    try:
        return recover(store)
    except StoreBusyError:
        return 0


def datasets(store: Store) -> pd.DataFrame:
    """One row per dataset with provenance and counts, real data first."""
    with store.read() as con:
        return con.execute(DATASET_SUMMARY).df()


def datasets_table(sets: pd.DataFrame) -> pd.DataFrame:
    """``datasets()`` for reading: readable headers, blanks (no seed on real data), yes/no."""
    return for_people(sets)


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
    """Instances per skill × domain in the slice (long format: skill, label (the dataset's),
    domain, instances), from the instances alone: the sidebar's domain, difficulty, source-task
    and FLASK-Hard filters apply; its judge and models do not (an instance is asked of every
    model)."""
    where, params = filter_sql(replace(filters, judge=None, models=()), alias="i")
    domains = list(filters.domains)
    with store.read() as con:
        cov = con.execute(COVERAGE.format(where=where), [*params, domains, domains]).df()
        return with_labels(cov, labels_in(con, filters.dataset))


def leaderboard(store: Store, filters: Filters, *, n_boot: int = 1000) -> pd.DataFrame:
    """Long format: model, group (an ability or Overall), mean, ci_low, ci_high, n,
    n_instances, n_na, few_instances (the CI rests on fewer than 5 instances), rank (among the
    models in that group; equal means, compared exactly, share a rank: 1, 2, 2, 4), rank_low,
    rank_high (its 95% interval, ranks recomputed in every resample). Overall pools every
    skill score of the model (the mean over all non-N/A skill scores); the CIs resample
    instances, one set of resamples for every mean and rank."""
    where, params = filter_sql(filters)
    with store.read() as con:
        both = _stored_sums(con, filters, where, params)
        if both is None:
            rows = con.execute(SCORE_SUMS_BY_ABILITY.format(where=where), params).df()
            both = _with_overall(rows)
    if both.empty:
        return grouped_means(both, ["model", "group"], rank_by="model")
    table = grouped_means(both, ["model", "group"], n_boot=n_boot, rank_by="model")
    order = {g: i for i, g in enumerate((*ABILITIES, OVERALL, OVERALL_01))}
    table["_o"] = table["group"].map(order).fillna(len(order) - 0.5)
    return table.sort_values(["model", "_o"]).drop(columns="_o").reset_index(drop=True)


def _stored_sums(con, f: Filters, where: str, params: list) -> pd.DataFrame | None:
    """The leaderboard's input (model, group, instance_id, total, n, n_na) from the stored
    per-instance sums, or None where they do not serve: no judge chosen, or criteria whose
    scales differ (Overall then pools on 0-1, from the scores themselves)."""
    if not f.judge:
        return None
    scales = {g: tuple(x) for g, *x in con.execute(GROUP_SCALES, [f.dataset]).fetchall()}
    rows = con.execute(STORED_SUMS.format(where=where), [OVERALL, *params]).df()
    present = set(rows["grp"]) - {OVERALL}
    # a group without a criterion row is read on the default 1-5 scale
    found = {scales.get(g, (1.0, 1.0, 5.0, 5.0)) for g in present}
    if len(found) > 1 or any(lo != hi for lo, hi, *_ in found) or any(a != b for *_, a, b in found):
        return None
    return rows.rename(columns={"grp": "group"})


def _with_overall(rows: pd.DataFrame) -> pd.DataFrame:
    """Per-group sums (SCORE_SUMS_BY_ABILITY) plus Overall: every group of an instance pooled,
    on 0-1 when the criteria's scales differ (pooling them is only meaningful there)."""
    if rows.empty:
        return rows.rename(columns={"grp": "group"})
    mixed = rows[["scale_min", "scale_max"]].drop_duplicates().shape[0] > 1
    pooled = rows.assign(total=rows["total01"]) if mixed else rows
    overall = (
        pooled.groupby(["model", "instance_id"], as_index=False)[["total", "n", "n_na"]]
        .sum()
        .assign(grp=OVERALL_01 if mixed else OVERALL)
    )
    return pd.concat([rows, overall], ignore_index=True).rename(columns={"grp": "group"})


def leaderboard_wide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per model, ranked by Overall (tied means share a rank): 'mean [lo, hi]' per
    group (marked FEW_MARK when the CI rests on fewer than 5 instances; no CI from one), the
    rank's 95% interval, n, and whether any CI in the row rests on fewer than 5 instances."""
    if table.empty:
        return pd.DataFrame()
    cells = [
        fmt_ci(*row[:3]) + (f" {FEW_MARK}" if row[3] else "")
        for row in table[["mean", "ci_low", "ci_high", "few_instances"]].to_numpy()
    ]
    wide = table.assign(cell=cells).pivot(index="model", columns="group", values="cell")
    top = OVERALL if OVERALL in wide.columns else OVERALL_01
    overall = table[table["group"] == top].set_index("model")
    cols = [c for c in (top, *ABILITIES) if c in wide.columns]
    cols += [c for c in wide.columns if c not in cols]
    wide = wide[cols].fillna("")
    spans = [_rank_span(lo, hi) for lo, hi in overall[["rank_low", "rank_high"]].to_numpy()]
    # by model, as the columns below: the pivot's rows are in its own (sorted) order
    wide["rank 95% interval"] = pd.Series(spans, index=overall.index, dtype=object)
    wide["n scores"] = overall["n"]
    wide["n instances"] = overall["n_instances"]
    wide[f"CI from < {MIN_INSTANCES} instances"] = table.groupby("model")["few_instances"].any()
    order = overall.assign(_m=overall.index).sort_values(["rank", "_m"], na_position="last")
    wide = wide.loc[order.index].reset_index()
    wide.insert(0, "rank", order["rank"].astype("Int64").to_numpy())
    wide.columns.name = None  # the pivot's "group" would show as a header of headers
    return wide


# The leaderboard's fixed columns for people (its other columns are named after the groups).
LEADERBOARD_HEADERS = {
    "rank": "Rank",
    "model": "Model",
    "rank 95% interval": "Rank (95% interval)",
    "n scores": "Scores (n)",
    "n instances": "Instances",
}


def leaderboard_table(table: pd.DataFrame) -> pd.DataFrame:
    """``leaderboard_wide`` for the page: readable headers on its fixed columns (the group
    columns keep their names: a dataset's own criterion may be called anything), whole numbers,
    blanks, yes/no."""
    wide = leaderboard_wide(table)
    fixed = [c for c in wide.columns if c in LEADERBOARD_HEADERS or c.startswith("CI from")]
    people = for_people(wide[fixed], headers=LEADERBOARD_HEADERS)
    people.columns = fixed  # back to the raw names, to put the texts in place
    out = wide.copy()
    out[fixed] = people
    return out.rename(columns=LEADERBOARD_HEADERS)


def _rank_span(lo: float, hi: float) -> str:
    """'2–5', '1' when the interval is one rank, '' when there is none."""
    if pd.isna(lo) or pd.isna(hi):
        return ""
    return f"{int(lo)}" if lo == hi else f"{int(lo)}–{int(hi)}"


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
