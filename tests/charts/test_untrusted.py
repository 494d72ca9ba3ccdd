"""Names from a user's files (models, judges, criteria, domains) reach every figure as text:
plotly reads a subset of HTML in titles, tick labels, legends and hovers (a link, a style, an
``onclick`` built from ``<a popup=…>``) and fills ``%{…}`` in hover templates, so a name must
arrive escaped, never as markup. The expected strings are written out by hand."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.charts import agreement, breakdowns, common, overview, radar
from analysis.core.filters import Filters
from analysis.views.agreement import SCOPE_ALL, SCOPE_CRITERION, Agreement, AgreementQuery
from analysis.views.radar import RadarData
from analysis.views.scorers import Scorer

EVIL = '<a href="https://evil.example" popup="x">m</a> 5%{y}'
# what plotly must receive: <, > and & as entities (it shows them as characters)
SAFE = '&lt;a href="https://evil.example" popup="x"&gt;m&lt;/a&gt; 5%{y}'
OURS = {"br", "b", "/b", "extra", "/extra"}  # the only tags the figures write themselves


def test_esc_by_hand():
    assert common.esc(EVIL) == SAFE
    assert common.esc("a & b") == "a &amp; b" and common.esc(3) == "3"
    assert common.esc("5%{y}", template=True) == "5&#37;{y}"  # never filled by plotly
    # cut, then escaped: an entity is never cut in half, a line break is never the name's
    assert common.clip("a&b<c>d", 4) == "a&amp;b…"
    assert common.wrap("x<br>y", 10) == "x&lt;br&gt;y"
    assert common.wrap("R&D and <b>bold</b> claims", 12) == (
        "R&amp;D and<br>&lt;b&gt;bold&lt;/b&gt;<br>claims"
    )


def _strings(node, path=""):
    """Every string in a figure's JSON, with where it sits."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


def assert_no_markup_from_names(fig) -> None:
    spec = json.loads(fig.to_json())
    seen_safe = False
    for where, text in _strings(spec):
        if where.endswith(".legendgroup"):  # an id that groups traces, never drawn
            continue
        for tag in text.split("<")[1:]:
            name = tag.split(">")[0].split(" ")[0].lower()
            assert name in OURS, f"markup <{name}> from a name at {where}: {text!r}"
        if where.endswith("hovertemplate"):
            assert "5%{y}" not in text, f"a name read as a template at {where}: {text!r}"
        seen_safe |= "&lt;a href" in text
    assert seen_safe, "the hostile name should still be shown, as text"


def test_overview_figures_escape_names():
    board = pd.DataFrame({"group": EVIL, "model": [EVIL, "plain"], "mean": [3.0, 4.0],
                          "ci_low": [2.5, 3.5], "ci_high": [3.5, 4.5], "n": 9,
                          "n_instances": 3})  # fmt: skip
    assert_no_markup_from_names(overview.leaderboard_chart(board, EVIL))
    cov = pd.DataFrame({"skill": [EVIL, "factuality"], "domain": [EVIL, "Math"],
                        "instances": [3, 4]})  # fmt: skip
    assert_no_markup_from_names(overview.coverage_heatmap(cov))


def _radar(n_models: int) -> RadarData:
    models = [EVIL, *(f"m{j}" for j in range(1, n_models))]
    rows = [(m, axis, 3.0, 2.5, 3.5, 9, 3, 0, 1.0, 5.0) for m in models for axis in ("c1", "c2")]
    cols = ["model", "axis", "mean", "ci_low", "ci_high", "n", "n_instances", "n_na",
            "scale_min", "scale_max"]  # fmt: skip
    table = pd.DataFrame(rows, columns=cols)
    labels = {"c1": EVIL, "c2": "Tone"}
    published = pd.DataFrame({"model": [EVIL, EVIL], "axis": ["c1", "c2"], "mean": [3.1, 3.2]})
    return RadarData(table.assign(label=table["axis"].map(labels)), ("c1", "c2"), labels,
                     published, "full")  # fmt: skip


def test_radar_figures_escape_names():
    assert_no_markup_from_names(radar.radar_chart(_radar(2), show_published=True))
    assert_no_markup_from_names(radar.radar_chart(_radar(6)))  # small multiples' titles
    diff = pd.DataFrame({"axis": ["c1"], "label": [EVIL], "diff": [0.4], "ci_low": [0.1],
                         "ci_high": [0.7], "p_holm": [0.01], "n_shared": [9],
                         "significant": [True], "test": ["sign-flip"]})  # fmt: skip
    assert_no_markup_from_names(radar.compare_chart(diff, EVIL, "plain"))


def _cells(col: str, values: list) -> pd.DataFrame:
    rows = [(m, s, v, 3.2, 2.9, 3.5, 12, 1) for m in (EVIL, "plain") for s in ("correctness",)
            for v in values]  # fmt: skip
    return pd.DataFrame(rows, columns=["model", "skill", col, "mean", "ci_low", "ci_high", "n",
                                       "n_na"]).assign(label=EVIL)  # fmt: skip


def test_breakdown_figures_escape_names():
    assert_no_markup_from_names(breakdowns.domain_heatmap(_cells("domain", [EVIL, "Math"]), EVIL))
    levels = _cells("difficulty", [1, 2])
    assert_no_markup_from_names(breakdowns.difficulty_heatmap(levels, EVIL))
    assert_no_markup_from_names(breakdowns.difficulty_lines(levels))
    hard = pd.DataFrame({"model": [EVIL, "plain"], "skill": "correctness", "label": EVIL,
                         "rel_change": [-0.1, 0.05], "mean_full": 3.0, "n_full": 20,
                         "mean_hard": [2.7, 3.15], "n_hard": 5})  # fmt: skip
    assert_no_markup_from_names(breakdowns.hard_chart(hard))


def _agreement() -> Agreement:
    stats = pd.DataFrame({"scope": [SCOPE_CRITERION, SCOPE_ALL], "skill": ["c1", None],
                          "statistic": "spearman", "level": "pooled", "value": [0.5, 0.6],
                          "ci_low": [0.3, 0.4], "ci_high": [0.7, 0.8], "n": [9, 18]})  # fmt: skip
    pairs = pd.DataFrame({"instance_id": [EVIL, "2"], "model": [EVIL, "m"], "skill": "c1",
                          "a": [4.0, 2.0], "b": [3.0, 2.5]})  # fmt: skip
    empty = pd.DataFrame()
    q = AgreementQuery(Filters("d"), EVIL, "kind:human")
    a, b = Scorer(EVIL, (EVIL,)), Scorer("kind:human", ("h",))
    return Agreement(q, a, b, stats, empty, empty, empty, pairs, empty, {"c1": (1, 5)}, (),
                     labels={"c1": EVIL})  # fmt: skip


def test_agreement_figures_escape_names():
    r = _agreement()
    assert_no_markup_from_names(agreement.agreement_bars(r, "spearman"))
    assert_no_markup_from_names(agreement.confusion_heatmap(r, "c1"))
    scatter = agreement.agreement_scatter(r, "c1")
    assert_no_markup_from_names(scatter)
    first = scatter.data[0].customdata[0]
    assert list(first[:2]) == [4.0, 3.0] and list(first[2:]) == [SAFE, SAFE, SAFE]
    assert np.isfinite(scatter.data[0].x).all()
