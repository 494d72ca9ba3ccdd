"""Small FLASK-shaped folders and store snapshots for the import tests (no shared data needed)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.core.store import Store

TABLES = (
    "meta", "datasets", "skills", "criteria", "instances", "responses", "judges", "runs",
    "judgments", "scores",
)  # fmt: skip
SKILL_SETS = [
    ["Logical Correctness", "Readability", "Conciseness"],
    ["Factuality", "Comprehension", "Completeness"],
    ["Logical Robustness", "Logical Efficiency", "Insightfulness"],
]
LEVELS = ["simple lifestyle knowledge", "formal education knowledge", "expert level knowledge"]


def eval_row(i: int) -> dict:
    return {
        "idx": i,
        "instruction": f"Question {i}: explain, briefly, why {i} + {i} = {2 * i}.",
        "answer": f"Because {i} doubled is {2 * i}.",
        "task": "Self-instruct",
        "skill": SKILL_SETS[i % 3],
        "domain": ["Math"] if i % 2 else ["Humanities", "Language"],
        "difficulty": LEVELS[i % 3],
    }


def review_row(i: int, model: str, score: object) -> dict:
    """A GPT-4 review row: the old-schema question row plus target_txt, review and score."""
    row = eval_row(i)
    return {
        "question_id": i, "text": row["instruction"], "answer": row["answer"],
        "task": row["task"], "metrics": row["skill"], "domain_labeled": row["domain"],
        "difficulty_labeled": row["difficulty"], "target_txt": f"{model} says {2 * i}",
        "review": f"Feedback for {i}. Scores: {json.dumps(score)}", "score": score,
        "total_tokens_step4": 1000 + i,
    }  # fmt: skip


def write_jsonl(path: Path, rows: list[dict], *, newline: str = "\n", bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + newline for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def build_flask(root: Path, n: int = 6, models: tuple[str, ...] = ("alpaca", "vicuna"),
                reviews: bool = True) -> Path:  # fmt: skip
    """A folder laid out like github.com/kaistAI/FLASK with ``n`` instances; the first two
    instances also form FLASK-Hard. Review scores are deterministic ints in 1..5."""
    write_jsonl(
        root / "evaluation_set/flask_evaluation.jsonl", [eval_row(i) for i in range(1, n + 1)]
    )
    hard = [{**eval_row(i), "idx": k} for k, i in enumerate((1, 2), 1)]
    write_jsonl(root / "evaluation_set/flask_hard_evaluation.jsonl", hard)
    for model in models:
        outputs = [{"question_id": i, "text": f"{model} says {2 * i}"} for i in range(1, n + 1)]
        write_jsonl(root / f"model_output/outputs/{model}.jsonl", outputs)
        if reviews:
            rows = [review_row(i, model, {s.lower(): 1 + (i + k) % 5
                                          for k, s in enumerate(SKILL_SETS[i % 3])})
                    for i in range(1, n + 1)]  # fmt: skip
            write_jsonl(root / f"gpt_review/outputs/{model}_review.jsonl", rows)
    return root


def snapshot(store: Store) -> dict[str, list]:
    """Every row of every table, sorted: two snapshots are equal iff nothing changed."""
    with store.read() as con:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}


def counts(store: Store) -> dict[str, int]:
    with store.read() as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def query(store: Store, sql: str, params: list | tuple = ()) -> list[tuple]:
    with store.read() as con:
        return con.execute(sql, list(params)).fetchall()
