"""Correlation of a score with its response's length, with instance-level bootstrap resamples.

Two levels, as the agreement statistics have them: *within instances* (per instance, the
correlation across its models' responses, averaged over instances: what differs between
answers to the same instruction) and *pooled* (over every response at once: long answers to
hard instructions count too). Every function takes the weight matrix of
``stats.means.bootstrap_weights`` (resamples × instances), so a judge's and the humans'
correlations on the same items see the same resamples and their difference has a paired CI.

Pure numpy: no store, no scipy (tests check every value against scipy.stats).
"""

from __future__ import annotations

import numpy as np

from analysis.stats.agreement import corr_rows, rankdata

METHODS = ("pearson", "spearman")
_CELLS_PER_CHUNK = 2_000_000  # resample × response weights held at once by the pooled Spearman


def unit_correlations(
    length: np.ndarray, score: np.ndarray, unit: np.ndarray, item: np.ndarray, method: str
) -> np.ndarray:
    """The correlation of score with length within each unit (0 … max(unit)), across its items
    (models); NaN where a unit has < 2 responses or a constant side (every model the same score,
    or the same length): no correlation is defined there, so the unit is skipped."""
    _check(method)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    n_items = int(item.max()) + 1 if len(item) else 0
    x = np.full((n_units, n_items), np.nan)
    y = x.copy()
    x[unit, item], y[unit, item] = length, score
    if not n_units:
        return np.zeros(0)
    r = corr_rows(x, y)[method]
    # A constant side compared exactly: a mean of several humans (3.33…) summed over a row
    # may not divide back to itself, which would leave rounding noise to correlate.
    return np.where(_flat(x) | _flat(y), np.nan, r)


def _flat(v: np.ndarray) -> np.ndarray:
    """Rows whose present values are all equal (or that have none)."""
    present = ~np.isnan(v)
    return np.where(present, v, -np.inf).max(1) == np.where(present, v, np.inf).min(1)


def unit_mean(
    r: np.ndarray, unit_cluster: np.ndarray, weights: np.ndarray
) -> tuple[float, np.ndarray]:
    """The mean of the defined per-unit values ``r`` (the point value), and its value in each
    resample (instances drawn with their units): a ratio of weighted sums per instance."""
    ok = np.isfinite(r)
    n_clusters = weights.shape[1]
    total = np.bincount(unit_cluster[ok], r[ok], minlength=n_clusters)
    count = np.bincount(unit_cluster[ok], minlength=n_clusters).astype(np.float64)
    point = float(total.sum() / count.sum()) if count.sum() else np.nan
    summed = resampled(weights, np.column_stack([total, count]))
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = summed[:, 0] / summed[:, 1]
    return point, boot


def resampled(weights: np.ndarray, per_cluster: np.ndarray) -> np.ndarray:
    """weights @ per_cluster over the clusters that hold anything: a judge that scored a tenth
    of the slice's instances costs a tenth of the product (same sums, as the rest are 0)."""
    used = np.flatnonzero(np.any(per_cluster != 0, axis=1))
    if len(used) == per_cluster.shape[0]:
        return weights @ per_cluster
    return weights[:, used] @ per_cluster[used]


