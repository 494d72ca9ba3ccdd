"""Agreement statistics against scipy, scikit-learn and krippendorff (to 1e-9), known answers,
and the bootstrap CIs rebuilt by a second method (a plain loop over the same resamples)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, mean_absolute_error

from analysis.stats import agreement_bootstrap as boot
from analysis.stats.agreement import STATISTICS, corr_rows, pair_stats_raw
from analysis.stats.means import bootstrap_weights

TOL = 1e-9


def _lin_ccc(a: np.ndarray, b: np.ndarray) -> float:
    """Lin's concordance correlation (population moments), written out independently."""
    sab = np.mean((a - a.mean()) * (b - b.mean()))
    return 2 * sab / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)


def reference(a: np.ndarray, b: np.ndarray, scale: tuple[int, int] | None) -> dict[str, float]:
    """Every statistic from the independent libraries (κ from sklearn on integer scales)."""
    d = np.abs(a - b)
    out = {
        "spearman": stats.spearmanr(a, b).statistic,
        "kendall": stats.kendalltau(a, b, variant="b").statistic,
        "pearson": stats.pearsonr(a, b).statistic,
        "mae": mean_absolute_error(a, b),
        "exact": float(np.mean(d < 1e-12)),
        "within1": float(np.mean(d <= 1 + 1e-12)),
        "alpha_ordinal": krippendorff.alpha(np.vstack([a, b]), level_of_measurement="ordinal"),
        "alpha_interval": krippendorff.alpha(np.vstack([a, b]), level_of_measurement="interval"),
    }
    if scale is not None:
        labels = list(range(scale[0], scale[1] + 1))
        out["qwk"] = cohen_kappa_score(
            a.astype(int), b.astype(int), weights="quadratic", labels=labels
        )
    else:
        out["qwk"] = _lin_ccc(a, b)
    return out


def _data(kind: str, n: int = 240, seed: int = 3) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    rng = np.random.default_rng(seed)
    if kind == "1-5 ties":
        a = rng.integers(1, 6, n).astype(float)
        return a, np.clip(a + rng.integers(-1, 2, n), 1, 5), (1, 5)
    if kind == "1-3":
        a = rng.integers(1, 4, n).astype(float)
        return a, np.where(rng.random(n) < 0.6, a, rng.integers(1, 4, n)), (1, 3)
    if kind == "0-1":
        a = rng.integers(0, 2, n).astype(float)
        return a, np.where(rng.random(n) < 0.7, a, 1 - a), (0, 1)
    if kind == "1-10":
        a = rng.integers(1, 11, n).astype(float)
        return a, np.clip(a + rng.integers(-3, 4, n), 1, 10), (1, 10)
    if kind == "1-4 unused level":  # nobody gives a 3: κ still on the declared scale
        a = rng.choice([1.0, 2.0, 4.0], n)
        return a, np.where(rng.random(n) < 0.5, a, rng.choice([1.0, 2.0, 4.0], n)), (1, 4)
    if kind == "means of 3":
        a = rng.integers(3, 16, n) / 3
        return a, np.clip(np.round(a + rng.normal(0, 0.7, n)), 1, 5), None
    if kind == "means of 12":  # a panel's mean, N/A allowed: ~180 values, still tables
        n = 2400
        truth = rng.integers(1, 6, n)
        panel = np.clip(truth[:, None] + rng.integers(-1, 2, (n, 12)), 1, 5).astype(float)
        panel[rng.random((n, 12)) < 0.15] = np.nan
        return np.nanmean(panel, axis=1), np.clip(truth + rng.integers(-1, 2, n), 1, 5), None
    if kind == "continuous":  # too many distinct values for tables: the raw path
        a = rng.uniform(1, 5, n)
        return a, a + rng.normal(0, 0.8, n), None
    raise ValueError(kind)


KINDS = ["1-5 ties", "1-3", "0-1", "1-10", "1-4 unused level", "means of 3", "means of 12",
         "continuous"]  # fmt: skip


def _pooled_point(a, b, clusters=None):
    clusters = np.arange(len(a)) % 40 if clusters is None else clusters
    w = bootstrap_weights(int(clusters.max()) + 1, 20, 0)
    out = boot.pooled(a, b, clusters, np.zeros(len(a), int), 1, w)
    return dict(zip(out["statistic"], out["value"], strict=True))


