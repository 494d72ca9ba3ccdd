"""Agreement statistics between two scorers, and among many raters, as pure numpy functions.

Scores are ordinal with few distinct values (1–5, or means of a few annotators), so every
statistic here is a function of the contingency table of (A value, B value) pairs. That is what
makes 1,000 instance-level bootstrap resamples cheap: a resample's table is the weighted sum of
per-instance tables (one matrix product), and every statistic is computed for all resamples at
once from their tables. Data with many distinct values (a mean of a dozen judges has a few
hundred) keeps tables, over each side's own values, while they stay small next to the pairs
(``grid_for``); truly continuous scores go through ``pair_stats_raw``, which works on the pairs
themselves.

Formulas (checked against scipy, scikit-learn and krippendorff in
tests/stats/test_agreement_stats.py):
- Spearman ρ = Pearson r of midranks; Kendall τ-b = (C − D) / √((n0 − n1)(n0 − n2)).
- Quadratic-weighted κ with the scale's integer categories equals 1 − MSE / (σa² + σb² + (μa −
  μb)²) (population moments), so it extends to real-valued scores unchanged (Lin's CCC).
- Krippendorff's α = 1 − (n − 1) Σ o_ck δ_ck / Σ n_c n_k δ_ck over the coincidence matrix o;
  ordinal α is interval α on the midranks of the pooled pairable values.

Only numpy is imported here: importing scipy.stats costs over a second, which the command line
and the page's first draw would pay. Midranks are exact (halves of integers) whichever way they
are computed; scipy's Kendall τ-b is imported only on the raw path that needs it.
"""

from __future__ import annotations

import numpy as np

# Statistic ids in display order, with their labels.
CORRELATIONS = ("spearman", "kendall", "pearson")
STATISTICS = (*CORRELATIONS, "mae", "exact", "within1", "qwk", "alpha_ordinal", "alpha_interval")
LABELS = {
    "spearman": "Spearman ρ",
    "kendall": "Kendall τ-b",
    "pearson": "Pearson r",
    "mae": "MAE",
    "exact": "Exact agreement",
    "within1": "Within ±1",
    "qwk": "Quadratic-weighted κ",
    "alpha_ordinal": "Krippendorff α (ordinal)",
    "alpha_interval": "Krippendorff α (interval)",
}
MAX_LEVELS = 100  # distinct values up to which the table method is always used
# Beyond: tables over each side's values while their cells (tables × Kx × Ky) are at most this
# many per pair. A resample costs ~30 ns per cell by tables and ~3 µs per pair expanded
# (bench/agreement_levels.py: a mean of 12 judges against the humans' mean).
CELLS_PER_PAIR = 50
MAX_TABLE_CELLS = 4_000_000  # and at most this many cells per resample (memory)
_TOL = 1e-9  # value equality for exact / within-1 agreement on real-valued scores


class Grid:
    """The score values along contingency tables' rows (A) and columns (B): one list for both
    (square tables over few values), or each side's own (a panel's mean has a few hundred
    values, the humans' a dozen: Kx × Ky cells instead of K²)."""

    def __init__(self, x: np.ndarray, y: np.ndarray | None = None) -> None:
        self.square = y is None
        self.x, self.y = x, (x if y is None else y)
        self.shape = (len(self.x), len(self.y))
        self.cells = self.shape[0] * self.shape[1]
        if not self.square:
            union = np.unique(np.concatenate([self.x, self.y]))
            self.ix, self.iy = np.searchsorted(union, self.x), np.searchsorted(union, self.y)
            self.k = len(union)

    def codes(self, a: np.ndarray, b: np.ndarray, table: np.ndarray) -> np.ndarray:
        """The cell of each pair (a, b) in its table (tables laid end to end)."""
        ky = self.shape[1]
        return table * self.cells + np.searchsorted(self.x, a) * ky + np.searchsorted(self.y, b)

    def stats(self, t: np.ndarray) -> dict[str, np.ndarray]:
        if self.square:
            return pair_stats_table(t, self.x)
        return pair_stats_rect(t, self.x, self.y, self.ix, self.iy, self.k)


