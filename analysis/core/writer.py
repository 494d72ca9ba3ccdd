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

from analysis.core import schema as store_schema
from analysis.core import score_sums
from analysis.core.errors import InputError
from analysis.core.schema import UPSERT_SKILL, criterion_row, own_criterion_row
from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS, Criterion

SKILL_SCALE = "SELECT scale_min, scale_max FROM skills WHERE skill = ?"

OWN_CRITERION_SCALE = "SELECT scale_min, scale_max FROM criteria WHERE dataset = ? AND skill = ?"

# A dataset "uses" a skill when its instances list it (imports add every skill they score).
DATASET_USES_SKILL = """
SELECT 1 FROM instances WHERE dataset = ? AND list_contains(skills, ?::VARCHAR) LIMIT 1
"""

INSERT_CRITERION = """
INSERT INTO criteria (dataset, skill, label, ability, display_order, definition, rubric,
                      scale_min, scale_max)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

UPSERT_DATASET = """
INSERT OR REPLACE INTO datasets (dataset, title, source, simulated, seed, description, imported_at)
VALUES (?, ?, ?, ?, ?, ?, current_timestamp)
"""

DELETE_DATASET = [
    f"DELETE FROM {table} WHERE list_contains(?::VARCHAR[], dataset)"
    for table in ("scores", "judgments", "runs", "responses", "instances", "criteria", "datasets")
]

UPSERT_INSTANCES = """
INSERT OR REPLACE INTO instances
SELECT dataset, instance_id, instruction, reference, source_task,
       difficulty::TINYINT, domains::VARCHAR[], skills::VARCHAR[], flask_hard
FROM batch_instances
"""

# Score files mention instances in passing: fill in what is missing; what is stored wins.
MERGE_INSTANCES = """
INSERT INTO instances
SELECT dataset, instance_id, instruction, reference, source_task,
       difficulty::TINYINT, domains::VARCHAR[], skills::VARCHAR[], flask_hard
FROM batch_instances
ON CONFLICT (dataset, instance_id) DO UPDATE SET
    instruction = COALESCE(instruction, excluded.instruction),
    reference = COALESCE(reference, excluded.reference),
    source_task = COALESCE(source_task, excluded.source_task),
    difficulty = COALESCE(difficulty, excluded.difficulty),
    domains = CASE WHEN list_has_all(domains, excluded.domains) THEN domains
                   ELSE list_distinct(list_concat(domains, excluded.domains)) END,
    skills = CASE WHEN list_has_all(skills, excluded.skills) THEN skills
                  ELSE list_distinct(list_concat(skills, excluded.skills)) END
"""

UPSERT_RESPONSES = """
INSERT OR REPLACE INTO responses
SELECT dataset, instance_id, model, text, length(text) FROM batch_responses
"""

# The same rows as UPSERT_INSTANCES and UPSERT_RESPONSES for a batch that conflicts with
# nothing stored (_conflict_free).
INSERT_INSTANCES = UPSERT_INSTANCES.replace("INSERT OR REPLACE INTO", "INSERT INTO", 1)
INSERT_RESPONSES = UPSERT_RESPONSES.replace("INSERT OR REPLACE INTO", "INSERT INTO", 1)
INSTANCE_KEY = "dataset, instance_id"
RESPONSE_KEY = "dataset, instance_id, model"
# {table}, {batch}, {key}: the writer's own names above, never input.
CONFLICT_FREE = """
SELECT NOT EXISTS (SELECT 1 FROM {table} WHERE dataset IN (SELECT dataset FROM {batch}))
   AND (SELECT count(*) = count(DISTINCT ({key})) FROM {batch})
