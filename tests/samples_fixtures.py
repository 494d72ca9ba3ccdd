"""A small, fully known dataset for the Samples / Annotate tests, written through write_batch.

24 instances x 3 models; two LLM judges score every response, a human judge every third; about
one score in eight is N/A. Some texts carry search needles, including LIKE wildcards (% and _)
that must be matched literally.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.core.store import Store
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
)  # fmt: skip

DATASET = "mini"
MODELS = ["alpha", "beta", "gamma"]
JUDGES = {"judge-a": "llm", "judge-b": "llm", "human-x": "human"}
SKILL_SETS = [
    ["robustness", "correctness", "efficiency"],
    ["factuality", "commonsense", "comprehension"],
    ["readability", "conciseness", "harmlessness"],
]
DOMAINS = ["math", "coding", "health", "culture"]
TASKS = ["gsm8k", "mbpp", "koala"]


def instance_text(i: int) -> tuple[str, str]:
    instruction = f"Instruction number {i}: explain the topic."
    if i % 5 == 0:
        instruction += " Mention the Zebra crossing."
    reference = f"Reference for {i}."
    if i % 7 == 0:
        reference += " Prices are 50% off_sale today."
    return instruction, reference


def response_text(i: int, m: str) -> str:
    text = f"Response of {m} to {i}."
    if (i + len(m)) % 4 == 0:
        text += " The needle word is HayStack here."
    if i == 3 and m == "beta":
        text += " 100% sure_thing."
    return text


def frames(seed: int = 5) -> dict[str, pd.DataFrame]:
    """The dataset as plain frames (instances, responses, scores): the tests' own truth."""
    rng = np.random.default_rng(seed)
    inst, resp, scores = [], [], []
    for i in range(1, 25):
        instruction, reference = instance_text(i)
        skills = SKILL_SETS[i % 3]
        inst.append({
            "dataset": DATASET, "instance_id": str(i), "instruction": instruction,
            "reference": reference, "source_task": TASKS[i % 3], "difficulty": 1 + i % 5,
            "domains": [DOMAINS[i % 4]], "skills": skills, "flask_hard": i % 6 == 0,
        })  # fmt: skip
        for m in MODELS:
            resp.append({"dataset": DATASET, "instance_id": str(i), "model": m,
                         "text": response_text(i, m)})  # fmt: skip
            for judge in JUDGES:
                if judge == "human-x" and i % 3:
                    continue
                for s in skills:
                    value = float(rng.integers(1, 6))
                    scores.append({"dataset": DATASET, "instance_id": str(i), "model": m,
                                   "judge": judge, "skill": s,
                                   "score": np.nan if rng.random() < 0.125 else value})  # fmt: skip
    return {
        "instances": pd.DataFrame(inst)[INSTANCE_COLS],
        "responses": pd.DataFrame(resp)[RESPONSE_COLS],
        "scores": pd.DataFrame(scores),
    }


def write_mini(store: Store, seed: int = 5) -> dict[str, pd.DataFrame]:
    """Write the dataset into ``store`` (one run and one judgment per judge and response)."""
    f = frames(seed)
    scores = f["scores"].assign(run_id=lambda d: "mini-" + d["judge"])
    keys = scores[["run_id", "dataset", "instance_id", "model", "judge"]].drop_duplicates()
    judgments = keys.assign(
        raw_output=lambda d: "raw " + d["judge"] + " on " + d["instance_id"] + "/" + d["model"],
        rationale=lambda d: "Rationale of " + d["judge"] + " for " + d["instance_id"],
        parse_status="ok", error=None, latency_ms=None, prompt_tokens=None,
        completion_tokens=None,
    )[JUDGMENT_COLS]  # fmt: skip
    batch = Batch(
        datasets=[DatasetRecord(DATASET, "Mini", "tests")],
        instances=f["instances"],
        responses=f["responses"],
        judges=[JudgeRecord(j, k) for j, k in JUDGES.items()],  # type: ignore[arg-type]
        runs=[RunRecord(f"mini-{j}", j, DATASET, "tests") for j in JUDGES],
        judgments=judgments,
        scores=scores[SCORE_COLS],
    )
    write_batch(store, batch, "tests")
    return f
