"""The fair human ceiling: leave-one-out agreement of each human with the mean of the other
humans, beside the judge against that same mean on the same items.

Expected values are computed here from the raw rows with pandas and scipy / krippendorff (the
held-out pairs built per human with a plain join, not the view's self-merge), never by the code
under test. The demo test shows what the page reports on the simulated data."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.cli.main import main
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.stats.means import bootstrap_weights
from analysis.views.agreement import AgreementQuery, agreement
from analysis.views.agreement_report import ceiling_table, to_dict

TOL = 1e-9
KEY = ["instance_id", "model", "skill"]
HUMANS = ("h1", "h2", "h3")


def _rows(seed: int = 5) -> pd.DataFrame:
    """Judge J and humans h1–h3 on 2 criteria; humans skip items (some items get one human
    only), answer N/A now and then, and J is N/A on some items."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(18):
        for m in ("m1", "m2", "m3"):
            for skill in ("correctness", "readability"):
                truth = rng.integers(1, 6)
                base = dict(instance_id=f"q{i}", model=m, skill=skill)
                j = "" if rng.random() < 0.1 else int(np.clip(truth + rng.integers(-1, 2), 1, 5))
                out.append(base | dict(judge="J", kind="llm", score=j))
                for h in HUMANS:
                    if rng.random() < 0.3:
                        continue
                    s = (
                        ""
                        if rng.random() < 0.08
                        else int(np.clip(truth + rng.integers(-2, 2), 1, 5))
                    )
                    out.append(base | dict(judge=h, kind="human", score=s))
    return pd.DataFrame(out)


@pytest.fixture
def hand(tmp_path) -> tuple[Store, pd.DataFrame]:
    rows = _rows()
    rows.to_csv(tmp_path / "c.csv", index=False)
    store = Store(tmp_path / "c.duckdb")
    import_scores(store, tmp_path / "c.csv", dataset="ceil")
    return store, rows.assign(score=pd.to_numeric(rows["score"], errors="coerce"))


def expected_pairs(rows: pd.DataFrame, humans, judge: str) -> pd.DataFrame:
    """Per held-out human: its score, the mean of the other humans' scores, the judge's score,
    on the items where all three exist (N/A = no score)."""
    scored = rows.dropna(subset=["score"])
    j = scored[scored["judge"] == judge].set_index(KEY)["score"]
    parts = []
    for h in humans:
        mine = scored[scored["judge"] == h].set_index(KEY)["score"]
        rest = scored[scored["judge"].isin(set(humans) - {h})].groupby(KEY)["score"].mean()
        both = pd.concat({"x": mine, "ref": rest, "j": j}, axis=1, join="inner")
        parts.append(both.assign(human=h))
    return pd.concat(parts).reset_index()


def _lin_ccc(a, b) -> float:
    sab = np.mean((a - a.mean()) * (b - b.mean()))
    return 2 * sab / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)


def reference(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    d = np.abs(a - b)
    return {
        "spearman": stats.spearmanr(a, b).statistic,
        "kendall": stats.kendalltau(a, b, variant="b").statistic,
        "pearson": stats.pearsonr(a, b).statistic,
        "mae": d.mean(),
        "exact": float(np.mean(d < 1e-12)),
        "within1": float(np.mean(d <= 1 + 1e-12)),
        "qwk": _lin_ccc(a, b),  # the weighted κ of real-valued scores (means of humans)
        "alpha_ordinal": krippendorff.alpha(np.vstack([a, b]), level_of_measurement="ordinal"),
        "alpha_interval": krippendorff.alpha(np.vstack([a, b]), level_of_measurement="interval"),
    }


def _fig(r, figure: str, skill: str | None) -> pd.DataFrame:
    c = r.ceiling
    scope = c["scope"] == ("all_criteria" if skill is None else "criterion")
    sel = c[scope & (c["figure"] == figure)]
    sel = sel if skill is None else sel[sel["skill"] == skill]
    return sel.set_index("statistic")


def test_leave_one_out_and_the_judge_on_the_same_items_equal_pandas_and_scipy(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("ceil"), "J", "kind:human", n_boot=100))
    exp = expected_pairs(rows, HUMANS, "J")
    assert r.humans == HUMANS
    for skill in ("correctness", "readability", None):
        e = exp if skill is None else exp[exp["skill"] == skill]
        x, j, ref = (e[c].to_numpy(float) for c in ("x", "j", "ref"))
        human, judge = _fig(r, "human_ceiling", skill), _fig(r, "judge_same_reference", skill)
        gap = _fig(r, "judge_minus_human", skill)
        want_h, want_j = reference(x, ref), reference(j, ref)
        for stat in want_h:
            assert human.loc[stat, "value"] == pytest.approx(want_h[stat], abs=TOL), stat
            assert judge.loc[stat, "value"] == pytest.approx(want_j[stat], abs=TOL), stat
            assert gap.loc[stat, "value"] == pytest.approx(want_j[stat] - want_h[stat], abs=TOL)
        for f in (human, judge, gap):  # the same items on both sides
            assert (f["n"] == len(e)).all()
            assert (f["n_items"] == len(e.drop_duplicates(KEY))).all()
            assert (f["n_instances"] == e["instance_id"].nunique()).all()
            assert (f["n_humans"] == 3).all()
    # Items with a single human, or no judge score, take no part.
    one = rows.dropna(subset=["score"])
    one = one[one["judge"].isin(HUMANS)].groupby(KEY).size()
    assert (one == 1).any() and len(exp.drop_duplicates(KEY)) < len(one)


