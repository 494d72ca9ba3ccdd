"""The simulated demo: FLASK-shaped, deterministic, calibrated on the paper's figures.

Targets below are the real FLASK evaluation set's counts and the paper's Tables 2, 9 and 10,
written out here (not imported from analysis.ingest.demo) so the test checks the module's constants.
"""

from __future__ import annotations

from collections import Counter

import krippendorff
import numpy as np
import pandas as pd
import pytest

from analysis.core.store import Store
from analysis.core.writer import Batch, DatasetRecord, write_batch
from analysis.ingest.demo import (  # fmt: skip
    DEMO_DATASET,
    JUDGE,
    MODELS,
    build_and_write_demo,
    build_demo,
)
from analysis.ingest.published import published_agreement, published_means, published_skill_scores
from tests.conftest import FLASK_DIR, PUBLISHED_FIX, require

SEED = 20231
SKILL_TARGETS = {
    "comprehension": 1168, "commonsense": 711, "factuality": 617, "correctness": 488,
    "completeness": 460, "readability": 450, "conciseness": 326, "insightfulness": 298,
    "robustness": 224, "efficiency": 182, "metacognition": 150, "harmlessness": 145,
}  # fmt: skip
DOMAIN_TARGETS = {
    "Culture": 391, "Humanities": 363, "Technology": 280, "Social Science": 278,
    "Language": 232, "Math": 230, "Coding": 207, "Natural Science": 172, "Health": 121,
    "History": 89,
}  # fmt: skip
LEVEL_TARGETS = {1: 388, 2: 278, 3: 444, 4: 442, 5: 186}
SHARED_PUBLISHED = FLASK_DIR / "published"


def _close(actual: int, target: int, rel: float = 0.03) -> bool:
    return abs(actual - target) <= max(rel * target, 2)


@pytest.fixture(scope="module")
def demo() -> Batch:
    return build_demo(SEED)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    st = Store(tmp_path_factory.mktemp("demo") / "finegrain.duckdb")
    build_and_write_demo(st, SEED)
    return st


@pytest.fixture(scope="module")
def latest(store: Store) -> pd.DataFrame:
    with store.read() as con:
        return con.execute(
            "SELECT s.instance_id, s.model, s.judge, s.skill, s.score, i.flask_hard "
            "FROM latest_scores s JOIN instances i USING (dataset, instance_id) "
            "WHERE s.dataset = ?",
            [DEMO_DATASET],
        ).df()


def _frames(b: Batch) -> list[pd.DataFrame]:
    return [b.instances, b.responses, b.judgments, b.scores]


