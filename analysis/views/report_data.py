"""Every number of the stakeholder report (``analysis.charts.report`` draws it): the same view
functions the pages call, on the same filters, so the report's numbers are the pages' numbers.

The report's choices where a page has a widget: the radar shows the sidebar's models, else the
radar page's default (the 4 best by Overall); the heatmaps are drawn for those same models; the
human-vs-judge summary is the judge (A) against the mean of the humans (B = ``kind:human``),
pooled, with the leave-one-out human ceiling. Provenance and the exemplar responses are read in
``views/report_sources.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import duckdb
import pandas as pd

from analysis.core.errors import InputError
from analysis.core.filters import FilterOptions, Filters
from analysis.core.store import Store
from analysis.views import agreement, breakdowns, overview, radar, state
from analysis.views import judge_board as judge_boards
from analysis.views.agreement import Agreement, AgreementQuery
from analysis.views.judge_board import Board
from analysis.views.report_sources import Exemplar, Provenance, exemplars, provenance

Progress = Callable[[float, str], None]
HUMANS = "kind:human"
RADAR_MODELS = 4  # the radar page's default: the 4 best by Overall share one radar

__all__ = ["Exemplar", "Progress", "Provenance", "ReportData", "Store", "gather", "resolve_filters"]


@dataclass(frozen=True)
class ReportData:
    """What the report shows. A part that cannot be computed for this view is None (or empty)
    and ``notes`` holds the sentence the report prints in its place."""

    filters: Filters
    generated_at: datetime
    provenance: Provenance
    leaderboard: pd.DataFrame
    radar: radar.RadarData | None
    focus_models: tuple[str, ...]  # the radar's and the heatmaps' models
    by_difficulty: pd.DataFrame
    by_domain: pd.DataFrame
    hard_vs_full: pd.DataFrame
    agreement: Agreement | None
    judge_board: Board | None  # the Judges page's leaderboard (``judge_board``)
    exemplars: tuple[Exemplar, ...]
    notes: dict[str, str] = field(default_factory=dict)


def _noop(_fraction: float, _label: str) -> None:
    return None


class OneConnection:
    """``store`` read through one open connection for the whole report, a cursor per read:
    opening the file costs ~25 ms, and the report reads ~40 times. Everything else (path,
    version) is the store's. The report only reads; one thread uses it."""

    def __init__(self, store: Store, con: duckdb.DuckDBPyConnection) -> None:
        self._store, self._con = store, con

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        cursor = self._con.cursor()
        try:
            yield cursor
        finally:
            cursor.close()


def resolve_filters(store: Store, filters: Filters | None, judge: str | None = None) -> Filters:
    """The report's view, checked against the store: the dataset (default: the app's default
    dataset), the judge (``judge`` wins over ``filters.judge``; default: the sidebar's, the
    first LLM judge by scores), and every filter value one the dataset has. Unknown values
    raise InputError naming them and what is available."""
    sets = overview.datasets(store)
    known = list(sets["dataset"])
    dataset = filters.dataset if filters and filters.dataset else state.default_dataset(sets)
    if dataset is None:
        raise InputError("--dataset", None, None, "the store holds no dataset; import one first")
    if dataset not in known:
        raise InputError("--dataset", None, None, _unknown("dataset", [dataset], known, None))
    f = replace(filters, dataset=dataset) if filters else Filters(dataset)
    opts = overview.filter_options(store, dataset)
    f = replace(f, judge=judge or f.judge or next(iter(opts.judges), None))
    _check(f, opts)
    return f


def _check(f: Filters, opts: FilterOptions) -> None:
    if f.judge is not None and f.judge not in opts.judges:
        bad = _unknown("judge", [f.judge], opts.judges, f.dataset)
        raise InputError("--judge", None, None, bad)
    for option, values, offered in (
        ("--models", f.models, opts.models),
        ("--domains", f.domains, opts.domains),
        ("--levels", f.difficulties, opts.difficulties),
        ("--tasks", f.source_tasks, opts.source_tasks),
    ):
        bad = [v for v in values if v not in offered]
        if bad:
            raise InputError(option, None, None, _unknown(option[2:-1], bad, offered, f.dataset))
    if f.flask_hard_only and not opts.has_flask_hard:
        raise InputError("--hard", None, None, f"dataset '{f.dataset}' has no FLASK-Hard instance")


