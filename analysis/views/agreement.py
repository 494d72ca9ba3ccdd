"""Human vs judge agreement: the data behind the page and ``python -m analysis agreement``.

A scorer is a judge's name or a group ``kind:human`` / ``kind:llm`` (the mean of that kind's
scorers per item). An item is one (instance, model, skill); A and B are aligned on the items both
scored with a number (N/A on either side is counted, not paired). Correlations are computed at
the level the user picks (pooled items, within instances, or over model means); MAE, exact and
±1 agreement, quadratic-weighted κ and Krippendorff's α are always over the aligned items.
Slices (by domain, difficulty or model) use the pooled level. Every CI resamples instances.

Criteria and the aggregate never share a key. Every result frame has a ``scope`` column:
``criterion`` rows carry the criterion's name in ``skill``; the ``all_criteria`` row (present
with two or more criteria) pools the aligned items of every criterion and has ``skill`` None, so
a criterion may be called anything, ``overall`` included. ``for_skill(frame, None)``, ``worst(r,
None)`` and the charts' ``None`` mean "all criteria". The fair human ceiling is in
``views/ceiling.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.stats import agreement_bootstrap as boot
from analysis.stats.agreement import CORRELATIONS
from analysis.stats.means import N_BOOT, bootstrap_weights
from analysis.stats.ranks import MIN_INSTANCES
from analysis.views.agreement_data import _load, aligned, side, slice_key
from analysis.views.ceiling import Group, held_out_pairs, human_ceiling, raters_alpha
from analysis.views.scorers import Scorer, rater_names, scorer_options, skill_order
from analysis.views.tables import skill_label

LEVELS = ("pooled", "instance", "system")
# What ``agreement()`` can compute; "slices_shown": only the slices of the query's criterion
# (all criteria pooled when it has none), the rows the page shows.
SECTIONS = ("stats", "slices", "ceiling", "ranks")
SLICE_FIELDS = ("domain", "difficulty", "model")
SCOPE_CRITERION = "criterion"  # a row of one criterion (named in ``skill``)
SCOPE_ALL = "all_criteria"  # the row pooling every criterion's items (``skill`` None)
ALL_LABEL = "All criteria (pooled)"  # how tables and charts name the all-criteria row


@dataclass(frozen=True)
class AgreementQuery:
    """What to compare: A and B over the sidebar's slice (its judge is ignored)."""

    filters: Filters
    a: str
    b: str
    level: str = "pooled"
    skill: str | None = None
    by: str | None = None
    n_boot: int = N_BOOT
    seed: int = 0
    items: tuple[tuple[str, str], ...] = ()  # only these (instance_id, model); empty: all


@dataclass(frozen=True)
class Agreement:
    query: AgreementQuery
    a: Scorer
    b: Scorer
    stats: pd.DataFrame  # scope, skill, statistic, level, value, ci_low, ci_high, n, n_instances
    slices: pd.DataFrame  # scope, skill, slice, statistic, value, ci_low, ci_high, n, …
    ceiling: pd.DataFrame  # scope, skill, figure, statistic, value, CI, n … (views/ceiling.py)
    ranks: pd.DataFrame  # scope, skill, value (Kendall τ-b of model rankings), CI, n
    pairs: pd.DataFrame  # instance_id, model, skill, a, b, abs_diff, difficulty, domains
    counts: pd.DataFrame  # skill, aligned, a_na, b_na, a_only, b_only
    scales: dict[str, tuple[float, float]]
    notes: tuple[str, ...]
    humans: tuple[str, ...] = ()  # the human raters behind the ceiling (A's own excluded)
    # skill id → the dataset's label (its own criteria's, else FLASK's: dataset_skills)
    labels: dict[str, str] | None = None

    def label(self, skill: str | None) -> str:
        """A criterion for people: the dataset's label; None: all criteria pooled."""
        return ALL_LABEL if skill is None else skill_label(skill, self.labels or {})


