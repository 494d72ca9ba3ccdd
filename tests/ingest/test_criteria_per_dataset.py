"""Criteria belong to their dataset: two datasets share the name "coherence" on 1-3 and 1-5, with
their own labels and rubrics, in one store; every page reads each dataset's own scale and label.
And "did you mean" hints only for names close to the dataset's own criteria (or to FLASK's
skills on FLASK-shaped data).

Expected values are computed here from the raw rows with pandas and scikit-learn.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis.core import score_sums
from analysis.core.errors import InputError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from analysis.views import annotate, breakdowns, overview, radar, samples
from analysis.views.agreement import AgreementQuery, agreement
from judges.config import JudgeConfig
from judges.plan import load_rubrics
from judges.prompts import rubrics_from_store
from tests.mini_flask import query, snapshot

SCALES = {  # dataset → criterion → scale
    "short": {"coherence": (1, 3), "passed": (0, 1)},
    "long": {"coherence": (1, 5), "readability": (1, 5)},  # readability: FLASK's skill
}
TEXTS = {  # dataset → (label, rubric) given to its own "coherence"
    "short": ("Coherence (3-point)", ["incoherent", "partly", "coherent"]),
    "long": ("Coherence (5-point)", ["none", "weak", "fair", "good", "full"]),
}


def _rows(dataset: str, seed: int) -> pd.DataFrame:
    """Judge j (llm) and human h on 12 instances x 2 models x the dataset's criteria: integer
    scores on each criterion's scale, the human near the judge, a few N/A."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(12):
        for m in ("m1", "m2"):
            for skill, (lo, hi) in SCALES[dataset].items():
                truth = int(rng.integers(lo, hi + 1))
                for judge, kind in (("j", "llm"), ("h", "human")):
                    s = int(np.clip(truth + rng.integers(-1, 2), lo, hi))
                    out.append(dict(instance_id=f"{dataset[0]}{i}", model=m, skill=skill,
                                    judge=judge, kind=kind, difficulty=1 + i % 3,
                                    score=None if rng.random() < 0.06 else s))  # fmt: skip
    return pd.DataFrame(out)


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> tuple[Store, dict[str, pd.DataFrame]]:
    root = tmp_path_factory.mktemp("two")
    store = Store(root / "two.duckdb")
    data = {"short": _rows("short", 1), "long": _rows("long", 2)}
    # "short" declares its scales in columns; "long" gives coherence's with --scale.
    short = data["short"].assign(
        scale_min=[SCALES["short"][s][0] for s in data["short"]["skill"]],
        scale_max=[SCALES["short"][s][1] for s in data["short"]["skill"]],
    )
    short.to_csv(root / "short.csv", index=False)
    data["long"].to_csv(root / "long.csv", index=False)
    first = import_scores(store, root / "short.csv", dataset="short")
    second = import_scores(store, root / "long.csv", dataset="long", scale=(1, 5))
    assert first.counts["scores"] == len(data["short"])  # both imports succeed, in full
    assert second.counts["scores"] == len(data["long"])
    with store.write() as con:  # each dataset's own label and rubric for its "coherence"
        for d, (label, rubric) in TEXTS.items():
            con.execute("UPDATE criteria SET label = ?, rubric = ?, definition = ? "
                        "WHERE dataset = ? AND skill = 'coherence'",
                        [label, rubric, f"{d} coherence", d])  # fmt: skip
            # Labels name the ability groups the writes keep sums for; no import changes a
            # stored criterion, so this edit by hand refreshes them as a writer would.
            score_sums.refresh(con, "SELECT dataset, judge, model, instance_id FROM scores "
                               "WHERE dataset = ?", [d])  # fmt: skip
    return store, data


def test_both_datasets_keep_their_own_criterion(two):
    store, _ = two
    assert query(store, "SELECT dataset, skill, label, scale_min, scale_max FROM criteria "
                 "ORDER BY ALL") == [
        ("long", "coherence", "Coherence (5-point)", 1.0, 5.0),
        ("short", "coherence", "Coherence (3-point)", 1.0, 3.0),
        ("short", "passed", "passed", 0.0, 1.0),
    ]  # fmt: skip
    assert query(store, "SELECT count(*) FROM skills") == [(12,)]  # readability: shared


@pytest.mark.parametrize("dataset", ["short", "long"])
def test_radar_reads_each_datasets_scale_and_label(two, dataset):
    store, data = two
    got = radar.radar_data(store, Filters(dataset, "j")).table.set_index(["model", "axis"])
    raw = data[dataset][data[dataset]["judge"] == "j"]
    expected = raw.groupby(["model", "skill"])["score"].agg(["mean", "count"])
    for (model, skill), row in expected.iterrows():
        cell = got.loc[(model, skill)]
        assert cell["mean"] == pytest.approx(row["mean"], abs=1e-12)
        assert cell["n"] == row["count"]
        assert (cell["scale_min"], cell["scale_max"]) == SCALES[dataset][skill]
    assert got.loc[("m1", "coherence"), "label"] == TEXTS[dataset][0]
    # By ability: a dataset's own criterion is its own group, named by its label, on its scale.
    ability = radar.radar_data(store, Filters(dataset, "j"), "ability").table
    own = ability[ability["axis"] == TEXTS[dataset][0]]
    assert set(zip(own["scale_min"], own["scale_max"], strict=True)) == {
        SCALES[dataset]["coherence"]
    }
    coherence = raw[raw["skill"] == "coherence"].groupby("model")["score"].mean()
    assert own.set_index("model")["mean"].to_dict() == pytest.approx(coherence.to_dict())


