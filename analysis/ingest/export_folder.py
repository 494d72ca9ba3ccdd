"""An export folder (analysis.ingest.export, Parquet) read back as one Batch: ``import-scores
DIR`` rebuilds a store from it, all or nothing, through the one batch writer.

What comes back: datasets (title, source, simulated flag, seed), the datasets' own criteria,
instances, responses, judges (kind, backend, model, prompt version, parameters), the runs that
produced the latest scores or a judgment, their judgments (raw output, rationale, parse status,
tokens), the latest scores, the repeat runs' scores (history, for Stability) and the judge and
model families. So every page's numbers are the exported store's. Not restored: superseded
scores of other runs (``score_history`` is for analysis), the content keys of judge calls (a
judge asked again after a rebuild pays again), and a run's timestamps, status and cost (the
writer records an imported run as complete, now). A run that called a judge twice for the same
item (a failed call, then a retry) keeps its last call only, and the report says how many
earlier calls were left out: the writer links a score to its run's one judgment of the item.

Reading is pure (folder → Batch); importing the same folder twice adds nothing (the runs exist).
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from analysis.core.errors import InputError
from analysis.core.taxonomy import Criterion
from analysis.core.writer import (
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    ImportReport,
    JudgeRecord,
    RunRecord,
)
from analysis.ingest.export import FORMAT, FORMAT_VERSION, MANIFEST, TABLES

FAMILY_COLS = ["kind", "name", "family"]
HIVE = "hive_partitioning = true, hive_types = {types}"
NEEDED = ("datasets", "criteria", "instances", "responses", "judges", "runs", "judgments", "scores",
          "families", "score_history")  # fmt: skip


def is_export(path: Path) -> bool:
    """A folder with an export's manifest (what import-scores reads this way)."""
    return path.is_dir() and (path / MANIFEST).is_file()


def read_export(path: Path) -> Batch:
    """The export folder at ``path`` as a Batch (nothing written)."""
    manifest = _manifest(path)
    con = duckdb.connect()
    try:
        frames = {name: _table(con, path, name, manifest) for name in NEEDED}
    finally:
        con.close()
    return _batch(frames, str(path))


def _manifest(path: Path) -> dict:
    file = path / MANIFEST
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(str(file), None, None, f"not a readable export manifest ({e})") from e
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(str(file), None, "format", f"expected {FORMAT!r}: not a Finegrain export")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise InputError(str(file), None, "format_version", f"version "
                         f"{manifest.get('format_version')!r} is not {FORMAT_VERSION}: export it "
                         "again with this version")  # fmt: skip
    if manifest.get("file_format") != "parquet":
        raise InputError(str(file), None, "file_format", "a CSV export is for spreadsheets (its "
                         "formula-looking cells carry a leading '); export with --format parquet "
                         "to rebuild a store")  # fmt: skip
    return manifest


def _table(con, path: Path, name: str, manifest: dict) -> pa.Table:
    """One table's rows (Arrow: lists and NULLs as stored), partition columns back as text."""
    spec = next(t for t in TABLES if t.name == name)
    folder = path / name
    expected = manifest.get("tables", {}).get(name, {}).get("rows")
    files = sorted(folder.rglob("*.parquet")) if folder.is_dir() else []
    if not files:
        if expected:
            raise InputError(str(folder), None, None, f"missing: the manifest lists {expected:,} "
                             f"rows of {name}")  # fmt: skip
        return pa.table({})
    types = "{" + ", ".join(f"'{c}': VARCHAR" for c in spec.partition_by) + "}"
    opts = HIVE.format(types=types) if spec.partition_by else "hive_partitioning = false"
    try:
        frame = con.sql(
            f"SELECT * FROM read_parquet(?, {opts}, union_by_name = true)",  # noqa: S608
            params=[[str(f) for f in files]],
        ).to_arrow_table()
    except duckdb.Error as e:
        raise InputError(str(folder), None, None, f"unreadable Parquet: {e}") from e
    if expected is not None and frame.num_rows != expected:
        raise InputError(str(folder), None, None, f"{frame.num_rows:,} rows, the manifest says "
                         f"{expected:,}: the export is incomplete or was changed")  # fmt: skip
    return frame


