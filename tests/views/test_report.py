"""The stakeholder report (analysis.charts.report): its figures carry the pages' numbers, the
store's text is shown as inert text, credentials never appear, and nothing points outside the
file.

The numbers: the leaderboard, radar and agreement figures embedded in the HTML (parsed back out
of each ``Plotly.newPlot`` call) equal what the view functions the pages call return on the
same filters, and the means also equal plain pandas means over the store's scores.

"Nothing points outside" is checked precisely: the plotly.js bundle (exactly
``plotly.offline.get_plotlyjs()``, which carries plotly's own license comments and URLs it
never fetches here) appears once and is cut out; in the rest of the file, no element may load
anything (no ``src``, no ``<link>``, ``<img>``, ``<iframe>``, ``<object>``, ``<embed>``, no
``href`` but the contents' ``#anchors``), the style has no ``url(`` or ``@import``, and the
word "http" occurs only inside text nodes that are the store's own hostile texts, escaped.
"""

from __future__ import annotations

import html
import re
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from plotly.offline import get_plotlyjs

from analysis.charts.report import file_name, report
from analysis.core.errors import InputError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import agreement, overview, radar
from analysis.views.report_data import gather
from analysis.views.report_sources import safe_params
from tests.report_fixtures import (
    DATASET,
    HOSTILE,
    JUDGE,
    SECRET,
    Parsed,
    figures,
    hostile_report_store,
)

DEMO_JUDGE = "gpt-4 (simulated)"
WHEN = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Store:
    return hostile_report_store(tmp_path_factory.mktemp("hostile") / "store.duckdb")


@pytest.fixture(scope="module")
def hostile_html(hostile) -> str:
    return report(hostile, Filters(DATASET), now=WHEN).decode("utf-8")


@pytest.fixture(scope="module")
def demo(demo_db: Path, tmp_path_factory) -> Store:
    path = tmp_path_factory.mktemp("demo_report") / "demo.duckdb"
    shutil.copy(demo_db, path)
    return Store(path)


# A slice of the demo: two domains, three levels, the judge; the radar's models by default.
SLICE = Filters(
    "demo", DEMO_JUDGE, domains=("Math", "Coding"), difficulties=(3, 4, 5)
)  # fmt: skip


@pytest.fixture(scope="module")
def demo_html(demo) -> str:
    return report(demo, SLICE, now=WHEN).decode("utf-8")


def _raw_scores(store: Store, f: Filters) -> pd.DataFrame:
    """The judge's latest non-N/A scores under the filters, filtered here with pandas."""
    with store.read() as con:
        rows = con.execute(
            "SELECT s.model, s.skill, s.instance_id, s.score, i.domains, i.difficulty "
            "FROM latest_scores s JOIN instances i USING (dataset, instance_id) "
            "WHERE s.dataset = ? AND s.judge = ?",
            [f.dataset, f.judge],
        ).df()
    keep = rows["score"].notna()
    if f.domains:
        keep &= rows["domains"].map(lambda d: bool(set(d) & set(f.domains)))
    if f.difficulties:
        keep &= rows["difficulty"].isin(f.difficulties)
    if f.models:
        keep &= rows["model"].isin(f.models)
    return rows[keep]


def test_leaderboard_figure_is_the_views_leaderboard(demo, demo_html):
    (fig,) = figures(demo_html)["leaderboard"]
    trace = fig["data"][0]
    board = overview.leaderboard(demo, SLICE)
    # best at the top: plotly draws the first category at the bottom
    want = board[board["group"] == overview.OVERALL].sort_values(["rank", "model"], ascending=False)
    assert trace["y"] == [html.escape(m, quote=False) for m in want["model"]]
    np.testing.assert_array_equal(trace["x"], want["mean"].to_numpy())
    custom = np.asarray(trace["customdata"], dtype=float)
    np.testing.assert_array_equal(custom[:, 0], want["ci_low"].to_numpy())
    np.testing.assert_array_equal(custom[:, 1], want["ci_high"].to_numpy())
    np.testing.assert_array_equal(custom[:, 2], want["n"].to_numpy())
    # Overall = the mean of every non-N/A score of the model in the slice (plain pandas)
    raw = _raw_scores(demo, SLICE).groupby("model")["score"].agg(["mean", "size"])
    for model, mean, n in zip(want["model"], trace["x"], custom[:, 2], strict=True):
        assert mean == pytest.approx(raw.loc[model, "mean"], rel=1e-12)
        assert n == raw.loc[model, "size"]


