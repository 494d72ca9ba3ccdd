"""Parse FLASK's files (a folder laid out like github.com/kaistAI/FLASK) into a Batch.

Both evaluation-set schemas are read: ``idx/instruction/answer/task/skill/domain/difficulty``
and the older ``question_id/text/answer/task/metrics/domain_labeled/difficulty_labeled`` (whose
list fields may be strings such as "['Readability', 'Conciseness']").
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.core.errors import InputError
from analysis.core.taxonomy import (
    normalise_difficulty,
    normalise_domain,
    normalise_skill,
    suggest_skill,
)
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    JudgeRecord,
    RunRecord,
)
from analysis.ingest.file_checks import exists, max_file_bytes, regular_file
from analysis.ingest.jsonl import iter_jsonl

FULL_FILE = "evaluation_set/flask_evaluation.jsonl"
HARD_FILE = "evaluation_set/flask_hard_evaluation.jsonl"
OUTPUTS_DIR = "model_output/outputs"
REVIEWS_DIR = "gpt_review/outputs"
REVIEW_JUDGE = JudgeRecord(
    judge="gpt-4 (FLASK review)",
    kind="llm",
    backend="import",
    model="gpt-4",
    prompt_version="flask-skill-specific",
)
_NA = {"n/a", "na", "none", "null", ""}

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class _Schema:
    id: str
    instruction: str
    skills: str
    domains: str
    difficulty: str


NEW = _Schema("idx", "instruction", "skill", "domain", "difficulty")
OLD = _Schema("question_id", "text", "metrics", "domain_labeled", "difficulty_labeled")


def _list_field(value: object, name: str, no: int, field: str) -> list[str]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = ast.literal_eval(text)  # the old schema stores lists as Python literals
            except (ValueError, SyntaxError) as e:
                raise InputError(name, no, field, f"cannot read the list {value!r}") from e
        else:
            value = [text]
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        raise InputError(name, no, field, f"expected a list of names, got {value!r}")
    return [str(v) for v in value]


def _instance_id(obj: dict, key: str, name: str, no: int) -> str:
    if key not in obj:
        raise InputError(name, no, key, "missing; every row needs its id")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InputError(name, no, key, f"expected a positive integer id, got {v!r}")
    return str(v)


def _text(obj: dict, key: str, name: str, no: int, required: bool) -> str | None:
    v = obj.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or (required and not v.strip()):
        raise InputError(name, no, key, f"expected non-empty text, got {v!r}")
    return v


def parse_instance(obj: dict, name: str, no: int) -> tuple:
    """One evaluation-set row (either schema) → an instances row without dataset."""
    schema = NEW if "idx" in obj or "instruction" in obj else OLD
    iid = _instance_id(obj, schema.id, name, no)
    instruction = _text(obj, schema.instruction, name, no, required=True)
    skills = []
    for s in _list_field(obj.get(schema.skills), name, no, schema.skills):
        sid = normalise_skill(s)
        if sid is None:
            raise InputError(name, no, schema.skills, f"unknown skill '{s}'{suggest_skill(s)}")
        skills.append(sid)
    if not skills:
        raise InputError(name, no, schema.skills, "no skills: every instance needs 1-3 skills")
    domains = []
    for d in _list_field(obj.get(schema.domains, []), name, no, schema.domains):
        try:
            dom = normalise_domain(d)
        except ValueError as e:
            raise InputError(name, no, schema.domains, str(e)) from e
        if dom:
            domains.append(dom)
    try:
        difficulty = normalise_difficulty(obj.get(schema.difficulty))
    except ValueError as e:
        raise InputError(name, no, schema.difficulty, str(e)) from e
    return (
        iid,
        instruction,
        _text(obj, "answer", name, no, False),
        _text(obj, "task", name, no, False),
        difficulty,
        domains,
        skills,
    )


def read_evaluation_set(path: Path, name: str) -> dict[str, tuple]:
    """instance_id → row; an id repeated with different content is an error naming both lines."""
    rows: dict[str, tuple] = {}
    first_line: dict[str, int] = {}
    for no, obj in iter_jsonl(path, name):
        row = parse_instance(obj, name, no)
        iid = row[0]
        if iid in rows and rows[iid] != row:
            key = "idx" if "idx" in obj else "question_id"
            raise InputError(
                name,
                no,
                key,
                f"id {iid} already appears on line {first_line[iid]} with different content",
            )
        rows.setdefault(iid, row)
        first_line.setdefault(iid, no)
    return rows


def read_model_outputs(path: Path, name: str, known: dict[str, tuple]) -> dict[str, str]:
    """question_id → response text for one model's file."""
    out: dict[str, str] = {}
    for no, obj in iter_jsonl(path, name):
        iid = _instance_id(obj, "question_id", name, no)
        text = obj.get("text")
        if not isinstance(text, str):
            raise InputError(name, no, "text", f"expected the response text, got {text!r}")
        if iid not in known:
            raise InputError(name, no, "question_id", f"id {iid} is not in the evaluation set")
        if iid in out and out[iid] != text:
            raise InputError(name, no, "question_id", f"id {iid} appears twice with different text")
        out[iid] = text
    return out


