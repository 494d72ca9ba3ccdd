"""Plotly figures of the Skill radar page: the radar (overlaid, or small multiples past 4
models) with per-axis CI whiskers and n, and the paired difference of two models."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from analysis.charts.common import FONT, ci_whiskers, empty_figure
from analysis.core.taxonomy import SKILL_ORDER
from analysis.views.radar import RadarData

COLORS = qualitative.Plotly
MAX_OVERLAID = 4
PER_ROW = 3
_WHISKER_SPREAD = 2.5  # degrees between models' whiskers on one axis, so they do not overlap


def _scale(table: pd.DataFrame) -> tuple[float, float] | None:
    """The one scale every axis shares, or None when the criteria's scales differ."""
    scales = table[["scale_min", "scale_max"]].drop_duplicates()
    return None if len(scales) != 1 else (float(scales.iat[0, 0]), float(scales.iat[0, 1]))


def _r(table: pd.DataFrame, col: str, common: tuple[float, float] | None) -> np.ndarray:
    v = table[col].to_numpy(np.float64)
    if common is not None:
        return v
    lo, hi = table["scale_min"].to_numpy(np.float64), table["scale_max"].to_numpy(np.float64)
    return (v - lo) / (hi - lo)  # criteria on different scales share one radar on 0-1


def _tick_labels(data: RadarData, model: str | None = None) -> list[str]:
    """Axis labels with the n behind each axis: one model's n (small multiples, short labels),
    or the range of n over the models shown."""
    rows = data.table if model is None else data.table[data.table["model"] == model]
    out = []
    for axis in data.axes:
        n = rows.loc[rows["axis"] == axis, "n"]
        lo, hi = (int(n.min()), int(n.max())) if len(n) else (0, 0)
        span = f"{lo}" if lo == hi else f"{lo}–{hi}"
        label = data.labels.get(axis, axis)
        if model is not None:  # small panels: FLASK's short skill ids read better
            label = axis.capitalize() if axis in SKILL_ORDER else label[:14]
        out.append(f"{label}<br>n={span}")
    return out


def _model_traces(
    data: RadarData, model: str, color: str, offset: float, common, show_published: bool
) -> list[go.Scatterpolar]:
    k = len(data.axes)
    theta = np.arange(k) * 360.0 / k
    rows = data.table[data.table["model"] == model].set_index("axis").reindex(list(data.axes))
    rows = rows.assign(scale_min=rows["scale_min"].fillna(0), scale_max=rows["scale_max"].fillna(1))
    mean, lo, hi = (_r(rows, c, common) for c in ("mean", "ci_low", "ci_high"))
    custom = np.column_stack(
        [
            [data.labels.get(a, a) for a in data.axes],
            rows["mean"],
            rows["ci_low"],
            rows["ci_high"],
            rows["n"],
            rows["n_na"],
        ]
    )
    closed = np.r_[np.arange(k), 0]  # close the polygon; a NaN axis leaves a gap, never 0
    traces = [
        go.Scatterpolar(
            r=mean[closed],
            theta=theta[closed],
            mode="lines+markers",
            name=model,
            legendgroup=model,
            line=dict(color=color, width=2),
            marker=dict(size=7),
            customdata=custom[closed],
            hovertemplate="<b>" + model + "</b> · %{customdata[0]}<br>mean %{customdata[1]:.2f}"
            " [%{customdata[2]:.2f}, %{customdata[3]:.2f}]<br>n = %{customdata[4]} scores, "
            "%{customdata[5]} N/A<extra></extra>",
        ),
        go.Scatterpolar(  # 95% CI whiskers: one radial segment per axis
            r=np.column_stack([lo, hi, np.full(k, np.nan)]).ravel(),
            theta=np.repeat(theta + offset, 3),
            mode="lines",
            connectgaps=False,
            line=dict(color=color, width=3),
            opacity=0.55,
            legendgroup=model,
            showlegend=False,
            hoverinfo="skip",
            name=f"{model} 95% CI",
        ),
    ]
    pub = data.published[data.published["model"] == model] if show_published else None
    if pub is not None and len(pub):
        r = pub.set_index("axis")["mean"].reindex(list(data.axes)).to_numpy(np.float64)
        traces.append(
            go.Scatterpolar(
                r=r[closed],
                theta=theta[closed],
                mode="lines",
                name=f"{model} · published",
                legendgroup=model,
                line=dict(color=color, width=1.5, dash="dash"),
                hovertemplate="<b>" + model + " · published</b> (FLASK paper, GPT-4 judge)"
                "<br>%{r:.2f}<extra></extra>",
            )
        )
    return traces


