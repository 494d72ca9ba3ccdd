"""The Verbosity section of the Judges page: does a judge's score move when a response is made
wordier with the same content? For each verbosity check of a dataset (a derived dataset of
rewrites, judges/rewrite.py) and each judge that scored both versions, per skill: the
same-score rate, the mean shift (rewrite − original) and the length ratio, each with a 95% CI
that resamples instances, and n.

A pair is one (instance, model, skill) the judge scored in both datasets, latest scores only;
a pair with N/A on either side counts in ``n_na`` and in no statistic. The sidebar's filters
apply to the original dataset's instances and models."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats.means import bootstrap_weights, cluster_bootstrap_means
from analysis.stats.ranks import MIN_INSTANCES
from analysis.views.criteria import criterion_labels
from analysis.views.guidance import EmptyState
from analysis.views.scorers import skill_order
from analysis.views.tables import for_people, people_csv
from judges.rewrite import REWRITER_PREFIX, SOURCE_PREFIX, VERBOSE_TAG

# A shift smaller than a sixteenth of the scale's range (0.25 points on FLASK's 1-5) is below
# what a score comparison resolves: a quarter point is about the gap between neighbouring models
# on FLASK's leaderboard, and a judge moved by less than that under wordiness changes no ranking
# a reader would act on.
PRACTICAL_SHIFT = 1 / 16
# A percentile bootstrap over fewer instances than this is too narrow to trust (it undercovers):
# no "flagged" below it, whatever the CI says.
MIN_FLAG_INSTANCES = 10
# FLASK (Ye et al., ICLR 2024), robustness analysis: GPT-4's score stayed the same for about
# 53% of the responses made wordier. Shown as context, not as a threshold.
FLASK_SAME_SCORE = 0.53
ALL_SKILLS = "All skills (pooled)"
N_BOOT, SEED = 1_000, 0

# The verbosity checks of a dataset: derived datasets whose source names it (judges/rewrite.py).
CHECKS = """
SELECT d.dataset AS check_dataset, d.source, d.imported_at,
       (SELECT count(*) FROM responses r WHERE r.dataset = d.dataset) AS rewrites,
       (SELECT count(DISTINCT (j.instance_id, j.model)) FROM judgments j
        WHERE j.dataset = d.dataset AND starts_with(j.judge, ?)
          AND j.parse_status <> 'ok'
          AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.dataset = j.dataset
                          AND r.instance_id = j.instance_id AND r.model = j.model)) AS failed
FROM datasets d
WHERE starts_with(d.source, ? || ? || ' by ') AND starts_with(d.dataset, ? || ? || ' (')
ORDER BY d.imported_at DESC, d.dataset
"""

# Is this dataset itself a check's rewrites? (its source dataset, from the source text)
REWRITES_OF = """
SELECT source FROM datasets WHERE dataset = ? AND starts_with(source, ?)
"""

# Both scores of each pair, with both responses' lengths.
PAIRS = """
SELECT o.judge, o.instance_id, o.model, o.skill, o.score AS original, v.score AS rewrite,
       COALESCE(ro.length, length(ro.text)) AS len_original,
       COALESCE(rv.length, length(rv.text)) AS len_rewrite,
       k.scale_min, k.scale_max
FROM latest_scores v
JOIN latest_scores o ON o.instance_id = v.instance_id AND o.model = v.model
 AND o.judge = v.judge AND o.skill = v.skill
JOIN instances i ON i.dataset = o.dataset AND i.instance_id = o.instance_id
JOIN responses ro ON ro.dataset = o.dataset AND ro.instance_id = o.instance_id
 AND ro.model = o.model
JOIN responses rv ON rv.dataset = v.dataset AND rv.instance_id = v.instance_id
 AND rv.model = v.model
LEFT JOIN dataset_skills k ON k.dataset = o.dataset AND k.skill = o.skill
WHERE v.dataset = ? AND {where}
ORDER BY o.judge, TRY_CAST(o.instance_id AS BIGINT) NULLS LAST, o.instance_id, o.model, o.skill
"""

# Rewrites that failed and have no accepted rewrite: the call failed or the answer was not wordier.
FAILURES = """
SELECT j.instance_id, j.model, j.parse_status AS status, j.error, j.raw_output
FROM judgments j
WHERE j.dataset = ? AND starts_with(j.judge, ?) AND j.parse_status <> 'ok'
  AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.dataset = j.dataset
                  AND r.instance_id = j.instance_id AND r.model = j.model)
