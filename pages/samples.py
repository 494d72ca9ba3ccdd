"""Samples: search and filter responses, read one with every judge's scores and rationale, and
queue a selection for re-judging or annotation.

Link to a response's detail view with query parameters (other pages: ``st.page_link(
"pages/samples.py", query_params=sample_detail.detail_link(dataset, instance_id, model))``):

    /samples?dataset=<dataset>&instance=<instance_id>&model=<model>

The search (q, in, skill, sort) and the response shown are in the URL too (analysis.views.state).

Model and judge text is untrusted: it is shown with st.text (no markdown, no HTML) and in
dataframes; names in markdown go through ``plain``.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.views import guidance_data, overview, queues, sample_detail, samples
from pages.common import (
    bind,
    cached,
    empty_state,
    filters,
    plain,
    sample_texts,
    show_error,
    store,
    url_link,
    url_note,
    url_put,
)

f = filters()
ALL_SKILLS = "(all of the response's skills)"
st.title("Samples")
st.caption(
    "Responses matching the sidebar filters (its judge choice aside: every judge's scores are "
    "shown). Search is a literal, case-insensitive match; select rows to read them or queue them."
)

opts = cached(overview.filter_options)(f.dataset)
skills = cached(samples.dataset_skills)(f.dataset)
ds = f.dataset
# The response in the detail view, per dataset: a link's (app.py has already selected the link's
# dataset), then the row last shown. A dataset switch shows that dataset's own (or none).
DETAIL = f"s_detail::{ds}"
link_instance, link_model = url_link("instance"), url_link("model")
if link_instance or link_model:  # half a link (no model, say) opens what it can, with a note
    target = cached(sample_detail.link_target)(
        ds, link_instance and link_instance[-1], link_model and link_model[-1]
    )
    if target.shown:
        st.session_state[DETAIL] = target.shown
    if target.note:
        url_note(target.note)

# ---------------------------------------------------------------- the query
c1, c2 = st.columns([3, 2])
bind("q", f"s_text::{ds}", default="", absent="")
text = c1.text_input(
    "Search", key=f"s_text::{ds}", placeholder="a word or phrase in the instruction, "
    "reference answer or response"
)  # fmt: skip
bind("in", f"s_fields::{ds}", samples.SEARCH_FIELDS, default=list(samples.SEARCH_FIELDS),
     absent=list(samples.SEARCH_FIELDS))  # fmt: skip
fields = c2.pills(
    "Search in", samples.SEARCH_FIELDS, selection_mode="multi", key=f"s_fields::{ds}",
)  # fmt: skip
c1, c2, c3 = st.columns(3)
skill_options = [ALL_SKILLS, *skills["skill"].tolist()]
bind("skill", f"s_skill::{ds}", skill_options, default=ALL_SKILLS, absent=ALL_SKILLS)
bind("sort", f"s_sort::{ds}", samples.SORTS, absent=next(iter(samples.SORTS)))
skill = c1.selectbox(
    "Skill", skill_options, key=f"s_skill::{ds}",
    help="Which scores the judge columns, ranges and disagreement use.",
)  # fmt: skip
skill = None if skill == ALL_SKILLS else skill
sort = c2.selectbox("Sort by", list(samples.SORTS), key=f"s_sort::{ds}",
                    format_func=samples.SORTS.get)  # fmt: skip
lo, hi = samples.score_scale(skills, skill)
threshold = c3.number_input(
    "Judge disagreement at least", min_value=0.0, max_value=hi - lo, value=0.0,
    step=max((hi - lo) / 8, 0.05),
    key=f"s_dis::{ds}", help="Max minus min across judges of one skill's scores on a response "
    "(the largest over its skills). 0 = no threshold.",
)  # fmt: skip
with st.expander("Score ranges per judge", expanded=bool(st.session_state.get(f"s_rj::{ds}"))):
    range_judges = st.multiselect(
        "Judges to constrain", opts.judges, key=f"s_rj::{ds}",
        help="Keep responses whose mean score from each chosen judge lies in its range.",
    )  # fmt: skip
    ranges = []
    for j in range_judges:
        low, high = st.slider(
            f"{plain(j)} mean score",
            lo,
            hi,
            (lo, hi),
            step=(hi - lo) / 40,
            key=f"s_range::{ds}::{j}",
        )
        ranges.append(samples.ScoreRange(j, low, high))
    compared = st.multiselect(
        "Judges the disagreement compares", opts.judges, key=f"s_cmp::{ds}",
        placeholder="All judges",
    )  # fmt: skip

query = samples.SampleQuery(
    f, text=text, fields=tuple(fields or ()), skill=skill, ranges=tuple(ranges),
    min_disagreement=threshold or None, compared=tuple(compared), sort=sort,
    judges=opts.judges,
)  # fmt: skip
# A new query starts on page 1 with nothing selected.
if st.session_state.get("s_query") != query:
    st.session_state["s_query"] = query
    st.session_state["s_page"] = 1
    st.session_state.pop("samples_table", None)
page_no = int(st.session_state.get("s_page", 1))
result = cached(samples.search)(dataclasses.replace(query, page=page_no - 1))
if page_no > result.pages:  # the data shrank under this page number
    st.session_state["s_page"] = result.pages
    st.rerun()

# ---------------------------------------------------------------- the table
if result.total == 0:  # which of the search, ranges, threshold and filters to relax
    empty_state(cached(guidance_data.samples_search)(query))
else:
    st.caption(
        f"{result.total:,} {'response matches' if result.total == 1 else 'responses match'} · "
        f"page {page_no} of {result.pages:,} · "
        f"{result.page_size} per page. Judge columns: mean score over "
        f"{'the skill' if skill else 'the response skills'} (blank: not scored or N/A)."
    )
event = st.dataframe(
    samples.display_rows(result), key="samples_table", on_select="rerun",
    selection_mode="multi-row", hide_index=True,
    column_config={c: st.column_config.TextColumn(width="medium")
                   for c in ("Instruction", "Response")},
)  # fmt: skip
picked = samples.keys_at(result, list(event.selection.rows))
st.number_input("Page", min_value=1, max_value=result.pages, key="s_page")


# ---------------------------------------------------------------- queues
def _queue(action: str, queue: str) -> None:
    try:
        if action == "add":
            n = queues.add(store(), queue, ds, picked)
            st.toast(f"{n} added to '{queues.QUEUE_TITLES[queue]}'")
        elif action == "remove":
            n = queues.remove(store(), queue, ds, picked)
            st.toast(f"{n} removed from '{queues.QUEUE_TITLES[queue]}'")
        else:
            n = queues.clear(store(), queue, ds)
            st.toast(f"'{queues.QUEUE_TITLES[queue]}' cleared ({n} removed)")
    except FinegrainError as e:
        show_error(e)


st.caption(f"{len(picked)} selected")
b1, b2, b3, b4 = st.columns(4)
if b1.button("Add to re-judge queue", key="add_rejudge", disabled=not picked):
    _queue("add", queues.REJUDGE)
if b2.button("Add to annotate queue", key="add_annotate", disabled=not picked):
    _queue("add", queues.ANNOTATE)
if b3.button("Remove from re-judge queue", key="rm_rejudge", disabled=not picked):
    _queue("remove", queues.REJUDGE)
if b4.button("Remove from annotate queue", key="rm_annotate", disabled=not picked):
    _queue("remove", queues.ANNOTATE)
counts = cached(queues.counts)(ds)
with st.expander(
    " · ".join(f"{t}: {counts.get(q, 0)}" for q, t in queues.QUEUE_TITLES.items()),
    icon=":material/list:",
):
    st.page_link("pages/annotate.py", label="Open the Annotate page", icon=":material/edit:")
    for q, title in queues.QUEUE_TITLES.items():
        st.markdown(f"**{title}**")
        st.dataframe(cached(queues.display_table)(q, ds), hide_index=True, key=f"q_table::{q}")
        st.button(f"Clear '{title}'", key=f"clear::{q}", disabled=not counts.get(q),
                  on_click=_queue, args=("clear", q))  # fmt: skip

# ---------------------------------------------------------------- the detail view
st.subheader("Detail")
if picked:
    shown = st.selectbox(
        "Show", picked, key="s_show", format_func=lambda k: f"instance {k[0]} · {k[1]}"
    )
    st.session_state[DETAIL] = tuple(shown)
shown = st.session_state.get(DETAIL)
url_put("instance", shown and shown[0])  # the URL links to the response shown
url_put("model", shown and shown[1])
if shown is None:
    st.info("Select a row to read it here.", icon=":material/touch_app:")
    st.stop()

detail = cached(sample_detail.detail)(ds, *shown)
st.markdown(
    f"**Instance {plain(detail.instance_id)}** · model **{plain(detail.model)}** · dataset "
    f"{plain(detail.dataset)}"
)
st.caption(plain(sample_detail.facts(detail)))
sample_texts(detail, "d")

st.markdown("**Judges**")
if not detail.judges:
    st.info("No judge has scored this response yet.")
per_row = 3
for start in range(0, len(detail.judges), per_row):
    cols = st.columns(per_row)
    for col, view in zip(cols, detail.judges[start : start + per_row], strict=False):
        with col.container(border=True):
            st.markdown(f"**{plain(view.judge)}** · {view.kind}")
            st.text(sample_detail.score_lines(view))
            if view.parse_status != "ok":
                st.caption(f"parse status: {plain(view.parse_status)}")
                st.text(view.error or "")
            st.caption("Rationale")
            st.text(view.rationale or "(none)")
            if view.raw_output:
                with st.expander("Raw output"):
                    st.text(view.raw_output)
