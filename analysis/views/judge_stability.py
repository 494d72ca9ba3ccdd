"""Judges page, Stability: does an LLM judge give the same scores when asked the same question
again? Krippendorff's α between its runs on the items scored in two or more of them, per skill
and pooled, next to the humans' α (how far people agree with one another) and FLASK's published
α of GPT-4 over three runs at temperature 1.0.

The runs are the raters and an item (instance × model × skill) the unit: every run's scores are
read, superseded rows included (a re-judge supersedes the older scores but keeps them; a
repeat's scores are history from the start), one value per (run, item). The runs of one repeat
(judges/repeat.py: an interrupted repeat and its resumption are two runs on disjoint items)
count as one rater. N/A is no
rating. CIs resample instances. A repeat is launched from the section's form or with
``finegrain judge --repeat-of JUDGE``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analysis.core.errors import InputError, NotFoundError
from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.ingest.published import published_agreement
from analysis.stats.agreement_bootstrap import raters_alpha_groups
from analysis.stats.means import N_BOOT, bootstrap_weights, cluster_bootstrap_means
from analysis.stats.ranks import MIN_INSTANCES
from analysis.views.agreement import SCOPE_ALL, SCOPE_CRITERION, rater_agreement
from analysis.views.criteria import criterion_labels
from analysis.views.guidance import EmptyState
from analysis.views.scorers import skill_order
from analysis.views.tables import for_people, table_bytes
from judges.config import BACKEND_NAMES
from judges.repeat import RepeatPlan, plan_repeat, repeat_of

# Every run's numeric scores of the LLM judges on the items two or more runs of the same judge
# scored (history included: superseded rows are the earlier runs' answers).
RUN_SCORES = """
SELECT s.judge, s.run_id, s.instance_id, s.model, s.skill, s.score
FROM scores s JOIN instances i USING (dataset, instance_id)
WHERE {where} AND s.score IS NOT NULL
  AND s.judge IN (SELECT judge FROM judges WHERE kind = 'llm')
WINDOW item AS (PARTITION BY s.judge, s.instance_id, s.model, s.skill)
QUALIFY min(s.run_id) OVER item <> max(s.run_id) OVER item
"""

# The dataset's runs (a repeat's number is read from its source).
RUN_SOURCES = "SELECT run_id, source FROM runs WHERE dataset = ?"

# The LLM judges with scores in the slice, the number of their runs, and whether Finegrain can
# call them again (a judge run by it: a backend it knows, a stored configuration).
LLM_JUDGES = """
SELECT s.judge, count(DISTINCT s.run_id) AS runs, any_value(j.backend) AS backend,
       any_value(j.params) IS NOT NULL AS has_params
