"""Leniency (analysis/views/judge_leniency.py) against an independent pandas computation and a
bootstrap done by replicating rows; ties, small n, N/A, another scale, a judge sharing no item,
the empty states; and on the demo: the lenient judge is flagged on exactly its three skills."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.charts.judges_scores import leniency_matrix, score_distribution
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.core.taxonomy import Criterion
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    JudgeRecord,
    RunRecord,
    write_batch,
)
from analysis.ingest.demo import JUDGE
from analysis.ingest.demo_panel import LENIENT, LENIENT_SKILLS, PANEL
from analysis.stats.means import bootstrap_weights
from analysis.views import judge_leniency as jl

DS = "t"


def make_store(path: Path, scores: list[tuple], kinds: dict[str, str],
               criteria: list[Criterion] | None = None) -> Store:  # fmt: skip
    """A store from (instance_id, model, judge, skill, score) rows; one run per judge."""
    frame = pd.DataFrame(scores, columns=["instance_id", "model", "judge", "skill", "score"])
    frame["dataset"], frame["run_id"] = DS, "run-" + frame["judge"]
    items = frame[["instance_id", "model", "judge", "run_id", "dataset"]].drop_duplicates()
    skills = frame.groupby("instance_id")["skill"].unique()
    inst = pd.DataFrame({"dataset": DS, "instance_id": skills.index, "instruction": "q",
                         "reference": None, "source_task": "x", "difficulty": 1,
                         "domains": [["Math"]] * len(skills),
                         "skills": [list(s) for s in skills], "flask_hard": False})  # fmt: skip
    resp = items[["dataset", "instance_id", "model"]].drop_duplicates().assign(text="a")
    judgments = items.assign(raw_output="{}", rationale=None, parse_status="ok", error=None,
                             latency_ms=1.0, prompt_tokens=1, completion_tokens=1)  # fmt: skip
    store = Store(path)
    write_batch(store, Batch(
        datasets=[DatasetRecord(DS, "T", "test")], criteria=criteria or [],
        instances=inst[INSTANCE_COLS], responses=resp[RESPONSE_COLS],
        judges=[JudgeRecord(j, k) for j, k in kinds.items()],
        runs=[RunRecord(f"run-{j}", j, DS, "test") for j in kinds],
        judgments=judgments[JUDGMENT_COLS], scores=frame[SCORE_COLS],
    ))  # fmt: skip
    return store


def _random_rows(seed: int, n_inst: int = 14) -> tuple[list[tuple], dict[str, str]]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(1, n_inst + 1):
        for m in ("m1", "m2"):
            for s in ("correctness", "readability"):
                truth = rng.integers(1, 6)
                for h in ("h1", "h2"):
                    v = float(np.clip(truth + rng.integers(-1, 2), 1, 5))
                    rows.append((str(i), m, h, s, None if rng.random() < 0.08 else v))
                rows.append((str(i), m, "easy", s, float(min(5, truth + 1))))
                rows.append((str(i), m, "fair", s, None if rng.random() < 0.1 else float(truth)))
    return rows, {"h1": "human", "h2": "human", "easy": "llm", "fair": "llm"}


def _expected(rows: list[tuple], kinds: dict[str, str]) -> pd.DataFrame:
    """mean(judge − humans' mean) per judge × skill and pooled, by pandas, from the rows."""
    d = pd.DataFrame(rows, columns=["instance_id", "model", "judge", "skill", "score"])
    d["kind"] = d["judge"].map(kinds)
    h = d[d["kind"] == "human"].groupby(["instance_id", "model", "skill"])["score"].mean()
    j = d[(d["kind"] == "llm")].dropna(subset=["score"])
    j = j.join(h.rename("h"), on=["instance_id", "model", "skill"]).dropna(subset=["h"])
    j["diff"] = j["score"] - j["h"]
    return j


def _direct_ci(items: pd.DataFrame, w: np.ndarray, inst: list[str]) -> tuple[float, float]:
    """Each resample as rows replicated by its instance counts; the mean by pandas."""
    means = []
    for row in w:
        counts = dict(zip(inst, row.astype(int), strict=True))
        rep = items.loc[items.index.repeat(items["instance_id"].map(counts))]
        means.append(rep["diff"].mean())
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_effects_and_cis_equal_pandas_and_a_direct_bootstrap(tmp_path):
    rows, kinds = _random_rows(3)
    r = jl.leniency(make_store(tmp_path / "a.duckdb", rows, kinds),
                    jl.LeniencyQuery(Filters(DS), n_boot=200, seed=5))  # fmt: skip
    exp = _expected(rows, kinds)
    inst = sorted(exp["instance_id"].unique())
    w = bootstrap_weights(len(inst), 200, 5)
    assert r.judges == ("easy", "fair") and r.humans == ("h1", "h2") and r.empty is None
    for (judge, skill), cell in r.cells.set_index(["judge", "skill"]).iterrows():
        items = exp[exp["judge"] == judge]
        items = items if pd.isna(skill) else items[items["skill"] == skill]
        assert cell["diff"] == pytest.approx(items["diff"].mean(), abs=1e-12)
        assert cell["mean_judge"] == pytest.approx(items["score"].mean(), abs=1e-12)
        assert cell["mean_human"] == pytest.approx(items["h"].mean(), abs=1e-12)
        assert cell["n_items"] == len(items)
        assert cell["n_instances"] == items["instance_id"].nunique()
        lo, hi = _direct_ci(items.reset_index(drop=True), w, inst)
        assert (cell["ci_low"], cell["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    easy = r.cells[r.cells["judge"] == "easy"]
    # "easy" scores one point above the truth (capped at 5): lenient beyond the threshold.
    assert easy["flagged"].all() and (easy["diff"] > jl.PRACTICAL_POINTS).all()


def test_ties_small_n_and_a_judge_without_shared_items(tmp_path):
    rows = []
    for i in range(1, 13):  # 12 instances: "same" equals the humans, "up" is +1 everywhere
        rows += [(str(i), "m", "h1", "correctness", 3.0), (str(i), "m", "h2", "correctness", 3.0),
                 (str(i), "m", "same", "correctness", 3.0),
                 (str(i), "m", "up", "correctness", 4.0)]  # fmt: skip
    for i in range(1, 6):  # "few": +2 on 5 instances only, below the minimum to be flagged
        rows.append((str(i), "m", "few", "correctness", 5.0))
    rows.append(("99", "m", "alone", "correctness", 2.0))  # no human scored instance 99
    kinds = {"h1": "human", "h2": "human", "same": "llm", "up": "llm", "few": "llm",
             "alone": "llm"}  # fmt: skip
    r = jl.leniency(make_store(tmp_path / "b.duckdb", rows, kinds),
                    jl.LeniencyQuery(Filters(DS), n_boot=100))  # fmt: skip
    c = r.cells.set_index(["judge", "skill"])
    same, up, few = (c.loc[(j, "correctness")] for j in ("same", "up", "few"))
    assert (same["diff"], same["ci_low"], same["ci_high"], same["flagged"]) == (0, 0, 0, False)
    assert (up["diff"], up["ci_low"], up["ci_high"], up["flagged"]) == (1, 1, 1, True)
    assert few["diff"] == 2 and few["ci_low"] == 2 and few["n_instances"] == 5
    assert not few["flagged"]  # CI excludes 0 and 2 points, but 5 < MIN_FLAG_INSTANCES
    assert "alone" in r.judges and "alone" not in set(r.cells["judge"])
    assert r.unshared == ("alone",)
    ticks = leniency_matrix(r).layout.yaxis.ticktext
    assert [t.replace("<br>", " ") for t in ticks] == ["few", "same", "up"]  # "alone": no row


def test_one_instance_has_no_ci_and_na_humans_are_left_out(tmp_path):
    rows = [("1", "m", "h1", "correctness", None), ("1", "m", "h2", "correctness", 2.0),
            ("1", "m", "j", "correctness", 4.0), ("1", "m", "j", "readability", 3.0),
            ("1", "m", "h1", "readability", None),
            ("1", "m", "h2", "readability", None)]  # fmt: skip
    r = jl.leniency(make_store(tmp_path / "c.duckdb", rows, {"h1": "human", "h2": "human",
                                                             "j": "llm"}),
                    jl.LeniencyQuery(Filters(DS), n_boot=50))  # fmt: skip
    c = r.cells.set_index(["judge", "skill"])
    # readability is left out: its humans are all N/A; the pooled row's skill is None (NaN)
    assert list(r.cells["skill"]) == ["correctness", None]
    assert c.loc[("j", "correctness"), "diff"] == 2.0  # against h2 alone
    assert np.isnan(c.loc[("j", "correctness"), "ci_low"]) and not c["flagged"].any()


def test_another_scale_scales_the_threshold_and_the_pooled_row(tmp_path):
    crit = [Criterion("clarity", "Clarity", None, 100, "", (), 0, 10, custom=True, dataset=DS)]
    rows = []
    for i in range(1, 13):
        rows += [
            (str(i), "m", "h", "clarity", 5.0),
            (str(i), "m", "j", "clarity", 5.5),
            (str(i), "m", "h", "correctness", 3.0),
            (str(i), "m", "j", "correctness", 3.0),
        ]
    r = jl.leniency(make_store(tmp_path / "d.duckdb", rows, {"h": "human", "j": "llm"}, crit),
                    jl.LeniencyQuery(Filters(DS), n_boot=50))  # fmt: skip
    c = r.cells.set_index(["judge", "skill"])
    assert c.loc[("j", "clarity"), "threshold"] == pytest.approx(jl.PRACTICAL_POINTS * 10 / 4)
    # +0.5 would be flagged on a 1-5 scale; on 0-10 it is 0.2 of a 1-5 point: not flagged.
    assert c.loc[("j", "clarity"), "diff"] == 0.5 and not c.loc[("j", "clarity"), "flagged"]
    pooled = r.cells[r.cells["skill"].isna()].iloc[0]
    # Pooled in 1–5 points: (0.5 · 4/10 + 0) / 2; means in points are withheld (mixed scales).
    assert pooled["diff"] == pytest.approx(0.1) and np.isnan(pooled["mean_judge"])


@pytest.mark.parametrize(("lo", "hi"), [(1, 3), (0, 4), (1, 5)])
def test_pooled_means_only_when_every_criterion_is_on_one_to_five(tmp_path, lo, hi):
    """1–3 and 0–4 pooled with a 1–5 skill: the pooled difference is in 1–5 points, but its
    means would mix scales (0–4 has the width of 1–5, not its range): withheld."""
    crit = [Criterion("tone", "Tone", None, 100, "", (), lo, hi, custom=True, dataset=DS)]
    rows = []
    for i in range(1, 13):
        rows += [(str(i), "m", "h", "tone", float(hi)), (str(i), "m", "j", "tone", float(hi)),
                 (str(i), "m", "h", "correctness", 3.0),
                 (str(i), "m", "j", "correctness", 4.0)]  # fmt: skip
    r = jl.leniency(make_store(tmp_path / "m.duckdb", rows, {"h": "human", "j": "llm"}, crit),
                    jl.LeniencyQuery(Filters(DS), n_boot=20))  # fmt: skip
    pooled = r.cells[r.cells["skill"].isna()].iloc[0]
    assert pooled["diff"] == pytest.approx(0.5)  # (0 + 1) / 2 in 1–5 points
    if (lo, hi) == (1, 5):
        assert (pooled["mean_judge"], pooled["mean_human"]) == (pytest.approx(4.5), 4.0)
    else:
        assert np.isnan(pooled["mean_judge"]) and np.isnan(pooled["mean_human"])


def test_distributions_equal_value_counts(tmp_path):
    rows, kinds = _random_rows(8)
    r = jl.leniency(make_store(tmp_path / "e.duckdb", rows, kinds),
                    jl.LeniencyQuery(Filters(DS), n_boot=20))  # fmt: skip
    d = pd.DataFrame(rows, columns=["instance_id", "model", "judge", "skill", "score"])
    d["scorer"] = d["judge"].where(d["judge"].map(kinds) == "llm", jl.HUMANS)
    d["value"] = d["score"].map(lambda v: "N/A" if pd.isna(v) else f"{v:g}")
    exp = d.groupby(["scorer", "skill"])["value"].value_counts(normalize=True)
    got = r.dist.set_index(["scorer", "skill", "value"])["share"]
    assert got.sort_index().to_dict() == pytest.approx(exp.sort_index().to_dict())
    n = d.groupby(["scorer", "skill"]).size()
    assert (r.dist.set_index(["scorer", "skill"])["n"].groupby(level=[0, 1]).first() == n).all()
    table = jl.dist_table(r, "correctness")
    assert (
        table["Scorer"].iloc[0] == jl.HUMANS and table["n"].iloc[0] == n[(jl.HUMANS, "correctness")]
    )


def test_empty_states(tmp_path):
    no_humans = make_store(tmp_path / "f.duckdb", [("1", "m", "j", "correctness", 3.0)],
                           {"j": "llm"})  # fmt: skip
    r = jl.leniency(no_humans, jl.LeniencyQuery(Filters(DS), n_boot=10))
    assert r.empty.cause == "no_humans" and r.cells.empty
    no_llm = make_store(tmp_path / "g.duckdb", [("1", "m", "h", "correctness", 3.0)],
                        {"h": "human"})  # fmt: skip
    assert jl.leniency(no_llm, jl.LeniencyQuery(Filters(DS))).empty.cause == "no_llm"
    other = jl.leniency(no_llm, jl.LeniencyQuery(Filters(DS, models=("nobody",))))
    assert other.empty.cause == "no_scores"


@pytest.fixture(scope="module")
def demo(demo_db: Path) -> jl.Leniency:
    return jl.leniency(Store(demo_db), jl.LeniencyQuery(Filters("demo")))


def test_on_the_demo_the_lenient_judge_is_flagged_on_exactly_its_skills(demo):
    flagged = demo.cells[demo.cells["flagged"] & demo.cells["skill"].notna()]
    assert sorted(zip(flagged["judge"], flagged["skill"], strict=True)) == sorted(
        (LENIENT, s) for s in LENIENT_SKILLS
    )
    assert (flagged["diff"] > 0).all()
    assert not demo.cells.loc[demo.cells["judge"] == JUDGE, "flagged"].any()
    assert set(demo.judges) == {JUDGE, *PANEL}


def test_on_the_demo_the_effect_is_the_pandas_mean_over_shared_items(demo, demo_db):
    import duckdb

    con = duckdb.connect(str(demo_db), read_only=True)
    d = con.execute("SELECT s.*, j.kind FROM latest_scores s JOIN judges j USING (judge) "
                    "WHERE dataset = 'demo'").df()  # fmt: skip
    con.close()
    h = d[d["kind"] == "human"].groupby(["instance_id", "model", "skill"])["score"].mean()
    x = d[(d["judge"] == LENIENT) & d["score"].notna()].join(
        h.rename("h"), on=["instance_id", "model", "skill"]).dropna(subset=["h"])  # fmt: skip
    exp = (x["score"] - x["h"]).groupby(x["skill"]).mean()
    got = demo.cells[(demo.cells["judge"] == LENIENT) & demo.cells["skill"].notna()]
    assert got.set_index("skill")["diff"].to_dict() == pytest.approx(exp.to_dict(), abs=1e-12)


def test_the_csv_holds_the_cells_and_neutralises_formula_names(tmp_path):
    import io

    rows = [(str(i), "m", j, "correctness", v) for i in range(1, 4)
            for j, v in (("h", 3.0), ("=HYPERLINK(1)", 4.0))]  # fmt: skip
    r = jl.leniency(make_store(tmp_path / "h.duckdb", rows, {"h": "human", "=HYPERLINK(1)": "llm"}),
                    jl.LeniencyQuery(Filters(DS), n_boot=20))  # fmt: skip
    back = pd.read_csv(io.BytesIO(jl.cells_csv(r)), encoding="utf-8-sig")
    assert set(back["judge"]) == {"'=HYPERLINK(1)"}
    assert back["diff"].tolist() == r.cells["diff"].tolist() == [1.0, 1.0]
    parquet = pd.read_parquet(io.BytesIO(jl.cells_csv(r, "parquet")))
    assert parquet["judge"].tolist() == ["=HYPERLINK(1)"] * 2


def test_names_are_text_in_the_figures(tmp_path):
    bad = '<a href="x">j</a>%{y}'
    rows = [(str(i), "m", j, "correctness", v) for i in range(1, 4)
            for j, v in (("h", 3.0), (bad, 4.0))]  # fmt: skip
    r = jl.leniency(make_store(tmp_path / "x.duckdb", rows, {"h": "human", bad: "llm"}),
                    jl.LeniencyQuery(Filters(DS), n_boot=20))  # fmt: skip
    for fig in (leniency_matrix(r), score_distribution(r, "correctness")):
        text = fig.to_json()
        assert "<a href" not in text and "&lt;a href" in text
    hover = score_distribution(r, "correctness").data[1].hovertemplate
    assert "%{y}</" not in hover and "&#37;{y}" in hover
