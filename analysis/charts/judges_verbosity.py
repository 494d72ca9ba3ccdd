"""The Verbosity section's figure: per skill (rows) and judge (colours), the same-score rate
between original and wordier rewrite (left, FLASK's ~53% as a dashed line) and the mean shift
rewrite − original (right, 0 as a line), each with its 95% CI; flagged cells are filled
diamonds, the others open circles."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analysis.charts.common import ci_whiskers, clip, empty_figure, esc, frame, row_px
from analysis.views.tables import skill_label

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def verbosity_figure(
    table: pd.DataFrame,
    labels: dict[str, str] | None = None,
    *,
    flask_same: float = 0.53,
    title: str = "Scores under a wordier rewrite with the same content (◆ flagged shift)",
) -> go.Figure:
    """``table``: judge_verbosity's statistics (judge, skill, same_rate, same_low, same_high,
    shift, shift_low, shift_high, n, n_instances, flagged)."""
    if table.empty:
        return empty_figure("No judge has scored both versions of this check yet.")
    t = table.assign(label=[str(skill_label(s, labels)) for s in table["skill"]])
    rows = list(dict.fromkeys(t["label"]))
    fig = make_subplots(
        rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
        subplot_titles=("Same score", "Mean shift"),  # short: side by side on a phone
    )  # fmt: skip
    judges = list(dict.fromkeys(t["judge"]))
    for i, judge in enumerate(judges):
        part = t[t["judge"] == judge]
        colour = PALETTE[i % len(PALETTE)]
        name = clip(judge, 40)
        _points(fig, part, "same", 1, name, colour, show=True)
        _points(fig, part, "shift", 2, name, colour, show=False)
    # FLASK's figure as a legend entry (an annotation would collide with the panel's title).
    fig.add_trace(
        go.Scatter(
            x=[flask_same, flask_same], y=[esc(rows[0]), esc(rows[-1])], mode="lines",
            line=dict(dash="dash", color="#777", width=1.5), hoverinfo="skip",
            name=f"FLASK: about {flask_same:.0%} same score",
        ),
        row=1, col=1,
    )  # fmt: skip
    fig.add_vline(x=0, line_color="#999", row=1, col=2)
    # Judges side by side within each skill's row, not on top of each other.
    fig.update_layout(scattermode="group", scattergap=0.4)
    fig.update_xaxes(range=[-0.02, 1.02], tickformat=".0%", title_text="of pairs", row=1, col=1)
    fig.update_xaxes(title_text="rewrite − original", row=1, col=2)
    # The first skill on top, "All skills" last.
    fig.update_yaxes(categoryorder="array", categoryarray=[esc(r) for r in rows[::-1]])
    per_row = max(row_px([esc(r) for r in rows]), 12 * len(judges) + 16)
    height = 150 + per_row * len(rows)
    return frame(fig, title, height, legend=True, margin=dict(b=40 + 22 * (len(judges) + 1)))


def _points(fig: go.Figure, part: pd.DataFrame, stat: str, col: int, name, colour, show):
    value, lo, hi = (
        ("same_rate", "same_low", "same_high") if stat == "same"
        else ("shift", "shift_low", "shift_high")
    )  # fmt: skip
    flagged = part["flagged"].astype(bool).to_numpy()
    hover = [
        f"{esc(j, template=True)}<br>{esc(s, template=True)}<br>{v:.3f} [{a:.3f}, {b:.3f}]"
        f"<br>n = {n:,} pairs, {k:,} instances{'<br><b>flagged</b>' if f else ''}"
        for j, s, v, a, b, n, k, f in zip(
            part["judge"], part["label"], part[value], part[lo], part[hi], part["n"],
            part["n_instances"], flagged, strict=True,
        )
    ]  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=part[value],
            y=[esc(s) for s in part["label"]],
            mode="markers",
            name=name,
            legendgroup=name,
            showlegend=show,
            hovertext=hover,
            hoverinfo="text",
            orientation="h",  # grouped along the skill axis: judges side by side per skill
            offsetgroup=name,
            error_x=ci_whiskers(
                part[value].to_numpy(),
                part[lo].to_numpy(),
                part[hi].to_numpy(),
                color=colour,
                thickness=1.2,
                width=3,
            ),
            marker=dict(
                color=[colour if f else "white" for f in flagged],
                line=dict(color=colour, width=2),
                size=[12 if f else 9 for f in flagged],
                symbol=["diamond" if f else "circle" for f in flagged],
            ),
        ),  # fmt: skip
        row=1,
        col=col,
    )