def test_radar_figure_is_the_views_radar(demo, demo_html):
    (fig,) = figures(demo_html)["radar"]
    ranking = radar.model_ranking(demo, SLICE, overview.filter_options(demo, "demo").models)
    focus = ranking.defaults(4)
    data = radar.radar_data(demo, replace(SLICE, models=tuple(focus)), "skill")
    lines = [t for t in fig["data"] if t.get("mode") == "lines+markers"]
    assert sorted(t["name"] for t in lines) == sorted(focus)  # the page's default: 4 best
    raw = _raw_scores(demo, SLICE).groupby(["model", "skill"])["score"].mean()
    for trace in lines:
        model = trace["name"]
        rows = data.table[data.table["model"] == model].set_index("axis").reindex(data.axes)
        custom = np.asarray(trace["customdata"], dtype=object)[: len(data.axes)]
        for col, name in ((1, "mean"), (2, "ci_low"), (3, "ci_high"), (4, "n")):
            got = custom[:, col].astype(float)
            np.testing.assert_array_equal(got, rows[name].to_numpy(float), err_msg=name)
        for axis, mean in zip(data.axes, custom[:, 1].astype(float), strict=True):
            assert mean == pytest.approx(raw.loc[(model, axis)], rel=1e-12)


def test_agreement_figures_are_the_views_agreement(demo, demo_html):
    figs = figures(demo_html)
    r = agreement.agreement(
        demo, agreement.AgreementQuery(SLICE, DEMO_JUDGE, "kind:human"), ("stats", "ceiling")
    )
    (bars,) = figs["agreement"]
    want = r.stats[r.stats["statistic"] == "alpha_ordinal"]
    trace = bars["data"][0]
    np.testing.assert_array_equal(np.asarray(trace["y"], float), want["value"].to_numpy(float))
    custom = np.asarray(trace["customdata"], dtype=float)
    np.testing.assert_array_equal(custom[:, 0], want["ci_low"].to_numpy(float))
    np.testing.assert_array_equal(custom[:, 2], want["n"].to_numpy(float))
    (ceiling,) = figs["ceiling"]
    c = r.ceiling[r.ceiling["statistic"] == "alpha_ordinal"]
    for trace, figure in zip(ceiling["data"], ("human_ceiling", "judge_same_reference"),
                             strict=True):  # fmt: skip
        rows = c[c["figure"] == figure]
        np.testing.assert_array_equal(np.asarray(trace["y"], float), rows["value"].to_numpy())


def test_every_section_and_the_simulated_banner_on_the_demo(demo_html):
    text = " ".join(Parsed(demo_html).texts)
    assert "SIMULATED DATA" in text and "seed 20231" in text
    for title in ("Provenance", "Leaderboard", "Skill radar", "Difficulty and domain",
                  "FLASK-Hard vs full", "Human vs judge", "Human ceiling (leave-one-out)",
                  "Judges against the humans", "Exemplar responses"):  # fmt: skip
        assert f">{title}</h" in demo_html, title
    figs = figures(demo_html)
    assert len(figs["difficulty"]) == len(figs["domain"]) == 4  # the radar's 4 models
    assert len(figs["hard"]) == 1
    # the filters applied are listed
    assert "Math, Coding" in text and "3 · " in text and DEMO_JUDGE in text


def test_hostile_text_is_verbatim_inert_text(hostile_html):
    parsed = Parsed(hostile_html)
    text = "".join(parsed.texts)
    for hostile in HOSTILE:
        assert hostile in text, hostile  # shown as the characters typed
        assert html.escape(hostile) in hostile_html
    # no element was made from it: only the report's own elements, nothing that loads
    made = {t for t, _ in parsed.tags}
    assert made.isdisjoint({"img", "iframe", "object", "embed", "link", "base", "form"}), made
    for tag, attrs in parsed.tags:
        assert "src" not in attrs, (tag, attrs)
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        if tag == "a":
            assert set(attrs) == {"href"} and attrs["href"].startswith("#"), attrs
    # the report's own scripts: plotly.js, its config, one per figure, the print resize
    assert len(parsed.scripts) == 3 + sum(len(v) for v in figures(hostile_html).values())
    assert all("alert(1)" not in s for s in parsed.scripts)


def test_nothing_points_outside_the_file(hostile_html):
    bundle = get_plotlyjs()
    assert hostile_html.count(bundle) == 1
    rest = hostile_html.replace(bundle, "")
    assert "cdn" not in rest.lower() and "mathjax" not in rest.lower().replace(
        "mathjaxconfig: 'local'", ""
    )
    style = re.search(r"<style>(.*?)</style>", rest, re.S).group(1)
    assert "url(" not in style and "@import" not in style
    parsed = Parsed(rest)
    for _tag, attrs in parsed.tags:
        assert not any("http" in (v or "") or "//" in (v or "") for v in attrs.values()), attrs
    assert all("http" not in s for s in parsed.scripts)
    # every "http" left is in a text node holding the store's hostile text
    with_http = [t for t in parsed.texts if "http" in t]
    assert with_http and all(any(h in t for h in HOSTILE) for t in with_http)
    assert rest.count("http") == sum(t.count("http") for t in with_http)


