"""What a score file's rows mean against the store: each judge's kind (human or llm) and each
criterion's scale, with every score checked inside its scale.

Criteria belong to their dataset. A FLASK skill (any spelling) is the shared 1-5 skill, unless
the dataset gives that name a scale of its own (the file's scale columns, or the store). Any other
name is the dataset's own criterion, whose scale comes from the file's scale columns, ``--scale``
or the store; the same name may have another scale in another dataset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pandas as pd

from analysis.core.names import case_clash
from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS, Criterion, normalise_skill, suggest_skill
from analysis.core.writer import ImportReport
from analysis.ingest import score_columns as conv
from analysis.ingest.score_checks import RowChecks

OWN_CRITERIA = "SELECT dataset, skill, scale_min, scale_max FROM criteria"

# The skills each dataset's instances list (an import adds every skill it scores).
SKILLS_IN_USE = """
SELECT dataset, list(DISTINCT skill) FROM (SELECT dataset, unnest(skills) AS skill FROM instances)
GROUP BY dataset
"""

DATASET_IDS = "SELECT dataset FROM datasets"

JUDGE_KINDS = "SELECT judge, kind FROM judges"

KINDS = ("human", "llm")

FLASK_SCALE = (1.0, 5.0)

SCALE_HINT = "pass --scale MIN-MAX (e.g. --scale 1-10) or add scale_min and scale_max columns"

OUT_OF_SCALE = ("error", "na")

Scale = tuple[float, float]


@dataclass(frozen=True)
class StoreFacts:
    """What the parser needs to know about the store the batch will be written to."""

    criteria: dict[tuple[str, str], Scale] = field(default_factory=dict)  # (dataset, skill)
    uses: dict[str, frozenset[str]] = field(default_factory=dict)  # dataset → its skills
    datasets: frozenset[str] = frozenset()
    judges: dict[str, str] = field(default_factory=dict)  # judge → kind

    def own(self, dataset: str) -> list[str]:
        """The names of a dataset's own criteria in the store."""
        return [s for d, s in self.criteria if d == dataset]


def read_store_facts(store: Store) -> StoreFacts:
    if not store.exists():
        return StoreFacts()
    try:
        with store.read() as con:
            own = {(d, s): (lo, hi) for d, s, lo, hi in con.execute(OWN_CRITERIA).fetchall()}
            uses = {d: frozenset(s) for d, s in con.execute(SKILLS_IN_USE).fetchall()}
            datasets = frozenset(d for (d,) in con.execute(DATASET_IDS).fetchall())
            judges = dict(con.execute(JUDGE_KINDS).fetchall())
    except duckdb.CatalogException:  # no schema yet: write_batch creates it
        return StoreFacts()
    return StoreFacts(own, uses, datasets, judges)


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
    df: pd.DataFrame,
    rows: RowChecks,
    arg: Scale | None,
    facts: StoreFacts,
    report: ImportReport,
    out_of_scale: str = "error",
) -> tuple[pd.DataFrame, list[Criterion]]:
    """Canonical skill ids, each (dataset, criterion)'s scale, and every score inside its
    scale. ``out_of_scale="na"`` keeps a score outside its scale as N/A (its value in the
    ``_outside`` column, for the report) instead of rejecting the row."""
    canonical = {u: normalise_skill(u) or u for u in df["skill"].unique()}
    df["skill"] = pd.Series(conv.lookup(df["skill"], canonical), dtype=object)
    df = _declared_scales(df, rows)
    scales, criteria = _criteria(df, rows, arg, facts, report)
    lo = conv.pair_lookup(df["dataset"], df["skill"], {k: s[0] for k, s in scales.items()}, np.nan)
    hi = conv.pair_lookup(df["dataset"], df["skill"], {k: s[1] for k, s in scales.items()}, np.nan)
    lo, hi = lo.astype(float), hi.astype(float)
    v = df["score"].to_numpy(float)
    outside = ~np.isnan(lo) & ~np.isnan(v) & ~((v >= lo) & (v <= hi))
    df["_outside"] = np.where(outside, v, np.nan)
    df["_scale_lo"], df["_scale_hi"] = lo, hi
    if out_of_scale == "na":
        df.loc[outside, "score"] = np.nan
    else:
        flask = df["skill"].isin(SKILLS).to_numpy() & (lo == 1) & (hi == 5)
        hint = " (FLASK's skills are scored 1-5; --scale is for custom criteria)" if arg else ""
        rows.add(
            outside,
            "score",
            lambda p: (
                f"score {v[p]:g} is outside the scale {lo[p]:g}-{hi[p]:g} of "
                f"'{df['skill'].iat[p]}'{hint if flask[p] else ''}; --out-of-scale na keeps "
                "such scores as N/A"
            ),
        )
    df = rows.flush(df)
    left = set(df[["dataset", "skill"]].drop_duplicates().itertuples(index=False, name=None))
    return df, [c for c in criteria if (c.dataset, c.skill) in left]