FROM scores s JOIN instances i USING (dataset, instance_id) JOIN judges j ON j.judge = s.judge
WHERE {where} AND j.kind = 'llm'
GROUP BY s.judge ORDER BY s.judge
"""

# Krippendorff's own bar (Content Analysis, 2004): α ≥ 0.800 to rely on data, ≥ 0.667 for
# tentative conclusions at most. A judge whose α is below 0.667 with its whole 95% CI gives
# scores that a second run would not confirm: flagged "unstable".
UNSTABLE_ALPHA = 0.667
MIN_ITEMS = 30  # fewer repeated items than this: no flag (too few to claim instability)
ALPHAS = ("alpha_ordinal", "alpha_interval")
LEVELS = {"alpha_ordinal": "ordinal", "alpha_interval": "interval"}
DEFAULT_TEMPERATURE = 1.0  # FLASK's repeats of GPT-4 were at 1.0


@dataclass(frozen=True)
class Stability:
    """The section's data: ``table`` one row per judge × scope (each criterion, then all of
    them pooled: skill None) with alpha_ordinal / alpha_interval and their CIs, same_rate (the
    share of pairs of runs giving an item the same score) and its CI, n_items, n_instances,
    n_runs, the humans' α of that criterion, and unstable; ``humans`` the humans' α per scope;
    ``published`` FLASK's GPT-4 α over 3 runs per skill; ``without_repeat`` the LLM judges with
    no item scored in two runs; ``repeatable`` those the form can ask again."""

    table: pd.DataFrame
    humans: pd.DataFrame
    published: pd.DataFrame
    judges: tuple[str, ...]
    without_repeat: tuple[str, ...]
    repeatable: tuple[str, ...]
    labels: dict[str, str]
    note: EmptyState | None = None  # judges without a repeat: why, and how to launch one

    def label(self, skill: str | None) -> str:
        return "All criteria (pooled)" if pd.isna(skill) else self.labels.get(skill, skill)


def stability(store: Store, filters: Filters, n_boot: int = N_BOOT, seed: int = 0) -> Stability:
    """Every judge's stability between its runs in the sidebar's slice (its judge ignored)."""
    f = replace(filters, judge=None)
    where, params = filter_sql(f)
    with store.read() as con:
        rows = con.execute(RUN_SCORES.format(where=where), params).df()
        sources = dict(con.execute(RUN_SOURCES, [f.dataset]).fetchall())
        judges = con.execute(LLM_JUDGES.format(where=where), params).df()
    rows = _one_value_per_rater(rows, sources)
    parts = [_judge_table(r, j, n_boot, seed) for j, r in rows.groupby("judge", sort=True)]
    table = pd.concat(parts, ignore_index=True) if parts else _empty_table()
    humans = _humans(store, f, n_boot, seed)
    table = _with_humans(table, humans)
    done = set(table["judge"])
    can = judges["backend"].isin(BACKEND_NAMES) & judges["has_params"]
    without = tuple(j for j in judges["judge"] if j not in done)
    repeatable = tuple(judges.loc[can, "judge"])
    return Stability(
        table=table,
        humans=humans,
        published=_published(),
        judges=tuple(judges["judge"]),
        without_repeat=without,
        repeatable=repeatable,
        labels=criterion_labels(store, f.dataset),
        note=_note(f.dataset, without, repeatable, blocks=table.empty)
        if len(judges)
        else _NO_JUDGE,
    )


_NO_JUDGE = EmptyState(
    "no_llm_judge",
    "No LLM judge in this slice.",
    "No LLM judge scored the responses of the sidebar's slice: widen the filters, or score "
    "them on the Re-judge page (or with the judge command), then repeat that judge here.",
)


def _note(
    dataset: str, without: tuple[str, ...], repeatable: tuple[str, ...], *, blocks: bool
) -> EmptyState | None:
    """Why some (or all) judges have no stability figure, and the next step."""
    if not without:
        return None
    can = [j for j in without if j in repeatable]
    message = f"No item scored in two or more runs of: {', '.join(without)}."
    if can:
        message += (
            " Launch a repeat run below (a sample of the items it scored, asked again at a "
            "temperature above 0), or from the command line:"
        )
    else:
        message += (
            " Only a judge run by Finegrain can be asked again (imported or simulated scores "
            "carry no configuration to call): run one on the Re-judge page or with the judge "
            "command, then repeat it here."
        )
    commands = tuple(
        f"finegrain judge --repeat-of {shlex.quote(j)} --dataset {shlex.quote(dataset)} "
        f"--sample 200 --temperature {DEFAULT_TEMPERATURE:g}"
        for j in can[:3]
    )
    return EmptyState("no_repeat", "No repeated run yet.", message, commands=commands,
                      blocks=blocks)  # fmt: skip


def _one_value_per_rater(rows: pd.DataFrame, sources: dict[str, str]) -> pd.DataFrame:
    """One value per (judge, rater, item): a rater is a run, or a repeat's runs together; the
    items left with a single rater go."""
    if rows.empty:
        return rows.assign(rater=pd.Series(dtype=object))
    rep = {r: repeat_of(s) for r, s in sources.items()}
    # A repeat's number and temperature name its rater (the same number at another temperature
    # is another sample).
    rater = rows["run_id"].map(lambda r: f"repeat {rep[r]}" if rep.get(r) else f"run {r}")
    item = ["judge", "instance_id", "model", "skill"]
    one = rows.assign(rater=rater).groupby([*item, "rater"], as_index=False)["score"].mean()
    many = one.groupby(item)["rater"].transform("size") >= 2
    return one[many].reset_index(drop=True)


def _judge_table(rows: pd.DataFrame, judge: str, n_boot: int, seed: int) -> pd.DataFrame:
    """α (both levels) and the same-score rate per criterion and pooled for one judge."""
    skills = skill_order(rows["skill"].unique())
    groups: list[tuple[str, str | None]] = [(SCOPE_CRITERION, s) for s in skills]
    # Sorted: the resamples must not depend on the store's row order.
    instances = pd.Index(np.sort(rows["instance_id"].unique()))
    weights = bootstrap_weights(len(instances), n_boot, seed)
    unit = rows.groupby(["instance_id", "model", "skill"], sort=False).ngroup().to_numpy()
    value = rows["score"].to_numpy(float)
    cluster = instances.get_indexer(rows["instance_id"])
    code = pd.Index(skills).get_indexer(rows["skill"])
    idx = np.arange(len(rows))
    if len(skills) > 1:  # every rating once more in the pooled group
        groups.append((SCOPE_ALL, None))
        idx, code = np.r_[idx, idx], np.r_[code, np.full(len(rows), len(skills))]
    n_groups = len(groups)
    alpha = raters_alpha_groups(unit[idx], value[idx], cluster[idx], code, n_groups, weights)
    wide = alpha.pivot(index="group", columns="statistic", values=["value", "ci_low", "ci_high"])
    same = _same_rate(unit, value, cluster, idx, code, n_groups, weights)
    raters = rows["rater"].to_numpy()
    out = pd.DataFrame(
        {
            "judge": judge,
            "scope": [g[0] for g in groups],
            "skill": pd.Series([g[1] for g in groups], dtype=object),
            **{
                f"{a}{suffix}": wide[(col, a)].reindex(range(n_groups)).to_numpy()
                for a in ALPHAS
                for col, suffix in (("value", ""), ("ci_low", "_low"), ("ci_high", "_high"))
            },
            **same,
            "n_items": alpha.groupby("group")["n_units"].first().reindex(range(n_groups)),
            "n_instances": alpha.groupby("group")["n_instances"].first().reindex(range(n_groups)),
            "n_runs": [len(np.unique(raters[idx][code == g])) for g in range(n_groups)],
        }
    )
    few = out["n_instances"] < 2  # one instance: every resample is that instance, no CI
    out.loc[few, [c for c in out if c.endswith(("_low", "_high"))]] = np.nan
    enough = (out["n_items"] >= MIN_ITEMS) & (out["n_instances"] >= MIN_INSTANCES)
    for level in LEVELS:  # each α level flags on its own CI (the page shows one level)
        out[f"unstable_{level}"] = (out[f"{level}_high"] < UNSTABLE_ALPHA) & enough
    out["unstable"] = out["unstable_alpha_ordinal"]  # the default level's flag
    return out


def _same_rate(unit, value, cluster, idx, code, n_groups, weights) -> dict[str, np.ndarray]:
    """Share of the pairs of runs that gave an item the same score: per item, the pairs of its
    ratings that agree over all its pairs; averaged over items, each item counting once (with
    two runs: the share of items scored the same). CI by resampling instances."""
    frame = pd.DataFrame({"unit": unit, "value": value})
    counts = frame.groupby(["unit", "value"]).size()
    m = counts.groupby(level="unit").sum()
    agree = (counts * (counts - 1)).groupby(level="unit").sum()
    rate = (agree / (m * (m - 1))).to_numpy()  # every unit has 2+ ratings here
    unit_cluster = np.zeros(len(rate), dtype=np.int64)
    unit_cluster[unit] = cluster
    unit_group = pd.DataFrame({"unit": unit[idx], "group": code}).drop_duplicates()
    u, g = unit_group["unit"].to_numpy(), unit_group["group"].to_numpy()
    n_clusters = weights.shape[1]
    sums = np.zeros((n_clusters, n_groups))
    cnt = np.zeros((n_clusters, n_groups))
    np.add.at(sums, (unit_cluster[u], g), rate[u])
    np.add.at(cnt, (unit_cluster[u], g), 1.0)
    ci = cluster_bootstrap_means(sums, cnt, weights=weights)
    return {"same_rate": ci.mean, "same_rate_low": ci.lo, "same_rate_high": ci.hi}


def _humans(store: Store, f: Filters, n_boot: int, seed: int) -> pd.DataFrame:
    """The humans' α among themselves (each criterion, then pooled), the reference."""
    try:
        out = rater_agreement(store, f, "kind:human", n_boot=n_boot, seed=seed)
    except (InputError, NotFoundError):  # no human, or only one
        return pd.DataFrame()
    return out


