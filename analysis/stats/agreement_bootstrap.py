"""Instance-level bootstrap of the agreement statistics: point value, 95% CI, n.

Every function takes the weight matrix of ``stats.bootstrap_weights`` (resamples × instances),
so one call shares one set of resamples across skills, slices and levels (their CIs are paired),
and tests can rebuild the same resamples to check the CIs by a second method.

A resample's contingency tables are integer counts (integer weights times per-instance counts),
so they are exact in float64 whatever the order of the sums: ``table_sums`` builds them from
the per-instance counts with numpy alone (no scipy.sparse, whose import alone costs a second).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.agreement import (
    CORRELATIONS,
    MAX_LEVELS,
    STATISTICS,
    alpha_from_coincidence,
    alpha_raw,
    corr_rows,
    grid_for,
    pair_stats_raw,
)
from analysis.stats.ranks import Ratios, ratios

LEVEL = 0.95
CELLS_PER_CHUNK = 4_000_000  # bootstrap tables held at once (resamples × groups × K²)
_GATHER_CELLS = 250_000  # per-instance weight rows gathered at once by table_sums


def cell_counts(cluster: np.ndarray, col: np.ndarray) -> tuple[np.ndarray, ...]:
    """The nonzero per-instance counts of an (instances × cells) table as (instance, cell,
    count) arrays sorted by cell: what ``table_sums`` resamples."""
    n_c = int(cluster.max(initial=0)) + 1
    key, count = np.unique(col.astype(np.int64) * n_c + cluster, return_counts=True)
    return key % n_c, key // n_c, count.astype(np.float64)


def table_sums(weights: np.ndarray, counts: tuple[np.ndarray, ...], n_cells: int) -> np.ndarray:
    """(resamples, n_cells): each resample's weighted count per cell, Σ_instances w × count.

    Column-major, as the sparse product it replaces returned it: the statistics reduce over
    these tables, and numpy's summation order (so the last bit of a float statistic) follows
    the memory layout. Exact integers, so the order of the sums here does not matter; they go
    a block of cells at a time to keep the temporary small."""
    inst, cell, count = counts
    out = np.zeros((n_cells, weights.shape[0]))
    if not len(cell):
        return out.T
    by_inst = np.ascontiguousarray(weights.T)
    starts = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
    # Blocks of about _GATHER_CELLS gathered weights, each ending where a cell's rows end.
    block = max(1, _GATHER_CELLS // max(weights.shape[0], 1))
    at = np.searchsorted(starts, np.arange(0, len(cell), block), side="right") - 1
    bounds = np.r_[np.unique(starts[at]), len(cell)]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        seg = starts[(starts >= lo) & (starts < hi)]
        part = by_inst[inst[lo:hi]] * count[lo:hi, None]
        out[cell[seg]] = np.add.reduceat(part, seg - lo, axis=0)
    return out.T


def percentile_ci(boot: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along axis 0, ignoring resamples where the statistic is undefined.
    The bits of ``np.nanquantile`` (each column's quantiles over its defined values), without
    a Python call per column: columns sorted once (NaN last), then every set of columns with
    as many defined values through one ``np.quantile`` (element-wise interpolation)."""
    alpha = (1 - level) / 2
    flat = np.asarray(boot, dtype=np.float64).reshape(len(boot), -1)
    ordered, defined = np.sort(flat, axis=0), (~np.isnan(flat)).sum(0)
    out = np.full((2, flat.shape[1]), np.nan)  # an undefined column (all NaN) stays NaN
    for n in np.unique(defined[defined > 0]):
        cols = np.flatnonzero(defined == n)
        out[:, cols] = np.quantile(ordered[:n, cols], [alpha, 1 - alpha], axis=0)
    shape = np.shape(boot)[1:]
    return out[0].reshape(shape)[()], out[1].reshape(shape)[()]


