"""Shared pieces of every page's figures: the font, CI whiskers and the empty figure."""

from __future__ import annotations

import plotly.graph_objects as go

FONT = dict(family="Inter, system-ui, sans-serif", size=13)


def ci_whiskers(center, lo, hi, **style) -> dict:
    """Asymmetric 95% CI error bars (plotly error_x / error_y) around ``center``."""
    return dict(type="data", symmetric=False, array=hi - center, arrayminus=center - lo, **style)


def empty_figure(message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, font=dict(size=15))
    fig.update_layout(xaxis_visible=False, yaxis_visible=False, height=240, font=FONT)
    return fig
