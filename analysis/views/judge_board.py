"""The judge leaderboard against humans: every LLM judge × every criterion (and all criteria
pooled), each judge against the mean of the human scores per item, with every agreement
statistic at the chosen correlation level, its 95% CI, n and n_instances; and the human ceiling
(leave-one-out) per criterion beside them. The data behind the Judges page's Leaderboard and
``finegrain agreement --a kind:llm:each --b kind:human``.

Every value is the one of the single-judge computation, to the last bit:
``agreement(store, AgreementQuery(f, judge, "kind:human", level, skill), sections=("stats",))``
for each judge (same seed, same resamples). The speed comes from sharing what does not depend
on the judge, never from another formula: one query loads every judge's and every human's
scores on the items the humans scored (an item no human scored cannot be paired); the humans'
mean per item is taken once; every judge is paired with it in one join; resamples are drawn
once per number of instances. Each judge's aligned pairs then go through the same functions as
the single call (``views.agreement``: the pooled statistics, the level, the tidying).

The ceiling rows are the ``human_ceiling`` figure of the ceiling section (views/ceiling.py) of
the judge with the most aligned items against ``kind:human``: each human against the mean of the
other humans, on the items that judge scored, resampled over that comparison's instances; over
items whatever the level (as on the Human vs judge page). One reference for every judge, so the
rows can be set side by side; where every judge scored every item, its values are those of
every judge's own ceiling section (the CIs' resamples may differ). The LLM judges' mean as the
reference would take the bootstrap's continuous-score path: minutes at FLASK size. Judges face
the mean of *all* humans, steadier than the others' mean a held-out human faces, so the gap to
the ceiling flatters a judge a little; the paired comparison is the Human vs judge page's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.filters import Filters, filter_sql
from analysis.core.store import Store
from analysis.stats.agreement import CORRELATIONS
from analysis.stats.means import N_BOOT, bootstrap_weights
from analysis.views.agreement import LEVELS, SCOPE_ALL, level_stats, pooled_stats, scopes, tidy
from analysis.views.agreement_data import ITEM, side
from analysis.views.ceiling import held_out_pairs, leave_one_out
from analysis.views.criteria import labels_in
from analysis.views.guidance import EmptyState
from analysis.views.scorers import scorer_options, skill_order

EACH = "kind:llm:each"  # the CLI's spec for "every LLM judge, one by one"
CEILING = "Human ceiling (leave-one-out)"  # the ceiling row's name in tables and charts
# Causes of an empty board (EmptyState.cause): the page says each one with its next step.
NO_HUMANS, NO_LLM_JUDGE, NO_ALIGNED = "board-no-humans", "board-no-llm-judge", "board-no-aligned"

# The scores of the LLM judges and the humans on the items at least one human scored (N/A is
# not a score): only those items can be paired with the humans' mean.
BOARD_SCORES = """
WITH rows AS (
    SELECT s.instance_id, s.model, s.skill, s.judge, s.score
    FROM latest_scores s
    JOIN instances i USING (dataset, instance_id)
    WHERE {where}
      AND list_contains(?::VARCHAR[], s.judge)
      AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], s.skill))
), human AS (
    SELECT DISTINCT instance_id, model, skill FROM rows
    WHERE list_contains(?::VARCHAR[], judge) AND score IS NOT NULL
)
SELECT r.instance_id, r.model, r.skill, r.judge, r.score
FROM rows r SEMI JOIN human USING (instance_id, model, skill)
"""


@dataclass(frozen=True)
class BoardQuery:
    """Every LLM judge against the humans over the sidebar's slice (its judge is ignored)."""

    filters: Filters
    level: str = "pooled"
    skill: str | None = None
    n_boot: int = N_BOOT
    seed: int = 0


@dataclass(frozen=True)
class Board:
    query: BoardQuery
    judges: tuple[str, ...]  # the LLM judges of the dataset, in the pickers' order
    humans: tuple[str, ...]
    # judge, scope, skill, statistic, level, value, ci_low, ci_high, n, n_instances,
    # n_skipped, few_instances: each judge's ``stats`` section, rows in its order
    stats: pd.DataFrame
    # scope, skill, statistic, value, ci_low, ci_high, n (held-out pairs), n_instances,
    # n_items, n_humans, few_instances: the ``human_ceiling`` figure
    ceiling: pd.DataFrame
    # judge, aligned (items), instances: every judge, 0 where none; ceiling_items: its aligned
    # items are the ceiling judge's (its gap to the ceiling compares like with like)
    coverage: pd.DataFrame
    labels: dict[str, str]  # criterion id → the dataset's label
    empty: EmptyState | None = None  # why there is nothing to show (None: there is)
    ceiling_judge: str | None = None  # whose items the ceiling is on (the most aligned items)


