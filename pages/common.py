"""UI glue shared by app.py and the pages: the store, cached analysis calls, errors, banner.

Analysis results are cached by the store file's modification time (not with a cached
connection: DuckDB allows one writer XOR many readers, so the app must not hold the file).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import streamlit as st

from analysis.errors import FinegrainError
from analysis.filters import Filters
from analysis.store import Store

_REGISTRY: dict[str, Callable[..., Any]] = {}


def store() -> Store:
    return Store(busy_timeout=2.0)


@st.cache_data(show_spinner=False, max_entries=256)
def _run(name: str, db_path: str, version: tuple, args: tuple, kwargs: tuple) -> Any:
    return _REGISTRY[name](Store(db_path, busy_timeout=2.0), *args, **dict(kwargs))


def cached(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn(store, *args)`` cached per (store file version, args); errors shown on the page."""
    name = f"{fn.__module__}.{fn.__qualname__}"
    _REGISTRY[name] = fn

    def call(*args: Any, **kwargs: Any) -> Any:
        s = store()
        try:
            return _run(name, str(s.path), s.version(), args, tuple(sorted(kwargs.items())))
        except FinegrainError as e:
            show_error(e)
            st.stop()

    return call


def plain(text: str) -> str:
    """Escape markdown so names and values from user files render as the text they are."""
    return re.sub(r"([\\`*_{}\[\]()<>#+\-.!|~$:])", r"\\\1", text)


def show_error(e: FinegrainError) -> None:
    st.error(f"**{e.title}.** {plain(e.message)}")


def filters() -> Filters:
    """The sidebar's selection (set by app.py before the page runs)."""
    if "filters" not in st.session_state:
        _through_the_router()
    return st.session_state["filters"]


def _through_the_router() -> None:
    """Rerun via app.py. When a fresh server's first request is a page URL (a link such as
    /samples?instance=…), Streamlit runs that page file on its own: its legacy pages/ folder
    mode stays on until st.navigation is first called. Switch that mode off and rerun: the run
    then goes through the router and sidebar to the same page, query parameters kept."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False  # what st.navigation itself does first
    st.rerun()


def simulated_banner(seed: int | None) -> None:
    st.warning(
        f"**Simulated data** (seed {seed}). These scores are generated to look like the FLASK "
        "paper's figures; they are not real model or human judgments. Load the real FLASK "
        "benchmark from the Overview page, or run `python -m analysis import-flask`.",
        icon=":material/science:",
    )


def no_data(message: str = "No scores match the current filters.") -> None:
    st.info(
        f"{message} Widen the filters in the sidebar (models, domains, difficulty, "
        "source task, FLASK-Hard only).",
        icon=":material/filter_alt_off:",
    )
