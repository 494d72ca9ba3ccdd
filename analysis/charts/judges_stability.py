"""Judges page, Stability: Krippendorff's α between a judge's runs per criterion with its 95%
CI, beside the humans' α among themselves (grey) and FLASK's published α of GPT-4 over three
runs (open diamonds); judges flagged unstable are ringed in red. Takes the view's
``Stability``, no queries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.charts.common import ci_whiskers, empty_figure, esc, frame
from analysis.views.agreement import SCOPE_ALL
from analysis.views.judge_stability import LEVELS, UNSTABLE_ALPHA, Stability, scope_keys

COLORS = ["#3b6fd8", "#d8743b", "#2e9e6a", "#9b59b6", "#c0392b", "#16a085", "#7f8c8d"]
HUMAN = "#9aa0ac"
PUBLISHED = "#444444"
SPREAD = 0.5  # width of a criterion's slot that the judges' markers share


def _axis(result: Stability) -> tuple[list[tuple[str, str | None]], list[str]]:
    """The criteria in the table's order (each once), the pooled row last."""
    keys = list(dict.fromkeys(scope_keys(result.table)))
    keys.sort(key=lambda k: k[0] == SCOPE_ALL)  # stable: criteria keep their order
    return keys, [result.label(s) for _, s in keys]


def _positions(rows: pd.DataFrame, keys: list, offset: float) -> np.ndarray:
    at = {k: i for i, k in enumerate(keys)}
    return np.array([at[k] for k in scope_keys(rows)], dtype=float) + offset


def _judge_trace(result, rows, keys, labels, level, judge, color, offset) -> go.Scatter:
    x = _positions(rows, keys, offset)
    names = [labels[int(round(v - offset))] for v in x]
    return go.Scatter(
        x=x,
        y=rows[level],
        mode="markers",
        name=esc(judge),
        marker=dict(color=color, size=9),
        error_y=ci_whiskers(rows[level], rows[f"{level}_low"], rows[f"{level}_high"]),
        hovertext=[esc(n) for n in names],
        customdata=rows[[f"{level}_low", f"{level}_high", "n_items", "n_runs"]].to_numpy(),
        hovertemplate="%{hovertext}: α %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
        "<br>%{customdata[2]} items in %{customdata[3]} runs<extra>"
        + esc(judge, template=True)
        + "</extra>",
    )


def _humans(result: Stability, keys: list, level: str) -> go.Scatter | None:
    h = result.humans
    if h.empty:
        return None
    h = h[h["statistic"] == level]
    h = h[[k in keys for k in scope_keys(h)]]
    if h.empty:
        return None
    return go.Scatter(
        x=_positions(h, keys, -SPREAD / 2 - 0.08),
        y=h["value"],
        mode="markers",
        name="humans' α among themselves (reference)",
        marker=dict(color=HUMAN, size=9, symbol="square"),
        error_y=ci_whiskers(h["value"], h["ci_low"], h["ci_high"], color=HUMAN),
        customdata=h[["ci_low", "ci_high", "n_units"]].to_numpy(),
        hovertemplate="humans: α %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
        "<br>%{customdata[2]} items<extra></extra>",
    )


def _published(result: Stability, keys: list) -> go.Scatter | None:
    p = result.published
    at = {s: i for i, (scope, s) in enumerate(keys) if scope != SCOPE_ALL}
    p = p[p["skill"].isin(list(at))]
    if p.empty:
        return None
    return go.Scatter(
        x=[at[s] + SPREAD / 2 + 0.08 for s in p["skill"]],
        y=p["gpt4_repeat_alpha"],
        mode="markers",
        name="FLASK paper: GPT-4, 3 runs at temperature 1.0",
        marker=dict(color=PUBLISHED, size=10, symbol="diamond-open", line=dict(width=2)),
        hovertemplate="FLASK (published): α %{y:.3f}<extra></extra>",
    )


def _flagged(result: Stability, keys: list, level: str, offsets: dict) -> go.Scatter | None:
    t = result.table[result.table[f"unstable_{level}"].astype(bool)]
    if t.empty:
        return None
    x = np.concatenate([_positions(r, keys, offsets[j]) for j, r in t.groupby("judge")])
    y = np.concatenate([r[level].to_numpy(float) for _, r in t.groupby("judge")])
    return go.Scatter(
        x=x,
        y=y,
        mode="markers",
        name=f"unstable: 95% CI below α {UNSTABLE_ALPHA}",
        marker=dict(color="rgba(0,0,0,0)", size=17, line=dict(color="#c0392b", width=2)),
        hoverinfo="skip",
    )


def stability_chart(result: Stability, level: str = "alpha_ordinal") -> go.Figure:
    """α between each judge's runs per criterion (then all pooled), 95% CI over instances."""
    t = result.table
    if t.empty:
        return empty_figure("No items scored in two or more runs of the same judge yet")
    keys, labels = _axis(result)
    judges = list(dict.fromkeys(t["judge"]))
    step = SPREAD / max(len(judges), 1)
    offsets = {j: -SPREAD / 2 + step * (i + 0.5) for i, j in enumerate(judges)}
    traces = [
        _judge_trace(result, t[t["judge"] == j], keys, labels, level, j,
                     COLORS[i % len(COLORS)], offsets[j])
        for i, j in enumerate(judges)
    ]  # fmt: skip
    traces += [x for x in (_humans(result, keys, level), _published(result, keys)) if x]
    traces += [x for x in (_flagged(result, keys, level, offsets),) if x]
    fig = go.Figure(traces)
    fig.add_hline(y=UNSTABLE_ALPHA, line=dict(color="#c0392b", width=1, dash="dot"))
    fig.update_layout(
        xaxis=dict(tickmode="array", tickvals=list(range(len(labels))),
                   ticktext=[esc(label) for label in labels]),
        yaxis=dict(title=f"Krippendorff's α ({LEVELS[level]})", range=[None, 1.02]),
    )  # fmt: skip
    title = f"Stability: α ({LEVELS[level]}) between a judge's runs, 95% CI over instances"
    return frame(fig, title, 540, legend=True)
