"""The judge leaderboard as one table: for the terminal, for ``--json``, for the page's sortable
table and its CSV. One row per judge × criterion × statistic (criteria, then all criteria
pooled), then the human ceiling's rows (``row`` = "human_ceiling", no judge).

JSON shape (``to_dict``): dataset, a ("kind:llm:each"), b ("kind:human"), judges, humans,
level, skill, n_boot, seed, ci, ``ceiling_judge`` (whose items the ceiling is on), ``rows``
(each: row, judge, scope, skill, statistic, level, value, ci_low, ci_high, n, n_instances,
n_skipped, few_instances, gap_to_ceiling; ceiling rows add n_items and n_humans), ``coverage``
({judge: {aligned, instances}}) and notes. ``skill`` is null on the all-criteria rows (scope
"all_criteria"), so a criterion may be named anything. NaN (undefined) becomes null.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.names import name_key
from analysis.stats.agreement import CORRELATIONS, LABELS
from analysis.views.agreement import ALL_LABEL, SCOPE_CRITERION
from analysis.views.judge_board import CEILING, EACH, Board
from analysis.views.tables import STAT_DIGITS, fmt_ci, for_people, people_csv, skill_label

JUDGE_ROW, CEILING_ROW = "judge", "human_ceiling"
_KEYS = ["scope", "skill", "statistic"]
_FIELDS = ["value", "ci_low", "ci_high", "n", "n_instances", "n_skipped", "few_instances"]


def is_each(spec: str | None) -> bool:
    """Whether a scorer spec is ``kind:llm:each`` (any case, width or surrounding spaces)."""
    return spec is not None and name_key(spec) == EACH


def check_each(a: str | None, b: str | None, by: str | None, raters: tuple[str, ...]) -> bool:
    """Whether the command asks for the leaderboard (``--a kind:llm:each --b kind:human``);
    every other use of ``kind:llm:each`` is an InputError saying what to write instead."""
    each_raters = any(is_each(p) for r in raters for p in [r, *r.split(",")])
    if not (is_each(a) or is_each(b) or each_raters):
        return False
    use = "use it as --a with --b kind:human: finegrain agreement --dataset D --a kind:llm:each "
    use += "--b kind:human [--level L] [--skill S] [--json]"
    if each_raters or raters:
        problem = "kind:llm:each compares every LLM judge with the humans, not among raters"
    elif is_each(b):
        problem = "kind:llm:each stands for every LLM judge in turn and cannot be the reference B"
    elif by is not None:
        problem = "--by is not available with kind:llm:each (one slice table per judge)"
    elif b is None:
        problem = "kind:llm:each needs --b kind:human"
    elif name_key(b) != "kind:human":
        problem = f"kind:llm:each is compared with the humans only, not with '{b}'"
    else:
        return True
    raise InputError("--a/--b", None, None, f"{problem}; {use}.")


def _ceiling_gap(board: Board) -> pd.Series:
    """Each judge row's value minus the ceiling's (same criterion, same statistic); blank for a
    correlation at the instance or system level (the ceiling is over items), and for a judge
    whose aligned items are not the ceiling judge's (the ceiling is on that judge's items)."""
    s, c = board.stats, board.ceiling
    if s.empty or c.empty:
        return pd.Series(np.nan, index=s.index, dtype=float)
    ref = c.set_index(["scope", c["skill"].fillna(""), "statistic"])["value"]
    ref = ref[~ref.index.duplicated()]
    keys = pd.MultiIndex.from_arrays([s["scope"], s["skill"].fillna(""), s["statistic"]])
    gap = s["value"].to_numpy(float) - ref.reindex(keys).to_numpy(float)
    items = (s["level"] == "pooled") | ~s["statistic"].isin(CORRELATIONS)
    same = s["judge"].isin(board.coverage.loc[board.coverage["ceiling_items"], "judge"])
    return pd.Series(np.where(items & same, gap, np.nan), index=s.index)


def long_frame(board: Board) -> pd.DataFrame:
    """Every row of the leaderboard (judges', then the ceiling's), raw numbers."""
    parts = []
    if not board.stats.empty:
        parts.append(board.stats.assign(row=JUDGE_ROW, gap_to_ceiling=_ceiling_gap(board)))
    if not board.ceiling.empty:
        parts.append(board.ceiling.assign(row=CEILING_ROW, judge=None, level="pooled"))
    if not parts:
        return pd.DataFrame(columns=["row", "judge", *_KEYS, "level", *_FIELDS])
    out = pd.concat(parts, ignore_index=True)
    first = ["row", "judge", *_KEYS, "level", *_FIELDS, "gap_to_ceiling"]
    return out[[c for c in first if c in out] + [c for c in out if c not in first]]


def _num(v: Any) -> Any:
    if v is None or v is pd.NA:
        return None
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    return None if isinstance(v, float) and math.isnan(v) else v


def to_dict(board: Board) -> dict[str, Any]:
    q = board.query
    rows = [{k: _num(v) for k, v in rec.items()} for rec in long_frame(board).to_dict("records")]
    return {
        "dataset": q.filters.dataset,
        "a": EACH,
        "b": "kind:human",
        "judges": list(board.judges),
        "humans": list(board.humans),
        "level": q.level,
        "skill": q.skill,
        "n_boot": q.n_boot,
        "seed": q.seed,
        "ci": 0.95,
        "ceiling_judge": board.ceiling_judge,
        "rows": rows,
        "coverage": {
            j: {"aligned": int(n), "instances": int(k), "ceiling_items": bool(same)}
            for j, n, k, same in board.coverage.itertuples(index=False)
        },
        "notes": notes(board),
    }


def notes(board: Board) -> list[str]:
    """What a reader of the table needs to know beside it (plain text)."""
    out = []
    if board.empty is not None:
        out.append(f"{board.empty.title} {board.empty.message}")
    none = board.coverage.loc[board.coverage["aligned"] == 0, "judge"].tolist()
    if none and board.empty is None:
        out.append(f"No item aligned with the humans for: {', '.join(none)}.")
    if board.ceiling_judge is not None and board.ceiling.empty:
        out.append("Fewer than 2 human raters on the judges' items: no human ceiling.")
    elif board.ceiling_judge is not None:
        out.append(
            f"{CEILING}: each human against the mean of the other humans, on the items of "
            f"{board.ceiling_judge} (the judge with the most aligned items), over items at any "
            "level. Judges face the mean of all humans, which is steadier than the mean of the "
            "others: the gap flatters the judges a little (the paired comparison is on the "
            "Human vs judge page, Human ceiling)."
        )
        other = board.coverage.loc[
            (board.coverage["aligned"] > 0) & ~board.coverage["ceiling_items"], "judge"
        ].tolist()
        if other and not board.ceiling.empty:
            out.append(
                f"No gap to the ceiling for {', '.join(other)}: their aligned items are not "
                f"{board.ceiling_judge}'s, on which the ceiling is computed."
            )
    return out


def _name(rec: dict, labels: dict[str, str]) -> str:
    return ALL_LABEL if rec["scope"] != SCOPE_CRITERION else str(skill_label(rec["skill"], labels))


def text_table(board: Board) -> str:
    """The whole table for the terminal: judge, skill, statistic, value [95% CI], n."""
    frame = long_frame(board)
    if frame.empty:
        return "(no judge has items aligned with the humans in this slice)"
    recs = frame.to_dict("records")
    out = pd.DataFrame(
        {
            "judge": [r["judge"] if r["row"] == JUDGE_ROW else CEILING for r in recs],
            "skill": [_name(r, board.labels) for r in recs],
            "statistic": [LABELS.get(r["statistic"], r["statistic"]) for r in recs],
            "level": frame["level"],
            "value [95% CI]": [
                fmt_ci(r["value"], r["ci_low"], r["ci_high"], STAT_DIGITS) or "undefined"
                for r in recs
            ],
            "n": frame["n"].astype("Int64"),
            "n of": _units(frame),
            "instances": frame["n_instances"].astype("Int64"),
        }
    )
    # Names left-aligned (pandas right-aligns text).
    width = {c: max(len(c), out[c].astype(str).str.len().max()) for c in _NAMES}
    fmt = {c: (lambda v, w=w: f"{v:<{w}}") for c, w in width.items()}
    heads = [c.ljust(width[c]) if c in width else c for c in out.columns]
    return out.to_string(index=False, formatters=fmt, header=heads)


_NAMES = ("judge", "skill", "statistic")
_UNITS = {"pooled": "items", "instance": "instances", "system": "models"}


def _units(frame: pd.DataFrame) -> list[str]:
    """What each row's n counts: aligned items, or the instances (instance × criterion units)
    or models a correlation at that level is over; the ceiling's item × held-out human pairs."""
    return [
        "pairs" if r == CEILING_ROW else _UNITS.get(lv, "items")
        for r, lv in zip(frame["row"], frame["level"], strict=True)
    ]


