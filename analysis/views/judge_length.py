"""Judges page, Length bias: does a judge's score follow the response's length more than the
humans' does? Per scorer (each LLM judge, and the humans' mean per item) and criterion, the
correlation of score with length in characters (``responses.length``):

- *instance*: within each instance, across its models' responses, averaged over instances (as
  the agreement "instance" level): answers to the same instruction, so an instruction that
  calls for a long answer does not count as length bias. Instances where every model got the
  same score (or has the same length), or with fewer than two responses, are skipped.
- *pooled*: over every response at once.
- *model*: across models, each model's mean length against its mean score (FLASK Table 5's
  level, so its published figure compares like with like); its n is the number of models, so
  it carries no flag.

Pearson (FLASK Table 5 reports Pearson) or Spearman, each with a 95% CI from resampling
instances and its n. A judge's *excess* is its correlation minus the humans' on the same items
(the items both scored), with a paired CI (both computed in the same resamples); that excess is
what is flagged: the humans' own correlation is the part of length that goes with quality.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.published import CITATION, published_agreement
from analysis.stats import length_bias as lb
from analysis.stats.agreement_bootstrap import percentile_ci
from analysis.stats.means import LEVEL, N_BOOT
from analysis.views import tables
from analysis.views.bias_items import Items, items
from analysis.views.guidance import EmptyState

LEVELS = ("instance", "pooled", "model")
METHODS = lb.METHODS
HUMANS = "kind:human"  # the humans' row: their mean score per item
# An excess of 0.10 in r is where a correlation difference starts to matter in practice (Cohen's
# "small" r); below it, a judge that tracks length a little more than people do is not worth a
# warning even when the CI says it is real (tens of thousands of items make any excess "real").
PRACTICAL_R = 0.10
# Fewer paired instances than this: no flag, whatever the CI says (a few instances' percentile
# interval is too narrow to trust). A correlation needs more instances than a mean difference:
# leniency and verbosity flag from 10, self-preference from 20 per side, stability from 30 items
# on 5 instances; each section's caption states its own minimum.
MIN_INSTANCES = 20
PUBLISHED_COLUMN = "length_score_pearson"
PUBLISHED_NOTE = (
    "FLASK's figure (Table 5) is Pearson's r between each model's average response length and "
    "its mean skill score across 12 models (GPT-4 as judge): compare it with the model level "
    "here (other models, judge and items); the instance and pooled levels measure something "
    "else, and the marker there is for direction only. " + CITATION + "."
)


@dataclass(frozen=True)
class LengthQuery:
    filters: Filters
    method: str = "pearson"
    n_boot: int = N_BOOT
    seed: int = 0
    level: float = LEVEL


@dataclass(frozen=True)
class LengthBias:
    """``table``: one row per scorer × criterion × level: scorer, kind (human/llm), skill,
    label, level, r, ci_low, ci_high, n (items), n_instances (instances with a defined
    correlation at the instance level; with an item at the pooled one), n_skipped (instances
    skipped at the instance level: a constant side or one response), and for each judge its
    excess over the humans on the items both scored: excess, excess_low, excess_high,
    n_paired (instances), flagged, direction; published: FLASK's figure for the criterion."""

    query: LengthQuery
    table: pd.DataFrame
    judges: tuple[str, ...]
    skills: tuple[str, ...]
    labels: dict[str, str]
    notes: tuple[str, ...] = ()
    scorers: tuple[str, ...] = ()  # what the scatter offers: the judges, then HUMANS if any
    empty: EmptyState | None = None
    published_note: str = PUBLISHED_NOTE
    extras: dict = field(default_factory=dict, repr=False, compare=False)


COLUMNS = [
    "scorer", "kind", "skill", "label", "level", "r", "ci_low", "ci_high", "n", "n_instances",
    "n_skipped", "n_models", "excess", "excess_low", "excess_high", "n_paired", "flagged",
    "direction",
    "published",
]  # fmt: skip


def length_bias(store: Store, q: LengthQuery) -> LengthBias:
    """Every scorer's length correlation per criterion and level, and each judge's excess."""
    if q.method not in METHODS:
        raise ValueError(f"unknown method {q.method!r}; expected one of {', '.join(METHODS)}")
    data = items(store, q.filters)
    empty = _empty(data)
    if empty is not None:
        return LengthBias(q, pd.DataFrame(columns=COLUMNS), data.judges, data.skills,
                          data.labels, empty=empty)  # fmt: skip
    weights = data.weights(q.n_boot, q.seed)
    published, pub_note = _published()
    rows = [
        row | {"published": published.get(skill, np.nan)}
        for skill in data.skills
        for row in _skill_rows(data, skill, weights, q)
    ]
    notes = _notes(data) + ((pub_note,) if pub_note else ())
    scorers = data.judges + ((HUMANS,) if data.humans else ())
    return LengthBias(q, pd.DataFrame(rows, columns=COLUMNS), data.judges, data.skills,
                      data.labels, notes, scorers)  # fmt: skip


