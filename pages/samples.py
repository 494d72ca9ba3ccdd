"""Samples: search and filter responses, read one with every judge's scores and rationale, and
queue a selection for re-judging or annotation.

Link to a response's detail view with query parameters (other pages: ``st.page_link(
"pages/samples.py", query_params=sample_detail.detail_link(dataset, instance_id, model))``):

    /samples?dataset=<dataset>&instance=<instance_id>&model=<model>

Model and judge text is untrusted: it is shown with st.text (no markdown, no HTML) and in
dataframes; names in markdown go through ``plain``.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.views import overview, queues, sample_detail, samples
from pages.common import cached, filters, no_data, plain, sample_texts, show_error, store

f = filters()
ALL_SKILLS = "(all of the response's skills)"
st.title("Samples")
st.caption(
    "Responses matching the sidebar filters (its judge choice aside: every judge's scores are "
    "shown). Search is a literal, case-insensitive match; select rows to read them or queue them."
)

# A link to another dataset's response selects that dataset in the sidebar, once.
link = st.query_params.to_dict()
if link.get("dataset", f.dataset) != f.dataset and st.session_state.get("s_link") != link:
    st.session_state["s_link"] = link
    st.session_state["next_dataset"] = link["dataset"]  # app.py applies it on the rerun
    st.rerun()

opts = cached(overview.filter_options)(f.dataset)
skills = cached(samples.dataset_skills)(f.dataset)
ds = f.dataset

# ---------------------------------------------------------------- the query
c1, c2 = st.columns([3, 2])
text = c1.text_input(
    "Search", key=f"s_text::{ds}", placeholder="a word or phrase in the instruction, "
    "reference answer or response"
)  # fmt: skip
fields = c2.pills(
    "Search in", samples.SEARCH_FIELDS, selection_mode="multi",
    default=list(samples.SEARCH_FIELDS), key=f"s_fields::{ds}",
)  # fmt: skip
c1, c2, c3 = st.columns(3)
skill = c1.selectbox(
    "Skill", [ALL_SKILLS, *skills["skill"].tolist()], key=f"s_skill::{ds}",
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
if result.total == 0:
    no_data("No responses match the search and filters.")
else:
    st.caption(
        f"{result.total:,} {'response matches' if result.total == 1 else 'responses match'} · "
        f"page {page_no} of {result.pages:,} · "
        f"{result.page_size} per page. Judge columns: mean score over "
        f"{'the skill' if skill else 'the response skills'} (blank: not scored or N/A)."
    )
config = {
    "instance_id": "instance", "model": "model", "difficulty": "level",
    "source_task": "source task", "flask_hard": st.column_config.CheckboxColumn("hard"),
    "instruction": st.column_config.TextColumn("instruction", width="medium"),
    "response": st.column_config.TextColumn("response", width="medium"),
    "length": st.column_config.NumberColumn("chars"),
    "disagreement": st.column_config.NumberColumn("disagreement", format="%.1f"),
    **{samples.judge_column(j): st.column_config.NumberColumn(j, format="%.2f")
       for j in result.judges},
}  # fmt: skip
event = st.dataframe(
    result.rows, key="samples_table", on_select="rerun", selection_mode="multi-row",
    hide_index=True, column_config=config,
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
        st.dataframe(cached(queues.table)(q, ds), hide_index=True, key=f"q_table::{q}")
        st.button(f"Clear '{title}'", key=f"clear::{q}", disabled=not counts.get(q),
                  on_click=_queue, args=("clear", q))  # fmt: skip

# ---------------------------------------------------------------- the detail view
st.subheader("Detail")
if picked:
    shown = st.selectbox(
        "Show", picked, key="s_show", format_func=lambda k: f"instance {k[0]} · {k[1]}"
    )
    target = (ds, *shown)
    st.query_params.update(sample_detail.detail_link(*target))  # the URL now links to this response
elif link.get("instance") and link.get("model"):
    target = (link.get("dataset", ds), link["instance"], link["model"])
else:
    st.info("Select a row to read it here.", icon=":material/touch_app:")
    st.stop()

detail = cached(sample_detail.detail)(*target)
st.markdown(
    f"**Instance {plain(detail.instance_id)}** · model **{plain(detail.model)}** · dataset "
    f"{plain(detail.dataset)}"
)
st.caption(
    f"level {detail.difficulty or 'unlabeled'} · task {plain(detail.source_task or '–')} · "
    f"domains {plain(', '.join(detail.domains) or '–')} · skills "
    f"{plain(', '.join(detail.skills))}{' · FLASK-Hard' if detail.flask_hard else ''}"
)
sample_texts(detail, "d")

st.markdown("**Judges**")
if not detail.judges:
    st.info("No judge has scored this response yet.")
per_row = 3
for start in range(0, len(detail.judges), per_row):
    cols = st.columns(per_row)
    for col, view in zip(cols, detail.judges[start : start + per_row], strict=False):
        with col.container(border=True):
            st.markdown(f"**{plain(view.judge)}** ({view.kind})")
            st.text(sample_detail.score_lines(view))
            if view.parse_status != "ok":
                st.caption(f"parse status: {plain(view.parse_status)}")
                st.text(view.error or "")
            st.caption("Rationale")
            st.text(view.rationale or "(none)")
            if view.raw_output:
                with st.expander("Raw output"):
                    st.text(view.raw_output)