def _batch(arrow: dict[str, pa.Table], source: str) -> Batch:
    report = ImportReport()
    _require(arrow, source)
    t = {k: v.to_pandas() for k, v in arrow.items() if k not in ("instances", "responses")}
    scores, judgments = _with_repeats(t), t["judgments"]
    judgments, dropped = _last_calls(judgments)
    if dropped:
        report.notes.append(f"earlier calls of a retried item left out: {dropped:,}")
    used = set(scores["run_id"]) | set(judgments.get("run_id", ()))
    runs = t["runs"][t["runs"]["run_id"].isin(used)] if len(t["runs"]) else t["runs"]
    report.counts["runs"] = len(runs)
    return Batch(
        datasets=[_dataset(r) for r in t["datasets"].to_dict("records")],
        criteria=[_criterion(r) for r in t["criteria"].to_dict("records") if r["custom"]],
        instances=_columns(arrow["instances"], INSTANCE_COLS, source),
        responses=_columns(arrow["responses"], RESPONSE_COLS, source),
        judges=[_judge(r, source) for r in t["judges"].to_dict("records")],
        runs=[_run(r) for r in runs.to_dict("records")],
        judgments=judgments.reindex(columns=JUDGMENT_COLS),
        scores=scores.reindex(columns=SCORE_COLS),
        families=[
            tuple(r) for r in t["families"].reindex(columns=FAMILY_COLS).itertuples(index=False)
        ],
        mode="replace",
        report=report,
    )


def _with_repeats(t: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The latest scores, and the repeat runs' scores from the history (history in the store
    too: the writer marks a repeat run's scores superseded), so Stability survives the trip."""
    runs, history = t["runs"], t["score_history"]
    if "repeat_number" not in runs.columns or history.empty:
        return t["scores"]
    repeats = runs.loc[runs["repeat_number"].notna(), "run_id"]
    return pd.concat([t["scores"], history[history["run_id"].isin(repeats)]], ignore_index=True)


def _require(t: dict[str, pa.Table], source: str) -> None:
    needed = {"scores": SCORE_COLS, "datasets": ["dataset", "title", "source"],
              "judges": ["judge", "kind"], "runs": ["run_id", "judge", "dataset"],
              "judgments": ["judgment_id", *JUDGMENT_COLS], "criteria": ["custom"]}  # fmt: skip
    for name, cols in needed.items():
        missing = [c for c in cols if c not in t[name].column_names]
        if missing and t[name].num_rows:
            raise InputError(f"{source}/{name}", None, missing[0], "column missing")
    if not t["scores"].num_rows:
        raise InputError(f"{source}/scores", None, None, "the export holds no scores")


def _columns(table: pa.Table, cols: list[str], source: str) -> pa.Table | pd.DataFrame:
    if not table.num_rows:
        return pd.DataFrame(columns=cols)
    missing = [c for c in cols if c not in table.column_names]
    if missing:
        raise InputError(source, None, missing[0], "column missing")
    return table.select(cols)


def _last_calls(judgments: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Each run's last call per item (the one its scores came from)."""
    if judgments.empty:
        return judgments, 0
    key = ["run_id", "dataset", "instance_id", "model", "judge"]
    last = judgments.sort_values("judgment_id").drop_duplicates(key, keep="last")
    return last.sort_values("judgment_id"), len(judgments) - len(last)


def _dataset(r: dict) -> DatasetRecord:
    seed = r.get("seed")
    return DatasetRecord(
        r["dataset"], r["title"], r["source"], bool(r.get("simulated")),
        None if pd.isna(seed) else int(seed), r.get("description") or "",
    )  # fmt: skip


def _criterion(r: dict) -> Criterion:
    rubric = r.get("rubric")  # an array, or None
    return Criterion(
        r["skill"], r["label"], None if pd.isna(r["ability"]) else r["ability"],
        int(r["display_order"]), r.get("definition") or "",
        () if rubric is None else tuple(rubric),
        float(r["scale_min"]), float(r["scale_max"]), True, r["dataset"],
    )  # fmt: skip


def _judge(r: dict, source: str) -> JudgeRecord:
    if r["kind"] not in ("human", "llm"):
        raise InputError(f"{source}/judges", None, "kind", f"{r['kind']!r} for judge "
                         f"{r['judge']!r}; expected human or llm")  # fmt: skip
    raw = r.get("params")
    try:
        params = json.loads(raw) if isinstance(raw, str) and raw else {}
    except json.JSONDecodeError as e:
        raise InputError(f"{source}/judges", None, "params", f"not JSON for {r['judge']!r}") from e
    opt = {k: (None if pd.isna(r.get(k)) else r.get(k)) for k in ("model", "prompt_version")}
    return JudgeRecord(r["judge"], r["kind"], r.get("backend") or "import", params=params, **opt)


def _run(r: dict) -> RunRecord:
    def n(key: str) -> int:
        v = r.get(key)
        return 0 if v is None or pd.isna(v) else int(v)

    repeat = r.get("repeat_number")
    return RunRecord(
        r["run_id"], r["judge"], r["dataset"], r.get("source") or "export",
        n("n_items"), n("n_ok"), n("n_failed"), n("prompt_tokens"), n("completion_tokens"),
        None if repeat is None or pd.isna(repeat) else int(repeat),
    )  # fmt: skip
