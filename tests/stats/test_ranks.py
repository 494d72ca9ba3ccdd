"""Exact ranking of means (stats.ranks) and the small-sample tests (stats.means): ties built
from exact fractions, checked against scipy on fractions.Fraction means, an independent
bootstrap loop, and brute-force enumeration of label swaps."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.stats import agreement_bootstrap as boot
from analysis.stats.means import bootstrap_weights, holm, paired_bootstrap, sign_flip_p
from analysis.stats.ranks import (
    Ratios,
    competition_ranks,
    mean_ranks,
    rank_intervals,
    ratios,
    resolution,
)

TOL = 1e-12


def _frac(x: float) -> Fraction:
    """An item value as the fraction it stands for (k/3, k/2 or whole: the test's data)."""
    return Fraction(x).limit_denominator(12)


def _exact_means(values, model, n_models, weight=None) -> list[Fraction | None]:
    """Per-model means as exact fractions; ``weight`` per value repeats it (a resample)."""
    weight = np.ones(len(values), dtype=int) if weight is None else weight
    num = [Fraction(0)] * n_models
    den = [0] * n_models
    for v, m, w in zip(values, model, weight, strict=True):
        num[m] += _frac(v) * int(w)
        den[m] += int(w)
    return [num[m] / den[m] if den[m] else None for m in range(n_models)]


def _tied_pairs(rng, n_inst: int = 144):
    """Three models: m1 and m2 hold the same item values in another instance order (equal means
    as fractions, summed in a different order), m3 is higher on both sides. B is a mean of
    three raters (thirds), so its float sums are inexact."""
    a1 = rng.integers(1, 6, n_inst).astype(float)
    b1 = rng.integers(3, 16, n_inst) / 3
    perm = rng.permutation(n_inst)
    a = np.concatenate([a1, a1[perm], np.minimum(a1 + 1, 5)])
    b = np.concatenate([b1, b1[perm], np.minimum(b1 + 2 / 3, 5)])
    inst = np.tile(np.arange(n_inst), 3)
    model = np.repeat(np.arange(3), n_inst)
    return a, b, inst, model


def test_resolution_of_whole_thirds_halves_decimals_and_continuous_scores():
    assert resolution(np.array([1.0, 5.0, 3.0])) == 1
    assert resolution(np.array([13 / 3, 4.0, 14 / 3])) == 3
    assert resolution(np.array([13 / 3, 4.5, 2.0])) == 6
    assert resolution(np.array([0.25, 3.7, 1.0])) == 20
    assert resolution(np.random.default_rng(0).random(50) * 4 + 1) is None
    # a sum of thirds computed in floating point is still on the grid
    assert resolution(np.array([sum([13 / 3, 14 / 3, 1 / 3])])) == 3


def test_equal_fractions_summed_in_another_order_tie_exactly():
    x = np.array([13 / 3, 11 / 3, 14 / 3, 10 / 3, 1 / 3, 5 / 3, 2 / 3] * 7)
    perm = np.random.default_rng(6).permutation(len(x))
    sums = np.column_stack([x, x[perm]])
    ones = np.ones(len(x))
    assert ones @ sums[:, 0] != ones @ sums[:, 1]  # the float sums differ: the bug's cause
    r = ratios(sums, np.ones_like(sums))
    assert r.scale == 3
    keys = r.keys(np.ones((1, len(x))))
    assert keys[0, 0] == keys[0, 1]
    assert competition_ranks(keys).tolist() == [[1.0, 1.0]]


def test_fractions_a_rounding_step_apart_are_still_ordered():
    # (2^52+1)/2^52 > (2^52+2)/(2^52+1), yet both round to the same float64
    num = np.array([[2.0**52 + 1, 2.0**52 + 2]])
    cnt = np.array([[2.0**52, 2.0**52 + 1]])
    assert num[0, 0] / cnt[0, 0] == num[0, 1] / cnt[0, 1]
    keys = Ratios(num, cnt, 1).keys(np.ones((1, 1)))
    assert competition_ranks(keys).tolist() == [[1.0, 2.0]]


def test_competition_ranks_equal_scipy_min_ranks_with_ties_and_absent():
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 4, (50, 7)).astype(float)
    keys[rng.random(keys.shape) < 0.15] = np.nan
    got = competition_ranks(keys)
    for row, k in zip(got, keys, strict=True):
        ok = ~np.isnan(k)
        expected = stats.rankdata(-k[ok], method="min")
        assert row[ok].tolist() == expected.tolist()
        assert np.isnan(row[~ok]).all()
    assert competition_ranks(np.array([[3.0, 4.0, 4.0, 1.0]])).tolist() == [[3, 1, 1, 4]]


