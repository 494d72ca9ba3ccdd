"""Figures of the Human-vs-judge page: agreement bars with CIs beside the human ceiling, the
confusion heatmap and the jittered scatter. Each takes an ``Agreement`` result, no queries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.charts.common import FONT, ci_whiskers, empty_figure
from analysis.core.taxonomy import SKILLS
from analysis.stats.agreement import LABELS
from analysis.views.agreement import OVERALL, Agreement

MAX_SCATTER_POINTS = 20_000  # beyond this the browser slows down; a fixed-seed sample is drawn


def _label(skill: str) -> str:
    return SKILLS[skill].label if skill in SKILLS else ("Overall" if skill == OVERALL else skill)


def _bar(rows: pd.DataFrame, name: str, color: str) -> go.Bar:
    return go.Bar(
        x=[_label(s) for s in rows["skill"]],
        y=rows["value"],
        name=name,
        marker_color=color,
        error_y=ci_whiskers(rows["value"], rows["ci_low"], rows["ci_high"]),
        customdata=rows[["ci_low", "ci_high", "n"]].to_numpy(),
        hovertemplate="%{x}: %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
        "<br>n = %{customdata[2]}<extra>" + name + "</extra>",
    )


def agreement_bars(r: Agreement, statistic: str) -> go.Figure:
    """One bar per skill (and overall) for A vs B, with the human–human α next to it."""
    rows = r.stats[r.stats["statistic"] == statistic]
    if rows.empty:
        return empty_figure("No aligned scores for this selection")
    level = rows["level"].iloc[0]
    fig = go.Figure(_bar(rows, f"{r.a.spec} vs {r.b.spec}", "#3b6fd8"))
    ceiling = r.ceiling[r.ceiling["statistic"] == statistic] if not r.ceiling.empty else r.ceiling
    if not ceiling.empty:
        ceiling = ceiling.set_index("skill").reindex(rows["skill"]).reset_index()
        fig.add_trace(_bar(ceiling, "human–human (ceiling)", "#b8bcc6"))
    fig.update_layout(
        barmode="group",
        title=f"{LABELS[statistic]} per skill ({level}), 95% CI over instances",
        yaxis_title=LABELS[statistic],
        height=420,
        margin=dict(l=10, r=10, t=50, b=40),
        legend=dict(orientation="h", y=-0.25),
        font=FONT,
    )
    return fig


def _rows_of(r: Agreement, skill: str) -> pd.DataFrame:
    return r.pairs if skill == OVERALL else r.pairs[r.pairs["skill"] == skill]


def _scale(r: Agreement, skill: str) -> tuple[float, float]:
    scales = list(r.scales.values()) if skill == OVERALL else [r.scales.get(skill, (1, 5))]
    return min(s[0] for s in scales), max(s[1] for s in scales)


def confusion_heatmap(r: Agreement, skill: str) -> go.Figure:
    """Counts of (A, B) on the scale's points; real-valued scores are rounded to the nearest
    point (the axis titles say so). Cells nobody used stay empty."""
    rows = _rows_of(r, skill)
    if rows.empty:
        return empty_figure("No aligned scores for this skill")
    lo, hi = _scale(r, skill)
    points = np.arange(np.floor(lo), np.ceil(hi) + 1)
    a, b = (np.clip(np.floor(rows[c].to_numpy() + 0.5), points[0], points[-1]) for c in "ab")
    grid = pd.crosstab(pd.Categorical(b, points), pd.Categorical(a, points), dropna=False)
    z = grid.to_numpy(dtype=float)
    text = np.where(z > 0, z.astype(int).astype(str), "")
    rounded = bool(np.any(rows["a"] % 1) or np.any(rows["b"] % 1))
    suffix = " (rounded to the nearest point)" if rounded else ""
    fig = go.Figure(
        go.Heatmap(
            z=np.where(z > 0, z, np.nan),
            x=[f"{p:g}" for p in points],
            y=[f"{p:g}" for p in points],
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            colorbar=dict(title="items"),
            hovertemplate="A %{x} × B %{y}: %{z:.0f} items<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{_label(skill)}: A × B (n = {len(rows)})",
        xaxis=dict(title=f"A: {r.a.spec}{suffix}", type="category"),
        yaxis=dict(title=f"B: {r.b.spec}{suffix}", type="category"),
        height=420,
        margin=dict(l=10, r=10, t=50, b=40),
        font=FONT,
    )
    return fig


def agreement_scatter(r: Agreement, skill: str, jitter: float = 0.15) -> go.Figure:
    """A against B, jittered so that tied integer scores do not hide each other."""
    rows = _rows_of(r, skill)
    if rows.empty:
        return empty_figure("No aligned scores for this skill")
    title = f"{_label(skill)}: A vs B, jittered (n = {len(rows)})"
    if len(rows) > MAX_SCATTER_POINTS:
        rows = rows.sample(MAX_SCATTER_POINTS, random_state=0)
        title += f", {MAX_SCATTER_POINTS:,} drawn at random"
    rng = np.random.default_rng(0)
    lo, hi = _scale(r, skill)
    fig = go.Figure(
        go.Scattergl(
            x=rows["a"] + rng.uniform(-jitter, jitter, len(rows)),
            y=rows["b"] + rng.uniform(-jitter, jitter, len(rows)),
            mode="markers",
            marker=dict(size=5, opacity=0.45, color="#3b6fd8"),
            customdata=rows[["a", "b", "model", "skill", "instance_id"]].to_numpy(),
            hovertemplate="A %{customdata[0]:.2f}, B %{customdata[1]:.2f}<br>"
            "%{customdata[2]} · %{customdata[3]} · instance %{customdata[4]}<extra></extra>",
            name="items",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[lo, hi], y=[lo, hi], mode="lines", line=dict(dash="dot", color="#888"), name="A = B"
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=f"A: {r.a.spec}",
        yaxis_title=f"B: {r.b.spec}",
        height=420,
        margin=dict(l=10, r=10, t=50, b=40),
        showlegend=False,
        font=FONT,
    )
    return fig
