"""Overview numbers against independent pandas computations on real DuckDB files."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.demo import build_and_write_demo
from analysis.ingest.score_files import import_scores
from analysis.views import overview

JUDGE = "gpt-4 (simulated)"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory) -> Store:
    store = Store(tmp_path_factory.mktemp("ov") / "demo.duckdb")
    build_and_write_demo(store)
    return store


def _scores(store: Store) -> pd.DataFrame:
    with store.read() as con:
        return con.execute("SELECT s.*, i.domains, i.difficulty FROM latest_scores s "
                           "JOIN instances i USING (dataset, instance_id)").df()  # fmt: skip


def test_leaderboard_means_equal_pandas(demo_store):
    f = Filters("demo", JUDGE, difficulties=(4, 5))
    board = overview.leaderboard(demo_store, f, n_boot=200)
    raw = _scores(demo_store)
    raw = raw[(raw["judge"] == JUDGE) & raw["difficulty"].isin([4, 5])]
    expected = raw.groupby("model")["score"].agg(["mean", "count"])  # pandas skips N/A
    got = board[board["group"] == overview.OVERALL].set_index("model")
    assert set(got.index) == set(expected.index)
    for model, row in expected.iterrows():
        assert got.loc[model, "mean"] == pytest.approx(row["mean"], abs=1e-12)
        assert got.loc[model, "n"] == row["count"]
        assert got.loc[model, "ci_low"] < row["mean"] < got.loc[model, "ci_high"]
    n_na = raw["score"].isna().groupby(raw["model"]).sum()
    assert (got["n_na"].sort_index() == n_na.sort_index()).all()


def test_coverage_counts_instances_per_skill_and_domain(demo_store):
    # From the instances alone: the judge and the model filter do not change it.
    f = Filters("demo", JUDGE, models=("gpt4",), domains=("Language",))
    cov = overview.coverage(demo_store, f)
    plain = overview.coverage(demo_store, Filters("demo", domains=("Language",)))
    keys = ["skill", "domain"]
    sort = {"by": keys, "ignore_index": True}
    assert cov.sort_values(**sort).equals(plain.sort_values(**sort))
    assert set(cov["domain"]) == {"Language"}  # no other domain of two-domain instances
    with demo_store.read() as con:
        inst = con.execute("SELECT * FROM instances WHERE dataset = 'demo'").df()
    inst = inst[inst["domains"].apply(lambda d: "Language" in list(d))]
    expected = inst.explode("skills").groupby("skills")["instance_id"].nunique()
    assert cov.set_index("skill")["instances"].sort_index().to_dict() == expected.to_dict()


def test_mixed_scales_pool_on_zero_to_one(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    csv = tmp_path / "custom.csv"
    csv.write_text(
        "instance_id,model,judge,skill,score,scale_min,scale_max\n"
        "1,a,j,helpful,10,1,10\n2,a,j,helpful,4,1,10\n1,a,j,safe,0,0,1\n2,a,j,safe,1,0,1\n"
    )
    import_scores(store, csv, dataset="c")
    board = overview.leaderboard(store, Filters("c", "j"), n_boot=100).set_index("group")
    assert overview.OVERALL not in board.index
    assert board.loc[overview.OVERALL_01, "mean"] == pytest.approx((1 + 3 / 9 + 0 + 1) / 4)
    assert board.loc["helpful", "mean"] == pytest.approx(7.0)  # its own 1-10 scale
    assert board.loc["safe", "mean"] == pytest.approx(0.5)
    wide = overview.leaderboard_wide(overview.leaderboard(store, Filters("c", "j"), n_boot=50))
    assert wide.columns[2] == overview.OVERALL_01


def test_empty_slice_gives_empty_tables(demo_store):
    f = Filters("demo", JUDGE, flask_hard_only=True, difficulties=(1,))
    assert overview.leaderboard(demo_store, f).empty
    assert overview.coverage(demo_store, f).empty
    assert overview.leaderboard_wide(overview.leaderboard(demo_store, f)).empty
