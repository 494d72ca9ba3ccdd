"""The data of the Re-judge page: which responses to re-judge, and what changed afterwards
(before/after per sample and skill, and agreement with human labels on exactly that subset)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.core.errors import InputError
from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats.agreement import LABELS
from analysis.views import queues
from analysis.views.agreement import (
    ALL_LABEL,
    SCOPE_CRITERION,
    AgreementQuery,
    agreement,
    for_skill,
)
from analysis.views.criteria import criterion_labels, split_labels, with_labels
from analysis.views.tables import for_people
from judges import batch_store
from judges.config import SAME_JUDGE_AS, JudgeConfig, Setting, default, page_settings, value_type
from judges.plan import Estimate, Selection, plan_run

# Responses in the sidebar's slice (no judge condition), the "by filters" re-judge selection.
REJUDGE_CANDIDATES = """
SELECT s.instance_id, s.model
FROM responses s JOIN instances i USING (dataset, instance_id)
WHERE {where} AND s.text IS NOT NULL
ORDER BY TRY_CAST(s.instance_id AS BIGINT) NULLS LAST, s.instance_id, s.model
LIMIT ?
"""

# Latest scores of some scorers (with their kind) on one dataset, for before/after tables.
SCORES_OF_JUDGES = """
SELECT s.instance_id, s.model, s.skill, s.judge, s.score, COALESCE(j.kind, 'llm') AS kind
FROM latest_scores s LEFT JOIN judges j USING (judge)
WHERE s.dataset = ? AND (list_contains(?::VARCHAR[], s.judge) OR j.kind = 'human')
"""


SOURCES = {"queue": "The re-judge queue", "filters": "The sidebar's filters"}
HUMANS = "kind:human"
_KEY = ["instance_id", "model", "skill"]


@dataclass(frozen=True)
class Comparison:
    table: pd.DataFrame  # instance_id, model, skill, before, after, change, human
    agreement: pd.DataFrame  # judge, statistic, value, ci_low, ci_high, n (vs humans)
    n_items: int
    has_humans: bool


def selection(
    store: Store, filters: Filters, source: str, limit: int = 50
) -> tuple[tuple[str, str], ...]:
    """(instance_id, model) pairs to re-judge: the queue's, or the first ``limit`` responses
    in the sidebar's slice."""
    if source == "queue":
        return tuple(i.key for i in queues.items(store, queues.REJUDGE, filters.dataset))
    where, params = filter_sql(replace(filters, judge=None))
    with store.read() as con:
        rows = con.execute(REJUDGE_CANDIDATES.format(where=where), [*params, limit])
        return tuple((i, m) for i, m in rows.fetchall())


def estimate(
    store: Store, config: JudgeConfig, filters: Filters, source: str, limit: int, concurrency: int
) -> Estimate:
    """The estimate of re-judging ``selection(filters, source, limit)`` with ``config``. Only
    the estimate, not the plan, is returned (and cached by the page): a plan holds every prompt,
    about 6 KB per item (120 MB for 20,000), and a cache holds one per form change."""
    items = selection(store, filters, source, limit)
    sel = Selection(filters.dataset, items=items)
    return plan_run(store, config, sel, concurrency=concurrency).estimate


def user_file(store: Store, text: str) -> str | None:
    """A prompt or rubric file typed on the page, as ``file:PATH[#id]``. Only files in the
    store's folder (``data/`` by default): a visitor must not make the server read, and send to
    a judge, any other file. The command line takes any path."""
    text = text.strip()
    if not text:
        return None
    path, _, pick = text.partition("#")
    root = store.path.resolve().parent
    try:
        p = Path(path) if Path(path).is_absolute() else root / path
        p = p.resolve()  # Python 3.11 raises RuntimeError on a symlink loop
    except (OSError, RuntimeError, ValueError) as e:
        raise InputError(text, None, None, f"not a usable file name ({e})") from e
    if root not in p.parents:
        raise InputError(text, None, None, f"files named on this page must be in {root}")
    if p.name.startswith(store.path.resolve().name):  # the store, its .wal or a backup
        raise InputError(text, None, None, "this is the store itself, not a prompt or rubric file")
    return f"file:{p}" + (f"#{pick}" if pick else "")


def user_model(store: Store, backend: str, text: str) -> str:
    """A model typed on the page: an API name, a cached hub name, or (local backend) a folder
    in the store's folder: loading a model runs its files, so not any folder on the server."""
    text = text.strip()
    if backend == "transformers" and text and Path(text).expanduser().exists():
        root = store.path.resolve().parent
        if root not in Path(text).expanduser().resolve().parents:
            raise InputError(text, None, None, f"local models named on this page must be in {root}")
    return text


def _scores(store: Store, dataset: str, judges: list[str], items) -> pd.DataFrame:
    with store.read() as con:
        rows = con.execute(SCORES_OF_JUDGES, [dataset, judges]).df()
    keep = pd.MultiIndex.from_tuples(list(items), names=["instance_id", "model"])
    return rows[pd.MultiIndex.from_frame(rows[["instance_id", "model"]]).isin(keep)]


