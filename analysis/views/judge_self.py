"""Judges page, Self-preference: does a judge score the models of its own family higher than
the humans do (or than the other judges do)?

For each LLM judge with a family (analysis/views/judge_family.py) and each criterion: the mean
of (judge − reference) over the items of its family's models, the same mean over the other
models' items, and their difference: the *self-preference*, in points of the criterion's scale.
The reference is the humans' score of the item (the mean of the human scores), or the mean of
the other LLM judges' scores of it (judges of the same family left out: they may share the
bias). A judge that is harsher or more lenient overall moves both means alike, so only a
preference for its own family's answers remains. 95% CIs resample instances; both sides are
computed in each resample (paired), since an instance carries items of both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.stats.agreement_bootstrap import percentile_ci
from analysis.stats.length_bias import resampled
from analysis.stats.means import LEVEL, N_BOOT
from analysis.views import tables
from analysis.views.bias_items import Items, items
from analysis.views.guidance import EmptyState
from analysis.views.judge_family import family_of

REFERENCES = ("humans", "judges")
REFERENCE_LABELS = {"humans": "the humans", "judges": "the other LLM judges"}
ALL = "(all criteria)"  # the row pooling every criterion (when they share one scale)
# A quarter of a point on a 1–5 scale (scaled to a criterion's own range): adjacent models in a
# FLASK skill are often that close, so a preference of this size can reorder a leaderboard.
PRACTICAL_SHARE = 0.25 / 4
# Fewer instances on either side than this: no flag, whatever the CI says.
MIN_INSTANCES = 20

COLUMNS = [
    "judge", "family", "skill", "label", "reference", "own_mean", "own_n", "own_instances",
    "other_mean", "other_n", "other_instances", "self_pref", "ci_low", "ci_high", "threshold",
    "flagged", "direction", "own_models",
]  # fmt: skip


@dataclass(frozen=True)
class SelfQuery:
    filters: Filters
    n_boot: int = N_BOOT
    seed: int = 0
    level: float = LEVEL


@dataclass(frozen=True)
class SelfPreference:
    """``table``: one row per judge × criterion (and ALL) × reference (COLUMNS); ``left_out``:
    each LLM judge of the slice that could not be compared, with the reason."""

    query: SelfQuery
    table: pd.DataFrame
    left_out: pd.DataFrame  # judge, family, reason
    skills: tuple[str, ...]
    labels: dict[str, str]
    notes: tuple[str, ...] = ()
    empty: EmptyState | None = None


def self_preference(store: Store, q: SelfQuery) -> SelfPreference:
    """Every judge's self-preference per criterion, against the humans and the other judges."""
    data = items(store, q.filters)
    fam = family_of(store)
    present = set(data.frame["model"])
    rows, left_out = [], []
    for judge in data.judges:
        family = fam["judge"].get(judge)
        own = sorted(m for m in present if fam["model"].get(m) == family)
        reason = _reason(family, own, present, fam["model"])
        if reason:
            left_out.append({"judge": judge, "family": family or "", "reason": reason})
            continue
        mine = _judge_rows(data, judge, family, own, fam["judge"], q)
        if not mine:
            reason = "no item that the humans or another judge (of another family) scored too"
            left_out.append({"judge": judge, "family": family, "reason": reason})
        rows += mine
    table = pd.DataFrame(rows, columns=COLUMNS)
    return SelfPreference(
        q, table, pd.DataFrame(left_out, columns=["judge", "family", "reason"]), data.skills,
        data.labels, _notes(data, table), _empty(data, table),
    )  # fmt: skip


def _reason(family, own, present, model_family) -> str | None:
    if family is None:
        return "no family: give it one in the mapping below"
    if not own:
        return f"no model of its family ({family}) in this slice"
    if all(model_family.get(m) == family for m in present):
        return f"every model of this slice is of its family ({family}): nothing to contrast"
    return None


def _judge_rows(data: Items, judge, family, own, judge_family, q) -> list[dict]:
    frame = data.frame
    score = data.judge(judge)
    is_own = frame["model"].isin(own).to_numpy()
    refs = {"humans": frame["humans"].to_numpy()}
    others = [j for j in data.judges if j != judge and judge_family.get(j) != family]
    if others:
        theirs = np.column_stack([data.judge(j) for j in others])
        count = (~np.isnan(theirs)).sum(1)
        with np.errstate(invalid="ignore"):  # an item no other judge scored: NaN, as wanted
            refs["judges"] = np.nansum(theirs, 1) / count
    weights = data.weights(q.n_boot, q.seed)
    skills = frame["skill"].to_numpy()
    groups = [(s, skills == s) for s in data.skills]
    if len({data.scales.get(s) for s in data.skills}) == 1 and len(data.skills) > 1:
        groups.append((ALL, np.ones(len(frame), dtype=bool)))
    out = []
    for ref, values in refs.items():
        diff = score - values
        for skill, sel in groups:
            ok = sel & ~np.isnan(diff)
            if not ok.any():
                continue
            lo, hi = data.scales.get(skill, next(iter(data.scales.values())))
            stats = _contrast(diff[ok], is_own[ok], data.cluster[ok], weights, q.level)
            row = {"judge": judge, "family": family, "skill": skill, "reference": ref,
                   "label": data.labels.get(skill, skill), "own_models": ", ".join(own),
                   "threshold": PRACTICAL_SHARE * (hi - lo)}  # fmt: skip
            out.append(row | stats | _flag(stats, row["threshold"]))
    return out


