"""Tables for people and CSV exports for spreadsheets: one place for how numbers, headers,
labels and missing values look, so every page reads the same.

Number formats (one rule everywhere):

- scores, means and their CIs, differences of means: 2 decimals (``3.41 [3.30, 3.52]``);
- correlations, agreement statistics (κ, α, τ, agreement rates, MAE: a ``value`` column) and
  their CIs, and p-values: 3 decimals;
- percentages: 1 decimal; counts: whole numbers.

A missing value is a blank cell, never "None" or "nan". Skill ids become their labels
("robustness" → "Logical Robustness") and FLASK's source tasks their proper names ("Mbpp" →
"MBPP"). Raw column names become readable headers (``ci_low`` → "95% CI low").

CSV exports (``csv_bytes``) keep full-precision numbers (a spreadsheet rounds for display; a
rounded export would lose information), write lists as ``;``-joined text, and neutralise every
text cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR first) with a
leading ``'``. Numbers are never touched: ``-1.5`` stays a number, the text ``"-1+2"`` becomes
``"'-1+2"``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd

from analysis.core.taxonomy import SKILLS
from analysis.views.source_tasks import task_label

MEAN_DIGITS = 2
STAT_DIGITS = 3
PERCENT_DIGITS = 1

HEADERS: dict[str, str] = {
    # who and what
    "dataset": "Dataset",
    "title": "Title",
    "model": "Model",
    "judge": "Judge",
    "kind": "Kind",
    "skill": "Skill",
    "ability": "Ability",
    "axis": "Axis",
    "label": "Label",
    "group": "Group",
    "domain": "Domain",
    "domains": "Domains",
    "skills": "Skills",
    "difficulty": "Difficulty (1–5)",
    "source_task": "Source task",
    "flask_hard": "FLASK-Hard",
    "instance_id": "Instance",
    "instruction": "Instruction",
    "reference": "Reference answer",
    "response": "Response",
    "rationale": "Rationale",
    "length": "Length (chars)",
    "scale": "Scale",
    "slice": "Slice",
    "statistic": "Statistic",
    "level": "Level",
    "scope": "Scope",
    "figure": "Figure",
    # means and their uncertainty
    "mean": "Mean",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "n": "Scores (n)",
    "n_instances": "Instances",
    "n_na": "N/A scores",
    "n_shared": "Shared instances",
    "n_skipped": "Skipped",
    "n_units": "Units",
    "n_raters": "Raters",
    "n_items": "Items",
    "n_humans": "Humans",
    "lowest": "Lowest",
    "highest": "Highest",
    "value": "Value",
    "mean_a": "Mean A",
    "mean_b": "Mean B",
    "diff": "A − B",
    "p": "p",
    "p_holm": "p (Holm)",
    "significant": "Significant (Holm p < 0.05)",
    "few_instances": "CI from < 5 instances",
    "test": "Test",
    "note": "Note",
    "rel_change": "Relative change",
    "rel_change_%": "Change (%)",
    "score": "Score",
    "a": "A",
    "b": "B",
    "abs_diff": "|A − B|",
    "before": "Before",
    "after": "After",
    "change": "Change",
    "human": "Humans (mean)",
    "aligned": "Aligned items",
    "a_na": "N/A from A",
    "b_na": "N/A from B",
    "a_only": "Scored by A only",
    "b_only": "Scored by B only",
    "link": "Sample",
    "disagreement": "Disagreement",
    # datasets and queues
    "instances": "Instances",
    "models": "Models",
    "responses": "Responses",
    "judges": "Judges",
    "scores": "Scores",
    "simulated": "Simulated",
    "seed": "Seed",
    "source": "Source",
    "imported_at": "Imported",
    "description": "Description",
    "position": "#",
    "added_at": "Added",
}

# A column's suffix → the words added to its header: mean_full → "Mean (full set)".
SUFFIXES = {"_full": "full set", "_hard": "FLASK-Hard"}

# Columns whose numbers are correlations, agreement coefficients or p-values (3 decimals).
HEADERS |= {  # the full-set / FLASK-Hard sides of a cell (Breakdowns' FLASK-Hard table)
    f"{base}{suffix}": f"{HEADERS[base]} ({words})"
    for base in ("mean", "ci_low", "ci_high", "n", "n_instances", "n_na")
    for suffix, words in SUFFIXES.items()
}

STAT_COLUMNS = frozenset({"value", "p", "p_holm", "spearman", "kendall", "pearson", "kappa"})
PERCENT_COLUMNS = frozenset({"rel_change_%"})
# Whole numbers, even when a merge or a NULL made their column float.
COUNT_COLUMNS = frozenset(
    {"n", "n_instances", "n_na", "n_shared", "n_skipped", "n_units", "n_raters", "instances",
     "models", "responses", "judges", "scores", "seed", "difficulty", "position", "length",
     "aligned", "a_na", "b_na", "a_only", "b_only", "n_items", "n_humans", "rank"}
    | {f"{c}{s}" for c in ("n", "n_instances", "n_na") for s in SUFFIXES}
)  # fmt: skip
LIST_SEPARATOR = ";"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return bool(isinstance(value, float | np.floating) and math.isnan(value))
    except TypeError:
        return False


def fmt_num(value: Any, digits: int = MEAN_DIGITS) -> str:
    """A number with a fixed number of decimals; "" for None/NaN; never "-0.00"."""
    if _missing(value):
        return ""
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "−∞"
    text = f"{number:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fmt_ci(mean: Any, lo: Any, hi: Any, digits: int = MEAN_DIGITS) -> str:
    """'3.41 [3.30, 3.52]'; '3.41' without a CI; '' without a mean."""
    if _missing(mean):
        return ""
    if _missing(lo) or _missing(hi):
        return fmt_num(mean, digits)
    return f"{fmt_num(mean, digits)} [{fmt_num(lo, digits)}, {fmt_num(hi, digits)}]"


def header(column: str) -> str:
    """A readable header for a raw column name; unknown names are kept as they are."""
    if column in HEADERS:
        return HEADERS[column]
    for suffix, words in SUFFIXES.items():
        base = column.removesuffix(suffix)
        if base != column and base in HEADERS:
            return f"{HEADERS[base]} ({words})"
    return column


def digits_for(column: str) -> int:
    """Decimals for a raw column name (the rule in the module docstring)."""
    base = column
    for suffix in SUFFIXES:
        base = base.removesuffix(suffix)
    if base in STAT_COLUMNS:
        return STAT_DIGITS
    if base in PERCENT_COLUMNS:
        return PERCENT_DIGITS
    return MEAN_DIGITS


def _digits(column: str, stats: bool) -> int:
    if stats and column in ("ci_low", "ci_high"):
        return STAT_DIGITS
    return digits_for(column)


def skill_label(skill: Any, labels: Mapping[str, str] | None = None) -> Any:
    """A skill id → its label; others unchanged. ``labels``: the dataset's labels (views read
    them from the store, views/criteria.py), which win over FLASK's: a dataset's own
    ``correctness`` is not FLASK's "Logical Correctness"."""
    if labels and skill in labels:
        return labels[skill]
    if not isinstance(skill, str):
        return skill
    return SKILLS[skill].label if skill in SKILLS else skill


