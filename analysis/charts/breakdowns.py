"""Plotly figures of the Breakdowns page. Cells without scores stay empty (NaN), never 0; each
cell's text gives the mean over n, the hover the mean to 2 decimals, the 95% CI and full names.

Plotly sizes every cell's text to the widest line that fits the narrowest cell, so a cell line
has at most 3 characters: the mean to 1 decimal (2 on a 0-1 scale; the CI is rarely narrower
than ±0.1), the n without "n=" (1k from 1,000 on). Then eleven domain columns on a 390 px phone
still get 9 px numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from analysis.charts.common import (
    ci_whiskers,
    colorbar,
    empty_figure,
    esc,
    frame,
    lines,
    row_px,
    title_px,
    wrap,
)
from analysis.core.taxonomy import DIFFICULTY_LEVELS, DOMAINS, SKILLS

UNLABELED = "unlabeled"


def skill_labels(rows: pd.DataFrame) -> dict[str, str]:
    """skill id → label from the view's ``label`` column (the dataset's own criteria keep their
    own labels); FLASK's labels only for a frame without one."""
    if "label" in rows.columns:
        return dict(zip(rows["skill"], rows["label"], strict=True))
    return {s: SKILLS[s].label if s in SKILLS else s for s in set(rows["skill"])}


def _skills(values) -> list[str]:
    present = set(values)
    return [s for s in SKILLS if s in present] + sorted(present - set(SKILLS))


def _count(n: float) -> str:
    """n in at most 3 characters (the hover has it exactly): 999, 1k … 99k, .1M … .9M, 1M …"""
    n = int(n)
    if n < 1000:
        return str(n)
    if n < 99_500:
        return f"{round(n / 1000)}k"
    return f".{max(1, round(n / 1e5))}M" if n < 950_000 else f"{round(n / 1e6)}M"


def _cell_text(mean: float, n: float, decimals: int) -> str:
    if pd.isna(n):
        return ""  # no rows at all: an empty cell
    return f"n={int(n)}" if pd.isna(mean) else f"{mean:.{decimals}f}<br>{_count(n)}"


def _cell_heatmap(
    rows: pd.DataFrame, col: str, columns: list, names: list[str], title: str, wrap_x: int = 0
) -> go.Figure:
    """Skill × ``col`` cells. ``wrap_x`` wraps the column names, for few columns only: a phone
    turns crowded names upright, and a wrapped name on its side is two lines wide."""
    skills = _skills(rows["skill"])
    grid = {
        c: rows.pivot_table(
            index="skill", columns=col, values=c, aggfunc="first", dropna=False
        ).reindex(index=skills, columns=columns)
        for c in ("mean", "ci_low", "ci_high", "n", "n_na")
    }
    means = grid["mean"].to_numpy(float)
    decimals = 2 if np.nanmax(np.abs(means), initial=0) <= 1 else 1  # a 0-1 scale needs 2
    text = [
        [_cell_text(m, n, decimals) for m, n in zip(mr, nr, strict=True)]
        for mr, nr in zip(grid["mean"].to_numpy(float), grid["n"].to_numpy(float), strict=True)
    ]
    named = skill_labels(rows)
    labels = [named[s] for s in skills]
    custom = np.dstack(
        [
            np.array([[esc(lab)] * len(names) for lab in labels], dtype=object),
            np.array([[esc(x) for x in names]] * len(labels), dtype=object),
            *(grid[c].to_numpy(float) for c in ("ci_low", "ci_high", "n", "n_na")),
        ]
    )
    fig = go.Figure(
        go.Heatmap(
            z=grid["mean"].to_numpy(float),
            x=[wrap(x, wrap_x) if wrap_x else esc(x) for x in names],
            y=[wrap(label) for label in labels],
            text=text,
            texttemplate="%{text}",
            colorscale="RdYlGn",
            zmin=1,
            zmax=5,
            customdata=custom,
            colorbar=colorbar("mean"),
            xgap=2,
            ygap=2,
            hovertemplate="%{customdata[0]} × %{customdata[1]}<br>mean %{z:.2f} "
            "[%{customdata[2]:.2f}, %{customdata[3]:.2f}]<br>n = %{customdata[4]} scores, "
            "%{customdata[5]} N/A<extra></extra>",
        )
    )
    fig.update_layout(yaxis=dict(autorange="reversed"))
    return frame(fig, title, 190 + len(skills) * row_px(fig.data[0].y, 40))


