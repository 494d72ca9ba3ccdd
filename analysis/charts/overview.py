"""Plotly figures of the Overview page: the leaderboard with CIs and the coverage heatmap."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from analysis.charts.common import ci_whiskers, empty_figure, esc, frame, row_px, wrap
from analysis.core.taxonomy import DOMAINS, SKILLS


def leaderboard_chart(table: pd.DataFrame, group: str) -> go.Figure:
    """Models ranked by the mean of ``group`` with 95% CI whiskers; n in the hover."""
    rows = table[table["group"] == group]
    # Best at the top (plotly draws the first category at the bottom), by the view's exact
    # ranks: tied models in name order, never by a last-bit difference of their float means.
    by = ["rank", "model"] if "rank" in rows.columns else ["mean"]
    rows = rows.sort_values(by, ascending="rank" not in rows.columns, kind="stable")
    if rows.empty:
        return empty_figure("No scores for this selection")
    fig = go.Figure(
        go.Scatter(
            x=rows["mean"],
            y=[esc(m) for m in rows["model"]],
            mode="markers",
            # open marker: the CI rests on fewer than 5 instances (the table's † mark)
            marker=dict(size=11, color="#3b6fd8", symbol=_symbols(rows), line=dict(width=2)),
            error_x=ci_whiskers(rows["mean"], rows["ci_low"], rows["ci_high"], thickness=2),
            customdata=rows[["ci_low", "ci_high", "n", "n_instances"]].to_numpy(),
            text=_rank_notes(rows),
            hovertemplate="<b>%{y}</b><br>mean %{x:.2f} [%{customdata[0]:.2f}, "
            "%{customdata[1]:.2f}]<br>n = %{customdata[2]} scores, %{customdata[3]} "
            "instances%{text}<extra></extra>",
            name=esc(group),
        )
    )
    fig.update_layout(xaxis_title="mean score", yaxis_title=None)
    title = f"{group}: mean score with 95% CI (bootstrap over instances)"
    return frame(fig, title, max(280, 40 * len(rows) + 150))


def _symbols(rows: pd.DataFrame) -> list[str]:
    few = rows.get("few_instances", pd.Series(False, index=rows.index)).fillna(False)
    return ["circle-open" if f else "circle" for f in few]


def _rank_notes(rows: pd.DataFrame) -> list[str]:
    """Hover lines: the rank with its 95% interval, and a word on few instances."""
    out = []
    for _, r in rows.iterrows():
        note = ""
        if pd.notna(r.get("rank")) and pd.notna(r.get("rank_low")):
            note += f"<br>rank {int(r['rank'])} (95% interval {int(r['rank_low'])}–"
            note += f"{int(r['rank_high'])})"
        if r.get("few_instances"):
            note += "<br>CI from fewer than 5 instances"
        out.append(note)
    return out


def coverage_heatmap(cov: pd.DataFrame) -> go.Figure:
    """Instances per skill × domain; empty cells stay empty (never drawn as 0). The counts are
    in the cells, so no colour bar takes width from them; labels are wrapped (full names in the
    hover) so that ten domains still leave a phone's cells room for three digits."""
    if cov.empty:
        return empty_figure("No instances for this selection")
    grid = cov.pivot_table(index="skill", columns="domain", values="instances", aggfunc="sum")
    skills = [s for s in SKILLS if s in grid.index] + sorted(set(grid.index) - set(SKILLS))
    domains = [d for d in DOMAINS if d in grid.columns] + sorted(set(grid.columns) - set(DOMAINS))
    grid = grid.reindex(index=skills, columns=domains)
    # The view's labels (a dataset's own criteria keep theirs); FLASK's for a frame without.
    named = dict(zip(cov["skill"], cov["label"], strict=True)) if "label" in cov else {}
    labels = [named.get(s) or (SKILLS[s].label if s in SKILLS else s) for s in grid.index]
    text = grid.map(lambda v: "" if pd.isna(v) else f"{int(v)}")
    names = [[(esc(label), esc(d)) for d in domains] for label in labels]
    fig = go.Figure(
        go.Heatmap(
            z=grid.to_numpy(dtype=float),
            x=[esc(d) for d in domains],  # one line each: a phone turns them upright, 25 px apart
            y=[wrap(label) for label in labels],
            text=text.to_numpy(),
            texttemplate="%{text}",
            customdata=names,
            colorscale="Blues",
            showscale=False,
            xgap=1,
            ygap=1,
            hovertemplate="%{customdata[0]} × %{customdata[1]}: %{z:.0f} instances<extra></extra>",
        )
    )
    fig.update_layout(yaxis=dict(autorange="reversed"))
    title = "Coverage: instances per skill × domain (an instance counts in each of its domains)"
    return frame(fig, title, 170 + len(labels) * row_px(fig.data[0].y))
