"""Plotly figures of the Skill radar page: the radar (overlaid, or small multiples past 4
models) with per-axis CI whiskers and n, and the paired difference of two models."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from analysis.charts.common import (
    TITLE_CHARS,
    ci_whiskers,
    clip,
    empty_figure,
    esc,
    frame,
    row_px,
    text_box,
    title_px,
    wrap,
)
from analysis.views.radar import RadarData

COLORS = qualitative.Plotly
MAX_OVERLAID = 4
# Small multiples two a row: three would leave a phone's radars no room between their labels.
PER_ROW = 2
_WHISKER_SPREAD = 2.5  # degrees between models' whiskers on one axis, so they do not overlap
LABEL_SIZE, SMALL_LABEL_SIZE = 11, 9  # px, the axis labels of the overlaid and small radars
LABEL_PAD = 14  # px between the circle and its labels (plotly's tick length and gap)
PANEL_PX = 220  # the height of one small multiple's row (a desktop's radar is ~220 px wide)
# The comparison is drawn inside a section (an expander), ~34 px narrower than the page on a
# phone; its axis title is centred under the plot, so it wraps at 9/10 of a title line.
SECTION_TITLE_CHARS = TITLE_CHARS * 9 // 10
# Small multiples name FLASK's skills in at most 8 letters (the full name is in the hover).
SHORT = {
    "robustness": "Robust.", "correctness": "Correct.", "efficiency": "Effic.",
    "factuality": "Factual.", "commonsense": "Common.", "comprehension": "Compreh.",
    "insightfulness": "Insight.", "completeness": "Complete", "metacognition": "Metacog.",
    "readability": "Read.", "conciseness": "Concise", "harmlessness": "Harmless",
}  # fmt: skip


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


def _name(axis: str, label: str, k: int, small: bool) -> str:
    """An axis's name on the radar; the full label is in the hover and the table.

    The room is a phone's: ~85 px from the centre to the labels on the overlaid radar, ~40 on
    a small one. Labels next to each other on one side stand 0.37 of that apart (12 axes, at
    30° and 60°), so past 8 axes a name takes one line (FLASK's short skill name), else two;
    a small radar's names are abbreviations of one line."""
    if small:
        return SHORT.get(axis) or clip(label, 8)
    if k > 8:
        return axis.capitalize() if axis in SHORT else clip(label, 14)
    return clip(label, 14, max_lines=2)


def _tick_labels(data: RadarData, model: str | None = None) -> list[str]:
    """Axis names with the n behind each axis (the range of n over the models shown); a small
    multiple's names only (its model's n is in the hover and the table)."""
    out = []
    for axis in data.axes:
        name = _name(axis, data.labels.get(axis, axis), len(data.axes), model is not None)
        if model is not None:
            out.append(name)
            continue
        n = data.table.loc[data.table["axis"] == axis, "n"]
        lo, hi = (int(n.min()), int(n.max())) if len(n) else (0, 0)
        out.append(f"{name}<br>n={lo}" if lo == hi else f"{name}<br>n={lo}–{hi}")
    return out


def _label_room(ticks: list[str], size: float) -> dict[str, int]:
    """Px each side of the circle needs for its labels. Plotly sets polar labels outside the
    circle without growing the margins, and the chart's width is unknown here, so every label
    counts at its full size on the side it leans to: a label on the right (clockwise from the
    top) needs its width there, one near the top its height above."""
    room = dict(l=0.0, r=0.0, t=0.0, b=0.0)
    for i, text in enumerate(ticks):
        w, h = text_box(text, size)
        angle = math.radians(i * 360 / len(ticks))
        x, y = math.sin(angle), math.cos(angle)
        for side, lean, extent in (("r", x, w), ("l", -x, w), ("t", y, h), ("b", -y, h)):
            share = 1.0 if lean > 0.05 else (0.5 if lean > -0.05 else 0.0)  # centred: half
            room[side] = max(room[side], share * extent)
    return {side: int(v + LABEL_PAD) for side, v in room.items()}


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
            [esc(data.labels.get(a, a)) for a in data.axes],
            rows["mean"],
            rows["ci_low"],
            rows["ci_high"],
            rows["n"],
            rows["n_na"],
        ]
    )
    who = esc(model, template=True)  # the model's name in the hover templates
    closed = np.r_[np.arange(k), 0]  # close the polygon; a NaN axis leaves a gap, never 0
    traces = [
        go.Scatterpolar(
            r=mean[closed],
            theta=theta[closed],
            mode="lines+markers",
            name=esc(model),
            legendgroup=model,
            line=dict(color=color, width=2),
            marker=dict(size=7),
            customdata=custom[closed],
            hovertemplate=f"<b>{who}</b> · %{{customdata[0]}}<br>mean %{{customdata[1]:.2f}}"
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
            name=esc(f"{model} 95% CI"),
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
                name=esc(f"{model} · published"),
                legendgroup=model,
                line=dict(color=color, width=1.5, dash="dash"),
                hovertemplate=f"<b>{who} · published</b> (FLASK paper, GPT-4 judge)"
                "<br>%{r:.2f}<extra></extra>",
            )
        )
    return traces


