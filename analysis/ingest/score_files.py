"""Import long-format scores (CSV, JSONL/NDJSON, Parquet): one row per instance, model, judge
and skill.

Required columns: ``instance_id, model, skill, score``, and ``judge`` unless ``judge=`` names the
scorer. Optional: ``kind`` (human|llm), ``dataset``, ``scale_min``/``scale_max``, ``instruction,
reference, response, rationale, domain, difficulty, source_task``. A column value wins over the
argument, which fills blank cells (dataset defaults to the file's stem, kind to the judge's kind
on other rows, then the store, then llm). An empty score (or N/A, NA, null) is N/A; real-valued
scores are allowed inside the criterion's scale. Scores are plain decimal numbers (``4``,
``3.5``, ``-2e1``, a Parquet decimal); ``1_0``, ``inf`` and non-ASCII digits are refused. Ids
and names are kept as text exactly as written: a JSON number id keeps every digit.
Criteria belong to their dataset: FLASK's skills (any spelling) are the shared 1-5 skills
unless the dataset gives the name a scale of its own; any other name is the dataset's own
criterion, whose scale comes from the scale columns, ``scale=`` or the store. A score outside
its scale stops the import (naming file, line and field), unless ``out_of_scale="na"``: then it
is kept as N/A, counted, and its first rows are listed in the report (real datasets write -1 or
0 for "not rated").

``parse_score_file`` is pure (file → Batch). ``import_scores`` reads what it needs from the store,
parses, and writes with ``write_batch``: one transaction; a run id hashes judge, dataset and the
file's bytes, so importing the same file again adds nothing, while a different file for the same
judge supersedes the scores it repeats (the older ones stay as history).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.names import name_problem, optional_name
from analysis.core.store import Store
from analysis.core.taxonomy import Criterion
from analysis.core.writer import (
    AS_NA_SHOWN,
    INSTANCE_COLS,
    JUDGMENT_COLS,
    RESPONSE_COLS,
    SCORE_COLS,
    Batch,
    DatasetRecord,
    ImportReport,
    JudgeRecord,
    RunRecord,
    write_batch,
)
from analysis.ingest import score_columns as conv
from analysis.ingest.export_folder import is_export, read_export
from analysis.ingest.file_checks import utf8_name
from analysis.ingest.score_checks import RowChecks, one
from analysis.ingest.score_criteria import (
    KINDS,
    OUT_OF_SCALE,
    StoreFacts,
    read_store_facts,
    resolve_kinds,
    resolve_scales,
    scale_problem,
)
from analysis.ingest.score_table import NAME_COLS, Table, read_table

REQUIRED = ("instance_id", "model", "skill", "score")
KEYS = ["dataset", "instance_id", "model", "judge", "skill"]
NUMBER_COLS = ("score", "scale_min", "scale_max")
TEXT_COLS = ("instruction", "reference", "response", "rationale", "source_task")
KNOWN_COLS = {*NAME_COLS, *NUMBER_COLS, *TEXT_COLS, "domain", "difficulty"}


def import_scores(
    store: Store,
    path: str | Path,
    *,
    judge: str | None = None,
    kind: str | None = None,
    dataset: str | None = None,
    scale: tuple[float, float] | None = None,
    lenient: bool = False,
    out_of_scale: str = "error",
) -> ImportReport:
    """Parse a score file (or read an export folder) and write it into ``store``: all or
    nothing, idempotent."""
    if store.exists():
        store.ensure()  # an older store upgrades first: the facts below read its current schema
    if is_export(Path(path)):
        return _import_export(store, Path(path), judge, kind, dataset, scale, lenient, out_of_scale)
    facts = read_store_facts(store)
    batch = parse_score_file(
        Path(path),
        judge=judge,
        kind=kind,
        dataset=dataset,
        scale=scale,
        lenient=lenient,
        out_of_scale=out_of_scale,
        facts=facts,
    )
    if batch.scores.empty:
        batch.report.notes.append("nothing was imported: every row was skipped")
        return batch.report
    report = write_batch(store, batch, str(path))
    if report.already_imported_runs == len(batch.runs):
        report.notes.append("this file was imported before: nothing new was written")
    return report


def _import_export(store: Store, path: Path, *options: object) -> ImportReport:
    """An export folder: the store's own tables, so no option that interprets a file applies."""
    if any(o not in (None, False, "error") for o in options):
        raise InputError(str(path), None, None, "an export folder brings its own datasets, "
                         "judges, kinds and scales: import it without --judge, --kind, --dataset, "
                         "--scale, --lenient or --out-of-scale")  # fmt: skip
    batch = read_export(path)
    report = write_batch(store, batch, str(path))
    if report.already_imported_runs == len(batch.runs):
        report.notes.append("this export was imported before: nothing new was written")
    return report


