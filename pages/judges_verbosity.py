"""Judges page, Verbosity section: does a judge's score move when a response is made wordier
with the same content? The report of the stored checks (chart, table, CSV, each pair with links
to both texts on Samples), then a form that launches a new check (rewrite a sample, judge both
versions) with an estimate, progress and cancel."""

from __future__ import annotations

import os
from functools import partial

import streamlit as st

from analysis.charts.common import chart_config
from analysis.charts.judges_verbosity import verbosity_figure
from analysis.core.errors import FinegrainError
from analysis.core.filters import Filters
from analysis.views import judge_verbosity as jv
from analysis.views import rejudge
from judges.outcome import RunOptions
from judges.rewrite import rewriter_config
from judges.verbosity import (
    CheckRequest,
    VerbosityJob,
    estimate_lines,
    runnable_judges,
    stored_judge,
)
from pages.common import cached, downloads, empty_state, plain, show_error, store

JOB = "jd_vb_job"
LINK = {
    "Original": st.column_config.LinkColumn("Original", display_text="open"),
    "Rewrite": st.column_config.LinkColumn("Rewrite", display_text="open"),
}


def draw(f: Filters) -> None:
    if _report(f):
        st.divider()
        _launch(f)


def _report(f: Filters) -> bool:
    """The stored checks' report; False when the dataset holds a check's rewrites (no check
    of rewrites of rewrites is offered)."""
    key = f"jd_vb_check::{f.dataset}"  # one pick per dataset: another's checks differ
    r = cached(jv.verbosity_report)(f, st.session_state.get(key))
    if len(r.checks) > 1:
        st.selectbox("Check", list(r.checks["check_dataset"]), key=key,
                     help="Each check is a rewriter's dataset of wordier rewrites.")  # fmt: skip
    why = jv.empty(r)
    if r.check is not None:
        st.caption(plain(" · ".join(jv.check_lines(r))))
    if why is not None:
        empty_state(why, key="jd_vb_empty")
        return r.rewrites_of is None
    st.plotly_chart(
        verbosity_figure(r.table, r.labels, flask_same=jv.FLASK_SAME_SCORE),
        config=chart_config("judges-verbosity"), key="jd_vb_chart",
    )  # fmt: skip
    st.dataframe(jv.report_table(r), hide_index=True, key="jd_vb_table")
    downloads("Download", partial(jv.report_csv, r), "judges-verbosity", "jd_vb_dl")
    with st.expander(f"Pairs: original and rewrite, per judge and skill ({len(r.pairs):,})"):
        st.dataframe(jv.pairs_table(r), hide_index=True, key="jd_vb_pairs", column_config=LINK)
    if len(r.failures):
        with st.expander(f"Failed rewrites ({len(r.failures):,}), kept with their error"):
            st.dataframe(jv.failures_table(r), hide_index=True, key="jd_vb_failures")
    return True


def _request(f: Filters) -> CheckRequest | None:
    """The check the form describes, or None (with the reason shown)."""
    judges = cached(runnable_judges)(f.dataset)
    if not judges:
        st.info(
            "No judge of this dataset can be asked again here: the check needs an LLM judge run "
            "by Re-judge or `finegrain judge` (imported and simulated judges cannot be re-run)."
        )
        return None
    c = st.columns(3)
    judge_name = c[0].selectbox("Judge to check", judges, key="jd_vb_judge")
    judge_url = c[1].text_input("Judge's base URL", key="jd_vb_judge_url",
                                value=os.environ.get("OPENAI_BASE_URL", ""))  # fmt: skip
    source = c[2].radio("Responses", ["sample", "queue"], key="jd_vb_source", horizontal=True,
                        format_func={"sample": "A sample of the slice",
                                     "queue": "The re-judge queue"}.get)  # fmt: skip
    c = st.columns(3)
    backend = c[0].selectbox("Rewriting backend", ["openai", "transformers"], key="jd_vb_backend")
    model = c[1].text_input("Rewriting model", "gpt-4o-mini", key="jd_vb_model")
    url = c[2].text_input("Rewriter's base URL", key="jd_vb_url",
                          value=os.environ.get("OPENAI_BASE_URL", ""),
                          disabled=backend != "openai")  # fmt: skip
    c = st.columns(3)
    n = c[0].number_input("Sample size", 1, 5000, 50, key="jd_vb_n")
    seed = c[1].number_input("Seed", 0, 2**31 - 1, 0, key="jd_vb_seed")
    concurrency = c[2].number_input("Concurrent calls", 1, 128, 8, key="jd_vb_concurrency")
    try:
        values = {"backend": backend, "model": rejudge.user_model(store(), backend, model)}
        rewriter = rewriter_config(
            values | ({"base_url": url} if backend == "openai" else {}),
            "the Verbosity form", visitor=True,
        )  # fmt: skip
        judge = stored_judge(store(), judge_name, base_url=judge_url.strip() or None,
                             trust_base_url=False)  # fmt: skip
    except FinegrainError as e:
        show_error(e)
        return None
    items = (
        cached(rejudge.selection)(f, "queue")
        if source == "queue"
        else cached(jv.sample)(f, int(n), int(seed))
    )
    if not items:
        st.info("Nothing to rewrite: the re-judge queue or the sidebar's slice is empty.")
        return None
    options = RunOptions(concurrency=int(concurrency))
    return CheckRequest(f.dataset, judge, rewriter, tuple(items), options)


def _launch(f: Filters) -> None:
    st.subheader("Run a verbosity check")
    st.caption(
        "Rewrites the chosen responses to be wordier with the same content, then the judge "
        "scores the originals it has not scored yet and the rewrites. The rewrites go to a "
        "dataset of their own (readable on Samples); this dataset's numbers do not change. "
        "API keys come from the environment and go only to OpenAI or $OPENAI_BASE_URL."
    )
    with st.container(border=True):
        req = _request(f)
    if req is None:
        return
    st.markdown(f"**Estimate for {len(req.items):,} responses**")
    lines = cached(estimate_lines)(req)
    st.markdown("\n".join(f"- {plain(line)}" for line in lines))
    job: VerbosityJob | None = st.session_state.get(JOB)
    busy = bool(job and not job.done)
    if st.button("Launch", type="primary", icon=":material/play_arrow:", disabled=busy,
                 key="jd_vb_launch"):  # fmt: skip
        st.session_state[JOB] = VerbosityJob(store(), req).start()
    _progress()
    _outcome()


@st.fragment(run_every=0.5)
def _progress() -> None:
    job: VerbosityJob | None = st.session_state.get(JOB)
    if job is None:
        return
    if not job.done:
        phase, s = job.progress or ("rewrite", None)
        done, total = (s.done, max(s.items, 1)) if s else (0, 1)
        st.progress(min(done / total, 1.0), text=f"{phase}: {done:,} of {total:,}")
        if st.button("Cancel", icon=":material/stop:", key="jd_vb_cancel"):
            job.cancel.set()
        return
    if st.session_state.get("jd_vb_shown") != id(job):
        st.session_state["jd_vb_shown"] = id(job)
        st.rerun()  # the whole page: the report above shows the new check


def _outcome() -> None:
    job: VerbosityJob | None = st.session_state.get(JOB)
    if job is None or not job.done:
        return
    if job.error is not None:
        show_error(job.error)
        return
    lines = "\n".join(f"- {plain(line)}" for line in job.result.lines())
    (st.warning if job.result.incomplete else st.success)(lines)
