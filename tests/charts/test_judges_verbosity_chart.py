"""The Verbosity figure: one trace per judge and panel, flagged cells as filled diamonds, the
values and CIs of the table, FLASK's figure as context, hostile names escaped."""

from __future__ import annotations

import pandas as pd

from analysis.charts.judges_verbosity import verbosity_figure

EVIL = '<a href="x">j</a> & %{y}'


def _table() -> pd.DataFrame:
    rows = [
        (EVIL, "correctness", 0.5, 0.4, 0.6, 0.4, 0.2, 0.6, 20, 12, True),
        (EVIL, "readability", 0.7, 0.6, 0.8, 0.0, -0.1, 0.1, 20, 12, False),
    ]
    cols = ["judge", "skill", "same_rate", "same_low", "same_high", "shift", "shift_low",
            "shift_high", "n", "n_instances", "flagged"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def test_points_whiskers_flags_and_context():
    fig = verbosity_figure(_table(), flask_same=0.53)
    same, shift, flask = fig.data
    assert list(same.x) == [0.5, 0.7] and list(shift.x) == [0.4, 0.0]
    assert list(shift.error_x.array) == [0.6 - 0.4, 0.1 - 0.0]
    assert list(shift.error_x.arrayminus) == [0.4 - 0.2, 0.0 + 0.1]
    assert list(shift.marker.symbol) == ["diamond", "circle"]
    assert list(same.y) == ["Logical Correctness", "Readability"]
    assert list(flask.x) == [0.53, 0.53] and "53%" in flask.name


def test_names_are_escaped_everywhere():
    fig = verbosity_figure(_table())
    same = fig.data[0]
    assert "<a" not in same.name and "&lt;a" in same.name
    for text in same.hovertext:
        assert "<a " not in text and "&#37;{y}" in text


def test_an_empty_table_draws_a_message():
    fig = verbosity_figure(_table().iloc[0:0])
    assert not fig.data and "No judge has scored both versions" in fig.layout.annotations[0].text