"""
# Asked before reading meta: a failed statement would abort the write's transaction.
HAS_META = "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'meta'"
READ_VERSION = store_schema.READ_SCHEMA_VERSION
# A bulk write reaches its table's file once: past this size a commit checkpoints instead of
# first writing the rows to the WAL and again at the checkpoint when the connection closes
# (a FLASK import's 20 MB of responses were written twice). Set in the write's own
# transaction; it applies to the commit that ends it. Bulk writes only: a small one stays in
# the WAL as before (a checkpoint rewrites whole blocks, more than a few rows need).
CHECKPOINT_AT_COMMIT = "SET checkpoint_threshold = '1MB'"
BULK_ROWS = 10_000

MERGE_RESPONSES = """
INSERT INTO responses
SELECT dataset, instance_id, model, text, length(text) FROM batch_responses
ON CONFLICT (dataset, instance_id, model) DO UPDATE SET
    text = COALESCE(text, excluded.text),
    length = COALESCE(length, excluded.length)
"""

UPSERT_JUDGE = """
INSERT OR REPLACE INTO judges (judge, kind, backend, model, prompt_version, params)
VALUES (?, ?, ?, ?, ?, ?)
"""

UPSERT_FAMILY = "INSERT OR REPLACE INTO families (kind, name, family) VALUES (?, ?, ?)"

RUN_EXISTS = "SELECT 1 FROM runs WHERE run_id = ? AND status = 'complete'"

INSERT_IMPORT_RUN = """
INSERT OR REPLACE INTO runs (run_id, judge, dataset, source, started_at, finished_at, status,
                  n_items, n_ok, n_failed, prompt_tokens, completion_tokens, repeat_number)
VALUES (?, ?, ?, ?, current_timestamp, current_timestamp, 'complete', ?, ?, ?, ?, ?, ?)
"""

INSERT_JUDGMENTS = """
INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, rationale,
                       parse_status, error, latency_ms, prompt_tokens, completion_tokens)
SELECT run_id, dataset, instance_id, model, judge, raw_output, rationale, parse_status, error,
       latency_ms::DOUBLE, prompt_tokens::INTEGER, completion_tokens::INTEGER
FROM batch_judgments
"""

# A newer run replaces the current score of each key it scores; older rows stay as history.
# A repeat run's scores are history at once (schema.sql, v6): they replace nothing.
SUPERSEDE_SCORES = """
UPDATE scores SET superseded = true
FROM (SELECT DISTINCT dataset, instance_id, model, judge, skill FROM batch_scores
      WHERE run_id IN (SELECT run_id FROM runs WHERE repeat_number IS NULL)) b
WHERE NOT scores.superseded
  AND scores.dataset = b.dataset AND scores.instance_id = b.instance_id
  AND scores.model = b.model AND scores.judge = b.judge AND scores.skill = b.skill
"""

INSERT_SCORES = """
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, judgment_id, run_id,
                    superseded)
SELECT s.dataset, s.instance_id, s.model, s.judge, s.skill, s.score::DOUBLE, j.judgment_id,
       s.run_id, s.run_id IN (SELECT run_id FROM runs WHERE repeat_number IS NOT NULL)
FROM batch_scores s
LEFT JOIN judgments j
  ON j.run_id = s.run_id AND j.dataset = s.dataset AND j.instance_id = s.instance_id
 AND j.model = s.model AND j.judge = s.judge