def _with_scale(fig: go.Figure, rows: pd.DataFrame) -> go.Figure:
    lo, hi = np.nanmin(rows["mean"].to_numpy(float)), np.nanmax(rows["mean"].to_numpy(float))
    if not (lo >= 1 and hi <= 5):  # not FLASK's 1-5: colour by the data's own range
        fig.update_traces(zmin=lo, zmax=hi)
    return fig


def difficulty_heatmap(table: pd.DataFrame, model: str) -> go.Figure:
    """Skill × difficulty level (1-5, then unlabeled) for one model."""
    rows = table[table["model"] == model]
    if rows.empty or rows["n"].sum() == 0:
        return empty_figure("No scores for this model in this selection")
    rows = rows.assign(
        level=rows["difficulty"].astype(object).where(rows["difficulty"].notna(), UNLABELED)
    )
    levels = [lv for lv in DIFFICULTY_LEVELS if lv in set(rows["level"])]
    cols = levels + ([UNLABELED] if UNLABELED in set(rows["level"]) else [])
    names = [
        f"{c} · {DIFFICULTY_LEVELS[c].removesuffix(' knowledge')}" if c in DIFFICULTY_LEVELS else c
        for c in cols
    ]
    title = f"{model}: mean per skill × difficulty"
    fig = _cell_heatmap(rows, "level", cols, names, title, wrap_x=12)
    return _with_scale(fig, rows)


def domain_heatmap(table: pd.DataFrame, model: str) -> go.Figure:
    """Skill × domain for one model (an instance counts in each of its domains)."""
    rows = table[table["model"] == model]
    if rows.empty or rows["n"].sum() == 0:
        return empty_figure("No scores for this model in this selection")
    present = set(rows["domain"])
    cols = [d for d in DOMAINS if d in present] + sorted(present - set(DOMAINS))
    title = f"{model}: mean per skill × domain (an instance counts in each of its domains)"
    return _with_scale(_cell_heatmap(rows, "domain", cols, cols, title), rows)


PANEL_PX = 180  # the height of one skill's panel in the difficulty lines


