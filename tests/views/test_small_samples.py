"""Ties and small samples on real DuckDB stores: system-level agreement and rank stability with
equal means built as exact fractions (scipy on fractions.Fraction means, with and without a
skill filter), leaderboard ranks shared by ties with rank intervals checked against an
independent bootstrap, and comparisons resting on one or a few shared instances."""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.stats.means import bootstrap_weights
from analysis.views import agreement_report, overview, radar
from analysis.views.agreement import AgreementQuery, agreement

SKILLS = ("correctness", "readability")
TOL = 1e-9
N_BOOT = 200


def _exact(score) -> Fraction:
    return Fraction(float(score)).limit_denominator(12)


# ------------------------------------------------------------ system level, rank stability


def _agreement_rows(n_models: int, seed: int, n: int = 48) -> pd.DataFrame:
    """Judge J and humans h1–h3. m2 holds m1's items (J's score and the humans' triple) in
    another instance order, per skill: equal means as fractions, summed in another order. m3
    is m1 one point up (capped) on both sides. With 5 models, m4 has m3's J scores with other
    human scores and m5 is random, so the values are not all 1."""
    rng = np.random.default_rng(seed)
    out = []
    for skill in SKILLS:
        j1 = rng.integers(1, 6, n)
        h1 = rng.integers(1, 6, (n, 3)).astype(float)
        h1[rng.random((n, 3)) < 0.1] = np.nan  # a missing rating: halves as well as thirds
        h1[:, 0] = np.where(np.isnan(h1).all(axis=1), 3, h1[:, 0])
        perm = rng.permutation(n)
        models = {
            "m1": (j1, h1),
            "m2": (j1[perm], h1[perm]),
            "m3": (np.minimum(j1 + 1, 5), np.minimum(h1 + 1, 5)),
            "m4": (np.minimum(j1 + 1, 5)[rng.permutation(n)], rng.integers(1, 6, (n, 3))),
            "m5": (rng.integers(1, 6, n), rng.integers(1, 6, (n, 3))),
        }
        for model, (j, h) in list(models.items())[:n_models]:
            for i in range(n):
                base = dict(instance_id=f"q{i:02d}", model=model, skill=skill)
                out.append(base | dict(judge="J", kind="llm", score=int(j[i])))
                for k in range(3):
                    if not np.isnan(h[i, k]):
                        out.append(base | dict(judge=f"h{k + 1}", kind="human", score=int(h[i, k])))
    return pd.DataFrame(out)


def _store(tmp_path, rows: pd.DataFrame, dataset: str) -> Store:
    path = tmp_path / f"{dataset}.csv"
    rows.to_csv(path, index=False)
    store = Store(tmp_path / "s.duckdb")
    import_scores(store, path, dataset=dataset)
    return store


def _exact_model_means(rows: pd.DataFrame, skills) -> pd.DataFrame:
    """Per model: the mean of J and of the humans' per-item mean, as exact fractions."""
    sel = rows[rows["skill"].isin(skills)]
    items = {}
    for (inst, model, skill), g in sel.groupby(["instance_id", "model", "skill"]):
        humans = [Fraction(int(s)) for s in g.loc[g["kind"] == "human", "score"]]
        j = Fraction(int(g.loc[g["judge"] == "J", "score"].iloc[0]))
        items[(inst, model, skill)] = (j, sum(humans, Fraction()) / len(humans))
    out = {}
    for model in sorted(sel["model"].unique()):
        mine = [v for k, v in items.items() if k[1] == model]
        out[model] = (
            sum((a for a, _ in mine), Fraction()) / len(mine),
            sum((b for _, b in mine), Fraction()) / len(mine),
        )
    return pd.DataFrame(out, index=["a", "b"]).T


def _system_values(r, skill) -> dict[str, float]:
    s = r.stats[(r.stats["level"] == "system")]
    s = s[s["skill"] == skill] if skill else s[~s["skill"].isin(SKILLS)]
    return dict(zip(s["statistic"], s["value"], strict=True))


def _rank_stability(r, skill) -> float:
    k = r.ranks[r.ranks["skill"] == skill] if skill else r.ranks[~r.ranks["skill"].isin(SKILLS)]
    return float(k["value"].iloc[0])


