"""Breakdown data on real DuckDB files: difficulty (with unlabeled), domains by FLASK's rule
(a two-domain instance counts in both), source tasks (pooled, instance-clustered CI), and
FLASK-Hard vs full, each against plain pandas on the fixture's own list of scores; then the
same on the real FLASK instances with generated scores."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.charts import breakdowns as breakdown_charts
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views import breakdowns, radar
from tests.page_fixtures import DATASET, JUDGE, long_scores, write_hand

F = Filters(DATASET, JUDGE)


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> Store:
    store = Store(tmp_path_factory.mktemp("bd") / "hand.duckdb")
    write_hand(store)
    return store


def _check_cells(got: pd.DataFrame, raw: pd.DataFrame, keys: list[str]) -> None:
    """Means, n, N/A counts per cell equal pandas; cells are exactly the groups with rows."""
    exp = raw.groupby(keys, dropna=False)["score"].agg(
        mean="mean", n="count", n_na=lambda s: s.isna().sum()
    )
    g = got.set_index(keys).sort_index()
    assert len(g) == len(exp)
    exp = exp.reindex(g.index)
    assert np.allclose(g["mean"], exp["mean"], equal_nan=True, atol=1e-12)
    assert (g["n"] == exp["n"]).all() and (g["n_na"] == exp["n_na"]).all()


def test_difficulty_cells_with_unlabeled_and_empty_levels(hand):
    got = breakdowns.by_difficulty(hand, F)
    raw = long_scores()
    _check_cells(got.assign(difficulty=got["difficulty"].astype("float")), raw,
                 ["model", "skill", "difficulty"])  # fmt: skip
    a = got[(got["model"] == "A") & (got["skill"] == "correctness")].set_index("difficulty")
    assert a.loc[1, "mean"] == 4.5 and a.loc[2, "mean"] == 3.0 and a.loc[5, "mean"] == 1.5
    assert not {3, 4} & set(a.index.dropna())  # no instances: no cell (never a 0)
    assert a[a.index.isna()]["mean"].tolist() == [4.0]  # i4: unlabeled, kept apart
    fig = breakdown_charts.difficulty_heatmap(got, "A")
    z = np.array(fig.data[0].z, dtype=float)
    assert list(fig.data[0].x)[-1] == "unlabeled" and len(fig.data[0].x) == 4  # 1, 2, 5, unl.
    # rows: correctness, factuality, readability; factuality exists at level 5 only
    assert np.isnan(z).sum() == 4 and not (z == 0).any()
    text = fig.data[0].text
    assert text[1][0] == ""  # no rows at all: an empty cell
    assert text[2][1] == "n=0"  # readability at level 2 is A's N/A: n = 0, empty colour
    assert text[0][0] == "4.5<br>2"  # mean (1 decimal on 1-5) over n: 3 characters a line


def test_two_domain_instance_counts_in_both(hand):
    got = breakdowns.by_domain(hand, F)
    raw = long_scores()
    raw["domain"] = raw["domains"].apply(lambda d: d or ["(unlabeled)"])
    _check_cells(got, raw.explode("domain"), ["model", "skill", "domain"])
    cell = got.set_index(["model", "skill", "domain"])
    assert cell.loc[("A", "correctness", "Math"), "mean"] == pytest.approx(11 / 3)  # i1 i2 i5
    assert cell.loc[("A", "correctness", "Coding"), "mean"] == pytest.approx(3.0)  # i2 i3 i6
    assert cell.loc[("A", "correctness", "(unlabeled)"), "n"] == 1  # i4
    only_math = breakdowns.by_domain(hand, replace(F, domains=("Math",)))
    assert set(only_math["domain"]) == {"Math"}
    # The rows are the same; their order is DuckDB's (the page pivots them into a heatmap).
    key = ["model", "skill", "domain"]
    pd.testing.assert_frame_equal(
        only_math.sort_values(key).reset_index(drop=True),
        got[got["domain"] == "Math"].sort_values(key).reset_index(drop=True),
    )


def _clustered_ci(per_inst: pd.DataFrame) -> tuple[float, float]:
    """Independent numpy: cluster-robust t-interval of Σs/Σc, clipped to the per-instance
    means' range."""
    p = per_inst[per_inst["c"] > 0]
    s, c = p["s"].to_numpy(float), p["c"].to_numpy(float)
    k = len(s)
    if k < 2:
        return (np.nan, np.nan)
    r = s.sum() / c.sum()
    se = np.sqrt(k / (k - 1) * ((s - r * c) ** 2).sum()) / c.sum()
    half = sps.t.ppf(0.975, k - 1) * se
    return (max(r - half, (s / c).min()), min(r + half, (s / c).max()))


