"""Re-judge: score a selection of responses again with another judge (backend, model, server,
temperature, prompt and rubric), see the estimate, run with progress and cancel, then compare
before and after, and the change in agreement with human labels on exactly that selection."""

from __future__ import annotations

import os

import streamlit as st

from analysis import agreement, rejudge
from analysis.errors import FinegrainError
from judges import plan as judge_plan
from judges.config import JudgeConfig
from judges.jobs import JudgeJob
from judges.prompts import available_templates
from judges.runner import RunOptions
from pages.common import cached, filters, no_data, plain, show_error, store

f = filters()
ds = f.dataset
st.title("Re-judge")
st.caption(
    "Score chosen responses again with another judge. Answers are stored as they arrive and "
    "reused when the same prompt is asked again, so a cancelled or interrupted run can be "
    "finished later without paying twice. API keys come from the environment only."
)

source = st.radio(
    "What to re-judge",
    list(rejudge.SOURCES),
    format_func=rejudge.SOURCES.get,
    horizontal=True,
    key=f"rj_source::{ds}",
)
limit = (
    st.number_input("At most (by filters)", 1, 5000, 50, key="rj_limit")
    if source == "filters"
    else 0
)
items = cached(rejudge.selection)(f, source, int(limit or 50))
if not items:
    no_data("Nothing to re-judge: add responses to the re-judge queue on the Samples page.")
    st.stop()
st.caption(f"{len(items):,} responses selected.")

with st.container(border=True):
    c1, c2, c3 = st.columns([2, 3, 3])
    backend = c1.selectbox("Backend", ["openai", "transformers"], key="rj_backend")
    model = c2.text_input(
        "Model",
        value="gpt-4o-mini",
        key="rj_model",
        help="API model name; for transformers a cached hub name or a folder in data/",
    )
    base_url = c3.text_input(
        "Base URL (OpenAI-compatible)",
        value=os.environ.get("OPENAI_BASE_URL", ""),
        key="rj_base_url",
        disabled=backend != "openai",
        help="Empty: OpenAI itself. vLLM, Ollama, llama.cpp and Azure servers work too.",
    )
    c4, c5, c6, c7 = st.columns(4)
    temperature = c4.number_input("Temperature", 0.0, 2.0, 0.0, 0.1, key="rj_temperature")
    templates = available_templates()
    prompt = c5.selectbox("Prompt version", templates, key="rj_prompt")
    custom_prompt = c6.text_input(
        "…or a prompt file",
        key="rj_prompt_file",
        help="In the store's folder (data/): our JSON template, or FLASK's prompt.jsonl#2",
    )
    rubric_file = c7.text_input(
        "Rubric file (optional)",
        key="rj_rubric",
        help="In the store's folder (data/): FLASK's skillset_description.json; empty: ours",
    )
    c8, c9, c10, c11 = st.columns(4)
    use_reference = c8.toggle("Show reference answers", value=True, key="rj_ref")
    concurrency = c9.number_input("Concurrent calls", 1, 128, 8, key="rj_concurrency")
    name = c10.text_input("Judge name (optional)", key="rj_name")
    key_env = "OPENAI_API_KEY"
    c11.caption(
        f"API key: ${key_env} is {'set' if os.environ.get(key_env) else 'not set'}; it is sent "
        "only to OpenAI or $OPENAI_BASE_URL, never to another URL typed here."
    )

try:
    prompt_file = rejudge.user_file(store(), custom_prompt)
    rubric_path = rejudge.user_file(store(), rubric_file)
    model = rejudge.user_model(store(), backend, model)
except FinegrainError as e:
    show_error(e)
    st.stop()
config = JudgeConfig(
    backend=backend,
    model=model,
    prompt_version=prompt_file or prompt,
    rubric=rubric_path or "store",
    base_url=base_url.strip() or None,
    temperature=float(temperature),
    use_reference=use_reference,
    name=name.strip() or None,
    trust_base_url=False,  # the operator's key goes only to $OPENAI_BASE_URL (or OpenAI)
)
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
        st.rerun()  # the whole page, to show the results below


_progress()
if job is not None and job.done:
    if job.error is not None:
        show_error(job.error)
        st.stop()
    report = "\n".join(f"- {plain(line)}" for line in job.summary.lines())
    (st.warning if job.summary.cancelled else st.success)(report)
    judges = cached(agreement.scorer_choices)(ds)
    llms = [j for j in judges.options if not j.startswith("kind:") and j != job.config.judge]
    if not llms:
        st.info("No other judge of this dataset to compare with.")
        st.stop()
    before = st.selectbox("Compare with (before)", llms, key=f"rj_before::{ds}")
    result = cached(rejudge.compare)(ds, job.selection.items, before, job.config.judge)
    st.subheader("Before and after, per sample and skill")
    st.dataframe(
        result.table,
        hide_index=True,
        key="rj_table",
        column_config={
            "before": st.column_config.NumberColumn(f"before ({before})", format="%.2f"),
            "after": st.column_config.NumberColumn(f"after ({job.config.judge})", format="%.2f"),
            "change": st.column_config.NumberColumn("change", format="%+.2f"),
            "human": st.column_config.NumberColumn("humans (mean)", format="%.2f"),
        },
    )
    st.subheader("Agreement with human labels on exactly this selection")
    if result.has_humans and not result.agreement.empty:
        st.dataframe(result.agreement, hide_index=True, key="rj_agreement")
    else:
        st.caption("No human labels on these responses: annotate them on the Annotate page.")
