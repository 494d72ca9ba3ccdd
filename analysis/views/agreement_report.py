"""The agreement results as plain data (for ``--json``) and as text tables (for the terminal).

JSON shape (``to_dict``). Per-criterion results and the all-criteria aggregate never share a
key, so a criterion may be named anything (``overall`` included):

- ``statistics``: {criterion: {statistic id: fields}}, one entry per criterion only;
- ``all_criteria``: {statistic id: fields} pooled over every criterion's aligned items (null
  with a single criterion);
- ``slices``: {slice value: {"statistics": {criterion: …}, "all_criteria": … | null}};
- ``rank_stability``: {"statistics": {criterion: {"kendall": fields}}, "all_criteria": …};
- ``human_ceiling``: the fair, leave-one-out ceiling (views/ceiling.py): ``method`` and
  ``figures`` in plain words, ``judge`` (A), ``humans`` (the panel), then
  {"statistics": {criterion: {figure: {statistic id: fields}}}, "all_criteria": {figure: …}}
  with the figures ``human_ceiling`` (one human vs the mean of the other humans),
  ``judge_same_reference`` (A vs that same mean, same items), ``judge_minus_human`` (their
  paired difference) and ``human_pairwise_alpha`` (α among the individual humans);
- ``items``: {criterion: counts of aligned, N/A and one-sided items}.

Fields: value, ci_low, ci_high (95%), n, n_instances, and where they apply level, n_skipped,
n_units, n_raters, n_items, n_humans. NaN (undefined, e.g. a constant scorer) becomes null.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analysis.stats.agreement import LABELS
from analysis.stats.ranks import MIN_INSTANCES
from analysis.views.agreement import ALL_LABEL, SCOPE_ALL, SCOPE_CRITERION, Agreement, worst
from analysis.views.ceiling import AGGREGATION, FIGURES
from analysis.views.tables import MEAN_DIGITS, STAT_DIGITS, fmt_ci, for_people, people_csv

_FIELDS = ("value", "ci_low", "ci_high", "n", "n_instances", "n_skipped", "n_units", "n_raters")
_FIELDS += ("n_items", "n_humans", "few_instances")
FEW_MARK = "†"  # after a figure whose CI rests on fewer than MIN_INSTANCES instances
FEW_COLUMN = f"CI from < {MIN_INSTANCES} instances"


def _num(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def _scoped(
    frame: pd.DataFrame, keys: tuple[str, ...] = ("statistic",), extra: tuple[str, ...] = ()
) -> tuple[dict[str, dict], dict | None]:
    """({criterion: {key: … {field: value}}}, the all-criteria {key: …} or None) from a long
    frame with a ``scope`` column; ``keys`` nest the entries (statistic, or figure then
    statistic)."""
    per: dict[str, dict] = {}
    pooled: dict | None = None
    for rec in frame.to_dict("records"):
        if rec["scope"] == SCOPE_ALL:
            pooled = node = {} if pooled is None else pooled
        else:
            node = per.setdefault(rec["skill"], {})
        for k in keys[:-1]:
            node = node.setdefault(rec[k], {})
        node[rec[keys[-1]]] = {f: _num(rec[f]) for f in (*_FIELDS, *extra) if f in rec}
    return per, pooled


def _section(frame: pd.DataFrame, keys: tuple[str, ...] = ("statistic",)) -> dict[str, Any]:
    per, pooled = _scoped(frame, keys)
    return {"statistics": per, "all_criteria": pooled}


def _ceiling(r: Agreement) -> dict[str, Any]:
    return {
        "method": AGGREGATION,
        "figures": FIGURES,
        "judge": r.a.spec,
        "humans": list(r.humans),
        **_section(r.ceiling, ("figure", "statistic")),
    }


def to_dict(r: Agreement) -> dict[str, Any]:
    q = r.query
    slices: dict[str, dict] = {}
    if not r.slices.empty:
        for value, part in r.slices.groupby("slice", sort=False):
            slices[str(value)] = _section(part)
    stats, pooled = _scoped(r.stats, extra=("level",))
    return {
        "dataset": q.filters.dataset,
        "a": {"spec": r.a.spec, "judges": list(r.a.judges)},
        "b": {"spec": r.b.spec, "judges": list(r.b.judges)},
        "level": q.level,
        "skill": q.skill,
        "by": q.by,
        "n_boot": q.n_boot,
        "seed": q.seed,
        "ci": 0.95,
        "statistics": stats,
        "all_criteria": pooled,
        "slices": slices,
        "human_ceiling": _ceiling(r),
        "rank_stability": _section(r.ranks),
        "items": {
            rec.pop("skill"): {k: int(v) for k, v in rec.items()}
            for rec in r.counts.to_dict("records")
        },
        "notes": list(r.notes),
    }


def raters_to_dict(frame: pd.DataFrame, dataset: str) -> dict[str, Any]:
    # The names as rater_agreement resolved them (a name may hold ", "), else the column's.
    raters = frame.attrs.get("raters") or (
        frame["raters"].iloc[0].split(", ") if not frame.empty else []
    )
    alpha, pooled = _scoped(frame)
    return {
        "dataset": dataset,
        "raters": raters,
        "ci": 0.95,
        "alpha": alpha,
        "all_criteria": pooled,
    }


# The ceiling table's columns: the two comparable figures and their paired difference.
CEILING_COLUMNS = {
    "human_ceiling": "Human vs the other humans (ceiling)",
    "judge_same_reference": "Judge (A) vs the same humans, same items",
    "judge_minus_human": "Judge − human (paired 95% CI)",
}


def ceiling_table(r: Agreement, statistic: str) -> pd.DataFrame:
    """One row per criterion (then all criteria pooled): the chosen statistic for the human
    ceiling and for A against the same reference, their paired difference, Krippendorff's α
    among the individual humans, and the counts behind the leave-one-out figures (FEW_MARK
    after a figure resting on fewer than MIN_INSTANCES instances)."""
    c = r.ceiling
    if c.empty:
        return pd.DataFrame()
    alpha_stat = statistic if statistic.startswith("alpha_") else "alpha_ordinal"
    alpha = c[(c["figure"] == "human_pairwise_alpha") & (c["statistic"] == alpha_stat)]
    part = pd.concat([c[c["figure"].isin(CEILING_COLUMNS) & (c["statistic"] == statistic)], alpha])
    row, labels = _rows(part, "skill")
    part = part.assign(_row=row)
    digits = MEAN_DIGITS if statistic == "mae" else STAT_DIGITS
    out = pd.DataFrame({"Skill": labels.map(r.label)})  # the dataset's labels
    alpha_name = f"Human–human α ({alpha_stat.removeprefix('alpha_')}, individual humans)"
    for fig, name in {**CEILING_COLUMNS, "human_pairwise_alpha": alpha_name}.items():
        rows = part[part["figure"] == fig].set_index("_row")
        places = STAT_DIGITS if fig == "human_pairwise_alpha" else digits
        few = rows.get("few_instances", pd.Series(False, index=rows.index)).fillna(False)
        text = [
            fmt_ci(*v, places) + (f" {FEW_MARK}" if f else "")
            for v, f in zip(rows[["value", "ci_low", "ci_high"]].to_numpy(), few, strict=True)
        ]
        out[name] = pd.Series(text, index=rows.index, dtype=object).reindex(out.index)
    loo = part[part["figure"] == "human_ceiling"].set_index("_row")
    counts = {"n": "Pairs (item × held-out human)", "n_items": "Items", "n_instances": "Instances"}
    for col, name in {**counts, "n_humans": "Humans held out"}.items():
        out[name] = loo[col].reindex(out.index).astype("Int64")
    return out.reset_index(drop=True).fillna("")


def ceiling_text(r: Agreement) -> str:
    """The ceiling for the terminal: each figure as a table of every statistic."""
    if r.ceiling.empty:
        return ""
    lines = [f"Human ceiling (judge: {r.a.spec}; humans: {', '.join(r.humans)}). {AGGREGATION}"]
    for fig, words in FIGURES.items():
        part = r.ceiling[r.ceiling["figure"] == fig]
        if not part.empty:
            lines += ["", f"{words}:", text_table(part)]
    return "\n".join(lines)


def slices_text(r: Agreement) -> str:
    """The slice table for the terminal: a row per slice × criterion, then slice × all."""
    s = r.slices
    if s.empty:
        return text_table(s)
    name = s["skill"].where(s["scope"] == SCOPE_CRITERION, ALL_LABEL)
    key = "slice · criterion"
    return text_table(s.assign(**{key: s["slice"].astype(str) + " · " + name}), key)


def _ceiling_rows(r: Agreement) -> pd.DataFrame:
    c = _labelled(r.ceiling)
    if c.empty:
        return c
    return c.assign(
        figure=c["figure"].map(FIGURES), statistic=c["statistic"].map(lambda s: LABELS.get(s, s))
    )


def ceiling_long(r: Agreement) -> pd.DataFrame:
    """Every figure of the ceiling in long format, for reading (figures in plain words)."""
    return for_people(_ceiling_rows(r), labels=r.labels or {}, headers=_CEILING_HEADERS)


def ceiling_csv(r: Agreement, fmt: str = "csv") -> bytes:
    """``ceiling_long`` as CSV (or Parquet), numbers at full precision."""
    return people_csv(_ceiling_rows(r), labels=r.labels or {}, headers=_CEILING_HEADERS, fmt=fmt)


_CEILING_HEADERS = {
    "scope": "Scope",
    "figure": "Figure",
    "n": "Pairs (n)",
    "n_items": "Items",
    "n_humans": "Humans",
}


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """The all-criteria rows named in ``skill`` for people (``scope`` keeps them apart)."""
    if frame.empty:
        return frame
    return frame.assign(skill=frame["skill"].where(frame["scope"] == SCOPE_CRITERION, ALL_LABEL))


def _fmt(v: Any, lo: Any, hi: Any) -> str:
    if _num(v) is None:
        return "undefined"
    ci = "" if _num(lo) is None else f" [{lo:.3f}, {hi:.3f}]"
    return f"{v:.3f}{ci}"


def _rows(frame: pd.DataFrame, index: str) -> tuple[pd.Series, pd.Series]:
    """A row number per record (criteria and the all-criteria row apart, even where a
    criterion's name equals the label) and each row's label."""
    if index != "skill":
        label = frame[index].astype(str)
    else:
        label = frame["skill"].where(frame["scope"] == SCOPE_CRITERION, ALL_LABEL)
    keys = [frame["scope"], label] if "scope" in frame else [label]
    row = frame.groupby(keys, sort=False, dropna=False).ngroup()
    return row, label.groupby(row).first()


def wide_table(frame: pd.DataFrame, index: str = "skill") -> pd.DataFrame:
    """Rows by ``index`` (criteria, then all criteria pooled), one column per statistic with
    'value [lo, hi]' (marked FEW_MARK when it rests on fewer than MIN_INSTANCES instances), then
    n, then, where any row is so marked, a column saying which."""
    if frame.empty:
        return pd.DataFrame()
    row, labels = _rows(frame, index)
    frame = frame.assign(_row=row)
    level = frame["level"] if "level" in frame else pd.Series("pooled", index=frame.index)
    units = level.map({"instance": "instances", "system": "models"})
    few = frame.get("few_instances", pd.Series(False, index=frame.index)).fillna(False)
    cells = frame.assign(
        cell=[
            _fmt(v, lo, hi)
            + (f" {FEW_MARK}" if f else "")
            + ("" if pd.isna(u) else f" (n={n} {u})")
            for v, lo, hi, f, n, u in zip(
                frame["value"],
                frame["ci_low"],
                frame["ci_high"],
                few,
                frame["n"],
                units,
                strict=True,
            )
        ],
        statistic=frame["statistic"].map(lambda s: LABELS.get(s, s)),
    )
    wide = cells.pivot_table(
        index="_row", columns="statistic", values="cell", aggfunc="first", sort=False
    )
    # n: the items behind the pooled statistics; level statistics carry their own n.
    pooled = cells[level == "pooled"] if (level == "pooled").any() else cells
    n = pooled.groupby("_row", sort=False)["n"].max().rename("n")
    wide = wide.join(n)
    if few.any():
        wide[FEW_COLUMN] = few.groupby(frame["_row"]).any().map({True: "yes", False: ""})
    wide.insert(0, index, labels.reindex(wide.index))
    return wide.reset_index(drop=True).rename_axis(columns=None)


def text_table(frame: pd.DataFrame, index: str = "skill") -> str:
    """``wide_table`` for the terminal (with a line on FEW_MARK where it appears)."""
    wide = wide_table(frame, index)
    if wide.empty:
        return "(no aligned scores in this slice)"
    note = f"\n{FEW_MARK} {FEW_COLUMN}" if FEW_COLUMN in wide else ""
    return wide.to_string(index=False) + note


def _exact_rows(r: Agreement) -> pd.DataFrame:
    if r.stats.empty:
        return r.stats
    rows = _labelled(r.stats)
    return rows.assign(statistic=rows["statistic"].map(lambda s: LABELS.get(s, s)))


def exact_table(r: Agreement) -> pd.DataFrame:
    """The statistics in long format, for reading (views/tables.py's formats: coefficients
    with 3 decimals, blanks where a statistic is undefined or has no CI)."""
    return for_people(_exact_rows(r), labels=r.labels or {}, headers={"scope": "Scope"})


def stats_csv(r: Agreement, fmt: str = "csv") -> bytes:
    """``exact_table`` as CSV (or Parquet), numbers at full precision."""
    return people_csv(_exact_rows(r), labels=r.labels or {}, fmt=fmt)


def _pair_headers(r: Agreement) -> dict[str, str]:
    return {"a": f"A: {r.a.spec}", "b": f"B: {r.b.spec}"}


def disagreements_csv(r: Agreement, fmt: str = "csv") -> bytes:
    """Every aligned item, worst disagreement first; domains ``;``-joined (a list in Parquet)."""
    return people_csv(r.pairs, labels=r.labels or {}, headers=_pair_headers(r), fmt=fmt)


# ---------------------------------------------------------------- the page's other tables
WORST_COLUMNS = ["link", "abs_diff", "a", "b", "skill", "model", "instance_id", "difficulty"]


def people_wide(r: Agreement, frame: pd.DataFrame, index: str = "skill") -> pd.DataFrame:
    """``wide_table`` for the page: criteria by the dataset's labels, readable headers."""
    wide = wide_table(frame, index)
    if wide.empty:
        return wide
    if index == "skill":
        wide[index] = wide[index].map(lambda s: s if s == ALL_LABEL else r.label(s))
    return wide.rename(columns={"skill": "Skill", "slice": "Slice"})


def worst_table(r: Agreement, skill: str | None) -> pd.DataFrame:
    """The worst disagreements for reading (the columns of ``WORST_COLUMNS``, headed as in
    the disagreement CSV): "Sample" holds each item's link to the Samples page."""
    return for_people(worst(r, skill)[WORST_COLUMNS], labels=r.labels or {},
                      headers=_pair_headers(r))  # fmt: skip


def counts_table(r: Agreement) -> pd.DataFrame:
    """Items per criterion: aligned, N/A on one side, scored by one side only."""
    return for_people(r.counts, labels=r.labels or {})