def test_three_models_with_a_tie_give_tau_and_rho_of_one():
    a, b, inst, model = _tied_pairs(np.random.default_rng(0))
    frame, n_models = boot.system(a, b, inst, model, bootstrap_weights(144, 50, 1))
    got = frame.set_index("statistic")["value"]
    assert n_models == 3
    assert got["kendall"] == pytest.approx(1.0, abs=TOL)
    assert got["spearman"] == pytest.approx(1.0, abs=TOL)
    ea, eb = _exact_means(a, model, 3), _exact_means(b, model, 3)
    assert ea[0] == ea[1] and eb[0] == eb[1]  # the tie the test is about
    assert got["pearson"] == pytest.approx(
        stats.pearsonr([float(v) for v in ea], [float(v) for v in eb]).statistic, abs=1e-9
    )


def _five_models(seed: int):
    """Five models over 24 instances: m1 = m2 (permuted), m4 has m3's values on A but not on
    B; m5 independent. Not all concordant, so the values are not trivially 1."""
    rng = np.random.default_rng(seed)
    n = 24
    a1, b1 = rng.integers(1, 6, n).astype(float), rng.integers(3, 16, n) / 3
    a3, b3 = rng.integers(2, 6, n).astype(float), rng.integers(6, 16, n) / 3
    perm = rng.permutation(n)
    a = np.concatenate([a1, a1[perm], a3, a3[rng.permutation(n)], rng.integers(1, 6, n)])
    b = np.concatenate([b1, b1[perm], b3, rng.integers(3, 16, n) / 3, rng.integers(3, 16, n) / 3])
    inst = np.tile(np.arange(n), 5)
    model = np.repeat(np.arange(5), n)
    return a.astype(float), b, inst, model


@pytest.mark.parametrize("seed", [4, 5])
def test_system_level_point_and_every_resample_equal_scipy_on_exact_means(seed):
    a, b, inst, model = _five_models(seed)
    w = bootstrap_weights(24, 120, seed)
    frame, _ = boot.system(a, b, inst, model, w)
    got = frame.set_index("statistic")
    ea, eb = _exact_means(a, model, 5), _exact_means(b, model, 5)
    fa, fb = [float(v) for v in ea], [float(v) for v in eb]
    assert got.loc["kendall", "value"] == pytest.approx(stats.kendalltau(fa, fb).statistic, abs=TOL)
    assert got.loc["spearman", "value"] == pytest.approx(stats.spearmanr(fa, fb).statistic, abs=TOL)
    # Every resample: exact means of the expanded rows, then scipy; the same percentiles.
    per = {"kendall": [], "spearman": []}
    for row in w:
        rep = row[inst].astype(int)
        ma = [float(v) for v in _exact_means(a, model, 5, rep)]
        mb = [float(v) for v in _exact_means(b, model, 5, rep)]
        with np.errstate(invalid="ignore"):
            per["kendall"].append(stats.kendalltau(ma, mb).statistic)
            per["spearman"].append(stats.spearmanr(ma, mb).statistic)
    for stat, values in per.items():
        lo, hi = np.nanquantile(np.array(values, dtype=float), [0.025, 0.975])
        assert got.loc[stat, "ci_low"] == pytest.approx(lo, abs=1e-9)
        assert got.loc[stat, "ci_high"] == pytest.approx(hi, abs=1e-9)


def test_system_level_does_not_depend_on_the_order_of_pairs_or_instances():
    a, b, inst, model = _tied_pairs(np.random.default_rng(7))
    w = bootstrap_weights(144, 200, 3)
    one, _ = boot.system(a, b, inst, model, w)
    # The same pairs and resamples, with the instances numbered (so summed) in another order,
    # as a skill filter or a slice does.
    relabel = np.random.default_rng(8).permutation(144)
    order = np.random.default_rng(9).permutation(len(a))
    w2 = np.empty_like(w)
    w2[:, relabel] = w
    two, _ = boot.system(a[order], b[order], relabel[inst][order], model[order], w2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)


def test_continuous_scores_rank_at_a_tolerance():
    rng = np.random.default_rng(9)
    x = rng.random(40) * 4 + 1  # no resolution
    sums = np.column_stack([x, x[rng.permutation(40)], x + 0.01])
    r = ratios(sums, np.ones_like(sums))
    assert r.scale is None
    assert competition_ranks(r.keys(np.ones((1, 40)))).tolist() == [[2.0, 2.0, 1.0]]


