"""UI glue shared by app.py and the pages: the store, cached analysis calls, errors, banner.

Analysis results are cached by the store file's modification time (not with a cached
connection: DuckDB allows one writer XOR many readers, so the app must not hold the file).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from analysis.core.errors import FinegrainError
from analysis.core.filters import Filters
from analysis.core.store import Store

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


def use_router() -> None:
    """Route every run through app.py's ``st.navigation``.

    Streamlit 1.67 treats a ``pages/`` folder next to the main script as a legacy (v1)
    multipage app and would run a deep-linked page (``/agreement``, ``/samples?instance=…``)
    on its own, without the router and its sidebar. The flag is Streamlit's own switch for
    that mode (what ``st.navigation`` itself sets once it has run).
    """
    PagesManager.uses_pages_directory = False


def filters() -> Filters:
    """The sidebar's selection (set by app.py before the page runs)."""
    if "filters" not in st.session_state:
        # Opened by a deep link before the router ever ran in this server: rerun, now through
        # app.py, which keeps the URL's page and its query parameters.
        use_router()
        st.rerun()
    return st.session_state["filters"]


def sample_texts(detail, key: str) -> None:
    """Instruction, reference and response of a sample, as plain text (model text is
    untrusted: never markdown or HTML). One renderer for every page that shows a sample."""
    left, right = st.columns(2)
    with left.container(border=True, key=f"{key}_instruction"):
        st.markdown("**Instruction**")
        st.text(detail.instruction)
    with right.container(border=True, key=f"{key}_reference"):
        st.markdown("**Reference answer**")
        st.text(detail.reference or "(none)")
    with st.container(border=True, key=f"{key}_response"):
        st.markdown("**Response**")
        st.text("(no response stored)" if detail.response is None else detail.response)


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