def llm_judges(known: pd.DataFrame) -> tuple[str, ...]:
    """The LLM judges among a dataset's scorers (a judge without a kind counts as an LLM, as
    ``kind:llm`` resolves it), in ``scorer_options``' order."""
    return tuple(known.loc[known["kind"].fillna("llm") == "llm", "judge"])


def judge_board(store: Store, q: BoardQuery) -> Board:
    """Every LLM judge against ``kind:human`` per criterion and over all of them (see the
    module's docstring), with the human ceiling and each judge's coverage."""
    if q.level not in LEVELS:
        use = ", ".join(LEVELS)
        raise InputError("--level", None, None, f"unknown level '{q.level}'; use {use}")
    known = scorer_options(store, q.filters.dataset)
    judges = llm_judges(known)
    humans = tuple(sorted(known.loc[known["kind"] == "human", "judge"]))
    with store.read() as con:
        labels = labels_in(con, q.filters.dataset)
    board = Board(q, judges, humans, pd.DataFrame(), pd.DataFrame(), _coverage(judges), labels)
    if not humans or not judges:
        return replace(board, empty=_gap(q.filters, judges, humans))
    rows = _load(store, q, [*judges, *humans], humans)
    if rows.empty:  # no item with a human score in this slice
        return replace(board, empty=_gap(q.filters, judges, humans, 0))
    is_human = rows["judge"].isin(humans).to_numpy()
    human = side(rows[is_human], humans)  # the humans' mean per item (all N/A: NaN)
    pairs = _pairs(rows[~is_human], human)
    resamples: dict[int, np.ndarray] = {}
    parts, coverage, own = [], [], {}
    for judge, mine in pairs.groupby("judge", sort=False):
        own[judge] = mine = mine.drop(columns="judge").reset_index(drop=True)
        stats, n_inst = _judge_stats(mine, q, resamples)
        coverage.append((judge, len(mine), n_inst))
        if not stats.empty:
            parts.append(stats.assign(judge=judge))
    stats = _ordered(parts, judges)
    # The ceiling on the items of the judge with the most aligned items (ties: board order).
    top = min(own, key=lambda j: (-len(own[j]), judges.index(j)), default=None)
    board = replace(
        board,
        stats=stats,
        ceiling=_ceiling(rows, is_human, own.get(top, pd.DataFrame()), humans, q, resamples),
        ceiling_judge=top,
        coverage=_coverage(judges, coverage, _same_items(own, top)),
    )
    return board if not stats.empty else replace(board, empty=_gap(q.filters, judges, humans, 0))


def _load(store: Store, q: BoardQuery, judges: list[str], humans: tuple[str, ...]):
    where, params = filter_sql(replace(q.filters, judge=None))
    skills = [q.skill] if q.skill else []
    args = [*params, judges, skills, skills, list(humans)]
    with store.read() as con:
        table = con.sql(BOARD_SCORES.format(where=where), params=args).to_arrow_table()
    # As views/agreement_data.py reads its rows: through Arrow, the score as float.
    frame = table.to_pandas()
    return frame.assign(score=frame["score"].astype(np.float64))


def _pairs(llm: pd.DataFrame, human: pd.Series) -> pd.DataFrame:
    """Every judge's aligned items (judge, instance_id, model, skill, a, b, abs_diff), each
    judge's in the single call's order: worst disagreement first, then by item."""
    own = llm.groupby(["judge", *ITEM], sort=False)["score"].mean().rename("a").dropna()
    ref = human.dropna().rename("b")
    pairs = own.reset_index().join(ref, on=ITEM, how="inner")
    pairs["abs_diff"] = (pairs["a"] - pairs["b"]).abs()
    keys = ["judge", "abs_diff", "instance_id", "model", "skill"]
    pairs = pairs.sort_values(keys, ascending=[True, False, True, True, True], kind="stable")
    return pairs.reset_index(drop=True)