def _frame(values: dict, boots: dict, names: tuple, level: float) -> pd.DataFrame:
    """Long frame (group, statistic, value, ci_low, ci_high) from per-statistic arrays: one
    row per statistic × group, statistic-major. One percentile pass over every column (each
    column's interval is computed on its own, so batching changes no value)."""
    n = len(values[names[0]])
    lo, hi = percentile_ci(np.hstack([np.reshape(boots[s], (-1, n)) for s in names]), level)
    return pd.DataFrame(
        {
            "group": np.tile(np.arange(n), len(names)),
            "statistic": np.repeat(np.array(names, dtype=object), n),
            "value": np.concatenate([np.asarray(values[s], dtype=np.float64) for s in names]),
            "ci_low": lo,
            "ci_high": hi,
        }
    )


def _counts(cluster: np.ndarray, group: np.ndarray, n_groups: int) -> pd.DataFrame:
    n = np.bincount(group, minlength=n_groups)
    pairs = pd.DataFrame({"g": group, "c": cluster}).drop_duplicates()
    n_inst = np.bincount(pairs["g"].to_numpy(), minlength=n_groups)
    return pd.DataFrame({"group": np.arange(n_groups), "n": n, "n_instances": n_inst})


def pooled(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    weights: np.ndarray,
    level: float = LEVEL,
    keep: list[int] | None = None,
) -> pd.DataFrame:
    """Every statistic over the aligned pairs of each group, CIs resampling instances.

    a, b: scores; cluster: instance code (column of ``weights``) per pair; group: group code per
    pair (a pair may appear in several groups by repeating it). Returns one row per group ×
    statistic with value, ci_low, ci_high, n (pairs) and n_instances. ``keep``: compute only
    these groups (what a page shows), with the values, to the last bit, of the computation of
    them all: the same grid of score values, the same point tables and the same chunks of
    resamples.
    """
    grid = grid_for(a, b, len(a), n_groups)
    if grid is None:
        if keep is not None:  # raw: each group on its own, so the others can simply go
            a, b, cluster, group, n_groups = _kept(a, b, cluster, group, keep)
        point, boots = _pooled_raw(a, b, cluster, group, n_groups, weights)
    elif keep is None:
        point = _point_tables(a, b, group, n_groups, grid)
        boots = _boot_tables(a, b, cluster, group, n_groups, weights, grid)
    else:
        point = {s: v[keep] for s, v in _point_tables(a, b, group, n_groups, grid).items()}
        n_all = n_groups
        a, b, cluster, group, n_groups = _kept(a, b, cluster, group, keep)
        # A matrix product in the statistics (MAE, κ) sums in another order when it sees one
        # table instead of several: a lone kept group is computed beside a copy of itself.
        data = (a, b, cluster, group, n_groups)
        if n_groups == 1 and n_all > 1:
            data = (np.tile(a, 2), np.tile(b, 2), np.tile(cluster, 2), np.r_[group, group + 1], 2)
        boots = _boot_tables(*data, weights, grid, n_all)
        boots = {s: v[:, :n_groups] for s, v in boots.items()}
    out = _frame(point, boots, STATISTICS, level)
    out = out.merge(_counts(cluster, group, n_groups), on="group")
    return out if keep is None else out.assign(group=np.take(keep, out["group"]))


def _kept(a, b, cluster, group, keep):
    """The pairs of the kept groups, their groups numbered 0… in the order of ``keep``."""
    sel = np.isin(group, keep)
    order = np.argsort(keep)
    code = order[np.searchsorted(np.asarray(keep)[order], group[sel])]
    return a[sel], b[sel], cluster[sel], code, len(keep)


def _point_tables(a, b, group, n_groups, grid):
    tables = np.bincount(grid.codes(a, b, group), minlength=n_groups * grid.cells)
    return grid.stats(tables.astype(np.float64).reshape(n_groups, *grid.shape))


