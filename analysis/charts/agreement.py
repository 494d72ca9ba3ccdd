"""Figures of the Human-vs-judge page: agreement bars with CIs, the fair human ceiling (a
human and the judge against the same mean of the other humans), the confusion heatmap and the
jittered scatter. Each takes an ``Agreement`` result, no queries. A ``skill`` of None means all
criteria (the pooled row), so a criterion may have any name, ``overall`` included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.charts.common import TITLE_CHARS, ci_whiskers, empty_figure, esc, frame, wrap
from analysis.stats.agreement import LABELS
from analysis.views.agreement import ALL_LABEL, SCOPE_CRITERION, Agreement

MAX_SCATTER_POINTS = 20_000  # beyond this the browser slows down; a fixed-seed sample is drawn


def _ticks(r: Agreement, rows: pd.DataFrame) -> tuple[list[int], list[str]]:
    """Bar positions and labels (the dataset's, from the view): positions, not names, so that a
    criterion whose label equals the all-criteria label still gets its own bar."""
    labels = [
        r.label(s) if scope == SCOPE_CRITERION else ALL_LABEL
        for scope, s in zip(rows["scope"], rows["skill"], strict=True)
    ]
    return list(range(len(labels))), labels


def _bar(r: Agreement, rows: pd.DataFrame, name: str, color: str) -> go.Bar:
    x, labels = _ticks(r, rows)
    return go.Bar(
        x=x,
        y=rows["value"],
        name=esc(name),
        marker_color=color,
        error_y=ci_whiskers(rows["value"], rows["ci_low"], rows["ci_high"]),
        hovertext=[esc(label) for label in labels],
        customdata=rows[["ci_low", "ci_high", "n"]].to_numpy(),
        hovertemplate="%{hovertext}: %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
        "<br>n = %{customdata[2]}<extra>" + esc(name, template=True) + "</extra>",
    )


def _category_axis(r: Agreement, rows: pd.DataFrame) -> dict:
    x, labels = _ticks(r, rows)
    # One line each: plotly slants them, or turns them upright, when they do not fit across (a
    # wrapped label on its side is two lines wide: 13 of them do not fit a phone's width).
    return dict(tickmode="array", tickvals=x, ticktext=[esc(label) for label in labels])


def agreement_bars(r: Agreement, statistic: str) -> go.Figure:
    """One bar per criterion (then all criteria pooled) for A vs B. The human ceiling has its
    own figure (``ceiling_bars``): set beside A vs the mean of all humans it would not be a
    like-for-like comparison."""
    rows = r.stats[r.stats["statistic"] == statistic]
    if rows.empty:
        return empty_figure("No aligned scores for this selection")
    level = rows["level"].iloc[0]
    fig = go.Figure(_bar(r, rows, f"{r.a.spec} vs {r.b.spec}", "#3b6fd8"))
    fig.update_layout(barmode="group", xaxis=_category_axis(r, rows), yaxis_title=LABELS[statistic])
    title = f"{LABELS[statistic]} per skill ({level}), 95% CI over instances"
    return frame(fig, title, 520, legend=True)  # the legend in a row below the skill names


def ceiling_bars(r: Agreement, statistic: str) -> go.Figure:
    """Per criterion (then all criteria pooled): one human against the mean of the other humans
    (the human ceiling) beside the judge against that same mean on the same items, each with
    its 95% CI. Pooled over items, whatever the page's correlation level."""
    c = r.ceiling
    rows = c[c["statistic"] == statistic] if not c.empty else c
    human = rows[rows["figure"] == "human_ceiling"] if not rows.empty else rows
    if human.empty:
        return empty_figure("No items scored by the judge and two or more humans")
    judge = rows[rows["figure"] == "judge_same_reference"]
    fig = go.Figure(
        [
            _bar(r, human, "one human vs the other humans (ceiling)", "#9aa0ac"),
            _bar(r, judge, f"{r.a.spec} vs the same humans", "#3b6fd8"),
        ]
    )
    axis = _category_axis(r, human)
    fig.update_layout(barmode="group", xaxis=axis, yaxis_title=LABELS[statistic])
    title = f"{LABELS[statistic]} against the mean of the other humans, same items, 95% CI"
    return frame(fig, title, 540, legend=True)  # the legend in a row below the skill names


def _rows_of(r: Agreement, skill: str | None) -> pd.DataFrame:
    return r.pairs if skill is None else r.pairs[r.pairs["skill"] == skill]


def _scale(r: Agreement, skill: str | None) -> tuple[float, float]:
    scales = list(r.scales.values()) if skill is None else [r.scales.get(skill, (1, 5))]
    return min(s[0] for s in scales), max(s[1] for s in scales)


def confusion_heatmap(r: Agreement, skill: str | None) -> go.Figure:
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
            showscale=False,  # the counts are in the cells
            hovertemplate="A %{x} × B %{y}: %{z:.0f} items<extra></extra>",
        )
    )
    fig.update_layout(
        xaxis=dict(title=wrap(f"A: {r.a.spec}{suffix}", TITLE_CHARS), type="category"),
        yaxis=dict(title=wrap(f"B: {r.b.spec}{suffix}", TITLE_CHARS), type="category"),
    )
    return frame(fig, f"{r.label(skill)}: A × B (n = {len(rows)})", 440)


def _hover_items(r: Agreement, rows: pd.DataFrame) -> np.ndarray:
    """A, B, then model, criterion (its label) and instance as escaped text, per point."""
    names = [
        (esc(m), esc(r.label(s)), esc(i))
        for m, s, i in zip(rows["model"], rows["skill"], rows["instance_id"], strict=True)
    ]
    return np.column_stack([rows["a"].to_numpy(object), rows["b"].to_numpy(object),
                            np.array(names, dtype=object).reshape(len(rows), 3)])  # fmt: skip


def agreement_scatter(r: Agreement, skill: str | None, jitter: float = 0.15) -> go.Figure:
    """A against B, jittered so that tied integer scores do not hide each other."""
    rows = _rows_of(r, skill)
    if rows.empty:
        return empty_figure("No aligned scores for this skill")
    title = f"{r.label(skill)}: A vs B, jittered (n = {len(rows)})"
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
            customdata=_hover_items(r, rows),
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
        xaxis_title=wrap(f"A: {r.a.spec}", TITLE_CHARS),
        yaxis_title=wrap(f"B: {r.b.spec}", TITLE_CHARS),
    )
    return frame(fig, title, 440)
