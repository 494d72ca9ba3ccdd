"""Judges page, Leaderboard: every LLM judge × every skill against the humans (the mean of the
human scores per item), with the chosen statistic at the chosen level, its 95% CI and n, and
the human ceiling (leave-one-out) as its own row. Layout only: the numbers come from one cached
view call (analysis/views/judge_board.py), the figure from analysis/charts/judges_board.py."""

from __future__ import annotations

from functools import partial

import streamlit as st

from analysis.charts.common import chart_config
from analysis.charts.judges_board import board_heatmap
from analysis.core.filters import Filters
from analysis.stats.agreement import LABELS, STATISTICS
from analysis.views import judge_board, judge_board_report
from analysis.views.agreement import LEVELS
from pages.common import bind, cached, downloads, empty_state, plain

PNG = chart_config("judges-leaderboard")
DEFAULT_STAT = "spearman"


def draw(f: Filters) -> None:
    st.caption(
        "Each LLM judge against the humans' mean score per item (instance × model × skill), "
        "per skill and over all skills pooled. 95% CIs from 1,000 bootstrap resamples of "
        "instances; n = aligned items. The same numbers as Human vs judge with that judge as A "
        "and All humans as B, and as `finegrain agreement --a kind:llm:each --b kind:human`."
    )
    # Both picks are in the URL (analysis.views.state: the judges page's stat and level).
    bind("stat", "jd_stat", STATISTICS, default=DEFAULT_STAT, absent=DEFAULT_STAT)
    bind("level", "jd_level", LEVELS, absent=LEVELS[0])
    left, right = st.columns([3, 2])
    stat = left.selectbox("Statistic", STATISTICS, format_func=LABELS.get, key="jd_stat")
    level = right.selectbox(
        "Correlation level",
        LEVELS,
        key="jd_level",
        help="pooled: over all aligned items; instance: across the models' responses within "
        "each instance, averaged over instances; system: over the per-model means. MAE, "
        "agreement, κ and α are always over items, and so is the human ceiling.",
    )
    board = cached(judge_board.judge_board)(judge_board.BoardQuery(f, level))
    if board.empty is not None:
        empty_state(board.empty, key="jd_board")
        return
    st.plotly_chart(board_heatmap(board, stat), key="jd_board_chart", config=PNG)
    for note in judge_board_report.notes(board):
        st.caption(f":material/info: {plain(note)}")
    st.dataframe(judge_board_report.board_table(board, stat), hide_index=True, key="jd_board_table")
    downloads(
        "Download the leaderboard, every statistic", partial(judge_board_report.board_csv, board),
        f"judge_leaderboard_{f.dataset}", "jd_dl_board",
    )  # fmt: skip
