"""A dataset's own criterion named like a FLASK skill keeps its own label everywhere people read
it: ``correctness`` of a dataset of its own (0-4, labelled "Correctness (ours)") is never shown
as FLASK's "Logical Correctness". Its FLASK skill ``readability`` keeps FLASK's label.

The labels are read from the store's ``dataset_skills`` view by the views; the charts and tables
only show what the views return. Every figure and table below is checked for the label."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis.charts import agreement as agreement_charts
from analysis.charts import breakdowns as breakdown_charts
from analysis.charts import overview as overview_charts
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views import agreement_report, breakdowns, overview, radar, sample_detail, scorers
from analysis.views.agreement import AgreementQuery, agreement

OURS = "Correctness (ours)"
FLASK = "Logical Correctness"  # FLASK's label of its own `correctness`: must not show up


SCORERS = (("J", "llm"), ("h1", "human"), ("h2", "human"), ("h3", "human"))


def _rows() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    out = []
    for i in range(8):
        for m in ("m1", "m2"):
            for skill, lo, hi in (("correctness", 0, 4), ("readability", 1, 5)):
                base = dict(instance_id=f"q{i}", model=m, skill=skill, scale_min=lo, scale_max=hi,
                            domain="Math", difficulty=1 + i % 3)  # fmt: skip
                for judge, kind in SCORERS:
                    score = int(rng.integers(lo, hi + 1))
                    out.append(base | dict(judge=judge, kind=kind, score=score))
    return pd.DataFrame(out)


def _store(tmp_path, label: str | None) -> Store:
    path = tmp_path / "own.csv"
    _rows().to_csv(path, index=False)
    store = Store(tmp_path / "own.duckdb")
    import_scores(store, path, dataset="own")
    if label is not None:  # a label of its own (an import names a new criterion by its id)
        with store.write() as con:
            con.execute(
                "UPDATE criteria SET label = ? WHERE dataset = 'own' AND skill = 'correctness'",
                [label],
            )
    return store


@pytest.fixture
def own(tmp_path) -> Store:
    return _store(tmp_path, OURS)


def _texts(obj) -> str:
    """Every string in a figure, a frame or bytes, as one text to search."""
    if isinstance(obj, bytes):
        return obj.decode()
    if isinstance(obj, pd.DataFrame):
        return obj.to_csv()
    return json.dumps(obj.to_plotly_json(), default=str)


def _shows_ours(*objs) -> None:
    for obj in objs:
        text = _texts(obj)
        assert OURS in text, type(obj)
        assert FLASK not in text, type(obj)
        assert "Readability" in text, type(obj)


def test_the_store_resolves_the_dataset_own_label(own):
    with own.read() as con:
        got = dict(con.execute("SELECT skill, label FROM dataset_skills WHERE dataset = 'own'")
                   .fetchall())  # fmt: skip
    assert got["correctness"] == OURS and got["readability"] == "Readability"


def test_breakdowns_return_and_draw_the_dataset_labels(own):
    f = Filters("own", "J")
    levels = breakdowns.by_difficulty(own, f)
    assert dict(zip(levels["skill"], levels["label"], strict=True)) == {
        "correctness": OURS, "readability": "Readability"}  # fmt: skip
    domains = breakdowns.by_domain(own, f)
    assert set(domains["label"]) == {OURS, "Readability"}
    _shows_ours(
        breakdown_charts.difficulty_heatmap(levels, "m1"),
        breakdown_charts.difficulty_lines(levels),
        breakdown_charts.domain_heatmap(domains, "m1"),
        breakdowns.table_csv(levels),
        breakdowns.table_csv(domains),
    )
    heat = breakdown_charts.difficulty_heatmap(levels, "m1")
    assert list(heat.data[0].y) == ["Correctness<br>(ours)", "Readability"]  # wrapped to fit


def test_the_sample_view_names_scores_by_the_dataset_labels(own):
    d = sample_detail.detail(own, "own", "q0", "m1")
    assert d.skills == ("correctness", "readability")
    assert sample_detail.facts(d).endswith(f"skills {OURS}, Readability")
    lines = sample_detail.score_lines(next(v for v in d.judges if v.judge == "J")).splitlines()
    assert [line.split(":")[0] for line in lines] == [OURS, "Readability"]


def test_radar_tables_keep_the_dataset_labels(tmp_path):
    # Label = id (what an import gives a new criterion): "correctness" must stay "correctness",
    # not be labelled a second time as FLASK's skill.
    store = _store(tmp_path, None)
    data = radar.radar_data(store, Filters("own", "J"))
    assert set(radar.display_table(data)["Skill"]) == {"correctness", "Readability"}
    diff = radar.compare(store, Filters("own", "J"), "m1", "m2", n_boot=50)
    assert set(radar.compare_table(diff)["Axis"]) == {"correctness", "Readability"}
    assert FLASK not in radar.table_csv(data).decode() + radar.compare_csv(diff).decode()


def test_radar_and_coverage_with_a_label_of_its_own(own):
    data = radar.radar_data(own, Filters("own", "J"))
    diff = radar.compare(own, Filters("own", "J"), "m1", "m2", n_boot=50)
    cov = overview.coverage(own, Filters("own"))
    assert set(cov["label"]) == {OURS, "Readability"}
    _shows_ours(
        radar.display_table(data),
        radar.compare_table(diff),
        radar.table_csv(data),
        overview_charts.coverage_heatmap(cov),
    )


def test_agreement_tables_charts_and_picker_use_the_dataset_labels(own):
    r = agreement(own, AgreementQuery(Filters("own"), "J", "kind:human", n_boot=30))
    assert r.labels["correctness"] == OURS
    assert r.label("correctness") == OURS and r.label(None) == "All criteria (pooled)"
    _shows_ours(
        agreement_report.exact_table(r),
        agreement_report.stats_csv(r),
        agreement_report.ceiling_table(r, "pearson"),
        agreement_report.ceiling_long(r),
        agreement_report.disagreements_csv(r),
        agreement_charts.agreement_bars(r, "pearson"),
        agreement_charts.ceiling_bars(r, "pearson"),
    )
    assert agreement_charts.confusion_heatmap(r, "correctness").layout.title.text.startswith(OURS)
    assert agreement_charts.agreement_scatter(r, "correctness").layout.title.text.startswith(OURS)
    choices = scorers.scorer_choices(own, "own")
    assert [choices.skill_label(s) for s in (None, *choices.skills)] == [
        "All skills", OURS, "Readability"]  # fmt: skip