def pooled(
    length: np.ndarray, score: np.ndarray, cluster: np.ndarray, weights: np.ndarray, method: str
) -> tuple[float, np.ndarray]:
    """The correlation over every response (point value) and in each resample, where a
    response counts as often as its instance was drawn: Pearson from per-instance moments
    (one matrix product), Spearman from each resample's own midranks (as scipy ranks the
    expanded resample)."""
    _check(method)
    x, y = np.asarray(length, dtype=np.float64), np.asarray(score, dtype=np.float64)
    if len(x) < 2:
        return np.nan, np.full(weights.shape[0], np.nan)
    if method == "pearson":
        return _pearson_pooled(x, y, cluster, weights)
    spearman = _Spearman(x, y, cluster, weights.shape[1])
    point = spearman(np.ones((1, weights.shape[1])))[0]
    boot = np.empty(weights.shape[0])
    step = max(1, _CELLS_PER_CHUNK // len(x))
    for start in range(0, weights.shape[0], step):
        boot[start : start + step] = spearman(weights[start : start + step])
    return float(point), boot


class _Spearman:
    """Spearman's rho of x and y in any resample of clusters, as scipy computes it on the
    expanded resample (each response repeated as often as its instance was drawn): Pearson of
    the midranks. A value's midrank is (weight below it) + (its own weight + 1) / 2, and the
    midranks of n responses average (n + 1) / 2 whatever the ties, so only three weighted
    sums are needed. The responses are kept in x's order (the sums ignore order), so x's ranks
    come from one cumulative sum; y (a score) has few distinct values, whose weights come
    from a small product with the per-instance counts."""

    def __init__(self, x: np.ndarray, y: np.ndarray, cluster: np.ndarray, n_c: int) -> None:
        order = np.argsort(x, kind="stable")
        sx = x[order]
        new = np.r_[True, sx[1:] != sx[:-1]]
        self.ends = np.r_[np.flatnonzero(new)[1:], len(sx)] - 1  # each x value's last slot
        self.group = np.cumsum(new) - 1  # x value of each slot
        self.cluster = cluster[order]
        levels, level = np.unique(y, return_inverse=True)
        k = len(levels)
        self.counts = np.bincount(cluster * k + level, minlength=n_c * k).reshape(n_c, k)
        self.onehot = np.zeros((len(y), k))  # slot → y value, to sum each value's slots
        self.onehot[np.arange(len(y)), level[order]] = 1.0

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        wy = weights @ self.counts  # resamples × y values
        ry = np.cumsum(wy, axis=1) - wy + (wy + 1) / 2
        n = wy.sum(1)
        mean_sq = n * ((n + 1) / 2) ** 2
        w = weights[:, self.cluster]
        upto = np.cumsum(w, axis=1)[:, self.ends]  # weight up to each x value
        rx = upto - (upto - np.c_[np.zeros(len(w)), upto[:, :-1]] - 1) / 2
        if len(self.ends) < w.shape[1]:  # tied x values share their midrank
            rx = rx[:, self.group]
        wrx = w * rx
        vx = np.einsum("ij,ij->i", wrx, rx) - mean_sq
        vy = (wy * ry * ry).sum(1) - mean_sq
        cov = ((wrx @ self.onehot) * ry).sum(1)  # Σ over y values of ry × Σ w·rx of its slots
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (cov - mean_sq) / np.sqrt(vx * vy)
            # Constant ranks (one value drawn) up to rounding: no correlation.
            ok = (vx > 1e-9 * mean_sq) & (vy > 1e-9 * mean_sq)
        return np.where(ok, np.clip(r, -1, 1), np.nan)


def _pearson_pooled(x, y, cluster, weights):
    # Centred first (correlation is shift-invariant): sums of squares of raw lengths in the
    # thousands would lose digits to cancellation.
    x, y = x - x.mean(), y - y.mean()
    n_clusters = weights.shape[1]
    moments = np.column_stack(
        [np.bincount(cluster, v, minlength=n_clusters) for v in (None, x, y, x * x, y * y, x * y)]
    ).astype(np.float64)
    point = _from_moments(moments.sum(0)[None, :])[0]
    return float(point), _from_moments(resampled(weights, moments))


def _from_moments(m: np.ndarray) -> np.ndarray:
    n, sx, sy, sxx, syy, sxy = m.T
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / n
        vx, vy = sxx - sx * sx / n, syy - sy * sy / n
        # A constant side (zero variance, up to rounding) has no correlation.
        tiny = 1e-12 * np.maximum(np.abs(sxx) + np.abs(syy), 1.0)
        r = cov / np.sqrt(vx * vy)
        return np.where((vx > tiny) & (vy > tiny) & (n >= 2), np.clip(r, -1, 1), np.nan)


def _check(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")


def model_level(
    length: np.ndarray,
    score: np.ndarray,
    cluster: np.ndarray,
    model: np.ndarray,
    weights: np.ndarray,
    method: str,
) -> tuple[float, np.ndarray, int]:
    """The correlation, across models, of each model's mean length with its mean score (FLASK
    Table 5's level), with the means recomputed in each resample of instances. Returns the
    point value, the resamples' values and the number of models."""
    _check(method)
    n_models = int(model.max()) + 1 if len(model) else 0
    n_c = weights.shape[1]
    cell = cluster * n_models + model
    parts = [np.bincount(cell, w, minlength=n_c * n_models).reshape(n_c, n_models)
             for w in (length, score, None)]  # fmt: skip
    per_cluster = np.hstack(parts).astype(np.float64)
    point = _model_corr(per_cluster.sum(0)[None, :], n_models, method)[0]
    boot = _model_corr(resampled(weights, per_cluster), n_models, method)
    return float(point), boot, int((parts[2].sum(0) > 0).sum())


def _model_corr(sums: np.ndarray, n_models: int, method: str) -> np.ndarray:
    """Per row of (R, 3·models) sums (length, score, count), the correlation of the means."""
    sl, ss, cnt = (sums[:, i * n_models : (i + 1) * n_models] for i in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        ml, ms = sl / cnt, ss / cnt  # NaN: a model absent from the resample
    if not n_models:
        return np.full(len(sums), np.nan)
    r = _row_corr(ml, ms, method)
    return np.where(_flat(np.where(np.isnan(ms), np.nan, ml)) | _flat(ms), np.nan, r)


def _row_corr(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """``corr_rows(x, y)[method]`` without the statistics not asked for; rows with a missing
    cell (a model absent from a resample) go through corr_rows itself."""
    gaps = np.isnan(x).any(1) | np.isnan(y).any(1)
    out = np.full(len(x), np.nan)
    if gaps.any():
        out[gaps] = corr_rows(x[gaps], y[gaps])[method]
    full = ~gaps
    if full.any():
        u, v = x[full], y[full]
        if method == "spearman":
            u, v = rankdata(u), rankdata(v)
        du, dv = u - u.mean(1, keepdims=True), v - v.mean(1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[full] = (du * dv).sum(1) / np.sqrt((du * du).sum(1) * (dv * dv).sum(1))
    return out
