"""A hand-built dataset for the radar and breakdown tests, written with the real batch writer
into a real DuckDB file. Its scores are listed here in plain Python so tests can compute the
expected numbers independently (plain pandas / numpy on this list, never via the store).

Instances (difficulty, domains, source task, FLASK-Hard):
  i1: 1, [Math], T1           i2: 1, [Math, Coding] (two domains), T1
  i3: 2, [Coding], T2         i4: unlabeled, [] (no domain), T2
  i5: 5, [Math], T3, hard     i6: 5, [Coding], T3, hard
Models A, B, C; judge "j"; skills correctness and readability on every instance, factuality on
i5 and i6. None = N/A. C's readability is N/A everywhere (an n = 0 cell).
"""

from __future__ import annotations

import pandas as pd

from analysis.core.store import Store
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    JudgeRecord,
    RunRecord,
    write_batch,
)

DATASET = "hand"
JUDGE = "j"
INSTANCES = {
    "i1": (1, ["Math"], "T1", False),
    "i2": (1, ["Math", "Coding"], "T1", False),
    "i3": (2, ["Coding"], "T2", False),
    "i4": (None, [], "T2", False),
    "i5": (5, ["Math"], "T3", True),
    "i6": (5, ["Coding"], "T3", True),
}
# (instance, model) → {skill: score}
SCORES = {
    ("i1", "A"): {"correctness": 4, "readability": 5},
    ("i2", "A"): {"correctness": 5, "readability": 4},
    ("i3", "A"): {"correctness": 3, "readability": None},
    ("i4", "A"): {"correctness": 4, "readability": 5},
    ("i5", "A"): {"correctness": 2, "readability": 4, "factuality": 3},
    ("i6", "A"): {"correctness": 1, "readability": 3, "factuality": None},
    ("i1", "B"): {"correctness": 3, "readability": 3},
    ("i2", "B"): {"correctness": 3, "readability": 2},
    ("i3", "B"): {"correctness": 2, "readability": 4},
    ("i4", "B"): {"correctness": None, "readability": 3},
    ("i5", "B"): {"correctness": 1, "readability": 2, "factuality": 2},
    ("i6", "B"): {"correctness": 2, "readability": 2, "factuality": 1},
    ("i1", "C"): {"correctness": 5, "readability": None},
    ("i2", "C"): {"correctness": 4, "readability": None},
    ("i3", "C"): {"correctness": 4, "readability": None},
}


def long_scores() -> pd.DataFrame:
    """The fixture as one row per score with the instance's attributes (for expectations)."""
    rows = []
    for (iid, model), by_skill in SCORES.items():
        level, domains, task, hard = INSTANCES[iid]
        for skill, score in by_skill.items():
            rows.append((iid, model, skill, score, level, domains, task, hard))
    cols = ["instance_id", "model", "skill", "score", "difficulty", "domains", "task", "hard"]
    return pd.DataFrame(rows, columns=cols)


def write_hand(store: Store, dataset: str = DATASET) -> None:
    inst = pd.DataFrame(
        [
            (dataset, iid, f"instruction {iid}", None, task, level, domains,
             sorted({s for (i, _), sk in SCORES.items() if i == iid for s in sk}), hard)
            for iid, (level, domains, task, hard) in INSTANCES.items()
        ],
        columns=INSTANCE_COLS,
    )  # fmt: skip
    run = f"run-{dataset}"
    scores = pd.DataFrame(
        [(run, dataset, i, m, JUDGE, s, v) for (i, m), sk in SCORES.items() for s, v in sk.items()],
        columns=SCORE_COLS,
    )
    judgments = scores.drop_duplicates(["instance_id", "model"])[
        ["run_id", "dataset", "instance_id", "model", "judge"]
    ].assign(raw_output=None, rationale=None, parse_status="ok", error=None, latency_ms=None,
             prompt_tokens=None, completion_tokens=None)[JUDGMENT_COLS]  # fmt: skip
    batch = Batch(
        datasets=[DatasetRecord(dataset, "Hand-built", "tests/page_fixtures.py")],
        instances=inst,
        judges=[JudgeRecord(JUDGE, "llm")],
        runs=[RunRecord(run, JUDGE, dataset, "tests", len(judgments), len(judgments))],
        judgments=judgments,
        scores=scores,
    )
    write_batch(store, batch, "tests/page_fixtures.py")
