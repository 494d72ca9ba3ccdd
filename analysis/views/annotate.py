"""Human annotation: save one annotator's answer on one response as that human's scores.

An annotator is a judge of kind 'human' (backend 'annotation'), with one run per annotator and
dataset. Each saved form is one judgments row (the comment is its rationale, the raw output a
JSON copy of the form) and one scores row per skill (N/A = NULL), all in one transaction, so a
refresh or a crash loses nothing that was saved. Saving the same response again supersedes the
annotator's previous scores on it (they stay as history; ``latest_scores`` shows the new ones);
two annotators on one response are two judges, both kept. Because the labels are ordinary
scores of a human judge, the sidebar's judge list and every agreement statistic see them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

from analysis.core import score_sums
from analysis.core.errors import InputError, NotFoundError
from analysis.core.names import MAX_LENGTH, check_name
from analysis.core.store import Store
from analysis.views.queues import ANNOTATE
from analysis.views.sample_detail import SAMPLE_RESPONSE

INSTANCE_RUBRIC = """
SELECT u.skill, COALESCE(k.label, u.skill) AS label, k.definition, k.rubric,
       COALESCE(k.scale_min, 1) AS scale_min, COALESCE(k.scale_max, 5) AS scale_max
FROM (SELECT dataset, unnest(skills) AS skill, generate_subscripts(skills, 1) AS pos
      FROM instances WHERE dataset = ? AND instance_id = ?) u
LEFT JOIN dataset_skills k USING (dataset, skill)
ORDER BY u.pos
"""

JUDGE_KIND = "SELECT kind FROM judges WHERE judge = ?"

INSERT_ANNOTATOR = """
INSERT INTO judges (judge, kind, backend, params) VALUES (?, 'human', 'annotation', '{}')
ON CONFLICT DO NOTHING
"""

# One run per annotator and dataset; each saved form bumps its counts and finish time.
UPSERT_ANNOTATION_RUN = """
INSERT INTO runs (run_id, judge, dataset, source, started_at, finished_at, status, n_items, n_ok)
VALUES (?, ?, ?, 'annotate page', current_timestamp, current_timestamp, 'complete', 1, 1)
ON CONFLICT (run_id) DO UPDATE SET
    finished_at = now()::TIMESTAMP, n_items = runs.n_items + 1, n_ok = runs.n_ok + 1
"""

INSERT_ANNOTATION_JUDGMENT = """
INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, rationale,
                       parse_status, latency_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, 'ok', ?)
RETURNING judgment_id
"""

# Re-saving an item replaces the annotator's previous answer (kept as history).
SUPERSEDE_ANSWER = """
UPDATE scores SET superseded = true
WHERE NOT superseded AND dataset = ? AND instance_id = ? AND model = ? AND judge = ?
"""

INSERT_ANSWER_SCORES = """
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, judgment_id, run_id)
SELECT ?, ?, ?, ?, unnest(?::VARCHAR[]), unnest(?::DOUBLE[]), ?, ?
"""

# The saved answer's key, for the model × instance sums (core/score_sums.py).
ANSWER_KEY = "SELECT ? AS dataset, ? AS instance_id, ? AS model, ? AS judge"

# The annotator's current answers on a dataset: one row per (instance, model, skill).
ANNOTATOR_ANSWERS = """
SELECT s.instance_id, s.model, s.skill, s.score, g.rationale AS comment, g.created_at
FROM latest_scores s LEFT JOIN judgments g ON g.judgment_id = s.judgment_id
WHERE s.dataset = ? AND s.judge = ?
"""

# Queue items with whether this annotator has answered them, in queue order.
ANNOTATION_QUEUE = """
SELECT q.instance_id, q.model,
       EXISTS (SELECT 1 FROM latest_scores s
               WHERE s.dataset = q.dataset AND s.instance_id = q.instance_id
                 AND s.model = q.model AND s.judge = ?) AS answered
FROM queue_items q
WHERE q.queue = ? AND q.dataset = ?
ORDER BY q.seq
"""


MAX_NAME = MAX_LENGTH["annotator"]
MAX_COMMENT = 20_000


@dataclass(frozen=True)
class RubricSkill:
    """One skill an instance needs, as the form shows it."""

    skill: str
    label: str
    definition: str
    rubric: tuple[str, ...]  # one text per integer score, lowest first (may be empty)
    scale_min: float
    scale_max: float

    @property
    def choices(self) -> tuple[int, ...]:
        """The integer scores offered (FLASK: 1..5)."""
        return tuple(range(math.ceil(self.scale_min), math.floor(self.scale_max) + 1))


@dataclass(frozen=True)
class Answer:
    """One annotator's form on one response: a score (or None = N/A) for every skill."""

    annotator: str
    dataset: str
    instance_id: str
    model: str
    scores: dict[str, float | None]
    comment: str = ""
    seconds: float | None = None  # time spent on the form, when known


@dataclass(frozen=True)
class QueueProgress:
    """An annotator's place in the annotate queue of a dataset."""

    items: tuple[tuple[str, str], ...]  # (instance_id, model) in queue order
    answered: tuple[bool, ...]
    next_index: int | None  # first unanswered item; None when all are answered

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def done(self) -> int:
        return sum(self.answered)


@dataclass(frozen=True)
class PreviousAnswer:
    scores: dict[str, float | None] = field(default_factory=dict)
    comment: str = ""


