"""The simulated demo's texts: deterministic, varied, marked simulated, worked code and math
where the domain calls for it, consistent with the simulated scores and lengths, and built
without touching the score simulation.

Expected values come from outside the text generator: a hash of the scores taken before the
texts existed, the simulation's own lengths, the reference answers parsed out of the texts,
Python itself running the code the responses show, and the taxonomy's skill labels.
"""

from __future__ import annotations

import ast
import hashlib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.core.writer import Batch
from analysis.ingest.demo import DEMO_DATASET, JUDGE, MODELS, build_demo
from analysis.ingest.demo_code import PROBLEMS
from analysis.ingest.demo_model import (
    N_HUMAN_INSTANCES,
    human_subset,
    response_lengths,
    simulate_instances,
    simulate_scores,
)

SEED = 20231
REPO = Path(__file__).resolve().parents[2]
TAG = "[simulated] "  # written out: the test checks the module's choice, not its constant

# sha256 of the demo's score rows for seeds 20231 and 7, computed with ``_scores_hash`` below
# from build_demo() of the code before texts were added (commit d4e4059, the filler texts), so
# any change to the score simulation or the random stream it draws from shows here.
SCORES_SHA256 = {
    20231: "a3e634f21d1c37064f2bedaa01c3ce673f178551df02d90629398e948c634a2d",
    7: "9d1ed4c84a34ba09a0dc2d230fc857f57f065fa9c26a4d30d5430c9abf822bce",
}

# FLASK's code-writing sources (MBPP-like): their instances get code whatever the domain says.
CODE_TASKS = {"Mbpp", "Humaneval", "Leetcode", "Concode", "Cosqa"}
FENCE = re.compile(r"```python\n(.*?)\n```", re.S)
SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
ITEM = re.compile(r"^(\d+\.|[-*])\s+")
# A judge's verdict words (facts quoted in praise may contain "weak", as in "weakens").
CRITICISM = r"significant weakness|^Weak\.|^Poor\.|fails on this criterion"


def _scores_hash(batch: Batch) -> str:
    cols = ["run_id", "instance_id", "model", "judge", "skill", "score"]
    rows = (f"{r}|{i}|{m}|{j}|{k}|{'NA' if pd.isna(v) else int(v)}"
            for r, i, m, j, k, v in batch.scores[cols].itertuples(index=False))  # fmt: skip
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def _sentences(text: str) -> list[str]:
    """Prose sentences of four words or more: code blocks, list markers and the tag removed."""
    prose = FENCE.sub(" ", text.removeprefix(TAG))
    out = (ITEM.sub("", s.strip()) for s in SPLIT.split(prose))
    return [s for s in out if len(s.split()) >= 4]


def _answer(text: str) -> str:
    """The last sentence-initial "So the answer is X." / "The answer is X." of a solution."""
    return re.findall(r"(?:^|\n|\. )(?:So the|The) answer is (.+?)\.(?:\s|$)", text)[-1]


@pytest.fixture(scope="module")
def demo() -> Batch:
    return build_demo(SEED)


@pytest.fixture(scope="module")
def rows(demo: Batch) -> pd.DataFrame:
    """One row per response: its instance's texts, the judge's rationale and scores by skill."""
    inst = demo.instances.drop(columns="dataset")
    judge = demo.judgments[demo.judgments["judge"] == JUDGE]
    scores = demo.scores[demo.scores["judge"] == JUDGE].pivot_table(
        index=["instance_id", "model"], columns="skill", values="score", dropna=False
    )  # fmt: skip
    out = demo.responses.merge(inst, on="instance_id").merge(
        judge[["instance_id", "model", "rationale", "raw_output", "parse_status"]],
        on=["instance_id", "model"],
    )  # fmt: skip
    return out.merge(scores, left_on=["instance_id", "model"], right_index=True, how="left")


def _coding(rows: pd.DataFrame) -> pd.Series:
    return rows["domains"].map(lambda d: "Coding" in d) | rows["source_task"].isin(CODE_TASKS)


def _maths(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["domains"].map(lambda d: "Math" in d) & ~_coding(rows)]


def _score(row: pd.Series, skill: str) -> float:
    return row[skill] if skill in row.index and skill in row["skills"] else math.nan


def test_scores_are_bit_identical_to_the_build_before_texts(demo: Batch) -> None:
    assert _scores_hash(demo) == SCORES_SHA256[SEED]
    assert _scores_hash(build_demo(7)) == SCORES_SHA256[7]


def _text_columns(batch: Batch) -> dict[str, pd.Series]:
    judge = batch.judgments[batch.judgments["judge"] == JUDGE]
    return {"instruction": batch.instances["instruction"],
            "reference": batch.instances["reference"], "response": batch.responses["text"],
            "rationale": judge["rationale"]}  # fmt: skip


def test_texts_are_deterministic_for_a_seed_and_differ_between_seeds(demo: Batch) -> None:
    mine, again = _text_columns(demo), _text_columns(build_demo(SEED))
    other = _text_columns(build_demo(SEED + 1))
    for col, texts in mine.items():
        assert texts.equals(again[col]), col
        assert (texts.to_numpy() != other[col].to_numpy()).mean() > 0.9, col


