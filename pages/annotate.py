"""Annotate: blind human scoring of the "annotate these" queue with the rubric.

Each form is saved at once as the annotator's scores (a human judge), so a refresh or a crash
loses nothing; the annotator's name is kept in the URL (``?annotator=NAME``) and the page resumes
at their first unanswered item. Keyboard: Tab moves between the skills, the arrow keys pick a
score, Tab reaches "Save and next" and Enter (or Space) saves.
"""

from __future__ import annotations

import time

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.views import annotate as annotation
from analysis.views import guidance_work, sample_detail
from pages.common import bind, cached, empty_state, filters, plain, sample_texts, store

NA = "N/A"
f = filters()
ds = f.dataset
st.title("Annotate")
st.caption(
    "Score each response 1–5 (or N/A) on the skills its instruction needs, using the rubric. "
    "Every answer is saved at once as your scores; saving an item again replaces your answer."
)

# The name lives in the URL, with the dataset, so a refresh resumes (session state is lost).
bind("annotator", "annotator", default="", valid=lambda v: len(v) <= 60, absent="")
name = st.text_input("Your name", key="annotator", placeholder="e.g. alice", max_chars=60)
name = name.strip()
blind = st.toggle(
    "Blind", value=True, key="ann_blind",
    help="Hide the model's name and every other scorer's scores while you annotate.",
)  # fmt: skip
if not name:
    st.info("Enter your name to start (it becomes your judge name).", icon=":material/person:")
    st.stop()
try:  # the name as stored (NFC): the one progress and previous answers are read under
    name = annotation.check_annotator(name)
except FinegrainError as e:
    st.error(plain(e.message))
    st.stop()

prog = cached(annotation.progress)(name, ds)
if prog.total == 0:  # fill it from Samples, or with the sidebar's slice here
    empty_state(cached(guidance_work.annotate_queue)(f, name))
    st.stop()

st.progress(prog.done / prog.total, text=f"{prog.done} of {prog.total} answered")
message = st.session_state.pop("ann_message", None)  # set by the save callback
if message:
    kind, text = message
    (st.success if kind == "success" else st.error)(plain(text))
pos_key = f"ann_pos::{ds}::{name}"
if pos_key not in st.session_state:  # resume: the first item this annotator has not answered
    st.session_state[pos_key] = (prog.next_index if prog.next_index is not None else 0) + 1
if st.session_state[pos_key] > prog.total:
    st.session_state[pos_key] = prog.total
if prog.next_index is None:
    st.success("You have answered every item in the queue. You can still revise any of them.")
position = st.number_input(
    "Item", min_value=1, max_value=prog.total, key=pos_key,
    help="Items you answered can be opened again; saving replaces your answer.",
)  # fmt: skip
instance_id, model = prog.items[position - 1]
answered = prog.answered[position - 1]
detail = cached(sample_detail.detail)(ds, instance_id, model)
rubric = cached(annotation.rubric)(ds, instance_id)
before = cached(annotation.previous_answer)(name, ds, instance_id, model)

shown_model = "hidden (blind)" if blind else plain(model)
st.markdown(
    f"**Item {position} of {prog.total}** · instance {plain(instance_id)} · model {shown_model}"
    f"{' · ✓ answered (saving replaces it)' if answered else ''}"
)
sample_texts(detail, "a")
if not blind:
    with st.expander("Other scorers"):
        for view in detail.judges:
            if view.judge != name:
                st.markdown(f"**{plain(view.judge)}** · {view.kind}")
                st.text(sample_detail.score_lines(view))

item = f"{ds}::{instance_id}::{model}::{name}"
keys = {s.skill: f"ann::{item}::{s.skill}" for s in rubric}
comment_key = f"ann_comment::{item}"
st.session_state.setdefault("ann_opened", {}).setdefault(item, time.monotonic())


def _save() -> None:
    """Runs before the rerun: save, then move to the next unanswered item."""
    chosen = {s: st.session_state.get(k) for s, k in keys.items()}
    blank = [c.label for c in rubric if chosen[c.skill] is None]  # named as the form shows
    if blank:
        st.session_state["ann_message"] = (
            "error",
            f"Choose a score or N/A for: {', '.join(blank)}",
        )
        return
    answer = annotation.Answer(
        name, ds, instance_id, model,
        {s: None if v == NA else int(v) for s, v in chosen.items()},
        st.session_state.get(comment_key, ""),
        time.monotonic() - st.session_state["ann_opened"].pop(item, time.monotonic()),
    )  # fmt: skip
    try:
        annotation.save_answer(store(), answer)
    except FinegrainError as e:
        st.session_state["ann_message"] = ("error", e.message)
        return
    after = annotation.progress(store(), name, ds)
    st.session_state["ann_message"] = ("success", f"Saved item {position}.")
    if after.next_index is not None:
        st.session_state[pos_key] = after.next_index + 1


with st.form(key=f"ann_form::{item}", border=True):
    for s in rubric:
        options = [*s.choices, NA]
        prev = before.scores.get(s.skill, "missing")
        index = options.index(NA if prev is None else int(prev)) if prev != "missing" else None
        captions = [plain(t) for t in s.rubric] if len(s.rubric) == len(s.choices) else None
        st.radio(
            f"**{plain(s.label)}** — {plain(s.definition)}",
            options,
            index=index,
            key=keys[s.skill],
            captions=[*captions, "not applicable to this instruction"] if captions else None,
        )
    st.text_area("Comment (optional)", value=before.comment, key=comment_key)
    st.form_submit_button("Save and next", type="primary", on_click=_save)

st.caption(
    f"Saved as judge **{plain(name)}** (kind human) in dataset {plain(ds)}: the sidebar's judge "
    "list and the agreement statistics use these scores like any other judge's."
)
