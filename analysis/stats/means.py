"""Statistics on ordinal scores with N/A: means with instance-level bootstrap CIs.

The unit of resampling is the instance (a cluster of scores: several skills, several models),
never the row: rows of one instance are correlated, so a row bootstrap would give CIs that are
too narrow. One weight matrix is shared by every group, so CIs of different models are paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.stats.ranks import MIN_INSTANCES, RTOL, rank_intervals

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
    weights: np.ndarray | None = None,
) -> MeanCI:
    """Mean and percentile CI per group of a ratio estimator sum(total)/sum(n).

    ``sums`` and ``counts`` are (n_clusters, n_groups): the score total and the number of
    non-N/A scores of each instance in each group (0 where absent). Groups with no scores give
    NaN; a group whose resample has no scores is dropped from that group's percentiles.
    ``weights``: resamples to use (bootstrap_weights' layout) instead of drawing n_boot.
    """
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    n_total = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums.sum(axis=0) / n_total
    if sums.shape[0] == 0:
        nan = np.full(sums.shape[1], np.nan)
        return MeanCI(nan, nan, nan)
    w = bootstrap_weights(sums.shape[0], n_boot, seed) if weights is None else weights
    n_boot = len(w)
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
    rows: pd.DataFrame,
    group_cols: list[str],
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    rank_by: str | None = None,
) -> pd.DataFrame:
    """Mean, CI, n (scores), n_instances, n_na and few_instances per group from per-instance
    sums.

    ``rows`` has the group columns plus ``instance_id``, ``total``, ``n``, ``n_na`` (one row
    per group × instance), as views.overview's SCORE_SUMS_BY_ABILITY returns. Instances are
    resampled in sorted order, so the CIs do not depend on the order the rows came in. A CI from
    one instance is NaN (every resample is that instance: a zero-width interval says nothing);
    ``few_instances`` marks means resting on fewer than MIN_INSTANCES instances.

    With ``rank_by`` (one of ``group_cols``, e.g. "model"): also ``rank``, ``rank_low``,
    ``rank_high``, each group's competition rank among the groups that share the other group
    columns (1 = highest mean; equal means, compared exactly, share a rank) and its 95%
    interval over the same resamples as the CIs (stats.ranks.rank_intervals).
    """
    out_cols = [*group_cols, "mean", "ci_low", "ci_high", "n", "n_instances", "n_na"]
    out_cols += ["few_instances"] + (["rank", "rank_low", "rank_high"] if rank_by else [])
    if rows.empty:
        return pd.DataFrame(columns=out_cols)
    gcodes = rows.groupby(group_cols, sort=True, dropna=False).ngroup().to_numpy()
    icodes, iuniq = pd.factorize(rows["instance_id"], sort=True)
    sums = np.zeros((len(iuniq), gcodes.max() + 1))
    counts = np.zeros_like(sums)
    np.add.at(sums, (icodes, gcodes), rows["total"].fillna(0).to_numpy(np.float64))
    np.add.at(counts, (icodes, gcodes), rows["n"].to_numpy(np.float64))
    w = bootstrap_weights(len(iuniq), n_boot, seed)
    ci = cluster_bootstrap_means(sums, counts, weights=w)
    first = rows.assign(_g=gcodes).drop_duplicates("_g").sort_values("_g")
    out = first[group_cols].reset_index(drop=True)
    agg = rows.assign(_g=gcodes, _scored=rows["n"] > 0).groupby("_g")
    out["mean"], out["ci_low"], out["ci_high"] = ci.mean, ci.lo, ci.hi
    out["n"] = agg["n"].sum().to_numpy().astype(int)
    out["n_instances"] = agg["_scored"].sum().to_numpy().astype(int)
    out["n_na"] = agg["n_na"].sum().to_numpy().astype(int)
    out.loc[out["n_instances"] < 2, ["ci_low", "ci_high"]] = np.nan
    out["few_instances"] = out["n_instances"] < MIN_INSTANCES
    if rank_by:
        others = [c for c in group_cols if c != rank_by]
        blocks = (
            out.groupby(others, sort=False, dropna=False).ngroup().to_numpy()
            if others
            else (np.zeros(len(out), dtype=int))
        )
        r = rank_intervals(sums, counts, blocks, w)
        out["rank"], out["rank_low"], out["rank_high"] = r.rank, r.lo, r.hi
    return out[out_cols]


# ------------------------------------------------------------ cell means from moments (pages)
#
# The radar and breakdown pages show hundreds of cells (model × skill × level …) over millions
# of scores. Their CIs come from per-group moments that DuckDB computes in the same pass as the
# mean, so a page costs about one aggregate. The instance is still the unit: with per-instance
# sums s_i, counts c_i, the ratio mean R = Σs/Σc has the cluster-robust (linearisation)
# variance I/(I-1) · Σ(s_i - R c_i)² / (Σc)², I = instances with a score. When every instance
# adds one score to the cell (a skill cell of one judge), this is the textbook t-interval.
# Tests check it against the instance bootstrap (cluster_bootstrap_means) and scipy's.

MOMENT_COLS = ("total", "n", "total_sq", "cross", "n_sq", "n_instances")


def moment_means(cells: pd.DataFrame, *, level: float = LEVEL) -> pd.DataFrame:
    """Add ``mean``, ``ci_low``, ``ci_high`` to a frame of per-cell moments.

    Columns needed (sums over the cell's instances of their per-instance sums): ``total`` Σs,
    ``n`` Σc (non-N/A scores), ``total_sq`` Σs², ``cross`` Σs·c, ``n_sq`` Σc², ``n_instances``
    (instances with a score). A cell with n = 0 has NaN mean; one instance gives a NaN CI.
    Optional ``lowest`` / ``highest`` (extreme per-instance means) bound the CI, as they bound
    any bootstrap replicate (a t-interval near the end of the scale could leave it).
    """
    # scipy.stats.t.ppf is stdtrit(df, q) after argument checks: the same numbers without
    # importing scipy.stats (over a second on a page's first visit).
    from scipy.special import stdtrit

    out = cells.copy()
    s, c, q, p, d, k = (out[col].to_numpy(np.float64) for col in MOMENT_COLS)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(c > 0, s / c, np.nan)
        ss = np.maximum(q - 2 * mean * p + mean * mean * d, 0.0)  # Σ(s_i - R c_i)²
        se = np.sqrt(k / (k - 1) * ss) / c
        half = stdtrit(np.where(k > 1, k - 1, np.nan), 0.5 + level / 2) * se
    half = np.where(k > 1, half, np.nan)
    lo, hi = mean - half, mean + half
    if "lowest" in out and "highest" in out:
        lo = np.maximum(lo, out["lowest"].to_numpy(np.float64))
        hi = np.minimum(hi, out["highest"].to_numpy(np.float64))
    out["mean"], out["ci_low"], out["ci_high"] = mean, lo, hi
    return out


# ------------------------------------------------------------ paired differences, Holm


EXACT_MAX = 16  # shared instances up to which p is exact (2^16 relabelings); beyond: bootstrap
MIN_TEST_INSTANCES = 2  # one shared instance: no test and no CI (every resample is that one)
TESTS = {"exact": "exact sign-flip test", "bootstrap": "paired bootstrap", "none": "no test"}


@dataclass(frozen=True)
class PairedDiff:
    diff: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    p: np.ndarray
    n_shared: np.ndarray
    test: np.ndarray  # per group, a key of TESTS: which test gave p


def sign_flip_p(s_a, c_a, s_b, c_b) -> float:
    """Exact two-sided permutation p-value of Σs_a/Σc_a − Σs_b/Σc_b over n shared instances.

    Under "no difference" the labels A and B are exchangeable within an instance, so each of
    the 2^n ways of swapping them in some instances is as likely as the observed one; p is the
    share of them (the observed one included) whose |difference| is at least the observed
    |difference| (equal within float rounding counts as at least). With one score per instance
    and side this is the sign-flip test of the mean paired difference; the smallest possible
    p is 2/2^n, so 5 or fewer instances can never reach 0.05.
    """
    v = [np.asarray(x, dtype=np.float64) for x in (s_a, c_a, s_b, c_b)]
    n = len(v[0])
    if n > EXACT_MAX:
        raise ValueError(f"exact enumeration is for ≤ {EXACT_MAX} instances, got {n}")
    swap = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    keep = 1.0 - swap
    sa, ca = keep @ v[0] + swap @ v[2], keep @ v[1] + swap @ v[3]
    sb, cb = keep @ v[2] + swap @ v[0], keep @ v[3] + swap @ v[1]
    t = np.abs(sa / ca - sb / cb)
    observed = t[0]  # no swap
    return float(np.mean(t >= observed - RTOL * max(1.0, observed)))


def paired_bootstrap(
    patterns: pd.DataFrame,
    groups: list,
    *,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
) -> PairedDiff:
    """Paired instance bootstrap of mean(A) - mean(B) per group over the instances both score.

    ``patterns`` has ``grp`` and the per-instance sums ``s_a, c_a, s_b, c_b`` with ``count``,
    the number of shared instances having exactly that pattern (DuckDB counts them, so the work
    here scales with distinct patterns, not rows: ≤ 25 per skill for 1-5 scores). Resampling
    I instances with replacement is the same as drawing Multinomial(I, pattern frequencies), so
    this is the exact instance bootstrap, not an approximation.

    The p-value (``test`` says which): with one shared instance none, and no CI; up to
    EXACT_MAX instances the exact sign-flip test (``sign_flip_p``), since a bootstrap of a few
    instances claims certainty it does not have (with one instance every resample has the
    same sign); beyond, the bootstrap's two-sided 2·min(P*(d ≤ 0), P*(d ≥ 0)) with the +1
    correction, capped at 1.
    """
    g_index = {g: j for j, g in enumerate(groups)}
    pat = patterns[(patterns["c_a"] > 0) & (patterns["c_b"] > 0)]
    # A fixed pattern order: DuckDB's GROUP BY returns rows in any order, and the draws map
    # to slots, so without it the same data could give slightly different CIs run to run.
    pat = pat[pat["grp"].isin(g_index)].sort_values(["grp", "s_a", "c_a", "s_b", "c_b"])
    n_g = len(groups)
    k_max = max(1, int(pat.groupby("grp").size().max()) if len(pat) else 1)
    counts = np.zeros((n_g, k_max))
    vals = np.zeros((4, n_g, k_max))  # s_a, c_a, s_b, c_b per pattern slot
    slot = pat.groupby("grp").cumcount().to_numpy()
    gi = pat["grp"].map(g_index).to_numpy()
    counts[gi, slot] = pat["count"].to_numpy(np.float64)
    for j, col in enumerate(("s_a", "c_a", "s_b", "c_b")):
        vals[j, gi, slot] = pat[col].to_numpy(np.float64)
    n_shared = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tot = np.einsum("gk,jgk->jg", counts, vals)
        diff = np.where(n_shared > 0, tot[0] / tot[1] - tot[2] / tot[3], np.nan)
    lo, hi, p = _bootstrap(counts, vals, n_boot, level, seed)
    test = np.where(n_shared > EXACT_MAX, "bootstrap", "none").astype(object)
    for g in np.flatnonzero((n_shared >= MIN_TEST_INSTANCES) & (n_shared <= EXACT_MAX)):
        per_instance = np.repeat(vals[:, g, :], counts[g].astype(np.int64), axis=1)
        p[g], test[g] = sign_flip_p(*per_instance), "exact"
    few = n_shared < MIN_TEST_INSTANCES
    lo[few], hi[few], p[few] = np.nan, np.nan, np.nan
    return PairedDiff(diff, lo, hi, p, n_shared.astype(int), test)


def _bootstrap(counts, vals, n_boot: int, level: float, seed: int):
    """Percentile CI and bootstrap p per group from pattern counts (groups × slots)."""
    n_g = counts.shape[0]
    n_shared = counts.sum(axis=1)
    has = n_shared > 0
    lo, hi, p = (np.full(n_g, np.nan) for _ in range(3))
    if not has.any() or n_boot == 0:
        return lo, hi, p
    probs = counts / np.where(has, n_shared, 1)[:, None]
    probs[~has, 0] = 1.0  # placeholder draws for empty groups, masked below
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(np.where(has, n_shared, 1).astype(np.int64), probs, size=(n_boot, n_g))
    with np.errstate(invalid="ignore", divide="ignore"):
        bt = np.einsum("bgk,jgk->jbg", draws.astype(np.float64), vals)
        boot = bt[0] / bt[1] - bt[2] / bt[3]
    alpha = (1 - level) / 2
    lo[has], hi[has] = np.quantile(boot[:, has], [alpha, 1 - alpha], axis=0)
    le = (boot <= 0).sum(axis=0)
    ge = (boot >= 0).sum(axis=0)
    p[has] = np.minimum(1.0, 2 * (np.minimum(le, ge) + 1) / (n_boot + 1))[has]
    return lo, hi, p


def holm(p: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1); NaN stays NaN and
    does not count toward the number of tests."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out