def test_ceiling_cis_come_from_the_page_resamples_and_the_gap_is_paired(hand):
    store, rows = hand
    n_boot, seed = 60, 4
    r = agreement(
        store, AgreementQuery(Filters("ceil"), "J", "kind:human", n_boot=n_boot, seed=seed)
    )
    exp = expected_pairs(rows, HUMANS, "J")
    e = exp[exp["skill"] == "correctness"]
    # The page's instances, in its order, and its resamples (shared by every figure).
    instances = pd.Index(r.pairs["instance_id"].unique())
    w = bootstrap_weights(len(instances), n_boot, seed)
    col = instances.get_indexer(e["instance_id"])
    h, j = [], []
    for row in w:
        rep = row[col].astype(int)
        x, jj, ref = (np.repeat(e[c].to_numpy(float), rep) for c in ("x", "j", "ref"))
        h.append(stats.pearsonr(x, ref).statistic)
        j.append(stats.pearsonr(jj, ref).statistic)
    h, j = np.array(h), np.array(j)
    for figure, boot in (
        ("human_ceiling", h),
        ("judge_same_reference", j),
        ("judge_minus_human", j - h),
    ):
        got = _fig(r, figure, "correctness").loc["pearson"]
        lo, hi = np.nanquantile(boot, [0.025, 0.975])
        assert got["ci_low"] == pytest.approx(lo, abs=1e-9)
        assert got["ci_high"] == pytest.approx(hi, abs=1e-9)


def test_pairwise_alpha_among_individual_humans_equals_krippendorff(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("ceil"), "J", "kind:human", n_boot=50))
    h = rows[rows["judge"].isin(HUMANS) & (rows["skill"] == "readability")]
    grid = h.pivot_table(index="judge", columns=["instance_id", "model"], values="score")
    alpha = _fig(r, "human_pairwise_alpha", "readability").loc["alpha_ordinal"]
    want = krippendorff.alpha(grid.to_numpy(), level_of_measurement="ordinal")
    assert alpha["value"] == pytest.approx(want, abs=TOL)
    assert alpha["n_humans"] == 3


def test_a_human_as_a_is_held_against_the_other_humans_only(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("ceil"), "h1", "kind:human", n_boot=30))
    assert r.humans == ("h2", "h3")
    exp = expected_pairs(rows, ("h2", "h3"), "h1")
    e = exp[exp["skill"] == "correctness"]
    got = _fig(r, "judge_same_reference", "correctness").loc["spearman", "value"]
    assert got == pytest.approx(stats.spearmanr(e["j"], e["ref"]).statistic, abs=TOL)
    # With two humans, "the mean of the others" is the other human.
    assert (e["ref"] % 1 == 0).all()


def test_fewer_than_two_other_humans_give_no_ceiling_and_say_why(hand):
    store, _ = hand
    r = agreement(store, AgreementQuery(Filters("ceil"), "J", "h1", n_boot=20))
    assert not r.ceiling.empty  # B does not matter: the panel is every human
    rows = _rows()
    rows = rows[~rows["judge"].isin(["h2", "h3"])]
    path = store.path.parent / "one.csv"
    rows.to_csv(path, index=False)
    import_scores(store, path, dataset="one")
    r1 = agreement(store, AgreementQuery(Filters("one"), "J", "kind:human", n_boot=20))
    assert r1.ceiling.empty
    assert any("Fewer than 2 human raters" in n for n in r1.notes)
    assert to_dict(r1)["human_ceiling"]["statistics"] == {}