def _with_humans(table: pd.DataFrame, humans: pd.DataFrame) -> pd.DataFrame:
    """The humans' α of the same criterion (and level) beside each judge's row."""
    for a in ALPHAS:
        ref = {}
        if not humans.empty:
            h = humans[humans["statistic"] == a]
            ref = dict(zip(scope_keys(h), h["value"], strict=True))
        table[f"human_{a}"] = [ref.get(k, np.nan) for k in scope_keys(table)]
    return table


def scope_keys(rows: pd.DataFrame) -> list[tuple[str, str | None]]:
    """(scope, criterion) per row, the pooled row's criterion None (not a frame's NaN)."""
    return [
        (scope, None if scope == SCOPE_ALL else skill)
        for scope, skill in zip(rows["scope"], rows["skill"], strict=True)
    ]


def _published() -> pd.DataFrame:
    """FLASK's α of GPT-4 over 3 runs at temperature 1.0, per skill (Table 2)."""
    p = published_agreement()
    return p.loc[p["skill"] != "overall", ["skill", "gpt4_repeat_alpha"]].reset_index(drop=True)


def _empty_table() -> pd.DataFrame:
    cols = ["judge", "scope", "skill"]
    cols += [f"{a}{s}" for a in ALPHAS for s in ("", "_low", "_high")]
    cols += ["same_rate", "same_rate_low", "same_rate_high", "n_items", "n_instances", "n_runs"]
    return pd.DataFrame(columns=[*cols, *(f"unstable_{v}" for v in LEVELS), "unstable"])


