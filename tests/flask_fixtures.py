"""Build FLASK-shaped folders and GPT-4 review files (the real review files are not shipped)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from analysis.ingest.flask_files import FULL_FILE, HARD_FILE, OUTPUTS_DIR, REVIEWS_DIR


def link_flask(src: Path, dest: Path, *, old_schema: bool = False) -> Path:
    """A folder laid out like the repository, linking the real files (optionally the old
    evaluation-set schema from evaluation_set_v1/ at the current paths)."""
    eval_src = src / ("evaluation_set_v1" if old_schema else "evaluation_set")
    for rel, name in ((FULL_FILE, "flask_evaluation.jsonl"),
                      (HARD_FILE, "flask_hard_evaluation.jsonl")):  # fmt: skip
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).symlink_to(eval_src / name)
    (dest / OUTPUTS_DIR).mkdir(parents=True, exist_ok=True)
    for f in sorted((src / OUTPUTS_DIR).glob("*.jsonl")):
        (dest / OUTPUTS_DIR / f.name).symlink_to(f)
    return dest


def write_reviews(src: Path, dest: Path, models: dict[str, str], n: int = 60,
                  seed: int = 5) -> dict[str, list[dict]]:  # fmt: skip
    """Review files in FLASK's format for the first ``n`` instances: the old-schema question
    row plus target_txt, review, score (lower-case skill names, ints, "N/A", or {} when
    unparseable) and total_tokens_step4. ``models`` maps model → file name. Returns the rows."""
    rng = random.Random(seed)
    questions = [json.loads(line) for line in
                 (src / "evaluation_set_v1" / "flask_evaluation.jsonl").open()][:n]  # fmt: skip
    out: dict[str, list[dict]] = {}
    (dest / REVIEWS_DIR).mkdir(parents=True, exist_ok=True)
    for model, file_name in models.items():
        responses = {json.loads(line)["question_id"]: json.loads(line)["text"]
                     for line in (src / OUTPUTS_DIR / f"{model}.jsonl").open()}  # fmt: skip
        rows = []
        for q in questions:
            score: dict = {}
            roll = rng.random()
            if roll > 0.05:  # ~5% of judge outputs could not be parsed → {}
                for skill in q["metrics"]:
                    value = "N/A" if rng.random() < 0.1 else rng.randint(1, 5)
                    score[skill.lower()] = value
            review = "Feedback per skill ... " + json.dumps(score)
            rows.append({**q, "target_txt": responses[q["question_id"]], "review": review,
                         "score": score, "total_tokens_step4": rng.randint(800, 1600)})  # fmt: skip
        with (dest / REVIEWS_DIR / file_name).open("w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        out[model] = rows
    return out
