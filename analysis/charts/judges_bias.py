"""Figures of the Judges page's bias sections: length bias per criterion (judges beside the
humans, FLASK's published figure as a marker), score against length for one scorer, and
self-preference per criterion. Names from the store enter through ``esc`` / ``clip``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.charts.common import ci_whiskers, clip, empty_figure, esc, frame
from analysis.views.judge_length import HUMANS, LengthBias, LengthScatter
from analysis.views.judge_self import REFERENCE_LABELS, SelfPreference

HUMAN_COLOR = "#8a8f98"
PUBLISHED_COLOR = "#111111"
COLORS = ["#3b6fd8", "#e07b39", "#2a9d8f", "#c2477a", "#7a5cc7", "#b59a1f", "#4f9d3a"]
FLAG = "⚑"  # above a flagged bar (and in the tables' flagged column)
NAME_CHARS = 32  # a legend entry's width


def scorer_name(name: str) -> str:
    return "Humans (mean)" if name == HUMANS else name


def length_bars(r: LengthBias, level: str) -> go.Figure:
    """One group per criterion: the humans' correlation (grey), then each judge's, with CIs;
    flagged judges marked above their bar; FLASK's figure as a black diamond."""
    t = r.table[r.table["level"] == level]
    if t.empty:
        return empty_figure("No length correlations for this selection")
    order = {s: i for i, s in enumerate(r.skills)}
    t = t.sort_values("skill", key=lambda s: s.map(order), kind="stable")
    labels = list(dict.fromkeys(t["label"]))
    fig = go.Figure()
    for i, (name, rows) in enumerate(t.groupby("scorer", sort=False)):
        human = name == HUMANS
        fig.add_trace(_corr_bar(rows, name, HUMAN_COLOR if human else COLORS[i % len(COLORS)]))
    pub = t.drop_duplicates("skill")
    if pub["published"].notna().any():
        fig.add_trace(go.Scatter(
            x=[esc(v) for v in pub["label"]], y=pub["published"], mode="markers",
            name="FLASK, Table 5 (model level)",
            marker=dict(symbol="diamond", size=10, color=PUBLISHED_COLOR),
            hovertemplate="%{x}: FLASK r = %{y:.3f}<extra></extra>",
        ))  # fmt: skip
    what = "Pearson" if r.query.method == "pearson" else "Spearman"
    fig.update_layout(
        barmode="group", yaxis_title=f"{what} r (score, length)", yaxis_range=[-1, 1],
        xaxis=dict(categoryorder="array", categoryarray=[esc(v) for v in labels]),
    )  # fmt: skip
    title = f"Score vs length ({level} level), {what}, 95% CI over instances; hatched: flagged"
    return frame(fig, title, 560, legend=True)


def _corr_bar(rows: pd.DataFrame, name: str, color: str) -> go.Bar:
    flagged = rows["flagged"].fillna(False).astype(bool).to_numpy()
    excess = rows["excess"].to_numpy(dtype=float)
    custom = np.column_stack([
        rows[["ci_low", "ci_high", "n", "n_instances"]].to_numpy(dtype=float), excess,
    ])  # fmt: skip
    extra = "" if name == HUMANS else "<br>excess over humans %{customdata[4]:.3f}"
    return go.Bar(
        x=[esc(v) for v in rows["label"]], y=rows["r"], name=clip(scorer_name(name), NAME_CHARS),
        marker_color=color,
        error_y=ci_whiskers(rows["r"], rows["ci_low"], rows["ci_high"]),
        **_flag_marks(flagged),
        customdata=custom,
        hovertemplate="%{x}: r = %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
        "<br>n = %{customdata[2]:.0f} items, %{customdata[3]:.0f} instances" + extra
        + "<extra>" + esc(scorer_name(name), template=True) + "</extra>",
    )  # fmt: skip


def _flag_marks(flagged: np.ndarray) -> dict:
    """A flagged bar is hatched, with the flag inside at its base (above it, the glyph would
    sit on the CI whisker); drawn whole even on a bar too short to hold it."""
    return dict(
        marker_pattern_shape=np.where(flagged, "/", ""), marker_pattern_fillmode="overlay",
        marker_pattern_fgcolor="rgba(255, 255, 255, 0.8)", text=np.where(flagged, FLAG, ""),
        textposition="inside", insidetextanchor="start", constraintext="none", textangle=0,
    )  # fmt: skip