def parse_score_file(
    path: Path,
    *,
    judge: str | None = None,
    kind: str | None = None,
    dataset: str | None = None,
    scale: tuple[float, float] | None = None,
    lenient: bool = False,
    out_of_scale: str = "error",
    facts: StoreFacts | None = None,
    name: str | None = None,
) -> Batch:
    """A score file → Batch (nothing written). Errors name the file, the line and the field."""
    name = name or str(path)
    utf8_name(name)  # stored as the runs' source and the default dataset
    facts = facts or StoreFacts()
    if kind is not None and kind not in KINDS:
        raise InputError(name, None, "kind", f"invalid kind {kind!r}; expected human or llm")
    if out_of_scale not in OUT_OF_SCALE:
        raise InputError(
            name, None, "out-of-scale", f"invalid choice {out_of_scale!r}; expected error or na"
        )
    if scale is not None:
        if problem := scale_problem(*scale):
            raise InputError(name, None, "scale", problem)
        scale = (float(scale[0]), float(scale[1]))
    judge = optional_name("judge", judge, source=name, field="--judge")
    table = read_table(path, name, lenient=lenient)
    report = ImportReport(skipped=table.skipped)
    if len(table.lines) == 0:  # lenient mode, and no line was valid JSON
        return Batch(mode="merge", report=report)
    _check_columns(table, judge)
    rows = RowChecks(table, lenient)
    df = rows.flush(_convert(table, rows, judge, dataset or Path(name).stem))
    df = rows.flush(resolve_kinds(df, rows, kind, facts))
    df, criteria = resolve_scales(df, rows, scale, facts, report, out_of_scale)
    df = rows.flush(_check_consistency(df, rows))
    _report_as_na(df, table, report)
    if extra := sorted(set(table.columns) - KNOWN_COLS - {""}):
        report.notes.append(f"ignored column(s): {', '.join(extra)}")
    report.skipped.sort(key=lambda r: r.line)
    return _assemble(df, table, criteria, facts, report)


def _report_as_na(df: pd.DataFrame, table: Table, report: ImportReport) -> None:
    """Count the scores kept as N/A for being outside their scale; list the first ones."""
    outside = df["_outside"].notna().to_numpy()
    report.n_as_na = int(outside.sum())
    first = df.loc[outside].sort_values("_line", kind="stable").head(AS_NA_SHOWN)
    report.as_na = [
        table.at(line, "score", f"{v:g} is outside the scale {lo:g}-{hi:g} of '{s}': stored as N/A")
        for line, v, lo, hi, s in first[
            ["_line", "_outside", "_scale_lo", "_scale_hi", "skill"]
        ].itertuples(index=False, name=None)
    ]


def _check_columns(table: Table, judge: str | None) -> None:
    for col in REQUIRED + (() if judge else ("judge",)):
        if col not in table.columns:
            hint = " (or pass --judge NAME for every row)" if col == "judge" else ""
            have = ", ".join(c for c in table.columns if c)
            if len(table.columns) == 1 and any(sep in have for sep in ";\t|"):
                hint += "; the file seems to use another separator: save it comma-separated"
            raise table.error(
                table.header_line,
                col,
                f"missing required column '{col}'{hint}; the columns are: {have}",
            )


def _convert(table: Table, rows: RowChecks, judge: str | None, dataset: str) -> pd.DataFrame:
    """Every cell to its clean type; bad cells are recorded in ``rows``."""
    cols = table.columns
    df = pd.DataFrame({"_line": table.lines})
    for pos, f, why in table.problems:
        rows.add(one(len(df), pos), f, why)
    converters = [(c, conv.keys) for c in NAME_COLS] + [(c, conv.numbers) for c in NUMBER_COLS]
    converters += [(c, conv.texts) for c in TEXT_COLS]
    converters += [("domain", conv.domains), ("difficulty", conv.difficulties)]
    for col, convert in converters:
        if col not in cols:
            df[col] = np.nan if convert is conv.numbers else None
            continue
        c = convert(cols[col])
        rows.add(c.bad, col, c.why)
        df[col] = c.values  # object dtype kept: pandas would infer its slower "str" dtype
    if judge:
        df["judge"] = df["judge"].fillna(judge)
    df["dataset"] = df["dataset"].fillna(dataset)
    for col in ("instance_id", "model", "skill", "judge"):
        rows.add(df[col].isna(), col, f"missing: every row needs a {col}")
    _check_names(df, rows, "judge", "judge")
    _check_names(df, rows, "skill", "criterion")
    return df


def _check_names(df: pd.DataFrame, rows: RowChecks, col: str, kind: str) -> None:
    """Names as stored (NFC); a reserved name or one with an invisible character is a bad row
    (the rule: analysis/core/names.py). Each distinct name is checked once."""
    given = df[col]
    checked = {v: name_problem(kind, v) for v in given.dropna().unique()}
    bad = {v: why for v, (_, why) in checked.items() if why}
    rows.add(given.isin(list(bad)), col, lambda p: bad[given.iat[p]])
    df[col] = pd.Series(conv.lookup(given, {v: c for v, (c, _) in checked.items()}), dtype=object)


