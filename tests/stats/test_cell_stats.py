"""The page statistics (stats.moment_means, paired_bootstrap, holm) against hand-computed
values and independent implementations (scipy, plain resampling loops)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.stats.means import cluster_bootstrap_means, holm, moment_means, paired_bootstrap


def _moments(per_instance: list[tuple[float, float]]) -> pd.DataFrame:
    """Moments of one cell from (s_i, c_i) per instance, written out longhand."""
    s = np.array([p[0] for p in per_instance], float)
    c = np.array([p[1] for p in per_instance], float)
    return pd.DataFrame({"total": [s.sum()], "n": [c.sum()], "total_sq": [(s * s).sum()],
                         "cross": [(s * c).sum()], "n_sq": [(c * c).sum()],
                         "n_instances": [(c > 0).sum()]})  # fmt: skip


def test_one_score_per_instance_is_the_t_interval():
    x = np.array([4, 5, 3, 4, 2, 5, 4, 3, 4, 5], float)
    got = moment_means(_moments([(v, 1) for v in x])).iloc[0]
    lo, hi = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert got["mean"] == pytest.approx(3.9)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)


def test_pooled_cell_by_hand():
    # three instances: (4+5)/2 scores, (2)/1, (3+3+4)/3 → R = 21/6 = 3.5
    per = [(9, 2), (2, 1), (10, 3)]
    got = moment_means(_moments(per)).iloc[0]
    resid = [9 - 3.5 * 2, 2 - 3.5 * 1, 10 - 3.5 * 3]  # 2, -1.5, -0.5
    se = np.sqrt(3 / 2 * sum(r * r for r in resid)) / 6
    half = sps.t.ppf(0.975, 2) * se
    assert got["mean"] == pytest.approx(3.5)
    assert got["ci_low"] == pytest.approx(3.5 - half)
    assert got["ci_high"] == pytest.approx(3.5 + half)


def test_n_zero_and_single_instance_cells_are_nan_not_zero():
    cells = pd.concat([_moments([(0, 0), (0, 0)]), _moments([(4, 1)])], ignore_index=True)
    out = moment_means(cells)
    assert out[["mean", "ci_low", "ci_high"]].iloc[0].isna().all()
    assert out["mean"].iloc[1] == 4.0 and np.isnan(out["ci_low"].iloc[1])


def test_ci_kept_inside_the_observed_range():
    x = np.array([5, 5, 5, 5, 4], float)  # t-interval would pass 5
    cells = _moments([(v, 1) for v in x]).assign(lowest=4.0, highest=5.0)
    got = moment_means(cells).iloc[0]
    assert got["ci_high"] == 5.0 and got["ci_low"] < 4.8


def test_clustered_ci_agrees_with_instance_bootstraps():
    """Second methods: the project's cluster bootstrap and scipy's, on clustered data."""
    rng = np.random.default_rng(11)
    k = rng.integers(1, 4, 500)
    eff = rng.normal(0, 0.9, 500)
    s = np.array([np.clip(np.round(3 + e + rng.normal(0, 0.6, n)), 1, 5).sum()
                  for e, n in zip(eff, k, strict=True)])  # fmt: skip
    got = moment_means(_moments(list(zip(s, k, strict=True)))).iloc[0]
    boot = cluster_bootstrap_means(s[:, None], k[:, None].astype(float), n_boot=5000, seed=3)
    res = sps.bootstrap((s, k.astype(float)), lambda a, b, axis=-1: a.sum(axis) / b.sum(axis),
                        paired=True, vectorized=True, n_resamples=5000, method="percentile",
                        random_state=4)  # fmt: skip
    for lo, hi in [(boot.lo[0], boot.hi[0]), tuple(res.confidence_interval)]:
        assert got["ci_low"] == pytest.approx(lo, abs=0.012)
        assert got["ci_high"] == pytest.approx(hi, abs=0.012)


def test_holm_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    # sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max so far 0.06
    assert holm(p)[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert np.isnan(holm(p)[4])
    assert holm(np.array([0.4, 0.5])) == pytest.approx([0.8, 0.8])  # capped, monotone
    assert holm(np.array([0.9, 0.2, 0.6])) == pytest.approx([1.0, 0.6, 1.0])


def _patterns(grp: str, a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    df = pd.DataFrame({"grp": grp, "s_a": a, "c_a": 1.0, "s_b": b, "c_b": 1.0})
    return df.groupby(list(df.columns), as_index=False).size().rename(columns={"size": "count"})


def _loop_bootstrap(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int):
    """Independent: resample instance indices in a plain loop."""
    rng = np.random.default_rng(seed)
    d = np.empty(n_boot)
    for r in range(n_boot):
        idx = rng.integers(0, len(a), len(a))
        d[r] = a[idx].mean() - b[idx].mean()
    p = min(1.0, 2 * (min((d <= 0).sum(), (d >= 0).sum()) + 1) / (n_boot + 1))
    return np.quantile(d, [0.025, 0.975]), p


def test_paired_bootstrap_matches_a_resampling_loop():
    rng = np.random.default_rng(5)
    n = 150
    base = rng.integers(1, 6, n)
    a = np.clip(base + rng.choice([0, 0, 1], n), 1, 5).astype(float)  # A a bit better
    b = np.clip(base + rng.choice([-1, 0, 1], n), 1, 5).astype(float)  # no real difference
    pat = pd.concat([_patterns("x", a, base.astype(float)), _patterns("y", b, base.astype(float))])
    res = paired_bootstrap(pat, ["x", "y"], n_boot=6000, seed=1)
    for j, (u, v) in enumerate([(a, base), (b, base)]):
        (lo, hi), p = _loop_bootstrap(u, v.astype(float), 6000, seed=2 + j)
        assert res.diff[j] == pytest.approx(u.mean() - v.mean(), abs=1e-12)
        assert res.n_shared[j] == n
        assert res.lo[j] == pytest.approx(lo, abs=0.02)
        assert res.hi[j] == pytest.approx(hi, abs=0.02)
        assert res.p[j] == pytest.approx(p, abs=0.04)
    assert res.p[0] < 0.01 < 0.2 < res.p[1]
    # scipy's paired bootstrap of the mean difference as a third opinion
    sp = sps.bootstrap((a, base.astype(float)), lambda u, v, axis=-1: u.mean(axis) - v.mean(axis),
                       paired=True, vectorized=True, n_resamples=6000, method="percentile",
                       random_state=9)  # fmt: skip
    assert (res.lo[0], res.hi[0]) == pytest.approx(tuple(sp.confidence_interval), abs=0.02)


def test_paired_bootstrap_pooled_ratio_and_unshared_instances():
    # ability-like cells: per-instance sums over 1-3 scores; instance 4 lacks B (not shared)
    pat = pd.DataFrame({"grp": "g", "s_a": [9.0, 4.0, 12.0, 5.0], "c_a": [2.0, 1.0, 3.0, 1.0],
                        "s_b": [6.0, 3.0, 9.0, 0.0], "c_b": [2.0, 1.0, 3.0, 0.0],
                        "count": [10, 7, 5, 4]})  # fmt: skip
    res = paired_bootstrap(pat, ["g", "empty"], n_boot=500)
    shared = pat.iloc[:3]
    w = shared["count"]
    expected = (w * shared["s_a"]).sum() / (w * shared["c_a"]).sum() - (
        (w * shared["s_b"]).sum() / (w * shared["c_b"]).sum()
    )
    assert res.diff[0] == pytest.approx(expected)
    assert res.n_shared.tolist() == [22, 0]
    assert np.isnan(res.diff[1]) and np.isnan(res.lo[1]) and np.isnan(res.p[1])


def test_paired_bootstrap_does_not_depend_on_row_order():
    rng = np.random.default_rng(8)
    a, b = rng.integers(1, 6, 80).astype(float), rng.integers(1, 6, 80).astype(float)
    pat = _patterns("x", a, b)
    one = paired_bootstrap(pat, ["x"], n_boot=300)
    two = paired_bootstrap(pat.sample(frac=1, random_state=1), ["x"], n_boot=300)
    assert (one.lo, one.hi, one.p) == (two.lo, two.hi, two.p)