def grid_for(a: np.ndarray, b: np.ndarray, n_pairs: int, n_tables: int) -> Grid | None:
    """The grid of ``n_tables`` tables of A's scores ``a`` against B's ``b``: square over every
    value when there are few; each side's own values while those tables stay small next to the
    pairs; None when expanding the pairs is cheaper (``pair_stats_raw``). Same values either
    way, to 1e-12."""
    values = np.unique(np.concatenate([a, b]))
    if len(values) <= MAX_LEVELS:
        return Grid(values)
    grid = Grid(np.unique(a), np.unique(b))
    cells = n_tables * grid.cells
    return grid if cells <= CELLS_PER_PAIR * n_pairs and cells <= MAX_TABLE_CELLS else None


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.asarray(num, dtype=np.float64) / den
    return np.where(np.isfinite(out), out, np.nan)


def _weighted_pearson(
    t: np.ndarray, rows: np.ndarray, cols: np.ndarray, x: np.ndarray, y: np.ndarray
) -> np.ndarray:
    """Pearson r of a weighted table ``t`` (..., K, K) with marginals rows/cols, row values x
    and column values y, each (K,) or (..., K). Central moments, to keep 1e-12 accuracy."""
    n = rows.sum(-1)
    mx = _div((rows * x).sum(-1), n)
    my = _div((cols * y).sum(-1), n)
    dx = x - mx[..., None]
    dy = y - my[..., None]
    vx = (rows * dx**2).sum(-1)
    vy = (cols * dy**2).sum(-1)
    cov = np.einsum("...ij,...i,...j->...", t, dx, dy)
    return _div(cov, np.sqrt(vx * vy))


def midranks(counts: np.ndarray) -> np.ndarray:
    """Average rank (1-based) of each value given its frequency, along the last axis."""
    before = np.cumsum(counts, axis=-1) - counts
    return before + (counts + 1) / 2