def test_leaderboard_pools_on_each_datasets_scales(two):
    store, data = two
    # short mixes 1-3 and 0-1: Overall pools on 0-1 with short's own ends (coherence 1-3).
    raw = data["short"][data["short"]["judge"] == "j"].dropna(subset=["score"])
    lo = raw["skill"].map(lambda s: SCALES["short"][s][0])
    hi = raw["skill"].map(lambda s: SCALES["short"][s][1])
    expected01 = ((raw["score"] - lo) / (hi - lo)).groupby(raw["model"]).mean()
    table = overview.leaderboard(store, Filters("short", "j"), n_boot=50)
    overall = table[table["group"] == overview.OVERALL_01].set_index("model")["mean"]
    assert overall.to_dict() == pytest.approx(expected01.to_dict(), abs=1e-12)
    # long: coherence and readability both 1-5, so Overall is the plain mean.
    raw = data["long"][data["long"]["judge"] == "j"]
    table = overview.leaderboard(store, Filters("long", "j"), n_boot=50)
    overall = table[table["group"] == overview.OVERALL].set_index("model")["mean"]
    assert overall.to_dict() == pytest.approx(raw.groupby("model")["score"].mean().to_dict())
    coherence = table[table["group"] == TEXTS["long"][0]].set_index("model")["mean"]
    expected = raw[raw["skill"] == "coherence"].groupby("model")["score"].mean()
    assert coherence.to_dict() == pytest.approx(expected.to_dict())


@pytest.mark.parametrize("dataset", ["short", "long"])
def test_breakdowns_read_each_dataset_alone(two, dataset):
    store, data = two
    got = breakdowns.by_difficulty(store, Filters(dataset, "j"))
    raw = data[dataset][data[dataset]["judge"] == "j"]
    expected = raw.groupby(["model", "skill", "difficulty"])["score"].agg(["mean", "count"])
    got = got.assign(difficulty=got["difficulty"].astype(int)).set_index(
        ["model", "skill", "difficulty"]
    )
    assert got["mean"].to_dict() == pytest.approx(expected["mean"].to_dict(), abs=1e-12)
    assert got["n"].to_dict() == expected["count"].to_dict()


@pytest.mark.parametrize("dataset", ["short", "long"])
def test_agreement_uses_each_datasets_scale(two, dataset):
    store, data = two
    r = agreement(store, AgreementQuery(Filters(dataset), "j", "h", n_boot=50))
    lo, hi = SCALES[dataset]["coherence"]
    assert r.scales["coherence"] == (lo, hi)
    raw = data[dataset][data[dataset]["skill"] == "coherence"]
    wide = raw.pivot_table(index=["instance_id", "model"], columns="judge", values="score")
    wide = wide.dropna()
    kappa = cohen_kappa_score(wide["j"].astype(int), wide["h"].astype(int),
                              weights="quadratic", labels=list(range(lo, hi + 1)))  # fmt: skip
    stats = r.stats[(r.stats["skill"] == "coherence") & (r.stats["statistic"] == "qwk")]
    assert stats["value"].iloc[0] == pytest.approx(kappa, abs=1e-9)


@pytest.mark.parametrize("dataset", ["short", "long"])
def test_rubrics_for_annotators_judges_and_samples_are_the_datasets_own(two, dataset):
    store, _ = two
    label, levels = TEXTS[dataset]
    lo, hi = SCALES[dataset]["coherence"]
    first = f"{dataset[0]}0"
    form = {s.skill: s for s in annotate.rubric(store, dataset, first)}
    assert form["coherence"].label == label and list(form["coherence"].rubric) == levels
    assert (form["coherence"].scale_min, form["coherence"].scale_max) == (lo, hi)
    judge = rubrics_from_store(store, dataset)["coherence"]
    assert (judge.label, list(judge.levels), judge.scale_min, judge.scale_max) == (
        label, levels, lo, hi)  # fmt: skip
    assert judge.definition == f"{dataset} coherence"
    listed = samples.dataset_skills(store, dataset).set_index("skill")
    assert listed.loc["coherence", ["label", "scale_min", "scale_max"]].tolist() == [label, lo, hi]