@pytest.mark.parametrize("n_models", [3, 5])
def test_system_level_and_rank_stability_equal_scipy_on_exact_means(tmp_path, n_models):
    rows = _agreement_rows(n_models, seed=n_models)
    store = _store(tmp_path, rows, "ties")
    q = AgreementQuery(Filters("ties"), "J", "kind:human", level="system", n_boot=N_BOOT)
    unfiltered = agreement(store, q)
    for skill in (*SKILLS, None):
        means = _exact_model_means(rows, [skill] if skill else SKILLS)
        assert means.loc["m1", "a"] == means.loc["m2", "a"]  # the ties built in
        assert means.loc["m1", "b"] == means.loc["m2", "b"]
        fa, fb = means["a"].map(float), means["b"].map(float)
        expected = {
            "spearman": stats.spearmanr(fa, fb).statistic,
            "kendall": stats.kendalltau(fa, fb).statistic,
            "pearson": stats.pearsonr(fa, fb).statistic,
        }
        if n_models == 3:
            assert expected["spearman"] == pytest.approx(1.0) == expected["kendall"]
        runs = [unfiltered]
        if skill:  # the same value with --skill: other items, other summation order
            runs.append(agreement(store, AgreementQuery(**{**q.__dict__, "skill": skill})))
        for r in runs:
            got = _system_values(r, skill)
            for stat, value in expected.items():
                assert got[stat] == pytest.approx(value, abs=TOL), (skill, stat)
            assert _rank_stability(r, skill) == pytest.approx(expected["kendall"], abs=TOL)


def test_system_level_counts_the_models_a_criterion_has_with_and_without_skill(tmp_path):
    rows = _agreement_rows(5, seed=8)
    rows = rows[~((rows["model"] == "m4") & (rows["skill"] == "readability"))]
    store = _store(tmp_path, rows, "gap")
    q = AgreementQuery(Filters("gap"), "J", "kind:human", level="system", n_boot=N_BOOT)
    means = _exact_model_means(rows, ["readability"])
    fa, fb = means["a"].map(float), means["b"].map(float)
    want = stats.kendalltau(fa, fb).statistic
    for r in (agreement(store, q), agreement(store, replace(q, skill="readability"))):
        s = r.stats[(r.stats["skill"] == "readability") & (r.stats["statistic"] == "kendall")]
        assert s["n"].tolist() == [len(means)] == [4]  # m4 has no readability score
        assert s["value"].iloc[0] == pytest.approx(want, abs=TOL)


# ------------------------------------------------------------ leaderboard ranks and intervals


def _leaderboard_rows() -> pd.DataFrame:
    """Judge j on 30 instances × 2 skills. b and c hold the same scores in thirds (10/3, 11/3)
    in another order: both 3.5 exactly. e (2 instances) and f (1) score 5: few instances."""
    out = []
    thirds = np.tile([10 / 3, 11 / 3], 30)
    shuffled = thirds[np.random.default_rng(1).permutation(60)]
    for i in range(30):
        for s, skill in enumerate(SKILLS):
            base = dict(instance_id=f"i{i:02d}", skill=skill, judge="j", kind="llm")
            out += [
                base | dict(model="a", score=5 if s == 0 else 4),
                base | dict(model="b", score=thirds[2 * i + s]),
                base | dict(model="c", score=shuffled[2 * i + s]),
                base | dict(model="d", score=3),
            ]
            if i < 2:
                out.append(base | dict(model="e", score=5))
            if i == 2:
                out.append(base | dict(model="f", score=5))
    return pd.DataFrame(out)