def model_name(path: Path) -> str:
    stem = path.name.removesuffix(".jsonl")
    return stem.removesuffix("_review")


def parse_review_score(score: object) -> tuple[dict[str, float | None], str | None]:
    """FLASK's ``score`` dict → ({skill: value or None for N/A}, error); ``{}`` is a failure."""
    if not isinstance(score, dict) or not score:
        return {}, "the judge output could not be parsed (empty score)"
    out: dict[str, float | None] = {}
    for key, value in score.items():
        sid = normalise_skill(str(key))
        if sid is None:
            return {}, f"unknown skill '{key}' in the judge's scores{suggest_skill(str(key))}"
        if isinstance(value, bool):
            return {}, f"score {value!r} for '{key}' is neither 1-5 nor N/A"
        if isinstance(value, str) and value.strip().lower() in _NA:
            out[sid] = None
            continue
        try:
            v = float(value)  # FLASK writes ints; some rows hold numeric strings
        except (TypeError, ValueError):
            return {}, f"score {value!r} for '{key}' is neither 1-5 nor N/A"
        if not 1 <= v <= 5:
            return {}, f"score {value!r} for '{key}' is outside 1-5"
        out[sid] = v
    return out, None


def read_review_file(path: Path, name: str, known: dict[str, tuple]) -> tuple[list, list, list]:
    """(judgment rows, score rows, response rows) of one GPT-4 review file."""
    model = model_name(path)
    run_id = (
        "import-"
        + hashlib.sha1(REVIEW_JUDGE.judge.encode() + b"\0" + path.read_bytes()).hexdigest()[:20]
    )
    judgments, scores, responses = [], [], []
    seen: dict[str, tuple[int, str]] = {}
    for no, obj in iter_jsonl(path, name):
        iid = _instance_id(obj, "question_id", name, no)
        if iid not in known:
            raise InputError(name, no, "question_id", f"id {iid} is not in the evaluation set")
        if iid in seen:  # one judgment per response: a repeat would count its scores twice
            first, review = seen[iid]
            if review != obj.get("review"):
                raise InputError(
                    name,
                    no,
                    "question_id",
                    f"id {iid} already reviewed on line {first} with a different review",
                )
            continue
        seen[iid] = (no, obj.get("review"))
        review = obj.get("review")
        if not isinstance(review, str):
            raise InputError(name, no, "review", f"expected the judge's text, got {review!r}")
        if "score" not in obj:
            raise InputError(name, no, "score", "missing; expected a dict of skill scores")
        if not isinstance(obj["score"], dict):
            raise InputError(name, no, "score", f"expected a dict, got {obj['score']!r}")
        parsed, error = parse_review_score(obj["score"])
        tokens = obj.get("total_tokens_step4")
        tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
        judgments.append(
            (
                run_id,
                "flask",
                iid,
                model,
                REVIEW_JUDGE.judge,
                review,
                review,
                "failed" if error else "ok",
                error,
                None,
                tokens,
                None,
            )
        )
        scores += [
            (run_id, "flask", iid, model, REVIEW_JUDGE.judge, s, v) for s, v in parsed.items()
        ]
        if isinstance(obj.get("target_txt"), str):
            responses.append(("flask", iid, model, obj["target_txt"]))
    return judgments, scores, responses


def _noop(done: int, total: int, label: str) -> None:
    pass