def _polar_layout(data: RadarData, common, model: str | None = None) -> dict:
    k = len(data.axes)
    lo, hi = common if common is not None else (0.0, 1.0)
    between = 90 - 180 / k  # the radial scale sits between the first two axes, not on a label
    # A small radar (~40 px radius on a phone) has room for two ticks, both inside the circle:
    # a tick at the rim would touch the axes' labels.
    inner = [lo + (hi - lo) * f for f in (0.25, 0.75)]
    ticks = dict(nticks=5) if model is None else dict(tickvals=inner)
    return dict(
        angularaxis=dict(
            tickmode="array",
            tickvals=list(np.arange(k) * 360.0 / k),
            ticktext=_tick_labels(data, model),
            direction="clockwise",
            rotation=90,
            tickfont=dict(size=LABEL_SIZE if model is None else SMALL_LABEL_SIZE),
        ),
        radialaxis=dict(
            range=[lo, hi],
            **ticks,
            tickformat=".3~g",
            tickfont=dict(size=9),
            angle=between,
            tickangle=between,
        ),
    )


def _title(data: RadarData, common, show_published: bool) -> str:
    scale_note = "" if common else " (criteria rescaled to 0–1: their scales differ)"
    title = f"Mean score per axis with 95% CI whiskers{scale_note}"
    if show_published and len(data.published):
        title += " · dashed: published (FLASK paper)"
    return title


def radar_chart(data: RadarData, *, show_published: bool = False) -> go.Figure:
    """One trace per model with CI whiskers; small multiples when more than 4 models."""
    if data.empty:
        return empty_figure("No scores for this selection")
    models = list(dict.fromkeys(data.table["model"]))
    common = _scale(data.table)
    title = _title(data, common, show_published)
    if len(models) > MAX_OVERLAID:
        return _small_multiples(data, models, common, show_published, title)
    fig = go.Figure()
    for j, m in enumerate(models):
        offset = (j - (len(models) - 1) / 2) * _WHISKER_SPREAD
        for t in _model_traces(data, m, COLORS[j % len(COLORS)], offset, common, show_published):
            fig.add_trace(t)
    polar = _polar_layout(data, common)
    room = _label_room(polar["angularaxis"]["ticktext"], LABEL_SIZE)
    fig.update_layout(polar=polar)
    # The legend's rows are counted into the bottom margin, below the labels' room: plotly adds
    # a legend's own room to what axes push, never to a margin set here. A phone fits ~2 a row.
    legend_px = 8 + 30 * math.ceil(sum(1 for t in fig.data if t.showlegend is not False) / 2)
    room["b"] += legend_px
    # a phone's column leaves the circle ~170 px, a desktop's ~300: this height suits both
    return frame(fig, title, 330 + room["t"] + room["b"], legend=True, margin=room)