def for_stat(board: Board, stat: str) -> pd.DataFrame:
    """The rows of one statistic (judges', then the ceiling's), raw numbers: what the chart
    and the page's table show."""
    frame = long_frame(board)
    return frame[frame["statistic"] == stat].reset_index(drop=True)


LOWER_IS_BETTER = frozenset({"mae"})


def ranked(board: Board, stat: str) -> list[str]:
    """The judges with rows, best first by ``stat`` over all criteria pooled (the one
    criterion's value where there is a single one; MAE: lowest first); undefined last, ties in
    the board's order."""
    part = for_stat(board, stat)
    part = part[part["row"] == JUDGE_ROW]
    pooled = part[part["scope"] != SCOPE_CRITERION]
    part = pooled if not pooled.empty else part
    value = part.groupby("judge", sort=False)["value"].first()
    sign = 1.0 if stat in LOWER_IS_BETTER else -1.0
    order = {j: i for i, j in enumerate(board.judges)}
    keys = {j: (np.isnan(v), sign * v if not np.isnan(v) else 0.0, order[j]) for j, v in
            value.items()}  # fmt: skip
    return sorted(keys, key=keys.get)


def _table(board: Board, stat: str) -> pd.DataFrame:
    part = for_stat(board, stat)
    rank = {j: i for i, j in enumerate(ranked(board, stat))}
    part = part.iloc[
        np.lexsort([np.arange(len(part)), part["judge"].map(rank).fillna(len(rank)).to_numpy()])
    ]
    return pd.DataFrame(
        {
            "judge": [
                j if r == JUDGE_ROW else CEILING
                for j, r in zip(part["judge"], part["row"], strict=True)
            ],
            "skill": [
                ALL_LABEL if s != SCOPE_CRITERION else k
                for s, k in zip(part["scope"], part["skill"], strict=True)
            ],
            "value": part["value"],
            "ci_low": part["ci_low"],
            "ci_high": part["ci_high"],
            "n": part["n"],
            "n_of": _units(part),
            "n_instances": part["n_instances"],
            "gap_to_ceiling": part.get("gap_to_ceiling", pd.Series(np.nan, index=part.index)),
            "few_instances": part["few_instances"].astype(bool),
        }
    )


