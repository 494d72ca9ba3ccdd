"""Statistics on ordinal scores with N/A: means with instance-level bootstrap CIs.

The unit of resampling is the instance (a cluster of scores: several skills, several models),
never the row: rows of one instance are correlated, so a row bootstrap would give CIs that are
too narrow. One weight matrix is shared by every group, so CIs of different models are paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

N_BOOT = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class MeanCI:
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def bootstrap_weights(n_clusters: int, n_boot: int = N_BOOT, seed: int = 0) -> np.ndarray:
    """(n_boot, n_clusters) resampling counts: each row draws n_clusters clusters with
    replacement. Uniform indices counted per row (numpy's multinomial is ~30× slower for
    100k clusters), a few million at a time to bound the temporary memory."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n_boot, n_clusters))
    step = max(1, 2**22 // max(n_clusters, 1))
    for start in range(0, n_boot if n_clusters else 0, step):
        rows = min(step, n_boot - start)
        idx = rng.integers(0, n_clusters, size=(rows, n_clusters))
        idx += np.arange(rows)[:, None] * n_clusters
        counts = np.bincount(idx.ravel(), minlength=rows * n_clusters)
        out[start : start + rows] = counts.reshape(rows, n_clusters)
    return out


def cluster_bootstrap_means(
    sums: np.ndarray,
    counts: np.ndarray,
    *,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
) -> MeanCI:
    """Mean and percentile CI per group of a ratio estimator sum(total)/sum(n).

    ``sums`` and ``counts`` are (n_clusters, n_groups): the score total and the number of
    non-N/A scores of each instance in each group (0 where absent). Groups with no scores give
    NaN; a group whose resample has no scores is dropped from that group's percentiles.
    """
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    n_total = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=0) / n_total
    if sums.shape[0] == 0:
        nan = np.full(sums.shape[1], np.nan)
        return MeanCI(nan, nan, nan)
    w = bootstrap_weights(sums.shape[0], n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (w @ sums) / (w @ counts)
    alpha = (1 - level) / 2
    lo = np.full_like(mean, np.nan)
    hi = np.full_like(mean, np.nan)
    has = n_total > 0
    if n_boot and has.any():
        lo[has], hi[has] = np.nanquantile(boot[:, has], [alpha, 1 - alpha], axis=0)
    return MeanCI(mean, lo, hi)


def grouped_means(
    rows: pd.DataFrame, group_cols: list[str], *, n_boot: int = N_BOOT, seed: int = 0
) -> pd.DataFrame:
    """Mean, CI, n (scores), n_instances and n_na per group from per-instance sums.

    ``rows`` has the group columns plus ``instance_id``, ``total``, ``n``, ``n_na`` (one row
    per group × instance), as the SCORE_SUMS queries return.
    """
    out_cols = [*group_cols, "mean", "ci_low", "ci_high", "n", "n_instances", "n_na"]
    if rows.empty:
        return pd.DataFrame(columns=out_cols)
    gcodes = rows.groupby(group_cols, sort=True, dropna=False).ngroup().to_numpy()
    icodes, iuniq = pd.factorize(rows["instance_id"])
    sums = np.zeros((len(iuniq), gcodes.max() + 1))
    counts = np.zeros_like(sums)
    np.add.at(sums, (icodes, gcodes), rows["total"].fillna(0).to_numpy(np.float64))
    np.add.at(counts, (icodes, gcodes), rows["n"].to_numpy(np.float64))
    ci = cluster_bootstrap_means(sums, counts, n_boot=n_boot, seed=seed)
    first = rows.assign(_g=gcodes).drop_duplicates("_g").sort_values("_g")
    out = first[group_cols].reset_index(drop=True)
    agg = rows.assign(_g=gcodes, _scored=rows["n"] > 0).groupby("_g")
    out["mean"], out["ci_low"], out["ci_high"] = ci.mean, ci.lo, ci.hi
    out["n"] = agg["n"].sum().to_numpy().astype(int)
    out["n_instances"] = agg["_scored"].sum().to_numpy().astype(int)
    out["n_na"] = agg["n_na"].sum().to_numpy().astype(int)
    return out[out_cols]
