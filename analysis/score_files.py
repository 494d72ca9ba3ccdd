"""Import long-format scores (CSV, JSONL/NDJSON, Parquet): one row per instance, model, judge
and skill.

Required columns: ``instance_id, model, skill, score``, and ``judge`` unless ``judge=`` names the
scorer. Optional: ``kind`` (human|llm), ``dataset``, ``scale_min``/``scale_max``, ``instruction,
reference, response, rationale, domain, difficulty, source_task``. A column value wins over the
argument, which fills blank cells (dataset defaults to the file's stem, kind to the judge's kind
on other rows, then the store, then llm). An empty score (or N/A, NA, null) is N/A; real-valued
scores are allowed inside the criterion's scale. FLASK's skills (any spelling) are scored 1-5;
any other skill name is a custom criterion whose scale comes from the scale columns, ``scale=``
or the store.

``parse_score_file`` is pure (file → Batch). ``import_scores`` reads what it needs from the store,
parses, and writes with ``write_batch``: one transaction; a run id hashes judge, dataset and the
file's bytes, so importing the same file again adds nothing, while a different file for the same
judge supersedes the scores it repeats (the older ones stay as history).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from analysis import queries
from analysis import score_columns as conv
from analysis.batch import (
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
from analysis.errors import InputError
from analysis.score_checks import RowChecks, one
from analysis.score_table import Table, read_table
from analysis.store import Store
from analysis.taxonomy import SKILLS, Criterion, normalise_skill, suggest_skill

REQUIRED = ("instance_id", "model", "skill", "score")
KEYS = ["dataset", "instance_id", "model", "judge", "skill"]
NAME_COLS = ("instance_id", "model", "skill", "judge", "dataset", "kind")
NUMBER_COLS = ("score", "scale_min", "scale_max")
TEXT_COLS = ("instruction", "reference", "response", "rationale", "source_task")
KNOWN_COLS = {*NAME_COLS, *NUMBER_COLS, *TEXT_COLS, "domain", "difficulty"}
KINDS = ("human", "llm")
FLASK_SCALE = (1.0, 5.0)
SCALE_HINT = "pass --scale MIN-MAX (e.g. --scale 1-10) or add scale_min and scale_max columns"

# Read-only look-ups of what the parser must know (the writes are in queries.py).


@dataclass(frozen=True)
class StoreFacts:
    """What the parser needs to know about the store the batch will be written to."""

    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    datasets: frozenset[str] = frozenset()
    judges: dict[str, str] = field(default_factory=dict)  # judge → kind


def read_store_facts(store: Store) -> StoreFacts:
    if not store.exists():
        return StoreFacts()
    try:
        with store.read() as con:
            scales = {s: (lo, hi) for s, lo, hi in con.execute(queries.SKILL_SCALES).fetchall()}
            datasets = frozenset(d for (d,) in con.execute(queries.DATASET_IDS).fetchall())
            judges = dict(con.execute(queries.JUDGE_KINDS).fetchall())
    except duckdb.CatalogException:  # no schema yet: write_batch creates it
        return StoreFacts()
    return StoreFacts(scales, datasets, judges)


def import_scores(
    store: Store,
    path: str | Path,
    *,
    judge: str | None = None,
    kind: str | None = None,
    dataset: str | None = None,
    scale: tuple[float, float] | None = None,
    lenient: bool = False,
) -> ImportReport:
    """Parse a score file and write it into ``store``: all or nothing, idempotent."""
    facts = read_store_facts(store)
    batch = parse_score_file(
        Path(path),
        judge=judge,
        kind=kind,
        dataset=dataset,
        scale=scale,
        lenient=lenient,
        facts=facts,
    )
    if batch.scores.empty:
        batch.report.notes.append("nothing was imported: every row was skipped")
        return batch.report
    report = write_batch(store, batch, str(path))
    if report.already_imported_runs == len(batch.runs):
        report.notes.append("this file was imported before: nothing new was written")
    return report


def parse_score_file(
    path: Path,
    *,
    judge: str | None = None,
    kind: str | None = None,
    dataset: str | None = None,
    scale: tuple[float, float] | None = None,
    lenient: bool = False,
    facts: StoreFacts | None = None,
    name: str | None = None,
) -> Batch:
    """A score file → Batch (nothing written). Errors name the file, the line and the field."""
    name = name or str(path)
    facts = facts or StoreFacts()
    if kind is not None and kind not in KINDS:
        raise InputError(name, None, "kind", f"invalid kind {kind!r}; expected human or llm")
    if scale is not None:
        if problem := scale_problem(*scale):
            raise InputError(name, None, "scale", problem)
        scale = (float(scale[0]), float(scale[1]))
    table = read_table(path, name, lenient=lenient)
    report = ImportReport(skipped=table.skipped)
    if len(table.lines) == 0:  # lenient mode, and no line was valid JSON
        return Batch(mode="merge", report=report)
    _check_columns(table, judge)
    rows = RowChecks(table, lenient)
    df = rows.flush(_convert(table, rows, judge, dataset or Path(name).stem))
    df = rows.flush(_resolve_kinds(df, rows, kind, facts))
    df, criteria = _resolve_scales(df, rows, scale, facts, report)
    df = rows.flush(_check_consistency(df, rows))
    if extra := sorted(set(table.columns) - KNOWN_COLS - {""}):
        report.notes.append(f"ignored column(s): {', '.join(extra)}")
    report.skipped.sort(key=lambda r: r.line)
    return _assemble(df, table, criteria, facts, report)


def scale_problem(lo: object, hi: object) -> str | None:
    """What is wrong with a scale (whole-number ends, minimum below maximum), or None."""
    try:
        lo, hi = float(lo), float(hi)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"expected a scale MIN-MAX of two numbers, got {lo!r}-{hi!r}"
    if not (math.isfinite(lo) and math.isfinite(hi) and lo.is_integer() and hi.is_integer()):
        return f"scale ends must be whole numbers (e.g. 1-5, 0-1, 1-10), got {lo:g}-{hi:g}"
    if lo >= hi:
        return f"the scale minimum {lo:g} must be below its maximum {hi:g}"
    return None


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
    return df


def _resolve_kinds(
    df: pd.DataFrame, rows: RowChecks, default: str | None, facts: StoreFacts
) -> pd.DataFrame:
    """Blank kinds take the judge's kind on other rows, then ``kind=``, the store, then llm."""
    judge = df["judge"]
    pairs = df[["judge", "kind"]].dropna().drop_duplicates()
    lower = {k: k.lower() for k in pairs["kind"]}
    given = pd.Series(conv.lookup(df["kind"], lower), dtype=object)
    rows.add(
        given.notna() & ~given.isin(KINDS),
        "kind",
        lambda p: f"invalid kind {df['kind'].iat[p]!r}; expected human or llm",
    )
    explicit: dict[str, str] = {}
    for j, k in pairs.itertuples(index=False, name=None):
        if lower[k] in KINDS:
            explicit.setdefault(j, lower[k])
    resolved = {
        j: explicit.get(j) or default or facts.judges.get(j) or "llm" for j in judge.unique()
    }
    df["kind"] = given.where(given.isin(KINDS), pd.Series(conv.lookup(judge, resolved)))
    stored = pd.Series(conv.lookup(judge, facts.judges), dtype=object)
    rows.add(
        stored.notna() & (stored != df["kind"]),
        "kind",
        lambda p: (
            f"judge '{judge.iat[p]}' is already in the store as {stored.iat[p]}; "
            f"this row makes it {df['kind'].iat[p]}"
        ),
    )
    rows.conflicts(
        df, ["judge"], "kind", "kind", lambda p: f"the kind of judge '{judge.iat[p]}'", repr
    )
    return df


