"""Two scorers against one reference on the same pairs, and the gap between them.

The fair human ceiling compares, item by item, a held-out human with a reference (the mean of
the other humans) and the judge with that same reference. Both figures and their difference come
from one set of instance resamples, so the CI of the difference is paired: it is the interval to
read when asking whether the judge agrees with the humans less or more than a human does (two
CIs side by side overlap far more often than the paired one covers zero).

Statistics are those of ``stats.agreement`` (every one of ``STATISTICS``), computed from
per-instance contingency tables of (scorer, reference) as ``agreement_bootstrap.pooled`` does;
data with too many distinct values for tables (``grid_for``) goes through the pairs themselves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats.agreement import STATISTICS, grid_for, pair_stats_raw
from analysis.stats.agreement_bootstrap import (
    CELLS_PER_CHUNK,
    LEVEL,
    cell_counts,
    percentile_ci,
    table_sums,
)

SIDES = ("x", "y", "gap")  # the first scorer, the second, and second minus first


def paired_agreement(
    x: np.ndarray,
    y: np.ndarray,
    ref: np.ndarray,
    cluster: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    weights: np.ndarray,
    level: float = LEVEL,
) -> pd.DataFrame:
    """Every statistic of (x, ref) and of (y, ref) per group, and y's minus x's, each with a
    percentile CI over the resamples of ``weights`` (resamples × instances).

    x, y, ref: aligned scores (one pair set, two scorers); cluster: the instance (column of
    ``weights``) of each pair; group: the group code of each pair (repeat a pair to put it in
    several groups). Returns one row per group × side × statistic: group, side ('x', 'y',
    'gap'), statistic, value, ci_low, ci_high, n (pairs), n_instances.
    """
    x, y, ref = (np.asarray(v, dtype=np.float64) for v in (x, y, ref))
    grid = grid_for(np.concatenate([x, y]), ref, 2 * len(x), 2 * n_groups)
    if grid is not None:
        point, boots = _tables(x, y, ref, cluster, group, n_groups, weights, grid)
    else:
        point, boots = _raw(x, y, ref, cluster, group, n_groups, weights)
    values, resampled = [], []  # per (statistic, side), in the rows' order
    for stat in STATISTICS:
        p = point[stat].reshape(n_groups, 2)
        b = boots[stat].reshape(-1, n_groups, 2)
        values += [p[:, 0], p[:, 1], p[:, 1] - p[:, 0]]
        resampled += [b[..., 0], b[..., 1], b[..., 1] - b[..., 0]]
    # One percentile pass over every column: each column's interval is its own.
    lo, hi = percentile_ci(np.hstack(resampled), level)
    n_parts = len(STATISTICS) * len(SIDES)
    frame = pd.DataFrame(
        {
            "group": np.tile(np.arange(n_groups), n_parts),
            "side": np.repeat(np.array(SIDES * len(STATISTICS), dtype=object), n_groups),
            "statistic": np.repeat(np.array(STATISTICS, dtype=object), len(SIDES) * n_groups),
            "value": np.concatenate(values),
            "ci_low": lo,
            "ci_high": hi,
        }
    )
    return frame.merge(_counts(cluster, group, n_groups), on="group")


def _counts(cluster: np.ndarray, group: np.ndarray, n_groups: int) -> pd.DataFrame:
    n = np.bincount(group, minlength=n_groups)
    seen = pd.DataFrame({"g": group, "c": cluster}).drop_duplicates()
    n_inst = np.bincount(seen["g"].to_numpy(), minlength=n_groups)
    return pd.DataFrame({"group": np.arange(n_groups), "n": n, "n_instances": n_inst})


def _tables(x, y, ref, cluster, group, n_groups, weights, grid):
    """Point values (2G,) and resamples (R, 2G) per statistic; column 2g + side."""
    cols = np.concatenate([grid.codes(s, ref, 2 * group + side) for side, s in enumerate((x, y))])
    counts = cell_counts(np.tile(cluster, 2), cols)
    n_cells = 2 * n_groups * grid.cells
    point_tables = np.bincount(cols, minlength=n_cells).astype(np.float64)
    point = grid.stats(point_tables.reshape(2 * n_groups, *grid.shape))
    step = max(1, CELLS_PER_CHUNK // n_cells)
    chunks = [
        grid.stats(
            table_sums(weights[start : start + step], counts, n_cells).reshape(
                -1, 2 * n_groups, *grid.shape
            )
        )
        for start in range(0, weights.shape[0], step)
    ]
    boots = {
        s: np.concatenate([c[s] for c in chunks]) if chunks else np.empty((0, 2 * n_groups))
        for s in STATISTICS
    }
    return point, boots


def _raw(x, y, ref, cluster, group, n_groups, weights):
    """Continuous scores: each resample's statistics from its expanded pairs (slower)."""
    point = {s: np.full(2 * n_groups, np.nan) for s in STATISTICS}
    boots = {s: np.full((weights.shape[0], 2 * n_groups), np.nan) for s in STATISTICS}
    for g in range(n_groups):
        sel = group == g
        gr, gc = ref[sel], cluster[sel]
        for side, scores in enumerate((x[sel], y[sel])):
            col = 2 * g + side
            for s, v in pair_stats_raw(scores, gr).items():
                point[s][col] = v
            for i, w in enumerate(weights):
                rows = np.repeat(np.arange(len(gr)), w[gc].astype(np.int64))
                for s, v in pair_stats_raw(scores[rows], gr[rows]).items():
                    boots[s][i, col] = v
    return point, boots
