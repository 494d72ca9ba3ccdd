"""UI glue shared by app.py and the pages: the store, cached analysis calls, errors, banner,
and the view in the URL.

Analysis results are cached by the store file's modification time (not with a cached
connection: DuckDB allows one writer XOR many readers, so the app must not hold the file).

The view in the URL (the parameters are listed in ``analysis.views.state``): app.py calls
``url_begin`` at the start of each full run, then every URL-bound widget is preceded by one
``bind(param, key, options, default=…)`` and created with ``key=key`` and no default of its own
(``bind`` has put the value into the widget's state). A link's value is applied once, when it
arrives; afterwards the widget owns it and each run writes it back into the URL.
"""

from __future__ import annotations

import re
import runpy
from collections.abc import Callable
from typing import Any

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from analysis.core.errors import FinegrainError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.views import state
from analysis.views.guidance import Action, EmptyState, fill_queue

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
    """Escape markdown so names and values from user files render as the text they are.

    GFM turns bare ``http://…``, ``www.…`` and ``a@b.c`` into links after escapes and character
    references are read, so no escape stops it; an invisible word joiner (U+2060) before
    ``http``, ``www`` and ``@`` does: a link must start after a space or punctuation."""
    text = re.sub(r"([\\`*_{}\[\]()<>#+\-.!|~$:&])", r"\\\1", text)
    return re.sub(r"(?i)(https?|www|@)", "\u2060\\1", text)


# A table's downloads: CSV for spreadsheets, Parquet for pandas, DuckDB, Spark (typed columns).
FILE_TYPES = {"csv": ("CSV", "text/csv"), "parquet": ("Parquet", "application/vnd.apache.parquet")}


def downloads(label: str, data: Callable[[str], bytes], stem: str, key: str) -> None:
    """The two download buttons of one table: ``data(fmt)`` gives its bytes ("csv" or
    "parquet"); the CSV button keeps ``key``, the Parquet one is ``key``_parquet."""
    for fmt, (name, mime) in FILE_TYPES.items():
        st.download_button(
            f"{label} ({name})",
            data(fmt),
            file_name=f"{stem}.{fmt}",
            mime=mime,
            key=key if fmt == "csv" else f"{key}_parquet",
            icon=":material/download:",
        )


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
    if "filters" not in st.session_state or PagesManager.uses_pages_directory:
        # This page runs on its own, without app.py: Streamlit's legacy pages/ mode on a
        # server's first request (a deep link), and AppTest starts every run that way. Run the
        # router here instead: it draws the sidebar, puts the URL's view in place and runs this
        # page inside it; then this outer run of the page ends.
        use_router()
        runpy.run_path(get_script_run_ctx().main_script_path, run_name="__main__")
        st.stop()
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


def empty_state(es: EmptyState, key: str = "empty") -> None:
    """Why a page (or a part of it) shows nothing, from ``analysis.views.guidance``: the cause
    and the next step, each command line as code, and a button for each step the app can take
    (``key`` keeps two empty states on one page apart)."""
    icon = ":material/info:" if es.blocks else ":material/lightbulb:"
    st.info(f"**{plain(es.title)}** {plain(es.message)}", icon=icon)
    for line in es.commands:
        st.code(line, language="bash")
    if es.actions:
        row = st.container(horizontal=True)  # side by side, wrapping on a phone
        for i, action in enumerate(es.actions):
            if row.button(action.label, key=f"{key}::{es.cause}::{i}", icon=action.icon):
                _take(action)


def _take(action: Action) -> None:
    """A next step's click: fill its queue (one write), then open its page with the sidebar's
    view and the step's own parameters in the URL."""
    if action.fill is not None:
        try:
            fill_queue(store(), action.fill)
        except FinegrainError as e:
            show_error(e)
            return
    st.switch_page(action.page, query_params={**url_globals(), **action.query})


# ------------------------------------------------------------------ the view in the URL
_PENDING = "_url_pending"  # parameters a link brought that no widget has taken yet
_WRITTEN = "_url_written"  # what the app last wrote into the URL
_KEPT = "_url_kept"  # widget key → its last value (widget state is dropped off-page)
_NOTES = "_url_notes"  # notes on a link's unusable values, shown until the view changes
_PAGE = "_url_page"  # the running page's name (its parameters are declared in state)
_SLOT = "_url_slot"  # where this run draws the notes


def _url_now() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params}


