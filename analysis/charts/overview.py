"""Plotly figures of the Overview page: the leaderboard with CIs and the coverage heatmap."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from analysis.charts.common import FONT, ci_whiskers, empty_figure
from analysis.core.taxonomy import DOMAINS, SKILLS


def leaderboard_chart(table: pd.DataFrame, group: str) -> go.Figure:
    """Models ranked by the mean of ``group`` with 95% CI whiskers; n in the hover."""
    rows = table[table["group"] == group].sort_values("mean")
    if rows.empty:
        return empty_figure("No scores for this selection")
    fig = go.Figure(
        go.Scatter(
            x=rows["mean"],
            y=rows["model"],
            mode="markers",
            marker=dict(size=11, color="#3b6fd8"),
            error_x=ci_whiskers(rows["mean"], rows["ci_low"], rows["ci_high"], thickness=2),
            customdata=rows[["ci_low", "ci_high", "n", "n_instances"]].to_numpy(),
            hovertemplate="<b>%{y}</b><br>mean %{x:.2f} [%{customdata[0]:.2f}, "
            "%{customdata[1]:.2f}]<br>n = %{customdata[2]} scores, %{customdata[3]} "
            "instances<extra></extra>",
            name=group,
        )
    )
    fig.update_layout(
        title=f"{group}: mean score with 95% CI (bootstrap over instances)",
        xaxis_title="mean score",
        yaxis_title=None,
        height=max(260, 40 * len(rows) + 110),
        margin=dict(l=10, r=10, t=50, b=40),
        font=FONT,
    )
    return fig


def coverage_heatmap(cov: pd.DataFrame) -> go.Figure:
    """Instances per skill × domain; empty cells stay empty (never drawn as 0)."""
    if cov.empty:
        return empty_figure("No instances for this selection")
    grid = cov.pivot_table(index="skill", columns="domain", values="instances", aggfunc="sum")
    skills = [s for s in SKILLS if s in grid.index] + sorted(set(grid.index) - set(SKILLS))
    domains = [d for d in DOMAINS if d in grid.columns] + sorted(set(grid.columns) - set(DOMAINS))
    grid = grid.reindex(index=skills, columns=domains)
    labels = [SKILLS[s].label if s in SKILLS else s for s in grid.index]
    text = grid.map(lambda v: "" if pd.isna(v) else f"{int(v)}")
    fig = go.Figure(
        go.Heatmap(
            z=grid.to_numpy(dtype=float),
            x=list(grid.columns),
            y=labels,
            text=text.to_numpy(),
            texttemplate="%{text}",
            colorscale="Blues",
            hovertemplate="%{y} × %{x}: %{z:.0f} instances<extra></extra>",
            colorbar=dict(title="instances"),
        )
    )
    fig.update_layout(
        title="Coverage: instances per skill × domain (an instance counts in each of its domains)",
        height=120 + 28 * len(labels),
        margin=dict(l=10, r=10, t=50, b=40),
        font=FONT,
        yaxis=dict(autorange="reversed"),
    )
    return fig
