"""Agreement on real DuckDB stores: scorers and groups, N/A, slices, custom scales, the CLI.

Expected values are computed here from the raw rows with pandas and the reference libraries,
never by the code under test."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from analysis.cli.main import main
from analysis.core.errors import InputError, NotFoundError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views.agreement import AgreementQuery, agreement, for_skill, rater_agreement

TOL = 1e-9
DOMAINS = ["Math", "Coding", "Humanities", "Math;Coding"]  # the last: a two-domain instance


def _rows(seed: int = 0) -> pd.DataFrame:
    """A judge J on everything; humans h1–h3 on most items, with N/A and missing ratings."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(16):
        for m in ("m1", "m2", "m3"):
            for skill in ("correctness", "readability"):
                truth = rng.integers(1, 6)
                base = dict(
                    instance_id=f"q{i}",
                    model=m,
                    skill=skill,
                    domain=DOMAINS[i % 4],
                    difficulty=1 + i % 5,
                )
                j = "" if rng.random() < 0.08 else int(np.clip(truth + rng.integers(-1, 2), 1, 5))
                out.append(base | dict(judge="J", kind="llm", score=j))
                for h in ("h1", "h2", "h3"):
                    if rng.random() < 0.2:
                        continue  # this human did not rate the item
                    s = (
                        ""
                        if rng.random() < 0.05
                        else int(np.clip(truth + rng.integers(-1, 2), 1, 5))
                    )
                    out.append(base | dict(judge=h, kind="human", score=s))
    return pd.DataFrame(out)


@pytest.fixture
def hand(tmp_path) -> tuple[Store, pd.DataFrame]:
    rows = _rows()
    path = tmp_path / "hand.csv"
    rows.to_csv(path, index=False)
    store = Store(tmp_path / "hand.duckdb")
    import_scores(store, path, dataset="hand")
    return store, rows


def _expected_pairs(rows: pd.DataFrame, a: set[str], b: set[str]) -> pd.DataFrame:
    r = rows.assign(score=pd.to_numeric(rows["score"], errors="coerce"))
    key = ["instance_id", "model", "skill"]
    sa = r[r["judge"].isin(a)].groupby(key)["score"].mean()
    sb = r[r["judge"].isin(b)].groupby(key)["score"].mean()
    return pd.concat({"a": sa, "b": sb}, axis=1).dropna().reset_index()


def _value(result, skill, stat):
    """The row of one criterion's statistic; skill None: the all-criteria row."""
    s = for_skill(result.stats, skill)
    return s[s["statistic"] == stat].iloc[0]


def test_judge_vs_mean_of_humans_equals_the_libraries(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("hand"), "J", "kind:human", n_boot=200))
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    assert len(r.pairs) == len(exp)
    for skill in ("correctness", "readability", None):
        e = exp if skill is None else exp[exp["skill"] == skill]
        a, b = e["a"].to_numpy(), e["b"].to_numpy()
        row = _value(r, skill, "pearson")
        assert row["n"] == len(e)
        assert row["n_instances"] == e["instance_id"].nunique()
        assert row["value"] == pytest.approx(stats.pearsonr(a, b).statistic, abs=TOL)
        assert _value(r, skill, "kendall")["value"] == pytest.approx(
            stats.kendalltau(a, b).statistic, abs=TOL
        )
        assert _value(r, skill, "alpha_ordinal")["value"] == pytest.approx(
            krippendorff.alpha(np.vstack([a, b]), level_of_measurement="ordinal"), abs=TOL
        )
        assert _value(r, skill, "mae")["value"] == pytest.approx(np.abs(a - b).mean(), abs=TOL)
        lo, hi = _value(r, skill, "pearson")[["ci_low", "ci_high"]]
        assert lo < row["value"] < hi


