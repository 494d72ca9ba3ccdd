"""Two scorers against one reference, and their paired gap: point values equal scipy on both
the table path (few distinct values, ties) and the raw path (continuous scores), and the CIs
equal a plain loop over the same resamples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from analysis.stats.agreement import STATISTICS
from analysis.stats.means import bootstrap_weights
from analysis.stats.paired_agreement import paired_agreement

TOL = 1e-9


def _data(continuous: bool, n: int = 150, seed: int = 2):
    rng = np.random.default_rng(seed)
    truth = rng.normal(3, 1, n)
    if continuous:  # > MAX_LEVELS distinct values: the raw path
        x, y, ref = (truth + rng.normal(0, s, n) for s in (0.8, 0.4, 0.5))
    else:  # integers and half points, many ties: the table path
        x, y = (np.clip(np.rint(truth + rng.normal(0, s, n)), 1, 5) for s in (0.9, 0.5))
        ref = np.clip(np.rint(2 * truth + rng.normal(0, 0.6, n)) / 2, 1, 5)
    cluster = rng.integers(0, 30, n)
    group = (np.arange(n) % 2).astype(int)
    return x, y, ref, cluster, group


@pytest.mark.parametrize("continuous", [False, True])
def test_values_and_gap_equal_scipy_per_group(continuous):
    x, y, ref, cluster, group = _data(continuous)
    w = bootstrap_weights(30, 5 if continuous else 50, 0)
    out = paired_agreement(x, y, ref, cluster, group, 2, w)
    assert set(out["statistic"]) == set(STATISTICS)
    for g in (0, 1):
        sel = group == g
        for stat, fn in (
            ("spearman", stats.spearmanr),
            ("pearson", stats.pearsonr),
            ("kendall", stats.kendalltau),
        ):
            hx, hy = fn(x[sel], ref[sel]).statistic, fn(y[sel], ref[sel]).statistic
            got = out[(out["group"] == g) & (out["statistic"] == stat)].set_index("side")
            assert got.loc["x", "value"] == pytest.approx(hx, abs=TOL)
            assert got.loc["y", "value"] == pytest.approx(hy, abs=TOL)
            assert got.loc["gap", "value"] == pytest.approx(hy - hx, abs=TOL)
            assert (got["n"] == sel.sum()).all()
            assert (got["n_instances"] == len(np.unique(cluster[sel]))).all()
        mae = out[(out["group"] == g) & (out["statistic"] == "mae")].set_index("side")
        assert mae.loc["x", "value"] == pytest.approx(np.abs(x[sel] - ref[sel]).mean(), abs=TOL)


@pytest.mark.parametrize("continuous", [False, True])
def test_cis_equal_a_loop_over_the_same_resamples(continuous):
    x, y, ref, cluster, group = _data(continuous)
    w = bootstrap_weights(30, 40, 7)
    out = paired_agreement(x, y, ref, cluster, group, 2, w)
    sel = group == 1
    hx, hy = [], []
    for row in w:
        rep = row[cluster[sel]].astype(int)
        xs, ys, rs = (np.repeat(v[sel], rep) for v in (x, y, ref))
        hx.append(stats.spearmanr(xs, rs).statistic)
        hy.append(stats.spearmanr(ys, rs).statistic)
    hx, hy = np.array(hx), np.array(hy)
    got = out[(out["group"] == 1) & (out["statistic"] == "spearman")].set_index("side")
    for side, boot in (("x", hx), ("y", hy), ("gap", hy - hx)):
        lo, hi = np.nanquantile(boot, [0.025, 0.975])
        assert got.loc[side, "ci_low"] == pytest.approx(lo, abs=1e-9)
        assert got.loc[side, "ci_high"] == pytest.approx(hi, abs=1e-9)


def test_a_panels_mean_keeps_the_tables_with_the_raw_paths_values(monkeypatch):
    """x: the mean of 12 judges (N/A allowed, ~190 distinct values), y: one judge, ref: the
    mean of 3 humans. Tables while they are small: the same values and intervals as expanding
    every resample's pairs."""
    from analysis.stats import agreement as ag
    from analysis.stats import paired_agreement as pa

    rng = np.random.default_rng(5)
    n = 2400
    truth = rng.integers(1, 6, n)
    panel = np.clip(truth[:, None] + rng.integers(-1, 2, (n, 12)), 1, 5).astype(float)
    panel[rng.random((n, 12)) < 0.15] = np.nan
    x = np.nanmean(panel, axis=1)
    y = np.clip(truth + rng.integers(-1, 2, n), 1, 5).astype(float)
    ref = np.clip(truth[:, None] + rng.integers(-1, 2, (n, 3)), 1, 5).mean(axis=1)
    cluster, group = rng.integers(0, 300, n), (np.arange(n) % 2).astype(int)
    values = np.unique(np.concatenate([x, y, ref]))
    grid = ag.grid_for(np.concatenate([x, y]), ref, 2 * n, 4)
    assert len(values) > ag.MAX_LEVELS and grid is not None and not grid.square
    w = bootstrap_weights(300, 20, 0)
    fast = paired_agreement(x, y, ref, cluster, group, 2, w)
    monkeypatch.setattr(pa, "grid_for", lambda *_: None)
    slow = paired_agreement(x, y, ref, cluster, group, 2, w)
    for col in ("value", "ci_low", "ci_high", "n", "n_instances"):
        np.testing.assert_allclose(fast[col], slow[col], rtol=0, atol=1e-9, err_msg=col)