def scopes(skills: list[str]) -> list[Group]:
    """(scope, skill) of each result row group: every criterion, then all of them (2+)."""
    return [(SCOPE_CRITERION, s) for s in skills] + ([(SCOPE_ALL, None)] if len(skills) > 1 else [])


def for_skill(frame: pd.DataFrame, skill: str | None) -> pd.DataFrame:
    """The rows of one criterion of a result frame; None: the all-criteria rows (or, where the
    frame has a single criterion, its rows: they are all the items)."""
    if frame.empty:
        return frame
    if skill is not None:
        return frame[(frame["scope"] == SCOPE_CRITERION) & (frame["skill"] == skill)]
    pooled = frame[frame["scope"] == SCOPE_ALL]
    return pooled if not pooled.empty or frame["skill"].nunique() > 1 else frame


def worst(r: Agreement, skill: str | None, k: int = 200) -> pd.DataFrame:
    """The k items of a criterion (None: of all criteria) where A and B differ most, with a
    link to each."""
    top = (r.pairs if skill is None else r.pairs[r.pairs["skill"] == skill]).head(k)
    links = [
        _sample_link(r.query.filters.dataset, i, m)
        for i, m in zip(top["instance_id"], top["model"], strict=True)
    ]
    return top.assign(link=links)


def worst_keys(r: Agreement, skill: str | None, k: int = 200) -> list[tuple[str, str]]:
    """The (instance_id, model) responses behind the worst disagreements, each once."""
    top = worst(r, skill, k)
    return list(dict.fromkeys(zip(top["instance_id"], top["model"], strict=True)))


def _sample_link(dataset: str, instance_id: str, model: str) -> str:
    """Link to a sample on the Samples page (its query-parameter contract)."""
    return "samples?" + urlencode({"dataset": dataset, "instance": instance_id, "model": model})


def _groups(pairs: pd.DataFrame, skills: list[str], key: pd.Series | None = None):
    """Group codes per pair: each criterion, plus all criteria when there are several; with a
    slice key, one group per slice × scope. Returns (row index, group code, labels)."""
    slices = [None] if key is None else sorted(key.unique(), key=str)
    labels, rows, codes = [], [], []
    skill_of = pairs["skill"].to_numpy()
    for sl in slices:
        in_slice = np.ones(len(pairs), bool) if sl is None else (key == sl).to_numpy()
        for scope, name in scopes(skills):
            sel = np.flatnonzero(in_slice & ((skill_of == name) | (name is None)))
            if len(sel):
                rows.append(sel)
                codes.append(np.full(len(sel), len(labels)))
                labels.append((sl, scope, name))
    if not rows:
        return np.array([], int), np.array([], int), []
    return np.concatenate(rows), np.concatenate(codes), labels