_HEADERS = {
    "n": "n",
    "n_of": "n counts",
    "gap_to_ceiling": "Gap to the ceiling",
    "few_instances": "CI from < 5 instances",
}


def board_table(board: Board, stat: str) -> pd.DataFrame:
    """The page's sortable table of one statistic: numbers stay numbers (rounded to 3
    decimals, so a column sorts by value), the dataset's criterion labels, readable headers."""
    table = _table(board, stat)
    for col in ("value", "ci_low", "ci_high", "gap_to_ceiling"):
        table[col] = table[col].round(STAT_DIGITS)
    table["n"] = table["n"].astype("Int64")
    table["n_instances"] = table["n_instances"].astype("Int64")
    return for_people(table, labels=board.labels, headers=_HEADERS, text=False)


def board_csv(board: Board, fmt: str = "csv", stat: str | None = None) -> bytes:
    """Every row (or one statistic's) as CSV, numbers at full precision, names neutralised;
    ``fmt="parquet"``: the same rows, typed."""
    frame = long_frame(board) if stat is None else for_stat(board, stat)
    frame = frame.assign(
        judge=[j if r == JUDGE_ROW else CEILING for j, r in zip(frame["judge"], frame["row"],
                                                                strict=True)],
        skill=[ALL_LABEL if s != SCOPE_CRITERION else k
               for s, k in zip(frame["scope"], frame["skill"], strict=True)],
        statistic=frame["statistic"].map(lambda s: LABELS.get(s, s)),
    )  # fmt: skip
    return people_csv(frame.drop(columns="row"), labels=board.labels, headers=_HEADERS, fmt=fmt)
