"""Self-preference (analysis/views/judge_self.py) against pandas on a store written through the
real score importer: mean (judge − reference) on the judge's family's models minus on the
others, per criterion and pooled, against the humans and against the other judges (same-family
judges left out), CIs against a direct bootstrap, the judges left out and why, the flag rule,
and the simulated demo panel's claude-judge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.demo import JUDGE
from analysis.ingest.demo_panel import CLAUDE
from analysis.ingest.score_files import import_scores
from analysis.stats.means import bootstrap_weights
from analysis.views import judge_self as js
from analysis.views.judge_family import set_families
from analysis.views.judge_self import ALL, SelfQuery

N_BOOT = 200
MODELS = ("gpt4", "chatgpt", "vicuna", "llama")
JUDGES = ("gpt-j", "gpt-k", "other-j", "claude-j", "nofam-j")
FAMILIES = [
    {"kind": "judge", "name": "gpt-j", "family": "openai"},
    {"kind": "judge", "name": "gpt-k", "family": "openai"},
    {"kind": "judge", "name": "other-j", "family": "lmsys"},
    {"kind": "judge", "name": "claude-j", "family": "anthropic"},  # no anthropic model here
    {"kind": "model", "name": "gpt4", "family": "openai"},
    {"kind": "model", "name": "chatgpt", "family": "openai"},
    {"kind": "model", "name": "vicuna", "family": "lmsys"},
]  # llama and nofam-j: no family
SKILLS = ("correctness", "readability")


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    """Random 1–5 scores (some N/A) of 12 instances × 4 models × 2 skills by every judge and
    two humans; gpt-j adds +1 (clipped) on the openai models."""
    rng = np.random.default_rng(11)
    rows = []
    for i in range(12):
        for m in MODELS:
            for s in SKILLS:
                truth = rng.integers(1, 6)
                for j in (*JUDGES, "h1", "h2"):
                    v = int(np.clip(truth + rng.integers(-1, 2), 1, 5))
                    if j == "gpt-j" and m in ("gpt4", "chatgpt"):
                        v = min(v + 1, 5)
                    na = rng.random() < 0.08
                    rows.append({"instance_id": f"q{i:02d}", "model": m, "skill": s,
                                 "judge": j, "kind": "human" if j[0] == "h" else "llm",
                                 "score": np.nan if na else float(v)})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture
def store(tmp_path, scores) -> Store:
    path = tmp_path / "scores.csv"
    scores.assign(score=scores["score"].map(lambda v: "" if np.isnan(v) else int(v))).to_csv(
        path, index=False
    )
    s = Store(tmp_path / "self.duckdb")
    import_scores(s, path, dataset="fam")
    set_families(s, FAMILIES)
    return s


def _diffs(scores: pd.DataFrame, judge: str, reference: str) -> pd.DataFrame:
    """Per item: judge − reference (the humans' mean, or the other judges' mean without the
    judge's own family), with NaN where either is missing."""
    wide = scores.pivot_table(index=["instance_id", "model", "skill"], columns="judge",
                              values="score", aggfunc="mean")  # fmt: skip
    if reference == "humans":
        ref = wide[["h1", "h2"]].mean(axis=1)
    else:
        same = {"gpt-j": {"gpt-j", "gpt-k"}, "other-j": {"other-j"}}[judge]
        ref = wide[[j for j in JUDGES if j not in same]].mean(axis=1)
    d = (wide[judge] - ref).dropna().rename("d").reset_index()
    own = {"gpt-j": ("gpt4", "chatgpt"), "other-j": ("vicuna",)}[judge]
    return d.assign(own=d["model"].isin(own))


def _pref(d: pd.DataFrame) -> float:
    return d.loc[d["own"], "d"].mean() - d.loc[~d["own"], "d"].mean()


def _row(r, judge: str, skill: str, reference: str) -> pd.Series:
    t = r.table
    sel = t[(t["judge"] == judge) & (t["skill"] == skill) & (t["reference"] == reference)]
    assert len(sel) == 1, sel
    return sel.iloc[0]


@pytest.mark.parametrize("reference", js.REFERENCES)
@pytest.mark.parametrize("judge", ["gpt-j", "other-j"])
def test_values_counts_and_cis_match_pandas(store, scores, judge, reference):
    r = js.self_preference(store, SelfQuery(Filters("fam"), n_boot=N_BOOT, seed=5))
    d = _diffs(scores, judge, reference)
    instances = sorted(scores["instance_id"].unique())
    weights = bootstrap_weights(len(instances), N_BOOT, 5)
    for skill in (*SKILLS, ALL):
        part = d if skill == ALL else d[d["skill"] == skill]
        row = _row(r, judge, skill, reference)
        assert row["self_pref"] == pytest.approx(_pref(part), abs=1e-12)
        assert row["own_mean"] == pytest.approx(part.loc[part["own"], "d"].mean(), abs=1e-12)
        assert row["other_mean"] == pytest.approx(part.loc[~part["own"], "d"].mean(), abs=1e-12)
        assert row["own_n"] == part["own"].sum() and row["other_n"] == (~part["own"]).sum()
        assert row["own_instances"] == part.loc[part["own"], "instance_id"].nunique()
        # The direct bootstrap: each drawn instance's items repeated as often as it was drawn.
        boot = []
        for w in weights:
            reps = part["instance_id"].map(dict(zip(instances, w.astype(int), strict=True)))
            boot.append(_pref(part.loc[part.index.repeat(reps)]))
        lo, hi = np.nanquantile(boot, [0.025, 0.975])
        assert [row["ci_low"], row["ci_high"]] == pytest.approx([lo, hi], abs=1e-9)
        assert row["threshold"] == pytest.approx(0.25)  # a quarter point on the 1–5 scale
        # 12 instances: under the minimum, so never flagged.
        assert not row["flagged"]


def test_judges_left_out_say_why(store):
    r = js.self_preference(store, SelfQuery(Filters("fam"), n_boot=N_BOOT))
    reasons = dict(zip(r.left_out["judge"], r.left_out["reason"], strict=True))
    assert set(reasons) == {"claude-j", "nofam-j"}
    assert "no model of its family (anthropic)" in reasons["claude-j"]
    assert reasons["nofam-j"].startswith("no family")
    assert set(r.table["judge"]) == {"gpt-j", "gpt-k", "other-j"}
    # Only the openai models in the slice: nothing to contrast them with.
    only = js.self_preference(store, SelfQuery(Filters("fam", models=("gpt4", "chatgpt"))))
    assert "every model of this slice" in dict(
        zip(only.left_out["judge"], only.left_out["reason"], strict=True))["gpt-j"]  # fmt: skip


def test_the_flag_needs_enough_instances_a_clear_ci_and_the_practical_size():
    base = {"own_instances": 40, "other_instances": 40, "self_pref": 0.4, "ci_low": 0.2,
            "ci_high": 0.6}  # fmt: skip
    assert js._flag(base, 0.25) == {"flagged": True, "direction": "favours own family"}
    assert not js._flag(base | {"own_instances": js.MIN_INSTANCES - 1}, 0.25)["flagged"]
    assert not js._flag(base | {"ci_low": -0.01}, 0.25)["flagged"]
    assert not js._flag(base | {"self_pref": 0.2}, 0.25)["flagged"]
    harsh = base | {"self_pref": -0.4, "ci_low": -0.6, "ci_high": -0.2}
    assert js._flag(harsh, 0.25)["direction"] == "harsher on own family"


def test_demo_claude_judge_flagged_and_gpt4_not(demo_db):
    r = js.self_preference(Store(demo_db), SelfQuery(Filters("demo")))
    t = r.table
    claude = t[t["judge"] == CLAUDE]
    for ref in js.REFERENCES:
        pooled = _row(r, CLAUDE, ALL, ref)
        assert pooled["flagged"] and pooled["direction"] == "favours own family"
        assert pooled["own_models"] == "claude_v1"
        # +0.7 on the latent score, less after rounding and clipping at 5.
        assert 0.25 < pooled["self_pref"] < 0.7
        assert claude.loc[claude["reference"] == ref, "flagged"].sum() >= 8
    assert not t.loc[(t["judge"] == JUDGE) & (t["reference"] == "humans"), "flagged"].any()
    assert _row(r, JUDGE, ALL, "humans")["own_models"] == "chatgpt, gpt4"
    left = set(r.left_out["judge"])
    assert left == {"lenient-judge (simulated)", "verbose-judge (simulated)"}
