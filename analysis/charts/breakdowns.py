"""Plotly figures of the Breakdowns page. Cells without scores stay empty (NaN), never 0; each
cell's text gives the mean and n, the hover the 95% CI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from analysis.charts.common import FONT, ci_whiskers, empty_figure
from analysis.core.taxonomy import DIFFICULTY_LEVELS, DOMAINS, SKILLS

UNLABELED = "unlabeled"


def skill_label(skill: str) -> str:
    return SKILLS[skill].label if skill in SKILLS else skill


def _skills(values) -> list[str]:
    present = set(values)
    return [s for s in SKILLS if s in present] + sorted(present - set(SKILLS))


def _cell_text(mean: float, n: float) -> str:
    if pd.isna(n):
        return ""  # no rows at all: an empty cell
    return f"n={int(n)}" if pd.isna(mean) else f"{mean:.2f}<br>n={int(n)}"


def _cell_heatmap(
    rows: pd.DataFrame, col: str, columns: list, names: list[str], title: str
) -> go.Figure:
    skills = _skills(rows["skill"])
    grid = {
        c: rows.pivot_table(
            index="skill", columns=col, values=c, aggfunc="first", dropna=False
        ).reindex(index=skills, columns=columns)
        for c in ("mean", "ci_low", "ci_high", "n", "n_na")
    }
    text = [
        [_cell_text(m, n) for m, n in zip(mr, nr, strict=True)]
        for mr, nr in zip(grid["mean"].to_numpy(float), grid["n"].to_numpy(float), strict=True)
    ]
    custom = np.dstack([grid[c].to_numpy(float) for c in ("ci_low", "ci_high", "n", "n_na")])
    fig = go.Figure(
        go.Heatmap(
            z=grid["mean"].to_numpy(float),
            x=names,
            y=[skill_label(s) for s in skills],
            text=text,
            texttemplate="%{text}",
            colorscale="RdYlGn",
            zmin=1,
            zmax=5,
            customdata=custom,
            colorbar=dict(title="mean"),
            xgap=2,
            ygap=2,
            hovertemplate="%{y} × %{x}<br>mean %{z:.2f} [%{customdata[0]:.2f}, "
            "%{customdata[1]:.2f}]<br>n = %{customdata[2]} scores, %{customdata[3]} N/A"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        height=140 + 40 * len(skills),
        font=FONT,
        margin=dict(l=10, r=10, t=50, b=40),
        yaxis=dict(autorange="reversed"),
    )
    return fig


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
    fig = _cell_heatmap(rows, "level", cols, names, f"{model}: mean per skill × difficulty")
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


def difficulty_lines(table: pd.DataFrame, per_row: int = 4) -> go.Figure:
    """Mean vs difficulty level 1-5, one panel per skill, one line per model (95% CI bars).
    Unlabeled instances are left out here (no level to plot them at)."""
    rows = table[table["difficulty"].notna() & (table["n"] > 0)]
    if rows.empty:
        return empty_figure("No scores with a difficulty level in this selection")
    skills = _skills(rows["skill"])
    models = sorted(set(rows["model"]))
    n_rows = math.ceil(len(skills) / per_row)
    fig = make_subplots(
        rows=n_rows,
        cols=per_row,
        shared_xaxes=True,
        shared_yaxes=True,
        subplot_titles=[skill_label(s) for s in skills],
        vertical_spacing=0.3 / n_rows,
        horizontal_spacing=0.03,
    )
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
                    name=m,
                    legendgroup=m,
                    showlegend=k == 0,
                    line=dict(color=color),
                    marker=dict(size=6),
                    error_y=ci_whiskers(r["mean"], r["ci_low"], r["ci_high"], thickness=1, width=2),
                    customdata=r[["ci_low", "ci_high", "n"]].to_numpy(),
                    hovertemplate=f"<b>{m}</b> · {skill_label(s)}<br>level %{{x}}: mean "
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
    fig.update_layout(
        title="Mean score vs difficulty level per skill (95% CI bars)",
        height=300 * n_rows + 140,
        font=FONT,
        margin=dict(l=10, r=10, t=70, b=40),
        legend=dict(orientation="h", y=-0.06),
    )
    return fig


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
    text = [["" if np.isnan(v) else f"{v:+.0f}%" for v in row] for row in rel]
    custom = np.dstack(
        [piv[c].to_numpy(float) for c in ("mean_full", "n_full", "mean_hard", "n_hard")]
    )
    lim = float(np.nanmax(np.abs(rel))) if np.isfinite(rel).any() else 1.0
    fig = go.Figure(
        go.Heatmap(
            z=rel,
            x=models,
            y=[skill_label(s) for s in skills],
            text=text,
            texttemplate="%{text}",
            colorscale="RdBu",
            zmid=0,
            zmin=-lim,
            zmax=lim,
            customdata=custom,
            xgap=2,
            ygap=2,
            colorbar=dict(title="change %"),
            hovertemplate="%{y} · %{x}<br>full %{customdata[0]:.2f} (n=%{customdata[1]})"
            "<br>hard %{customdata[2]:.2f} (n=%{customdata[3]})<br>change %{z:+.1f}%"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        title="FLASK-Hard vs full set: relative change of the mean",
        height=140 + 40 * len(skills),
        font=FONT,
        margin=dict(l=10, r=10, t=50, b=40),
        yaxis=dict(autorange="reversed"),
    )
    return fig