def compare(
    store: Store, dataset: str, items: tuple[tuple[str, str], ...], before: str, after: str
) -> Comparison:
    """Before/after scores of the selection and, where humans labelled it, each judge's
    agreement with the humans' mean on exactly those items (overall, with 95% CIs)."""
    rows = _scores(store, dataset, [before, after], items)
    humans = rows[rows["kind"] == "human"]
    sides = {
        "before": rows[rows["judge"] == before].groupby(_KEY)["score"].mean(),
        "after": rows[rows["judge"] == after].groupby(_KEY)["score"].mean(),
        "human": humans.groupby(_KEY)["score"].mean(),
    }
    table = pd.concat(sides, axis=1).reset_index()
    table = table[table["before"].notna() | table["after"].notna()]
    table = table.assign(change=table["after"] - table["before"]).sort_values(_KEY)
    table = with_labels(table, criterion_labels(store, dataset))  # the dataset's own labels
    stats = []
    if not humans.empty:
        f = Filters(dataset)
        for label, judge in (("before", before), ("after", after)):
            q = AgreementQuery(f, judge, HUMANS, items=tuple(items))
            r = agreement(store, q, sections=("stats",))  # no ceiling, ranks or slices shown
            if not r.stats.empty:
                pick = for_skill(r.stats, None)  # all criteria pooled (or the only one)
                named = pick["skill"].where(pick["scope"] == SCOPE_CRITERION, ALL_LABEL)
                stats.append(pick.assign(skill=named, judge=f"{label}: {judge}"))
    cols = ["judge", "skill", "statistic", "value", "ci_low", "ci_high", "n"]
    agree = pd.concat(stats, ignore_index=True)[cols] if stats else pd.DataFrame(columns=cols)
    return Comparison(table.reset_index(drop=True), agree, len(items), not humans.empty)


def before_after_table(result: Comparison, before: str, after: str) -> pd.DataFrame:
    """Before/after per sample and skill for reading: skill labels, scores with 2 decimals,
    blanks where a side gave none, each side headed by its judge."""
    headers = {"before": f"Before: {before}", "after": f"After: {after}"}
    rows, labels = split_labels(result.table)
    return for_people(rows, labels=labels, headers=headers)


def agreement_table(result: Comparison) -> pd.DataFrame:
    """Agreement with the humans for reading: statistic names, 3 decimals, blank CIs."""
    frame = result.agreement
    named = frame.assign(statistic=frame["statistic"].map(lambda s: LABELS.get(s, s)))
    return for_people(named)


def applies(s: Setting, backend: str | None) -> bool:
    """Whether a setting belongs to a judge of ``backend``: its own, or that of the backend it
    is a way of sending calls for (a batch judge takes the live judge's server and key)."""
    return s.backend is None or s.backend == SAME_JUDGE_AS.get(backend, backend)


def visitor_config(store: Store, values: dict[str, Any], prompt_file: str) -> JudgeConfig:
    """The judge a visitor built on the Re-judge form: files and model folders only from the
    store's folder, empty text as unset, another backend's settings dropped; the declaration
    pins the rest (the key goes only to OpenAI or $OPENAI_BASE_URL)."""
    backend = values["backend"]
    values = dict(values, model=user_model(store, backend, values["model"]))
    values["prompt_version"] = user_file(store, prompt_file) or values["prompt_version"]
    for fld, s in page_settings():
        name = fld.name
        if not applies(s, backend):
            del values[name]  # e.g. the server of an OpenAI judge, for a local one
        elif s.widget == "file":
            values[name] = user_file(store, values[name]) or default(name)
        elif value_type(name)[1] and isinstance(values[name], str):
            values[name] = values[name].strip() or None
    return JudgeConfig.from_mapping(values, "the Re-judge form", visitor=True)


# The pending batches table: what each column is called on the page.
PENDING_HEADERS = {
    "run_id": "Run",
    "started_at": "Started",
    "parts": "Parts",
    "requests": "Requests",
    "answered": "Answered",
    "failed": "Failed",
    "statuses": "Statuses",
}


@dataclass(frozen=True)
class PendingBatches:
    table: pd.DataFrame  # one row per batch run, for reading
    runs: tuple[tuple[str, str], ...]  # (run_id, judge) in the table's order


def pending_batches(store: Store, dataset: str) -> PendingBatches:
    """Batch runs of this dataset whose answers are not all stored yet (read from the store,
    so they show after a restart): run, judge, model, start, parts, requests, how many the
    service has answered and failed, and the parts' statuses."""
    runs = batch_store.pending_runs(store, dataset)
    cols = ["run_id", "judge", "model", "started_at", "parts", "requests", "answered", "failed"]
    frame = pd.DataFrame(
        [
            (r.run_id, r.judge, r.model, r.started_at, r.parts, r.requests,
             r.completed + r.failed, r.failed, r.statuses)  # answered: completed or failed
            for r in runs
        ],
        columns=[*cols, "statuses"],
    )  # fmt: skip
    started = pd.to_datetime(frame["started_at"])
    frame["started_at"] = started.dt.strftime("%Y-%m-%d %H:%M:%S") if len(frame) else started
    table = for_people(frame, headers=PENDING_HEADERS, counts=cols[4:])
    return PendingBatches(table, tuple((r.run_id, r.judge) for r in runs))