def check_annotator(name: str) -> str:
    """The annotator's name as stored (NFC, stripped: analysis/core/names.py); InputError when
    it cannot be a judge name (empty, too long, invisible characters, a reserved kind:…)."""
    if not (name or "").strip():
        raise InputError("annotation", None, "annotator", "enter your name before saving")
    return check_name("annotator", name, source="annotation")


def run_id(annotator: str, dataset: str) -> str:
    return f"annotation:{dataset}:{annotator}"


def rubric(store: Store, dataset: str, instance_id: str) -> list[RubricSkill]:
    """The instance's skills in its own order, with definitions and rubric texts."""
    with store.read() as con:
        rows = con.execute(INSTANCE_RUBRIC, [dataset, instance_id]).fetchall()
    return [
        RubricSkill(skill, label, definition or "", tuple(texts or ()), lo, hi)
        for skill, label, definition, texts, lo, hi in rows
    ]


def _check_scores(answer: Answer, skills: list[RubricSkill]) -> list[tuple[str, float | None]]:
    where = f"{answer.instance_id} / {answer.model}"
    wanted = {s.skill: s for s in skills}
    extra = sorted(set(answer.scores) - set(wanted))
    missing = [s for s in wanted if s not in answer.scores]
    if extra or missing:
        problem = []
        if missing:
            problem.append(f"no answer for {', '.join(missing)} (give a score or N/A)")
        if extra:
            problem.append(f"{', '.join(extra)} is not a skill of this instance")
        raise InputError("annotation", None, where, "; ".join(problem))
    out: list[tuple[str, float | None]] = []
    for skill, spec in wanted.items():
        value = answer.scores[skill]
        if value is not None:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not spec.scale_min <= value <= spec.scale_max:
                raise InputError(
                    "annotation",
                    None,
                    skill,
                    f"{value!r} is not a score on {spec.scale_min:g}-{spec.scale_max:g} (or N/A)",
                )
            value = float(value)
        out.append((skill, value))
    return out


def save_answer(store: Store, answer: Answer) -> int:
    """Store the answer as the annotator's current scores on the response (one transaction);
    returns the new judgment id. The store is unchanged on any error."""
    name = check_annotator(answer.annotator)
    comment = (answer.comment or "").strip()
    if len(comment) > MAX_COMMENT:
        raise InputError(
            "annotation", None, "comment", f"at most {MAX_COMMENT:,} characters expected"
        )
    store.ensure()
    key = [answer.dataset, answer.instance_id, answer.model]
    skills = rubric(store, answer.dataset, answer.instance_id)
    with store.write() as con:
        if con.execute(SAMPLE_RESPONSE, key).fetchone() is None:
            raise NotFoundError(
                f"No response of model '{answer.model}' to instance '{answer.instance_id}' "
                f"in dataset '{answer.dataset}'; nothing was saved."
            )
        values = _check_scores(answer, skills)
        kind = con.execute(JUDGE_KIND, [name]).fetchone()
        if kind and kind[0] != "human":
            raise InputError(
                "annotation",
                None,
                "annotator",
                f"'{name}' is the name of an LLM judge; choose another name",
            )
        con.execute(INSERT_ANNOTATOR, [name])
        run = run_id(name, answer.dataset)
        con.execute(UPSERT_ANNOTATION_RUN, [run, name, answer.dataset])
        raw = json.dumps(
            {"scores": {s: ("N/A" if v is None else v) for s, v in values}, "comment": comment}
        )
        ms = None if answer.seconds is None else answer.seconds * 1000
        (jid,) = con.execute(
            INSERT_ANNOTATION_JUDGMENT, [run, *key, name, raw, comment or None, ms]
        ).fetchone()
        con.execute(SUPERSEDE_ANSWER, [*key, name])
        con.execute(
            INSERT_ANSWER_SCORES,
            [*key, name, [s for s, _ in values], [v for _, v in values], jid, run],
        )
        score_sums.refresh(con, ANSWER_KEY, [*key, name])  # same transaction
    return int(jid)


def answers(store: Store, annotator: str, dataset: str) -> pd.DataFrame:
    """The annotator's current answers: instance_id, model, skill, score, comment, created_at."""
    with store.read() as con:
        return con.execute(ANNOTATOR_ANSWERS, [dataset, annotator]).df()


def previous_answer(
    store: Store, annotator: str, dataset: str, instance_id: str, model: str
) -> PreviousAnswer:
    """What the annotator last saved on this response (empty when nothing)."""
    rows = answers(store, annotator, dataset)
    mine = rows[(rows["instance_id"] == instance_id) & (rows["model"] == model)]
    if mine.empty:
        return PreviousAnswer()
    scores = {
        s: (None if pd.isna(v) else float(v))
        for s, v in zip(mine["skill"], mine["score"], strict=True)
    }
    comment = mine["comment"].iloc[0]
    return PreviousAnswer(scores, "" if pd.isna(comment) else str(comment))


def progress(store: Store, annotator: str, dataset: str, queue: str = ANNOTATE) -> QueueProgress:
    """Which queue items the annotator has answered, and the first one still open."""
    store.ensure()
    with store.read() as con:
        rows = con.execute(ANNOTATION_QUEUE, [annotator, queue, dataset]).fetchall()
    done = tuple(bool(a) for _, _, a in rows)
    nxt = next((i for i, a in enumerate(done) if not a), None)
    return QueueProgress(tuple((i, m) for i, m, _ in rows), done, nxt)
