"""The verbosity report's statistics by hand: same-score rate, mean shift and length ratio with
ties (equal scores, real-valued ones too), N/A pairs, small n, the flag rule, and CIs against
an independent percentile bootstrap; and the report read from a store written by the score
importer (a source dataset and its derived dataset of rewrites)."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views import judge_verbosity as jv

COLS = ["judge", "instance_id", "model", "skill", "original", "rewrite", "len_original",
        "len_rewrite", "scale_min", "scale_max"]  # fmt: skip


def _pairs(rows, judge="J", skill="correctness"):
    out = [(judge, str(i), m, skill, o, r, lo, lr, 1.0, 5.0) for i, m, o, r, lo, lr in rows]
    return pd.DataFrame(out, columns=COLS)


HAND = [  # instance, model, original, rewrite, lengths
    (1, "A", 3, 3, 100, 150),  # same
    (1, "B", 4, 5, 100, 200),  # +1
    (2, "A", 2, 3, 50, 100),  # +1
    (2, "B", 5, 5, 80, 120),  # same (a tie at the top)
    (3, "A", 4, 4, 100, 100),  # same
    (3, "B", None, 3, 100, 300),  # N/A on one side: counted apart, in no statistic
]


def test_by_hand_with_ties_and_na():
    t = jv.statistics(_pairs(HAND)).set_index("skill").loc["correctness"]
    assert (t["n"], t["n_instances"], t["n_na"]) == (5, 3, 1)
    assert t["same_rate"] == pytest.approx(3 / 5)
    assert t["shift"] == pytest.approx(2 / 5)
    assert t["length_ratio"] == pytest.approx((1.5 + 2.0 + 2.0 + 1.5 + 1.0) / 5)
    # 3 instances: marked, and never flagged whatever the CI says.
    assert t["few_instances"] and not t["flagged"]
    assert t["same_low"] <= t["same_rate"] <= t["same_high"]


def test_real_valued_ties_count_as_the_same_score():
    rows = [(1, "A", 3.5, 3.5, 10, 20), (2, "A", 3.5, 4.0, 10, 20), (3, "A", 2.25, 2.25, 10, 20)]
    t = jv.statistics(_pairs(rows)).iloc[0]
    assert t["same_rate"] == pytest.approx(2 / 3) and t["shift"] == pytest.approx(0.5 / 3)


def test_a_single_pair():
    t = jv.statistics(_pairs([(7, "A", 2, 4, 10, 25)])).iloc[0]
    assert (t["n"], t["n_instances"], t["same_rate"], t["shift"]) == (1, 1, 0.0, 2.0)
    assert (t["shift_low"], t["shift_high"]) == (2.0, 2.0)  # one instance: every resample
    assert t["length_ratio"] == 2.5 and not t["flagged"]


def test_only_na_pairs_give_no_row():
    assert jv.statistics(_pairs([(1, "A", None, 3, 10, 20)])).empty


def _uniform(n_instances, original, rewrite):
    return [(i, "A", original, rewrite, 100, 180) for i in range(n_instances)]


def test_the_flag_rule_needs_ci_size_and_n():
    # +1 on every one of 10 instances: the CI is [1, 1], a quarter point is exceeded.
    t = jv.statistics(_pairs(_uniform(10, 3, 4))).iloc[0]
    assert (t["shift_low"], t["shift"], t["shift_high"]) == (1.0, 1.0, 1.0) and t["flagged"]
    # The same on 9 instances: below the minimum n, not flagged.
    assert not jv.statistics(_pairs(_uniform(9, 3, 4))).iloc[0]["flagged"]
    # A shift of 0.2 everywhere: the CI excludes 0 but the shift is below a quarter point.
    small = jv.statistics(_pairs(_uniform(20, 3.0, 3.2))).iloc[0]
    assert small["shift_low"] > 0 and not small["flagged"]
    # Exactly a quarter point is enough; downwards counts as well.
    assert jv.statistics(_pairs(_uniform(12, 3.0, 3.25))).iloc[0]["flagged"]
    assert jv.statistics(_pairs(_uniform(12, 4, 3))).iloc[0]["flagged"]
    # On a 0-1 scale the practical size is 1/16 of the range: 0.0625.
    half = _pairs(_uniform(12, 0.5, 0.57)).assign(scale_min=0.0, scale_max=1.0)
    assert jv.statistics(half).iloc[0]["flagged"]


def test_no_shift_is_not_flagged():
    t = jv.statistics(_pairs(_uniform(30, 3, 3))).iloc[0]
    assert t["same_rate"] == 1.0 and t["shift"] == 0.0 and not t["flagged"]


def _independent_ci(per_instance_sum, per_instance_n, n_boot=1000, seed=0):
    """A plain percentile bootstrap of the ratio sum/n over instances."""
    rng = np.random.default_rng(seed)
    k = len(per_instance_sum)
    idx = rng.integers(0, k, size=(n_boot, k))
    boot = per_instance_sum[idx].sum(axis=1) / per_instance_n[idx].sum(axis=1)
    return np.quantile(boot, [0.025, 0.975])


def test_cis_equal_an_independent_percentile_bootstrap():
    rng = np.random.default_rng(7)
    rows = []
    for i in range(25):
        for m in ("A", "B", "C")[: 1 + i % 3]:  # instances with 1 to 3 pairs
            o = int(rng.integers(1, 6))
            rows.append((i, m, o, int(np.clip(o + rng.integers(-1, 3), 1, 5)), 100, 150))
    pairs = _pairs(rows)
    t = jv.statistics(pairs).iloc[0]
    p = pairs.assign(
        same=(pairs["original"] == pairs["rewrite"]).astype(float),
        shift=pairs["rewrite"] - pairs["original"],
    )
    g = p.groupby(p["instance_id"].astype(int)).agg(s=("same", "sum"), d=("shift", "sum"),
                                                    n=("same", "size"))  # fmt: skip
    g = g.loc[sorted(g.index, key=str)]  # the instances in the order the view indexes them
    lo, hi = _independent_ci(g["s"].to_numpy(), g["n"].to_numpy())
    assert (t["same_low"], t["same_high"]) == pytest.approx((lo, hi))
    lo, hi = _independent_ci(g["d"].to_numpy(), g["n"].to_numpy())
    assert (t["shift_low"], t["shift_high"]) == pytest.approx((lo, hi))


def test_skills_and_the_pooled_row():
    a = _pairs([(1, "A", 3, 4, 10, 20), (2, "A", 3, 3, 10, 20)], skill="correctness")
    b = _pairs([(1, "A", 2, 2, 10, 20)], skill="readability")
    t = jv.statistics(pd.concat([a, b])).set_index("skill")
    assert list(t.index) == ["correctness", "readability", jv.ALL_SKILLS]
    assert t.loc[jv.ALL_SKILLS, "n"] == 3 and t.loc[jv.ALL_SKILLS, "n_instances"] == 2
    assert t.loc[jv.ALL_SKILLS, "shift"] == pytest.approx(1 / 3)
    assert t.loc[jv.ALL_SKILLS, "same_rate"] == pytest.approx(2 / 3)


def _checked(tmp_path, judge: str) -> Store:
    store = Store(tmp_path / "v.duckdb")
    src, derived = "src", "src · verbose (m)"
    for ds, side in ((src, 0), (derived, 1)):
        rows = [
            dict(instance_id=i, model=m, judge=judge, skill="correctness",
                 score=HAND[k][2 + side] if HAND[k][2 + side] is not None else "",
                 instruction=f"q{i}", response=("x" * HAND[k][4 + side]))
            for k, (i, m, *_rest) in enumerate(HAND)
        ]  # fmt: skip
        path = tmp_path / f"{side}.csv"
        pd.DataFrame(rows).to_csv(path, index=False)
        import_scores(store, path, dataset=ds, kind="llm")
    con = duckdb.connect(str(store.path))
    con.execute("UPDATE datasets SET source = 'verbosity rewrite of src by openai/m' "
                "WHERE dataset = ?", [derived])  # fmt: skip
    con.close()
    return store


@pytest.fixture
def checked(tmp_path) -> Store:
    """A source dataset and its derived dataset of rewrites, both scored by J (imported)."""
    return _checked(tmp_path, "J")


def test_the_csv_mirrors_the_table_and_neutralises_formulas(tmp_path):
    import io

    r = jv.verbosity_report(_checked(tmp_path, "=J(1)"), Filters("src"))
    csv = pd.read_csv(io.BytesIO(jv.report_csv(r)), encoding="utf-8-sig")
    assert list(csv.columns) == list(jv.report_table(r).columns)
    assert csv["Judge"].tolist() == ["'=J(1)"]
    assert csv["Same score (rate)"].iloc[0] == pytest.approx(0.6)
    assert csv["Mean shift (rewrite − original)"].iloc[0] == pytest.approx(0.4)
    assert csv["Pairs (n)"].iloc[0] == 5


def test_the_report_reads_a_stored_check(checked):
    r = jv.verbosity_report(checked, Filters("src"))
    assert r.check == "src · verbose (m)" and list(r.checks["rewrites"]) == [6]
    t = r.table.iloc[0]
    assert (t["judge"], t["n"], t["n_na"]) == ("J", 5, 1)
    assert t["same_rate"] == pytest.approx(0.6) and t["shift"] == pytest.approx(0.4)
    assert t["length_ratio"] == pytest.approx(8 / 5)
    shown = jv.report_table(r)
    assert shown["Same score (rate)"].iloc[0] == "0.600"
    assert shown["Mean shift (rewrite − original)"].iloc[0] == "0.40"
    links = jv.pairs_table(r)
    assert links["Rewrite"].iloc[0].startswith("samples?dataset=src+%C2%B7+verbose")
    assert jv.empty(r) is None
    # The derived dataset itself says where its report is; a dataset without a check says how.
    assert jv.empty(jv.verbosity_report(checked, Filters("src · verbose (m)"))).cause == (
        "verbosity_rewrites"
    )
    # The model filter applies.
    assert set(jv.verbosity_report(checked, Filters("src", models=("A",))).pairs["model"]) == {"A"}


def test_sample_is_seeded_and_within_the_slice(checked):
    f = Filters("src")
    a, b = jv.sample(checked, f, 3, seed=1), jv.sample(checked, f, 3, seed=1)
    assert a == b and len(a) == 3 and len(set(a)) == 3
    assert jv.sample(checked, f, 100, 0) == tuple((str(i), m) for i, m, *_ in HAND)
    assert {m for _, m in jv.sample(checked, Filters("src", models=("B",)), 5, 0)} == {"B"}
