"""Judges page, Stability: Krippendorff's α between each LLM judge's runs on the same items, per
skill with its 95% CI, beside the humans' α and FLASK's published figure; and a form that
launches a repeat run (a sample of a judge's items asked again at a temperature above 0)
through the runner the Re-judge page uses (``JudgeJob``), with its estimate and progress."""

from __future__ import annotations

import os
from functools import partial

import streamlit as st

from analysis.charts.common import chart_config
from analysis.charts.judges_stability import stability_chart
from analysis.core.filters import Filters
from analysis.views import judge_stability as view
from judges.config import default
from judges.jobs import JudgeJob
from judges.runner import RunOptions
from pages.common import bind, cached, downloads, empty_state, plain, show_error, store

JOB = "jd_stab_job"  # the repeat run in progress (or the last one), in the session


def draw(f: Filters) -> None:
    st.caption(
        "Does a judge give the same scores when asked the same question again? Krippendorff's "
        "α between its runs (the runs are the raters) on the items scored in two or more of "
        "them, every run's scores included (a repeat's scores are history: the judge's current "
        "scores, which the other tabs show, stay as they were). Beside it the humans' α among "
        "themselves, and FLASK's α of GPT-4 over three "
        "runs at temperature 1.0. N/A is no score. 95% CIs resample instances."
    )
    levels = list(view.LEVELS)
    bind("alpha", "jd_stab_level", levels, absent=levels[0])
    level = st.radio(
        "α level", levels, format_func=view.LEVELS.get, horizontal=True, key="jd_stab_level"
    )
    result = cached(view.stability)(f)
    if result.note is not None:
        empty_state(result.note, key="jd_stab")
    if not result.table.empty:
        st.plotly_chart(
            stability_chart(result, level),
            config=chart_config("judge-stability"),
            key="jd_stab_chart",
        )
        st.caption(
            f"Flagged unstable: the whole 95% CI of α is below {view.UNSTABLE_ALPHA} "
            f"(Krippendorff's floor for tentative conclusions), on at least {view.MIN_ITEMS} "
            "items. The same-score rate is the share of pairs of runs that gave an item the "
            "same score."
        )
        st.dataframe(view.stability_table(result, level), hide_index=True, key="jd_stab_table")
        downloads(
            "Download stability", partial(view.stability_csv, result, level),
            f"judge_stability_{f.dataset}", "jd_stab_dl",
        )  # fmt: skip
    _launch(f, result.repeatable)


def _launch(f: Filters, judges: tuple[str, ...]) -> None:
    """The form: judge, sample size, temperature (and its server), the estimate, Launch."""
    st.subheader("Launch a repeat run")
    if not judges:
        st.caption(
            "No judge of this dataset can be asked again: imported and simulated scores carry "
            "no configuration to call. Run a judge on the Re-judge page (or with `finegrain "
            "judge`), then repeat it here."
        )
        return
    with st.container(border=True):
        c1, c2, c3 = st.columns([2, 1, 1])
        judge = c1.selectbox("Judge", judges, key=f"jd_stab_judge::{f.dataset}")
        sample = c2.number_input("Items (sample)", 1, 100_000, 100, key="jd_stab_sample")
        temperature = c3.number_input(
            "Temperature", 0.0, 2.0, view.DEFAULT_TEMPERATURE, 0.1, key="jd_stab_temperature",
            help="Above 0: a repeat at 0 gets the same answers and measures nothing.",
        )  # fmt: skip
        c4, c5 = st.columns([3, 1])
        base_url = c4.text_input(
            "Base URL (OpenAI-compatible)", os.environ.get("OPENAI_BASE_URL", ""),
            key="jd_stab_base_url", help="Where the judge is served now (empty: OpenAI itself, "
            "or $OPENAI_BASE_URL). The key is sent only to $OPENAI_BASE_URL or OpenAI.",
        )  # fmt: skip
        concurrency = c5.number_input("Concurrent calls", 1, 128, 8, key="jd_stab_concurrency")
        key_env = default("api_key_env")
        st.caption(f"API key: ${key_env} is {'set' if os.environ.get(key_env) else 'not set'}.")
    # A refused repeat (temperature 0, nothing to repeat) is shown here and the section ends.
    plan = cached(view.repeat_plan)(judge, f.dataset, int(sample), float(temperature), base_url)
    st.markdown("\n".join(f"- {plain(line)}" for line in plan.lines() + plan.plan.estimate.lines()))
    job: JudgeJob | None = st.session_state.get(JOB)
    busy = bool(job and not job.done)
    if st.button(
        "Launch", type="primary", icon=":material/replay:", disabled=busy, key="jd_stab_go"
    ):
        options = RunOptions(concurrency=int(concurrency))
        st.session_state[JOB] = JudgeJob(store(), plan.config, plan.selection, options).start()
    _progress()
    _outcome()


@st.fragment(run_every=0.5)
def _progress() -> None:
    job: JudgeJob | None = st.session_state.get(JOB)
    if job is None:
        return
    if not job.done:
        done = job.progress.done if job.progress else 0
        total = max(len(job.selection.items), 1)
        st.progress(min(done / total, 1.0), text=f"{done:,} of {total:,} items judged again")
        if st.button("Cancel", icon=":material/stop:", key="jd_stab_cancel"):
            job.cancel.set()
        return
    if st.session_state.get("jd_stab_shown") != id(job):
        st.session_state["jd_stab_shown"] = id(job)
        st.rerun()  # the whole section: the new run's scores are in the figures above


def _outcome() -> None:
    job: JudgeJob | None = st.session_state.get(JOB)
    if job is None or not job.done:
        return
    if job.error is not None:
        show_error(job.error)
        return
    s = job.summary
    report = "\n".join(f"- {plain(line)}" for line in s.lines())
    box = st.error if s.incomplete else st.warning if s.cancelled else st.success
    box(f"Repeat {job.selection.repeat} of {plain(job.config.judge)}:\n{report}")
