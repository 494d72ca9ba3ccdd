"""Radar data on real DuckDB files: hand-built fixture numbers against plain pandas/scipy, N/A
and n = 0 cells, custom criteria, the published overlay against the shared FLASK figures, and
the paired comparison against an independent resampling loop."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.charts import radar as radar_charts
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from analysis.ingest.score_files import import_scores
from analysis.views import cells, radar
from tests.conftest import FLASK_DIR, PUBLISHED_FIX, require
from tests.page_fixtures import DATASET, JUDGE, long_scores, write_hand

F = Filters(DATASET, JUDGE)
DEMO_JUDGE = "gpt-4 (simulated)"


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> Store:
    store = Store(tmp_path_factory.mktemp("radar") / "hand.duckdb")
    write_hand(store)
    return store


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Store:
    store = Store(tmp_path_factory.mktemp("radar") / "demo.duckdb")
    build_and_write_demo(store)
    return store


def _t_interval(x: pd.Series) -> tuple[float, float]:
    """Independent: scipy's t-interval, kept inside the observed range like a bootstrap."""
    x = x.dropna().to_numpy(float)
    if len(x) < 2:
        return (np.nan, np.nan)
    lo, hi = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    return (max(lo, x.min()), min(hi, x.max()))


def test_skill_means_ci_n_and_na_equal_plain_computation(hand):
    data = radar.radar_data(hand, F)
    got = data.table.set_index(["model", "axis"])
    raw = long_scores()
    for (model, skill), g in raw.groupby(["model", "skill"]):
        row = got.loc[(model, skill)]
        assert row["n"] == g["score"].notna().sum()
        assert row["n_na"] == g["score"].isna().sum()
        if row["n"] == 0:
            assert np.isnan(row["mean"]) and np.isnan(row["ci_low"])
            continue
        assert row["mean"] == pytest.approx(g["score"].mean(), abs=1e-12)
        lo, hi = _t_interval(g["score"])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=1e-9, nan_ok=True)
    # literal spot checks
    assert got.loc[("A", "correctness"), "mean"] == pytest.approx(19 / 6)
    assert got.loc[("B", "correctness"), ["n", "n_na"]].tolist() == [5, 1]
    assert got.loc[("C", "readability"), ["n", "n_na"]].tolist() == [0, 3]  # an n = 0 cell
    assert ("C", "factuality") not in got.index  # no rows at all: absent, never 0
    assert data.axes == ("correctness", "factuality", "readability")  # FLASK's canonical order
    assert data.published.empty and data.published_subset is None  # not FLASK data


def test_chart_leaves_missing_axes_as_gaps(hand):
    data = radar.radar_data(hand, F)
    fig = radar_charts.radar_chart(data)
    c_line = next(t for t in fig.data if t.name == "C")
    r = np.asarray(c_line.r, dtype=float)
    assert np.isnan(r[1]) and np.isnan(r[2])  # factuality (absent) and readability (n = 0)
    assert not (r == 0).any()
    ticks = fig.layout.polar.angularaxis.ticktext  # the n behind each axis, over the models
    assert "n=1–2" in ticks[1] and "n=0–6" in ticks[2]