@pytest.mark.parametrize("kind", KINDS)
def test_every_statistic_equals_the_reference_libraries(kind):
    a, b, scale = _data(kind)
    ref = reference(a, b, scale)
    table = _pooled_point(a, b)  # the table method (or raw for continuous data)
    raw = pair_stats_raw(a, b)
    for s in STATISTICS:
        assert table[s] == pytest.approx(ref[s], abs=TOL), (kind, s)
        assert raw[s] == pytest.approx(ref[s], abs=TOL), (kind, s)


@pytest.mark.parametrize(("kind", "tables"), [("means of 12", True), ("continuous", False)])
def test_many_levels_keep_the_tables_while_they_are_small_with_the_raw_paths_values(
    kind, tables, monkeypatch
):
    """Beyond MAX_LEVELS the tables stay while they are small next to the pairs: the same
    values and intervals (same resamples) as expanding every resample's pairs."""
    from analysis.stats import agreement as ag

    a, b, _ = _data(kind)
    values = np.unique(np.concatenate([a, b]))
    assert len(values) > ag.MAX_LEVELS
    assert (ag.grid_for(a, b, len(a), 1) is not None) is tables
    if not tables:
        return
    clusters = np.arange(len(a)) % 300
    w = bootstrap_weights(300, 30, 0)
    fast = boot.pooled(a, b, clusters, np.zeros(len(a), int), 1, w)
    monkeypatch.setattr(boot, "grid_for", lambda *_: None)  # every resample expanded
    slow = boot.pooled(a, b, clusters, np.zeros(len(a), int), 1, w)
    for col in ("value", "ci_low", "ci_high", "n", "n_instances"):
        np.testing.assert_allclose(fast[col], slow[col], rtol=0, atol=1e-9, err_msg=col)


def test_known_answers_identical_and_reversed():
    a, _, _ = _data("1-5 ties")
    same = _pooled_point(a, a.copy())
    for s in ("spearman", "kendall", "pearson", "qwk", "alpha_ordinal", "alpha_interval"):
        assert same[s] == pytest.approx(1.0, abs=TOL), s
    assert same["mae"] == 0 and same["exact"] == 1 and same["within1"] == 1
    rev = _pooled_point(a, 6 - a)
    for s in ("spearman", "kendall", "pearson"):
        assert rev[s] == pytest.approx(-1.0, abs=TOL), s


def test_independent_noise_is_near_zero_with_a_ci_covering_zero():
    rng = np.random.default_rng(11)
    n, clusters = 2000, np.repeat(np.arange(400), 5)
    a, b = rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)
    w = bootstrap_weights(400, 1000, 0)
    out = boot.pooled(a, b, clusters, np.zeros(n, int), 1, w).set_index("statistic")
    for s in ("spearman", "kendall", "pearson", "qwk", "alpha_ordinal", "alpha_interval"):
        row = out.loc[s]
        assert abs(row["value"]) < 0.06, s
        assert row["ci_low"] < 0 < row["ci_high"], s


def test_constant_scorer_gives_undefined_correlations_not_a_number():
    a = np.array([3.0, 3, 3, 3, 3, 3])
    b = np.array([1.0, 2, 3, 4, 5, 3])
    out = _pooled_point(a, b, np.arange(6))
    for s in ("spearman", "kendall", "pearson"):
        assert np.isnan(out[s]), s
    assert out["mae"] == pytest.approx(np.abs(a - b).mean())


def _loop_reference(a, b, clusters, w, stat):
    """Second method: expand each resample's rows and call the reference library."""
    vals = []
    for row in w:
        idx = np.repeat(np.arange(len(a)), row[clusters].astype(int))
        vals.append(reference(a[idx], b[idx], (1, 5))[stat])
    return np.nanquantile(vals, [0.025, 0.975])


@pytest.mark.parametrize("stat", STATISTICS)
def test_bootstrap_ci_equals_a_loop_over_the_same_resamples(stat):
    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(30), 4)  # 30 instances × 4 models
    a = rng.integers(1, 6, 120).astype(float)
    b = np.clip(a + rng.integers(-2, 3, 120), 1, 5)
    w = bootstrap_weights(30, 150, seed=9)
    out = boot.pooled(a, b, clusters, np.zeros(120, int), 1, w).set_index("statistic")
    lo, hi = _loop_reference(a, b, clusters, w, stat)
    assert out.loc[stat, "ci_low"] == pytest.approx(lo, abs=TOL)
    assert out.loc[stat, "ci_high"] == pytest.approx(hi, abs=TOL)
    assert out.loc[stat, "n"] == 120 and out.loc[stat, "n_instances"] == 30


