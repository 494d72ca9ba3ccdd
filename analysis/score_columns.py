"""Column converters for score files: vectorised where the column is uniform, per cell otherwise.

Each converter takes one raw column and returns ``Converted``: the clean values, a mask of bad
cells, and ``why(pos)``, the problem of a bad cell in words. CSV columns are all text and take
the vectorised path; JSONL and Parquet columns may hold numbers, lists or nulls.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype, is_bool_dtype, is_numeric_dtype

from analysis.taxonomy import normalise_difficulty, normalise_domain

NA_TEXT = frozenset({"", "n/a", "na", "null", "none", "nan"})
BOM = "\ufeff"


@dataclass
class Converted:
    values: pd.Series  # clean values, None where the cell is empty (or bad)
    bad: np.ndarray  # bool per row
    why: Callable[[int], str]


def show(value: object) -> str:
    """A value for a message: its type for containers, a short repr otherwise."""
    if isinstance(value, list | tuple | dict | np.ndarray):
        kind = {dict: "an object"}.get(type(value), "a list")
        return f"{kind} {_short(repr(value if not isinstance(value, np.ndarray) else list(value)))}"
    if isinstance(value, bool | np.bool_):
        return f"a boolean ({value})"
    return _short(repr(value))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_text(s: pd.Series) -> bool:
    return infer_dtype(s, skipna=True) in ("string", "empty")


def _each(s: pd.Series, convert: Callable[[object], object]) -> Converted:
    """Per-cell conversion; ``convert`` raises ValueError with the problem."""
    out: list[object] = []
    problems: dict[int, str] = {}
    for pos, value in enumerate(s.tolist()):
        try:
            out.append(convert(value))
        except ValueError as e:
            out.append(None)
            problems[pos] = str(e)
    bad = np.zeros(len(out), dtype=bool)
    bad[list(problems)] = True
    return Converted(pd.Series(out, dtype=object), bad, problems.__getitem__)


def _no_problem(pos: int) -> str:  # pragma: no cover - only called for bad cells
    raise KeyError(pos)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _key(value: object) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"expected text or an integer id, got {show(value)}")
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    raise ValueError(f"expected text or an integer id, got {show(value)}")


def keys(s: pd.Series) -> Converted:
    """Ids and names (instance_id, model, judge, skill, ...): text, stripped, or an integer."""
    if _is_text(s):
        v = s.str.strip()
        v = v.astype(object).where(v.notna() & (v != ""), None)
        return Converted(v, np.zeros(len(s), dtype=bool), _no_problem)
    return _each(s, _key)


def _text(value: object) -> str | None:
    if _missing(value):
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {show(value)}")
    return value if value.strip() else None


def texts(s: pd.Series) -> Converted:
    """Free text (instruction, response, rationale ...), kept as written; blank → None."""
    if _is_text(s):
        v = s.astype(object)
        v = v.where(v.notna() & (s.str.strip() != ""), None)
        return Converted(v, np.zeros(len(s), dtype=bool), _no_problem)
    return _each(s, _text)


def _number(value: object) -> float | None:
    if _missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"expected a number or N/A, got {show(value)}")
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    if isinstance(value, str):
        if value.strip().lower() in NA_TEXT:
            return None
        try:
            return float(value)
        except ValueError:
            pass
    raise ValueError(f"expected a number or N/A, got {show(value)}")


def numbers(s: pd.Series) -> Converted:
    """Scores and scale ends: a number, or N/A (empty, "N/A", "NA", null) → NaN."""
    if is_numeric_dtype(s.dtype) and not is_bool_dtype(s.dtype):
        return Converted(s.astype(float), np.zeros(len(s), dtype=bool), _no_problem)
    kind = infer_dtype(s, skipna=True)
    if kind in ("integer", "floating", "mixed-integer-float", "empty"):
        v = pd.to_numeric(s, errors="coerce").astype(float)
        return Converted(v, np.zeros(len(s), dtype=bool), _no_problem)
    if kind == "string":
        st = s.str.strip()
        na = s.isna() | st.str.lower().isin(NA_TEXT)
        v = pd.to_numeric(st.where(~na, None), errors="coerce").astype(float)
        bad = (~na & v.isna()).to_numpy()
        raw = s.tolist()
        return Converted(v, bad, lambda p: f"expected a number or N/A, got {show(raw[p])}")
    c = _each(s, _number)
    return Converted(c.values.astype(float), c.bad, c.why)


def _by_unique(s: pd.Series, convert: Callable[[object], object]) -> Converted:
    """Convert each distinct value once (domains, difficulty: few distinct values)."""
    hashable = s if _is_text(s) else s.map(_hashable)
    codes, uniques = pd.factorize(hashable, use_na_sentinel=True)
    results: list[object] = []
    problems: dict[int, str] = {}
    for k, u in enumerate(uniques):
        try:
            results.append(convert(u))
        except ValueError as e:
            results.append(None)
            problems[k] = str(e)
    lookup = np.empty(len(results) + 1, dtype=object)
    lookup[:-1] = results
    lookup[-1] = convert(None)  # code -1: an empty cell
    values = pd.Series(lookup[codes], dtype=object)
    bad = np.isin(codes, list(problems)) if problems else np.zeros(len(s), dtype=bool)
    return Converted(values, bad, lambda p: problems[codes[p]])


def _hashable(value: object) -> object:
    if isinstance(value, list | np.ndarray):
        return tuple(value)
    if isinstance(value, dict):
        return ("\0dict", repr(value))  # never a valid value; kept distinct for the message
    return value


def _domain_list(value: object) -> list[str]:
    if _missing(value):
        return []
    if isinstance(value, str):
        items: tuple = tuple(value.split(";"))
    elif isinstance(value, tuple) and value[:1] != ("\0dict",):
        items = value
    else:
        shown = value[1] if isinstance(value, tuple) else show(value)
        raise ValueError(f"expected domain names separated by ';' or a list, got {shown}")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"expected domain names, got {show(item)}")
        if not item.strip():
            continue
        d = normalise_domain(item.strip())
        if d and d not in out:
            out.append(d)
    return out


def domains(s: pd.Series) -> Converted:
    """FLASK domains, one or several separated by ';' or a list → list of canonical names."""
    return _by_unique(s, _domain_list)


def _difficulty(value: object) -> int | None:
    if isinstance(value, np.integer | np.floating):
        value = value.item()
    if isinstance(value, str):
        if value.strip().lower() in NA_TEXT:
            return None
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, tuple):
        raise ValueError(f"expected a difficulty level 1-5 or its FLASK name, got a list {value}")
    return normalise_difficulty(value)


def difficulties(s: pd.Series) -> Converted:
    """Difficulty 1-5 or FLASK's text level; -1 / empty → None."""
    return _by_unique(s, _difficulty)


def bom_cells(s: pd.Series) -> np.ndarray:
    """Cells holding a byte-order mark: a BOM in the middle of the file (joined files)."""
    if _is_text(s):
        return s.str.contains(BOM, regex=False).fillna(False).to_numpy(dtype=bool)
    return np.fromiter((isinstance(v, str) and BOM in v for v in s.tolist()), bool, len(s))
