"""Export: every table a user wants elsewhere, as hive-partitioned Parquet (or CSV) that DuckDB,
Spark, Trino or BigQuery read in place, plus ``manifest.json`` (schema version, row counts,
provenance).

    OUT/manifest.json
    OUT/scores/dataset=demo/judge=gpt-4%20%28simulated%29/data_0.parquet
    OUT/judgments/dataset=…/judge=…/…   OUT/runs/dataset=…/judge=…/…
    OUT/score_history/dataset=…/judge=…/…
    OUT/instances/dataset=…/…           OUT/responses/dataset=…/…   OUT/criteria/dataset=…/…
    OUT/datasets/data_0.parquet         OUT/judges/data_0.parquet   OUT/families/data_0.parquet

Partition values are percent-encoded in the folder names (``/`` → ``%2F``), as Hive does, and
are strings: read them with ``hive_types_autocast = false`` so a dataset named ``2024`` stays
text. ``scores`` is the latest score per (dataset, instance, model, judge, skill), joined with
the instance's metadata, the criterion's label and scale and the response's length: the table
analyses start from. ``score_history`` keeps every score ever written (``superseded`` marks the
replaced ones). Judge parameters are exported as stored: the store never holds an API key.

The export is written to a temporary folder beside OUT and renamed at the end, so OUT is either
absent or complete. CSV is for spreadsheets: lists are ``;``-joined and formula-looking text
gets a leading ``'`` (so a CSV export cannot rebuild a store; Parquet can: import-scores OUT).
The dataset and judge columns are neutralised too, and with them the folder names they give.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from analysis.core import schema
from analysis.core.errors import InputError, NotFoundError, StoreError
from analysis.core.store import Store

FORMAT = "finegrain-export"
FORMAT_VERSION = 1
FORMATS = ("parquet", "csv")
MANIFEST = "manifest.json"
LIST_SEPARATOR = ";"
FORMULA_START = r"^[=+\-@\t\r]"  # what a spreadsheet runs as a formula (analysis.views.tables)

PARTITION_NOTE = "percent-encoded in folder names; text (read with hive_types_autocast = false)"
IN_DATASETS = "list_contains(?::VARCHAR[], {col})"

DATASETS = """
SELECT dataset, title, source, simulated, seed, description, imported_at
FROM datasets WHERE {where} ORDER BY dataset
"""
# Judges that scored or were run on the exported datasets.
JUDGES = """
SELECT judge, kind, backend, model, prompt_version, params FROM judges
WHERE judge IN (SELECT judge FROM scores WHERE {where} UNION SELECT judge FROM runs WHERE {where})
ORDER BY judge
"""
CRITERIA = """
SELECT dataset, skill, label, ability, display_order, definition, rubric, scale_min, scale_max,
       custom
FROM dataset_skills WHERE {where} ORDER BY dataset, display_order, skill
"""
INSTANCES = """
SELECT dataset, instance_id, instruction, reference, source_task, difficulty, domains, skills,
       flask_hard
FROM instances WHERE {where} ORDER BY dataset, instance_id
"""
RESPONSES = """
SELECT dataset, instance_id, model, text, length FROM responses WHERE {where}
ORDER BY dataset, instance_id, model
"""
RUNS = """
SELECT dataset, judge, run_id, source, started_at, finished_at, status, n_items, n_ok, n_failed,
       n_cached, prompt_tokens, completion_tokens, cost_usd, repeat_number
FROM runs WHERE {where} ORDER BY dataset, judge, started_at, run_id
"""
JUDGMENTS = """
SELECT dataset, judge, judgment_id, run_id, instance_id, model, raw_output, rationale,
       parse_status, error, latency_ms, prompt_tokens, completion_tokens, cache_key, created_at
FROM judgments WHERE {where} ORDER BY dataset, judge, judgment_id
"""
SCORES = """
SELECT s.dataset, s.judge, j.kind, s.instance_id, s.model, s.skill, k.label AS skill_label,
       k.ability, s.score, k.scale_min, k.scale_max, i.source_task, i.difficulty, i.domains,
       i.flask_hard, r.length AS response_length, s.run_id, s.judgment_id