def _declared_scales(df: pd.DataFrame, rows: RowChecks) -> pd.DataFrame:
    """Each row's scale columns checked (both ends, whole numbers, min below max), and one
    declared scale per dataset and criterion (``_scale``: "lo-hi", None when not declared)."""
    lo, hi = df["scale_min"].to_numpy(float), df["scale_max"].to_numpy(float)
    has_lo, has_hi = ~np.isnan(lo), ~np.isnan(hi)
    rows.add(has_lo & ~has_hi, "scale_max", "missing: give both scale_min and scale_max")
    rows.add(has_hi & ~has_lo, "scale_min", "missing: give both scale_min and scale_max")
    both = has_lo & has_hi
    for a, b in set(zip(lo[both].tolist(), hi[both].tolist(), strict=True)):
        if problem := scale_problem(a, b):
            rows.add(both & (lo == a) & (hi == b), "scale_min", problem)
    df = rows.flush(df)
    declared = df["scale_min"].notna().to_numpy()
    df["_scale"] = pd.Series(None, index=df.index, dtype=object)
    df.loc[declared, "_scale"] = [
        f"{a:g}-{b:g}"
        for a, b in zip(df["scale_min"][declared], df["scale_max"][declared], strict=True)
    ]
    rows.conflicts(
        df,
        ["dataset", "skill"],
        "_scale",
        "scale_min",
        lambda p: f"the scale of criterion '{df['skill'].iat[p]}'",
        str,
    )
    return rows.flush(df)


def _criteria(
    df: pd.DataFrame, rows: RowChecks, arg: Scale | None, facts: StoreFacts, report: ImportReport
) -> tuple[dict[tuple[str, str], Scale], list[Criterion]]:
    """Each (dataset, criterion)'s scale; the new own criteria are returned for the batch.

    First FLASK's shared skills (a FLASK name with no scale of its own in that dataset), then
    the datasets' own criteria."""
    first = df.dropna(subset=["_scale"]).drop_duplicates(["dataset", "skill"])
    cols = ["dataset", "skill", "scale_min", "scale_max"]
    declared = {
        (d, s): (float(lo), float(hi))
        for d, s, lo, hi in first[cols].itertuples(index=False, name=None)
    }
    scales: dict[tuple[str, str], Scale] = {}
    own: list[tuple[str, str]] = []
    for key in df[["dataset", "skill"]].drop_duplicates().itertuples(index=False, name=None):
        flask = key[1] in SKILLS and key not in facts.criteria
        if flask and declared.get(key, FLASK_SCALE) == FLASK_SCALE:
            scales[key] = FLASK_SCALE
        else:
            own.append(key)
    hints = _flask_hints(set(df["dataset"].unique()), scales, own, declared, arg, facts)
    criteria: list[Criterion] = []
    for d, name in own:
        where = ((df["dataset"] == d) & (df["skill"] == name)).to_numpy()
        known = [k for k in (*facts.own(d), *(s for dd, s in declared if dd == d)) if k != name]
        try:
            _check_case(d, name, facts, criteria)
            scale, origin = _own_scale(d, name, declared.get((d, name)), arg, facts, known,
                                       d in hints)  # fmt: skip
        except _Refused as e:
            rows.add(where, e.field, e.problem)
            continue
        scales[(d, name)] = scale
        if (d, name) not in facts.criteria:
            order = 100 + len(facts.own(d)) + sum(c.dataset == d for c in criteria)
            criteria.append(_new_criterion(d, name, scale, order))
            like = suggest_skill(name, known, flask=d in hints)
            check = f"; check the spelling{like}" if like else ""
            flask = " (a name FLASK uses, with this dataset's own scale)" if name in SKILLS else ""
            report.notes.append(
                f"new custom criterion '{name}', scale {scale[0]:g}-{scale[1]:g} (from "
                f"{origin}), in dataset '{d}'{flask}{check}"
            )
    return scales, criteria


