"""The percentile CI equals numpy's own ``nanquantile`` column by column, bit for bit: columns
with undefined resamples (NaN), all undefined, one or two defined values, ties, any layout."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from analysis.stats.agreement_bootstrap import LEVEL, percentile_ci


def _reference(boot: np.ndarray, level: float = LEVEL):
    alpha = (1 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        return np.nanquantile(boot, [alpha, 1 - alpha], axis=0)


def _same(got, want) -> bool:
    return np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True)


@pytest.mark.parametrize("seed", range(12))
def test_every_column_equals_nanquantile(seed):
    rng = np.random.default_rng(seed)
    n_boot, n_cols = int(rng.integers(1, 400)), int(rng.integers(1, 30))
    boot = rng.normal(size=(n_boot, n_cols))
    if seed % 2:
        boot = np.round(boot * 3) / 7  # ties
    boot[rng.random(boot.shape) < [0, 0.01, 0.3, 0.9][seed % 4]] = np.nan
    boot[:, 0] = np.nan  # undefined in every resample
    if n_cols > 2:
        boot[:, 1] = np.nan
        boot[int(rng.integers(n_boot)), 1] = 0.25  # a single defined value
        boot[:, 2] = np.nan
        boot[:2, 2] = [3.0, -1.0]  # two
    lo, hi = percentile_ci(boot)
    want_lo, want_hi = _reference(boot)
    assert _same(lo, want_lo) and _same(hi, want_hi)
    # A strided view (as the paired statistics pass one side of their resamples).
    sides = np.stack([boot, -boot], axis=-1)[..., 1]
    lo, hi = percentile_ci(sides, 0.9)
    want_lo, want_hi = _reference(sides, 0.9)
    assert _same(lo, want_lo) and _same(hi, want_hi)


def test_hand_values_and_one_dimensional_input():
    # Linear interpolation at (n − 1)·q: n = 5, q = 0.025 → 0.1 between 1 and 2; 0.975 → 3.9.
    lo, hi = percentile_ci(np.array([3.0, 1.0, np.nan, 5.0, 2.0, 4.0]))
    assert lo == pytest.approx(1.1) and hi == pytest.approx(4.9)
    assert np.ndim(lo) == 0 and np.ndim(hi) == 0
    lo, hi = percentile_ci(np.full(4, np.nan))
    assert np.isnan(lo) and np.isnan(hi)