def _skill_rows(data: Items, skill: str, weights: np.ndarray, q: LengthQuery) -> list[dict]:
    frame = data.frame
    sel = ((frame["skill"] == skill) & frame["length"].notna()).to_numpy()
    length = frame["length"].to_numpy()[sel]
    # The criterion's instances only: every resampled sum below runs over these columns.
    present, cluster = np.unique(data.cluster[sel], return_inverse=True)
    weights = weights[:, present]
    model = pd.factorize(frame["model"].to_numpy()[sel])[0]
    humans = frame["humans"].to_numpy()[sel]
    side = _Side(length, cluster, model, weights, q)
    out = []
    scorers = [(HUMANS, "human", humans)] if data.humans else []
    scorers += [(j, "llm", data.judge(j)[sel]) for j in data.judges]
    for name, kind, score in scorers:
        ok = ~np.isnan(score)
        if not ok.any():
            continue
        own = side.both_levels(score, ok)
        paired = side.excess(score, humans, ok & ~np.isnan(humans)) if kind == "llm" else {}
        for level in LEVELS:
            row = {"scorer": name, "kind": kind, "skill": skill, "level": level,
                   "label": data.labels.get(skill, skill)} | own[level]  # fmt: skip
            out.append(row | _flag(paired.get(level), level))
    return out