def judge_label(judge: str, kind: str | None) -> str:
    """'gpt-4 (llm)'; a name that already ends in brackets gets the kind inside them
    ('gpt-4 (simulated)' → 'gpt-4 (simulated, llm)'), never a second pair."""
    kind = kind or "llm"
    name = judge.rstrip()
    if name.endswith(")") and "(" in name:
        return f"{name[:-1]}, {kind})"
    if "(" in name or ")" in name:
        return f"{name} · {kind}"
    return f"{name} ({kind})"


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple | set | frozenset | np.ndarray)


def _join(value: Any, sep: str) -> Any:
    if _is_list(value):
        return sep.join("" if _missing(v) else str(v) for v in value)
    return value


def _as_text(series: pd.Series, digits: int, counts: bool) -> pd.Series:
    """One column as the text a person reads (numbers with fixed decimals, blanks)."""
    if pd.api.types.is_bool_dtype(series):
        return series.map(lambda v: "" if _missing(v) else ("yes" if v else "no"))
    if pd.api.types.is_datetime64_any_dtype(series):
        return series.dt.strftime("%Y-%m-%d %H:%M").fillna("")
    if pd.api.types.is_numeric_dtype(series):
        if counts and not series.isna().any():
            return series.astype("int64")  # whole numbers stay numbers (sortable, right-aligned)
        return series.map(lambda v: fmt_num(v, 0 if counts else digits))
    return series.map(_text_cell)


def _text_cell(value: Any) -> str:
    if _is_list(value):
        return _join(value, ", ")
    if _missing(value):
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    return str(value)


