"""A batch of parsed records and the one function that writes it: one transaction, idempotent.

Parsers (FLASK files, score files, the demo) are pure and return a ``Batch``; ``write_batch`` is
the only importer code that touches the store, so every import shares the same rules:
all-or-nothing, re-importing the same file adds nothing, history is kept (newer runs supersede).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from analysis import queries
from analysis.errors import InputError
from analysis.store import Store
from analysis.taxonomy import SKILLS, Criterion

INSTANCE_COLS = (
    "dataset instance_id instruction reference source_task difficulty domains skills flask_hard"
).split()
RESPONSE_COLS = ["dataset", "instance_id", "model", "text"]
JUDGMENT_COLS = (
    "run_id dataset instance_id model judge raw_output rationale "
    "parse_status error latency_ms prompt_tokens completion_tokens"
).split()
SCORE_COLS = ["run_id", "dataset", "instance_id", "model", "judge", "skill", "score"]


@dataclass(frozen=True)
class DatasetRecord:
    dataset: str
    title: str
    source: str
    simulated: bool = False
    seed: int | None = None
    description: str = ""


@dataclass(frozen=True)
class JudgeRecord:
    judge: str
    kind: Literal["human", "llm"]
    backend: str = "import"
    model: str | None = None
    prompt_version: str | None = None
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    judge: str
    dataset: str
    source: str
    n_items: int = 0
    n_ok: int = 0
    n_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class SkippedRow:
    file: str
    line: int
    field: str | None
    problem: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.problem}"


@dataclass
class ImportReport:
    """What an import did, for the CLI summary and the page's progress area."""

    counts: dict[str, int] = field(default_factory=dict)
    missing_responses: int = 0
    parse_failures: int = 0
    already_imported_runs: int = 0
    skipped: list[SkippedRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{k}: {v:,}" for k, v in self.counts.items()]
        if self.missing_responses:
            out.append(f"missing responses (reported, not an error): {self.missing_responses:,}")
        if self.parse_failures:
            out.append(
                f"judge outputs that could not be parsed (kept, counted): {self.parse_failures:,}"
            )
        if self.already_imported_runs:
            out.append(f"score files already imported (skipped): {self.already_imported_runs}")
        out += self.notes
        if self.skipped:
            out.append(f"skipped {len(self.skipped)} bad row(s) (--lenient):")
            out += [f"  {s}" for s in self.skipped]
        return out


def _frame(cols: list[str], rows: list[tuple] | None = None) -> pd.DataFrame:
    return pd.DataFrame(rows or [], columns=cols)


@dataclass
class Batch:
    datasets: list[DatasetRecord] = field(default_factory=list)
    criteria: list[Criterion] = field(default_factory=list)
    instances: pd.DataFrame = field(default_factory=lambda: _frame(INSTANCE_COLS))
    responses: pd.DataFrame = field(default_factory=lambda: _frame(RESPONSE_COLS))
    judges: list[JudgeRecord] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    judgments: pd.DataFrame = field(default_factory=lambda: _frame(JUDGMENT_COLS))
    scores: pd.DataFrame = field(default_factory=lambda: _frame(SCORE_COLS))
    # "replace": the batch is authoritative for its instances/responses (FLASK files, demo);
    # "merge": fill in only what is missing (score files that mention instances in passing).
    mode: Literal["replace", "merge"] = "replace"
    replace_datasets: bool = False  # drop every row of these datasets first (demo rebuild)
    report: ImportReport = field(default_factory=ImportReport)


def seed_taxonomy(con) -> None:
    """Write FLASK's 12 skills inside the caller's transaction (idempotent; refreshes texts)."""
    for c in SKILLS.values():
        con.execute(queries.UPSERT_SKILL, _criterion_row(c))


def _criterion_row(c: Criterion) -> list:
    return [
        c.skill,
        c.label,
        c.ability,
        c.order,
        c.definition,
        list(c.rubric),
        c.scale_min,
        c.scale_max,
        c.custom,
    ]


def _check_criteria(con, criteria: list[Criterion], source: str) -> None:
    for c in criteria:
        row = con.execute(queries.SKILL_SCALE, [c.skill]).fetchone()
        if row and (row[0], row[1]) != (c.scale_min, c.scale_max):
            raise InputError(
                source,
                None,
                "scale",
                f"criterion '{c.skill}' already exists with scale {row[0]:g}-{row[1]:g}; "
                f"this file declares {c.scale_min:g}-{c.scale_max:g}. Use the existing scale "
                "or another criterion name.",
            )
        if row is None:
            con.execute(queries.UPSERT_SKILL, _criterion_row(c))


def write_batch(store: Store, batch: Batch, source: str = "") -> ImportReport:
    """Write everything in ``batch`` in one transaction; the store is unchanged on any error."""
    store.ensure()
    report = batch.report
    with store.write() as con:
        names = [d.dataset for d in batch.datasets]
        if batch.replace_datasets and names:
            for sql in queries.DELETE_DATASET:
                con.execute(sql, [names])
        for d in batch.datasets:
            con.execute(
                queries.UPSERT_DATASET,
                [d.dataset, d.title, d.source, d.simulated, d.seed, d.description],
            )
        _check_criteria(con, batch.criteria, source)
        _write_instances(con, batch)
        for j in batch.judges:
            con.execute(
                queries.UPSERT_JUDGE,
                [j.judge, j.kind, j.backend, j.model, j.prompt_version, json.dumps(j.params)],
            )
        new_runs = _write_runs(con, batch.runs, report)
        _write_scores(con, batch, new_runs)
    report.counts.setdefault("instances", len(batch.instances))
    report.counts.setdefault("responses", len(batch.responses))
    report.counts.setdefault("scores", len(batch.scores))
    return report


def _write_instances(con, batch: Batch) -> None:
    inst = batch.instances
    if len(inst):
        con.register("batch_instances", inst)
        sql = queries.UPSERT_INSTANCES if batch.mode == "replace" else queries.MERGE_INSTANCES
        con.execute(sql)
        con.unregister("batch_instances")
    resp = batch.responses
    if len(resp):
        con.register("batch_responses", resp)
        sql = queries.UPSERT_RESPONSES if batch.mode == "replace" else queries.MERGE_RESPONSES
        con.execute(sql)
        con.unregister("batch_responses")


def _write_runs(con, runs: list[RunRecord], report: ImportReport) -> list[str]:
    """Insert runs not seen before; a run id already complete means this file was imported."""
    new: list[str] = []
    for r in runs:
        if con.execute(queries.RUN_EXISTS, [r.run_id]).fetchone():
            report.already_imported_runs += 1
            continue
        con.execute(
            queries.INSERT_IMPORT_RUN,
            [
                r.run_id,
                r.judge,
                r.dataset,
                r.source,
                r.n_items,
                r.n_ok,
                r.n_failed,
                r.prompt_tokens,
                r.completion_tokens,
            ],
        )
        new.append(r.run_id)
    return new


def _write_scores(con, batch: Batch, new_runs: list[str]) -> None:
    judgments = batch.judgments[batch.judgments["run_id"].isin(new_runs)]
    scores = batch.scores[batch.scores["run_id"].isin(new_runs)]
    if len(judgments):
        con.register("batch_judgments", judgments)
        con.execute(queries.INSERT_JUDGMENTS)
        con.unregister("batch_judgments")
    if len(scores):
        con.register("batch_scores", scores)
        con.execute(queries.SUPERSEDE_SCORES)
        con.execute(queries.INSERT_SCORES)
        con.unregister("batch_scores")