def _polar_layout(data: RadarData, common, model: str | None = None) -> dict:
    k = len(data.axes)
    lo, hi = common if common is not None else (0.0, 1.0)
    between = 90 - 180 / k  # the radial scale sits between the first two axes, not on a label
    return dict(
        angularaxis=dict(
            tickmode="array",
            tickvals=list(np.arange(k) * 360.0 / k),
            ticktext=_tick_labels(data, model),
            direction="clockwise",
            rotation=90,
            tickfont=dict(size=11 if model is None else 9),
        ),
        radialaxis=dict(range=[lo, hi], tickfont=dict(size=9), angle=between, tickangle=between),
    )


def radar_chart(data: RadarData, *, show_published: bool = False) -> go.Figure:
    """One trace per model with CI whiskers; small multiples when more than 4 models."""
    if data.empty:
        return empty_figure("No scores for this selection")
    models = list(dict.fromkeys(data.table["model"]))
    common = _scale(data.table)
    scale_note = "" if common else " (criteria rescaled to 0–1: their scales differ)"
    title = f"Mean score per axis with 95% CI whiskers{scale_note}"
    if show_published and len(data.published):
        title += " · dashed: published (FLASK paper)"
    if len(models) <= MAX_OVERLAID:
        fig = go.Figure()
        for j, m in enumerate(models):
            offset = (j - (len(models) - 1) / 2) * _WHISKER_SPREAD
            for t in _model_traces(
                data, m, COLORS[j % len(COLORS)], offset, common, show_published
            ):
                fig.add_trace(t)
        fig.update_layout(polar=_polar_layout(data, common), height=640)
    else:
        rows = math.ceil(len(models) / PER_ROW)
        fig = make_subplots(
            rows=rows,
            cols=PER_ROW,
            specs=[
                [
                    {"type": "polar"} if r * PER_ROW + c < len(models) else None
                    for c in range(PER_ROW)
                ]
                for r in range(rows)
            ],
            subplot_titles=models,
            horizontal_spacing=0.09,
            vertical_spacing=0.12 / rows,
        )
        for j, m in enumerate(models):
            for t in _model_traces(data, m, COLORS[j % len(COLORS)], 0.0, common, show_published):
                fig.add_trace(t, row=j // PER_ROW + 1, col=j % PER_ROW + 1)
        for j, m in enumerate(models):
            fig.update_layout({f"polar{j + 1 if j else ''}": _polar_layout(data, common, m)})
        fig.update_annotations(yshift=22)
        fig.update_layout(height=460 * rows)
    fig.update_layout(
        title=title,
        font=FONT,
        margin=dict(l=90, r=90, t=90, b=40),
        legend=dict(orientation="h", y=-0.05),
    )
    return fig


def compare_chart(table: pd.DataFrame, a: str, b: str) -> go.Figure:
    """A − B per axis with the paired 95% CI; filled markers: Holm-corrected p < 0.05."""
    if table.empty:
        return empty_figure("No instances scored by both models in this selection")
    t = table.iloc[::-1]
    sig = t["significant"].to_numpy(bool)
    fig = go.Figure(
        go.Scatter(
            x=t["diff"],
            y=t["label"],
            mode="markers",
            marker=dict(
                size=11,
                color=np.where(sig, "#c0392b", "#7f8c8d"),
                symbol=np.where(sig, "circle", "circle-open"),
                line=dict(width=2),
            ),
            error_x=ci_whiskers(t["diff"], t["ci_low"], t["ci_high"], thickness=2),
            customdata=t[["ci_low", "ci_high", "p_holm", "n_shared"]].to_numpy(),
            hovertemplate="<b>%{y}</b><br>difference %{x:.2f} [%{customdata[0]:.2f}, "
            "%{customdata[1]:.2f}]<br>Holm p = %{customdata[2]:.3g}<br>n = %{customdata[3]} "
            "shared instances<extra></extra>",
            name=f"{a} − {b}",
        )
    )
    fig.add_vline(x=0, line=dict(color="#555", dash="dot"))
    fig.update_layout(
        title=f"{a} − {b}: paired difference, 95% CI (filled = significant after Holm)",
        xaxis_title=f"mean({a}) − mean({b}) on shared instances",
        yaxis_title=None,
        height=max(280, 34 * len(t) + 120),
        margin=dict(l=10, r=10, t=50, b=40),
        font=FONT,
    )
    return fig