def difficulty_lines(table: pd.DataFrame, per_row: int = 3) -> go.Figure:
    """Mean vs difficulty level 1-5, one panel per skill, one line per model (95% CI bars).
    Unlabeled instances are left out here (no level to plot them at). Three panels a row: on
    a phone each is ~100 px wide, enough for 1-5 and a wrapped skill name."""
    rows = table[table["difficulty"].notna() & (table["n"] > 0)]
    if rows.empty:
        return empty_figure("No scores with a difficulty level in this selection")
    skills = _skills(rows["skill"])
    models = sorted(set(rows["model"]))
    n_rows = math.ceil(len(skills) / per_row)
    named = skill_labels(rows)
    titles = [wrap(named[s]) for s in skills]
    # between two rows: the upper row's tick labels, then the lower row's (wrapped) titles
    gap = 16 * max(lines(t) for t in titles) + 34
    plot_px = n_rows * PANEL_PX + (n_rows - 1) * gap
    fig = make_subplots(
        rows=n_rows,
        cols=per_row,
        shared_xaxes=True,
        shared_yaxes=True,
        subplot_titles=titles,
        vertical_spacing=gap / plot_px,
        horizontal_spacing=0.04,
    )
    fig.update_annotations(font=dict(size=12))
    for j, m in enumerate(models):
        color = qualitative.Plotly[j % len(qualitative.Plotly)]
        for k, s in enumerate(skills):
            r = rows[(rows["model"] == m) & (rows["skill"] == s)].sort_values("difficulty")
            lv = r["difficulty"].astype(int).to_numpy()
            fig.add_trace(
                go.Scatter(
                    x=lv,
                    y=r["mean"],
                    mode="lines+markers",
                    name=esc(m),
                    legendgroup=m,
                    showlegend=k == 0,
                    line=dict(color=color),
                    marker=dict(size=6),
                    error_y=ci_whiskers(r["mean"], r["ci_low"], r["ci_high"], thickness=1, width=2),
                    customdata=r[["ci_low", "ci_high", "n"]].to_numpy(),
                    hovertemplate=f"<b>{esc(m, template=True)}</b> · "
                    f"{esc(named[s], template=True)}<br>level %{{x}}: mean "
                    "%{y:.2f} [%{customdata[0]:.2f}, %{customdata[1]:.2f}]<br>n = "
                    "%{customdata[2]}<extra></extra>",
                ),
                row=k // per_row + 1,
                col=k % per_row + 1,
            )
    fig.update_xaxes(tickvals=list(DIFFICULTY_LEVELS), range=[0.6, 5.4], showticklabels=True)
    lo = float((rows["ci_low"].fillna(rows["mean"])).min())
    hi = float((rows["ci_high"].fillna(rows["mean"])).max())
    if lo >= 1 and hi <= 5:  # FLASK's scale: keep every panel on the same 1-5 footing
        fig.update_yaxes(range=[0.9, 5.1])
    title = "Mean score vs difficulty level per skill (95% CI bars)"
    # Below the panels: the last row's tick labels, then the legend (a phone fits about three
    # names a row). Generous: a shorter legend only widens the gaps between rows.
    below = 30 + 26 * math.ceil(len(models) / 3)
    top = gap - 16  # the first row's titles
    height = plot_px + title_px(title) + 8 + top + below
    return frame(fig, title, height, legend=True, margin=dict(t=top))


def hard_chart(table: pd.DataFrame) -> go.Figure:
    """Relative change FLASK-Hard vs full set, per skill × model (diverging colours)."""
    if table.empty:
        return empty_figure("No FLASK-Hard instances in this selection")
    skills = _skills(table["skill"])
    models = sorted(set(table["model"]))
    piv = {
        c: table.pivot(index="skill", columns="model", values=c).reindex(
            index=skills, columns=models
        )
        for c in ("rel_change", "mean_full", "n_full", "mean_hard", "n_hard")
    }
    rel = piv["rel_change"].to_numpy(float) * 100
    # without "%" (the colour bar says it): plotly sizes every cell's text to the widest
    text = [["" if np.isnan(v) else f"{v:+.0f}" for v in row] for row in rel]
    named = skill_labels(table)
    labels = [named[s] for s in skills]
    custom = np.dstack(
        [
            np.array([[esc(lab)] * len(models) for lab in labels], dtype=object),
            *(piv[c].to_numpy(float) for c in ("mean_full", "n_full", "mean_hard", "n_hard")),
        ]
    )
    lim = float(np.nanmax(np.abs(rel))) if np.isfinite(rel).any() else 1.0
    fig = go.Figure(
        go.Heatmap(
            z=rel,
            x=[esc(m) for m in models],
            y=[wrap(label) for label in labels],
            text=text,
            texttemplate="%{text}",
            colorscale="RdBu",
            zmid=0,
            zmin=-lim,
            zmax=lim,
            customdata=custom,
            xgap=2,
            ygap=2,
            colorbar=colorbar("change of the mean, %"),
            hovertemplate="%{customdata[0]} · %{x}<br>full %{customdata[1]:.2f} "
            "(n=%{customdata[2]})<br>hard %{customdata[3]:.2f} (n=%{customdata[4]})"
            "<br>change %{z:+.1f}%<extra></extra>",
        )
    )
    fig.update_layout(yaxis=dict(autorange="reversed"))
    title = "FLASK-Hard vs full set: relative change of the mean"
    return frame(fig, title, 230 + len(skills) * row_px(fig.data[0].y, 40))