def test_same_seed_same_batch_other_seed_differs(demo: Batch) -> None:
    again = build_demo(SEED)
    for a, b in zip(_frames(demo), _frames(again), strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert again.runs == demo.runs and again.datasets == demo.datasets
    other = build_demo(SEED + 1)
    assert not other.scores["score"].equals(demo.scores["score"])
    assert not other.instances["skills"].equals(demo.instances["skills"])
    assert {r.run_id for r in other.runs}.isdisjoint(r.run_id for r in demo.runs)


def test_instances_have_flask_mix(demo: Batch) -> None:
    inst = demo.instances
    assert len(inst) == 1740 and inst["instance_id"].is_unique
    assert all(len(s) == 3 == len(set(s)) for s in inst["skills"])
    skills = Counter(s for row in inst["skills"] for s in row)
    assert set(skills) == set(SKILL_TARGETS)
    assert all(_close(skills[s], n) for s, n in SKILL_TARGETS.items()), skills
    domains = Counter(d for row in inst["domains"] for d in row)
    assert all(_close(domains[d], n) for d, n in DOMAIN_TARGETS.items()), domains
    two = sum(len(d) == 2 for d in inst["domains"])
    assert _close(two, 626)
    levels = inst["difficulty"].value_counts()
    assert all(_close(int(levels[lv]), n) for lv, n in LEVEL_TARGETS.items()), levels
    hard = inst[inst["flask_hard"]]
    assert len(hard) == 89 and (hard["difficulty"] == 5).all()
    tasks = inst["source_task"].value_counts()
    assert {"Self-instruct", "Wizardlm", "Koala", "Vicuna", "Mmlu", "Bbh"} <= set(tasks.index)
    assert tasks.index[0] == "Self-instruct" and tasks.nunique() > 5


def test_texts_are_marked_simulated_and_lengths_follow_strength(demo: Batch) -> None:
    inst, resp = demo.instances, demo.responses
    for col in (inst["instruction"], inst["reference"], resp["text"]):
        assert col.str.startswith("[simulated] ").all()  # the tag; more in test_demo_texts.py
    assert len(resp) == 1740 * len(MODELS)
    length = resp.assign(n=resp["text"].str.len()).groupby("model")["n"].mean()
    strength = published_means("full").mean(axis=1)
    assert length.corr(strength.loc[length.index], method="spearman") > 0.7
    assert length["gpt4"] > 1.5 * length["vicuna_13b"]


def test_judgments_and_parse_failures(demo: Batch) -> None:
    j = demo.judgments
    mine = j[j["judge"] == JUDGE]
    assert len(mine) == 1740 * len(MODELS)
    failed = mine[mine["parse_status"] == "failed"]
    assert 0.002 < len(failed) / len(mine) < 0.01
    assert failed["error"].notna().all() and mine["raw_output"].notna().all()
    ok = mine[mine["parse_status"] == "ok"]
    assert ok["raw_output"].str.contains(r"\{.*\}").all()
    keys = demo.scores[["instance_id", "model", "judge"]].drop_duplicates()
    hit = failed.merge(keys, on=["instance_id", "model", "judge"])
    assert hit.empty, "a failed parse must leave no score rows"
    run = next(r for r in demo.runs if r.judge == JUDGE)
    assert (run.n_items, run.n_failed) == (len(mine), len(failed))
    assert run.run_id == f"demo-{SEED}-{JUDGE}"


def test_na_is_rare_and_commoner_where_realistic(demo: Batch) -> None:
    s = demo.scores[demo.scores["judge"] == JUDGE]
    na = s["score"].isna().groupby(s["skill"]).mean()
    assert na.max() < 0.25 and na["comprehension"] < 0.03
    assert na["metacognition"] > 3 * na["comprehension"]
    assert na["harmlessness"] > 3 * na["readability"]
    assert set(s["score"].dropna().unique()) <= {1, 2, 3, 4, 5}


def test_written_judge_means_match_the_paper(latest: pd.DataFrame) -> None:
    judge = latest[latest["judge"] == JUDGE]
    pub = published_skill_scores()
    for subset, rows in (("full", judge), ("hard", judge[judge["flask_hard"]])):
        means = rows.groupby(["model", "skill"])["score"].mean().rename("sim").reset_index()
        ref = pub[pub["subset"] == subset].merge(
            means, left_on=["model_id", "skill"], right_on=["model", "skill"]
        )
        assert len(ref) == 96
        gap = (ref["sim"] - ref["mean_score"]).abs()
        limit = 0.2 if subset == "full" else 0.3  # FLASK-Hard cells hold ~7 instances
        assert gap.max() <= limit, ref.loc[gap.idxmax()].to_dict()


def test_humans_agree_like_the_papers_annotators(latest: pd.DataFrame) -> None:
    humans = latest[latest["judge"].str.startswith("annotator_")]
    assert sorted(humans["judge"].unique()) == ["annotator_1", "annotator_2", "annotator_3"]
    assert humans["instance_id"].nunique() == 200
    assert set(humans["model"]) == set(MODELS)
    judge = latest[latest["judge"] == JUDGE].set_index(["instance_id", "model", "skill"])
    pub = published_agreement().set_index("skill")
    for skill, rows in humans.groupby("skill"):
        table = rows.pivot_table(
            index="judge", columns=["instance_id", "model"], values="score", dropna=False
        )
        alpha = krippendorff.alpha(table.to_numpy(float), level_of_measurement="interval")
        assert abs(alpha - pub.loc[skill, "human_human_alpha"]) <= 0.15, (skill, alpha)
        mean = rows.groupby(["instance_id", "model", "skill"])["score"].mean()
        pair = pd.concat([mean, judge["score"]], axis=1, join="inner").dropna()
        r = pair.iloc[:, 0].corr(pair.iloc[:, 1])
        assert abs(r - pub.loc[skill, "human_gpt4_pearson"]) <= 0.15, (skill, r)


def test_dataset_row_is_simulated_with_its_seed(store: Store) -> None:
    with store.read() as con:
        row = con.execute(
            "SELECT title, source, simulated, seed FROM datasets WHERE dataset = ?", [DEMO_DATASET]
        ).fetchone()
        judges = dict(con.execute("SELECT judge, kind || '/' || backend FROM judges").fetchall())
    assert row == ("Simulated demo", f"simulated (seed {SEED})", True, SEED)
    assert judges[JUDGE] == "llm/simulation"
    assert all(judges[f"annotator_{i}"] == "human/simulation" for i in (1, 2, 3))


def _counts(store: Store) -> dict[str, int]:
    tables = ("datasets", "instances", "responses", "runs", "judgments", "scores")
    with store.read() as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_rebuild_replaces_without_duplicates(tmp_path) -> None:
    st = Store(tmp_path / "f.duckdb")
    other = Batch(datasets=[DatasetRecord("other", "Other", "test")])
    write_batch(st, other)
    build_and_write_demo(st, SEED)
    first = _counts(st)
    report = build_and_write_demo(st, SEED)
    assert _counts(st) == first
    assert report.counts["instances"] == 1740 and report.counts["scores"] > 50_000
    with st.read() as con:
        assert con.execute("SELECT count(*) FROM scores WHERE superseded").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM datasets WHERE dataset = 'other'").fetchone()
    build_and_write_demo(st, SEED + 1)
    with st.read() as con:
        assert con.execute("SELECT seed FROM datasets WHERE dataset = 'demo'").fetchone() == (
            SEED + 1,
        )
        assert con.execute("SELECT count(DISTINCT run_id) FROM scores").fetchone()[0] == 4


def test_published_files_match_the_paper() -> None:
    scores, agreement = published_skill_scores(), published_agreement()
    assert len(scores) == 2 * 8 * 12 and set(scores["model_id"]) == set(MODELS)
    gpt4 = scores.set_index(["subset", "model_id", "skill"])["mean_score"]
    assert gpt4["full", "gpt4", "robustness"] == 4.22
    assert agreement.set_index("skill").loc["correctness", "human_human_alpha"] == 0.73
    require(SHARED_PUBLISHED, "the real FLASK figures", PUBLISHED_FIX)
    real = pd.read_csv(SHARED_PUBLISHED / "skill_scores.csv")
    mine = scores.rename(columns={"paper_name": "model"})
    both = real.merge(mine, on=["subset", "model", "skill"], suffixes=("_real", ""))
    assert len(both) == len(real) == len(mine)
    assert np.allclose(both["mean_score_real"], both["mean_score"])
    real_a = pd.read_csv(SHARED_PUBLISHED / "skill_agreement.csv").set_index("skill")
    cols = ["human_human_alpha", "gpt4_repeat_alpha", "human_gpt4_pearson"]
    assert np.allclose(real_a[cols], agreement.set_index("skill").loc[real_a.index, cols])


def test_rebuilding_the_demo_refuses_to_delete_a_users_work(tmp_path, capsys):
    from analysis.cli.main import main
    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo
    from analysis.views import annotate as annotation

    store = Store(tmp_path / "d.duckdb")
    build_and_write_demo(store)
    assert main(["demo", "--db", str(store.path)]) == 0  # nothing of the user's yet: rebuilt
    capsys.readouterr()
    _annotate_one(store, annotation)
    before = _count(store, "SELECT count(*) FROM scores")
    assert main(["demo", "--db", str(store.path)]) == 2
    err = capsys.readouterr().err
    assert "would delete work added to it: alice (1 judgments)" in err and "--force" in err
    assert _count(store, "SELECT count(*) FROM scores") == before  # nothing was touched
    assert main(["demo", "--db", str(store.path), "--force"]) == 0
    assert _count(store, "SELECT count(*) FROM judgments WHERE judge = 'alice'") == 0


def _count(store, sql: str) -> int:
    with store.read() as con:
        return con.execute(sql).fetchone()[0]


def _annotate_one(store, annotation) -> None:
    skills = [s.skill for s in annotation.rubric(store, "demo", "1")]
    annotation.save_answer(
        store, annotation.Answer("alice", "demo", "1", "gpt4", dict.fromkeys(skills, 4.0))
    )