def _flask_hints(
    datasets: set[str],
    flask: dict[tuple[str, str], Scale],
    own: list[tuple[str, str]],
    declared: dict[tuple[str, str], Scale],
    arg: Scale | None,
    facts: StoreFacts,
) -> set[str]:
    """The datasets whose unknown names may be hinted towards FLASK's skills: FLASK-shaped ones
    (they score FLASK's skills, in this file or in the store), and those with no sign of
    criteria of their own (FLASK is the default taxonomy). A dataset with criteria of its own
    (in the store, declared in the file or by --scale) and no FLASK skill gets no FLASK hint."""
    shaped = {d for d, _ in flask} | {
        d for d, used in facts.uses.items() if any(s in SKILLS for s in used - set(facts.own(d)))
    }
    mine = {d for d, _ in declared} | {d for d, _ in facts.criteria}
    if arg is not None:
        mine |= {d for d, _ in own}
    return shaped | (datasets - mine)


class _Refused(Exception):
    """A criterion's rows are refused: the field to name and the problem in words."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field, self.problem = field, problem


def _check_case(dataset: str, name: str, facts: StoreFacts, new: list[Criterion]) -> None:
    """A new criterion must differ from the dataset's others in more than case or width:
    "Coherence" next to "coherence" would split one criterion's scores in two."""
    if (dataset, name) in facts.criteria:
        return
    others = [*facts.own(dataset), *(c.skill for c in new if c.dataset == dataset)]
    if same := case_clash(name, others):
        raise _Refused(
            "skill",
            f"criterion '{name}' differs only in case from criterion '{same}' of dataset "
            f"'{dataset}' (criteria are compared ignoring case); use '{same}'",
        )


def _own_scale(
    dataset: str,
    name: str,
    declared: Scale | None,
    arg: Scale | None,
    facts: StoreFacts,
    known: list[str],
    flask_hints: bool,
) -> tuple[Scale, str]:
    """A dataset's own criterion: its scale and where it came from. Raises _Refused when it
    has no scale or contradicts the store. ``known``: the dataset's other criteria, for a
    "did you mean"."""
    stored = facts.criteria.get((dataset, name))
    if declared is not None:
        scale, origin = declared, "the scale columns"
    elif arg is not None:
        scale, origin = (float(arg[0]), float(arg[1])), "--scale"
    elif stored is not None:
        scale, origin = stored, "the store"
    else:
        hint = suggest_skill(name, known, flask=flask_hints)
        raise _Refused(
            "skill",
            f"unknown skill '{name}'{hint}: not one of FLASK's 12 skills nor a criterion of "
            f"dataset '{dataset}', so it is a new criterion, which needs a scale: {SCALE_HINT}",
        )
    lo, hi = float(scale[0]), float(scale[1])
    if name in SKILLS and stored is None and name in facts.uses.get(dataset, ()):
        raise _Refused(
            "scale_min",
            f"dataset '{dataset}' already scores '{name}' as FLASK's skill (1-5); this row "
            f"declares {lo:g}-{hi:g}. Use 1-5, another criterion name or another dataset",
        )
    if stored is not None and tuple(stored) != (lo, hi):
        raise _Refused(
            "skill",
            f"criterion '{name}' of dataset '{dataset}' already exists with scale "
            f"{stored[0]:g}-{stored[1]:g}; this file gives {lo:g}-{hi:g}. Use the existing "
            "scale, another criterion name or another dataset",
        )
    return (lo, hi), origin


def _new_criterion(dataset: str, name: str, scale: Scale, order: int) -> Criterion:
    return Criterion(
        skill=name,
        label=name,
        ability=None,
        order=order,
        definition="A custom criterion imported from a score file.",
        scale_min=scale[0],
        scale_max=scale[1],
        custom=True,
        dataset=dataset,
    )
