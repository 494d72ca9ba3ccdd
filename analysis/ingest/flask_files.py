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

from analysis.core.errors import InputError
from analysis.core.taxonomy import (
    normalise_difficulty,
    normalise_domain,
    normalise_skill,
    suggest_skill,
)
from analysis.core.writer import Batch, DatasetRecord, JudgeRecord, RunRecord
from analysis.ingest.file_checks import exists, max_file_bytes, regular_file, utf8_name
from analysis.ingest.flask_tables import assemble
from analysis.ingest.jsonl import iter_jsonl
from analysis.ingest.score_columns import NUMBER

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
_MISSING = object()  # a key a row lacks: not an int nor a str, so the row-by-row reading runs

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


class _Names:
    """The taxonomy's normalisers, remembered per spelling: an evaluation set repeats a few
    dozen spellings over its rows. Only successes are kept (an unknown name raises each time);
    a difficulty is kept by (type, value), so that 1.0 is not taken for 1."""

    def __init__(self) -> None:
        self.skills: dict[str, str | None] = {}
        self.domains: dict[str, str | None] = {}
        self.levels: dict[tuple[type, object], int | None] = {}

    def skill(self, name: str) -> str | None:
        if name not in self.skills:
            self.skills[name] = normalise_skill(name)
        return self.skills[name]

    def domain(self, name: str) -> str | None:
        if name not in self.domains:
            self.domains[name] = normalise_domain(name)  # ValueError: not kept
        return self.domains[name]

    def difficulty(self, value: object) -> int | None:
        if value.__class__ not in (str, int):  # floats, None, bools, lists: not kept
            return normalise_difficulty(value)
        key = (value.__class__, value)
        if key not in self.levels:
            self.levels[key] = normalise_difficulty(value)
        return self.levels[key]


def parse_instance(obj: dict, name: str, no: int, names: _Names | None = None) -> tuple:
    """One evaluation-set row (either schema) → an instances row without dataset."""
    names = names or _Names()
    schema = NEW if "idx" in obj or "instruction" in obj else OLD
    iid = _instance_id(obj, schema.id, name, no)
    instruction = _text(obj, schema.instruction, name, no, required=True)
    skills = []
    for s in _list_field(obj.get(schema.skills), name, no, schema.skills):
        sid = names.skill(s)
        if sid is None:
            raise InputError(name, no, schema.skills, f"unknown skill '{s}'{suggest_skill(s)}")
        skills.append(sid)
    if not skills:
        raise InputError(name, no, schema.skills, "no skills: every instance needs 1-3 skills")
    domains = []
    for d in _list_field(obj.get(schema.domains, []), name, no, schema.domains):
        try:
            dom = names.domain(d)
        except ValueError as e:
            raise InputError(name, no, schema.domains, str(e)) from e
        if dom:
            domains.append(dom)
    try:
        difficulty = names.difficulty(obj.get(schema.difficulty))
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
    names = _Names()
    for no, obj in iter_jsonl(path, name):
        row = parse_instance(obj, name, no, names)
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
    """question_id → response text for one model's file.

    Every check of the row-by-row reading is made on whole columns (a model's file is ~1,700
    rows of one shape); only a file that fails one is read again row by row, which names the
    first bad line exactly as before. The parsed objects are dropped as they come: kept, tens
    of thousands of dicts made the garbage collector walk them, a fifth of the parse."""
    qids, texts = [], []
    try:
        for _, obj in iter_jsonl(path, name):
            qids.append(obj.get("question_id", _MISSING))
            texts.append(obj.get("text", _MISSING))
    except InputError:  # a bad line: a bad row before it is the first error, as row by row
        _model_outputs_by_row(path, name, known)
        raise
    # int and str exactly: a bool is not an id (json gives no other subclasses)
    if set(map(type, qids)) == {int} and set(map(type, texts)) == {str} and min(qids) >= 1:
        ids = list(map(str, qids))
        if len(set(ids)) == len(ids) and known.keys() >= set(ids):
            return dict(zip(ids, texts, strict=True))
    return _model_outputs_by_row(path, name, known)


def _model_outputs_by_row(path: Path, name: str, known: dict[str, tuple]) -> dict[str, str]:
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
        # FLASK writes ints; some rows hold numeric strings, read strictly: float() alone would
        # take "0_3" (digit separators) and non-ASCII digits as 3.
        if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
            value = value.strip()
        elif not isinstance(value, int | float):
            return {}, f"score {value!r} for '{key}' is neither 1-5 nor N/A"
        v = float(value)
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
    utf8_name(source, "folder")  # stored as the datasets' source
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
            utf8_name(str(path))  # the file names the model
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
    # Responses of dataset "flask", one chunk per file: (model, instance ids, texts).
    responses: list[tuple[str, list, list]] = []
    for i, path in enumerate(outputs, 3):
        texts = read_model_outputs(path, label(f"{OUTPUTS_DIR}/{path.name}"), full)
        model = model_name(path)
        responses.append((model, list(texts), list(texts.values())))
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
        responses.append((model_name(path), [x[1] for x in r], [x[3] for x in r]))
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
    assemble(batch, full, hard, responses, judgments, scores)
    return batch
