"""Data behind the Samples page's detail view: one response with its instruction, reference,
and each judge's scores and rationale (the current judgment, else the newest).

Everything returned here is untrusted text from model and judge outputs: pages show it as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from analysis.core.errors import NotFoundError
from analysis.core.store import Store
from analysis.views.criteria import labels_in
from analysis.views.source_tasks import task_label
from analysis.views.tables import skill_label

SAMPLE_INSTANCE = """
SELECT instruction, reference, source_task, difficulty, domains, skills, flask_hard
FROM instances WHERE dataset = ? AND instance_id = ?
"""


SAMPLE_RESPONSE = "SELECT text FROM responses WHERE dataset = ? AND instance_id = ? AND model = ?"

# A link with an instance but no model opens the first model (by name) that answered it.
FIRST_ANSWER = """
SELECT model FROM responses
WHERE dataset = ? AND instance_id = ? AND text IS NOT NULL AND text <> ''
ORDER BY model LIMIT 1
"""


# Each judge's current judgment of one response: the one its current scores come from, else
# its newest (a judgment whose output could not be parsed has no scores).
SAMPLE_JUDGMENTS = """
WITH cur AS (
    SELECT judge, max(judgment_id) AS jid FROM latest_scores
    WHERE dataset = ? AND instance_id = ? AND model = ? GROUP BY judge
), newest AS (
    SELECT judge, max(judgment_id) AS jid FROM judgments
    WHERE dataset = ? AND instance_id = ? AND model = ? GROUP BY judge
)
SELECT x.judge, COALESCE(j.kind, 'llm') AS kind, g.rationale, g.raw_output,
       COALESCE(g.parse_status, 'ok') AS parse_status, g.error, g.created_at
FROM (SELECT judge, COALESCE(cur.jid, newest.jid) AS jid
      FROM cur FULL JOIN newest USING (judge)) x
LEFT JOIN judgments g ON g.judgment_id = x.jid
LEFT JOIN judges j ON j.judge = x.judge
ORDER BY (COALESCE(j.kind, 'llm') = 'llm') DESC, x.judge
"""


SAMPLE_SCORES = """
SELECT judge, skill, score FROM latest_scores
WHERE dataset = ? AND instance_id = ? AND model = ?
"""


@dataclass(frozen=True)
class JudgeView:
    """One judge's current view of one response."""

    judge: str
    kind: str
    scores: dict[str, float | None]  # skill -> score (None = N/A), in the instance's order
    rationale: str | None
    raw_output: str | None
    parse_status: str
    error: str | None
    # skill id → the dataset's label (its own criteria's, else FLASK's), for ``score_lines``;
    # None: FLASK's labels (views/tables.skill_label)
    labels: Mapping[str, str] | None = None


@dataclass(frozen=True)
class SampleDetail:
    dataset: str
    instance_id: str
    model: str
    instruction: str
    reference: str
    response: str | None
    source_task: str | None
    difficulty: int | None
    domains: tuple[str, ...]
    skills: tuple[str, ...]
    flask_hard: bool
    judges: tuple[JudgeView, ...] = field(default=())
    labels: Mapping[str, str] | None = None  # skill id → the dataset's label, as JudgeView's


def detail(store: Store, dataset: str, instance_id: str, model: str) -> SampleDetail:
    """Everything about one response; NotFoundError when it does not exist."""
    key = [dataset, instance_id, model]
    with store.read() as con:
        inst = con.execute(SAMPLE_INSTANCE, [dataset, instance_id]).fetchone()
        resp = con.execute(SAMPLE_RESPONSE, key).fetchone()
        judgments = con.execute(SAMPLE_JUDGMENTS, key + key).fetchall()
        scores = con.execute(SAMPLE_SCORES, key).fetchall()
        labels = labels_in(con, dataset)
    if inst is None or (resp is None and not judgments):
        raise NotFoundError(
            f"No response of model '{model}' to instance '{instance_id}' in dataset "
            f"'{dataset}'. The link may be out of date, or the dataset was rebuilt."
        )
    instruction, reference, task, level, domains, skills, hard = inst
    order = {s: i for i, s in enumerate(skills or ())}
    by_judge: dict[str, dict[str, float | None]] = {}
    for judge, skill, score in sorted(scores, key=lambda r: (order.get(r[1], 99), r[1])):
        by_judge.setdefault(judge, {})[skill] = None if score is None else float(score)
    views = tuple(
        JudgeView(j, kind, by_judge.get(j, {}), rationale, raw, status, error, labels)
        for j, kind, rationale, raw, status, error, _ in judgments
    )
    seen = {v.judge for v in views}  # scores without a judgment row (bare score imports)
    views += tuple(JudgeView(j, "llm", s, None, None, "ok", None, labels)
                   for j, s in by_judge.items() if j not in seen)  # fmt: skip
    return SampleDetail(
        dataset, instance_id, model, instruction or "", reference or "",
        None if resp is None else resp[0], task, None if level is None else int(level),
        tuple(domains or ()), tuple(skills or ()), bool(hard), views, labels,
    )  # fmt: skip


@dataclass(frozen=True)
class LinkTarget:
    shown: tuple[str, str] | None  # (instance_id, model) to open, or None
    note: str | None  # why the link was not opened as it stands


def link_target(
    store: Store, dataset: str, instance_id: str | None, model: str | None
) -> LinkTarget:
    """The response a link opens. Both named: that one (``detail`` says if it is gone). An
    instance alone: the first model by name with a response to it, said in a note; a model
    alone, or an instance nobody answered: nothing, with a note saying why."""
    if instance_id and model:
        return LinkTarget((instance_id, model), None)
    if not instance_id:
        return LinkTarget(None, f"The link names model '{_q(model)}' but no instance: pick a row.")
    with store.read() as con:
        row = con.execute(FIRST_ANSWER, [dataset, instance_id]).fetchone()
    if row is None:
        return LinkTarget(
            None,
            f"The link names instance '{_q(instance_id)}' but no model, and no model answered it "
            f"in dataset '{_q(dataset)}': pick a row.",
        )
    return LinkTarget(
        (instance_id, row[0]),
        f"The link names instance '{_q(instance_id)}' but no model: showing {row[0]}'s "
        "response, the first model by name that answered it.",
    )


def _q(value: str | None) -> str:
    value = value or ""
    return value if len(value) <= 40 else value[:39] + "…"  # a link's value, shortened


def detail_link(dataset: str, instance_id: str, model: str) -> dict[str, str]:
    """Query parameters that open this response on the Samples page (see pages/samples.py)."""
    return {"dataset": dataset, "instance": instance_id, "model": model}


def score_lines(view: JudgeView) -> str:
    """A judge's scores as plain text, one 'skill: score' line per skill (N/A spelled out)."""
    if not view.scores:
        return "(no scores)"
    return "\n".join(
        f"{skill_label(s, view.labels)}: {'N/A' if v is None else f'{v:g}'}"
        for s, v in view.scores.items()
    )


def facts(d: SampleDetail) -> str:
    """One line about the instance: level, source task (its proper name), domains, skills (by
    label), FLASK-Hard. Plain text: the page escapes it for markdown."""
    parts = [
        f"level {d.difficulty or 'unlabeled'}",
        f"task {task_label(d.source_task) or '–'}",
        f"domains {', '.join(d.domains) or '–'}",
        f"skills {', '.join(skill_label(s, d.labels) for s in d.skills) or '–'}",
    ]
    return " · ".join(parts + (["FLASK-Hard"] if d.flask_hard else []))