"""


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
    repeat_number: int | None = None  # a repeat run: its scores are history (schema.sql, v6)


@dataclass
class SkippedRow:
    file: str
    line: int
    field: str | None
    problem: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}" + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.problem}"


AS_NA_SHOWN = 10


@dataclass
class ImportReport:
    """What an import did, for the CLI summary and the page's progress area."""

    counts: dict[str, int] = field(default_factory=dict)
    missing_responses: int = 0
    parse_failures: int = 0
    already_imported_runs: int = 0
    skipped: list[SkippedRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Scores outside their scale kept as N/A (import-scores --out-of-scale na): how many, and
    # the first AS_NA_SHOWN of them in file order (file, line, field, value).
    n_as_na: int = 0
    as_na: list[SkippedRow] = field(default_factory=list)

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
        if self.n_as_na:
            first = f"; the first {len(self.as_na)}" if len(self.as_na) < self.n_as_na else ""
            out.append(
                f"scores outside their scale stored as N/A (--out-of-scale na): "
                f"{self.n_as_na:,}{first}:"
            )
            out += [f"  {s}" for s in self.as_na]
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
    # instances and responses: a pandas frame or an Arrow table (FLASK's), DuckDB reads either
    instances: pd.DataFrame = field(default_factory=lambda: _frame(INSTANCE_COLS))
    responses: pd.DataFrame = field(default_factory=lambda: _frame(RESPONSE_COLS))
    judges: list[JudgeRecord] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    judgments: pd.DataFrame = field(default_factory=lambda: _frame(JUDGMENT_COLS))
    scores: pd.DataFrame = field(default_factory=lambda: _frame(SCORE_COLS))
    # (kind 'judge'/'model', name, family) rows for the `families` table, each replacing the
    # stored row of its (kind, name); every other name's family is left as it was.
    families: list[tuple[str, str, str]] = field(default_factory=list)
    # "replace": the batch is authoritative for its instances/responses (FLASK files, demo);
    # "merge": fill in only what is missing (score files that mention instances in passing).
    mode: Literal["replace", "merge"] = "replace"
    replace_datasets: bool = False  # drop every row of these datasets first (demo rebuild)
    report: ImportReport = field(default_factory=ImportReport)


def _check_criteria(con, criteria: list[Criterion], source: str) -> None:
    """Add each new criterion; one that exists must keep its scale. The parser checked this
    against what it read before; here it holds against what is in the store right now."""
    for c in criteria:
        if c.dataset is None:  # a shared skill: FLASK's are seeded, any other is added once
            if con.execute(SKILL_SCALE, [c.skill]).fetchone() is None:
                con.execute(UPSERT_SKILL, criterion_row(c))
            continue
        row = con.execute(OWN_CRITERION_SCALE, [c.dataset, c.skill]).fetchone()
        if row and (row[0], row[1]) != (c.scale_min, c.scale_max):
            raise InputError(
                source,
                None,
                "scale",
                f"criterion '{c.skill}' of dataset '{c.dataset}' already exists with scale "
                f"{row[0]:g}-{row[1]:g}; this file declares {c.scale_min:g}-{c.scale_max:g}. "
                "Use the existing scale, another criterion name or another dataset.",
            )
        if row is not None:
            continue
        if c.skill in SKILLS and con.execute(DATASET_USES_SKILL, [c.dataset, c.skill]).fetchone():
            raise InputError(
                source,
                None,
                "scale",
                f"dataset '{c.dataset}' already scores '{c.skill}' as FLASK's skill (1-5); "
                f"this file declares {c.scale_min:g}-{c.scale_max:g}. Use 1-5, another "
                "criterion name or another dataset.",
            )
        con.execute(INSERT_CRITERION, own_criterion_row(c))


def write_batch(store: Store, batch: Batch, source: str = "") -> ImportReport:
    """Write everything in ``batch`` in one transaction; the store is unchanged on any error."""
    if not store.exists():
        store.ensure()  # a new store gets its schema in a transaction of its own, as always
    report = batch.report
    with store.write() as con:
        _ensure_schema(con)
        if sum(map(len, (batch.instances, batch.responses, batch.scores))) >= BULK_ROWS:
            con.execute(CHECKPOINT_AT_COMMIT)
        names = [d.dataset for d in batch.datasets]
        if batch.replace_datasets and names:
            for sql in DELETE_DATASET:
                con.execute(sql, [names])
        for d in batch.datasets:
            con.execute(
                UPSERT_DATASET, [d.dataset, d.title, d.source, d.simulated, d.seed, d.description]
            )
        _check_criteria(con, batch.criteria, source)
        _write_instances(con, batch)
        for j in batch.judges:
            con.execute(
                UPSERT_JUDGE,
                [j.judge, j.kind, j.backend, j.model, j.prompt_version, json.dumps(j.params)],
            )
        if batch.families:
            con.executemany(UPSERT_FAMILY, [list(r) for r in batch.families])
        new_runs = _write_runs(con, batch.runs, report)
        _write_scores(con, batch, new_runs)
        dropped = names if batch.replace_datasets else []
        new_scores = batch.scores[batch.scores["run_id"].isin(new_runs)]
        score_sums.after_write(con, new_scores, batch.criteria, dropped)  # same transaction
    report.counts.setdefault("instances", len(batch.instances))
    report.counts.setdefault("responses", len(batch.responses))
    report.counts.setdefault("scores", len(batch.scores))
    return report


def _ensure_schema(con) -> None:
    """What ``Store.ensure`` does for a store that exists, on the write's own connection: a
    second connection (opened, read, closed) cost more than writing FLASK's instances. An
    older store is upgraded inside the import's transaction, so a failed import leaves it as
    it was, not upgraded. Results are read whole: DuckDB refuses ``register`` while the
    connection's last result is unread."""
    version = con.execute(HAS_META).fetchall()[0][0] and con.execute(READ_VERSION).fetchall()
    if version != [(store_schema.SCHEMA_VERSION,)]:
        store_schema.apply(con)


def _write_instances(con, batch: Batch) -> None:
    inst = batch.instances
    if len(inst):
        con.register("batch_instances", inst)
        sql = MERGE_INSTANCES
        if batch.mode == "replace":
            fresh = _conflict_free(con, "instances", "batch_instances", INSTANCE_KEY)
            sql = INSERT_INSTANCES if fresh else UPSERT_INSTANCES
        con.execute(sql)
        con.unregister("batch_instances")
    resp = batch.responses
    if len(resp):
        con.register("batch_responses", resp)
        sql = MERGE_RESPONSES
        if batch.mode == "replace":
            fresh = _conflict_free(con, "responses", "batch_responses", RESPONSE_KEY)
            sql = INSERT_RESPONSES if fresh else UPSERT_RESPONSES
        con.execute(sql)
        con.unregister("batch_responses")


def _conflict_free(con, table: str, batch: str, key: str) -> bool:
    """True when INSERT stores what INSERT OR REPLACE would: no stored row of the batch's
    datasets (so none shares a key) and no key twice in the batch (OR REPLACE keeps one row
    of a repeated key where INSERT refuses the batch). OR REPLACE checks each row against the
    key index and costs several times a plain INSERT, the bulk of a first import's write."""
    sql = CONFLICT_FREE.format(table=table, batch=batch, key=key)
    return bool(con.execute(sql).fetchall()[0][0])


def _write_runs(con, runs: list[RunRecord], report: ImportReport) -> list[str]:
    """Insert runs not seen before; a run id already complete means this file was imported."""
    new: list[str] = []
    for r in runs:
        if con.execute(RUN_EXISTS, [r.run_id]).fetchone():
            report.already_imported_runs += 1
            continue
        row = [r.run_id, r.judge, r.dataset, r.source, r.n_items, r.n_ok, r.n_failed,
               r.prompt_tokens, r.completion_tokens, r.repeat_number]  # fmt: skip
        con.execute(INSERT_IMPORT_RUN, row)
        new.append(r.run_id)
    return new


def _write_scores(con, batch: Batch, new_runs: list[str]) -> None:
    judgments = batch.judgments[batch.judgments["run_id"].isin(new_runs)]
    scores = batch.scores[batch.scores["run_id"].isin(new_runs)]
    if len(judgments):
        con.register("batch_judgments", judgments)
        con.execute(INSERT_JUDGMENTS)
        con.unregister("batch_judgments")
    if len(scores):
        con.register("batch_scores", scores)
        con.execute(SUPERSEDE_SCORES)
        con.execute(INSERT_SCORES)
        con.unregister("batch_scores")
