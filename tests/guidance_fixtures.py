"""Small, fully known datasets for the empty-state and default-model tests, written through the
real batch writer into a real DuckDB file. Everything is listed here in plain Python, so tests
compute what they expect with pandas on these lists (or on the store's tables), never through
the code under test.

Six instances (difficulty, domains, source task, FLASK-Hard):
  1: 1, [Math], T1      2: 1, [Coding], T1     3: 3, [Math], T2
  4: 3, [Coding], T2    5: 5, [Math], T3, hard 6: 5, [Coding, Math], T3, hard
each needing correctness and readability.

Datasets:
  blank   the instances, responses of m1, m2, m3 to each; no scores at all
  scored  the instances, responses of aaa-unscored, a, b, c, d, e; LLM judge "j" only:
          a, b, c on instances 1-4, d on 1-3, e on 4-6 (so d and e share no instance; the top
          two, a and e, share instance 4), aaa-unscored never (alphabetically first, so a
          first-four-by-name default would pick it).
          Overall: a 4.5, b = c = 3.5 (a tie), d 2.0 (one N/A), e 4.0 → a, e, b, c, d.
  twin    scored's instances and scores, plus a second LLM judge "k" on a's responses: two
          scorers, no humans
  hollow  a dataset row with nothing in it
"""

from __future__ import annotations

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
)

SKILLS = ["correctness", "readability"]
INSTANCES = {
    "1": (1, ["Math"], "T1", False),
    "2": (1, ["Coding"], "T1", False),
    "3": (3, ["Math"], "T2", False),
    "4": (3, ["Coding"], "T2", False),
    "5": (5, ["Math"], "T3", True),
    "6": (5, ["Coding", "Math"], "T3", True),
}
BLANK_MODELS = ["m1", "m2", "m3"]
UNSCORED = "aaa-unscored"
SCORED_MODELS = [UNSCORED, "a", "b", "c", "d", "e"]
JUDGE = "j"
SECOND_JUDGE = "k"
# (instance, model) → (correctness, readability); None = N/A
J_SCORES = {
    **{(i, "a"): (5, 4) for i in "1234"},
    ("1", "b"): (3, 4), ("2", "b"): (4, 3), ("3", "b"): (3, 4), ("4", "b"): (4, 3),
    ("1", "c"): (2, 5), ("2", "c"): (5, 2), ("3", "c"): (3, 4), ("4", "c"): (4, 3),
    ("1", "d"): (2, 2), ("2", "d"): (2, 2), ("3", "d"): (2, None),
    ("4", "e"): (4, 4), ("5", "e"): (4, 4), ("6", "e"): (5, 3),
}  # fmt: skip
K_SCORES = {(i, "a"): (4, 4) for i in "1234"}


def long_scores(table: dict, judge: str) -> pd.DataFrame:
    """A score table as rows: instance_id, model, judge, skill, score (NaN = N/A)."""
    rows = [
        (i, m, judge, skill, value)
        for (i, m), values in table.items()
        for skill, value in zip(SKILLS, values, strict=True)
    ]
    return pd.DataFrame(rows, columns=["instance_id", "model", "judge", "skill", "score"])


def instances_frame(dataset: str) -> pd.DataFrame:
    return pd.DataFrame(
        [
            (dataset, i, f"Instruction {i}", f"Reference {i}", task, level, domains, SKILLS, hard)
            for i, (level, domains, task, hard) in INSTANCES.items()
        ],
        columns=INSTANCE_COLS,
    )


def _responses(dataset: str, models: list[str]) -> pd.DataFrame:
    rows = [(dataset, i, m, f"Response of {m} to {i}.") for i in INSTANCES for m in models]
    return pd.DataFrame(rows, columns=RESPONSE_COLS)


def _scored_parts(dataset: str, tables: dict[str, dict]) -> dict:
    scores, judgments, judges, runs = [], [], [], []
    for judge, table in tables.items():
        run = f"run-{dataset}-{judge}"
        rows = long_scores(table, judge).assign(run_id=run, dataset=dataset)
        scores.append(rows[SCORE_COLS])
        judged = rows.drop_duplicates(["instance_id", "model"])
        judgments.append(
            judged[["run_id", "dataset", "instance_id", "model", "judge"]].assign(
                raw_output=None, rationale=None, parse_status="ok", error=None,
                latency_ms=None, prompt_tokens=None, completion_tokens=None,
            )[JUDGMENT_COLS]
        )  # fmt: skip
        judges.append(JudgeRecord(judge, "llm"))
        runs.append(RunRecord(run, judge, dataset, "tests", len(judged), len(judged)))
    return {
        "scores": pd.concat(scores, ignore_index=True),
        "judgments": pd.concat(judgments, ignore_index=True),
        "judges": judges,
        "runs": runs,
    }


def write_guidance(store: Store) -> None:
    """Write the four datasets (see the module's docstring) into ``store``."""
    src = "tests/guidance_fixtures.py"
    write_batch(
        store,
        Batch(
            datasets=[DatasetRecord("blank", "Blank", src)],
            instances=instances_frame("blank"),
            responses=_responses("blank", BLANK_MODELS),
        ),
        src,
    )
    for dataset, tables in (
        ("scored", {JUDGE: J_SCORES}),
        ("twin", {JUDGE: J_SCORES, SECOND_JUDGE: K_SCORES}),
    ):
        batch = Batch(
            datasets=[DatasetRecord(dataset, dataset.title(), src)],
            instances=instances_frame(dataset),
            responses=_responses(dataset, SCORED_MODELS),
            **_scored_parts(dataset, tables),
        )
        write_batch(store, batch, src)
    write_batch(store, Batch(datasets=[DatasetRecord("hollow", "Hollow", src)]), src)