def pooled_stats(
    pairs: pd.DataFrame, skills: list[str], cluster: np.ndarray, weights: np.ndarray,
    key: pd.Series | None = None, shown: tuple | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Every statistic per group (each criterion, all criteria, each slice of ``key``), with
    its instance-bootstrap CI; the Leaderboard of judges (views/judge_board.py) calls it too.
    ``shown`` = (skill, number of criteria): only the groups ``for_skill(frame, skill)`` returns
    (a page's view), computed as part of them all."""
    rows, codes, labels = _groups(pairs, skills, key)
    keep = None
    if shown is not None:
        keep = [g for g, (_, scope, name) in enumerate(labels) if _shown(scope, name, *shown)]
    if not labels or keep == []:
        return pd.DataFrame()
    a, b = pairs["a"].to_numpy(float)[rows], pairs["b"].to_numpy(float)[rows]
    out = boot.pooled(a, b, cluster[rows], codes, len(labels), weights, keep=keep)
    lab = pd.DataFrame(labels, columns=["slice", "scope", "skill"], dtype=object)
    lab = lab.rename_axis("group").reset_index()
    return lab.merge(out, on="group").drop(columns="group")


def _shown(scope: str, name: str | None, skill: str | None, n_skills: int) -> bool:
    """Whether ``for_skill(frame, skill)`` keeps a row of (scope, name)."""
    if skill is not None:
        return name == skill
    return scope == SCOPE_ALL or n_skills == 1


def level_stats(
    pairs: pd.DataFrame, skills: list[str], cluster: np.ndarray, weights: np.ndarray, level: str
) -> pd.DataFrame:
    """Correlations at the instance or system level, per criterion and over all of them."""
    rows, codes, labels = _groups(pairs, skills)
    if not labels:
        return pd.DataFrame()
    a, b = pairs["a"].to_numpy(float)[rows], pairs["b"].to_numpy(float)[rows]
    c, m = cluster[rows], pd.factorize(pairs["model"])[0][rows]
    n_inst = [len(np.unique(c[codes == g])) for g in range(len(labels))]
    if level == "system":
        frame, n_models = boot.system_groups(a, b, c, m, codes, len(labels), weights)
        frame = frame.sort_values("group", kind="stable")
        g = frame.pop("group").to_numpy()
        frame = frame.assign(n=np.take(n_models, g), n_skipped=0)
    else:
        # A unit is an instance × criterion: integer keys, numbered in order of appearance.
        skill = pd.factorize(pairs["skill"])[0][rows]
        parts = []
        for g in range(len(labels)):
            sel = codes == g
            unit = pd.factorize(c[sel] * (int(skill.max()) + 1) + skill[sel])[0]
            part, used, skipped = boot.per_instance(a[sel], b[sel], c[sel], unit, m[sel], weights)
            parts.append(part.assign(n=used, n_skipped=skipped, group=g))
        frame = pd.concat(parts, ignore_index=True)
        g = frame.pop("group").to_numpy()
    frame = frame.reset_index(drop=True)
    # object columns: the all-criteria row's skill stays None (a str column would make it NaN)
    scope = pd.Series([labels[i][1] for i in g])
    names = [labels[i][2] for i in g]
    skill_name = pd.Series(names, dtype=object if None in names else None)
    return frame.assign(scope=scope, skill=skill_name, n_instances=np.take(n_inst, g))


def rater_agreement(
    store: Store,
    filters: Filters,
    raters: str | Sequence[str],
    skill: str | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Inter-rater α (ordinal, interval) among ``raters`` (kind:human|kind:llm|NAME,NAME,…, or
    several such values: ``scorers.rater_names``) per criterion and over all criteria
    (``scope``), with CI and n (pairable ratings), n_units, n_instances, n_raters."""
    judges = rater_names(raters, scorer_options(store, filters.dataset))
    if len(judges) < 2:
        raise InputError("--raters", None, None, f"need at least 2 raters, got {', '.join(judges)}")
    q = AgreementQuery(filters, judges[0], judges[1], skill=skill, n_boot=n_boot, seed=seed)
    rows = _load(store, q.filters, q.skill, list(judges))
    # Sorted, as the pairs' instances are: the resamples must not depend on the store's row order.
    instances = pd.Index(np.sort(rows["instance_id"].unique()))
    if instances.empty:
        return pd.DataFrame()
    weights = bootstrap_weights(len(instances), n_boot, seed)
    out = tidy(raters_alpha(rows, judges, scopes(skill_order(rows["skill"])), instances, weights))
    if out.empty:
        return out
    out = out.assign(raters=", ".join(judges))
    out.attrs["raters"] = list(judges)  # the names themselves: a name may hold ", "
    return out


def agreement(store: Store, q: AgreementQuery, sections: tuple[str, ...] = SECTIONS) -> Agreement:
    """Every number of the Human-vs-judge page (and the CLI) for one query; ``sections``: the
    parts to compute (the others stay empty): a page computes the section on screen. Every
    value is the one of the full computation, to the last bit ("slices_shown" included)."""
    if q.level not in LEVELS:
        raise InputError(
            "--level", None, None, f"unknown level '{q.level}'; use {', '.join(LEVELS)}"
        )
    if q.by is not None and q.by not in SLICE_FIELDS:
        raise InputError(
            "--by", None, None, f"unknown field '{q.by}'; use {', '.join(SLICE_FIELDS)}"
        )
    d = aligned(store, q)
    a, b, pairs, skills, notes = d.a, d.b, d.pairs, d.skills, list(d.notes)
    out = Agreement(
        q, a, b, *[pd.DataFrame()] * 4, pairs, d.counts, d.scales, (), d.panel, d.labels
    )
    if pairs.empty:
        return replace(out, notes=tuple(notes), humans=())
    instances, weights, cluster = d.instances, d.weights, d.cluster
    parts: dict[str, pd.DataFrame] = {}
    data = (pairs, skills, cluster, weights)
    if "ranks" in sections or ("stats" in sections and q.level == "system"):
        # The system level serves the rank stability and the system correlations: once.
        system = level_stats(*data, "system")
        parts["ranks"] = system[system["statistic"] == "kendall"]
    if "stats" in sections:
        stats = pooled_stats(*data).assign(level="pooled", n_skipped=0)
        if q.level != "pooled":
            level = system if q.level == "system" else level_stats(*data, q.level)
            level = level.assign(level=q.level)
            items = stats[~stats["statistic"].isin(CORRELATIONS)]
            stats = pd.concat([level, items], ignore_index=True)
        parts["stats"] = stats
    if q.by and ("slices" in sections or "slices_shown" in sections):
        sliced, key = slice_key(pairs, q.by)
        shown = None if "slices" in sections else (q.skill, len(skills))
        parts["slices"] = pooled_stats(
            sliced, skills, instances.get_indexer(sliced["instance_id"]), weights, key, shown
        )
    panel = d.panel
    if "ceiling" in sections:
        if len(panel) >= 2:
            # The held-out pairs do not depend on the seed: kept with the prepared data.
            judge = d.kept("judge", lambda: side(d.rows, a.judges))
            held = d.kept("held_out", lambda: held_out_pairs(d.rows, panel, judge))
            groups = scopes(skills)
            parts["ceiling"] = human_ceiling(
                d.rows, panel, judge, groups, instances, weights, held=held
            )
        ceiling = parts.get("ceiling", pd.DataFrame())
        if ceiling.empty or "human_ceiling" not in set(ceiling["figure"]):
            notes.append(_no_ceiling(a, panel))
    shown = {k: tidy(v) for k, v in parts.items() if k in sections or k == "slices"}
    return replace(out, notes=tuple(notes), **shown)


def _no_ceiling(a: Scorer, panel: tuple[str, ...]) -> str:
    if len(panel) < 2:
        return "Fewer than 2 human raters other than A in this slice: no human ceiling."
    return (
        f"No item in this slice was scored by {a.spec} and by two or more humans: no "
        "leave-one-out human ceiling."
    )


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Skills in taxonomy order (then slices); drop the slice column where there are none; no
    CI from a single instance (every resample would be that instance: a zero-width lie), and
    ``few_instances`` where a figure rests on fewer than MIN_INSTANCES instances."""
    if frame.empty:
        return frame
    frame = frame.copy()
    frame.loc[frame["n_instances"] < 2, ["ci_low", "ci_high"]] = np.nan
    frame["few_instances"] = frame["n_instances"] < MIN_INSTANCES
    named = frame["scope"] == SCOPE_CRITERION
    order = {s: i for i, s in enumerate(skill_order(frame.loc[named, "skill"]))}
    frame = frame.assign(_o=frame["skill"].where(named).map(order).fillna(len(order)))
    if "slice" in frame and frame["slice"].isna().all():
        frame = frame.drop(columns="slice")
    keys = ["_o"] + (["slice"] if "slice" in frame else [])
    frame = frame.sort_values(keys, kind="stable").drop(columns="_o").reset_index(drop=True)
    first = [c for c in ("scope", "skill", "slice") if c in frame]
    return frame[first + [c for c in frame if c not in first]]