def test_continuous_path_ci_equals_a_loop():
    rng = np.random.default_rng(6)
    clusters = np.repeat(np.arange(25), 6)
    a = rng.uniform(1, 5, 150)
    b = a + rng.normal(0, 1, 150)
    w = bootstrap_weights(25, 60, seed=2)
    out = boot.pooled(a, b, clusters, np.zeros(150, int), 1, w).set_index("statistic")
    taus = []
    for row in w:
        idx = np.repeat(np.arange(150), row[clusters].astype(int))
        taus.append(stats.kendalltau(a[idx], b[idx]).statistic)
    lo, hi = np.nanquantile(taus, [0.025, 0.975])
    assert out.loc["kendall", "ci_low"] == pytest.approx(lo, abs=TOL)
    assert out.loc["kendall", "ci_high"] == pytest.approx(hi, abs=TOL)


def test_corr_rows_equals_scipy_per_row_with_holes_ties_and_constant_rows():
    rng = np.random.default_rng(8)
    x = rng.integers(1, 6, (60, 8)).astype(float)
    y = np.clip(x + rng.integers(-2, 3, (60, 8)), 1, 5)
    holes = rng.random((60, 8)) < 0.2
    x[holes] = y[holes] = np.nan
    x[0] = 3.0  # a constant row
    y[1, :] = np.nan
    y[1, :2], x[1, :2] = [1, 2], [2, 1]  # two responses: ±1
    r = corr_rows(x, y)
    for i in range(60):
        ok = ~np.isnan(x[i]) & ~np.isnan(y[i])
        xi, yi = x[i][ok], y[i][ok]
        if np.ptp(xi) == 0 or np.ptp(yi) == 0:
            assert all(np.isnan(r[s][i]) for s in r), i
            continue
        assert r["spearman"][i] == pytest.approx(stats.spearmanr(xi, yi).statistic, abs=TOL)
        assert r["kendall"][i] == pytest.approx(stats.kendalltau(xi, yi).statistic, abs=TOL)
        assert r["pearson"][i] == pytest.approx(stats.pearsonr(xi, yi).statistic, abs=TOL)
    assert r["kendall"][1] == pytest.approx(-1.0)


@pytest.mark.parametrize("n_raters", [2, 3, 5, 10])
@pytest.mark.parametrize("values", ["1-5", "1-10", "halves", "continuous"])
def test_raters_alpha_with_missing_ratings_equals_krippendorff(n_raters, values):
    rng = np.random.default_rng(n_raters)
    n_units = 90
    truth = rng.integers(1, 6, n_units)
    data = truth + rng.integers(-1, 2, (n_raters, n_units)).astype(float)
    if values == "1-10":
        data = np.clip(data * 2, 1, 10)
    elif values == "halves":
        data = data + rng.choice([0, 0.5], data.shape)
    elif values == "continuous":
        data = data + rng.normal(0, 0.3, data.shape)
    data[rng.random(data.shape) < 0.3] = np.nan
    unit, rater = np.nonzero(~np.isnan(data.T))
    value = data.T[unit, rater]
    cluster = unit // 3  # 3 items per instance
    w = bootstrap_weights(30, 10, 0)
    out = boot.raters_alpha(unit, value, cluster, w).set_index("statistic")
    for level in ("ordinal", "interval"):
        ref = krippendorff.alpha(data, level_of_measurement=level)
        assert out.loc[f"alpha_{level}", "value"] == pytest.approx(ref, abs=TOL), level
    pairable = pd.Series(unit).value_counts()
    assert out["n"].iloc[0] == pairable[pairable >= 2].sum()