def test_na_and_one_sided_items_are_counted_not_paired(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("hand"), "J", "h1", n_boot=50))
    r0 = rows.assign(score=pd.to_numeric(rows["score"], errors="coerce"))
    key = ["instance_id", "model", "skill"]
    j = r0[r0["judge"] == "J"].set_index(key)["score"]
    h = r0[r0["judge"] == "h1"].set_index(key)["score"]
    both = j.index.intersection(h.index)
    counts = r.counts.set_index("skill").sum()
    assert counts["aligned"] == (j[both].notna() & h[both].notna()).sum()
    assert counts["a_na"] == j[both].isna().sum()
    assert counts["b_na"] == h[both].isna().sum()
    assert counts["a_only"] == len(j.index.difference(h.index))
    assert counts["aligned"] == len(r.pairs)


def test_a_member_against_its_group_is_compared_with_the_others(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("hand"), "h1", "kind:human", n_boot=50))
    assert r.b.judges == ("h2", "h3") and any("excludes h1" in n for n in r.notes)
    exp = _expected_pairs(rows, {"h1"}, {"h2", "h3"})
    e = exp[exp["skill"] == "correctness"]
    assert _value(r, "correctness", "spearman")["value"] == pytest.approx(
        stats.spearmanr(e["a"], e["b"]).statistic, abs=TOL
    )


def test_unknown_and_identical_scorers_are_clear_errors(hand):
    store, _ = hand
    with pytest.raises(NotFoundError, match="Known scorers of this dataset: .*h1"):
        agreement(store, AgreementQuery(Filters("hand"), "J", "nobody"))
    with pytest.raises(InputError, match="same scorers"):
        agreement(store, AgreementQuery(Filters("hand"), "J", "J"))
    with pytest.raises(InputError, match="unknown level"):
        agreement(store, AgreementQuery(Filters("hand"), "J", "h1", level="bogus"))


def test_domain_slices_count_a_two_domain_instance_in_both(hand):
    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("hand"), "J", "kind:human", by="domain", n_boot=50))
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    dom = rows.drop_duplicates("instance_id").set_index("instance_id")["domain"].str.split(";")
    exp = exp.assign(domain=exp["instance_id"].map(dom)).explode("domain")
    sl = r.slices[(r.slices["scope"] == "all_criteria") & (r.slices["statistic"] == "pearson")]
    sl = sl.set_index("slice")
    assert set(sl.index) == {"Math", "Coding", "Humanities"}
    for d, e in exp.groupby("domain"):
        assert sl.loc[d, "n"] == len(e)
        assert sl.loc[d, "value"] == pytest.approx(
            stats.pearsonr(e["a"], e["b"]).statistic, abs=TOL
        )
    # the two-domain instance q3 counts in Math and in Coding
    q3 = len(exp[exp["instance_id"] == "q3"]) // 2
    assert (
        sl.loc["Math", "n"] + sl.loc["Coding", "n"] > len(exp[exp["domain"] != "Humanities"]) - q3
    )


def test_instance_and_system_levels_equal_scipy(hand):
    store, rows = hand
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    e = exp[exp["skill"] == "correctness"]
    r = agreement(store, AgreementQuery(Filters("hand"), "J", "kind:human", level="instance"))
    per = [
        stats.spearmanr(g["a"], g["b"]).statistic
        for _, g in e.groupby("instance_id")
        if g["a"].nunique() > 1 and g["b"].nunique() > 1
    ]
    row = _value(r, "correctness", "spearman")
    assert row["level"] == "instance" and row["n"] == len(per)
    assert row["value"] == pytest.approx(np.mean(per), abs=TOL)
    assert row["n_skipped"] == e["instance_id"].nunique() - len(per)
    assert _value(r, "correctness", "mae")["level"] == "pooled"  # items, whatever the level
    s = agreement(store, AgreementQuery(Filters("hand"), "J", "kind:human", level="system"))
    means = e.groupby("model")[["a", "b"]].mean()
    assert _value(s, "correctness", "pearson")["value"] == pytest.approx(
        stats.pearsonr(means["a"], means["b"]).statistic, abs=TOL
    )
    ranks = s.ranks.set_index("skill")
    assert ranks.loc["correctness", "value"] == pytest.approx(
        stats.kendalltau(means["a"], means["b"]).statistic, abs=TOL
    )