def _boot_tables(a, b, cluster, group, n_groups, weights, grid, chunk_groups=None):
    """Every statistic of every resample's tables. The resamples go in chunks of the size the
    computation of ``chunk_groups`` groups would use (by default, these groups)."""
    counts = cell_counts(cluster, grid.codes(a, b, group))
    step = max(1, CELLS_PER_CHUNK // ((chunk_groups or n_groups) * grid.cells))
    chunks = []
    for start in range(0, weights.shape[0], step):
        tables = table_sums(weights[start : start + step], counts, n_groups * grid.cells)
        chunks.append(grid.stats(tables.reshape(-1, n_groups, *grid.shape)))
    return {s: np.concatenate([c[s] for c in chunks]) for s in STATISTICS}


def _pooled_raw(a, b, cluster, group, n_groups, weights):
    """Continuous scores: the statistics of each resample from its expanded pairs (slower)."""
    point = {s: np.full(n_groups, np.nan) for s in STATISTICS}
    boots = {s: np.full((weights.shape[0], n_groups), np.nan) for s in STATISTICS}
    for g in range(n_groups):
        sel = group == g
        ga, gb, gc = a[sel], b[sel], cluster[sel]
        for s, v in pair_stats_raw(ga, gb).items():
            point[s][g] = v
        for r, w in enumerate(weights):
            rows = np.repeat(np.arange(len(ga)), w[gc].astype(np.int64))
            for s, v in pair_stats_raw(ga[rows], gb[rows]).items():
                boots[s][r, g] = v
    return point, boots


def per_instance(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray,
    unit: np.ndarray,
    item: np.ndarray,
    weights: np.ndarray,
    level: float = LEVEL,
) -> tuple[pd.DataFrame, int, int]:
    """Correlations across the responses within each unit (an instance, or an instance × skill),
    averaged over units; units with a constant side or < 2 responses are skipped.

    ``unit`` codes the unit of each pair, ``item`` the response (model) within it. Returns the
    frame (statistic, value, ci_low, ci_high), the number of units used and skipped.
    """
    n_units = int(unit.max()) + 1 if len(unit) else 0
    x = np.full((n_units, int(item.max()) + 1 if len(item) else 0), np.nan)
    y = x.copy()
    x[unit, item], y[unit, item] = a, b
    r = corr_rows(x, y)
    used = np.isfinite(r["pearson"])
    unit_cluster = np.zeros(n_units, dtype=np.int64)
    unit_cluster[unit] = cluster
    n_clusters = weights.shape[1]
    point, boots = {}, {}
    for s in CORRELATIONS:
        ok = used & np.isfinite(r[s])
        total = np.bincount(unit_cluster[ok], r[s][ok], minlength=n_clusters)
        cnt = np.bincount(unit_cluster[ok], minlength=n_clusters).astype(np.float64)
        point[s] = np.array([total.sum() / cnt.sum() if cnt.sum() else np.nan])
        with np.errstate(invalid="ignore", divide="ignore"):
            boots[s] = ((weights @ total) / (weights @ cnt))[:, None]
    frame = _frame(point, boots, CORRELATIONS, level).drop(columns="group")
    return frame, int(used.sum()), int(n_units - used.sum())


def system(
    a: np.ndarray,
    b: np.ndarray,
    cluster: np.ndarray,
    model: np.ndarray,
    weights: np.ndarray,
    level: float = LEVEL,
) -> tuple[pd.DataFrame, int]:
    """Correlations between the per-model means of A and B (over the aligned pairs), with the
    means recomputed in every resample. Returns the frame and the number of models.

    Spearman and Kendall see the models' order with ties compared exactly (stats.ranks): two
    models with equal means as fractions tie in the point value and in every resample, however
    the sums were ordered (a skill filter, a resample), so the value is that of scipy on the
    exact means."""
    frame, n_models = system_groups(a, b, cluster, model, np.zeros(len(a), int), 1, weights, level)
    return frame.drop(columns="group"), n_models[0]


def system_groups(a, b, cluster, model, group, n_groups, weights, level=LEVEL):
    """``system`` for every group of pairs at once (group: code per pair): one frame with a
    ``group`` column, and the number of models per group. Where every group's sums are exact
    integers (stats.ranks), all their resampled sums come from one matrix product: exact, so
    the same as one product per group."""
    sums = [
        _model_sums(a, b, cluster, model, group == g, weights.shape[1]) for g in range(n_groups)
    ]
    parts = [x[:3] for x in sums]
    exact = all(ra.scale is not None and rb.scale is not None for ra, rb, _ in parts)
    if exact and parts:
        summed = weights @ np.hstack([x for ra, rb, _ in parts for x in (ra.num, rb.num, ra.cnt)])
        at, presummed = 0, []
        for ra, rb, m in parts:
            na, nb, cnt = (summed[:, at + i * m : at + (i + 1) * m] for i in range(3))
            presummed.append((_Summed(ra, weights, (na, cnt)), _Summed(rb, weights, (nb, cnt)), m))
            at += 3 * m
        parts = presummed
    point = {s: v[0] for s, v in _system_corr(parts, np.ones((1, weights.shape[1]))).items()}
    boots = _system_corr(parts, weights)
    frame = _frame(point, boots, CORRELATIONS, level)
    return frame, [x[3] for x in sums]


def _model_sums(a, b, cluster, model, sel, n_clusters):
    """Ratios of A's and B's per-model means (clusters × models) over the pairs ``sel``."""
    a, b, cluster, model = a[sel], b[sel], cluster[sel], model[sel]
    n_models = int(model.max()) + 1 if len(model) else 0
    cell = cluster * n_models + model
    # bincount adds in input order, as np.add.at did: the same floats for any score.
    sa, sb, cnt = (
        np.bincount(cell, w, minlength=n_clusters * n_models).reshape(n_clusters, n_models)
        for w in (a, b, None)
    )
    cnt = cnt.astype(np.float64)
    # The models present: a criterion's pairs may skip some codes of the caller's numbering.
    return ratios(sa, cnt), ratios(sb, cnt), n_models, len(np.unique(model))


class _Summed(Ratios):
    """Ratios whose sums under ``weights`` were computed already (the batched product)."""

    def __init__(self, base: Ratios, weights: np.ndarray, sums: tuple[np.ndarray, np.ndarray]):
        super().__init__(base.num, base.cnt, base.scale)
        object.__setattr__(self, "_for", (weights, sums))

    def sums(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        done, sums = self._for
        return sums if weights is done else super().sums(weights)


def _system_corr(parts, w: np.ndarray) -> dict[str, np.ndarray]:
    """(resamples, groups) per correlation. Groups with the same number of models are stacked
    row-wise into one call: every correlation is computed row by row, so stacking changes no
    value. Order statistics on exact keys, Pearson on the means."""
    out = {s: np.full((w.shape[0], len(parts)), np.nan) for s in CORRELATIONS}
    widths = [m for _, _, m in parts]
    for m in dict.fromkeys(widths):
        gs = [g for g, x in enumerate(widths) if x == m]
        keys = [np.vstack([parts[g][i].keys(w) for g in gs]) for i in (0, 1)]
        means = [np.vstack([parts[g][i].means(w) for g in gs]) for i in (0, 1)]
        ordered = corr_rows(*keys)
        ordered["pearson"] = corr_rows(*means)["pearson"]
        for s in CORRELATIONS:
            out[s][:, gs] = ordered[s].reshape(len(gs), w.shape[0]).T
    return out


def raters_alpha(
    unit: np.ndarray, value: np.ndarray, cluster: np.ndarray, weights: np.ndarray, level=LEVEL
) -> pd.DataFrame:
    """Krippendorff's α among any number of raters with missing ratings: one row per level
    (alpha_ordinal, alpha_interval) with CI, n (pairable values), n_units and n_instances.

    unit: code of the rated item per rating; cluster: its instance (column of ``weights``).
    """
    one = np.zeros(len(unit), dtype=np.int64)
    return raters_alpha_groups(unit, value, cluster, one, 1, weights, level).drop(columns="group")


def raters_alpha_groups(unit, value, cluster, group, n_groups, weights, level=LEVEL):
    """``raters_alpha`` for every group of ratings at once (group: code per rating; a rating
    may be repeated into several groups): one frame with a ``group`` column. Where every
    group's per-instance coincidences are exact (few raters: halves), their resamples come
    from one matrix product, exact and so the same as one product per group."""
    names = ("alpha_ordinal", "alpha_interval")
    point = {k: np.full(n_groups, np.nan) for k in names}
    boots = {k: np.full((weights.shape[0], n_groups), np.nan) for k in names}
    counts, tables = [], {}
    for g in range(n_groups):
        sel = group == g
        _, inv, m = np.unique(unit[sel], return_inverse=True, return_counts=True)
        keep = m[inv] >= 2
        u, v, c = inv[keep], value[sel][keep], cluster[sel][keep]
        counts.append((len(v), len(np.unique(u)), len(np.unique(c))))
        values = np.unique(v)
        if len(values) <= MAX_LEVELS:
            tables[g] = (_per_instance_coincidences(u, v, c, weights.shape[1], values), values)
        else:
            p, b = _raters_raw(u, v, c, weights)
            for k in names:
                point[k][g], boots[k][:, g] = p[k], b[k]
    for g, (per_inst, values), resampled in _resampled(tables, weights):
        k = len(values)
        for name, x in alpha_from_coincidence(per_inst.sum(0).reshape(1, k, k), values).items():
            point[name][g] = x[0]
        for name, x in alpha_from_coincidence(resampled.reshape(-1, k, k), values).items():
            boots[name][:, g] = x
    frame = _frame(point, boots, names, level)
    n, n_units, n_inst = (np.array(x, dtype=np.int64) for x in zip(*counts, strict=True))
    g = frame["group"].to_numpy()
    return frame.assign(n=n[g], n_units=n_units[g], n_instances=n_inst[g])


def _resampled(tables: dict, weights: np.ndarray):
    """(group, (per-instance table, values), resampled tables) for each group of ``tables``."""
    groups = list(tables)
    mats = [tables[g][0] for g in groups]
    if len(mats) > 1 and all(_exact(m, weights) for m in mats):
        done = np.hsplit(weights @ np.hstack(mats), np.cumsum([m.shape[1] for m in mats])[:-1])
    else:
        done = [weights @ m for m in mats]
    return [(g, tables[g], d) for g, d in zip(groups, done, strict=True)]


def _exact(m: np.ndarray, weights: np.ndarray, scale: float = 2.0**10) -> bool:
    """Whether every weighted sum of m's rows is exact in float64 in any order: m holds
    multiples of 1/scale, and no sum can reach 2^53 / scale."""
    s = m * scale
    bound = float(np.abs(weights).sum(1).max(initial=0.0)) * float(np.abs(s).max(initial=0.0))
    return bool(np.array_equal(s, np.round(s))) and bound < 2.0**53


def _raters_raw(unit, value, cluster, weights):
    """Continuous ratings: α of every resample from its expanded ratings (slower)."""
    point = alpha_raw(unit, value)
    boots = {k: np.full(weights.shape[0], np.nan) for k in point}
    for r, w in enumerate(weights):
        rep = w[cluster].astype(np.int64)
        # A unit drawn twice becomes two units: number the copies apart.
        copy = np.concatenate([np.arange(c) for c in rep]) if rep.sum() else rep
        u = np.repeat(unit, rep) * (int(rep.max()) + 1) + copy
        for k, v in alpha_raw(u, np.repeat(value, rep)).items():
            boots[k][r] = v
    return point, boots


def _per_instance_coincidences(unit, value, cluster, n_clusters, values):
    """(instances, K²): the coincidence matrix of each instance's units."""
    k = len(values)
    code = np.searchsorted(values, value)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    counts = np.bincount(unit * k + code, minlength=n_units * k).reshape(n_units, k)
    counts = counts.astype(np.float64)
    m_u = counts.sum(1)
    # Coincidences of one unit: ordered pairs of its values from different raters / (m_u − 1).
    o = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / np.maximum(
        m_u - 1, 1
    )[:, None, None]
    unit_cluster = np.zeros(n_units, dtype=np.int64)
    unit_cluster[unit] = cluster
    # Summed per instance in unit order (bincount adds in input order, as np.add.at did).
    flat = o.reshape(n_units, k * k)
    return np.column_stack(
        [np.bincount(unit_cluster, flat[:, c], minlength=n_clusters) for c in range(k * k)]
    ).reshape(n_clusters, k * k)