def for_people(
    frame: pd.DataFrame,
    *,
    labels: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    digits: Mapping[str, int] | None = None,
    counts: Iterable[str] = (),
    text: bool = True,
) -> pd.DataFrame:
    """A table a person reads: skill ids → labels (``labels``, the dataset's, before FLASK's:
    see ``skill_label``) in ``skill``/``axis`` columns, source tasks by their proper
    names, readable headers (``headers`` overrides ``HEADERS``), and, with ``text`` (the
    default), every number written with the decimals of ``digits_for`` (``digits`` overrides
    per raw column; ``counts`` and integer columns as whole numbers) and every missing value
    blank.

    ``text=False`` keeps numbers as numbers at full precision (missing = NaN): the frame to pass
    to ``csv_bytes``, so an export and the table it mirrors hold the same values.
    """
    out = _labelled(frame, labels)
    if text:
        out = _texts(out, digits or {}, set(counts))
    # In a statistics table n counts items, instances or models by the statistic's level.
    stat_names = {"n": "n"} if "value" in frame.columns else {}
    names = {**HEADERS, **stat_names, **(headers or {})}
    return out.rename(columns=lambda c: names.get(c, header(c)) if isinstance(c, str) else c)


def _labelled(frame: pd.DataFrame, labels: Mapping[str, str] | None) -> pd.DataFrame:
    """Skill ids by their labels, source tasks by their proper names."""
    out = frame.copy()
    for col in ("skill", "axis"):
        if col in out.columns:
            out[col] = out[col].map(lambda s: skill_label(s, labels))
    if "source_task" in out.columns:
        out["source_task"] = out["source_task"].map(lambda t: t if _missing(t) else task_label(t))
    return out


def _texts(out: pd.DataFrame, digits: Mapping[str, int], counts: set[str]) -> pd.DataFrame:
    """Every column as the text a person reads (see ``_as_text``)."""
    stats = "value" in out.columns  # a statistics table: its CIs have the value's digits
    for col in out.columns:
        whole = col in counts or col in COUNT_COLUMNS or pd.api.types.is_integer_dtype(out[col])
        places = digits.get(col, _digits(str(col), stats))
        out[col] = _as_text(out[col], places, whole)
    return out


def people_csv(
    frame: pd.DataFrame,
    *,
    labels: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    fmt: str = "csv",
) -> bytes:
    """The CSV twin of ``for_people(frame, labels=…, headers=…)``: the same rows, columns,
    labels and headers, numbers at full precision (``csv_bytes``); ``fmt="parquet"``: the
    same table as Parquet (``parquet_bytes``)."""
    return table_bytes(for_people(frame, labels=labels, headers=headers, text=False), fmt)


def table_bytes(frame: pd.DataFrame, fmt: str = "csv") -> bytes:
    """A table's download: ``csv_bytes`` (for spreadsheets) or ``parquet_bytes`` (typed)."""
    return parquet_bytes(frame) if fmt == "parquet" else csv_bytes(frame)


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """Parquet for pandas, DuckDB, Spark…: the rows and headers of ``csv_bytes``, typed
    (numbers stay numbers, lists stay lists). Nothing is neutralised: no spreadsheet runs a
    Parquet cell. A column mixing numbers and text is written as text."""
    import io

    out = frame.reset_index(drop=True)
    out.columns = _unique([str(c) for c in out.columns])  # Parquet refuses a repeated name
    for col in out.columns:
        if out[col].dtype == object and _mixed(out[col]):
            out[col] = out[col].map(lambda v: None if _missing(v) else str(v))
    buf = io.BytesIO()
    out.to_parquet(buf, index=False)
    return buf.getvalue()


def _unique(names: list[str]) -> list[str]:
    """Column names made unique: a repeat gets " (2)", " (3)", … (two labels may read alike)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        new = name if seen[name] == 1 else f"{name} ({seen[name]})"
        while new in names and new != name:
            seen[name] += 1
            new = f"{name} ({seen[name]})"
        out.append(new)
    return out


def _mixed(series: pd.Series) -> bool:
    kinds = {type(v) for v in series if not _is_list(v) and not _missing(v)}
    return len(kinds) > 1 and not kinds <= {int, float, np.int64, np.float64}


def neutralise(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula gets a leading "'"; others unchanged."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame ``csv_bytes`` writes: lists ``;``-joined, formula-looking text neutralised
    (headers too: a column may be named after a model or judge)."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: neutralise(_join(v, LIST_SEPARATOR)))
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV (with a byte-order mark, so spreadsheets read non-ASCII text right) for a
    download button; missing values are empty cells."""
    return csv_frame(frame).to_csv(index=False).encode("utf-8-sig")