QUALIFY row_number() OVER (PARTITION BY j.instance_id, j.model ORDER BY j.judgment_id DESC) = 1
ORDER BY TRY_CAST(j.instance_id AS BIGINT) NULLS LAST, j.instance_id, j.model
"""

# The responses of the sidebar's slice (for the sample a check rewrites).
SLICE = """
SELECT s.instance_id, s.model
FROM responses s JOIN instances i USING (dataset, instance_id)
WHERE {where} AND s.text IS NOT NULL
ORDER BY TRY_CAST(s.instance_id AS BIGINT) NULLS LAST, s.instance_id, s.model
"""

STAT_COLUMNS = [
    "judge", "skill", "n", "n_instances", "n_na", "same_rate", "same_low", "same_high",
    "shift", "shift_low", "shift_high", "length_ratio", "ratio_low", "ratio_high", "flagged",
    "few_instances",
]  # fmt: skip


@dataclass(frozen=True)
class VerbosityReport:
    dataset: str
    check: str | None  # the derived dataset shown (None: the dataset has no check)
    checks: pd.DataFrame  # check_dataset, source, imported_at, rewrites, failed
    table: pd.DataFrame  # STAT_COLUMNS: one row per judge × skill, and per judge pooled
    pairs: pd.DataFrame  # judge, instance_id, model, skill, original, rewrite, lengths
    failures: pd.DataFrame  # instance_id, model, status, error, raw_output
    labels: dict[str, str]
    rewrites_of: str | None = None  # the dataset shown holds a check's rewrites: its source


def sample(store: Store, filters: Filters, n: int, seed: int = 0) -> tuple[tuple[str, str], ...]:
    """``n`` responses (instance_id, model) of the sidebar's slice drawn without replacement
    with ``seed`` (all of them when the slice is smaller), in the slice's order."""
    where, params = filter_sql(replace(filters, judge=None))
    with store.read() as con:
        rows = [tuple(r) for r in con.execute(SLICE.format(where=where), params).fetchall()]
    if n >= len(rows):
        return tuple(rows)
    keep = set(random.Random(seed).sample(range(len(rows)), n))
    return tuple(r for i, r in enumerate(rows) if i in keep)


def verbosity_report(store: Store, filters: Filters, check: str | None = None) -> VerbosityReport:
    """The report of one check of the sidebar's dataset (``check``: a derived dataset's name;
    None or unknown: the newest)."""
    ds = filters.dataset
    with store.read() as con:
        params = [REWRITER_PREFIX, SOURCE_PREFIX, ds, ds, VERBOSE_TAG]
        checks = con.execute(CHECKS, params).df()
    labels = criterion_labels(store, ds)
    if checks.empty:
        with store.read() as con:
            row = con.execute(REWRITES_OF, [ds, SOURCE_PREFIX]).fetchone()
        empty = pd.DataFrame(columns=STAT_COLUMNS)
        return VerbosityReport(
            ds, None, checks, empty, _no_pairs(), _no_failures(), labels,
            rewrites_of=row[0] if row else None,
        )  # fmt: skip
    names = list(checks["check_dataset"])
    shown = check if check in names else names[0]
    where, params = filter_sql(replace(filters, judge=None), alias="o")
    with store.read() as con:
        pairs = con.execute(PAIRS.format(where=where), [shown, *params]).df()
        failures = con.execute(FAILURES, [shown, REWRITER_PREFIX]).df()
    table = statistics(pairs)
    return VerbosityReport(ds, shown, checks, table, pairs, failures, labels)


def _no_pairs() -> pd.DataFrame:
    cols = ["judge", "instance_id", "model", "skill", "original", "rewrite", "len_original",
            "len_rewrite", "scale_min", "scale_max"]  # fmt: skip
    return pd.DataFrame(columns=cols)


def _no_failures() -> pd.DataFrame:
    return pd.DataFrame(columns=["instance_id", "model", "status", "error", "raw_output"])


