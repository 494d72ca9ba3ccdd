"""What a score file's rows mean against the store: each judge's kind (human or llm) and each
criterion's scale (FLASK's skills are 1-5; a custom criterion's comes from the file's scale
columns, ``--scale`` or the store), with every score checked inside its scale."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pandas as pd

from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS, Criterion, normalise_skill, suggest_skill
from analysis.core.writer import ImportReport
from analysis.ingest import score_columns as conv
from analysis.ingest.score_checks import RowChecks

SKILL_SCALES = "SELECT skill, scale_min, scale_max FROM skills"


DATASET_IDS = "SELECT dataset FROM datasets"


JUDGE_KINDS = "SELECT judge, kind FROM judges"


KINDS = ("human", "llm")


FLASK_SCALE = (1.0, 5.0)


SCALE_HINT = "pass --scale MIN-MAX (e.g. --scale 1-10) or add scale_min and scale_max columns"


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
            scales = {s: (lo, hi) for s, lo, hi in con.execute(SKILL_SCALES).fetchall()}
            datasets = frozenset(d for (d,) in con.execute(DATASET_IDS).fetchall())
            judges = dict(con.execute(JUDGE_KINDS).fetchall())
    except duckdb.CatalogException:  # no schema yet: write_batch creates it
        return StoreFacts()
    return StoreFacts(scales, datasets, judges)


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


def resolve_kinds(
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


def resolve_scales(
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