def test_json_and_cli_say_which_figure_is_which(hand, capsys):
    store, rows = hand
    args = ["agreement", "--db", str(store.path), "--dataset", "ceil", "--a", "J"]
    assert main([*args, "--b", "kind:human", "--json", "--n-boot", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    ceiling = out["human_ceiling"]
    assert ceiling["judge"] == "J" and ceiling["humans"] == list(HUMANS)
    assert "mean of the other humans" in ceiling["method"]
    assert set(ceiling["figures"]) == {
        "human_ceiling",
        "judge_same_reference",
        "judge_minus_human",
        "human_pairwise_alpha",
    }
    exp = expected_pairs(rows, HUMANS, "J")
    per = ceiling["statistics"]["readability"]
    e = exp[exp["skill"] == "readability"]
    assert per["human_ceiling"]["spearman"]["value"] == pytest.approx(
        stats.spearmanr(e["x"], e["ref"]).statistic, abs=TOL
    )
    assert per["judge_same_reference"]["spearman"]["n"] == len(e)
    pooled = ceiling["all_criteria"]
    assert pooled["judge_same_reference"]["pearson"]["value"] == pytest.approx(
        stats.pearsonr(exp["j"], exp["ref"]).statistic, abs=TOL
    )
    assert main([*args, "--b", "kind:human", "--n-boot", "50"]) == 0
    text = capsys.readouterr().out
    assert "One human vs the mean of the other humans (the human ceiling):" in text
    assert "Judge (A) vs that same mean of the other humans, on the same items:" in text
    assert "Krippendorff's α among the individual humans:" in text


def test_ceiling_table_pairs_the_comparable_figures(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("ceil"), "J", "kind:human", n_boot=50))
    table = ceiling_table(r, "mae").set_index("Skill")
    exp = expected_pairs(rows, HUMANS, "J")
    assert list(table.index) == ["Logical Correctness", "Readability", "All criteria (pooled)"]
    cell = table.loc["All criteria (pooled)"]
    human = np.abs(exp["x"] - exp["ref"]).mean()
    judge = np.abs(exp["j"] - exp["ref"]).mean()
    assert cell["Human vs the other humans (ceiling)"].startswith(f"{human:.2f} [")
    assert cell["Judge (A) vs the same humans, same items"].startswith(f"{judge:.2f} [")
    assert cell["Judge − human (paired 95% CI)"].startswith(f"{judge - human:.2f} [")
    assert cell["Pairs (item × held-out human)"] == len(exp)
    assert cell["Humans held out"] == 3


def _demo_rows(db) -> pd.DataFrame:
    with Store(db).read() as con:
        return con.execute(
            "SELECT s.instance_id, s.model, s.skill, s.judge, s.score, j.kind "
            "FROM latest_scores s JOIN judges j USING (judge) WHERE s.dataset = 'demo'"
        ).df()


def test_on_the_demo_the_judge_is_set_beside_a_comparable_ceiling(demo_db):
    """The page used to set "judge vs the mean of 3 humans" beside "α between single humans".
    Now the judge's figure beside the ceiling is against the same mean of the other humans on
    the same items, and it is lower than the judge's agreement with the mean of all three
    (averaging had removed human noise from one side only)."""
    judge = "gpt-4 (simulated)"
    r = agreement(Store(demo_db), AgreementQuery(Filters("demo"), judge, "kind:human", n_boot=200))
    rows = _demo_rows(demo_db)
    humans = tuple(sorted(rows.loc[rows["kind"] == "human", "judge"].unique()))
    assert r.humans == humans == ("annotator_1", "annotator_2", "annotator_3")
    exp = expected_pairs(rows, humans, judge)
    report = to_dict(r)["human_ceiling"]
    skills = sorted(exp["skill"].unique())
    assert len(skills) == 12
    for skill in [*skills, None]:
        e = exp if skill is None else exp[exp["skill"] == skill]
        got = report["all_criteria"] if skill is None else report["statistics"][skill]
        for stat, fn in (("spearman", stats.spearmanr), ("pearson", stats.pearsonr)):
            h = fn(e["x"], e["ref"]).statistic
            j = fn(e["j"], e["ref"]).statistic
            assert got["human_ceiling"][stat]["value"] == pytest.approx(h, abs=TOL)
            assert got["judge_same_reference"][stat]["value"] == pytest.approx(j, abs=TOL)
            # The old, flattering pair: the judge against the mean of all the humans.
            all_humans = r.stats[(r.stats["statistic"] == stat)]
            all_humans = all_humans[
                (all_humans["scope"] == "all_criteria")
                if skill is None
                else (all_humans["skill"] == skill)
            ]
            assert got["judge_same_reference"][stat]["value"] < all_humans["value"].iloc[0]
        assert got["judge_same_reference"]["spearman"]["n"] == len(e)