def _independent_rank_interval(rows: pd.DataFrame, n_boot: int) -> pd.DataFrame:
    """Overall rank and its interval: the same resamples (bootstrap_weights over the sorted
    instances), exact means per resample, scipy's min ranks, whole-rank quantiles."""
    instances = sorted(rows["instance_id"].unique())
    models = sorted(rows["model"].unique())
    per = rows.groupby(["model", "instance_id"])["score"].agg(list)
    w = bootstrap_weights(len(instances), n_boot, 0)
    ranks = np.full((n_boot + 1, len(models)), np.nan)
    for r, row in enumerate([np.ones(len(instances)), *w]):
        means = []
        for m in models:
            num, den = Fraction(), 0
            for k, inst in zip(row.astype(int), instances, strict=True):
                scores = per.get((m, inst), [])
                num += k * sum((_exact(s) for s in scores), Fraction())
                den += k * len(scores)
            means.append(float(num / den) if den else np.nan)
        means = np.array(means)
        ok = ~np.isnan(means)
        ranks[r, ok] = stats.rankdata(-means[ok], method="min")
    return pd.DataFrame(
        {
            "rank": ranks[0],
            "rank_low": np.nanquantile(ranks[1:], 0.025, axis=0, method="lower"),
            "rank_high": np.nanquantile(ranks[1:], 0.975, axis=0, method="higher"),
        },
        index=models,
    )


def test_leaderboard_ties_share_a_rank_and_intervals_equal_an_independent_bootstrap(tmp_path):
    rows = _leaderboard_rows()
    store = _store(tmp_path, rows, "lb")
    board = overview.leaderboard(store, Filters("lb", "j"), n_boot=N_BOOT)
    top = board[board["group"] == overview.OVERALL].set_index("model")
    assert top["rank"].to_dict() == {"e": 1, "f": 1, "a": 3, "b": 4, "c": 4, "d": 6}
    expected = _independent_rank_interval(rows, N_BOOT)
    for col in ("rank", "rank_low", "rank_high"):
        assert top[col].to_dict() == expected[col].to_dict(), col
    assert top["few_instances"].to_dict() == {m: m in "ef" for m in "abcdef"}
    assert np.isnan(top.loc["f", "ci_low"])  # one instance: no CI
    assert top.loc["e", "ci_low"] == top.loc["e", "ci_high"] == 5.0  # two: a CI, marked
    wide = overview.leaderboard_wide(board).set_index("model")
    assert wide["rank"].tolist() == [1, 1, 3, 4, 4, 6]
    assert wide.loc["f", overview.OVERALL] == "5.00 †"
    assert wide.loc["e", overview.OVERALL] == "5.00 [5.00, 5.00] †"
    assert wide.loc["b", overview.OVERALL].startswith("3.50 [") and "†" not in wide.loc["b"].iloc[1]
    assert wide["CI from < 5 instances"].to_dict() == {m: m in "ef" for m in wide.index}
    span = expected.loc["b", ["rank_low", "rank_high"]].astype(int).tolist()
    assert wide.loc["b", "rank 95% interval"] == (
        f"{span[0]}" if span[0] == span[1] else f"{span[0]}–{span[1]}"
    )
    assert "None" not in wide.to_string() and "nan" not in wide.to_string()


def test_radar_default_models_order_ties_by_name_not_by_float_sums(tmp_path):
    rows = _leaderboard_rows()
    store = _store(tmp_path, rows, "lb")
    models = tuple(sorted(rows["model"].unique()))
    got = radar.model_ranking(store, Filters("lb", "j"), models[::-1])
    # Exact means as fractions, best first, ties by name: e = f = 5, a, b = c = 3.5, d.
    exact = {m: sum(map(_exact, g["score"]), Fraction()) / len(g) for m, g in rows.groupby("model")}
    assert exact["b"] == exact["c"] and exact["e"] == exact["f"]
    assert got.ranked == tuple(sorted(models, key=lambda m: (-exact[m], m)))
    assert got.ranked == ("e", "f", "a", "b", "c", "d")
    assert got.defaults(4) == ["e", "f", "a", "b"]


def test_fifteen_models_tied_all_rank_first(tmp_path):
    rows = pd.DataFrame(
        [
            dict(instance_id=f"i{i}", model=f"m{m:02d}", skill="correctness", judge="j", score=4)
            for i in range(3)
            for m in range(15)
        ]
    )
    store = _store(tmp_path, rows, "flat")
    board = overview.leaderboard(store, Filters("flat", "j"), n_boot=N_BOOT)
    top = board[board["group"] == overview.OVERALL]
    assert top["rank"].tolist() == [1] * 15
    assert (top["rank_low"] == 1).all() and (top["rank_high"] == 1).all()
    wide = overview.leaderboard_wide(board)
    assert wide["rank"].tolist() == [1] * 15
    assert (wide[overview.OVERALL] == "4.00 [4.00, 4.00] †").all()  # 3 instances: marked


