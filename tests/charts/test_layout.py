"""The figures' layout rules, checked on the figure objects (the browser test measures what
chromium then draws): wrapped titles and labels, the title's room under the toolbar, legends and
colour bars in rows of their own, a radar's label room, heatmap cell text short enough for a
phone. Expected values are worked out by hand here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.charts import breakdowns, common, overview, radar
from analysis.core.taxonomy import SKILL_ORDER, SKILLS
from analysis.views.radar import RadarData


def _lines(text: str) -> list[str]:
    return str(text).split("<br>")


def test_wrap_breaks_at_word_boundaries_only():
    assert common.wrap("Commonsense Understanding") == "Commonsense<br>Understanding"
    assert common.wrap("Logical Robustness", 20) == "Logical Robustness"  # fits: one line
    assert common.wrap("a bb ccc dddd", 6) == "a bb<br>ccc<br>dddd"
    # a word longer than the width keeps a line of its own, never cut
    assert common.wrap("Insightfulness matters", 5) == "Insightfulness<br>matters"
    # the text is a name's, never markup: a "<br>" in it is shown, not obeyed (test_untrusted)
    assert common.wrap("x<br>y z", 10) == "x&lt;br&gt;y z"


def test_clip_cuts_to_lines_and_marks_the_cut():
    text = "Adherence to the requested output format"
    assert common.clip(text, 14, max_lines=2) == "Adherence to<br>the requested…"
    assert common.clip(text, 8) == "Adheren…"  # 7 characters and the mark: 8
    assert common.clip("Factuality", 14) == "Factuality"  # nothing cut, no mark
    assert common.clip("Supercalifragilistic word", 14, 2) == "Supercalifrag…<br>word"


def test_text_box_by_hand():
    w, h = common.text_box("abcd<br>ab", 10)  # 4 characters wide, 2 lines
    assert w == pytest.approx(4 * 10 * 0.62) and h == pytest.approx(2 * 10 * 1.3)


def test_chart_config_keeps_png_export():
    cfg = common.chart_config("radar")
    png = {"format": "png", "scale": 2, "filename": "finegrain-radar"}
    assert cfg["toImageButtonOptions"] == png
    assert cfg["displaylogo"] is False and "zoomIn2d" in cfg["modeBarButtonsToRemove"]


# ----------------------------------------------------------------------- the frame


def _board(n_models: int = 3) -> pd.DataFrame:
    models = [f"model_{i}" for i in range(n_models)]
    return pd.DataFrame(
        {"group": "Overall", "model": models, "mean": np.linspace(3, 4, n_models),
         "ci_low": np.linspace(2.8, 3.8, n_models), "ci_high": np.linspace(3.2, 4.2, n_models),
         "n": 30, "n_instances": 10}
    )  # fmt: skip


def test_frame_puts_the_wrapped_title_below_the_toolbar():
    fig = overview.leaderboard_chart(_board(), "Overall")
    title = fig.layout.title
    # "Overall: mean score with 95% CI (bootstrap over instances)": 58 characters, 2 lines
    assert _lines(title.text) == ["Overall: mean score with 95% CI", "(bootstrap over instances)"]
    assert title.yref == "container" and title.yanchor == "top" and title.y == 1
    assert title.pad.t == common.MODEBAR_BOTTOM + common.TITLE_SIZE + 1
    # the top margin: toolbar strip 30 + 2 lines × 15 px × 1.3 + gap 12 + the frame's 8
    assert fig.layout.margin.t == int(30 + 2 * 15 * 1.3 + 12 + 8)
    assert fig.layout.xaxis.automargin and fig.layout.yaxis.automargin
    assert list(fig.layout.xaxis.autotickangles) == [0, -30, -90]


def test_legend_and_colour_bar_sit_in_rows_below_the_plot():
    fig = radar.radar_chart(_radar_data(SKILL_ORDER, 3))
    legend = fig.layout.legend
    assert fig.layout.showlegend and legend.orientation == "h"
    assert (legend.yref, legend.y, legend.yanchor) == ("container", 0, "bottom")
    table = _cells(["Math", "Coding"])
    bar = breakdowns.domain_heatmap(table, "A").data[0].colorbar
    assert bar.orientation == "h" and (bar.yref, bar.y, bar.yanchor) == ("container", 0, "bottom")


def test_a_polar_figure_gets_no_cartesian_axes():
    fig = radar.radar_chart(_radar_data(SKILL_ORDER, 2))
    assert fig.layout.xaxis.automargin is None and fig.layout.yaxis.automargin is None


# ----------------------------------------------------------------------- the radar


def _radar_data(axes, n_models: int, labels: dict | None = None) -> RadarData:
    rows = []
    for j in range(n_models):
        for k, axis in enumerate(axes):
            rows.append((f"m{j}", axis, 3 + 0.1 * k, 2.8, 3.4, 40 + j, 40, 0, 1.0, 5.0))
    cols = ["model", "axis", "mean", "ci_low", "ci_high", "n", "n_instances", "n_na",
            "scale_min", "scale_max"]  # fmt: skip
    table = pd.DataFrame(rows, columns=cols)
    labels = labels or {a: SKILLS[a].label for a in axes}
    return RadarData(table.assign(label=table["axis"].map(labels)), tuple(axes), labels)


def test_twelve_skills_take_one_line_names_and_the_n():
    fig = radar.radar_chart(_radar_data(SKILL_ORDER, 2))
    ticks = list(fig.layout.polar.angularaxis.ticktext)
    assert ticks[4] == "Commonsense<br>n=40–41"  # the short name; the full one is in the hover
    assert all(len(_lines(t)) == 2 for t in ticks)
    hover = fig.data[0].customdata[4][0]
    assert hover == "Commonsense Understanding"


def test_few_long_criteria_take_two_lines_at_most():
    names = ["Adherence to the requested output format", "Faithfulness to the sources",
             "Clarity", "Absence of unsafe or harmful instructions", "Tone"]  # fmt: skip
    axes = [f"c{i}" for i in range(len(names))]
    fig = radar.radar_chart(_radar_data(axes, 1, dict(zip(axes, names, strict=True))))
    ticks = list(fig.layout.polar.angularaxis.ticktext)
    assert ticks[0] == "Adherence to<br>the requested…<br>n=40"
    assert ticks[2] == "Clarity<br>n=40"
    assert all(len(line) <= 14 for t in ticks for line in _lines(t)[:-1])


def test_label_room_by_hand():
    """Four labels at 0°, 90°, 180°, 270° (clockwise from the top), 10 px font."""
    ticks = ["top", "right side", "bottom<br>two", "l"]
    room = radar._label_room(ticks, 10)
    w = {t: max(len(x) for x in _lines(t)) * 10 * 0.62 for t in ticks}
    h = {t: len(_lines(t)) * 10 * 1.3 for t in ticks}
    pad = radar.LABEL_PAD
    # the top and bottom labels are centred: half their width on each side
    assert room["r"] == int(max(w["right side"], w["top"] / 2, w["bottom<br>two"] / 2) + pad)
    assert room["l"] == int(max(w["l"], w["top"] / 2, w["bottom<br>two"] / 2) + pad)
    assert room["t"] == int(max(h["top"], h["right side"] / 2, h["l"] / 2) + pad)
    assert room["b"] == int(max(h["bottom<br>two"], h["right side"] / 2, h["l"] / 2) + pad)


def test_small_multiples_two_a_row_with_abbreviations():
    fig = radar.radar_chart(_radar_data(SKILL_ORDER, 5))
    polars = [k for k in fig.layout if k.startswith("polar")]
    assert len(polars) == 5
    xs = sorted({tuple(fig.layout[p].domain.x) for p in polars})
    assert len(xs) == 2  # two columns
    ticks = list(fig.layout.polar2.angularaxis.ticktext)
    assert ticks[SKILL_ORDER.index("commonsense")] == "Common."
    assert all(len(t) <= 9 and "<br>" not in t for t in ticks)
    assert list(fig.layout.polar.radialaxis.tickvals) == [2.0, 4.0]  # inside the rim
    assert not fig.layout.showlegend  # each radar is named above it
    gap = fig.layout.polar.domain.y[0] - fig.layout.polar3.domain.y[1]  # rows 1 and 2
    px = gap * (fig.layout.height - fig.layout.margin.t - fig.layout.margin.b)
    room = radar._label_room(ticks, radar.SMALL_LABEL_SIZE)
    assert px == pytest.approx(room["b"] + room["t"] + 22)  # labels + the name, exactly


# ----------------------------------------------------------------------- heatmaps


def _cells(domains: list[str], mean: float = 3.456, n: int = 120) -> pd.DataFrame:
    rows = [("A", s, d, mean, mean - 0.2, mean + 0.2, n, 0)
            for s in ("commonsense", "correctness") for d in domains]  # fmt: skip
    return pd.DataFrame(
        rows, columns=["model", "skill", "domain", "mean", "ci_low", "ci_high", "n", "n_na"]
    )


def test_cell_text_is_three_characters_a_line():
    fig = breakdowns.domain_heatmap(_cells(["Math", "Coding"]), "A")
    assert fig.data[0].text[0][0] == "3.5<br>120"
    # FLASK's order (correctness first), wrapped; the hover has the full names
    assert list(fig.data[0].y) == ["Logical<br>Correctness", "Commonsense<br>Understanding"]
    assert fig.data[0].customdata[1][0][0] == "Commonsense Understanding"
    big = breakdowns.domain_heatmap(_cells(["Math"], n=12_345), "A")
    assert big.data[0].text[0][0] == "3.5<br>12k"
    proportion = breakdowns.domain_heatmap(_cells(["Math"], mean=0.734), "A")
    assert proportion.data[0].text[0][0] == "0.73<br>120"  # a 0-1 scale keeps 2 decimals


@pytest.mark.parametrize(
    "n, text",
    [(0, "0"), (999, "999"), (1000, "1k"), (1499, "1k"), (1500, "2k"), (99_499, "99k"),
     (99_500, ".1M"), (949_999, ".9M"), (950_000, "1M"), (12_345_678, "12M")],
)  # fmt: skip
def test_counts_in_three_characters(n, text):
    assert breakdowns._count(n) == text
    assert len(text) <= 3


def test_coverage_has_no_colour_bar_and_one_line_domains():
    cov = pd.DataFrame(
        {"skill": ["commonsense", "factuality"], "domain": ["Natural Science", "Math"],
         "instances": [12, 7]}
    )  # fmt: skip
    fig = overview.coverage_heatmap(cov)
    assert fig.data[0].showscale is False  # the counts are in the cells
    assert list(fig.data[0].x) == ["Natural Science", "Math"]  # FLASK's order, one line each
    # two-line labels get rows of 15 px a line + 8
    assert common.row_px(fig.data[0].y) == 2 * 15 + 8 == 38
    assert fig.layout.height == 170 + 2 * 38


def test_row_px_never_below_the_minimum():
    assert common.row_px(["a", "b"]) == 28
    assert common.row_px(["a<br>b<br>c"], 40) == 53
    assert math.isclose(common.row_px([]), 28)
