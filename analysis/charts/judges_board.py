"""The judge leaderboard's figure: a judge × criterion matrix of one agreement statistic against
the humans, heat-coloured (better = greener), each cell showing its value and n, its 95% CI on
hover; below it, apart, the human ceiling (leave-one-out) as a row of its own on the same
colours. Takes a ``Board`` (views/judge_board.py), no queries.

Rows and columns are placed by position with their names as tick text, so two judges whose
names clip alike, or a criterion labelled like the all-criteria column, keep their own cells;
every name is escaped (``esc`` / ``clip``): a hostile judge name stays text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.charts.common import clip, colorbar, empty_figure, esc, frame, wrap
from analysis.stats.agreement import CORRELATIONS, LABELS
from analysis.views.agreement import ALL_LABEL, SCOPE_CRITERION
from analysis.views.judge_board import CEILING, Board
from analysis.views.judge_board_report import (
    CEILING_ROW,
    JUDGE_ROW,
    LOWER_IS_BETTER,
    for_stat,
    ranked,
)
from analysis.views.tables import skill_label

NAME_CHARS = 28  # a judge's name on the axis (the full name is in the hover)
CEILING_COLOR = "#6b6b6b"


def _columns(board: Board, rows: pd.DataFrame) -> list[tuple[str, str | None]]:
    """(scope, skill) of each column: the criteria in the board's order, then all pooled."""
    seen = dict.fromkeys(_key(*k) for k in zip(rows["scope"], rows["skill"], strict=True))
    named = [k for k in seen if k[0] == SCOPE_CRITERION]
    return named + [k for k in seen if k[0] != SCOPE_CRITERION]


def _key(scope: str, skill) -> tuple[str, str | None]:
    """A column's key; the all-criteria column's skill is None (NaN in a merged frame)."""
    return (scope, skill if scope == SCOPE_CRITERION else None)


def _label(board: Board, key: tuple[str, str | None]) -> str:
    return str(skill_label(key[1], board.labels)) if key[0] == SCOPE_CRITERION else ALL_LABEL


def _grid(part: pd.DataFrame, names: list, cols: list, name_col: str | None) -> dict:
    """value, ci_low, ci_high, n per (row name, column), NaN where none."""
    out = {c: np.full((len(names), len(cols)), np.nan) for c in ("value", "ci_low", "ci_high", "n")}
    where = {k: j for j, k in enumerate(cols)}
    row_of = {n: i for i, n in enumerate(names)}
    for rec in part.to_dict("records"):
        i = row_of.get(rec[name_col]) if name_col else 0
        j = where.get(_key(rec["scope"], rec["skill"]))
        if i is None or j is None:
            continue
        for c in out:
            out[c][i, j] = rec[c]
    return out


def _text(g: dict) -> np.ndarray:
    return np.array(
        [
            [
                "" if np.isnan(v) else f"{v:.2f}<br>n={int(n)}"
                for v, n in zip(vrow, nrow, strict=True)
            ]
            for vrow, nrow in zip(g["value"], g["n"], strict=True)
        ],
        dtype=object,
    )


def _heat(g: dict, names: list[str], xlabels: list[str], stat: str, unit: str):
    custom = np.stack(
        [
            np.array([[esc(n, template=True)] * len(xlabels) for n in names], dtype=object),
            np.array([[esc(x, template=True) for x in xlabels]] * len(names), dtype=object),
            g["ci_low"].astype(object),
            g["ci_high"].astype(object),
            g["n"].astype(object),
        ],
        axis=-1,
    )
    return go.Heatmap(
        z=g["value"],
        x=list(range(len(xlabels))),
        y=list(range(len(names))),
        text=_text(g),
        texttemplate="%{text}",
        textfont=dict(size=11),  # one size in both rows (plotly would fit each row apart)
        customdata=custom,
        xgap=2,
        ygap=2,
        hovertemplate="%{customdata[0]} × %{customdata[1]}<br>"
        + esc(LABELS.get(stat, stat), template=True)
        + " %{z:.3f} [%{customdata[2]:.3f}, %{customdata[3]:.3f}]<br>n = %{customdata[4]} "
        f"{unit}<extra></extra>",
    )


def _range(values: np.ndarray, stat: str) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if stat in LOWER_IS_BETTER:
        return 0.0, float(max(finite.max(initial=0.0), 1e-9))
    # Coefficients and rates end at 1; below 0 only where the data go there.
    return float(min(finite.min(initial=0.0), 0.0)), 1.0


def board_heatmap(board: Board, stat: str) -> go.Figure:
    """Judges (rows) × criteria then all criteria pooled (columns) for ``stat``; the human
    ceiling as its own row below, apart. Cells: value and n; hover: the 95% CI."""
    rows = for_stat(board, stat)
    judges_part = rows[rows["row"] == JUDGE_ROW]
    if judges_part.empty:
        return empty_figure("No judge has items aligned with the humans in this slice.")
    cols = _columns(board, rows)
    xlabels = [_label(board, c) for c in cols]
    judges = ranked(board, stat)  # best first
    g = _grid(judges_part, judges, cols, "judge")
    ceiling = rows[rows["row"] == CEILING_ROW]
    has_ceiling = not ceiling.empty
    n_rows = len(judges) + (1 if has_ceiling else 0)
    heights = [len(judges), 1] if has_ceiling else [1]
    fig = make_subplots(
        rows=len(heights),
        cols=1,
        shared_xaxes=True,
        row_heights=[h / sum(heights) for h in heights],
        vertical_spacing=min(0.3, 24 / (60 + 44 * n_rows)),
    )
    level = board.query.level if stat in CORRELATIONS else "pooled"
    unit = {"instance": "instance × skill units", "system": "models"}.get(level, "aligned items")
    fig.add_trace(_heat(g, judges, xlabels, stat, unit), row=1, col=1)
    fig.update_yaxes(
        tickvals=list(range(len(judges))),
        ticktext=[clip(j, NAME_CHARS) for j in judges],
        autorange="reversed",
        row=1,
        col=1,
    )
    values = g["value"]
    if has_ceiling:
        c = _grid(ceiling, [CEILING], cols, None)
        fig.add_trace(
            _heat(c, [CEILING], xlabels, stat, "pairs (item × held-out human)"), row=2, col=1
        )
        fig.update_yaxes(
            tickvals=[0], ticktext=[wrap(CEILING, NAME_CHARS)], row=2, col=1,
            tickfont=dict(color=CEILING_COLOR),
        )  # fmt: skip
        values = np.concatenate([values.ravel(), c["value"].ravel()])
    fig.update_xaxes(tickvals=list(range(len(xlabels))), ticktext=[wrap(x) for x in xlabels])
    lo, hi = _range(np.asarray(values, float), stat)
    # One scale for both rows of cells; its bar once, under the plot (as Breakdowns' heatmaps).
    scale = "RdYlGn_r" if stat in LOWER_IS_BETTER else "RdYlGn"
    fig.update_traces(colorscale=scale, zmin=lo, zmax=hi, showscale=False)
    # No title on the bar: the figure's title names the statistic (a horizontal bar's title
    # on top was drawn over the bar by this plotly.js).
    fig.update_traces(showscale=True, colorbar=colorbar(""), selector=0)
    title = f"{LABELS[stat]} of each LLM judge against the humans (mean per item)"
    return frame(fig, title, 220 + 44 * n_rows)