class _Side:
    """The correlations of one criterion's items, for any scorer's scores on any subset."""

    def __init__(self, length, cluster, model, weights, q: LengthQuery) -> None:
        self.length, self.cluster, self.model = length, cluster, model
        self.weights, self.q = weights, q

    def units(self, score: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Per instance (index = instance code), the within-instance correlation or NaN."""
        r = lb.unit_correlations(
            self.length[ok], score[ok], self.cluster[ok], self.model[ok], self.q.method
        )
        return np.r_[r, np.full(self.weights.shape[1] - len(r), np.nan)]

    def pooled(self, score: np.ndarray, ok: np.ndarray) -> tuple[float, np.ndarray]:
        return lb.pooled(self.length[ok], score[ok], self.cluster[ok], self.weights, self.q.method)

    def both_levels(self, score: np.ndarray, ok: np.ndarray) -> dict[str, dict]:
        r = self.units(score, ok)
        n_inst = len(np.unique(self.cluster[ok]))
        counts = {"n": int(ok.sum())}
        inst = self._ci(*lb.unit_mean(r, np.arange(len(r)), self.weights))
        used = int(np.isfinite(r).sum())
        pooled = self._ci(*self.pooled(score, ok))
        point, boot, n_models = self.models(score, ok)
        counts |= {"n_models": n_models}
        return {
            "instance": inst | counts | {"n_instances": used, "n_skipped": n_inst - used},
            "pooled": pooled | counts | {"n_instances": n_inst, "n_skipped": 0},
            "model": self._ci(point, boot) | counts | {"n_instances": n_inst, "n_skipped": 0},
        }

    def models(self, score: np.ndarray, ok: np.ndarray) -> tuple[float, np.ndarray, int]:
        return lb.model_level(self.length[ok], score[ok], self.cluster[ok], self.model[ok],
                              self.weights, self.q.method)  # fmt: skip

    def excess(self, judge: np.ndarray, humans: np.ndarray, ok: np.ndarray) -> dict[str, dict]:
        """The judge's correlation minus the humans', on the items both scored, per level."""
        if not ok.any():
            return {}
        diff = self.units(judge, ok) - self.units(humans, ok)  # NaN where either is undefined
        inst = self._ci(*lb.unit_mean(diff, np.arange(len(diff)), self.weights))
        (pj, bj), (ph, bh) = self.pooled(judge, ok), self.pooled(humans, ok)
        pooled = self._ci(pj - ph, bj - bh)
        (mj, bmj, _), (mh, bmh, _) = self.models(judge, ok), self.models(humans, ok)
        n_paired = len(np.unique(self.cluster[ok]))
        return {
            "instance": inst | {"n_paired": int(np.isfinite(diff).sum())},
            "pooled": pooled | {"n_paired": n_paired},
            "model": self._ci(mj - mh, bmj - bmh) | {"n_paired": n_paired},
        }

    def _ci(self, point: float, boot: np.ndarray) -> dict:
        lo, hi = percentile_ci(boot, self.q.level)
        return {"r": point, "ci_low": float(lo), "ci_high": float(hi)}


def _flag(paired: dict | None, level: str) -> dict:
    """The judge's excess and whether it is flagged: at least MIN_INSTANCES paired instances,
    a CI that excludes 0 and a size of at least PRACTICAL_R (either direction). Never at the
    model level: a correlation over a handful of models is a reference, not evidence."""
    if not paired:
        return {"flagged": False, "direction": "", "n_paired": 0}
    ex, lo, hi, n = paired["r"], paired["ci_low"], paired["ci_high"], paired["n_paired"]
    # NaN compares False: no flag without a CI.
    clear = n >= MIN_INSTANCES and abs(ex) >= PRACTICAL_R and (lo > 0 or hi < 0)
    flagged = bool(clear and level != "model")
    direction = "" if not flagged else ("favours longer" if ex > 0 else "favours shorter")
    return {"excess": ex, "excess_low": lo, "excess_high": hi, "n_paired": n,
            "flagged": flagged, "direction": direction}  # fmt: skip


def _published() -> tuple[dict[str, float], str | None]:
    """FLASK's per-skill figure, or ({}, why not)."""
    try:
        pub = published_agreement()
    except (OSError, ValueError) as e:
        return {}, f"FLASK's published figures could not be read ({e}); no reference shown."
    if PUBLISHED_COLUMN not in pub.columns:
        return {}, "FLASK's published figures hold no length column; no reference shown."
    col = pub.set_index("skill")[PUBLISHED_COLUMN].dropna()
    return {str(k): float(v) for k, v in col.items()}, None


NO_LLM = "Run a judge on the Re-judge page, or import a judge's scores."


def _empty(data: Items) -> EmptyState | None:
    if data.frame.empty:
        return EmptyState("no_scores", "No scores in this slice.",
                          "Widen the sidebar's filters, or import scores.")  # fmt: skip
    if data.frame["length"].notna().sum() == 0:
        return EmptyState(
            "no_lengths",
            "No response lengths.",
            "The scores of this slice have no stored responses, so their lengths are unknown. "
            "Import the responses with the scores (a `response` column in import-scores, or "
            "the model outputs of import-flask).",
        )
    if not data.judges:
        return EmptyState("no_llm", "No LLM judge in this slice.", NO_LLM)
    return None


def _notes(data: Items) -> tuple[str, ...]:
    notes = []
    if not data.humans:
        notes.append(
            "No human scores in this slice: each judge's own correlation is shown, but without "
            "the humans' to compare with, nothing is flagged."
        )
    missing = int(data.frame["length"].isna().sum())
    if missing:
        notes.append(f"{missing:,} scored items have no stored response (no length): left out.")
    return tuple(notes)


# ---------------------------------------------------------------- for people


def people_table(r: LengthBias, level: str) -> pd.DataFrame:
    """The table under the chart: one level, readable headers, 3 decimals for r."""
    t = r.table[r.table["level"] == level]
    out = pd.DataFrame(
        {
            "Scorer": t["scorer"].map(lambda s: "Humans (mean)" if s == HUMANS else s),
            "Skill": t["label"],
            "r": [tables.fmt_ci(v, lo, hi, tables.STAT_DIGITS)
                  for v, lo, hi in zip(t["r"], t["ci_low"], t["ci_high"], strict=True)],
            "n items": t["n"],
            "n instances": t["n_instances"],
            "skipped instances": t["n_skipped"],
            "n models": t["n_models"],
            "excess over humans": [
                tables.fmt_ci(v, lo, hi, tables.STAT_DIGITS) if k == "llm" else ""
                for k, v, lo, hi in zip(t["kind"], t["excess"], t["excess_low"],
                                        t["excess_high"], strict=True)],
            "n paired instances": t["n_paired"].where(t["kind"] == "llm"),
            "flagged": t["flagged"].map({True: "⚑ flagged", False: ""}),
            "direction": t["direction"],
            "FLASK (model level)": t["published"].map(
                lambda v: "" if pd.isna(v) else f"{v:.3f}"),
        }
    )  # fmt: skip
    return out.reset_index(drop=True)


EXPORT_HEADERS = {
    "scorer": "Scorer", "kind": "Kind", "label": "Skill", "level": "Level", "r": "r",
    "ci_low": "r 95% CI low", "ci_high": "r 95% CI high", "n": "Items (n)",
    "n_instances": "Instances", "n_skipped": "Skipped instances", "n_models": "Models",
    "excess": "Excess over humans", "excess_low": "Excess 95% CI low",
    "excess_high": "Excess 95% CI high", "n_paired": "Paired instances", "flagged": "Flagged",
    "direction": "Direction", "published": "FLASK Table 5 (model level)", "method": "Method",
}  # fmt: skip


def length_export(r: LengthBias, fmt: str = "csv") -> bytes:
    """Every figure of both levels at full precision, as CSV (formula-looking names
    neutralised) or Parquet (typed): the download beside the table."""
    frame = r.table.assign(
        scorer=r.table["scorer"].map(lambda s: "Humans (mean)" if s == HUMANS else s),
        method=r.query.method,
    ).drop(columns="skill")
    return tables.people_csv(frame, headers=EXPORT_HEADERS, fmt=fmt)


# ---------------------------------------------------------------- score against length


@dataclass(frozen=True)
class ScatterQuery:
    filters: Filters
    scorer: str  # an LLM judge, or HUMANS
    skill: str
    n_boot: int = N_BOOT
    seed: int = 0
    level: float = LEVEL


@dataclass(frozen=True)
class LengthScatter:
    """``bins``: per length bin (deciles of the scorer's items), per scorer shown (the chosen
    one, and the humans on the same items when it is a judge): lo, hi (characters), length
    (median), mean, ci_low, ci_high, n, n_instances. ``points``: a random sample of at most
    MAX_POINTS of the chosen scorer's items (length, score), for the cloud."""

    query: ScatterQuery
    label: str
    bins: pd.DataFrame
    points: pd.DataFrame
    n_items: int


N_BINS = 10
MAX_POINTS = 1500  # a cloud readable in a browser; the bins carry every item


def length_scatter(store: Store, q: ScatterQuery) -> LengthScatter:
    """The chosen scorer's scores against length on one criterion, binned by length."""
    data = items(store, q.filters)
    frame = data.frame
    score = frame["humans"].to_numpy() if q.scorer == HUMANS else _judge_or_none(data, q.scorer)
    sel = ((frame["skill"] == q.skill) & frame["length"].notna()).to_numpy() & ~np.isnan(score)
    label = data.labels.get(q.skill, q.skill)
    if not sel.any():
        empty = pd.DataFrame(columns=["scorer", "lo", "hi", "length", "mean", "ci_low", "ci_high",
                                      "n", "n_instances"])  # fmt: skip
        return LengthScatter(q, label, empty, pd.DataFrame(columns=["length", "score"]), 0)
    length, cluster = frame["length"].to_numpy()[sel], data.cluster[sel]
    edges = np.unique(np.quantile(length, np.linspace(0, 1, N_BINS + 1)))
    code = np.clip(np.searchsorted(edges, length, side="right") - 1, 0, max(len(edges) - 2, 0))
    weights = data.weights(q.n_boot, q.seed)
    shown = [(q.scorer, score[sel])]
    if q.scorer != HUMANS and data.humans:
        shown.append((HUMANS, frame["humans"].to_numpy()[sel]))
    bins = pd.concat([_bins(name, s, length, code, edges, cluster, weights, q.level)
                      for name, s in shown], ignore_index=True)  # fmt: skip
    rng = np.random.default_rng(q.seed)
    pick = np.sort(rng.choice(len(length), min(MAX_POINTS, len(length)), replace=False))
    points = pd.DataFrame({"length": length[pick], "score": score[sel][pick]})
    return LengthScatter(q, label, bins, points, int(sel.sum()))


def _judge_or_none(data: Items, name: str) -> np.ndarray:
    if name in data.judges:
        return data.judge(name)
    return np.full(len(data.frame), np.nan)


def _bins(name, score, length, code, edges, cluster, weights, level) -> pd.DataFrame:
    """Mean score per length bin with a CI resampling instances (the bin's ratio of sums)."""
    ok = ~np.isnan(score)
    n_bins = max(len(edges) - 1, 1)
    n_c = weights.shape[1]
    cell = cluster[ok] * n_bins + code[ok]
    sums = np.bincount(cell, score[ok], minlength=n_c * n_bins).reshape(n_c, n_bins)
    counts = np.bincount(cell, minlength=n_c * n_bins).reshape(n_c, n_bins).astype(np.float64)
    boot = resampled_ratio(weights, sums, counts)
    lo, hi = percentile_ci(boot, level)
    n = counts.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(0) / n
    med = [float(np.median(length[ok][code[ok] == b])) if n[b] else np.nan for b in range(n_bins)]
    return pd.DataFrame({
        "scorer": name, "lo": edges[:n_bins], "hi": edges[1 : n_bins + 1], "length": med,
        "mean": mean, "ci_low": lo, "ci_high": hi, "n": n.astype(int),
        "n_instances": (counts > 0).sum(0),
    })[lambda t: t["n"] > 0]  # fmt: skip


def resampled_ratio(weights: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    both = lb.resampled(weights, np.hstack([sums, counts]))
    k = sums.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return both[:, :k] / both[:, k:]
