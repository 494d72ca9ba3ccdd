"""Ranking means exactly: equal means share a rank, whatever the order they were summed in.

A model's mean is a ratio Σ scores / Σ counts. Summed in floating point, two means that are
equal as fractions (347/144 and 347/144) can come out one rounding step apart, and then rank as
different: rank correlations and rank intervals are wrong and change with the summation order
(a skill filter, a resample). Scores are ordinal, or means of a few annotators (k/3), or decimals:
they have a *resolution* D, the smallest integer with D·x whole for every value. Scaled by D the
sums are integers, and float64 adds integers below 2^53 exactly in any order, so the resampled
sums ``weights @ numerators`` are exact too. Two exact ratios n1/c1 and n2/c2 that differ are at
least 1/(c1·c2) apart, so their correctly rounded quotients can only collide past 2^52; there
the ranks are settled with Python integers. Data without such a resolution (truly continuous
scores) rank at a relative tolerance instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import numpy as np

MIN_INSTANCES = 5  # below this many instances a CI is marked as resting on too few
MAX_DENOMINATOR = 1000  # per value: means of up to dozens of raters, decimals to 0.001
MAX_RESOLUTION = 10**7  # a common denominator past this: the data count as continuous
RTOL = 1e-9  # continuous data: means this close (relative) are ties
_SAFE = 2.0**53  # float64 holds every integer below this exactly
_CELLS_PER_CHUNK = 4_000_000


def _off_grid(x: np.ndarray, d: int) -> np.ndarray:
    """Values that are not a whole multiple of 1/d, allowing the rounding of a computed mean."""
    y = x * d
    return np.abs(y - np.round(y)) > 1e-9 + 1e-12 * np.abs(y)


def resolution(values: np.ndarray) -> int | None:
    """The smallest D ≤ MAX_RESOLUTION with D·x a whole number for every finite value (up to
    float rounding), or None when there is none (continuous data)."""
    x = np.unique(np.asarray(values, dtype=np.float64))
    x = x[np.isfinite(x)]
    d = 1
    # Each pass fixes the first value off the grid; the lcm at least doubles, so few passes.
    while (bad := np.flatnonzero(_off_grid(x, d))).size:
        v = float(x[bad[0]])
        d = lcm(d, Fraction(v).limit_denominator(MAX_DENOMINATOR).denominator)
        if d > MAX_RESOLUTION or _off_grid(np.array([v]), d)[0]:
            return None
    return d


@dataclass(frozen=True)
class Ratios:
    """Per-cluster numerators and counts of ratio means (clusters × groups).

    ``scale`` is the resolution D when ``num`` holds the sums × D as exact integers (then every
    weighted sum of them is exact), or None for continuous data (``num`` = the sums as given).
    """

    num: np.ndarray
    cnt: np.ndarray
    scale: int | None

    def sums(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(numerators, counts) of every resample: weights (R, clusters) → (R, groups)."""
        return weights @ self.num, weights @ self.cnt

    def means(self, weights: np.ndarray) -> np.ndarray:
        """The means of every resample (NaN where a group has no score in it)."""
        num, cnt = self.sums(weights)
        with np.errstate(invalid="ignore", divide="ignore"):
            # One correctly rounded division of exact integers: equal fractions, equal floats.
            return num / (cnt * (self.scale or 1))

    def keys(self, weights: np.ndarray) -> np.ndarray:
        """(R, groups) sort keys whose order and ties are those of the exact means; NaN for a
        group without scores in the resample. Compare keys within one row only."""
        num, cnt = self.sums(weights)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where(cnt > 0, num / cnt, np.nan)
        if self.scale is None:
            return _snapped(q)
        top = np.nanmax(np.abs(q), initial=0.0) if q.size else 0.0
        if float(np.max(cnt, initial=0.0)) ** 2 * max(top, 1.0) < _SAFE / 2:
            return q  # distinct fractions are ≥ 1/(c1·c2) apart: more than a rounding step
        return _exact_dense(num, cnt)


def ratios(sums: np.ndarray, counts: np.ndarray, max_weight: float | None = None) -> Ratios:
    """Ratios from per-cluster sums and counts (clusters × groups), exact where the data have a
    resolution and every weighted sum stays below 2^53. ``max_weight``: the largest total weight
    of a resample (the number of clusters for a bootstrap; the default)."""
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    d = resolution(sums)
    total = float(sums.shape[0] if max_weight is None else max_weight)
    if d is not None:
        num = np.round(sums * d)
        bound = total * max(float(np.abs(num).max(initial=0.0)), 1.0)
        if bound < _SAFE and total * float(counts.max(initial=0.0)) < _SAFE:
            return Ratios(num, counts, d)
    return Ratios(sums, counts, None)