FROM latest_scores s
LEFT JOIN judges j ON j.judge = s.judge
LEFT JOIN dataset_skills k ON k.dataset = s.dataset AND k.skill = s.skill
LEFT JOIN instances i ON i.dataset = s.dataset AND i.instance_id = s.instance_id
LEFT JOIN responses r
  ON r.dataset = s.dataset AND r.instance_id = s.instance_id AND r.model = s.model
WHERE {where}
"""
SCORE_HISTORY = """
SELECT dataset, judge, instance_id, model, skill, score, run_id, judgment_id, superseded
FROM scores WHERE {where}
"""
# The judge and model families (the Judges page's self-preference) of the exported scorers and
# models.
FAMILIES = """
SELECT kind, name, family FROM families
WHERE (kind = 'judge' AND name IN (SELECT judge FROM scores WHERE {where}
                                   UNION SELECT judge FROM runs WHERE {where}))
   OR (kind = 'model' AND name IN (SELECT model FROM responses WHERE {where}
                                   UNION SELECT model FROM scores WHERE {where}))
ORDER BY kind, name
"""
ALL_DATASETS = "SELECT dataset FROM datasets ORDER BY dataset"


@dataclass(frozen=True)
class Table:
    """One exported table: its query, the column its dataset filter applies to, its folders."""

    name: str
    sql: str
    partition_by: tuple[str, ...]
    dataset_col: str = "dataset"
    description: str = ""


TABLES = (
    Table("scores", SCORES, ("dataset", "judge"), "s.dataset",
          "latest score per (dataset, instance, model, judge, skill) with instance metadata"),
    Table("score_history", SCORE_HISTORY, ("dataset", "judge"), description="every score "
          "written, superseded ones included"),
    Table("judgments", JUDGMENTS, ("dataset", "judge"), description="one judge call or human "
          "form: raw output, rationale, parse status, tokens"),
    Table("runs", RUNS, ("dataset", "judge"), description="judging runs and imports"),
    Table("instances", INSTANCES, ("dataset",), description="instructions and their metadata"),
    Table("responses", RESPONSES, ("dataset",), description="model responses"),
    Table("criteria", CRITERIA, ("dataset",), description="each dataset's skills or criteria: "
          "label, ability, scale, rubric"),
    Table("datasets", DATASETS, (), description="provenance: title, source, simulated flag"),
    Table("judges", JUDGES, (), description="scorers: kind, backend, model, prompt, params"),
    Table("families", FAMILIES, (), description="judge and model families (self-preference)"),
)  # fmt: skip


@dataclass(frozen=True)
class ExportReport:
    out: Path
    file_format: str
    datasets: tuple[str, ...]
    rows: dict[str, int]

    def lines(self) -> list[str]:
        return [f"{name}: {n:,} rows" for name, n in self.rows.items()]


def export(
    store: Store,
    out: str | Path,
    *,
    file_format: str = "parquet",
    datasets: Sequence[str] = (),
    producer: str = "finegrain",
    progress: Callable[[int, int, str], None] | None = None,
) -> ExportReport:
    """Write the tables of ``datasets`` (default: all) under ``out`` (absent or empty).
    ``progress(done, total, label)`` is called before each table."""
    out = Path(out)
    if file_format not in FORMATS:
        raise InputError("command line", None, "--format", f"expected parquet or csv, not "
                         f"{file_format!r}")  # fmt: skip
    _check_out(out)
    work = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    try:
        work.mkdir(parents=True)
        with store.read() as con:
            names = _datasets(con, datasets)
            rows = {}
            for i, table in enumerate(TABLES):
                if progress:
                    progress(i, len(TABLES), table.name)
                rows[table.name] = _write(con, table, names, work, file_format)
            manifest = _manifest(con, names, rows, file_format, producer)
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        if out.exists():
            out.rmdir()  # empty (checked): replaced by the finished export
        work.rename(out)
    except OSError as e:
        raise StoreError(f"Cannot write the export to {out}: {e.strerror or e}.") from e
    except duckdb.Error as e:  # DuckDB writing the files (a full disk, a folder gone)
        raise StoreError(f"Cannot write the export to {out}: {e}.") from e
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if progress:
        progress(len(TABLES), len(TABLES), "done")
    return ExportReport(out, file_format, tuple(names), rows)


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(str(out), None, "--out", "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise InputError(str(out), None, "--out", "the folder is not empty; give a new or "
                         "empty folder (an export never overwrites files)")  # fmt: skip


def _datasets(con, wanted: Sequence[str]) -> list[str]:
    known = [d for (d,) in con.execute(ALL_DATASETS).fetchall()]
    missing = [d for d in wanted if d not in known]
    if missing:
        raise NotFoundError(
            f"No dataset {', '.join(map(repr, missing))} in the store; it has "
            f"{', '.join(map(repr, known)) or 'none'}."
        )
    return list(dict.fromkeys(wanted)) if wanted else known


def _write(con, table: Table, names: list[str], work: Path, file_format: str) -> int:
    """One table: its rows for ``names``, written partitioned; returns the row count."""
    where = IN_DATASETS.format(col=table.dataset_col)
    sql = table.sql.format(where=where)
    params = [names] * sql.count("?::VARCHAR[]")
    rel = con.sql(sql, params=params)
    target = work / table.name
    target.mkdir()
    if file_format == "csv":
        rel = _for_spreadsheets(con, rel)
    path = str(target if table.partition_by else target / f"data_0.{file_format}")
    parts = {"partition_by": list(table.partition_by)} if table.partition_by else {}
    if file_format == "parquet":
        rel.to_parquet(path, compression="zstd", **parts)
    else:  # a spreadsheet opens one file: keep dataset and judge in it
        keep = {"write_partition_columns": True} if parts else {}
        rel.to_csv(path, header=True, **parts, **keep)
    return _count(con, target, file_format)


def _count(con, folder: Path, file_format: str) -> int:
    """Rows written (Parquet: from the files' footers, without reading the rows)."""
    files = [str(f) for f in folder.rglob(f"*.{file_format}")]
    if not files:
        return 0
    reader = "read_parquet(?)" if file_format == "parquet" else "read_csv(?, header = true)"
    return int(con.execute(f"SELECT count(*) FROM {reader}", [files]).fetchall()[0][0])  # noqa: S608


def _for_spreadsheets(con, rel):
    """Lists ``;``-joined and formula-looking text neutralised with a leading ``'``."""
    cols = []
    for name, dtype in zip(rel.columns, rel.types, strict=True):
        col = '"' + name.replace('"', '""') + '"'
        text = str(dtype)
        if text.endswith("[]"):
            col = f"array_to_string({col}, '{LIST_SEPARATOR}')"
        if text == "VARCHAR" or text.endswith("[]"):
            col = f"CASE WHEN regexp_matches({col}, '{FORMULA_START}') THEN '''' || {col} " \
                  f"ELSE {col} END"  # fmt: skip
        cols.append(f'{col} AS "{name}"')
    return rel.project(", ".join(cols))


def _manifest(con, names, rows, file_format, producer) -> dict:
    datasets = con.sql(DATASETS.format(where=IN_DATASETS.format(col="dataset")), params=[names])
    judges = con.sql(JUDGES.format(where=IN_DATASETS.format(col="dataset")), params=[names] * 2)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "file_format": file_format,
        "schema_version": schema.SCHEMA_VERSION,
        "producer": producer,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "partition_values": PARTITION_NOTE,
        "datasets": _records(datasets),
        "judges": _records(judges),
        "tables": {
            t.name: {"path": t.name, "partition_by": list(t.partition_by), "rows": rows[t.name],
                     "description": t.description}
            for t in TABLES
        },
    }  # fmt: skip


def _records(rel) -> list[dict]:
    cols = rel.columns
    return [_record(dict(zip(cols, row, strict=True))) for row in rel.fetchall()]


def _record(row: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in row.items()}
