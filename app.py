"""Finegrain: the router (explicit pages) and the shared sidebar. Nothing else lives here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.core.filters import Filters
from analysis.core.taxonomy import DIFFICULTY_LEVELS
from analysis.views import overview
from pages.common import cached, show_error, simulated_banner, store, use_router

if TYPE_CHECKING:
    import pandas as pd

use_router()
# An emoji favicon is drawn inline; a :material/…: one is fetched from fonts.gstatic.com.
st.set_page_config(page_title="Finegrain", page_icon="🌾", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("pages/radar.py", title="Skill radar", icon=":material/radar:"),
    st.Page("pages/breakdowns.py", title="Breakdowns", icon=":material/grid_view:"),
    st.Page("pages/agreement.py", title="Human vs judge", icon=":material/balance:"),
    st.Page("pages/samples.py", title="Samples", icon=":material/search:"),
    st.Page("pages/annotate.py", title="Annotate", icon=":material/edit_note:"),
    st.Page("pages/rejudge.py", title="Re-judge", icon=":material/gavel:"),
]


def _prepare_store() -> None:
    """On first run of a session: create the store, building the demo if it is empty."""
    if st.session_state.get("store_ready"):
        return
    try:
        with st.spinner("Preparing the store (building the simulated demo on first start)…"):
            overview.ensure_data(store())
    except FinegrainError as e:
        show_error(e)
        st.stop()
    st.session_state["store_ready"] = True


def _sidebar(sets: pd.DataFrame) -> Filters:
    names = list(sets["dataset"])
    titles = dict(zip(sets["dataset"], sets["title"], strict=True))
    sb = st.sidebar
    wanted = st.session_state.pop("next_dataset", None)  # set by the Load FLASK button
    if wanted in names:
        st.session_state["dataset"] = wanted
    if st.session_state.get("dataset") not in names:
        st.session_state["dataset"] = names[0]
    dataset = sb.selectbox("Dataset", names, key="dataset", format_func=lambda d: titles[d])
    opts = cached(overview.filter_options)(dataset)
    judge = sb.selectbox(
        "Judge",
        opts.judges,
        key=f"judge::{dataset}",
        format_func=lambda j: f"{j} ({opts.judge_kinds.get(j, 'llm')})",
        help="Whose scores the pages show. Human annotators appear as judges of kind 'human'.",
    )
    models = sb.multiselect(
        "Models", opts.models, key=f"models::{dataset}", placeholder="All models"
    )
    domains = sb.multiselect(
        "Domain", opts.domains, key=f"domains::{dataset}", placeholder="All domains"
    )
    levels = sb.multiselect(
        "Difficulty",
        opts.difficulties,
        key=f"levels::{dataset}",
        placeholder="All levels",
        format_func=lambda v: f"{v} · {DIFFICULTY_LEVELS.get(v, '')}",
    )
    tasks = sb.multiselect(
        "Source task", opts.source_tasks, key=f"tasks::{dataset}", placeholder="All source tasks"
    )
    hard = sb.toggle(
        "FLASK-Hard only",
        key=f"hard::{dataset}",
        disabled=not opts.has_flask_hard,
        help="Only instances that are also in FLASK-Hard (expert level).",
    )
    return Filters(
        dataset, judge, tuple(models), tuple(domains), tuple(levels), tuple(tasks), bool(hard)
    )


_prepare_store()
page = st.navigation(PAGES)
st.sidebar.markdown("### Finegrain")
datasets = cached(overview.datasets)()
filters = _sidebar(datasets)
st.session_state["filters"] = filters
simulated, seed = overview.simulated_info(datasets, filters.dataset)
if simulated:
    simulated_banner(seed)
page.run()