def _texts_hash(batch: Batch) -> str:
    texts = [*batch.instances["instruction"], *batch.instances["reference"],
             *batch.responses["text"], *batch.judgments["raw_output"]]  # fmt: skip
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()


def test_texts_do_not_depend_on_the_process(demo: Batch) -> None:
    """Another interpreter with another string-hash seed writes the same texts (no set or
    hash order leaks into them)."""
    code = (
        "import hashlib, sys; sys.path.insert(0, '.')\n"
        "from tests.ingest.test_demo_texts import _texts_hash\n"
        "from analysis.ingest.demo import build_demo\n"
        f"print(_texts_hash(build_demo({SEED})))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.strip() == _texts_hash(demo)


def test_no_two_instances_share_an_instruction(demo: Batch) -> None:
    instructions = demo.instances["instruction"]
    assert instructions.is_unique and len(instructions) == 1740


def test_every_model_answers_an_instance_in_its_own_words(rows: pd.DataFrame) -> None:
    per_instance = rows.groupby("instance_id")["text"]
    assert (per_instance.nunique() == len(MODELS)).all()
    openings = rows.assign(first=rows["text"].map(lambda t: t[len(TAG) : len(TAG) + 60]))
    # Not one template with the model's name swapped in: the openings differ too.
    assert openings.groupby("instance_id")["first"].nunique().mean() > 3


def test_sampled_responses_have_high_lexical_variety(rows: pd.DataFrame) -> None:
    """Twenty responses to twenty random instances, as the Samples page shows them: their
    sentences are nearly all different. The old filler (one sentence per response, repeated)
    scored about 0.2; what may legitimately recur is a model's stock opener or closing ("I
    hope this helps!"), one or two of some twelve sentences per response, hence 0.8 at worst
    and 0.9 on average."""
    rng = np.random.default_rng(1)
    ids = rows["instance_id"].unique()
    ratios = []
    for _ in range(50):
        picked = rows[rows["instance_id"].isin(rng.choice(ids, 20, replace=False))]
        one = picked.groupby("instance_id").sample(1, random_state=int(rng.integers(1 << 31)))
        sentences = [s for text in one["text"] for s in _sentences(text)]
        ratios.append(len(set(sentences)) / len(sentences))
    assert min(ratios) >= 0.8 and np.mean(ratios) >= 0.9, (min(ratios), np.mean(ratios))
    # Within one response, a sentence is (all but) never said twice.
    said = [_sentences(t) for t in rows["text"]]
    repeats = sum(len(s) - len(set(s)) for s in said) / sum(map(len, said))
    assert repeats < 0.01


def test_every_text_says_it_is_simulated_once_at_the_start(demo: Batch) -> None:
    judge = demo.judgments[demo.judgments["judge"] == JUDGE]
    texts = pd.concat([demo.instances["instruction"], demo.instances["reference"],
                       demo.responses["text"], judge["rationale"].dropna(),
                       judge["raw_output"]])  # fmt: skip
    assert texts.str.startswith(TAG).all()
    assert (texts.str.count(re.escape(TAG.strip())) == 1).all()
    assert judge["rationale"].notna().mean() > 0.99  # only failed parses have none


def test_coding_instances_get_code(rows: pd.DataFrame) -> None:
    code = rows[_coding(rows)]
    assert code["instance_id"].nunique() >= 200
    for instruction, text in code[["instruction", "text"]].itertuples(index=False):
        blocks = FENCE.findall(text)
        assert blocks, text
        for block in blocks:  # a whole program, or one line quoted from the given code
            if "\n" in block or block.startswith(("def ", "assert ")):
                ast.parse(block)
            else:
                assert block in instruction, block


def test_math_instances_get_worked_steps(rows: pd.DataFrame) -> None:
    math_rows = _maths(rows)
    assert math_rows["instance_id"].nunique() >= 150
    worked = math_rows["text"].map(lambda t: any(re.search(r"[=≈]\s*[-−$√(\d]", s)
                                                  for s in _sentences(t)))  # fmt: skip
    # A response the judge marked down on completeness may skip to its last step, which need
    # not hold an "=" ("As a percentage: +39.0%."); every other one shows its working.
    skipped = math_rows.apply(lambda row: _score(row, "completeness") <= 3, axis=1)
    skipped |= math_rows["parse_status"] != "ok"  # the judge's scores were lost, not the flaw
    assert (worked | skipped).all() and worked.mean() > 0.9
    assert math_rows["text"].map(_answer).str.len().gt(0).all()
    assert math_rows["reference"].str.contains(r"The answer is .+\.$").all()


def test_math_answers_are_wrong_where_correctness_is_scored_low(rows: pd.DataFrame) -> None:
    math_rows = _maths(rows)
    seen = {"low": 0, "high": 0}
    for _, row in math_rows.iterrows():
        score = _score(row, "correctness")
        if math.isnan(score) or score == 3:
            continue
        same = _answer(row["text"]) == _answer(row["reference"])
        assert same == (score >= 4), (score, row["text"], row["reference"])
        seen["low" if score <= 2 else "high"] += 1
    assert min(seen.values()) >= 10, seen


def _run(code: str, calls: list[str]) -> list[str]:
    namespace: dict = {}
    exec(code, namespace)  # our own generated demo code, nothing from outside
    out = []
    for call in calls:
        try:
            out.append(repr(eval(call, namespace)))
        except Exception as e:  # a dropped guard fails here: that is a difference too
            out.append(type(e).__name__)
    return out


def test_code_is_buggy_where_correctness_is_scored_low(rows: pd.DataFrame) -> None:
    """Functions written from scratch, run against the reference's own function on the
    problem's typical inputs and the input its known bug fails on."""
    written = rows[rows["instruction"].str.contains(r"^\[simulated\] (?:Write a Python|Implement)")
                   & rows["reference"].str.startswith(TAG + "```python")]  # fmt: skip
    problems = {p.name: p for p in PROBLEMS}
    seen = {"low": 0, "high": 0}
    for _, row in written.iterrows():
        score = _score(row, "correctness")
        if math.isnan(score) or score == 3:
            continue
        reference = FENCE.findall(row["reference"])[0]
        p = problems[re.search(r"def (\w+)\(", reference).group(1)]
        calls = [c for c, _ in p.cases[:-1]] + [p.bug[3]]  # the edge case may lose its guard
        agree = _run(reference, calls) == _run(FENCE.findall(row["text"])[0], calls)
        assert agree == (score >= 4), (score, row["text"])
        seen["low" if score <= 2 else "high"] += 1
    assert min(seen.values()) >= 5, seen


def test_choices_and_verdicts_are_wrong_where_correctness_is_scored_low(rows: pd.DataFrame):
    checked = 0
    for _, row in rows.iterrows():
        score = _score(row, "correctness")
        if math.isnan(score) or score == 3:
            continue
        ref = row["reference"].removeprefix(TAG)
        if re.match(r"[ABCD]\) ", ref):  # multiple choice: the letter
            said = re.search(r"The answer is ([ABCD]):", row["text"]).group(1)
            right = said == ref[0]
        elif re.match(r"(True|False)\. ", ref):  # a claim to check: the verdict
            said = re.search(r"\b(True|False)\. ", row["text"]).group(1)
            right = said == ref.split(".")[0]
        else:
            continue
        assert right == (score >= 4), (score, row["text"], ref)
        checked += 1
    assert checked >= 200


def test_rationales_read_like_flask_feedback(rows: pd.DataFrame) -> None:
    """A verdict, then one line per skill of the instance in its order, led by the skill's
    label; N/A said as such; praise only at 4-5, criticism at 1-2; the scores object last."""
    ok = rows[rows["parse_status"] == "ok"]
    for _, row in ok.iterrows():
        lines = row["rationale"].split("\n")
        assert len(lines) == 1 + len(row["skills"]), row["rationale"]
        for line, skill in zip(lines[1:], row["skills"], strict=True):
            label, _, said = line.partition(": ")
            assert label == SKILLS[skill].label
            score = row[skill]
            if math.isnan(score):
                assert "N/A" in said or "Not applicable" in said
            elif score <= 2:
                assert re.search(CRITICISM, said), line
            elif score == 5:
                assert not re.search(CRITICISM + "|Mixed|Partly|Adequate, but", said), line
        assert row["raw_output"].startswith(row["rationale"] + "\n{")


def test_lengths_follow_the_simulated_ones(demo: Batch) -> None:
    """The simulation's own lengths, replayed from the seed: each response ends near its
    length (whole sentences; worked code, maths and refusals stop where their content does)."""
    rng = np.random.default_rng(SEED)
    inst = simulate_instances(rng)
    sim = simulate_scores(rng, inst, human_subset(rng, inst, N_HUMAN_INSTANCES))
    target = response_lengths(inst, sim["resp_eff"], sim["length_eff"], rng).ravel()
    resp = demo.responses  # in the simulation's (instance, model) order
    actual = resp["text"].str.len().to_numpy()
    assert spearmanr(target, actual).statistic > 0.9
    domains = resp["instance_id"].map(demo.instances.set_index("instance_id")["domains"])
    prose = ~domains.map(lambda d: "Math" in d or "Coding" in d).to_numpy()
    rel = np.abs(actual[prose] - target[prose]) / target[prose]
    assert np.median(rel) < 0.05 and np.mean(rel < 0.25) > 0.85
    means = pd.Series(actual).groupby(resp["model"].to_numpy()).mean()
    assert means["gpt4"] > 1.5 * means["vicuna_13b"]


def test_stored_length_is_the_length_of_the_text(demo_db) -> None:
    with Store(demo_db).read() as con:
        stored = con.execute(
            "SELECT text, length FROM responses WHERE dataset = ?", [DEMO_DATASET]
        ).fetchall()
    assert len(stored) == 1740 * len(MODELS)
    assert all(len(text) == length for text, length in stored)
