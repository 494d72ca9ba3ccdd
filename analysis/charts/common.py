"""Shared pieces of every page's figures: the font, the frame that keeps titles, labels and
legends inside a chart at any width (a phone's 358 px to a desktop's 1,200), label wrapping,
CI whiskers, the empty figure and the plotly config the pages pass.

Streamlit draws a chart at its container's width and tells Python nothing about it, and plotly
never wraps text: so labels are wrapped here at word boundaries to widths that fit a phone, axes
grow their margins to fit their labels (automargin), legends and colour bars sit below the plot
in space of their own (container-referenced, so they never overlap tick labels), and the title
starts below the strip where plotly's toolbar appears."""

from __future__ import annotations

import html
import textwrap
from typing import Any

import plotly.graph_objects as go

# Streamlit's own bundled font first (no font is fetched from the network), then the system's.
FONT = dict(family='"Source Sans", "Source Sans 3", system-ui, sans-serif', size=13)
TITLE_SIZE = 15
# Characters per title line: ~40 of the widest fallback font's glyphs fit a 358 px phone chart.
TITLE_CHARS = 40
# Characters per line of a category label (skills, domains): "Understanding" is 13.
LABEL_CHARS = 14
# Plotly's toolbar is an absolutely placed strip 2-28 px from the top, in the top right corner:
# the title starts below it so that the toolbar never covers it. Plotly sets a top-anchored
# title's first baseline-ish line at ``pad.t``; its glyphs rise ~1 em above that.
MODEBAR_BOTTOM = 30
TITLE_GAP = 12  # px between the title's last line and what follows it
# Crowded tick labels are slanted 30°, or turned upright when even that does not part them;
# rising to the right, so that they end at their tick and run into the left margin (which
# grows) rather than past the right edge (where plotly hides a label that does not fit).
TICK_ANGLES = [0, -30, -90]

CONFIG = {
    "displaylogo": False,
    # Zoom in/out and autoscale duplicate the zoom box and reset; fewer buttons, narrower bar.
    "modeBarButtonsToRemove": ["zoomIn2d", "zoomOut2d", "autoScale2d", "lasso2d", "select2d"],
}


def chart_config(name: str) -> dict:
    """The plotly config a page passes to ``st.plotly_chart``: the toolbar's camera saves a
    PNG at twice the screen's resolution as ``finegrain-<name>.png``."""
    return {
        **CONFIG,
        "toImageButtonOptions": {"format": "png", "scale": 2, "filename": f"finegrain-{name}"},
    }


def esc(text: Any, *, template: bool = False) -> str:
    """Untrusted text (a model, judge, criterion, domain or task name from a user's file) as
    plotly text. Plotly reads a subset of HTML in every title, tick label, legend entry and
    hover (links, styles, and an ``onclick`` built from ``<a popup=…>``), so ``<``, ``>`` and
    ``&`` become entities, which it shows as the characters they are. ``template``: the text
    is written into a hover template, where ``%`` is escaped too (``%{…}`` would be filled)."""
    out = html.escape(str(text), quote=False)
    return out.replace("%", "&#37;") if template else out


def _split(text: Any, width: int) -> list[str]:
    """Raw text in lines of at most ``width`` characters, at word boundaries (a longer word
    keeps a line of its own)."""
    lines = textwrap.wrap(str(text), width, break_long_words=False, break_on_hyphens=False)
    return lines or [""]


def wrap(text: Any, width: int = LABEL_CHARS) -> str:
    """Untrusted ``text`` broken at word boundaries into lines of at most ``width``
    characters, each escaped (``esc``), joined with plotly's ``<br>``."""
    return "<br>".join(esc(line) for line in _split(text, width))


def clip(text: Any, width: int, max_lines: int = 1) -> str:
    """Untrusted ``text`` wrapped to ``width`` and cut to ``max_lines`` lines, "…" marking a
    cut (a word longer than ``width`` is cut too), each line escaped: for labels whose room is
    fixed. Cut before escaping, so that no entity is cut in half."""
    out = _split(text, width)
    dropped = len(out) > max_lines
    out = [line if len(line) <= width else line[: width - 1] + "…" for line in out[:max_lines]]
    if dropped and not out[-1].endswith("…"):
        out[-1] = out[-1][: width - 1].rstrip() + "…"
    return "<br>".join(esc(line) for line in out)