def test_provenance_shows_settings_never_a_key(hostile_html):
    assert SECRET not in hostile_html
    text = " ".join(Parsed(hostile_html).texts)
    assert "SIMULATED DATA" not in text  # imported data is real
    assert "(hidden)" in text and '"temperature": 0' in text and "gpt-x" in text
    assert safe_params('{"API-Key": "x", "k": [{"password": 1}]}') == (
        '{"API-Key": "(hidden)", "k": [{"password": "(hidden)"}]}'
    )
    assert safe_params("token=abc") == "(hidden)"


def test_exemplars_best_and_worst_per_skill(hostile):
    data = gather(hostile, Filters(DATASET))
    with hostile.read() as con:
        scores = con.execute(
            "SELECT skill, instance_id, model, score FROM latest_scores WHERE judge = ?", [JUDGE]
        ).df()
    for skill, rows in scores.groupby("skill"):
        picked = {e.which: e for e in data.exemplars if e.skill == skill}
        assert picked["best"].score == rows["score"].max()
        assert picked["worst"].score == rows["score"].min()
        top = rows[rows["score"] == rows["score"].max()].sort_values(["instance_id", "model"])
        assert (picked["best"].sample.instance_id, picked["best"].sample.model) == tuple(
            top[["instance_id", "model"]].iloc[0]
        )
        assert {j.judge for j in picked["best"].sample.judges} == {JUDGE, "rater-a", "rater-b"}


def test_no_humans_says_so(tmp_path):
    store = hostile_report_store(tmp_path / "s.duckdb", humans=False)
    page = report(store, Filters(DATASET)).decode()
    text = " ".join(Parsed(page).texts)
    assert "No human scores in this dataset" in text
    assert "agreement" not in figures(page)


def test_bad_filters_are_input_errors(hostile):
    for f, word in (
        (Filters("nope"), "dataset 'nope'"),
        (Filters(DATASET, "nobody"), "judge 'nobody'"),
        (Filters(DATASET, models=("m9",)), "model 'm9'"),
        (Filters(DATASET, domains=("Cooking",)), "domain 'Cooking'"),
        (Filters(DATASET, difficulties=(5,)), "level '5'"),
        (Filters(DATASET, flask_hard_only=True), "FLASK-Hard"),
    ):
        with pytest.raises(InputError, match=re.escape(word)):
            report(hostile, f)


def test_progress_runs_to_one_and_the_file_name(hostile):
    seen: list[tuple[float, str]] = []
    report(hostile, Filters(DATASET), progress=lambda x, label: seen.append((x, label)))
    fractions = [x for x, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == 1.0
    assert (
        file_name(Filters("<b>set</b>/x"), WHEN) == "finegrain-report-b-set--b--x-2026-11-30.html"
    )


def test_judges_leaderboard_is_the_judges_page_board(hostile, hostile_html):
    """The Judges page's figure, whose cells are each judge's single Human-vs-judge call (one
    LLM judge here: the board's ceiling row is that judge's human ceiling)."""
    judges, ceiling = figures(hostile_html)["judges"][0]["data"]
    r = agreement.agreement(
        hostile,
        agreement.AgreementQuery(Filters(DATASET), JUDGE, "kind:human"),
        ("stats", "ceiling"),
    )
    want = r.stats[r.stats["statistic"] == "spearman"]["value"].to_numpy(float)
    np.testing.assert_array_equal(np.asarray(judges["z"], float)[0], want)
    c = r.ceiling[(r.ceiling["statistic"] == "spearman") & (r.ceiling["figure"] == "human_ceiling")]
    np.testing.assert_array_equal(np.asarray(ceiling["z"], float)[0], c["value"].to_numpy(float))


def test_hostile_names_from_the_store_stay_text(tmp_path):
    """Models, judge, raters, criteria and dataset named with markup (tests/hostile_store.py):
    every name is on the page as the characters typed, and none made an element."""
    from tests.hostile_store import DATASET as NAMED
    from tests.hostile_store import NAMES, hostile_store

    store = Store(hostile_store(tmp_path / "names.duckdb"))
    page = report(store, Filters(NAMED)).decode("utf-8")
    parsed = Parsed(page)
    text = "".join(parsed.texts)
    for name in (NAMED, *NAMES):
        assert name in text, name
    assert {t for t, _ in parsed.tags}.isdisjoint({"img", "iframe", "b", "i", "u", "base"})
    for tag, attrs in parsed.tags:
        assert tag != "a" or attrs["href"].startswith("#"), attrs
        assert "src" not in attrs and not any(k.startswith("on") for k in attrs), attrs
    assert len(figures(page)["radar"]) == 1 and "agreement" in figures(page)
