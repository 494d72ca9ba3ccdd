"""The agreement results as plain data (for ``--json``) and as text tables (for the terminal).

JSON shape: statistic ids as keys per skill, each {value, ci_low, ci_high, n, n_instances,
level}; NaN (undefined, e.g. a constant scorer) becomes null.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analysis.stats.agreement import LABELS
from analysis.views.agreement import Agreement

_FIELDS = ("value", "ci_low", "ci_high", "n", "n_instances", "n_skipped", "n_units", "n_raters")


def _num(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def _entries(frame: pd.DataFrame, extra: tuple[str, ...] = ()) -> dict[str, dict]:
    """{skill: {statistic: {field: value}}} from a long frame."""
    out: dict[str, dict] = {}
    for rec in frame.to_dict("records"):
        fields = {f: _num(rec[f]) for f in (*_FIELDS, *extra) if f in rec}
        out.setdefault(rec["skill"], {})[rec["statistic"]] = fields
    return out


def to_dict(r: Agreement) -> dict[str, Any]:
    q = r.query
    slices: dict[str, dict] = {}
    if not r.slices.empty:
        for value, part in r.slices.groupby("slice", sort=False):
            slices[str(value)] = _entries(part)
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
        "statistics": _entries(r.stats, ("level",)),
        "slices": slices,
        "human_ceiling": _entries(r.ceiling),
        "rank_stability": _entries(r.ranks),
        "items": {
            rec.pop("skill"): {k: int(v) for k, v in rec.items()}
            for rec in r.counts.to_dict("records")
        },
        "notes": list(r.notes),
    }


def raters_to_dict(frame: pd.DataFrame, dataset: str) -> dict[str, Any]:
    raters = frame["raters"].iloc[0].split(", ") if not frame.empty else []
    return {"dataset": dataset, "raters": raters, "ci": 0.95, "alpha": _entries(frame)}


def _fmt(v: Any, lo: Any, hi: Any) -> str:
    if _num(v) is None:
        return "undefined"
    ci = "" if _num(lo) is None else f" [{lo:.3f}, {hi:.3f}]"
    return f"{v:.3f}{ci}"


def wide_table(frame: pd.DataFrame, index: str = "skill") -> pd.DataFrame:
    """Rows by ``index``, one column per statistic with 'value [lo, hi]', then n."""
    if frame.empty:
        return pd.DataFrame()
    level = frame["level"] if "level" in frame else pd.Series("pooled", index=frame.index)
    units = level.map({"instance": "instances", "system": "models"})
    cells = frame.assign(
        cell=[
            _fmt(v, lo, hi) + ("" if pd.isna(u) else f" (n={n} {u})")
            for v, lo, hi, n, u in zip(
                frame["value"], frame["ci_low"], frame["ci_high"], frame["n"], units, strict=True
            )
        ],
        statistic=frame["statistic"].map(lambda s: LABELS.get(s, s)),
    )
    wide = cells.pivot_table(
        index=index, columns="statistic", values="cell", aggfunc="first", sort=False
    )
    # n: the items behind the pooled statistics; level statistics carry their own n.
    pooled = cells[level == "pooled"] if (level == "pooled").any() else cells
    n = pooled.groupby(index, sort=False)["n"].max().rename("n")
    return wide.join(n).reset_index()


def text_table(frame: pd.DataFrame, index: str = "skill") -> str:
    """``wide_table`` for the terminal."""
    wide = wide_table(frame, index)
    return "(no aligned scores in this slice)" if wide.empty else wide.to_string(index=False)


def stats_csv(r: Agreement) -> str:
    return r.stats.to_csv(index=False)


def disagreements_csv(r: Agreement) -> str:
    """Every aligned item, worst disagreement first."""
    return r.pairs.to_csv(index=False)