def _score_text(v: object) -> str:
    return "N/A" if v == -np.inf else f"{v:g}"  # type: ignore[operator]


def _domain_text(v: object) -> str:
    return repr("; ".join(v))  # type: ignore[arg-type]


def _check_consistency(df: pd.DataFrame, rows: RowChecks) -> pd.DataFrame:
    """One value per instance (instruction ...), per response, and per score key."""
    inst = ["dataset", "instance_id"]
    iid, model = df["instance_id"], df["model"]
    for col, name in [(c, c) for c in ("instruction", "reference", "source_task", "difficulty")]:
        rows.conflicts(
            df, inst, col, name, lambda p, n=name: f"the {n} of instance '{iid.iat[p]}'", conv.show
        )
    rows.conflicts(
        df,
        inst,
        "domain",
        "domain",
        lambda p: f"the domain of instance '{iid.iat[p]}'",
        _domain_text,
    )
    rows.conflicts(
        df,
        [*inst, "model"],
        "response",
        "response",
        lambda p: f"the response of model '{model.iat[p]}' to instance '{iid.iat[p]}'",
        conv.show,
    )
    df["_score"] = df["score"].fillna(-np.inf)
    rows.conflicts(
        df,
        KEYS,
        "_score",
        "score",
        lambda p: (
            f"the score of instance '{iid.iat[p]}', model '{model.iat[p]}', "
            f"judge '{df['judge'].iat[p]}', skill '{df['skill'].iat[p]}'"
        ),
        _score_text,
    )
    return df


def _first(df: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    """The first non-empty value of each column per key (None if none), keys in file order."""
    out = df.groupby(keys, sort=False)[cols].first().reset_index()
    for c in cols:
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out


def _assemble(
    df: pd.DataFrame,
    table: Table,
    criteria: list[Criterion],
    facts: StoreFacts,
    report: ImportReport,
) -> Batch:
    n = len(df)
    df = df.drop_duplicates(KEYS).reset_index(drop=True)
    if len(df) < n:
        report.notes.append(f"{n - len(df):,} repeated row(s) with the same score counted once")
    pairs = df[["judge", "dataset"]].drop_duplicates().reset_index(drop=True)
    pairs["run_id"] = [
        "import-" + hashlib.sha1(f"{j}\0{d}\0{table.digest}".encode()).hexdigest()[:20]
        for j, d in zip(pairs["judge"], pairs["dataset"], strict=True)
    ]
    df = df.merge(pairs, on=["judge", "dataset"], how="left")
    judgments = _first(df, ["run_id", "dataset", "instance_id", "model", "judge"], ["rationale"])
    judgments = judgments.assign(
        raw_output=None,
        parse_status="ok",
        error=None,
        latency_ms=None,
        prompt_tokens=None,
        completion_tokens=None,
    )
    inst_keys = ["dataset", "instance_id"]
    inst = _first(df, inst_keys, ["instruction", "reference", "source_task", "difficulty"])
    idx = pd.MultiIndex.from_frame(inst[inst_keys])
    skills: dict[tuple, list[str]] = {}
    pairs_of = df.drop_duplicates([*inst_keys, "skill"])[[*inst_keys, "skill"]]
    for d, i, s in pairs_of.itertuples(index=False, name=None):
        skills.setdefault((d, i), []).append(s)
    inst["skills"] = [skills[k] for k in zip(inst["dataset"], inst["instance_id"], strict=True)]
    doms = df[df["domain"].notna()].drop_duplicates(inst_keys).set_index(inst_keys)["domain"]
    inst["domains"] = [list(d) if isinstance(d, tuple) else [] for d in doms.reindex(idx)]
    inst["flask_hard"] = False
    resp = df[df["response"].notna()].drop_duplicates([*inst_keys, "model"])
    resp = resp.rename(columns={"response": "text"})[RESPONSE_COLS].reset_index(drop=True)
    kinds = df.drop_duplicates("judge").set_index("judge")["kind"]
    per_run = judgments.groupby("run_id", sort=False).size()
    report.counts = {
        "scores": len(df),
        "N/A scores": int(df["score"].isna().sum()),
        "judgments": len(judgments),
        "instances": len(inst),
        "responses": len(resp),
        "judges": len(kinds),
        "datasets": pairs["dataset"].nunique(),
    }
    return Batch(
        datasets=[
            DatasetRecord(d, d, table.name, description=f"Imported from {table.name}")
            for d in pairs["dataset"].unique()
            if d not in facts.datasets
        ],
        criteria=criteria,
        instances=inst[INSTANCE_COLS],
        responses=resp,
        judges=[JudgeRecord(j, k) for j, k in kinds.items() if j not in facts.judges],
        runs=[
            RunRecord(
                r.run_id,
                r.judge,
                r.dataset,
                table.name,
                int(per_run[r.run_id]),
                int(per_run[r.run_id]),
            )
            for r in pairs.itertuples()
        ],
        judgments=judgments[JUDGMENT_COLS],
        scores=df[SCORE_COLS],
        mode="merge",
        report=report,
    )
