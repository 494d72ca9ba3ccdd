"""Finegrain: the router (explicit pages) and the shared sidebar. Nothing else lives here.

The sidebar's menu is drawn with page links (st.navigation runs hidden): with a ``pages/``
folder next to app.py, Streamlit would otherwise list the source files (app, common, …) on a
server's first request, so ``.streamlit/config.toml`` turns that listing off
(``client.showSidebarNavigation = false``), which also hides st.navigation's own menu. The view
(dataset, judge, filters, each page's picks) lives in the URL: see ``analysis.views.state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.core.filters import Filters
from analysis.core.taxonomy import DIFFICULTY_LEVELS
from analysis.views import overview, state
from analysis.views.source_tasks import task_label
from analysis.views.tables import judge_label
from pages.common import (
    bind,
    cached,
    show_error,
    simulated_banner,
    store,
    url_begin,
    url_forget_page,
    url_globals,
    url_has_link,
    use_router,
)

if TYPE_CHECKING:
    import pandas as pd

use_router()
# An emoji favicon is drawn inline; a :material/…: one is fetched from fonts.gstatic.com.
st.set_page_config(page_title="Finegrain", page_icon="🌾", layout="wide")

# Keyed by the page's file name, which also names its URL parameters in analysis.views.state.
PAGES = {
    "overview": st.Page(
        "pages/overview.py", title="Overview", icon=":material/dashboard:", default=True
    ),
    "radar": st.Page("pages/radar.py", title="Skill radar", icon=":material/radar:"),
    "breakdowns": st.Page("pages/breakdowns.py", title="Breakdowns", icon=":material/grid_view:"),
    "agreement": st.Page("pages/agreement.py", title="Human vs judge", icon=":material/balance:"),
    "judges": st.Page("pages/judges.py", title="Judges", icon=":material/groups:"),
    "samples": st.Page("pages/samples.py", title="Samples", icon=":material/search:"),
    "annotate": st.Page("pages/annotate.py", title="Annotate", icon=":material/edit_note:"),
    "rejudge": st.Page("pages/rejudge.py", title="Re-judge", icon=":material/gavel:"),
}


def _prepare_store() -> None:
    """On first run of a session: create the store, building the demo if it is empty."""
    if st.session_state.get("store_ready"):
        return
    try:
        with st.spinner("Preparing the store (building the simulated demo on first start)…"):
            overview.ensure_data(store())
            recovered = overview.recover_answers(store())
    except FinegrainError as e:
        show_error(e)
        st.stop()
    if recovered:
        st.toast(f"{recovered} judge answers of an interrupted run were stored.", icon="🧾")
    st.session_state["store_ready"] = True


def _dataset(sets: pd.DataFrame) -> str:
    names = list(sets["dataset"])
    linked = url_has_link("dataset")
    wanted = st.session_state.pop("next_dataset", None)  # set by the Load FLASK button
    if wanted in names and not linked:
        st.session_state["dataset"] = wanted
    dataset = bind("dataset", "dataset", names, default=state.default_dataset(sets))
    if st.session_state.get("_view_dataset", dataset) != dataset and not linked:
        url_forget_page()  # the page's picks (a detail, a search) were the old dataset's
    st.session_state["_view_dataset"] = dataset
    return dataset


def _judge(dataset: str, judges: tuple[str, ...]) -> str | None:
    """The judge to show: a link's, the visitor's, one just run in-app; when the choice is
    empty or gone (a dataset whose first scores just arrived), the newest with scores."""
    key = f"judge::{dataset}"
    ran = st.session_state.pop("judged", None)  # (dataset, judge), set by the Re-judge page
    if ran and ran[0] == dataset and ran[1] in judges and not url_has_link("judge"):
        st.session_state[key] = ran[1]
    stale = key in st.session_state and st.session_state[key] not in judges
    default = cached(state.newest_judge)(dataset) if stale else next(iter(judges), None)
    return bind("judge", key, judges, default=default)


def _sidebar(sets: pd.DataFrame) -> Filters:
    titles = dict(zip(sets["dataset"], sets["title"], strict=True))
    sb = st.sidebar
    dataset = _dataset(sets)
    sb.selectbox("Dataset", list(sets["dataset"]), key="dataset", format_func=titles.get)
    opts = cached(overview.filter_options)(dataset)
    _judge(dataset, opts.judges)
    judge = sb.selectbox(
        "Judge",
        opts.judges,
        key=f"judge::{dataset}",
        format_func=lambda j: judge_label(j, opts.judge_kinds.get(j)),
        placeholder="No scores yet" if not opts.judges else "Choose a judge",
        help="Whose scores the pages show. Human annotators appear as judges of kind 'human'.",
    )
    bind("models", f"models::{dataset}", opts.models)
    bind("domains", f"domains::{dataset}", opts.domains)
    bind("levels", f"levels::{dataset}", opts.difficulties)
    bind("tasks", f"tasks::{dataset}", opts.source_tasks)
    hard_ok = opts.has_flask_hard
    bind("hard", f"hard::{dataset}", default=False, valid=lambda v: hard_ok or not v, absent=False)
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
        "Source task",
        opts.source_tasks,
        key=f"tasks::{dataset}",
        placeholder="All source tasks",
        format_func=task_label,
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


def _menu(menu) -> None:
    """The pages, as links that carry the sidebar's view (a new tab opens the same view)."""
    with menu:
        for p in PAGES.values():
            st.page_link(p, query_params=url_globals())


_prepare_store()
page = st.navigation(list(PAGES.values()), position="hidden")
url_begin(next(name for name, p in PAGES.items() if p is page))
menu = st.sidebar.container()
st.sidebar.markdown("### Finegrain")
datasets = cached(overview.datasets)()
filters = _sidebar(datasets)
st.session_state["filters"] = filters
_menu(menu)
simulated, seed = overview.simulated_info(datasets, filters.dataset)
if simulated:
    simulated_banner(seed)
page.run()
