"""The report's provenance (the dataset and its source, the judges and their settings, the
filters applied) and its exemplar responses (per skill, the best and the worst scored by the
judge, with the instruction and every judge's rationale).

Everything here is untrusted text from the store: the report escapes it. A judge's settings are
shown without anything that looks like a credential (the store never holds one; a user's judge
file might have carried one into ``params`` all the same).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.core.taxonomy import DIFFICULTY_LEVELS
from analysis.views import overview
from analysis.views.criteria import labels_in
from analysis.views.sample_detail import SampleDetail, detail
from analysis.views.source_tasks import task_label
from analysis.views.tables import skill_label

# Every scorer of the dataset with its settings (the `judges` table) and how much it scored.
JUDGE_SETTINGS = """
SELECT * FROM (
    SELECT s.judge, COALESCE(any_value(j.kind), 'llm') AS kind, any_value(j.backend) AS backend,
           any_value(j.model) AS model, any_value(j.prompt_version) AS prompt_version,
           any_value(j.params) AS params, count(*) AS scores, count(DISTINCT s.model) AS models
    FROM latest_scores s LEFT JOIN judges j USING (judge)
    WHERE s.dataset = ?
    GROUP BY s.judge
)
ORDER BY (kind = 'llm') DESC, scores DESC, judge
"""

# Per skill, the judge's best and worst scored response in the view (non-N/A scores). Ties go
# to a response with text, then by instance and model, so the same store gives the same picks.
EXEMPLARS = """
WITH scored AS (
    SELECT s.skill, s.instance_id, s.model, s.score,
           COALESCE(r.text, '') <> '' AS answered
    FROM latest_scores s
    JOIN instances i USING (dataset, instance_id)
    LEFT JOIN responses r
           ON r.dataset = s.dataset AND r.instance_id = s.instance_id AND r.model = s.model
    WHERE {where} AND s.score IS NOT NULL
), best AS (
    SELECT skill, 'best' AS which, instance_id, model, score FROM scored
    QUALIFY row_number() OVER (
        PARTITION BY skill ORDER BY answered DESC, score DESC, instance_id, model) = 1
), worst AS (
    SELECT skill, 'worst' AS which, instance_id, model, score FROM scored
    QUALIFY row_number() OVER (
        PARTITION BY skill ORDER BY answered DESC, score ASC, instance_id, model) = 1
)
SELECT * FROM best UNION ALL SELECT * FROM worst
"""

# A settings key that may hold a credential, whatever its case or separators.
SECRET_KEY = re.compile(r"(?i)(api.?key|secret|token|password|passwd|auth|credential|bearer)")
HIDDEN = "(hidden)"


@dataclass(frozen=True)
class Provenance:
    dataset: dict[str, Any]  # the dataset's row of overview.datasets(): title, source, counts…
    judges: pd.DataFrame  # judge, kind, backend, model, prompt_version, params, scores, models
    filters: tuple[tuple[str, str], ...]  # (what, value) of every filter, "all" when unset

    @property
    def simulated(self) -> bool:
        return bool(self.dataset.get("simulated"))

    @property
    def kinds(self) -> dict[str, str]:
        return dict(zip(self.judges["judge"], self.judges["kind"], strict=True))

    @property
    def humans(self) -> tuple[str, ...]:
        return tuple(j for j, k in self.kinds.items() if k == "human")

    @property
    def has_humans(self) -> bool:
        return bool(self.humans)


@dataclass(frozen=True)
class Exemplar:
    skill: str
    label: str
    which: str  # "best" or "worst"
    score: float  # the judge's score of this skill
    sample: SampleDetail


def provenance(store: Store, f: Filters) -> Provenance:
    sets = overview.datasets(store)
    row = sets[sets["dataset"] == f.dataset].iloc[0].to_dict()
    with store.read() as con:
        judges = con.execute(JUDGE_SETTINGS, [f.dataset]).df()
    judges["params"] = judges["params"].map(safe_params)
    return Provenance(row, judges, filter_lines(f))


def safe_params(params: Any) -> str:
    """A judge's parameters (JSON text) for people, every credential-looking value hidden;
    text that is not JSON is shown only when nothing in it looks like a credential."""
    if params is None or (isinstance(params, float) and pd.isna(params)):
        return ""
    try:
        value = json.loads(params)
    except (TypeError, ValueError):
        return HIDDEN if SECRET_KEY.search(str(params)) else str(params)
    return json.dumps(_hide(value), ensure_ascii=False, sort_keys=True)


def _hide(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: HIDDEN if SECRET_KEY.search(str(k)) else _hide(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hide(v) for v in value]
    return value


def filter_lines(f: Filters) -> tuple[tuple[str, str], ...]:
    """The view as (what, value) lines; an unset filter reads "all"."""

    def many(values, fmt=str) -> str:
        return ", ".join(fmt(v) for v in values) if values else "all"

    return (
        ("Dataset", f.dataset),
        ("Judge", f.judge or "none (no scores)"),
        ("Models", many(f.models)),
        ("Domains", many(f.domains)),
        ("Difficulty", many(f.difficulties, lambda v: f"{v} · {DIFFICULTY_LEVELS.get(v, '?')}")),
        ("Source tasks", many(f.source_tasks, task_label)),
        ("FLASK-Hard only", "yes" if f.flask_hard_only else "no"),
    )


def exemplars(store: Store, f: Filters) -> tuple[Exemplar, ...]:
    """Per skill (the dataset's order), the judge's best then worst scored response in the
    view, each with its instruction, reference, text and every judge's scores and rationale.
    One skill with a single scored response shows it once."""
    where, params = filter_sql(f)
    with store.read() as con:
        picks = con.execute(EXEMPLARS.format(where=where), params).df()
        labels = labels_in(con, f.dataset)
        order = con.execute(SKILL_ORDER, [f.dataset]).fetchall()
    if picks.empty:
        return ()
    rank = {s: i for i, (s,) in enumerate(order)}
    picks = picks.assign(_o=picks["skill"].map(rank).fillna(len(rank)), _w=picks["which"] != "best")
    picks = picks.sort_values(["_o", "skill", "_w"]).drop_duplicates(
        ["skill", "instance_id", "model"]
    )
    return tuple(
        Exemplar(
            skill,
            skill_label(skill, labels),
            which,
            float(score),
            detail(store, f.dataset, instance_id, model),
        )  # fmt: skip
        for skill, which, instance_id, model, score in picks[
            ["skill", "which", "instance_id", "model", "score"]
        ].itertuples(index=False)
    )


SKILL_ORDER = "SELECT skill FROM dataset_skills WHERE dataset = ? ORDER BY display_order, skill"
