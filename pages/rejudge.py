"""Re-judge: score a selection of responses again with another judge (backend, model, server,
temperature, prompt and rubric), see the estimate, run with progress and cancel, then compare
before and after, and the change in agreement with human labels on exactly that selection."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import streamlit as st

from analysis.core.errors import FinegrainError
from analysis.views import guidance_work, rejudge, scorers
from judges import plan as judge_plan
from judges.config import Setting, default, page_settings, value_type
from judges.jobs import JudgeJob
from judges.prompts import available_templates
from judges.runner import RunOptions
from pages.common import bind, cached, empty_state, filters, plain, show_error, store

# The form's session keys are rj_<field>, but for these (kept from before: tests set them).
KEYS = {"prompt_version": "rj_prompt", "use_reference": "rj_ref"}


def _start(name: str, s: Setting) -> Any:
    """A widget's first value: the backend's variable (the operator's server), nothing for a
    file, the field's default, or the declaration's suggestion for a field without one."""
    if s.env:
        return os.environ.get(s.env, "")
    if s.widget == "file":
        return ""  # empty: the field's default (the store's rubric)
    value = default(name)
    return s.suggest if value is None else value


def _widget(cell: Any, name: str, s: Setting, backend: str | None) -> Any:
    key = KEYS.get(name, f"rj_{name}")
    help_ = s.page_help or f"{s.help[:1].upper()}{s.help[1:]}."
    start = _start(name, s)
    if s.widget == "choice":
        return cell.selectbox(s.label, s.choices, key=key, help=help_)
    if s.widget == "template":
        return cell.selectbox(s.label, available_templates(), key=key, help=help_)
    if s.widget == "toggle":
        return cell.toggle(s.label, value=bool(start), key=key, help=help_)
    if s.widget == "number":
        kind, _ = value_type(name)
        lo, hi, step = (None if b is None else kind(b) for b in (s.min, s.max, s.step))
        return cell.number_input(s.label, lo, hi, kind(start), step, key=key, help=help_)
    disabled = s.backend is not None and s.backend != backend
    return cell.text_input(s.label, value=start or "", key=key, disabled=disabled, help=help_)


def _cells(per_row: int = 4) -> Iterator[Any]:
    while True:
        yield from st.columns(per_row)


def judge_form() -> tuple[dict[str, Any], str]:
    """One widget per setting a visitor may choose (judges/config.py declares them), and the
    prompt file that may replace the prompt version. Returns the raw values and that file."""
    values: dict[str, Any] = {}
    prompt_file = ""
    cells = _cells()
    for fld, s in page_settings():
        values[fld.name] = _widget(next(cells), fld.name, s, values.get("backend"))
        if s.widget == "template":
            prompt_file = next(cells).text_input(
                "…or a prompt file",
                key="rj_prompt_file",
                help="In the store's folder: our JSON template, or FLASK's prompt.jsonl#2",
            )
    return values, prompt_file


f = filters()
ds = f.dataset
st.title("Re-judge")
st.caption(
    "Score chosen responses again with another judge. Answers are stored as they arrive and "
    "reused when the same prompt is asked again, so a cancelled or interrupted run can be "
    "finished later without paying twice. API keys come from the environment only."
)

bind("source", f"rj_source::{ds}", rejudge.SOURCES)  # in the URL, like the limit below
source = st.radio(
    "What to re-judge",
    list(rejudge.SOURCES),
    format_func=rejudge.SOURCES.get,
    horizontal=True,
    key=f"rj_source::{ds}",
)
limit = 0
if source == "filters":
    bind("limit", "rj_limit", default=50, valid=lambda n: 1 <= n <= 5000, absent=50)
    limit = st.number_input("At most (by filters)", 1, 5000, key="rj_limit")
items = cached(rejudge.selection)(f, source, int(limit or 50))
if not items:  # an empty queue (fill it, or use the filters), or an empty slice
    empty_state(cached(guidance_work.rejudge_selection)(f, source))
    st.stop()
st.caption(f"{len(items):,} responses selected.")

with st.container(border=True):
    form_values, prompt_file = judge_form()
    c1, c2 = st.columns([1, 3])
    concurrency = c1.number_input("Concurrent calls", 1, 128, 8, key="rj_concurrency")
    key_env = default("api_key_env")
    c2.caption(
        f"API key: ${key_env} is {'set' if os.environ.get(key_env) else 'not set'}; it is sent "
        "only to OpenAI or $OPENAI_BASE_URL, never to another URL typed here."
    )

try:
    config = rejudge.visitor_config(store(), form_values, prompt_file)
except FinegrainError as e:
    show_error(e)
    st.stop()
st.session_state["rj_config"] = config  # what was built from the form (tests compare it)
selection = judge_plan.Selection(ds, items=items)
plan = cached(judge_plan.plan_run)(config, selection, concurrency=int(concurrency))
st.markdown(f"**Estimate for {plain(config.judge)}**")
st.markdown("\n".join(f"- {plain(line)}" for line in plan.estimate.lines()))

job: JudgeJob | None = st.session_state.get("rj_job")
if st.button(
    "Run", type="primary", icon=":material/play_arrow:", disabled=bool(job and not job.done)
):
    options = RunOptions(concurrency=int(concurrency))
    job = JudgeJob(store(), config, selection, options).start()
    st.session_state["rj_job"] = job


@st.fragment(run_every=0.5)
def _progress() -> None:
    j: JudgeJob | None = st.session_state.get("rj_job")
    if j is None:
        return
    if not j.done:
        p = j.progress
        done = p.done if p else 0
        st.progress(
            min(done / max(len(j.selection.items), 1), 1.0),
            text=f"{done:,} of {len(j.selection.items):,} responses judged",
        )
        if st.button("Cancel", icon=":material/stop:", key="rj_cancel"):
            j.cancel.set()
        return
    if st.session_state.get("rj_shown") != id(j):
        st.session_state["rj_shown"] = id(j)
        if j.error is None:  # the sidebar shows this judge's scores on every page (app.py)
            st.session_state["judged"] = (j.selection.dataset, j.config.judge)
        st.rerun()  # the whole page, to show the results below


_progress()
if job is not None and job.done:
    if job.error is not None:
        show_error(job.error)
        st.stop()
    report = "\n".join(f"- {plain(line)}" for line in job.summary.lines())
    # Never a success while the run failed or answers wait in the journal (lines() says why).
    box = st.error if job.summary.incomplete else st.warning if job.summary.cancelled else None
    (box or st.success)(report)
    judges = cached(scorers.scorer_choices)(ds)
    llms = [j for j in judges.options if not j.startswith("kind:") and j != job.config.judge]
    if not llms:
        st.info("No other judge of this dataset to compare with.")
        st.stop()
    before = st.selectbox("Compare with (before)", llms, key=f"rj_before::{ds}")
    result = cached(rejudge.compare)(ds, job.selection.items, before, job.config.judge)
    st.subheader("Before and after, per sample and skill")
    st.dataframe(
        rejudge.before_after_table(result, before, job.config.judge),
        hide_index=True,
        key="rj_table",
    )
    st.subheader("Agreement with human labels on exactly this selection")
    if result.has_humans and not result.agreement.empty:
        st.dataframe(rejudge.agreement_table(result), hide_index=True, key="rj_agreement")
    else:
        st.caption("No human labels on these responses: annotate them on the Annotate page.")
