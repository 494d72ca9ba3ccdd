"""Judges page, Leniency and Failures figures: the leniency matrix (judge × skill, judge −
humans on a diverging scale centred at 0, flagged cells outlined), the score distributions of
the judges next to the humans' for one skill, and each judge's failure rates.

Judges and skills sit at integer positions with their (escaped, wrapped) names as tick text:
two names that read alike after wrapping never merge into one row."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from analysis.charts.common import (
    ci_whiskers,
    clip,
    colorbar,
    empty_figure,
    esc,
    frame,
    row_px,
    wrap,
)
from analysis.views.judge_failures import RATES, Failures
from analysis.views.judge_leniency import ALL_SKILLS, HUMANS, Leniency

FLAG_MARK = "⚑"  # after a flagged cell's value
MIN_SPAN = 0.5  # the colour scale covers at least ±0.5 points: small shifts stay pale
NAME_CHARS = 28  # characters of a judge's name on the axis (the full name is in the hover)
RATE_COLOURS = {"na": "#8c8c8c", "failed": "#d62728", "error": "#ff7f0e"}


def _grid(r: Leniency) -> tuple[list[str], list, dict[str, np.ndarray]]:
    """Judges (rows), skills then None for all skills (columns), and each cell field."""
    c = r.cells
    skills = [s for s in r.skills if s in set(c["skill"].dropna())] + [None]
    key = ["\0" if s is None or s != s else s for s in c["skill"]]  # None = all skills
    judges = [j for j in r.judges if j not in r.unshared]
    grids = {}
    for col in ("diff", "ci_low", "ci_high", "n_items", "n_instances", "flagged"):
        wide = c.assign(_k=key).pivot(index="judge", columns="_k", values=col)
        wide = wide.reindex(index=judges, columns=[s or "\0" for s in skills])
        grids[col] = wide.to_numpy(dtype=float if col != "flagged" else object)
    return judges, skills, grids


def _cell(diff: float, flagged: bool) -> str:
    return "" if diff != diff else f"{diff:+.2f}" + (f" {FLAG_MARK}" if flagged else "")


def leniency_matrix(r: Leniency) -> go.Figure:
    """Judge × skill: mean(judge − humans) on shared items, 0 white, lenient red, harsh blue."""
    if r.cells.empty:
        return empty_figure("No item was scored by both an LLM judge and the humans")
    judges, skills, g = _grid(r)
    z = g["diff"]
    flagged = np.array([[bool(v) if v == v and v is not None else False for v in row]
                        for row in g["flagged"]])  # fmt: skip
    text = [[_cell(d, f) for d, f in zip(dr, fr, strict=True)]
            for dr, fr in zip(z, flagged, strict=True)]  # fmt: skip
    names = [r.labels.get(s, s) if s else ALL_SKILLS for s in skills]
    custom = np.dstack([
        np.array([[esc(j)] * len(skills) for j in judges], dtype=object),
        np.array([[esc(n) for n in names]] * len(judges), dtype=object),
        g["ci_low"], g["ci_high"], g["n_items"], g["n_instances"],
        np.where(flagged, "flagged", "not flagged"),
    ])  # fmt: skip
    span = max(MIN_SPAN, float(np.nanmax(np.abs(z), initial=0)))
    xs, ys = np.arange(len(skills)), np.arange(len(judges))
    fig = go.Figure(go.Heatmap(
        z=z, x=xs, y=ys, text=text, texttemplate="%{text}", customdata=custom,
        colorscale="RdBu_r", zmid=0, zmin=-span, zmax=span, xgap=2, ygap=2,
        colorbar=colorbar("judge − humans (points)"),
        hovertemplate="%{customdata[0]} · %{customdata[1]}<br>judge − humans %{z:+.3f} "
        "[%{customdata[2]:+.3f}, %{customdata[3]:+.3f}]<br>n = %{customdata[4]} items, "
        "%{customdata[5]} instances<br>%{customdata[6]}<extra></extra>",
    ))  # fmt: skip
    for y, x in zip(*np.nonzero(flagged), strict=True):  # each flagged cell outlined
        fig.add_shape(type="rect", x0=x - 0.5, x1=x + 0.5, y0=y - 0.5, y1=y + 0.5,
                      line=dict(width=3, color="black"), name="flagged")  # fmt: skip
    ylab = [clip(j, NAME_CHARS, 2) for j in judges]
    fig.update_layout(
        xaxis=dict(tickvals=xs, ticktext=[wrap(n) for n in names], showgrid=False, zeroline=False),
        yaxis=dict(tickvals=ys, ticktext=ylab, autorange="reversed", showgrid=False,
                   zeroline=False),
        plot_bgcolor="white",
    )  # fmt: skip
    title = f"Leniency: judge − humans on the items both scored ({FLAG_MARK}, outlined: flagged)"
    return frame(fig, title, 230 + len(judges) * row_px(ylab, 40), margin=dict(b=70))


def score_distribution(r: Leniency, skill: str) -> go.Figure:
    """Share of each score (and N/A) for one skill: the humans' next to each judge's."""
    d = r.dist[r.dist["skill"] == skill]
    if d.empty:
        return empty_figure("No scores of this skill in the slice")
    values = sorted(d["value"].unique(), key=lambda v: (v == "N/A", float(v) if v != "N/A" else 0))
    fig = go.Figure()
    for scorer, rows in d.groupby("scorer", sort=False):
        rows = rows.set_index("value").reindex(values)
        n = int(rows["n"].max())
        human = scorer == HUMANS
        fig.add_trace(go.Bar(
            x=values, y=(rows["share"].fillna(0) * 100).to_numpy(float),
            name=clip(f"{scorer} (n = {n:,})", 40),
            customdata=np.column_stack([rows["count"].fillna(0).to_numpy(float),
                                        np.full(len(values), n)]),
            marker=dict(color="#333333" if human else None),
            hovertemplate=f"{esc(scorer, template=True)}<br>score %{{x}}: %{{y:.1f}}% "
            "(%{customdata[0]} of %{customdata[1]})<extra></extra>",
        ))  # fmt: skip
    fig.update_layout(barmode="group", xaxis=dict(title="score", type="category"),
                      yaxis=dict(title="share of the scores (%)", rangemode="tozero"))  # fmt: skip
    label = r.labels.get(skill, skill)
    return frame(fig, f"{label}: scores of each judge and of the humans, same items", 420,
                 legend=True, margin=dict(b=40 + 22 * len(fig.data)))  # fmt: skip


def failure_rates(r: Failures, skill: str | None) -> go.Figure:
    """Per judge: N/A, parse-failure and call-failure rate (%) with 95% CIs, for one skill or
    all skills (``None``)."""
    rows = r.rates[r.rates["skill"].isna()] if skill is None else r.rates[r.rates["skill"] == skill]
    if rows.empty:
        return empty_figure("No judgments or scores of an LLM judge for this skill")
    rows = rows.reset_index(drop=True)
    ys = np.arange(len(rows))
    fig = go.Figure()
    for key, name in RATES.items():
        rate, lo, hi = (rows[f"{p}_{key}"].to_numpy(float) * 100 for p in ("rate", "low", "high"))
        fig.add_trace(go.Bar(
            y=ys, x=rate, orientation="h", name=name, marker_color=RATE_COLOURS[key],
            error_x=ci_whiskers(rate, lo, hi, thickness=1.2, width=3),
            customdata=np.column_stack([rows["judge"].map(esc), lo, hi,
                                        rows[f"count_{key}"], rows[f"n_{key}"]]),
            hovertemplate=f"%{{customdata[0]}}<br>{name}: %{{x:.2f}}% [%{{customdata[1]:.2f}}, "
            "%{customdata[2]:.2f}]<br>%{customdata[3]} of %{customdata[4]}<extra></extra>",
        ))  # fmt: skip
    ylab = [clip(j, NAME_CHARS, 2) for j in rows["judge"]]
    fig.update_layout(
        barmode="group",
        xaxis=dict(title="% (95% CI)", rangemode="tozero"),
        yaxis=dict(tickvals=ys, ticktext=ylab, autorange="reversed"),
    )
    label = ALL_SKILLS if skill is None else rows["label"].iloc[0]
    return frame(fig, f"{label}: N/A and failure rates per judge", 200 + 3 * 22 * len(rows),
                 legend=True, margin=dict(b=50))  # fmt: skip