def test_raters_alpha_ci_equals_a_loop_over_the_same_resamples():
    rng = np.random.default_rng(4)
    data = rng.integers(1, 6, 60) + rng.integers(-1, 2, (3, 60)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    unit, rater = np.nonzero(~np.isnan(data.T))
    value = data.T[unit, rater]
    cluster = unit // 4
    w = bootstrap_weights(15, 80, 3)
    out = boot.raters_alpha(unit, value, cluster, w).set_index("statistic")
    alphas = []
    for row in w:
        cols = np.repeat(np.arange(60), row[np.arange(60) // 4].astype(int))
        alphas.append(krippendorff.alpha(data[:, cols], level_of_measurement="ordinal"))
    lo, hi = np.nanquantile(alphas, [0.025, 0.975])
    assert out.loc["alpha_ordinal", "ci_low"] == pytest.approx(lo, abs=TOL)
    assert out.loc["alpha_ordinal", "ci_high"] == pytest.approx(hi, abs=TOL)


def test_per_instance_level_equals_a_groupby_with_scipy():
    rng = np.random.default_rng(12)
    inst = np.repeat(np.arange(50), 6)
    model = np.tile(np.arange(6), 50)
    a = rng.integers(1, 6, 300).astype(float)
    b = np.clip(a + rng.integers(-2, 3, 300), 1, 5)
    a[inst == 7] = 4.0  # constant A: skipped
    w = bootstrap_weights(50, 100, 1)
    frame, used, skipped = boot.per_instance(a, b, inst, inst, model, w)
    frame = frame.set_index("statistic")
    df = pd.DataFrame({"i": inst, "a": a, "b": b})
    per = []
    for _, g in df.groupby("i"):
        if g["a"].nunique() > 1 and g["b"].nunique() > 1:
            per.append(stats.kendalltau(g["a"], g["b"]).statistic)
    assert frame.loc["kendall", "value"] == pytest.approx(np.mean(per), abs=TOL)
    assert used == len(per) and skipped == 50 - len(per) >= 1


def test_system_level_equals_scipy_on_model_means():
    rng = np.random.default_rng(13)
    inst = np.repeat(np.arange(40), 5)
    model = np.tile(np.arange(5), 40)
    a = np.clip(rng.integers(1, 6, 200) + model * 0.3, 1, 5)
    b = np.clip(a + rng.integers(-1, 2, 200), 1, 5)
    w = bootstrap_weights(40, 100, 1)
    frame, n_models = boot.system(a, b, inst, model, w)
    frame = frame.set_index("statistic")
    means = pd.DataFrame({"m": model, "a": a, "b": b}).groupby("m").mean()
    assert n_models == 5
    assert frame.loc["pearson", "value"] == pytest.approx(
        stats.pearsonr(means["a"], means["b"]).statistic, abs=TOL
    )
    assert frame.loc["kendall", "value"] == pytest.approx(
        stats.kendalltau(means["a"], means["b"]).statistic, abs=TOL
    )
    # Second method for one resample: per-model means of the expanded rows.
    row = w[0]
    idx = np.repeat(np.arange(200), row[inst].astype(int))
    m0 = pd.DataFrame({"m": model[idx], "a": a[idx], "b": b[idx]}).groupby("m").mean()
    r0 = corr_rows(m0["a"].to_numpy()[None, :], m0["b"].to_numpy()[None, :])
    assert r0["pearson"][0] == pytest.approx(stats.pearsonr(m0["a"], m0["b"]).statistic, abs=TOL)


def test_tables_over_each_sides_values_equal_the_square_tables():
    """A panel's mean (many values) against one judge (five): Kx × Ky tables give every
    statistic of the K × K tables over all values, one table or a stack of them."""
    from analysis.stats.agreement import pair_stats_rect, pair_stats_table

    a, b, _ = _data("means of 12")
    x, y, u = np.unique(a), np.unique(b), np.unique(np.concatenate([a, b]))
    rng = np.random.default_rng(8)
    split = rng.integers(0, 3, len(a))  # three tables of different sizes
    rect = np.zeros((3, len(x), len(y)))
    square = np.zeros((3, len(u), len(u)))
    np.add.at(rect, (split, np.searchsorted(x, a), np.searchsorted(y, b)), 1)
    np.add.at(square, (split, np.searchsorted(u, a), np.searchsorted(u, b)), 1)
    got = pair_stats_rect(rect, x, y, np.searchsorted(u, x), np.searchsorted(u, y), len(u))
    want = pair_stats_table(square, u)
    assert rect.size * 5 < square.size
    for s in STATISTICS:
        np.testing.assert_allclose(got[s], want[s], rtol=0, atol=1e-12, err_msg=s)
