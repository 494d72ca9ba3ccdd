"""Column converters for score files: each distinct value is converted once.

A score file of a million rows holds a few thousand distinct ids, a handful of models, judges
and skills, and a few distinct scores; so every converter factorises its column (C speed) and
runs the Python check on the distinct values only. Each returns ``Converted``: the clean
values, a mask of bad cells, and ``why(pos)``, the problem of a bad cell in words. Text holding
a byte-order mark is refused everywhere: a BOM in the middle of a file (two files joined) is
invisible, yet "\ufeff1" is not the id "1".

Numbers are read strictly: Python's ``float()`` also takes ``1_0`` (as 10), ``inf`` and
non-ASCII digits, none of which a score file means; a decimal (JSON's, read exactly, or a
Parquet decimal column) is a number like any other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype, is_bool_dtype, is_numeric_dtype

from analysis.core.taxonomy import normalise_difficulty, normalise_domain

NA_TEXT = frozenset({"", "n/a", "na", "null", "none", "nan"})
BOM = "\ufeff"
BOM_PROBLEM = (
    "a byte-order mark (U+FEFF) in the middle of the file, usually where two files were "
    "joined; remove it"
)
# Column kinds that factorise safely (no lists; no True/1 clash, as True == 1 in a hash table).
_HASHABLE = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float", "decimal"})
ID_DIGITS = 100  # an id written as a number with an exponent (1e30) is expanded up to this
# A plain decimal number: ASCII digits, an optional sign, point and exponent; nothing else.
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass
class Converted:
    values: pd.Series  # clean values, None (NaN for numbers) where empty or bad
    bad: np.ndarray  # bool per row
    why: Callable[[int], str]


def show(value: object) -> str:
    """A value for a message: what it is for containers, a short repr otherwise."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return f"an object {_short(repr(value))}"
    if isinstance(value, list | tuple):
        return f"a list {_short(repr(list(value)))}"
    if isinstance(value, bool | np.bool_):
        return f"a boolean ({value})"
    if isinstance(value, Decimal):
        return _short(str(value))
    return _short(repr(value))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _convert(s: pd.Series, convert: Callable[[object], object]) -> Converted:
    """``convert`` (which raises ValueError with the problem) on each distinct value."""
    kind = infer_dtype(s, skipna=True)
    if kind in _HASHABLE or (kind.startswith("mixed") and not _has_bool_or_list(s)):
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        values = list(uniques) + [None]  # code -1: an empty cell
    else:  # lists, booleans: one by one
        codes, values = np.arange(len(s)), s.tolist()
    results = np.empty(len(values), dtype=object)
    problems: dict[int, str] = {}
    for k, value in enumerate(values):
        try:
            if isinstance(value, str) and BOM in value:
                raise ValueError(BOM_PROBLEM)
            results[k] = convert(value)
        except ValueError as e:
            problems[k] = str(e)
    bad = np.isin(codes, list(problems)) if problems else np.zeros(len(s), dtype=bool)
    return Converted(pd.Series(results[codes], dtype=object), bad, lambda p: problems[codes[p]])


def lookup(s: pd.Series, mapping: dict, default: object = None) -> np.ndarray:
    """``mapping.get(cell, default)`` for each cell of a column of hashable values, fast."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    out = np.array([mapping.get(u, default) for u in uniques] + [default], dtype=object)
    return out[codes]


def pair_lookup(a: pd.Series, b: pd.Series, mapping: dict, default: object = None) -> np.ndarray:
    """``mapping.get((a_cell, b_cell), default)`` per row (a criterion is a dataset and a name):
    each column is factorised once, the pairs are looked up on the distinct values only."""
    ca, ua = pd.factorize(a, use_na_sentinel=True)
    cb, ub = pd.factorize(b, use_na_sentinel=True)
    grid = np.full((len(ua) + 1, len(ub) + 1), default, dtype=object)  # last row/column: empty
    for i, x in enumerate(ua):
        for j, y in enumerate(ub):
            grid[i, j] = mapping.get((x, y), default)
    return grid[ca, cb]


def _has_bool_or_list(s: pd.Series) -> bool:
    return any(isinstance(v, bool | list | dict | np.ndarray) for v in s.tolist())


def _key(value: object) -> str | None:
    if _missing(value):
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return str(int(value))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, Decimal) and value.is_finite() and value.adjusted() >= ID_DIGITS:
        # 1e999999999 would be expanded to a billion digits: minutes and gigabytes
        raise ValueError(
            f"expected text or an integer id of at most {ID_DIGITS} digits, got {value}"
        )
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return str(int(value))  # exact: 1e30 is 1 and thirty zeros
    raise ValueError(f"expected text or an integer id, got {show(value)}")


def keys(s: pd.Series) -> Converted:
    """Ids and names (instance_id, model, judge, skill ...): text, stripped, or an integer."""
    return _convert(s, _key)


def _text(value: object) -> str | None:
    if _missing(value):
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {show(value)}")
    return value if value.strip() else None


def texts(s: pd.Series) -> Converted:
    """Free text (instruction, response, rationale ...), kept as written; blank → None."""
    return _convert(s, _text)


def _number(value: object) -> float | None:
    if _missing(value):
        return None
    if isinstance(value, Decimal | int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    ):
        return _finite(float(value), value)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in NA_TEXT:
            return None
        if NUMBER.fullmatch(text):
            return _finite(float(text), value)
    raise ValueError(f"expected a number or N/A, got {show(value)}")


def _finite(number: float, value: object) -> float:
    if not math.isfinite(number):
        raise ValueError(f"expected a number or N/A, got {show(value)}, which is not finite")
    return number


def numbers(s: pd.Series) -> Converted:
    """Scores and scale ends: a number, or N/A (empty, "N/A", "NA", null) → NaN."""
    if is_numeric_dtype(s.dtype) and not is_bool_dtype(s.dtype):
        values = s.astype(float).reset_index(drop=True)
        if not np.isinf(values.to_numpy()).any():  # an infinity is named by the slow path
            return Converted(values, np.zeros(len(s), bool), repr)
    c = _convert(s, _number)
    return Converted(c.values.astype(float), c.bad, c.why)


def _domain_list(value: object) -> tuple[str, ...] | None:
    if _missing(value):
        return None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, str):
        value = value.split(";")
    if not isinstance(value, list | tuple):
        raise ValueError(f"expected domain names separated by ';' or a list, got {show(value)}")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise ValueError(f"expected domain names, got {show(item)}")
        d = normalise_domain(item.strip()) if item.strip() else None
        if d and d not in out:
            out.append(d)
    return tuple(out) or None


def domains(s: pd.Series) -> Converted:
    """FLASK domains, one or several separated by ';' or a list → a tuple of canonical names
    (None when empty or unlabeled)."""
    return _convert(s, _domain_list)


def _difficulty(value: object) -> int | None:
    if isinstance(value, np.integer | np.floating):
        value = value.item()
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, str):
        if value.strip().lower() in NA_TEXT:
            return None
        if NUMBER.fullmatch(value.strip()):
            value = float(value)
    if isinstance(value, list | dict | np.ndarray):
        raise ValueError(f"expected a difficulty level 1-5 or its FLASK name, got {show(value)}")
    return normalise_difficulty(value)


def difficulties(s: pd.Series) -> Converted:
    """Difficulty 1-5 or FLASK's text level; -1 / empty → None."""
    return _convert(s, _difficulty)
