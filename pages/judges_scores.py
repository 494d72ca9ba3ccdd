"""Judges page, sections Leniency and Failures: does a judge score higher or lower than the
humans, and how often does it give no usable score? Layout only: the numbers come from
analysis/views/judge_leniency.py and judge_failures.py, the figures from
analysis/charts/judges_scores.py."""

from __future__ import annotations

from functools import partial

import streamlit as st

from analysis.charts import judges_scores as charts
from analysis.charts.common import chart_config
from analysis.core.filters import Filters
from analysis.views import judge_failures as jf
from analysis.views import judge_leniency as jl
from pages.common import bind, cached, downloads, empty_state, plain

PNG = chart_config("judges-scores")


def leniency(f: Filters) -> None:
    st.caption(
        "Mean judge score minus the humans' (the mean of the human scores of each item) on the "
        "items both scored, per skill and for all of a judge's skills; positive: lenient, "
        "negative: harsh. A cell is **flagged** when its 95% CI (1,000 resamples of instances) "
        f"excludes 0, the shift is at least {jl.PRACTICAL_POINTS} points on a 1–5 scale (other "
        f"scales in proportion) and it rests on at least {jl.MIN_FLAG_INSTANCES} instances."
    )
    r = cached(jl.leniency)(jl.LeniencyQuery(f))
    if r.empty is not None:
        empty_state(r.empty, key="jd_ln")
        return
    if r.unshared:
        st.caption(f":material/info: No item in common with the humans, left out: "
                   f"{plain(', '.join(r.unshared))}.")  # fmt: skip
    st.plotly_chart(charts.leniency_matrix(r), key="jd_ln_matrix", config=PNG)
    st.dataframe(jl.cells_table(r), hide_index=True, key="jd_ln_table")
    downloads("Download leniency", partial(jl.cells_csv, r), f"leniency_{f.dataset}", "jd_ln_dl")
    st.subheader("Score distributions")
    st.caption(
        "Share of each score and of N/A per scorer, on the items the humans labelled; the "
        "humans' bar pools every annotator's scores."
    )
    skills = jl.dist_skills(r)
    bind("lnskill", f"jd_ln_skill::{f.dataset}", skills, default=skills[0])
    skill = st.selectbox("Skill", skills, key=f"jd_ln_skill::{f.dataset}",
                         format_func=lambda s: r.labels.get(s, s))  # fmt: skip
    st.plotly_chart(charts.score_distribution(r, skill), key="jd_ln_dist", config=PNG)
    st.dataframe(jl.dist_table(r, skill), hide_index=True, key="jd_ln_dist_table")
    downloads("Download the distributions", partial(jl.dist_csv, r),
              f"score_distributions_{f.dataset}", "jd_ln_dist_dl")  # fmt: skip


def failures(f: Filters) -> None:
    st.caption(
        "Per LLM judge: the share of its latest scores that are N/A, and of its latest "
        "judgments (one per response: a re-judge replaces the earlier one) whose output could "
        "not be parsed or whose call failed, per skill (counted for every skill the item "
        "needs: such a judgment scores none of them). 95% CIs: the wider of the instance "
        "bootstrap's and Wilson's."
    )
    r = cached(jf.failures)(jf.FailuresQuery(f))
    if r.empty is not None:
        empty_state(r.empty, key="jd_fl")
        return
    options = jf.rate_skills(r)
    labels = jf.rate_labels(r)
    bind("flskill", f"jd_fl_skill::{f.dataset}", options, absent=None)
    skill = st.selectbox("Skill", options, key=f"jd_fl_skill::{f.dataset}",
                         format_func=lambda s: labels.get(s) or jl.ALL_SKILLS)  # fmt: skip
    st.plotly_chart(charts.failure_rates(r, skill), key="jd_fl_rates", config=PNG)
    st.dataframe(jf.rates_table(r), hide_index=True, key="jd_fl_table")
    downloads("Download the rates", partial(jf.rates_csv, r), f"judge_failures_{f.dataset}",
              "jd_fl_dl")  # fmt: skip
    st.subheader("Failing judgments")
    if r.failing.empty:
        st.caption("No latest judgment failed: every output was parsed and every call answered.")
        return
    st.caption(
        f"{len(r.failing):,} latest judgments gave no score. The output's start is shown as "
        "text; open a sample to read it whole."
    )
    st.dataframe(
        jf.failing_view(r), hide_index=True, key="jd_fl_failing",
        column_config={"Sample": st.column_config.LinkColumn("Sample", display_text="open")},
    )  # fmt: skip
    downloads("Download the failing judgments", partial(jf.failing_csv, r),
              f"failing_judgments_{f.dataset}", "jd_fl_failing_dl")  # fmt: skip