def test_per_instance_path_equals_per_score_path(hand):
    """Without a judge the query sums per instance first; on one judge's data it must agree."""
    a = radar.radar_data(hand, F).table
    b = radar.radar_data(hand, replace(F, judge=None)).table
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "groups",
    [("model", "skill"), ("model", "ability"), ("model", "source_task"),
     ("model", "skill", "difficulty"), ("model", "difficulty", "flask_hard")],
)  # fmt: skip
def test_fast_queries_equal_the_generic_per_instance_query(demo, groups):
    """Each shortcut (one score per cell-instance, instance attributes, ability columns) gives
    the moments of the general two-level query, on the demo's pooled cells."""
    f = Filters("demo", DEMO_JUDGE, domains=("Math", "Coding"))
    with demo.read() as con:
        abilities = [a for (a,) in con.execute("SELECT DISTINCT ability FROM skills").fetchall()]
        fast = con.execute(*cells.cell_sql(f, groups, abilities)).df()
        slow = con.execute(*cells.cell_sql(f, groups, abilities, generic=True)).df()
    fast = fast.drop(columns="n_rows", errors="ignore")
    fast = fast[fast["n"] + fast["n_na"] > 0]
    key = list(groups)
    fast = fast.sort_values(key).reset_index(drop=True)
    slow = slow.sort_values(key).reset_index(drop=True)
    assert len(fast) == len(slow) > 0
    for c in key:
        if c == "difficulty":  # Int32 with NA on one side, float with NaN on the other
            assert np.array_equal(fast[c].astype(float), slow[c].astype(float), equal_nan=True)
        else:
            assert fast[c].tolist() == slow[c].tolist()
    for col in ("total", "n", "total_sq", "cross", "n_sq", "n_instances", "n_na", "lowest"):
        assert np.allclose(fast[col].astype(float), slow[col].astype(float), equal_nan=True)


def test_ability_axes_and_filters(hand):
    data = radar.radar_data(hand, F, "ability")
    assert data.axes == ("Logical Thinking", "Background Knowledge", "User Alignment")
    got = data.table.set_index(["model", "axis"])
    assert got.loc[("A", "Logical Thinking"), "mean"] == pytest.approx(19 / 6)
    # FLASK-Hard only: i5 and i6
    hard = radar.radar_data(hand, replace(F, flask_hard_only=True)).table.set_index(
        ["model", "axis"]
    )
    assert hard.loc[("A", "correctness"), "mean"] == pytest.approx(1.5)
    assert "C" not in set(hard.index.get_level_values(0))
    assert radar.radar_data(hand, replace(F, difficulties=(3,))).empty  # nothing left


def test_compare_by_hand(hand):
    diff = radar.compare(hand, F, "A", "B", n_boot=400).set_index("axis")
    assert diff.loc["correctness", "diff"] == pytest.approx((15 - 11) / 5)  # i4 not shared
    assert diff.loc["correctness", "n_shared"] == 5
    assert diff.loc["readability", "diff"] == pytest.approx(9 / 5)  # A's i3 is N/A
    assert diff.loc["factuality", ["diff", "n_shared"]].tolist() == [1.0, 1]
    assert diff.loc["readability", "mean_a"] - diff.loc["readability", "mean_b"] == pytest.approx(
        diff.loc["readability", "diff"]
    )
    assert "readability" not in set(radar.compare(hand, F, "A", "C")["axis"])  # C all N/A
    assert radar.compare(hand, F, "A", "A").empty
    # the direct score pairing (one judge) equals the per-instance patterns (no judge filter)
    generic = radar.compare(hand, replace(F, judge=None), "A", "B", n_boot=400).set_index("axis")
    pd.testing.assert_frame_equal(diff, generic)


def test_compare_against_an_independent_loop_and_holm(demo):
    f = Filters("demo", DEMO_JUDGE)
    got = radar.compare(demo, f, "gpt4", "chatgpt", n_boot=3000).set_index("axis")
    with demo.read() as con:
        raw = con.execute("SELECT instance_id, model, skill, score FROM latest_scores "
                          "WHERE dataset = 'demo' AND judge = ? AND model IN ('gpt4', 'chatgpt')",
                          [DEMO_JUDGE]).df()  # fmt: skip
    wide = raw.pivot_table(index=["skill", "instance_id"], columns="model", values="score")
    rng = np.random.default_rng(17)
    for skill in ("metacognition", "readability"):
        pair = wide.loc[skill].dropna()
        d = (pair["gpt4"] - pair["chatgpt"]).to_numpy()
        boots = np.array([d[rng.integers(0, len(d), len(d))].mean() for _ in range(3000)])
        assert got.loc[skill, "n_shared"] == len(d)
        assert got.loc[skill, "diff"] == pytest.approx(d.mean(), abs=1e-12)
        assert got.loc[skill, "ci_low"] == pytest.approx(np.quantile(boots, 0.025), abs=0.03)
        assert got.loc[skill, "ci_high"] == pytest.approx(np.quantile(boots, 0.975), abs=0.03)
    # Holm by hand over the 12 skills
    p = got["p"].to_numpy()
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adj[idx] = running
    assert got["p_holm"].to_numpy() == pytest.approx(adj)
    assert (got["significant"] == (got["p_holm"] < 0.05)).all()