def _judge_stats(
    pairs: pd.DataFrame, q: BoardQuery, resamples: dict[int, np.ndarray]
) -> tuple[pd.DataFrame, int]:
    """The ``stats`` section of ``agreement()`` for one judge's pairs (views/agreement.py's
    own functions, called as it calls them), and the number of instances."""
    instances = pd.Index(pairs["instance_id"].unique())
    n = len(instances)
    if pairs.empty:
        return pd.DataFrame(), 0
    if n not in resamples:
        resamples[n] = bootstrap_weights(n, q.n_boot, q.seed)
    data = (pairs, skill_order(pairs["skill"]), instances.get_indexer(pairs["instance_id"]))
    data = (*data, resamples[n])
    stats = pooled_stats(*data).assign(level="pooled", n_skipped=0)
    if q.level != "pooled":
        level = level_stats(*data, q.level).assign(level=q.level)
        items = stats[~stats["statistic"].isin(CORRELATIONS)]
        stats = pd.concat([level, items], ignore_index=True)
    return tidy(stats), n


def _ordered(parts: list[pd.DataFrame], judges: tuple[str, ...]) -> pd.DataFrame:
    """One frame, judges in the board's order, each judge's rows in the single call's order."""
    if not parts:
        return pd.DataFrame()
    order = {j: i for i, j in enumerate(judges)}
    parts = sorted(parts, key=lambda p: order[p["judge"].iloc[0]])
    out = pd.concat(parts, ignore_index=True)
    return out[["judge", *[c for c in out if c != "judge"]]]


def _ceiling(rows, is_human, pairs: pd.DataFrame, humans, q: BoardQuery, resamples):
    """The ``human_ceiling`` figure of the ceiling section of ``judge`` vs ``kind:human``,
    ``judge`` the one with the most aligned items (``pairs``, its aligned items): the items
    (and the instances resampled) of that comparison."""
    if len(humans) < 2 or pairs.empty:
        return pd.DataFrame()
    judge = pairs.set_index(ITEM)["a"]
    instances = pd.Index(pairs["instance_id"].unique())
    held = held_out_pairs(rows[is_human], humans, judge)
    groups = scopes(skill_order(pairs["skill"]))
    loo = leave_one_out(held, groups, instances, resamples[len(instances)])
    if loo.empty:
        return loo
    loo = tidy(loo[loo["figure"] == "human_ceiling"].drop(columns="figure"))
    cols = ["scope", "skill", "statistic", "value", "ci_low", "ci_high", "n", "n_instances"]
    return loo[[*cols, "n_items", "n_humans", "few_instances"]]


def _coverage(
    judges: tuple[str, ...], found: list[tuple[str, int, int]] = (), same: set[str] = frozenset()
) -> pd.DataFrame:
    """Aligned items and instances per judge (a judge with none has zeros), and whether they
    are the ceiling judge's items."""
    got = {j: (n, k) for j, n, k in found}
    rows = [(j, *got.get(j, (0, 0)), j in same) for j in judges]
    return pd.DataFrame(rows, columns=["judge", "aligned", "instances", "ceiling_items"]).astype(
        {"aligned": "int64", "instances": "int64", "ceiling_items": "bool"}
    )


def _same_items(own: dict[str, pd.DataFrame], top: str | None) -> set[str]:
    """The judges whose aligned items (instance, model, skill) are exactly the top judge's."""
    if top is None:
        return set()
    keys = {j: set(map(tuple, p[ITEM].to_numpy().tolist())) for j, p in own.items()}
    return {j for j, k in keys.items() if k == keys[top]}


def _gap(f: Filters, judges, humans, aligned: int | None = None) -> EmptyState:
    """Why the board is empty: no human labels, no LLM judge, or no item both scored."""
    from analysis.views.guidance import annotate_slice, rejudge_slice

    if not humans:
        return EmptyState(
            NO_HUMANS,
            "No human labels yet.",
            f"The leaderboard compares each LLM judge with the human labels, and {f.dataset} "
            "has none. Annotate responses the judges scored (Annotate page), or import human "
            "labels with `finegrain import-scores FILE --kind human`.",
            actions=(annotate_slice(f, judges[:1]),) if judges else (),
        )
    if not judges:
        return EmptyState(
            NO_LLM_JUDGE,
            "No LLM judge yet.",
            f"{f.dataset} has human labels ({', '.join(humans)}) but no LLM judge's scores. "
            "Re-judge the responses the humans scored, or import a judge's scores.",
            actions=(rejudge_slice(),),
        )
    return EmptyState(
        NO_ALIGNED,
        "No common items.",
        f"No LLM judge ({', '.join(judges)}) scored an item the humans scored in this slice "
        "(an item is a response × skill with a score, not N/A). Widen the sidebar's filters "
        "or choose all skills, or re-judge the responses the humans scored.",
        actions=(rejudge_slice(),),
    )


def is_pooled(frame: pd.DataFrame) -> pd.Series:
    """The all-criteria rows of a board frame (``scope``)."""
    return frame["scope"] == SCOPE_ALL