# ------------------------------------------------------------ comparisons on few instances


def _brute_force_p(d_a, d_b) -> float:
    observed = abs(Fraction(sum(d_a) - sum(d_b), len(d_a)))
    hits = 0
    for swaps in itertools.product([False, True], repeat=len(d_a)):
        a = [y if s else x for x, y, s in zip(d_a, d_b, swaps, strict=True)]
        b = [x if s else y for x, y, s in zip(d_a, d_b, swaps, strict=True)]
        hits += abs(Fraction(sum(a) - sum(b), len(a))) >= observed
    return hits / 2 ** len(d_a)


def test_one_shared_instance_is_never_significant_and_few_get_an_exact_p(tmp_path):
    store = _store(tmp_path, _leaderboard_rows(), "lb")
    f = Filters("lb", "j")
    one = radar.compare(store, f, "f", "d", n_boot=N_BOOT).set_index("axis")
    for skill in SKILLS:  # f beats d by 2 on its single instance: CI [2, 2], p = 0.002 before
        row = one.loc[skill]
        assert row["diff"] == 2.0 and row["n_shared"] == 1
        assert np.isnan(row["p"]) and np.isnan(row["p_holm"]) and not row["significant"]
        assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"]) and row["few_instances"]
        assert row["test"] == "no test" and "one shared instance" in row["note"]
    two = radar.compare(store, f, "e", "d", n_boot=N_BOOT).set_index("axis")
    assert two.loc["correctness", "p"] == _brute_force_p([5, 5], [3, 3]) == 0.5
    assert two.loc["correctness", "test"] == "exact sign-flip test"
    assert not two["significant"].any() and two["few_instances"].all()
    many = radar.compare(store, f, "a", "d", n_boot=N_BOOT).set_index("axis")
    assert (many["test"] == "paired bootstrap").all() and many["significant"].all()
    shown = radar.compare_table(one)
    assert shown["p"].tolist() == ["", ""] and shown["Significant (Holm p < 0.05)"].eq("").all()
    assert shown["A − B [95% CI]"].tolist() == ["2.00 †", "2.00 †"]


def test_agreement_marks_figures_resting_on_few_instances(tmp_path):
    rng = np.random.default_rng(3)
    rows = pd.DataFrame(
        [
            dict(instance_id=f"i{i}", model=m, skill="correctness", judge=j, kind=k,
                 score=int(rng.integers(1, 6)))
            for i in range(6)
            for m in ("m1", "m2")
            for j, k in (("J", "llm"), ("h1", "human"), ("h2", "human"))
            if m == "m1" or i < 3  # m2 answered 3 instances only
        ]
    )  # fmt: skip
    store = _store(tmp_path, rows, "few")
    r = agreement(store, AgreementQuery(Filters("few"), "J", "h1", by="model", n_boot=N_BOOT))
    per = r.slices.set_index("slice")
    n_inst = rows.groupby("model")["instance_id"].nunique()
    assert per["n_instances"].groupby(level=0).first().to_dict() == n_inst.to_dict() == {
        "m1": 6, "m2": 3}  # fmt: skip
    assert per["few_instances"].groupby(level=0).all().to_dict() == {"m1": False, "m2": True}
    assert not r.stats["few_instances"].any()  # 6 instances in all
    shown = agreement_report.wide_table(r.slices, "slice").set_index("slice")
    assert shown.loc["m2", "Pearson r"].endswith(" †") and "†" not in shown.loc["m1", "Pearson r"]
    assert shown["CI from < 5 instances"].to_dict() == {"m1": "", "m2": "yes"}
    assert "† CI from < 5 instances" in agreement_report.slices_text(r)
    slices = agreement_report.to_dict(r)["slices"]
    assert slices["m2"]["statistics"]["correctness"]["pearson"]["few_instances"] is True
    assert slices["m1"]["statistics"]["correctness"]["pearson"]["few_instances"] is False