def test_human_ceiling_and_raters_equal_krippendorff_with_missing(hand):
    store, rows = hand
    r0 = rows[rows["judge"].str.startswith("h") & (rows["skill"] == "readability")]
    r0 = r0.assign(score=pd.to_numeric(r0["score"], errors="coerce"))
    grid = r0.pivot_table(index="judge", columns=["instance_id", "model"], values="score")
    expected = krippendorff.alpha(grid.to_numpy(), level_of_measurement="ordinal")
    frame = rater_agreement(store, Filters("hand"), "kind:human", n_boot=100)
    got = frame[(frame["skill"] == "readability") & (frame["statistic"] == "alpha_ordinal")]
    assert got["value"].iloc[0] == pytest.approx(expected, abs=TOL)
    assert got["n_raters"].iloc[0] == 3
    named = rater_agreement(store, Filters("hand"), "h1,h2,h3", n_boot=100)
    assert named["value"].to_numpy() == pytest.approx(frame["value"].to_numpy(), abs=TOL)
    with pytest.raises(InputError, match="at least 2 raters"):
        rater_agreement(store, Filters("hand"), "h1")


@pytest.mark.parametrize("scale", [(0, 1), (1, 3), (1, 10)])
def test_custom_criteria_on_their_declared_scale(tmp_path, scale):
    rng = np.random.default_rng(scale[1])
    lo, hi = scale
    rows = []
    for i in range(30):
        for m in ("m1", "m2"):
            t = rng.integers(lo, hi + 1)
            for judge, kind in (("J", "llm"), ("H", "human")):
                s = int(np.clip(t + rng.integers(-1, 2), lo, hi))
                rows.append(
                    dict(
                        instance_id=f"i{i}",
                        model=m,
                        skill="helpful",
                        judge=judge,
                        kind=kind,
                        score=s,
                    )
                )
    df = pd.DataFrame(rows)
    df.to_csv(tmp_path / "c.csv", index=False)
    store = Store(tmp_path / "c.duckdb")
    import_scores(store, tmp_path / "c.csv", dataset="custom", scale=scale)
    r = agreement(store, AgreementQuery(Filters("custom"), "J", "H", n_boot=50))
    p = df.pivot_table(index=["instance_id", "model"], columns="judge", values="score")
    kappa = cohen_kappa_score(p["J"], p["H"], weights="quadratic", labels=list(range(lo, hi + 1)))
    assert _value(r, "helpful", "qwk")["value"] == pytest.approx(kappa, abs=TOL)
    assert r.scales["helpful"] == (lo, hi)