def url_begin(page: str) -> None:
    """Start of a full run: take what a link just brought, and keep in the URL only the
    sidebar's parameters, this page's and a link's not yet used (another page's picks go)."""
    ss = st.session_state
    incoming = _url_now()
    arrived = state.pending(incoming, ss.get(_WRITTEN))
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.is_history_navigation:
        # Back or forward: that URL is the view, and a parameter it lacks stands for its absence.
        own = (*state.GLOBAL_NAMES, *(p.name for p in state.PAGE_PARAMS.get(page, ())))
        arrived = {**dict.fromkeys(own, []), **incoming}
    # A link's value waits until a widget takes it, as long as the URL still carries it.
    waiting = {k: v for k, v in ss.get(_PENDING, {}).items() if incoming.get(k) == v}
    ss[_PENDING] = {**waiting, **arrived}
    ss[_PAGE] = page
    keep = {*state.GLOBAL_NAMES, *(p.name for p in state.PAGE_PARAMS.get(page, ())), *ss[_PENDING]}
    for k in set(incoming) - keep:
        del st.query_params[k]
    ss[_WRITTEN] = {k: v for k, v in incoming.items() if k in keep}
    ss.setdefault(_KEPT, {})
    if arrived:
        ss[_NOTES] = []
    ss[_SLOT] = st.container()
    for note in ss.get(_NOTES, []):
        _draw_note(note)


def _draw_note(note: str) -> None:
    st.session_state[_SLOT].info(plain(note), icon=":material/link_off:")


def url_link(param: str) -> list[str] | None:
    """The raw values a link just brought for ``param`` (taken: asked once), or None."""
    return st.session_state.get(_PENDING, {}).pop(param, None)


def url_has_link(param: str) -> bool:
    return param in st.session_state.get(_PENDING, {})


def url_note(note: str) -> None:
    """Say why a link was not used as it stands (shown until the view changes)."""
    st.session_state.setdefault(_NOTES, []).append(note)
    _draw_note(note)


def url_put(param: str, value: Any, *, absent: Any = None, linked: bool = False) -> None:
    """Write one value into the URL (no message when it is already there). ``linked``: the
    value answers a link (else a changed value is the visitor's, and a link's notes go)."""
    ss = st.session_state
    p = state.param(param, ss.get(_PAGE))
    raw = state.encode(p, value, absent)
    written = ss.setdefault(_WRITTEN, {})
    before = written.get(param)
    if (before or []) == raw:
        return
    if raw:
        st.query_params[param] = raw if p.multi else raw[0]
        written[param] = raw
    else:
        st.query_params.pop(param, None)
        written.pop(param, None)
    if before is not None and not linked:
        ss[_NOTES] = []  # the visitor changed the view: a link's notes are stale


def bind(
    param: str,
    key: str,
    options: Any = None,
    *,
    default: Any = None,
    valid: Callable[[Any], bool] | None = None,
    absent: Any = None,
) -> Any:
    """Before a URL-bound widget (created with ``key=key`` and no default): put the value it
    must show into its state (a link's, else its own, else the last one this session, else
    ``default``; always one of ``options``), write it into the URL, return it."""
    ss = st.session_state
    p = state.param(param, ss.get(_PAGE))
    current = ss.get(key, state.MISSING)
    link = url_link(param)
    if link == []:  # back/forward to a URL without it: the value its absence stands for
        link = None
        if absent is not state.ALWAYS:
            ss[key] = current = list(absent or []) if p.multi else absent
    r = state.resolve(
        p,
        link=link,
        current=current,
        kept=ss.setdefault(_KEPT, {}).get(key, state.MISSING),
        default=default,
        options=None if options is None else list(options),
        valid=valid,
    )
    if r.store and (current is state.MISSING or current != r.value):
        ss[key] = r.value
    if r.note:
        ss.setdefault(_NOTES, []).append(r.note)
        _draw_note(r.note)
    ss[_KEPT][key] = r.value
    url_put(param, r.value, absent=absent, linked=link is not None)
    return r.value


def url_forget_page() -> None:
    """The dataset changed in the sidebar: the page's picks belonged to the old one."""
    ss = st.session_state
    for p in state.PAGE_PARAMS.get(ss.get(_PAGE, ""), ()):
        ss.get(_PENDING, {}).pop(p.name, None)
        url_put(p.name, None)


def url_globals() -> dict[str, list[str]]:
    """The sidebar's part of the URL, for links to other pages (a new tab keeps the view)."""
    written = st.session_state.get(_WRITTEN, {})
    return {k: written[k] for k in state.GLOBAL_NAMES if k in written}


if __name__ == "__main__":  # opened as a page (/common) in Streamlit's legacy pages/ mode
    filters()  # runs the router, which says "Page not found" and shows the default page
