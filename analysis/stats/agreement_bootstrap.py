"""Instance-level bootstrap of the agreement statistics: point value, 95% CI, n.

Every function takes the weight matrix of ``stats.bootstrap_weights`` (resamples × instances),
so one call shares one set of resamples across skills, slices and levels (their CIs are paired),
and tests can rebuild the same resamples to check the CIs by a second method.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import sparse

from analysis.stats.agreement import (
    CORRELATIONS,
    MAX_LEVELS,
    STATISTICS,
    alpha_from_coincidence,
    alpha_raw,
    corr_rows,
    pair_stats_raw,
    pair_stats_table,
)
from analysis.stats.ranks import ratios

LEVEL = 0.95
_CELLS_PER_CHUNK = 4_000_000  # bootstrap tables held at once (resamples × groups × K²)


def percentile_ci(boot: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along axis 0, ignoring resamples where the statistic is undefined."""
    alpha = (1 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN, on purpose
        lo, hi = np.nanquantile(boot, [alpha, 1 - alpha], axis=0)
    return lo, hi


def _frame(values: dict, boots: dict, names: tuple, level: float) -> pd.DataFrame:
    """Long frame (group, statistic, value, ci_low, ci_high) from per-statistic arrays."""
    parts = []
    for stat in names:
        lo, hi = percentile_ci(boots[stat], level)
        g = np.arange(len(values[stat]))
        parts.append(
            pd.DataFrame(
                {"group": g, "statistic": stat, "value": values[stat], "ci_low": lo, "ci_high": hi}
            )
        )
    return pd.concat(parts, ignore_index=True)


def _counts(cluster: np.ndarray, group: np.ndarray, n_groups: int) -> pd.DataFrame:
    n = np.bincount(group, minlength=n_groups)
    pairs = pd.DataFrame({"g": group, "c": cluster}).drop_duplicates()
    n_inst = np.bincount(pairs["g"].to_numpy(), minlength=n_groups)
    return pd.DataFrame({"group": np.arange(n_groups), "n": n, "n_instances": n_inst})


def pooled(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    weights: np.ndarray,
    level: float = LEVEL,
) -> pd.DataFrame:
    """Every statistic over the aligned pairs of each group, CIs resampling instances.

    a, b: scores; cluster: instance code (column of ``weights``) per pair; group: group code per
    pair (a pair may appear in several groups by repeating it). Returns one row per group ×
    statistic with value, ci_low, ci_high, n (pairs) and n_instances.
    """
    values = np.unique(np.concatenate([a, b]))
    if len(values) <= MAX_LEVELS:
        point, boots = _pooled_tables(a, b, cluster, group, n_groups, weights, values)
    else:
        point, boots = _pooled_raw(a, b, cluster, group, n_groups, weights)
    out = _frame(point, boots, STATISTICS, level)
    return out.merge(_counts(cluster, group, n_groups), on="group")


def _pooled_tables(a, b, cluster, group, n_groups, weights, values):
    k = len(values)
    cell = np.searchsorted(values, a) * k + np.searchsorted(values, b)
    m = sparse.csr_array(
        (np.ones(len(a)), (cluster, group * k * k + cell)),
        shape=(weights.shape[1], n_groups * k * k),
    )
    point = pair_stats_table(np.asarray(m.sum(axis=0)).reshape(n_groups, k, k), values)
    step = max(1, _CELLS_PER_CHUNK // (n_groups * k * k))
    chunks = []
    for start in range(0, weights.shape[0], step):
        tables = np.asarray(weights[start : start + step] @ m).reshape(-1, n_groups, k, k)
        chunks.append(pair_stats_table(tables, values))
    boots = {s: np.concatenate([c[s] for c in chunks]) for s in STATISTICS}
    return point, boots


def _pooled_raw(a, b, cluster, group, n_groups, weights):
    """Continuous scores: the statistics of each resample from its expanded pairs (slower)."""
    point = {s: np.full(n_groups, np.nan) for s in STATISTICS}
    boots = {s: np.full((weights.shape[0], n_groups), np.nan) for s in STATISTICS}
    for g in range(n_groups):
        sel = group == g
        ga, gb, gc = a[sel], b[sel], cluster[sel]
        for s, v in pair_stats_raw(ga, gb).items():
            point[s][g] = v
        for r, w in enumerate(weights):
            rows = np.repeat(np.arange(len(ga)), w[gc].astype(np.int64))
            for s, v in pair_stats_raw(ga[rows], gb[rows]).items():
                boots[s][r, g] = v
    return point, boots


def per_instance(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray,
    unit: np.ndarray,
    item: np.ndarray,
    weights: np.ndarray,
    level: float = LEVEL,
) -> tuple[pd.DataFrame, int, int]:
    """Correlations across the responses within each unit (an instance, or an instance × skill),
    averaged over units; units with a constant side or < 2 responses are skipped.

    ``unit`` codes the unit of each pair, ``item`` the response (model) within it. Returns the
    frame (statistic, value, ci_low, ci_high), the number of units used and skipped.
    """
    n_units = int(unit.max()) + 1 if len(unit) else 0
    x = np.full((n_units, int(item.max()) + 1 if len(item) else 0), np.nan)
    y = x.copy()
    x[unit, item], y[unit, item] = a, b
    r = corr_rows(x, y)
    used = np.isfinite(r["pearson"])
    unit_cluster = np.zeros(n_units, dtype=np.int64)
    unit_cluster[unit] = cluster
    n_clusters = weights.shape[1]
    point, boots = {}, {}
    for s in CORRELATIONS:
        ok = used & np.isfinite(r[s])
        total = np.bincount(unit_cluster[ok], r[s][ok], minlength=n_clusters)
        cnt = np.bincount(unit_cluster[ok], minlength=n_clusters).astype(np.float64)
        point[s] = np.array([total.sum() / cnt.sum() if cnt.sum() else np.nan])
        with np.errstate(invalid="ignore", divide="ignore"):
            boots[s] = ((weights @ total) / (weights @ cnt))[:, None]
    frame = _frame(point, boots, CORRELATIONS, level).drop(columns="group")
    return frame, int(used.sum()), int(n_units - used.sum())


def system(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray,
    model: np.ndarray,
    weights: np.ndarray,
    level: float = LEVEL,
) -> tuple[pd.DataFrame, int]:
    """Correlations between the per-model means of A and B (over the aligned pairs), with the
    means recomputed in every resample. Returns the frame and the number of models.

    Spearman and Kendall see the models' order with ties compared exactly (stats.ranks): two
    models with equal means as fractions tie in the point value and in every resample, however
    the sums were ordered (a skill filter, a resample), so the value is that of scipy on the
    exact means."""
    n_models = int(model.max()) + 1 if len(model) else 0
    shape = (weights.shape[1], n_models)
    sa, sb, cnt = (np.zeros(shape) for _ in range(3))
    np.add.at(sa, (cluster, model), a)
    np.add.at(sb, (cluster, model), b)
    np.add.at(cnt, (cluster, model), 1.0)
    ra, rb = ratios(sa, cnt), ratios(sb, cnt)

    def corr(w: np.ndarray) -> dict[str, np.ndarray]:
        # Order statistics on exact keys, Pearson on the means (the same deterministic floats).
        ordered = corr_rows(ra.keys(w), rb.keys(w))
        ordered["pearson"] = corr_rows(ra.means(w), rb.means(w))["pearson"]
        return ordered

    point = corr(np.ones((1, shape[0])))
    boots = corr(weights)
    frame = _frame(point, {s: v[:, None] for s, v in boots.items()}, CORRELATIONS, level)
    # The models present: a criterion's pairs may skip some codes of the caller's numbering.
    return frame.drop(columns="group"), len(np.unique(model))


def raters_alpha(
    unit: np.ndarray, value: np.ndarray, cluster: np.ndarray, weights: np.ndarray, level=LEVEL
) -> pd.DataFrame:
    """Krippendorff's α among any number of raters with missing ratings: one row per level
    (alpha_ordinal, alpha_interval) with CI, n (pairable values), n_units and n_instances.

    unit: code of the rated item per rating; cluster: its instance (column of ``weights``).
    """
    _, inv, m = np.unique(unit, return_inverse=True, return_counts=True)
    keep = m[inv] >= 2
    unit, value, cluster = inv[keep], value[keep], cluster[keep]
    names = ("alpha_ordinal", "alpha_interval")
    values = np.unique(value)
    if len(values) <= MAX_LEVELS:
        point, boots = _raters_tables(unit, value, cluster, weights, values)
    else:
        point = {k: np.array([v]) for k, v in alpha_raw(unit, value).items()}
        boots = {k: np.full((weights.shape[0], 1), np.nan) for k in names}
        for r, w in enumerate(weights):
            rep = w[cluster].astype(np.int64)
            # A unit drawn twice becomes two units: number the copies apart.
            copy = np.concatenate([np.arange(c) for c in rep]) if rep.sum() else rep
            u = np.repeat(unit, rep) * (int(rep.max()) + 1) + copy
            for k, v in alpha_raw(u, np.repeat(value, rep)).items():
                boots[k][r, 0] = v
    frame = _frame(point, boots, names, level).drop(columns="group")
    frame["n"] = len(value)
    frame["n_units"] = len(np.unique(unit))
    frame["n_instances"] = len(np.unique(cluster))
    return frame


def _raters_tables(unit, value, cluster, weights, values):
    k = len(values)
    code = np.searchsorted(values, value)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    counts = np.zeros((n_units, k))
    np.add.at(counts, (unit, code), 1.0)
    m_u = counts.sum(1)
    # Coincidences of one unit: ordered pairs of its values from different raters / (m_u − 1).
    o = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / np.maximum(
        m_u - 1, 1
    )[:, None, None]
    unit_cluster = np.zeros(n_units, dtype=np.int64)
    unit_cluster[unit] = cluster
    per_inst = np.zeros((weights.shape[1], k * k))
    np.add.at(per_inst, unit_cluster, o.reshape(n_units, k * k))
    point = alpha_from_coincidence(per_inst.sum(0).reshape(1, k, k), values)
    boots = alpha_from_coincidence((weights @ per_inst).reshape(-1, k, k), values)
    return point, {s: v[:, None] for s, v in boots.items()}