def test_cli_json_has_statistics_per_skill_and_errors_exit_2(hand, capsys):
    store, rows = hand
    code = main(
        [
            "agreement",
            "--db",
            str(store.path),
            "--dataset",
            "hand",
            "--a",
            "J",
            "--b",
            "kind:human",
            "--skill",
            "correctness",
            "--json",
            "--n-boot",
            "100",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    e = exp[exp["skill"] == "correctness"]
    got = out["statistics"]["correctness"]
    assert set(got) >= {
        "spearman",
        "kendall",
        "pearson",
        "mae",
        "exact",
        "within1",
        "qwk",
        "alpha_ordinal",
        "alpha_interval",
    }
    assert got["pearson"]["value"] == pytest.approx(stats.pearsonr(e["a"], e["b"]).statistic)
    assert got["pearson"]["n"] == len(e) and got["pearson"]["ci_low"] < got["pearson"]["value"]
    assert list(out["statistics"]) == ["correctness"]
    code = main(
        [
            "agreement",
            "--db",
            str(store.path),
            "--dataset",
            "hand",
            "--raters",
            "kind:human",
            "--json",
            "--n-boot",
            "50",
        ]
    )
    raters = json.loads(capsys.readouterr().out)
    assert code == 0 and raters["raters"] == ["h1", "h2", "h3"]
    assert {"alpha_ordinal", "alpha_interval"} <= set(raters["alpha"]["readability"])
    code = main(
        ["agreement", "--db", str(store.path), "--dataset", "hand", "--a", "J", "--b", "ghost"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Unknown scorer 'ghost'" in err and "Traceback" not in err


def test_worst_disagreements_are_ranked_and_link_to_the_sample(hand):
    from urllib.parse import parse_qs, urlparse

    from analysis.views.agreement import worst

    store, rows = hand
    r = agreement(store, AgreementQuery(Filters("hand"), "J", "kind:human", n_boot=20))
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    top = worst(r, None, k=5)
    assert top["abs_diff"].iloc[0] == pytest.approx((exp["a"] - exp["b"]).abs().max())
    assert list(top["abs_diff"]) == sorted(top["abs_diff"], reverse=True)
    link = urlparse(top["link"].iloc[0])
    assert link.path == "samples"
    assert parse_qs(link.query) == {
        "dataset": ["hand"],
        "instance": [top["instance_id"].iloc[0]],
        "model": [top["model"].iloc[0]],
    }
    only = worst(r, "readability", k=3)
    assert set(only["skill"]) == {"readability"} and len(only) == 3


def test_a_single_instance_gives_no_ci(tmp_path):
    rows = [
        dict(instance_id="only", model=m, skill="correctness", judge=j, kind=k, score=s)
        for m, (a, b) in zip(["m1", "m2", "m3"], [(1, 2), (3, 3), (5, 4)], strict=True)
        for j, k, s in (("J", "llm", a), ("H", "human", b))
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "one.csv", index=False)
    store = Store(tmp_path / "one.duckdb")
    import_scores(store, tmp_path / "one.csv", dataset="one")
    r = agreement(store, AgreementQuery(Filters("one"), "J", "H", n_boot=50))
    row = _value(r, "correctness", "pearson")
    assert row["value"] == pytest.approx(stats.pearsonr([1, 3, 5], [2, 3, 4]).statistic)
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])


def test_wide_table_gives_level_statistics_their_own_n(hand):
    from analysis.views.agreement_report import wide_table

    store, _ = hand
    r = agreement(store, AgreementQuery(Filters("hand"), "J", "kind:human", level="system"))
    wide = wide_table(r.stats).set_index("skill")
    assert wide.loc["correctness", "Pearson r"].endswith("(n=3 models)")
    assert wide.loc["correctness", "n"] == _value(r, "correctness", "mae")["n"]


def test_default_b_is_not_a_only_human_against_itself(tmp_path):
    from analysis.views.scorers import scorer_choices

    rows = [dict(instance_id="1", model="m", skill="correctness", judge="H", kind="human",
                 score=3), dict(instance_id="1", model="m", skill="correctness", judge="K",
                 kind="human", score=4)]  # fmt: skip
    pd.DataFrame(rows[:1]).to_csv(tmp_path / "h.csv", index=False)
    store = Store(tmp_path / "h.duckdb")
    import_scores(store, tmp_path / "h.csv", dataset="h")
    c = scorer_choices(store, "h")
    assert c.default_a == "H" and c.default_b != "kind:human"


def _overall_rows() -> pd.DataFrame:
    """A criterion literally named "overall" on which J and the humans agree closely, next to
    "fluency" on which J runs against them: the pooled aggregate differs from "overall"."""
    rng = np.random.default_rng(11)
    out = []
    for i in range(20):
        for m in ("m1", "m2", "m3", "m4"):
            for skill in ("overall", "fluency"):
                t = int(rng.integers(1, 6))
                j = t if skill == "overall" else 6 - t
                base = dict(instance_id=f"i{i}", model=m, skill=skill)
                out.append(base | dict(judge="J", kind="llm", score=j))
                for h in ("h1", "h2", "h3"):
                    s = int(np.clip(t + rng.integers(-1, 2), 1, 5))
                    out.append(base | dict(judge=h, kind="human", score=s))
    return pd.DataFrame(out)


@pytest.fixture
def overall(tmp_path) -> tuple[Store, pd.DataFrame]:
    rows = _overall_rows()
    rows.to_csv(tmp_path / "o.csv", index=False)
    store = Store(tmp_path / "o.duckdb")
    import_scores(store, tmp_path / "o.csv", dataset="ov", scale=(1, 5))
    return store, rows


def test_a_criterion_named_overall_keeps_its_value_beside_the_pooled_aggregate(overall):
    from analysis.views.agreement import worst

    store, rows = overall
    r = agreement(store, AgreementQuery(Filters("ov"), "J", "kind:human", by="model", n_boot=50))
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    own = exp[exp["skill"] == "overall"]
    r_own = stats.pearsonr(own["a"], own["b"]).statistic
    r_all = stats.pearsonr(exp["a"], exp["b"]).statistic
    assert r_own > 0.8 and r_all < 0.2  # far apart: a swap could not go unnoticed
    assert _value(r, "overall", "pearson")["value"] == pytest.approx(r_own, abs=TOL)
    assert _value(r, "overall", "pearson")["n"] == len(own)
    assert _value(r, None, "pearson")["value"] == pytest.approx(r_all, abs=TOL)
    assert _value(r, None, "pearson")["n"] == len(exp)
    assert set(r.stats["scope"]) == {"criterion", "all_criteria"}
    assert r.stats.loc[r.stats["scope"] == "all_criteria", "skill"].isna().all()
    # Slices, rank stability and the worst disagreements keep them apart too.
    sl = for_skill(r.slices, "overall")
    m1 = own[own["model"] == "m1"]
    assert sl[(sl["slice"] == "m1") & (sl["statistic"] == "pearson")]["value"].iloc[0] == (
        pytest.approx(stats.pearsonr(m1["a"], m1["b"]).statistic, abs=TOL)
    )
    assert len(for_skill(r.ranks, "overall")) == len(for_skill(r.ranks, None)) == 1
    assert set(worst(r, "overall")["skill"]) == {"overall"}
    assert set(worst(r, None)["skill"]) == {"overall", "fluency"}
    # The ceiling: the criterion's own figures and the pooled ones.
    c = r.ceiling
    own_c = c[(c["scope"] == "criterion") & (c["skill"] == "overall")]
    all_c = c[c["scope"] == "all_criteria"]
    assert len(own_c) and len(all_c) and len(own_c) == len(all_c)


def test_json_and_cli_text_report_overall_and_the_pooled_aggregate_apart(overall, capsys):
    store, rows = overall
    exp = _expected_pairs(rows, {"J"}, {"h1", "h2", "h3"})
    own = exp[exp["skill"] == "overall"]
    rho_own = stats.spearmanr(own["a"], own["b"]).statistic
    rho_all = stats.spearmanr(exp["a"], exp["b"]).statistic
    args = ["agreement", "--db", str(store.path), "--dataset", "ov", "--a", "J"]
    args += ["--b", "kind:human", "--n-boot", "50"]
    assert main([*args, "--json", "--by", "model"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["statistics"]) == {"overall", "fluency"}
    assert out["statistics"]["overall"]["spearman"]["value"] == pytest.approx(rho_own, abs=TOL)
    assert out["all_criteria"]["spearman"]["value"] == pytest.approx(rho_all, abs=TOL)
    assert out["all_criteria"]["spearman"]["n"] == len(exp)
    assert set(out["slices"]["m1"]["statistics"]) == {"overall", "fluency"}
    assert out["slices"]["m1"]["all_criteria"]["pearson"]["n"] == len(exp[exp["model"] == "m1"])
    assert set(out["rank_stability"]["statistics"]) == {"overall", "fluency"}
    assert out["rank_stability"]["all_criteria"]["kendall"]["n"] == 4
    assert set(out["human_ceiling"]["statistics"]) == {"overall", "fluency"}
    assert out["human_ceiling"]["all_criteria"] is not None
    # --skill overall: the criterion alone, no aggregate.
    assert main([*args, "--json", "--skill", "overall"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert list(one["statistics"]) == ["overall"] and one["all_criteria"] is None
    assert one["statistics"]["overall"]["spearman"]["value"] == pytest.approx(rho_own, abs=TOL)
    # The terminal table: a row for the criterion and a row for all criteria pooled.
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(x for x in lines if x.strip().startswith("overall "))
    pooled = next(x for x in lines if x.strip().startswith("All criteria (pooled) "))
    assert row.split()[1] == f"{rho_own:.3f}"
    assert pooled.split()[3] == f"{rho_all:.3f}"