def _resolve_scales(
    df: pd.DataFrame, rows: RowChecks, arg: tuple | None, facts: StoreFacts, report: ImportReport
) -> tuple[pd.DataFrame, list[Criterion]]:
    """Canonical skill ids, each criterion's scale, and every score inside its scale."""
    canonical = {u: normalise_skill(u) or u for u in df["skill"].unique()}
    df["skill"] = pd.Series(conv.lookup(df["skill"], canonical), dtype=object)
    lo, hi = df["scale_min"].to_numpy(float), df["scale_max"].to_numpy(float)
    has_lo, has_hi = ~np.isnan(lo), ~np.isnan(hi)
    rows.add(has_lo & ~has_hi, "scale_max", "missing: give both scale_min and scale_max")
    rows.add(has_hi & ~has_lo, "scale_min", "missing: give both scale_min and scale_max")
    both = has_lo & has_hi
    for a, b in set(zip(lo[both].tolist(), hi[both].tolist(), strict=True)):
        if problem := scale_problem(a, b):
            rows.add(both & (lo == a) & (hi == b), "scale_min", problem)
    flask = df["skill"].isin(SKILLS).to_numpy()
    rows.add(
        both & flask & ((lo != 1) | (hi != 5)),
        "scale_min",
        lambda p: (
            f"'{df['skill'].iat[p]}' is a FLASK skill, scored 1-5; this row declares "
            f"{lo[p]:g}-{hi[p]:g}. Use another name for a custom criterion"
        ),
    )
    df = rows.flush(df)
    declared = df["scale_min"].notna().to_numpy()
    df["_scale"] = pd.Series(None, index=df.index, dtype=object)
    df.loc[declared, "_scale"] = [
        f"{a:g}-{b:g}"
        for a, b in zip(df["scale_min"][declared], df["scale_max"][declared], strict=True)
    ]
    rows.conflicts(
        df,
        ["skill"],
        "_scale",
        "scale_min",
        lambda p: f"the scale of criterion '{df['skill'].iat[p]}'",
        str,
    )
    df = rows.flush(df)
    scales, criteria = _criteria(df, rows, arg, facts, report)
    lo = conv.lookup(df["skill"], {k: s[0] for k, s in scales.items()}, np.nan).astype(float)
    hi = conv.lookup(df["skill"], {k: s[1] for k, s in scales.items()}, np.nan).astype(float)
    v = df["score"].to_numpy(float)
    flask = df["skill"].isin(SKILLS).to_numpy()
    hint = " (FLASK's skills are scored 1-5; --scale is for custom criteria)" if arg else ""
    rows.add(
        ~np.isnan(lo) & ~np.isnan(v) & ~((v >= lo) & (v <= hi)),
        "score",
        lambda p: (
            f"score {v[p]:g} is outside the scale {lo[p]:g}-{hi[p]:g} of "
            f"'{df['skill'].iat[p]}'{hint if flask[p] else ''}"
        ),
    )
    df = rows.flush(df)
    left = set(df["skill"])
    return df, [c for c in criteria if c.skill in left]


