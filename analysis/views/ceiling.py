"""The fair human ceiling of the Human-vs-judge page and ``finegrain agreement``.

Setting "the judge against the mean of all humans" beside "one human against another" flatters
the judge: averaging removes human noise from one side only. Here both sides face the same
reference, on the same items. The figures (ids in the result frames and the JSON):

- ``human_ceiling``: each human, held out in turn, against the mean of the *other* humans'
  scores on the same item: how well one human agrees with the rest of the panel.
- ``judge_same_reference``: the judge (scorer A) against that same mean of the other humans, on
  the same items: the judge's figure to set beside the ceiling.
- ``judge_minus_human``: the judge's figure minus the ceiling, with a paired 95% CI (both from
  the same resamples). Above zero the judge agrees with the humans more than a human does; for
  MAE, where lower is better, above zero means the judge is further off.
- ``human_pairwise_alpha``: Krippendorff's α among the individual humans (every human a rater,
  missing ratings allowed), as the inter-annotator reliability of the panel.

Held-out pairs: an item (instance × model × criterion) counts once per human who scored it,
when at least one other human and the judge scored it too (N/A is not a score, on any side).
The held-out pairs of all humans are *pooled* into one set and each statistic is computed over
it (not averaged per human): a human who rated more items weighs more. The humans exclude the
judge's own scorers (a human as A is compared with the others). Rows are per criterion (scope
``criterion``) and, with two or more criteria, over all of them (scope ``all_criteria``, skill
None). CIs resample instances with the page's weights, so only the instances of the page's A–B
comparison take part.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats import agreement_bootstrap as boot
from analysis.stats.paired_agreement import paired_agreement

ITEM = ["instance_id", "model", "skill"]
FIGURES = {
    "human_ceiling": "One human vs the mean of the other humans (the human ceiling)",
    "judge_same_reference": "Judge (A) vs that same mean of the other humans, on the same items",
    "judge_minus_human": "Judge − human ceiling (paired; for MAE, above zero = judge further off)",
    "human_pairwise_alpha": "Krippendorff's α among the individual humans",
}
AGGREGATION = (
    "Leave-one-out: each human is held out in turn and compared with the mean of the other "
    "humans' scores on the same item; the judge is compared with that same mean on the same "
    "items. The held-out pairs of all humans are pooled (an item counts once per human who "
    "scored it) and each statistic is computed over the pooled pairs."
)
_SIDES = {"x": "human_ceiling", "y": "judge_same_reference", "gap": "judge_minus_human"}

Group = tuple[str, str | None]  # (scope, skill); skill None: every criterion's items


def held_out_pairs(rows: pd.DataFrame, humans: tuple[str, ...], judge: pd.Series) -> pd.DataFrame:
    """One row per item × held-out human: instance_id, model, skill, human, human_score,
    others (the mean of the other humans' scores), n_others, judge_score.

    ``rows`` are store rows (instance_id, model, skill, judge, score; NaN = N/A); ``judge`` is
    the judge's score per item (indexed by instance_id, model, skill; NaN = N/A)."""
    mine = rows[rows["judge"].isin(humans) & rows["score"].notna()]
    per = mine.groupby([*ITEM, "judge"], as_index=False)["score"].mean()
    item = per.groupby(ITEM)["score"]
    # The others' mean from the item's total: linear in the number of ratings (a self-join
    # would grow with the square of the panel), and exact for scores on a scale's points.
    total, count = item.transform("sum"), item.transform("count")
    out = per.assign(
        human_score=per["score"],
        others=(total - per["score"]) / (count - 1).where(count > 1),
        n_others=count - 1,
    ).drop(columns="score")
    out = out[out["n_others"] >= 1]
    scored = judge.dropna()
    at = pd.MultiIndex.from_frame(out[ITEM])
    out = out.assign(judge_score=scored.reindex(at).to_numpy()).rename(columns={"judge": "human"})
    return out[out["judge_score"].notna()].reset_index(drop=True)


def _select(frame: pd.DataFrame, groups: list[Group]) -> tuple[np.ndarray, np.ndarray]:
    """Row index and group code per row, each row once per group it belongs to."""
    skill = frame["skill"].to_numpy()
    rows, codes = [], []
    for g, (_, name) in enumerate(groups):
        sel = np.flatnonzero(np.ones(len(frame), bool) if name is None else skill == name)
        rows.append(sel)
        codes.append(np.full(len(sel), g))
    if not rows:
        return np.array([], int), np.array([], int)
    return np.concatenate(rows), np.concatenate(codes)


def _labels(groups: list[Group], used: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        [(g, scope, skill) for g, (scope, skill) in enumerate(groups) if g in set(used)],
        columns=["group", "scope", "skill"],
    )


def leave_one_out(
    pairs: pd.DataFrame, groups: list[Group], instances: pd.Index, weights: np.ndarray
) -> pd.DataFrame:
    """The human ceiling, the judge on the same reference and their gap, per group."""
    pairs = pairs[instances.get_indexer(pairs["instance_id"]) >= 0]
    idx, code = _select(pairs, groups)
    if not len(idx):
        return pd.DataFrame()
    sel = pairs.iloc[idx]
    used, code = np.unique(code, return_inverse=True)  # groups without pairs are left out
    out = paired_agreement(
        sel["human_score"].to_numpy(float),
        sel["judge_score"].to_numpy(float),
        sel["others"].to_numpy(float),
        instances.get_indexer(sel["instance_id"]),
        code,
        len(used),
        weights,
    )
    item = pd.Series(_item_codes(sel))
    extra = pd.DataFrame(
        {
            "group": np.arange(len(used)),
            "n_items": item.groupby(code).nunique().to_numpy(),
            "n_humans": sel["human"].groupby(code).nunique().to_numpy(),
        }
    )
    lab = _labels(groups, used).assign(group=np.arange(len(used)))
    out = out.merge(extra, on="group").merge(lab, on="group")
    return out.assign(figure=out["side"].map(_SIDES)).drop(columns=["group", "side"])


def raters_alpha(
    rows: pd.DataFrame,
    raters: tuple[str, ...],
    groups: list[Group],
    instances: pd.Index,
    weights: np.ndarray,
) -> pd.DataFrame:
    """Krippendorff's α among individual raters per group, units = items: scope, skill,
    statistic (alpha_ordinal, alpha_interval), value, CI, n (pairable ratings), n_units,
    n_instances, n_raters."""
    mine = rows[rows["judge"].isin(raters) & rows["score"].notna()]
    mine = mine[mine["instance_id"].isin(instances)]
    if mine.empty:
        return pd.DataFrame()
    # Items numbered once, in order of appearance: within a group the units keep the order a
    # per-group numbering would give them (so the same sums, in the same order).
    unit = _item_codes(mine)
    cluster = instances.get_indexer(mine["instance_id"])
    score = mine["score"].to_numpy(float)
    judge = pd.factorize(mine["judge"])[0]
    idx, code = _select(mine, groups)  # each rating once per group it belongs to
    used, code = np.unique(code, return_inverse=True)  # groups without ratings are left out
    if not len(used):
        return pd.DataFrame()
    frame = boot.raters_alpha_groups(unit[idx], score[idx], cluster[idx], code, len(used), weights)
    n_raters = [len(np.unique(judge[idx][code == g])) for g in range(len(used))]
    frame = frame.sort_values("group", kind="stable").reset_index(drop=True)
    g = frame.pop("group").to_numpy()
    return frame.assign(
        scope=pd.Series([groups[used[i]][0] for i in g]),
        skill=_names([groups[used[i]][1] for i in g]),
        n_raters=np.take(n_raters, g),
    )


def _item_codes(frame: pd.DataFrame) -> np.ndarray:
    """A code per row for its item (instance × model × criterion), numbered in order of first
    appearance, as ``pd.factorize`` numbers them (without building a tuple per row)."""
    return frame.groupby(ITEM, sort=False, dropna=False).ngroup().to_numpy()


def _names(names: list) -> pd.Series:
    """Criterion names as a column; object where the all-criteria row's None is among them."""
    return pd.Series(names, dtype=object if None in names else None)


def human_ceiling(
    rows: pd.DataFrame,
    humans: tuple[str, ...],
    judge: pd.Series,
    groups: list[Group],
    instances: pd.Index,
    weights: np.ndarray,
    held: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every figure of ``FIGURES`` per group: scope, skill, figure, statistic, value, ci_low,
    ci_high, n (held-out pairs; pairable ratings for α), n_instances, n_items, n_humans.
    ``held``: ``held_out_pairs(rows, humans, judge)`` where the caller kept it already."""
    held = held_out_pairs(rows, humans, judge) if held is None else held
    loo = leave_one_out(held, groups, instances, weights)
    alpha = raters_alpha(rows, humans, groups, instances, weights)
    if not alpha.empty:
        alpha = alpha.rename(columns={"n_units": "n_items", "n_raters": "n_humans"}).assign(
            figure="human_pairwise_alpha"
        )
    parts = [f for f in (loo, alpha) if not f.empty]
    if not parts:
        return pd.DataFrame()
    cols = ["scope", "skill", "figure", "statistic", "value", "ci_low", "ci_high", "n"]
    cols += ["n_instances", "n_items", "n_humans"]
    return pd.concat(parts, ignore_index=True)[cols]