def stability_csv(result: Stability, level: str = "alpha_ordinal", fmt: str = "csv") -> bytes:
    """The CSV twin of ``stability_table``: the same rows and headers, full precision (or
    the same as Parquet)."""
    return table_bytes(stability_table(result, level, text=False), fmt)


def stability_table(
    result: Stability, level: str = "alpha_ordinal", *, text: bool = True
) -> pd.DataFrame:
    """The table a person reads: judge, criterion, α at ``level`` with its CI, the humans' α,
    the same-score rate with its CI, n items / instances / runs, unstable."""
    t = result.table
    if t.empty:
        return t
    ci = ("_low", "_high")
    frame = pd.DataFrame(
        {
            "judge": t["judge"],
            "skill": [result.label(s) for s in t["skill"]],
            "value": t[level],
            "ci_low": t[f"{level}{ci[0]}"],
            "ci_high": t[f"{level}{ci[1]}"],
            "human": t[f"human_{level}"],
            "same_rate": t["same_rate"],
            "same_low": t["same_rate_low"],
            "same_high": t["same_rate_high"],
            "n_items": t["n_items"],
            "n_instances": t["n_instances"],
            "n_runs": t["n_runs"],
            "unstable": t[f"unstable_{level}"].map({True: "unstable", False: ""}),
        }
    )
    headers = {
        "value": f"α ({LEVELS[level]}) between runs",
        "human": f"Humans' α ({LEVELS[level]})",
        "same_rate": "Same score (share of run pairs)",
        "same_low": "Same: CI low",
        "same_high": "Same: CI high",
        "n_items": "Items in 2+ runs",
        "n_runs": "Runs",
        "unstable": f"Flag (CI below α {UNSTABLE_ALPHA})",
    }
    counts = ("n_items", "n_instances", "n_runs")
    return for_people(frame, headers=headers, counts=counts, text=text)


def repeat_plan(
    store: Store,
    judge: str,
    dataset: str,
    sample: int,
    temperature: float,
    base_url: str | None = None,
    seed: int = 0,
) -> RepeatPlan:
    """The section's form: a repeat of ``judge`` planned for someone using the app (its
    estimate; the key goes only to $OPENAI_BASE_URL, never to a URL typed on the page)."""
    runtime = {"base_url": base_url.strip()} if base_url and base_url.strip() else {}
    return plan_repeat(
        store, judge, dataset, sample=sample, seed=seed, temperature=temperature,
        runtime=runtime, visitor=True,
    )  # fmt: skip