def test_rank_intervals_equal_an_independent_bootstrap_loop():
    rng = np.random.default_rng(11)
    n_inst, n_boot = 30, 300
    # 6 groups in 2 blocks of 3 models; in block 0, models 0 and 1 hold the same thirds
    base = rng.integers(3, 16, n_inst) / 3
    sums = np.column_stack(
        [base, base[rng.permutation(n_inst)], rng.integers(3, 16, n_inst) / 3]
        + [rng.integers(1, 6, n_inst).astype(float) for _ in range(3)]
    )
    counts = np.ones_like(sums)
    counts[:4, 5] = 0  # model 5 misses some instances: absent from some resamples' ranks
    sums[:4, 5] = 0
    blocks = np.array([0, 0, 0, 1, 1, 1])
    w = bootstrap_weights(n_inst, n_boot, 2)
    got = rank_intervals(sums, counts, blocks, w)
    ranks = np.full((n_boot + 1, 6), np.nan)
    for r, row in enumerate([np.ones(n_inst, dtype=int), *w.astype(int)]):
        means = []
        for g in range(6):
            den = int((row * counts[:, g]).sum())
            num = sum((_frac(s) * int(k) for s, k in zip(sums[:, g], row, strict=True)), Fraction())
            means.append(float(num / den) if den else np.nan)
        means = np.array(means)
        for blk in (0, 1):
            cols = np.flatnonzero((blocks == blk) & ~np.isnan(means))
            ranks[r, cols] = stats.rankdata(-means[cols], method="min")
    assert got.rank.tolist() == ranks[0].tolist()
    assert got.rank[0] == got.rank[1]  # the tie built in
    lo = np.nanquantile(ranks[1:], 0.025, axis=0, method="lower")
    hi = np.nanquantile(ranks[1:], 0.975, axis=0, method="higher")
    assert got.lo.tolist() == lo.tolist() and got.hi.tolist() == hi.tolist()


# ------------------------------------------------------------ small samples in comparisons


def _brute_force_p(s_a, c_a, s_b, c_b) -> Fraction:
    """Every assignment of A/B labels within each instance, with exact fractions."""
    inst = list(zip(s_a, c_a, s_b, c_b, strict=True))

    def stat(rows):
        ta = sum(Fraction(r[0]) for r in rows) / sum(Fraction(r[1]) for r in rows)
        tb = sum(Fraction(r[2]) for r in rows) / sum(Fraction(r[3]) for r in rows)
        return abs(ta - tb)

    observed = stat(inst)
    hits = 0
    for swaps in itertools.product([False, True], repeat=len(inst)):
        rows = [(r[2], r[3], r[0], r[1]) if s else r for r, s in zip(inst, swaps, strict=True)]
        hits += stat(rows) >= observed
    return Fraction(hits, 2 ** len(inst))


@pytest.mark.parametrize("n", [2, 3, 5, 8, 11])
def test_sign_flip_p_equals_brute_force_enumeration(n):
    rng = np.random.default_rng(n)
    c_a = rng.integers(1, 4, n).astype(float)
    c_b = rng.integers(1, 4, n).astype(float)
    s_a = np.array([rng.integers(1, 6, int(c)).sum() for c in c_a], dtype=float)
    s_b = np.array([rng.integers(1, 6, int(c)).sum() for c in c_b], dtype=float)
    assert sign_flip_p(s_a, c_a, s_b, c_b) == float(_brute_force_p(s_a, c_a, s_b, c_b))
    # one score per side: the classic sign-flip test of the mean difference, ties included
    d_a, d_b = rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)
    one = np.ones(n)
    assert sign_flip_p(d_a, one, d_b, one) == float(_brute_force_p(d_a, one, d_b, one))


def test_one_shared_instance_has_no_p_no_ci_and_few_an_exact_p():
    pat = pd.DataFrame(
        {
            "grp": ["one", "three", "three", "many"],
            "s_a": [5.0, 5.0, 4.0, 5.0],
            "c_a": 1.0,
            "s_b": [3.0, 3.0, 3.0, 3.0],
            "c_b": 1.0,
            "count": [1, 2, 1, 40],
        }
    )
    res = paired_bootstrap(pat, ["one", "three", "many"], n_boot=500)
    assert res.diff.tolist() == [2.0, pytest.approx(5 / 3), 2.0]
    assert res.test.tolist() == ["none", "exact", "bootstrap"]
    assert np.isnan(res.p[0]) and np.isnan(res.lo[0]) and np.isnan(res.hi[0])
    # three instances all favouring A: only the identity and the full swap reach |d| → 2/8
    assert res.p[1] == float(_brute_force_p([5, 5, 4], [1, 1, 1], [3, 3, 3], [1, 1, 1]))
    assert res.p[1] == 0.25
    assert res.p[2] < 0.01  # 40 instances, every one favouring A
    adjusted = holm(res.p)
    assert np.isnan(adjusted[0])  # no test: not counted among the tests either
    # Holm over the two tests: 2·p for the smaller, then max(that, 1·0.25)
    assert adjusted[1:].tolist() == pytest.approx([max(2 * res.p[2], 0.25), 2 * res.p[2]])


def test_mean_ranks_of_totals_tie_equal_fractions():
    thirds = np.tile([10 / 3, 11 / 3, 13 / 3], 40)
    shuffled = thirds[np.random.default_rng(6).permutation(len(thirds))]
    totals = np.array([sum(thirds.tolist()), sum(shuffled.tolist()), 600.0, 0.0])
    counts = np.array([120, 120, 120, 0])
    means = [Fraction(1360, 3 * 120)] * 2 + [Fraction(5)]  # 34/9 twice, then 5
    assert totals[0] != totals[1]  # summed in another order: one rounding step apart
    got = mean_ranks(totals, counts)
    assert got[:3].tolist() == stats.rankdata([-float(m) for m in means], method="min").tolist()
    assert got[:3].tolist() == [2, 2, 1] and np.isnan(got[3])
