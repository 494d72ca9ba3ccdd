"""Length bias (analysis/views/judge_length.py) against scipy.stats on stores written through
the real score importer: per-instance and pooled Pearson and Spearman with ties, skipped
instances (a constant side, one response), the humans' mean per item, the paired excess and
its CI against a direct bootstrap (resampled instances expanded row by row), the flag rule,
and the simulated demo panel."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.demo_panel import CLAUDE, LENIENT, VERBOSE
from analysis.ingest.score_files import import_scores
from analysis.stats.means import bootstrap_weights
from analysis.views import judge_length as jl
from analysis.views.judge_length import HUMANS, LengthQuery

N_BOOT = 200
CORR = {"pearson": stats.pearsonr, "spearman": stats.spearmanr}

# instance → model → (length, judge score, h1, h2); None = N/A or not scored.
HAND = {
    "i1": {"m1": (100, 2, 2, 3), "m2": (250, 3, 3, 3), "m3": (250, 5, 4, None),
           "m4": (90, 1, 2, 2)},
    "i2": {"m1": (400, 4, 3, 4), "m2": (120, 2, 2, 2), "m3": (300, 4, 5, 4)},
    "i3": {"m1": (50, 3, 1, 1), "m2": (500, 3, 4, 4), "m3": (800, 3, 5, 4)},  # judge constant
    "i4": {"m1": (310, 5, 4, 5)},  # one response: no within-instance correlation
    "i5": {"m1": (200, 1, 3, 3), "m2": (210, 4, 3, 3), "m3": (990, 5, 4, 3),
           "m4": (15, None, 1, 2)},
    "i6": {"m2": (60, 2, 2, 1), "m3": (640, 4, 4, 4), "m4": (640, 3, None, 3)},
}  # fmt: skip
SKILL = "correctness"


def _write(store: Store, tmp_path, data: dict, judges=("judge-a",), dataset="hand") -> None:
    """One CSV through import_scores: each value is (length, *judges' scores, h1, h2); the
    response text sets the stored length."""
    names = [*judges, "h1", "h2"]
    kinds = ["llm"] * len(judges) + ["human", "human"]
    rows = []
    for inst, models in data.items():
        for model, (length, *scores) in models.items():
            for judge, kind, score in zip(names, kinds, scores, strict=True):
                rows.append({
                    "instance_id": inst, "model": model, "judge": judge, "kind": kind,
                    "skill": SKILL, "score": "" if score is None else score,
                    "instruction": f"Question {inst}.", "response": "x" * length,
                })  # fmt: skip
    path = tmp_path / f"{dataset}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    import_scores(store, path, dataset=dataset)


def _long(data: dict) -> pd.DataFrame:
    """The hand data as items: length, judge, humans (mean of the non-N/A human scores)."""
    rows = []
    for inst, models in data.items():
        for model, (length, j, h1, h2) in models.items():
            hs = [h for h in (h1, h2) if h is not None]
            rows.append({"instance_id": inst, "model": model, "length": float(length),
                         "judge": np.nan if j is None else float(j),
                         "humans": np.mean(hs) if hs else np.nan})  # fmt: skip
    return pd.DataFrame(rows).sort_values(["instance_id", "model"]).reset_index(drop=True)


def _within(df: pd.DataFrame, col: str, method: str) -> dict[str, float]:
    """scipy per instance, over the models with a score; constant sides and < 2 skipped."""
    out = {}
    for inst, g in df.dropna(subset=[col]).groupby("instance_id"):
        if len(g) < 2 or g[col].nunique() < 2 or g["length"].nunique() < 2:
            continue
        out[inst] = CORR[method](g["length"], g[col])[0]
    return out


def _pooled(df: pd.DataFrame, col: str, method: str) -> float:
    g = df.dropna(subset=[col])
    return CORR[method](g["length"], g[col])[0]


def _by_model(df: pd.DataFrame, col: str, method: str) -> float:
    means = df.dropna(subset=[col]).groupby("model")[["length", col]].mean()
    return CORR[method](means["length"], means[col])[0]


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else np.nan


def _row(r, scorer: str, level: str, skill: str = SKILL) -> pd.Series:
    t = r.table
    sel = t[(t["scorer"] == scorer) & (t["level"] == level) & (t["skill"] == skill)]
    assert len(sel) == 1, sel
    return sel.iloc[0]


@pytest.fixture
def hand(tmp_path) -> Store:
    store = Store(tmp_path / "hand.duckdb")
    _write(store, tmp_path, HAND)
    return store


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_point_values_and_counts_match_scipy(hand, method):
    df = _long(HAND)
    r = jl.length_bias(hand, LengthQuery(Filters("hand"), method, n_boot=N_BOOT))
    for scorer, col in (("judge-a", "judge"), (HUMANS, "humans")):
        per = _within(df, col, method)
        inst = _row(r, scorer, "instance")
        assert inst["r"] == pytest.approx(np.mean(list(per.values())), abs=1e-12)
        assert inst["n_instances"] == len(per)
        scored = df.dropna(subset=[col])
        assert inst["n_skipped"] == scored["instance_id"].nunique() - len(per)
        pooled = _row(r, scorer, "pooled")
        assert pooled["r"] == pytest.approx(_pooled(df, col, method), abs=1e-12)
        assert pooled["n"] == len(scored) == inst["n"]
        assert pooled["n_instances"] == scored["instance_id"].nunique()
        # Model level: each model's mean length against its mean score (FLASK Table 5).
        means = scored.groupby("model")[["length", col]].mean()
        model = _row(r, scorer, "model")
        assert model["r"] == pytest.approx(CORR[method](means["length"], means[col])[0])
        assert model["n_models"] == len(means) == 4
    # The judge: i3 constant (3, 3, 3) and i4 a single response are skipped.
    assert set(_within(df, "judge", method)) == {"i1", "i2", "i5", "i6"}
    assert _row(r, "judge-a", "instance")["n_skipped"] == 2


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_cis_and_paired_excess_match_a_direct_bootstrap(hand, method):
    df = _long(HAND)
    r = jl.length_bias(hand, LengthQuery(Filters("hand"), method, n_boot=N_BOOT, seed=3))
    instances = sorted(df["instance_id"].unique())  # the clusters, in the order of the weights
    weights = bootstrap_weights(len(instances), N_BOOT, 3)
    shared = df.dropna(subset=["judge", "humans"])
    boots = {k: [] for k in ("own_inst", "own_pool", "ex_inst", "ex_pool", "ex_model")}
    for w in weights:
        reps = dict(zip(instances, w.astype(int), strict=True))
        # Each drawn instance is a separate copy: per-instance values count once per copy.
        expanded = pd.concat([g.assign(instance_id=f"{i}#{c}") for i, g in df.groupby("instance_id")
                              for c in range(reps[i])], ignore_index=True)  # fmt: skip
        both = expanded.dropna(subset=["judge", "humans"])
        pj, ph = _within(both, "judge", method), _within(both, "humans", method)
        diffs = [pj[k] - ph[k] for k in pj if k in ph]
        boots["own_inst"].append(_mean(list(_within(expanded, "judge", method).values())))
        boots["own_pool"].append(_pooled(expanded, "judge", method))
        boots["ex_inst"].append(_mean(diffs))
        boots["ex_pool"].append(_pooled(both, "judge", method) - _pooled(both, "humans", method))
        boots["ex_model"].append(
            _by_model(both, "judge", method) - _by_model(both, "humans", method)
        )
    q = {k: np.nanquantile(np.array(v, dtype=float), [0.025, 0.975]) for k, v in boots.items()}
    inst, pooled = _row(r, "judge-a", "instance"), _row(r, "judge-a", "pooled")
    assert np.isfinite([inst["ci_low"], inst["excess_low"], pooled["excess_high"]]).all()
    assert [inst["ci_low"], inst["ci_high"]] == pytest.approx(q["own_inst"], abs=1e-9)
    assert [pooled["ci_low"], pooled["ci_high"]] == pytest.approx(q["own_pool"], abs=1e-9)
    assert [inst["excess_low"], inst["excess_high"]] == pytest.approx(q["ex_inst"], abs=1e-9)
    assert [pooled["excess_low"], pooled["excess_high"]] == pytest.approx(q["ex_pool"], abs=1e-9)
    model = _row(r, "judge-a", "model")
    assert [model["excess_low"], model["excess_high"]] == pytest.approx(q["ex_model"], abs=1e-9)
    assert not model["flagged"]  # the model level never flags
    # The point excess: the judge's minus the humans' correlation on the items both scored.
    pj, ph = _within(shared, "judge", method), _within(shared, "humans", method)
    assert inst["excess"] == pytest.approx(np.mean([pj[k] - ph[k] for k in pj if k in ph]))
    assert pooled["excess"] == pytest.approx(
        _pooled(shared, "judge", method) - _pooled(shared, "humans", method)
    )
    # Six instances: far below the minimum, so nothing is flagged whatever the CI says.
    assert not r.table["flagged"].any()
    assert (r.table.loc[r.table["kind"] == "llm", "n_paired"] < jl.MIN_INSTANCES).all()


def _simulated(n_inst: int, rng: np.random.Generator) -> dict:
    """Humans and a fair judge follow quality; a verbose judge follows length within each
    instance too. Values: (length, fair, verbose, h1, h2)."""
    out = {}
    for i in range(n_inst):
        out[f"s{i:03d}"] = models = {}
        for m in range(5):
            length = int(rng.integers(80, 2000))
            quality = rng.normal(3, 1)
            z = (np.log(length) - np.log(1000)) / 0.8
            noisy = [quality + rng.normal(0, 0.5) for _ in range(3)]
            fair, h1, h2 = (int(np.clip(np.rint(v), 1, 5)) for v in noisy)
            verbose = int(np.clip(np.rint(quality + 1.2 * z + rng.normal(0, 0.3)), 1, 5))
            models[f"m{m}"] = (length, fair, verbose, h1, h2)
    return out


def test_a_judge_whose_score_rises_with_length_is_flagged_and_a_fair_one_is_not(tmp_path):
    store = Store(tmp_path / "sim.duckdb")
    data = _simulated(80, np.random.default_rng(7))
    _write(store, tmp_path, data, judges=("fair-judge", "verbose-judge"), dataset="sim")
    for method in jl.METHODS:
        r = jl.length_bias(store, LengthQuery(Filters("sim"), method, n_boot=N_BOOT))
        verbose = _row(r, "verbose-judge", "instance")
        assert verbose["flagged"] and verbose["direction"] == "favours longer"
        assert verbose["excess"] >= jl.PRACTICAL_R and verbose["excess_low"] > 0
        assert verbose["n_paired"] >= jl.MIN_INSTANCES
        fair = r.table[r.table["scorer"] == "fair-judge"]
        assert not fair["flagged"].any(), fair


def test_demo_verbose_judge_flagged_and_judges_without_length_bias_are_not(demo_db):
    r = jl.length_bias(Store(demo_db), LengthQuery(Filters("demo")))
    t = r.table
    inst = t[t["level"] == "instance"]
    verbose = inst[inst["scorer"] == VERBOSE].set_index("skill")
    assert verbose["flagged"].all(), verbose[["excess", "excess_low", "excess_high"]]
    # Conciseness is simulated the other way round: shorter answers score higher.
    assert (verbose.loc[verbose.index != "conciseness", "direction"] == "favours longer").all()
    assert verbose.loc["conciseness", "direction"] == "favours shorter"
    # No length in their simulation: not flagged on any skill at either level.
    assert not t.loc[t["scorer"].isin([LENIENT, CLAUDE]), "flagged"].any()
    # FLASK's published figure beside every FLASK skill.
    assert t["published"].notna().all()
    assert t.loc[t["skill"] == "conciseness", "published"].iloc[0] == pytest.approx(-0.725)


def test_scatter_bins_hold_every_item_and_match_pandas(hand):
    df = _long(HAND)
    s = jl.length_scatter(hand, jl.ScatterQuery(Filters("hand"), "judge-a", SKILL, n_boot=50))
    judge = s.bins[s.bins["scorer"] == "judge-a"]
    scored = df.dropna(subset=["judge"])
    assert judge["n"].sum() == len(scored) == s.n_items
    for _, b in judge.iterrows():
        last = b["hi"] == scored["length"].max()
        inside = scored[(scored["length"] >= b["lo"]) & ((scored["length"] < b["hi"]) | last)]
        assert b["mean"] == pytest.approx(inside["judge"].mean())
        assert b["ci_low"] <= b["mean"] <= b["ci_high"]
    assert len(s.points) == len(scored)  # fewer than MAX_POINTS: every item
    humans = s.bins[s.bins["scorer"] == HUMANS]
    assert humans["n"].sum() == scored["humans"].notna().sum()


def test_no_humans_gives_each_judges_own_correlation_and_no_flag(tmp_path):
    data = {i: {m: (v[0], v[1], None, None) for m, v in ms.items()} for i, ms in HAND.items()}
    # (h1 and h2 all N/A: no human score at all)
    store = Store(tmp_path / "nohum.duckdb")
    _write(store, tmp_path, data)
    r = jl.length_bias(store, LengthQuery(Filters("hand"), n_boot=N_BOOT))
    assert set(r.table["scorer"]) == {"judge-a"}
    assert not r.table["flagged"].any() and r.table["excess"].isna().all()
    assert any("No human scores" in n for n in r.notes)


def test_empty_slice_says_why(hand):
    r = jl.length_bias(hand, LengthQuery(Filters("hand", models=("nobody",)), n_boot=N_BOOT))
    assert r.empty is not None and r.table.empty


def test_export_holds_every_figure_and_neutralises_formula_names(tmp_path):
    store = Store(tmp_path / "evil.duckdb")
    _write(store, tmp_path, HAND, judges=("=HYPERLINK(1)",))
    r = jl.length_bias(store, LengthQuery(Filters("hand"), n_boot=N_BOOT))
    csv = pd.read_csv(io.BytesIO(jl.length_export(r)), encoding="utf-8-sig")
    assert len(csv) == len(r.table) == 6  # two scorers × three levels
    assert set(csv["Scorer"]) == {"'=HYPERLINK(1)", "Humans (mean)"}
    assert csv["r"].tolist() == pytest.approx(r.table["r"].tolist(), abs=1e-12)
    typed = pd.read_parquet(io.BytesIO(jl.length_export(r, "parquet")))
    assert set(typed["Scorer"]) == {"=HYPERLINK(1)", "Humans (mean)"}
    assert typed["Excess 95% CI low"].dtype == float