def parse_folder(root: Path, source: str | None = None, progress: Progress = _noop) -> Batch:
    """Everything in a FLASK folder → one Batch (nothing written yet)."""
    source = source or str(root)
    label = lambda rel: f"{source.rstrip('/')}/{rel}"  # noqa: E731 - names in error messages
    limit = max_file_bytes()
    for rel in (FULL_FILE, HARD_FILE):
        if not exists(root / rel):
            raise InputError(
                label(rel),
                None,
                None,
                "file not found; expected a folder laid out like github.com/kaistAI/FLASK",
            )
        regular_file(root / rel, label(rel), limit)
    outputs = sorted((root / OUTPUTS_DIR).glob("*.jsonl"))
    reviews = sorted((root / REVIEWS_DIR).glob("*.jsonl"))
    for folder, paths in ((OUTPUTS_DIR, outputs), (REVIEWS_DIR, reviews)):
        for path in paths:  # before any is read: a FIFO would block, /dev/zero never end
            regular_file(path, label(f"{folder}/{path.name}"), limit)
    total = 2 + len(outputs) + len(reviews)
    progress(0, total, "evaluation set")
    full = read_evaluation_set(root / FULL_FILE, label(FULL_FILE))
    hard = read_evaluation_set(root / HARD_FILE, label(HARD_FILE))
    progress(2, total, "evaluation sets")

    batch = Batch(
        datasets=[
            DatasetRecord(
                "flask",
                "FLASK",
                source,
                description="FLASK evaluation set "
                "(Ye et al., ICLR 2024): 1,740 instructions, 3 skills each",
            ),
            DatasetRecord(
                "flask-hard",
                "FLASK-Hard",
                source,
                description="FLASK-Hard: 89 expert-level instructions of FLASK",
            ),
        ]
    )
    responses: list[tuple] = []
    for i, path in enumerate(outputs, 3):
        texts = read_model_outputs(path, label(f"{OUTPUTS_DIR}/{path.name}"), full)
        model = model_name(path)
        responses += [("flask", iid, model, t) for iid, t in texts.items()]
        progress(i, total, f"model outputs: {model}")
    judgments, scores = [], []
    models = [model_name(p) for p in reviews]
    if len(set(models)) < len(models):
        twice = sorted({m for m in models if models.count(m) > 1})
        raise InputError(
            label(REVIEWS_DIR),
            None,
            None,
            f"two review files for {twice[0]} (<model>.jsonl and <model>_review.jsonl); keep one",
        )
    for i, path in enumerate(reviews, 3 + len(outputs)):
        j, s, r = read_review_file(path, label(f"{REVIEWS_DIR}/{path.name}"), full)
        judgments += j
        scores += s
        responses += r
        batch.runs.append(
            RunRecord(
                j[0][0],
                REVIEW_JUDGE.judge,
                "flask",
                label(f"{REVIEWS_DIR}/{path.name}"),
                len(j),
                sum(x[7] == "ok" for x in j),
                sum(x[7] != "ok" for x in j),
                sum(x[10] or 0 for x in j),
            )
        )
        progress(i, total, f"GPT-4 reviews: {model_name(path)}")
    if reviews:
        batch.judges.append(REVIEW_JUDGE)
    _assemble(batch, full, hard, responses, judgments, scores)
    return batch


def _assemble(
    batch: Batch, full: dict, hard: dict, responses: list, judgments: list, scores: list
) -> None:
    by_text = {row[1]: iid for iid, row in full.items()}
    hard_match = {hid: by_text.get(row[1]) for hid, row in hard.items()}
    matched = {m for m in hard_match.values() if m}
    batch.instances = pd.DataFrame(
        [("flask", *row, row[0] in matched) for row in full.values()]
        + [("flask-hard", *row, True) for row in hard.values()],
        columns=INSTANCE_COLS,
    )
    # Review files repeat the response (target_txt); the model-output file wins on conflict.
    resp = pd.DataFrame(responses, columns=RESPONSE_COLS).drop_duplicates(
        ["dataset", "instance_id", "model"], keep="first"
    )
    # FLASK-Hard reuses the full set's responses: same instruction, same answers.
    full_resp = resp[resp["dataset"] == "flask"]
    hard_rows = [(hid, fid) for hid, fid in hard_match.items() if fid]
    link = pd.DataFrame(hard_rows, columns=["hard_id", "instance_id"])
    hard_resp = full_resp.merge(link, on="instance_id")
    hard_resp = hard_resp.assign(dataset="flask-hard", instance_id=hard_resp["hard_id"])
    batch.responses = pd.concat([resp, hard_resp[RESPONSE_COLS]], ignore_index=True)
    batch.judgments = pd.DataFrame(judgments, columns=JUDGMENT_COLS)
    batch.scores = pd.DataFrame(scores, columns=SCORE_COLS)
    models = full_resp["model"].nunique()
    answered = full_resp.groupby("model")["instance_id"].nunique()
    report = batch.report
    report.missing_responses = int(sum(len(full) - answered))
    report.parse_failures = int((batch.judgments["parse_status"] != "ok").sum())
    report.counts = {
        "FLASK instances": len(full),
        "FLASK-Hard instances": len(hard),
        "models": models,
        "responses": len(full_resp),
        "FLASK-Hard responses (shared with the full set)": len(hard_resp),
        "judge scores": len(batch.scores),
    }
    report.notes.append(
        f"FLASK-Hard: {len(matched)} of {len(hard)} instructions found in the "
        "full set (flagged there for the FLASK-Hard filter)"
    )