def _exact_dense(num: np.ndarray, cnt: np.ndarray) -> np.ndarray:
    """Dense ranks of num/cnt per row, compared as Python fractions (huge counts only)."""
    out = np.full(num.shape, np.nan)
    for r in range(num.shape[0]):
        ok = np.flatnonzero(cnt[r] > 0)
        fr = [Fraction(int(num[r, j]), int(cnt[r, j])) for j in ok]
        pos = {f: i for i, f in enumerate(sorted(set(fr)))}
        out[r, ok] = [pos[f] for f in fr]
    return out


def _snapped(q: np.ndarray) -> np.ndarray:
    """Dense ranks per row where neighbours closer than RTOL (relative) are one value."""
    out = np.full(q.shape, np.nan)
    if q.size == 0:
        return out
    order = np.argsort(q, axis=1)  # NaN sorts last
    s = np.take_along_axis(q, order, axis=1)
    tol = RTOL * np.maximum(np.nanmax(np.abs(q), axis=1, initial=0.0), 1.0)[:, None]
    step = np.diff(s, axis=1) > tol
    dense = np.concatenate([np.zeros((len(q), 1)), np.cumsum(step, axis=1)], axis=1)
    dense[np.isnan(s)] = np.nan
    np.put_along_axis(out, order, dense, axis=1)
    return out


def competition_ranks(keys: np.ndarray) -> np.ndarray:
    """Rank 1 = the highest key in each row; equal keys share the best rank (1, 2, 2, 4);
    NaN (absent) keys get NaN and do not count. keys: (R, M)."""
    keys = np.asarray(keys, dtype=np.float64)
    r, m = keys.shape
    out = np.empty((r, m))
    step = max(1, _CELLS_PER_CHUNK // max(m * m, 1))
    for start in range(0, r, step):
        k = keys[start : start + step]
        # [row, i, j] = key j beats key i; comparisons with NaN are False, so absent don't count
        out[start : start + step] = 1 + (k[:, None, :] > k[:, :, None]).sum(-1)
    out[np.isnan(keys)] = np.nan
    return out


def mean_ranks(totals: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = highest) of the means totals/counts of each group, equal means
    compared exactly; NaN where a group has no count. For a one-off ordering of models."""
    totals = np.asarray(totals, dtype=np.float64)[None, :]
    rat = ratios(totals, np.asarray(counts, dtype=np.float64)[None, :], max_weight=1)
    return competition_ranks(rat.keys(np.ones((1, 1))))[0]


@dataclass(frozen=True)
class RankCI:
    rank: np.ndarray  # competition rank on the whole sample (NaN: no score)
    lo: np.ndarray
    hi: np.ndarray


def rank_intervals(
    sums: np.ndarray,
    counts: np.ndarray,
    blocks: np.ndarray,
    weights: np.ndarray,
    level: float = 0.95,
) -> RankCI:
    """Each group's rank among the groups of its block (1 = highest mean), and its interval
    over the bootstrap resamples ``weights`` (R × clusters) with the ranks recomputed in each.

    sums, counts: (clusters, groups) per-cluster score totals and counts; blocks: (groups,) the
    block of each group (e.g. the ability a model's column belongs to). A group without scores
    in a resample has no rank there and that resample is left out of its interval. The interval
    is [lower α/2 quantile, upper 1 − α/2 quantile] of the resampled ranks ('lower'/'higher':
    whole ranks, never narrower than the interpolated ones).
    """
    rat = ratios(sums, counts)
    n_groups = rat.num.shape[1]
    point = rat.keys(np.ones((1, rat.num.shape[0])))
    boot = rat.keys(weights) if len(weights) else np.empty((0, n_groups))
    rank, rboot = np.full(n_groups, np.nan), np.full(boot.shape, np.nan)
    for b in np.unique(blocks):
        cols = np.flatnonzero(blocks == b)
        rank[cols] = competition_ranks(point[:, cols])[0]
        rboot[:, cols] = competition_ranks(boot[:, cols])
    alpha = (1 - level) / 2
    lo, hi = np.full(n_groups, np.nan), np.full(n_groups, np.nan)
    has = np.isfinite(rboot).any(axis=0)
    if has.any():
        lo[has] = np.nanquantile(rboot[:, has], alpha, axis=0, method="lower")
        hi[has] = np.nanquantile(rboot[:, has], 1 - alpha, axis=0, method="higher")
    return RankCI(rank, lo, hi)