def statistics(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per judge × skill (and per judge, every skill pooled): same-score rate, mean shift and
    length ratio with 95% bootstrap CIs over instances (1,000 resamples, seed 0), n, and the
    flag (see ``flag``)."""
    rows = [_judge_rows(part) for _, part in pairs.groupby("judge", sort=True)]
    rows = [r for r in rows if not r.empty]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=STAT_COLUMNS)


def _judge_rows(part: pd.DataFrame) -> pd.DataFrame:
    judge = part["judge"].iloc[0]
    scored = part[part["original"].notna() & part["rewrite"].notna()]
    n_na = part.assign(na=part["original"].isna() | part["rewrite"].isna())
    na = n_na.groupby("skill")["na"].sum()
    if scored.empty:
        return pd.DataFrame(columns=STAT_COLUMNS)
    skills = skill_order(scored["skill"].unique())  # FLASK's order, then others by name
    groups = skills + ([ALL_SKILLS] if len(skills) > 1 else [])
    inst = pd.Index(sorted(scored["instance_id"].unique()))
    row = inst.get_indexer(scored["instance_id"])
    values = {
        "same": (scored["original"] == scored["rewrite"]).to_numpy(float),
        "shift": (scored["rewrite"] - scored["original"]).to_numpy(float),
        "ratio": (scored["len_rewrite"] / scored["len_original"]).to_numpy(float),
    }
    weights = bootstrap_weights(len(inst), N_BOOT, SEED)
    out = {}
    for name, v in values.items():
        sums, counts = _matrices(scored, row, len(inst), groups, v)
        out[name] = cluster_bootstrap_means(sums, counts, weights=weights)
    _, counts = _matrices(scored, row, len(inst), groups, values["same"])
    ranges = _ranges(scored, groups)
    table = pd.DataFrame({
        "judge": judge, "skill": groups, "n": counts.sum(axis=0).astype(int),
        "n_instances": (counts > 0).sum(axis=0).astype(int),
        "n_na": [int(na.sum() if g == ALL_SKILLS else na.get(g, 0)) for g in groups],
        "same_rate": out["same"].mean, "same_low": out["same"].lo, "same_high": out["same"].hi,
        "shift": out["shift"].mean, "shift_low": out["shift"].lo, "shift_high": out["shift"].hi,
        "length_ratio": out["ratio"].mean, "ratio_low": out["ratio"].lo,
        "ratio_high": out["ratio"].hi,
    })  # fmt: skip
    table["flagged"] = flag(table, ranges)
    table["few_instances"] = table["n_instances"] < MIN_INSTANCES
    return table[STAT_COLUMNS]


def _matrices(scored, row, n_inst, groups, values):
    """(instances × groups) sums of ``values`` and pair counts, each skill and all pooled."""
    sums = np.zeros((n_inst, len(groups)))
    counts = np.zeros((n_inst, len(groups)))
    skill = scored["skill"].to_numpy()
    for g, name in enumerate(groups):
        sel = np.ones(len(skill), bool) if name == ALL_SKILLS else skill == name
        np.add.at(sums[:, g], row[sel], values[sel])
        np.add.at(counts[:, g], row[sel], 1.0)
    return sums, counts


def _ranges(scored: pd.DataFrame, groups: list[str]) -> np.ndarray:
    """Each group's scale range (the widest of the skills pooled: the stricter threshold)."""
    span = (scored["scale_max"].fillna(5) - scored["scale_min"].fillna(1)).to_numpy(float)
    skill = scored["skill"].to_numpy()
    return np.array([span.max() if g == ALL_SKILLS else span[skill == g].max() for g in groups])


def flag(table: pd.DataFrame, ranges: np.ndarray) -> pd.Series:
    """Flagged: the shift's 95% CI excludes 0, the shift is at least PRACTICAL_SHIFT of the
    scale's range, and it rests on at least MIN_FLAG_INSTANCES instances."""
    excludes = (table["shift_low"] > 0) | (table["shift_high"] < 0)
    big = table["shift"].abs() >= PRACTICAL_SHIFT * ranges
    enough = table["n_instances"] >= MIN_FLAG_INSTANCES
    return (excludes & big & enough).fillna(False).astype(bool)


# --- for reading --------------------------------------------------------------------------

HEADERS = {
    "same_rate": "Same score (rate)", "same_low": "Same: 95% CI low",
    "same_high": "Same: 95% CI high", "shift": "Mean shift (rewrite − original)",
    "shift_low": "Shift: 95% CI low", "shift_high": "Shift: 95% CI high",
    "length_ratio": "Length ratio (rewrite / original)", "ratio_low": "Ratio: 95% CI low",
    "ratio_high": "Ratio: 95% CI high", "n": "Pairs (n)", "n_na": "Pairs with N/A",
    "flagged": "Flagged", "few_instances": "CI from < 5 instances",
    "original": "Original score", "rewrite": "Rewrite score",
    "len_original": "Original length", "len_rewrite": "Rewrite length",
    "link_original": "Original", "link_rewrite": "Rewrite", "status": "Status",
    "error": "Error", "raw_output": "Raw output",
}  # fmt: skip
DIGITS = {"same_rate": 3, "same_low": 3, "same_high": 3, "length_ratio": 2}


def report_table(r: VerbosityReport) -> pd.DataFrame:
    """The statistics for reading: skill labels, rates with 3 decimals, shifts with 2."""
    return for_people(r.table, labels=r.labels, headers=HEADERS, digits=DIGITS)


def report_csv(r: VerbosityReport, fmt: str = "csv") -> bytes:
    """The report as CSV (or Parquet): the table's rows, numbers at full precision."""
    return people_csv(r.table, labels=r.labels, headers=HEADERS, fmt=fmt)


def pairs_table(r: VerbosityReport) -> pd.DataFrame:
    """Each pair with links to the original and the rewrite on the Samples page."""
    cols = ["judge", "instance_id", "model", "skill", "original", "rewrite", "len_original",
            "len_rewrite"]  # fmt: skip
    out = r.pairs[cols].copy()
    keys = list(zip(out["instance_id"], out["model"], strict=True))
    out["link_original"] = [sample_link(r.dataset, i, m) for i, m in keys]
    out["link_rewrite"] = [sample_link(r.check or "", i, m) for i, m in keys]
    return for_people(out, labels=r.labels, headers=HEADERS)


def failures_table(r: VerbosityReport) -> pd.DataFrame:
    return for_people(r.failures, headers=HEADERS)


def sample_link(dataset: str, instance_id: str, model: str) -> str:
    """A response on the Samples page (its query-parameter contract)."""
    return "samples?" + urlencode({"dataset": dataset, "instance": instance_id, "model": model})


def empty(r: VerbosityReport) -> EmptyState | None:
    """Why the report shows nothing (None: it shows a check's numbers)."""
    if r.rewrites_of is not None:
        return EmptyState(
            "verbosity_rewrites", "These are rewritten responses.",
            f"This dataset holds the wordier rewrites of a verbosity check ({r.rewrites_of}); "
            "the report is in the Verbosity section of the dataset they were rewritten from.",
            blocks=False,
        )  # fmt: skip
    if r.check is None:
        return EmptyState(
            "verbosity_none", "No verbosity check yet.",
            f"Launch one below: a sample of '{r.dataset}' is rewritten to be wordier with the "
            "same content, and a judge scores both versions. Or from the command line:",
            commands=(
                f'finegrain verbosity --dataset "{r.dataset}" --judge "JUDGE" '
                "--rewriter-model MODEL --sample 50",
            ),
            blocks=False,
        )  # fmt: skip
    if r.table.empty:
        return EmptyState(
            "verbosity_unjudged", "No judge has scored both versions yet.",
            "The rewrites are stored but no judge scored both them and the originals (in the "
            "sidebar's slice): launch the check again below with a judge; what is stored is "
            "not asked again.",
            blocks=False,
        )  # fmt: skip
    return None


def check_lines(r: VerbosityReport) -> list[str]:
    """What the check holds, in words (the CLI's header and the page's caption)."""
    if r.check is None:
        return [f"No verbosity check of '{r.dataset}' yet."]
    row = r.checks[r.checks["check_dataset"] == r.check].iloc[0]
    return [
        f"check '{r.check}' ({row['source']}): {int(row['rewrites']):,} rewrites stored, "
        f"{int(row['failed']):,} failed (recorded with their error)",
        f"{r.pairs['judge'].nunique() if len(r.pairs) else 0} judge(s) scored both versions; "
        f"flagged: the shift's 95% CI excludes 0, |shift| ≥ {PRACTICAL_SHIFT:g} of the scale "
        f"(0.25 on 1–5), ≥ {MIN_FLAG_INSTANCES} instances; FLASK reports about "
        f"{FLASK_SAME_SCORE:.0%} same-score rate under verbosity",
    ]