def test_source_task_pools_skills_per_instance(hand):
    got = breakdowns.by_source_task(hand, F)
    raw = long_scores()
    _check_cells(got, raw.rename(columns={"task": "source_task"}), ["model", "source_task"])
    per = raw.groupby(["model", "task", "instance_id"]).agg(
        s=("score", "sum"), c=("score", "count")
    )
    cell = got.set_index(["model", "source_task"])
    for (model, task), g in per.groupby(level=[0, 1]):
        lo, hi = _clustered_ci(g)
        got_ci = cell.loc[(model, task), ["ci_low", "ci_high"]].tolist()
        assert got_ci == pytest.approx([lo, hi], nan_ok=True, abs=1e-9)
        assert cell.loc[(model, task), "n_instances"] == (g["c"] > 0).sum()
    assert cell.loc[("A", "T3"), ["mean", "n", "n_na"]].tolist() == [pytest.approx(2.6), 5, 1]
    # sorted by mean within a model (the page's table is sortable too)
    a = got[got["model"] == "A"]["mean"].to_numpy()
    assert (np.diff(a) <= 0).all()


def test_hard_vs_full(hand):
    got = breakdowns.hard_vs_full(hand, replace(F, flask_hard_only=True)).set_index(
        ["model", "skill"]
    )
    assert got.loc[("A", "correctness"), "mean_full"] == pytest.approx(19 / 6)
    assert got.loc[("A", "correctness"), "mean_hard"] == pytest.approx(1.5)
    assert got.loc[("A", "correctness"), "rel_change"] == pytest.approx((1.5 - 19 / 6) / (19 / 6))
    assert got.loc[("B", "readability"), ["n_full", "n_hard"]].tolist() == [6, 2]
    c = got.loc[("C", "correctness")]  # C has no FLASK-Hard instance: empty, not 0
    assert np.isnan(c["mean_hard"]) and np.isnan(c["rel_change"]) and c["n_full"] == 3
    # the full side's CI equals the direct computation on all instances
    full = radar.radar_data(hand, F).table.set_index(["model", "axis"])
    assert got.loc[("A", "correctness"), ["ci_low_full", "ci_high_full"]].tolist() == (
        pytest.approx(full.loc[("A", "correctness"), ["ci_low", "ci_high"]].tolist())
    )
    fig = breakdown_charts.hard_chart(got.reset_index())
    assert fig.data[0].text[0][2] == ""  # C × correctness has no hard cell: blank


def test_filter_that_leaves_nothing(hand):
    f = replace(F, difficulties=(3,))
    for fn in (breakdowns.by_difficulty, breakdowns.by_domain, breakdowns.by_source_task,
               breakdowns.hard_vs_full):  # fmt: skip
        assert fn(hand, f).empty
    assert breakdowns.hard_vs_full(hand, replace(F, domains=("History",))).empty


def test_real_flask_instances_with_generated_scores(flask_store, tmp_path):
    """Real instance metadata (two-domain instances, unlabeled levels, FLASK-Hard flags)."""
    with flask_store.read() as con:
        inst = con.execute("SELECT instance_id, skills, domains, difficulty, source_task, "
                           "flask_hard FROM instances WHERE dataset = 'flask'").df()  # fmt: skip
    rng = np.random.default_rng(3)
    rows = [(i, m, s) for i, sk in zip(inst["instance_id"], inst["skills"], strict=True)
            for s in sk for m in ("gpt4", "vicuna_13b")]  # fmt: skip
    scores = pd.DataFrame(rows, columns=["instance_id", "model", "skill"])
    scores["score"] = rng.integers(1, 6, len(scores)).astype(float)
    scores.loc[rng.random(len(scores)) < 0.05, "score"] = np.nan
    csv = tmp_path / "gen.csv"
    scores.to_csv(csv, index=False)
    import_scores(flask_store, csv, judge="gen-judge", dataset="flask")
    f = Filters("flask", "gen-judge")
    raw = scores.merge(inst, on="instance_id")
    raw["domain"] = raw["domains"].apply(lambda d: list(d) or ["(unlabeled)"])
    assert (raw["domains"].apply(len) == 2).sum() > 0 and raw["difficulty"].isna().any()
    _check_cells(breakdowns.by_domain(flask_store, f), raw.explode("domain"),
                 ["model", "skill", "domain"])  # fmt: skip
    diff = breakdowns.by_difficulty(flask_store, f)
    _check_cells(diff.assign(difficulty=diff["difficulty"].astype(float)),
                 raw.assign(difficulty=raw["difficulty"].astype(float)),
                 ["model", "skill", "difficulty"])  # fmt: skip
    hard = breakdowns.hard_vs_full(flask_store, f).set_index(["model", "skill"])
    exp = raw[raw["flask_hard"]].groupby(["model", "skill"])["score"].mean()
    assert np.allclose(hard.loc[exp.index, "mean_hard"], exp)
    data = radar.radar_data(flask_store, f)
    assert data.published_subset == "full" and len(data.published) == 24