def length_scatter(s: LengthScatter) -> go.Figure:
    """A sample of the scorer's items (jittered scores) and the mean score per length decile
    with CIs, the humans' beside it; length on a log axis."""
    if s.bins.empty:
        return empty_figure("No scored responses with a length for this pick")
    rng = np.random.default_rng(0)  # jitter only separates equal scores; the same every run
    fig = go.Figure(go.Scatter(
        x=s.points["length"], y=s.points["score"] + rng.uniform(-0.18, 0.18, len(s.points)),
        mode="markers", name=f"items (sample of {len(s.points):,})",
        marker=dict(size=5, color=COLORS[0], opacity=0.22),
        hovertemplate="%{x:,.0f} characters<extra></extra>",
    ))  # fmt: skip
    for name, rows in s.bins.groupby("scorer", sort=False):
        color = HUMAN_COLOR if name == HUMANS else COLORS[0]
        fig.add_trace(go.Scatter(
            x=rows["length"], y=rows["mean"], mode="lines+markers",
            name=clip(f"{scorer_name(name)}: mean per decile", NAME_CHARS + 20),
            line=dict(color=color, width=3), marker=dict(size=8, color=color),
            error_y=ci_whiskers(rows["mean"], rows["ci_low"], rows["ci_high"]),
            customdata=rows[["lo", "hi", "n", "n_instances"]].to_numpy(dtype=float),
            hovertemplate="%{customdata[0]:,.0f}–%{customdata[1]:,.0f} characters: mean "
            "%{y:.2f}<br>n = %{customdata[2]:.0f} items, %{customdata[3]:.0f} instances"
            "<extra>" + esc(scorer_name(name), template=True) + "</extra>",
        ))  # fmt: skip
    fig.update_layout(xaxis=dict(type="log", title="response length (characters, log scale)"),
                      yaxis_title="score")  # fmt: skip
    title = f"{scorer_name(s.query.scorer)}: {s.label} score vs length ({s.n_items:,} items)"
    return frame(fig, title, 480, legend=True)


def self_bars(r: SelfPreference, reference: str) -> go.Figure:
    """Per criterion, each judge's self-preference against ``reference`` with its CI, the
    practical threshold as dotted lines, flagged bars marked."""
    t = r.table[r.table["reference"] == reference]
    if t.empty:
        return empty_figure("No judge with a family can be compared here")
    fig = go.Figure()
    for i, (name, rows) in enumerate(t.groupby("judge", sort=False)):
        flagged = rows["flagged"].astype(bool).to_numpy()
        custom = rows[["ci_low", "ci_high", "own_mean", "other_mean", "own_n", "other_n",
                       "own_instances", "other_instances"]].to_numpy(dtype=float)  # fmt: skip
        fig.add_trace(go.Bar(
            x=[esc(v) for v in rows["label"]], y=rows["self_pref"],
            name=clip(f"{name} ({rows['family'].iloc[0]})", NAME_CHARS + 12),
            marker_color=COLORS[i % len(COLORS)],
            error_y=ci_whiskers(rows["self_pref"], rows["ci_low"], rows["ci_high"]),
            **_flag_marks(flagged),
            customdata=custom,
            hovertemplate="%{x}: %{y:+.2f} [%{customdata[0]:.2f}, %{customdata[1]:.2f}]"
            "<br>own family %{customdata[2]:+.2f} (n = %{customdata[4]:.0f} items, "
            "%{customdata[6]:.0f} instances)<br>others %{customdata[3]:+.2f} (n = "
            "%{customdata[5]:.0f} items, %{customdata[7]:.0f} instances)"
            "<extra>" + esc(name, template=True) + "</extra>",
        ))  # fmt: skip
    thresholds = t["threshold"].unique()
    size = "practical size per criterion in the table"
    if len(thresholds) == 1:  # one scale: the practical size as dotted lines
        size = f"dotted: ±{thresholds[0]:.2f} practical size"
        for y in (thresholds[0], -thresholds[0]):
            fig.add_hline(y=y, line=dict(color=HUMAN_COLOR, dash="dot", width=1))
    fig.update_layout(barmode="group", yaxis_title="own family − others (points)")
    title = (f"Self-preference against {REFERENCE_LABELS[reference]}, 95% CI over instances; "
             f"{size}; hatched: flagged")  # fmt: skip
    return frame(fig, title, 540, legend=True)