def _contrast(diff, own, cluster, weights, level) -> dict:
    """Mean diff on own-family items, on the others, and own − other, resampling instances."""
    n_c = weights.shape[1]
    cols = [np.bincount(cluster, w, minlength=n_c) for w in
            (np.where(own, diff, 0), own, np.where(own, 0, diff), ~own)]  # fmt: skip
    per_cluster = np.column_stack(cols).astype(np.float64)
    total = per_cluster.sum(0)
    boot = resampled(weights, per_cluster)
    with np.errstate(invalid="ignore", divide="ignore"):
        own_mean, other_mean = total[0] / total[1], total[2] / total[3]
        pref = (boot[:, 0] / boot[:, 1]) - (boot[:, 2] / boot[:, 3])
    lo, hi = percentile_ci(pref, level)
    return {
        "own_mean": own_mean, "own_n": int(total[1]),
        "own_instances": len(np.unique(cluster[own])),
        "other_mean": other_mean, "other_n": int(total[3]),
        "other_instances": len(np.unique(cluster[~own])),
        "self_pref": own_mean - other_mean, "ci_low": float(lo), "ci_high": float(hi),
    }  # fmt: skip


def _flag(stats: dict, threshold: float) -> dict:
    """Flagged: at least MIN_INSTANCES instances on each side, a CI that excludes 0 and a
    size of at least the threshold (either direction)."""
    n = min(stats["own_instances"], stats["other_instances"])
    effect, lo, hi = stats["self_pref"], stats["ci_low"], stats["ci_high"]
    flagged = bool(n >= MIN_INSTANCES and abs(effect) >= threshold and (lo > 0 or hi < 0))
    direction = "" if not flagged else ("favours own family" if effect > 0 else
                                        "harsher on own family")  # fmt: skip
    return {"flagged": flagged, "direction": direction}


def _notes(data: Items, table: pd.DataFrame) -> tuple[str, ...]:
    notes = []
    if not data.humans:
        notes.append("No human scores in this slice: only the comparison with the other LLM "
                     "judges can be made.")  # fmt: skip
    if len(data.judges) < 2:
        notes.append("One LLM judge: there are no other judges to compare it with.")
    if len(data.skills) > 1 and not (table["skill"] == ALL).any() and not table.empty:
        notes.append("The criteria have different scales: no pooled row across them.")
    return tuple(notes)


NO_LLM = "Run a judge on the Re-judge page, or import a judge's scores."


def _empty(data: Items, table: pd.DataFrame) -> EmptyState | None:
    if not data.judges:
        return EmptyState("no_llm", "No LLM judge in this slice.", NO_LLM)
    if table.empty:
        return EmptyState(
            "no_family",
            "No judge can be compared.",
            "A judge needs a family, and its family at least one model of this slice, with "
            "items that the humans or another judge scored too. Set the families below.",
            blocks=False,
        )
    return None


# ---------------------------------------------------------------- for people


def people_table(r: SelfPreference, reference: str) -> pd.DataFrame:
    """The table under the chart for one reference: readable headers, 2 decimals."""
    t = r.table[r.table["reference"] == reference]
    d = tables.MEAN_DIGITS
    return pd.DataFrame(
        {
            "Judge": t["judge"], "Family": t["family"], "Skill": t["label"],
            "Self-preference": [tables.fmt_ci(v, lo, hi, d) for v, lo, hi in
                                zip(t["self_pref"], t["ci_low"], t["ci_high"], strict=True)],
            "Own family: judge − ref": t["own_mean"].map(lambda v: tables.fmt_num(v, d)),
            "n own items": t["own_n"], "n own instances": t["own_instances"],
            "Others: judge − ref": t["other_mean"].map(lambda v: tables.fmt_num(v, d)),
            "n other items": t["other_n"], "n other instances": t["other_instances"],
            "practical size": t["threshold"].map(lambda v: tables.fmt_num(v, d)),
            "flagged": t["flagged"].map({True: "⚑ flagged", False: ""}),
            "direction": t["direction"], "Own family's models": t["own_models"],
        }
    ).reset_index(drop=True)  # fmt: skip


EXPORT_HEADERS = {
    "judge": "Judge", "family": "Family", "label": "Skill", "reference": "Compared with",
    "own_mean": "Own family: judge − ref", "own_n": "Own items", "own_instances":
    "Own instances", "other_mean": "Others: judge − ref", "other_n": "Other items",
    "other_instances": "Other instances", "self_pref": "Self-preference",
    "ci_low": "95% CI low", "ci_high": "95% CI high", "threshold": "Practical size",
    "flagged": "Flagged", "direction": "Direction", "own_models": "Own family's models",
}  # fmt: skip


def self_export(r: SelfPreference, fmt: str = "csv") -> bytes:
    """Every figure against both references at full precision, as CSV (formula-looking names
    neutralised) or Parquet (typed): the download beside the table."""
    frame = r.table.drop(columns="skill")
    return tables.people_csv(frame, headers=EXPORT_HEADERS, fmt=fmt)