def _small_multiples(
    data: RadarData, models: list[str], common, show_published: bool, title: str
) -> go.Figure:
    """One small radar per model, two a row, each named above its top label. The gaps between
    radars are the labels' room: across, a fraction of the unknown width that leaves a phone's
    labels apart; down, exact pixels (the height is set here)."""
    rows = math.ceil(len(models) / PER_ROW)
    ticks = {m: _polar_layout(data, common, m) for m in models}
    rooms = [_label_room(ticks[m]["angularaxis"]["ticktext"], SMALL_LABEL_SIZE) for m in models]
    room = {side: max(r[side] for r in rooms) for side in "lrtb"}
    name_px = 22  # a subplot title's line above the top label
    gap = room["b"] + room["t"] + name_px
    plot_px = rows * PANEL_PX + (rows - 1) * gap
    fig = make_subplots(
        rows=rows,
        cols=PER_ROW,
        specs=[
            [{"type": "polar"} if r * PER_ROW + c < len(models) else None for c in range(PER_ROW)]
            for r in range(rows)
        ],
        subplot_titles=[esc(m) for m in models],
        horizontal_spacing=0.36,
        vertical_spacing=gap / plot_px,
    )
    for j, m in enumerate(models):
        for t in _model_traces(data, m, COLORS[j % len(COLORS)], 0.0, common, show_published):
            fig.add_trace(t, row=j // PER_ROW + 1, col=j % PER_ROW + 1)
        fig.update_layout({f"polar{j + 1 if j else ''}": ticks[m]})
    fig.update_annotations(yshift=room["t"], font=dict(size=13))
    margin = dict(l=room["l"], r=room["r"], t=room["t"] + name_px, b=room["b"])
    height = plot_px + title_px(title) + margin["t"] + margin["b"]  # the plot area: plot_px
    return frame(fig, title, height, margin=margin)


def _test_line(row: pd.Series) -> str:
    """The hover's line on the test: Holm p and which test, or why there is none."""
    if pd.isna(row["p_holm"]):
        return row.get("note") or "no test"
    return f"Holm p = {row['p_holm']:.3g} ({row.get('test', 'paired bootstrap')})"


def compare_chart(table: pd.DataFrame, a: str, b: str) -> go.Figure:
    """A − B per axis with the paired 95% CI; filled markers: Holm-corrected p < 0.05."""
    if table.empty:
        return empty_figure("No instances scored by both models in this selection")
    t = table.iloc[::-1]
    sig = t["significant"].to_numpy(bool)
    few = t.get("few_instances", pd.Series(False, index=t.index)).to_numpy(bool)
    fig = go.Figure(
        go.Scatter(
            x=t["diff"],
            y=[wrap(label) for label in t["label"]],
            mode="markers",
            marker=dict(
                size=11,
                color=np.where(sig, "#c0392b", "#7f8c8d"),
                # crossed: the CI rests on fewer than 5 shared instances (the table's † mark)
                symbol=np.where(sig, "circle", np.where(few, "circle-x-open", "circle-open")),
                line=dict(width=2),
            ),
            error_x=ci_whiskers(t["diff"], t["ci_low"], t["ci_high"], thickness=2),
            customdata=t[["ci_low", "ci_high", "p_holm", "n_shared"]].to_numpy(),
            text=[_test_line(r) for _, r in t.iterrows()],
            hovertemplate="<b>%{y}</b><br>difference %{x:.2f} [%{customdata[0]:.2f}, "
            "%{customdata[1]:.2f}]<br>%{text}<br>n = %{customdata[3]} "
            "shared instances<extra></extra>",
            name=esc(f"{a} − {b}"),
        )
    )
    fig.add_vline(x=0, line=dict(color="#555", dash="dot"))
    fig.update_layout(
        xaxis_title=wrap(f"mean({a}) − mean({b}) on shared instances", SECTION_TITLE_CHARS),
        yaxis_title=None,
    )
    title = f"{a} − {b}: paired difference, 95% CI (filled = significant after Holm)"
    return frame(fig, title, max(300, len(t) * row_px(fig.data[0].y, 34) + 170))