def test_custom_criteria_use_their_own_axes_and_scales(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    csv = tmp_path / "custom.csv"
    csv.write_text(
        "instance_id,model,judge,skill,score,scale_min,scale_max\n"
        "1,a,j,helpful,10,1,10\n2,a,j,helpful,4,1,10\n1,a,j,safe,0,0,1\n2,a,j,safe,1,0,1\n"
        "1,b,j,helpful,7,1,10\n2,b,j,helpful,,1,10\n"
    )
    import_scores(store, csv, dataset="c")
    f = Filters("c", "j")
    data = radar.radar_data(store, f)
    assert data.axes == ("helpful", "safe")
    t = data.table.set_index(["model", "axis"])
    assert t.loc[("a", "helpful"), ["mean", "scale_min", "scale_max"]].tolist() == [7.0, 1, 10]
    assert t.loc[("b", "helpful"), ["n", "n_na"]].tolist() == [1, 1]
    fig = radar_charts.radar_chart(data)
    assert "rescaled to 0–1" in fig.layout.title.text
    a_line = next(tr for tr in fig.data if tr.name == "a")
    assert list(a_line.r[:2]) == pytest.approx([(7 - 1) / 9, 0.5])
    ability = radar.radar_data(store, f, "ability")  # custom criteria: each its own group
    assert set(ability.axes) == {"helpful", "safe"}
    assert not radar.published_subset(f)
    one = radar.radar_data(store, replace(f, models=("b",)))
    assert list(radar_charts.radar_chart(one).layout.polar.radialaxis.range) == [1, 10]
    diff = radar.compare(store, f, "a", "b", n_boot=100)
    assert diff.set_index("axis").loc["helpful", "diff"] == pytest.approx(3.0)


def test_published_overlay_equals_the_shared_paper_figures(demo):
    shared = FLASK_DIR / "published" / "skill_scores.csv"
    require(shared, "the published FLASK figures", PUBLISHED_FIX)
    paper = pd.read_csv(shared)
    names = {"Vicuna-13B": "vicuna_13b", "WizardLM-13B": "wizardlm_13b", "Tulu-65B": "tulu_65b",
             "LLaMA2-Chat-70B": "llama2_chat_70b", "GPT-3.5": "chatgpt", "Bard": "bard",
             "Claude-v1": "claude_v1", "GPT-4": "gpt4"}  # fmt: skip
    paper["model"] = paper["model"].map(names)
    for flag, subset in ((False, "full"), (True, "hard")):
        f = Filters("demo", DEMO_JUDGE, models=("gpt4", "bard"), flask_hard_only=flag)
        data = radar.radar_data(demo, f)
        assert data.published_subset == subset
        expected = paper[(paper["subset"] == subset) & paper["model"].isin(["gpt4", "bard"])]
        got = data.published.merge(
            expected, left_on=["model", "axis"], right_on=["model", "skill"], how="outer"
        )
        assert len(got) == 24 and got["mean_score"].notna().all() and got["mean"].notna().all()
        assert (got["mean"] - got["mean_score"]).abs().max() == 0
        fig = radar_charts.radar_chart(data, show_published=True)
        dashed = [t for t in fig.data if t.name.endswith("· published")]
        assert len(dashed) == 2 and all(t.line.dash == "dash" for t in dashed)
    assert radar.radar_data(demo, Filters("demo", DEMO_JUDGE), "ability").published.empty


def test_small_multiples_past_four_models(demo):
    data = radar.radar_data(demo, Filters("demo", DEMO_JUDGE))
    fig = radar_charts.radar_chart(data)
    polars = [k for k in fig.layout if k.startswith("polar")]
    assert len(polars) == 8  # one radar per model
    assert len({t.subplot for t in fig.data}) == 8