def _criteria(
    df: pd.DataFrame, rows: RowChecks, arg: tuple | None, facts: StoreFacts, report: ImportReport
) -> tuple[dict[str, tuple[float, float]], list[Criterion]]:
    """Each skill's scale: FLASK's are 1-5; a custom one's comes from the scale columns, else
    ``scale=``, else the store. New custom criteria are returned for the batch."""
    declared = df.dropna(subset=["_scale"]).drop_duplicates("skill").set_index("skill")
    scales: dict[str, tuple[float, float]] = {}
    criteria: list[Criterion] = []
    for name in df["skill"].unique():
        if name in SKILLS:
            scales[name] = FLASK_SCALE
            continue
        of_skill = (df["skill"] == name).to_numpy()
        stored = facts.scales.get(name)
        if name in declared.index:
            s = (declared.at[name, "scale_min"], declared.at[name, "scale_max"])
            origin = "the scale columns"
        elif arg is not None or stored is not None:
            s, origin = (arg, "--scale") if arg is not None else (stored, "the store")
        else:
            hint = suggest_skill(name, tuple(facts.scales))
            rows.add(
                of_skill,
                "skill",
                f"unknown skill '{name}'{hint}: not one of FLASK's "
                f"12 skills, so it is a custom criterion, which needs a scale: "
                f"{SCALE_HINT}",
            )
            continue
        if stored is not None and tuple(stored) != tuple(s):
            rows.add(
                of_skill,
                "skill",
                f"criterion '{name}' already exists with scale "
                f"{stored[0]:g}-{stored[1]:g}; this file gives {s[0]:g}-{s[1]:g}. Use the "
                "existing scale or another criterion name",
            )
            continue
        scales[name] = (float(s[0]), float(s[1]))
        if stored is None:
            criteria.append(
                Criterion(
                    skill=name,
                    label=name,
                    ability=None,
                    order=100 + len(criteria),  # type: ignore[arg-type]
                    definition="A custom criterion imported from a score file.",
                    scale_min=scales[name][0],
                    scale_max=scales[name][1],
                    custom=True,
                )
            )
            like = suggest_skill(name)
            check = f"; check the spelling{like}" if like else ""
            report.notes.append(
                f"new custom criterion '{name}', scale {s[0]:g}-{s[1]:g} (from {origin}){check}"
            )
    return scales, criteria


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