def _unknown(what: str, bad: list, offered, dataset: str | None) -> str:
    names = ", ".join(f"'{v}'" for v in bad)
    known = ", ".join(f"'{v}'" for v in offered) or "none"
    where = f"dataset '{dataset}'" if dataset else "this store"
    return f"unknown {what} {names} in {where}; available: {known}"


def gather(
    store: Store,
    filters: Filters | None,
    judge: str | None = None,
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
) -> ReportData:
    """Compute every part of the report for the resolved view (see ``resolve_filters``);
    ``progress(fraction, label)`` is called before each part (fractions up to 0.9: drawing
    the figures is the rest)."""
    tick = progress or _noop
    tick(0.0, "Reading provenance")
    with store.read() as con:
        return _gather(OneConnection(store, con), filters, judge, tick, now)


def _gather(
    store: Store, filters: Filters | None, judge: str | None, tick: Progress, now: datetime | None
) -> ReportData:
    f = resolve_filters(store, filters, judge)
    notes: dict[str, str] = {}
    prov = provenance(store, f)
    tick(0.1, "Leaderboard")
    board = overview.leaderboard(store, f) if f.judge else pd.DataFrame()
    tick(0.25, "Skill radar")
    rdata, focus = _radar(store, f)
    tick(0.4, "Breakdowns")
    scored = bool(f.judge)
    levels = breakdowns.by_difficulty(store, f) if scored else pd.DataFrame()
    domains = breakdowns.by_domain(store, f) if scored else pd.DataFrame()
    hard = breakdowns.hard_vs_full(store, f) if scored else pd.DataFrame()
    tick(0.55, "Human vs judge")
    agr = _agreement(store, f, prov, notes)
    tick(0.7, "Judges' leaderboard")
    board_of_judges = judge_board(store, f, notes)
    tick(0.75, "Exemplar responses")
    picked = exemplars(store, f) if scored else ()
    return ReportData(
        f, now or datetime.now(UTC), prov, board, rdata, focus, levels, domains, hard, agr,
        board_of_judges, picked, notes,
    )  # fmt: skip


def _radar(store: Store, f: Filters) -> tuple[radar.RadarData | None, tuple[str, ...]]:
    """The radar page's picture of this view: the sidebar's models, else its default (the best
    4 by Overall), with their per-skill means and CIs."""
    if not f.judge:
        return None, ()
    ranking = radar.model_ranking(store, f, overview.filter_options(store, f.dataset).models)
    focus = tuple(m for m in ranking.ranked if not f.models or m in f.models)
    if not f.models:
        focus = tuple(ranking.defaults(RADAR_MODELS))
    if not focus:
        return None, ()
    return radar.radar_data(store, replace(f, models=focus), "skill"), focus


def _agreement(store: Store, f: Filters, prov: Provenance, notes: dict) -> Agreement | None:
    """The judge against the mean of the humans (pooled) with the human ceiling, or None with
    the reason in ``notes``."""
    if not f.judge:
        notes["agreement"] = "No judge has scored this dataset: no human-vs-judge comparison."
        return None
    if not prov.has_humans:
        notes["agreement"] = (
            "No human scores in this dataset: there is no human-vs-judge comparison. Import "
            "human labels with `finegrain import-scores FILE --kind human`, or score responses "
            "on the Annotate page."
        )
        return None
    if prov.kinds.get(f.judge) == "human" and len(prov.humans) < 2:
        notes["agreement"] = "The judge is the only human rater: no human-vs-judge comparison."
        return None
    r = agreement.agreement(store, AgreementQuery(f, f.judge, HUMANS), ("stats", "ceiling"))
    if r.pairs.empty:
        notes["agreement"] = (
            f"The judge '{f.judge}' and the humans scored no item in common in this view: no "
            "human-vs-judge comparison."
        )
        return None
    return r


def judge_board(store: Store, f: Filters, notes: dict[str, str]) -> Board | None:
    """The Judges page's leaderboard in this view (``views.judge_board``: every LLM judge
    against the mean of the humans, pooled, with the human ceiling), or None with the reason
    in ``notes``."""
    board = judge_boards.judge_board(store, judge_boards.BoardQuery(f))
    if board.empty is not None:
        notes["judge_board"] = f"{board.empty.title} {board.empty.message}"
        return None
    return board