def lines(text: str) -> int:
    """How many lines a (wrapped) label takes."""
    return str(text).count("<br>") + 1


def row_px(labels, minimum: int = 28) -> int:
    """Pixels per category row so that the tallest wrapped label fits its row (12 px text)."""
    return max(minimum, 15 * max((lines(x) for x in labels), default=1) + 8)


def text_box(text: str, size: float) -> tuple[float, float]:
    """A generous estimate of a label's width and height in px at font ``size``: for labels
    plotly places without growing the margins (a radar's axis labels), the margins are set
    from it. 0.62 em a character covers the wider fallback fonts (DejaVu Sans)."""
    rows = [html.unescape(r) for r in str(text).split("<br>")]  # "&amp;" shows as "&"
    return max(len(r) for r in rows) * size * 0.62, len(rows) * size * 1.3


def title_px(title: str) -> int:
    """The px above the plot that ``frame`` gives the (wrapped) title and the toolbar's strip."""
    return int(MODEBAR_BOTTOM + lines(wrap(title, TITLE_CHARS)) * TITLE_SIZE * 1.3 + TITLE_GAP)


def frame(
    fig: go.Figure, title: str, height: int, *, legend: bool = False, margin: dict | None = None
) -> go.Figure:
    """The shared frame: the title wrapped below the toolbar's strip, margins that grow with
    the labels (``margin`` sets their floor: room for labels plotly does not measure, as a
    radar's; its ``t`` is the room between the title and the plot), the legend (when shown) in
    a row of its own under everything else.

    The title's room is set here, not by plotly's title automargin, which moves a wrapped
    title's lines up out of a top-anchored title's place."""
    text = wrap(title, TITLE_CHARS)
    room = dict(l=8, r=8, t=8, b=8) | (margin or {})
    room["t"] += title_px(title)
    fig.update_layout(
        title=dict(
            text=text,
            font=dict(size=TITLE_SIZE),
            x=0,
            xanchor="left",
            xref="container",
            y=1,
            yanchor="top",
            yref="container",
            pad=dict(t=MODEBAR_BOTTOM + TITLE_SIZE + 1, l=4),
            automargin=False,
        ),
        height=int(height),
        font=FONT,
        margin=room | dict(autoexpand=True),
        showlegend=legend,
        legend=dict(
            orientation="h",
            x=0,
            xanchor="left",
            xref="container",
            y=0,
            yanchor="bottom",
            yref="container",
            font=dict(size=12),
        ),
    )
    if any(hasattr(t, "xaxis") for t in fig.data):  # cartesian (a polar figure has no axes)
        fig.update_xaxes(automargin=True, autotickangles=TICK_ANGLES)
        fig.update_yaxes(automargin=True)
    return fig


def colorbar(title: str) -> dict:
    """A horizontal colour bar in a row of its own under the plot (a vertical one would take a
    fifth of a phone's width from the cells)."""
    return dict(
        title=dict(text=title, side="top"),
        orientation="h",
        x=0,  # the plot's left edge: the end's tick label stays inside the chart
        xanchor="left",
        xref="paper",
        y=0,
        yanchor="bottom",
        yref="container",
        len=0.5,
        thickness=10,
        ypad=4,
    )


def ci_whiskers(center, lo, hi, **style) -> dict:
    """Asymmetric 95% CI error bars (plotly error_x / error_y) around ``center``."""
    return dict(type="data", symmetric=False, array=hi - center, arrayminus=center - lo, **style)


def empty_figure(message: str) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=wrap(message, TITLE_CHARS), showarrow=False, font=dict(size=15))
    fig.update_layout(xaxis_visible=False, yaxis_visible=False, height=240, font=FONT)
    return fig