def _kendall_table(t: np.ndarray, n: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    # C − D = Σ_ij t_ij (Σ_{j'>j} u_ij' − Σ_{j'<j} u_ij') with u_ij = Σ_{i'>i} t_i'j. Tables hold
    # counts, so every step is integer arithmetic, exact in float64 in any order. One row i of
    # every table at a time, bottom up (u then holds the rows below it): the temporaries are a
    # row of the tables, not the tables, and stay in cache, whatever the tables' memory layout.
    # Rows and columns may differ in number (``pair_stats_rect``).
    tt = np.moveaxis(t, (-2, -1), (0, 1))  # a view: (i, j, *tables)
    u = np.zeros_like(tt[0])  # (j, *tables): Σ_{i'>i} t_i'j
    s = np.zeros(tt.shape[2:])
    for i in range(t.shape[-2] - 2, -1, -1):
        u += tt[i + 1]
        side = np.cumsum(u, axis=0)  # Σ_{j'≤j} u_ij'
        total = side[-1].copy()  # Σ_j' u_ij'
        side *= -2
        side += u
        side += total  # Σ_{j'>j} u − Σ_{j'<j} u = total − 2·Σ_{j'≤j} u + u_ij
        side *= tt[i]
        s += side.sum(0)
    n0 = n * (n - 1) / 2
    n1 = (rows * (rows - 1) / 2).sum(-1)
    n2 = (cols * (cols - 1) / 2).sum(-1)
    return _div(s, np.sqrt((n0 - n1) * (n0 - n2)))


def alpha_from_coincidence(o: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Krippendorff's α (ordinal and interval) from coincidence matrices o (..., K, K)."""
    nc = o.sum(axis=-1)
    n = nc.sum(-1)
    out = {}
    for name, x in (("alpha_ordinal", midranks(nc)), ("alpha_interval", values)):
        x = np.broadcast_to(x, nc.shape)
        mean = _div((nc * x).sum(-1), n)
        d = x - mean[..., None]  # centred: δ is shift-invariant, and accuracy stays at 1e-12
        spread = 2 * n * (nc * d**2).sum(-1)  # Σ_c Σ_k n_c n_k δ_ck
        # Σ o_ck (d_c − d_k)² = 2 Σ n_c d_c² − 2 dᵀ o d, as o is symmetric with marginals n_c
        observed = 2 * (nc * d**2).sum(-1) - 2 * np.einsum("...ij,...i,...j->...", o, d, d)
        out[name] = 1 - _div((n - 1) * observed, spread)
    return out


def _marginal_stats(t: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[dict, np.ndarray, ...]:
    """Every statistic but α for tables t (..., Kx, Ky) with row values x and column values y,
    and the tables' row and column sums."""
    rows, cols = t.sum(axis=-1), t.sum(axis=-2)
    n = rows.sum(-1)
    # Statistics linear in the table, all in one matrix product over its cells.
    diff = np.abs(x[:, None] - y[None, :]).ravel()
    linear = t.reshape(*t.shape[:-2], len(x) * len(y)) @ np.column_stack(
        [diff, diff <= _TOL, diff <= 1 + _TOL, diff**2]
    )
    mae, exact, within1, mse = np.moveaxis(_div(linear, n[..., None]), -1, 0)
    ma, mb = _div(rows @ x, n), _div(cols @ y, n)
    va = _div((rows * (x - ma[..., None]) ** 2).sum(-1), n)
    vb = _div((cols * (y - mb[..., None]) ** 2).sum(-1), n)
    out = {
        "spearman": _weighted_pearson(t, rows, cols, midranks(rows), midranks(cols)),
        "kendall": _kendall_table(t, n, rows, cols),
        "pearson": _weighted_pearson(t, rows, cols, x, y),
        "mae": mae,
        "exact": exact,
        "within1": within1,
        "qwk": 1 - _div(mse, va + vb + (ma - mb) ** 2),
    }
    return out, rows, cols


def pair_stats_table(t: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Every statistic for contingency tables t (..., K, K) of (A, B) over sorted ``values``."""
    t = np.asarray(t, dtype=np.float64)
    out, _, _ = _marginal_stats(t, values, values)
    out.update(alpha_from_coincidence(t + np.swapaxes(t, -1, -2), values))
    return out


def pair_stats_rect(
    t: np.ndarray, x: np.ndarray, y: np.ndarray, ix: np.ndarray, iy: np.ndarray, k: int
) -> dict[str, np.ndarray]:
    """Every statistic for tables t (..., Kx, Ky) whose rows take A's values x and columns B's
    values y (sorted), each at its index (ix, iy) among the k values of both: when A has many
    values and B few (a panel's mean against the humans'), far fewer cells than the square
    tables of ``pair_stats_table``, with the same statistics (to 1e-12)."""
    t = np.asarray(t, dtype=np.float64)
    out, rows, cols = _marginal_stats(t, x, y)
    # α over the coincidences of both sides' values: their pooled counts over the k values.
    nc = np.zeros((*rows.shape[:-1], k))
    np.add.at(np.moveaxis(nc, -1, 0), ix, np.moveaxis(rows, -1, 0))
    np.add.at(np.moveaxis(nc, -1, 0), iy, np.moveaxis(cols, -1, 0))
    union = np.zeros(k)
    union[ix], union[iy] = x, y
    pooled = nc.sum(-1)
    for name, v in (("alpha_ordinal", midranks(nc)), ("alpha_interval", union)):
        v = np.broadcast_to(v, nc.shape)
        d = v - _div((nc * v).sum(-1), pooled)[..., None]  # centred, as in the square case
        dx, dy = d[..., ix], d[..., iy]
        # Σ o_ck (d_c − d_k)² with o = t + tᵀ on the k values: 2 Σ_ij t_ij (dx_i − dy_j)²
        cross = np.einsum("...ij,...i,...j->...", t, dx, dy)
        observed = 2 * ((rows * dx**2).sum(-1) + (cols * dy**2).sum(-1) - 2 * cross)
        spread = 2 * pooled * (nc * d**2).sum(-1)
        out[name] = 1 - _div((pooled - 1) * observed, spread)
    return out


def rankdata(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Average (mid) ranks, 1-based, along ``axis`` (scipy.stats.rankdata's 'average' method;
    no NaN: callers pass finite values or +inf). Ties share (first + last) / 2 + 1."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    order = np.argsort(x, axis=-1, kind="stable")
    xs = np.take_along_axis(x, order, axis=-1)
    m = x.shape[-1]
    pos = np.broadcast_to(np.arange(m), xs.shape)
    new = np.ones(xs.shape, dtype=bool)  # the first of each run of equal values
    new[..., 1:] = xs[..., 1:] != xs[..., :-1]
    last = np.ones(xs.shape, dtype=bool)  # the last of each run
    last[..., :-1] = new[..., 1:]
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, m), -1), axis=-1), -1)
    ranks = np.empty(xs.shape)
    np.put_along_axis(ranks, order, 0.5 * (first + end + 2), axis=-1)
    return np.moveaxis(ranks, -1, axis)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    dx, dy = x - x.mean(), y - y.mean()
    return float(_div((dx * dy).sum(), np.sqrt((dx**2).sum() * (dy**2).sum())))


def _alpha_interval_units(units: np.ndarray, x: np.ndarray) -> float:
    """Interval α of pairable values x grouped by unit id (every unit has ≥ 2 values)."""
    _, inv, m = np.unique(units, return_inverse=True, return_counts=True)
    s1 = np.bincount(inv, x)
    s2 = np.bincount(inv, x * x)
    observed = ((2 * m * s2 - 2 * s1 * s1) / (m - 1)).sum()  # Σ_u Σ_{i≠j} (x_i−x_j)²/(m_u−1)
    n = len(x)
    spread = 2 * n * ((x - x.mean()) ** 2).sum()
    return float(1 - _div((n - 1) * observed, spread))


def alpha_raw(units: np.ndarray, values: np.ndarray) -> dict[str, float]:
    """Krippendorff's α for any number of raters with missing ratings, from (unit, value) rows
    of the ratings present. Units with a single rating are not pairable and are dropped."""
    units, values = np.asarray(units), np.asarray(values, dtype=np.float64)
    _, inv, m = np.unique(units, return_inverse=True, return_counts=True)
    keep = m[inv] >= 2
    u, x = inv[keep], values[keep]
    if len(x) < 2:
        return {"alpha_ordinal": np.nan, "alpha_interval": np.nan}
    return {
        "alpha_ordinal": _alpha_interval_units(u, rankdata(x)),
        "alpha_interval": _alpha_interval_units(u, x),
    }


def pair_stats_raw(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Every statistic from the aligned pairs themselves (any number of distinct values)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    n = len(a)
    if n < 2:  # the same answers as the table method (one cell, or none)
        values = np.unique(np.concatenate([a, b]))
        t = np.zeros((len(values), len(values)))
        np.add.at(t, (np.searchsorted(values, a), np.searchsorted(values, b)), 1)
        return {k: float(v) for k, v in pair_stats_table(t, values).items()}
    diff = np.abs(a - b)
    ma, mb = a.mean(), b.mean()
    denom = a.var() + b.var() + (ma - mb) ** 2
    units = np.repeat(np.arange(n), 2)
    pooled = np.column_stack([a, b]).ravel()
    from scipy.stats import kendalltau  # only real-valued scores take this path

    with np.errstate(invalid="ignore"):
        tau = kendalltau(a, b).statistic if np.ptp(a) and np.ptp(b) else np.nan
    return {
        "spearman": _pearson(rankdata(a), rankdata(b)),
        "kendall": float(tau),
        "pearson": _pearson(a, b),
        "mae": float(diff.mean()),
        "exact": float((diff <= _TOL).mean()),
        "within1": float((diff <= 1 + _TOL).mean()),
        "qwk": float(1 - _div(((a - b) ** 2).mean(), denom)),
        **alpha_raw(units, pooled),
    }


def corr_rows(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Spearman, Kendall τ-b and Pearson for each row of x and y (R, M); NaN marks a missing
    cell (the same cells in both). Rows with < 2 cells or a constant side give NaN."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = ~(np.isnan(x) | np.isnan(y))
    m = ok.sum(-1)

    def pearson(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        mu = _div(np.where(ok, u, 0).sum(-1), m)[:, None]
        mv = _div(np.where(ok, v, 0).sum(-1), m)[:, None]
        du, dv = np.where(ok, u - mu, 0), np.where(ok, v - mv, 0)
        return _div((du * dv).sum(-1), np.sqrt((du**2).sum(-1) * (dv**2).sum(-1)))

    def ranks(u: np.ndarray) -> np.ndarray:
        # Missing cells rank last (+inf), so the present ones get ranks 1..m in each row.
        return rankdata(np.where(ok, u, np.inf), axis=-1)

    # Each pair of cells i < j once: signs and their sums are integers, exact in any order.
    i, j = np.triu_indices(x.shape[1], 1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    both = ok[:, i] & ok[:, j]
    s = np.where(both, sx * sy, 0).sum(-1)
    n0 = m * (m - 1) / 2
    n1 = (both & (sx == 0)).sum(-1)
    n2 = (both & (sy == 0)).sum(-1)
    return {
        "spearman": pearson(ranks(x), ranks(y)),
        "kendall": _div(s, np.sqrt((n0 - n1) * (n0 - n2))),
        "pearson": pearson(x, y),
    }