def test_a_flask_name_may_carry_a_datasets_own_scale(two, tmp_path):
    """HelpSteer-like data scores "correctness" 0-4: its own criterion, while FLASK-shaped data
    in the same store keeps FLASK's 1-5 skill of that name."""
    store, _ = two
    path = tmp_path / "helpsteer.csv"
    path.write_text("instance_id,model,skill,score,scale_min,scale_max\n"
                    "x1,m1,Correctness,0,0,4\nx2,m1,correctness,4,0,4\n")  # fmt: skip
    report = import_scores(store, path, judge="j", dataset="helpsteer")
    assert any("'correctness'" in n and "own scale" in n for n in report.notes)
    got = radar.radar_data(store, Filters("helpsteer", "j")).table
    assert got[["axis", "mean", "scale_min", "scale_max"]].values.tolist() == [
        ["correctness", 2.0, 0.0, 4.0]]  # fmt: skip
    flask = tmp_path / "flask.csv"
    flask.write_text("instance_id,model,skill,score\nf1,m1,Logical Correctness,5\n")
    import_scores(store, flask, judge="j", dataset="flaskish")
    got = radar.radar_data(store, Filters("flaskish", "j")).table
    assert got[["axis", "scale_min", "scale_max"]].values.tolist() == [["correctness", 1.0, 5.0]]
    # A dataset that already scores the FLASK skill cannot switch the name to another scale.
    clash = tmp_path / "clash.csv"
    clash.write_text("instance_id,model,skill,score,scale_min,scale_max\nf2,m1,correctness,3,0,4\n")
    before = snapshot(store)
    with pytest.raises(InputError) as e:
        import_scores(store, clash, judge="j", dataset="flaskish")
    assert (e.value.line, e.value.field) == (2, "scale_min")
    assert "already scores 'correctness' as FLASK's skill (1-5)" in e.value.message
    assert snapshot(store) == before


# --------------------------------------------------------------------- "did you mean"


def _rejected(store: Store, path, **options) -> InputError:
    before = snapshot(store)
    with pytest.raises(InputError) as e:
        import_scores(store, path, judge="j", **options)
    assert snapshot(store) == before
    return e.value


def test_an_unrelated_name_gets_no_flask_suggestion(two, tmp_path):
    store, _ = two
    path = tmp_path / "fresh.csv"
    path.write_text("instance_id,model,skill,score\nz1,m1,coherence,2\n")
    e = _rejected(store, path, dataset="fresh")
    assert "unknown skill 'coherence'" in e.message  # it needs a scale ...
    assert "did you mean" not in e.message  # ... and is no misspelt "correctness"
    for name in ("consistency", "helpfulness", "complexity", "faithfulness"):
        path.write_text(f"instance_id,model,skill,score\nz1,m1,{name},2\n")
        assert "did you mean" not in _rejected(store, path, dataset="fresh").message
    # With its scale it is simply a new criterion: no "check the spelling".
    path.write_text("instance_id,model,skill,score\nz1,m1,coherence,2\n")
    report = import_scores(store, path, judge="j", dataset="fresh", scale=(1, 3))
    note = next(n for n in report.notes if "new custom criterion 'coherence'" in n)
    assert "in dataset 'fresh'" in note and "check the spelling" not in note


def test_a_near_miss_of_the_datasets_own_criterion_is_suggested(two, tmp_path):
    store, _ = two
    path = tmp_path / "typo.csv"
    path.write_text("instance_id,model,skill,score\ns0,m1,coherense,2\n")
    e = _rejected(store, path, dataset="short")
    assert (e.line, e.field) == (2, "skill")
    assert "unknown skill 'coherense' (did you mean 'coherence'?)" in e.message
    # A near miss of FLASK's skill: suggested on FLASK-shaped data only.
    path.write_text("instance_id,model,skill,score\nl0,m1,readablity,2\n")
    e = _rejected(store, path, dataset="long")  # long scores FLASK's readability
    assert "did you mean 'readability'" in e.message
    e = _rejected(store, path, dataset="short")  # short has only criteria of its own
    assert "did you mean" not in e.message
    # A new criterion declared next to a close own one gets a spelling check in the report.
    path.write_text("instance_id,model,skill,score,scale_min,scale_max\ns0,m1,pased,1,0,1\n")
    report = import_scores(store, path, judge="j", dataset="short")
    assert any("'pased'" in n and "did you mean 'passed'" in n for n in report.notes)


def test_flasks_rubric_file_never_replaces_a_datasets_own_criterion(two, tmp_path):
    store, _ = two
    path = tmp_path / "helpsteer2.csv"
    path.write_text("instance_id,model,skill,score,scale_min,scale_max\nx1,m1,correctness,3,0,4\n")
    import_scores(store, path, judge="j", dataset="helpsteer2")
    rubric = tmp_path / "skillset.json"
    levels = {str(k): f"level {k}" for k in range(1, 6)}
    entry = {"Skill": "Logical Correctness", "Criteria": "FLASK's text", "Scoring": levels}
    rubric.write_text(json.dumps([entry]))
    config = JudgeConfig("openai", "m", rubric=f"file:{rubric}")
    own = load_rubrics(store, config, "helpsteer2")["correctness"]
    assert (own.scale_min, own.scale_max) == (0, 4) and own.definition != "FLASK's text"
    shared = load_rubrics(store, config, "long")["correctness"]  # FLASK's 1-5 skill
    assert (shared.definition, shared.levels[0]) == ("FLASK's text", "level 1")
