"""Means and instance-bootstrap CIs against hand-computed values and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.stats.means import bootstrap_weights, cluster_bootstrap_means, grouped_means


def test_weights_resample_all_clusters():
    w = bootstrap_weights(7, n_boot=50, seed=3)
    assert w.shape == (50, 7)
    assert (w.sum(axis=1) == 7).all()


def test_mean_is_ratio_of_sums_by_hand():
    # instance 1: scores 4, 5 (group a) ; instance 2: 2 (a), 3 (b); instance 3: only N/A in a
    sums = np.array([[9.0, 0.0], [2.0, 3.0], [0.0, 0.0]])
    counts = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    ci = cluster_bootstrap_means(sums, counts, n_boot=200)
    assert ci.mean[0] == pytest.approx(11 / 3)
    assert ci.mean[1] == pytest.approx(3.0)
    assert ci.lo[0] <= ci.mean[0] <= ci.hi[0]


def test_group_without_scores_is_nan_not_zero():
    ci = cluster_bootstrap_means(np.array([[3.0, 0.0]]), np.array([[1.0, 0.0]]), n_boot=10)
    assert np.isnan(ci.mean[1]) and np.isnan(ci.lo[1]) and np.isnan(ci.hi[1])


def test_ci_matches_scipy_cluster_bootstrap():
    """Same estimator (ratio of resampled cluster sums), independent resampler: scipy's."""
    rng = np.random.default_rng(7)
    n_inst = 300
    sizes = rng.integers(1, 4, n_inst)
    effects = rng.normal(0, 0.8, n_inst)
    totals = np.array([np.clip(np.round(3 + e + rng.normal(0, 0.7, k)), 1, 5).sum()
                       for e, k in zip(effects, sizes, strict=True)])  # fmt: skip
    ours = cluster_bootstrap_means(totals[:, None], sizes[:, None].astype(float),
                                   n_boot=4000, seed=1)  # fmt: skip

    def ratio(t, n, axis=-1):
        return t.sum(axis=axis) / n.sum(axis=axis)

    res = sps.bootstrap((totals, sizes.astype(float)), ratio, paired=True, vectorized=True,
                        n_resamples=4000, method="percentile", random_state=2)  # fmt: skip
    assert ours.mean[0] == pytest.approx(totals.sum() / sizes.sum())
    assert ours.lo[0] == pytest.approx(res.confidence_interval.low, abs=0.015)
    assert ours.hi[0] == pytest.approx(res.confidence_interval.high, abs=0.015)
    # A row bootstrap would ignore the clustering and be narrower: ours must not be.
    rows = np.concatenate([np.full(k, t / k) for t, k in zip(totals, sizes, strict=True)])
    assert ours.hi[0] - ours.lo[0] > 0.9 * (2 * 1.96 * rows.std(ddof=1) / np.sqrt(len(rows)))


def test_grouped_means_counts_and_na():
    rows = pd.DataFrame(
        {
            "model": ["m1", "m1", "m2", "m2", "m2"],
            "instance_id": ["1", "2", "1", "2", "3"],
            "total": [4.0, 2.0, 5.0, None, 3.0],
            "n": [1, 1, 1, 0, 1],
            "n_na": [0, 0, 0, 1, 0],
        }
    )
    out = grouped_means(rows, ["model"], n_boot=100).set_index("model")
    assert out.loc["m1", "mean"] == pytest.approx(3.0)
    assert out.loc["m2", "mean"] == pytest.approx(4.0)
    assert out.loc["m2", "n"] == 2 and out.loc["m2", "n_na"] == 1
    assert out.loc["m2", "n_instances"] == 2
