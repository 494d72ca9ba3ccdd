"""Judges page, sections Length bias and Self-preference: does a judge reward long answers more
than the humans do, and does it favour its own model family? Layout only: the numbers come
from analysis/views/judge_length.py and judge_self.py, the figures from
analysis/charts/judges_bias.py, the family mapping's reads and writes from
analysis/views/judge_family.py."""

from __future__ import annotations

from functools import partial

import streamlit as st

from analysis.charts import judges_bias as charts
from analysis.charts.common import chart_config
from analysis.core.errors import FinegrainError
from analysis.core.filters import Filters
from analysis.views import judge_family, judge_length, judge_self
from pages.common import bind, cached, downloads, empty_state, plain, show_error, store

PNG = chart_config("judges-bias")
METHOD_LABELS = {"pearson": "Pearson", "spearman": "Spearman"}
LEVEL_HELP = (
    "instance: within each instance, across its models' answers, averaged over instances (an "
    "instruction that calls for long answers does not count); pooled: over all responses; "
    "model: each model's mean length against its mean score, across models (FLASK Table 5's "
    "level; no flag, its n is the number of models)."
)


def length_bias(f: Filters) -> None:
    st.caption(
        "Correlation of each scorer's score with the response's length in characters, per "
        "skill, for every LLM judge beside the humans (their mean score per item). Length that "
        "goes with quality shows in the humans' correlation too; a judge is **flagged** when "
        f"its excess over the humans on the same items is at least "
        f"{judge_length.PRACTICAL_R:.2f} in r (either way), its paired 95% CI excludes 0, and "
        f"it rests on at least {judge_length.MIN_INSTANCES} instances (instance and pooled "
        "levels). Each cell is judged on its own at 95%: across many skills and judges, an "
        "unbiased cell crosses now and then by chance, so a judge flagged on many skills is "
        "the signal, one flag alone a hint."
    )
    c1, c2 = st.columns(2)
    bind("method", "jd_lb_method", judge_length.METHODS, absent="pearson")
    bind("lblevel", "jd_lb_level", judge_length.LEVELS, absent="instance")
    method = c1.selectbox("Correlation", judge_length.METHODS, key="jd_lb_method",
                          format_func=METHOD_LABELS.get)  # fmt: skip
    level = c2.selectbox("Level", judge_length.LEVELS, key="jd_lb_level", help=LEVEL_HELP)
    r = cached(judge_length.length_bias)(judge_length.LengthQuery(f, method))
    if r.empty is not None:
        empty_state(r.empty, key="jd_lb")
        return
    for note in r.notes:
        st.caption(f":material/info: {plain(note)}")
    st.plotly_chart(charts.length_bars(r, level), key="jd_lb_bars", config=PNG)
    st.caption(plain(r.published_note))
    st.dataframe(judge_length.people_table(r, level), hide_index=True, key="jd_lb_table")
    downloads("Download length bias", partial(judge_length.length_export, r),
              f"length_bias_{f.dataset}", "jd_lb_dl")  # fmt: skip
    _length_scatter(f, r)


def _length_scatter(f: Filters, r: judge_length.LengthBias) -> None:
    st.subheader("Score against length")
    scorers = r.scorers
    c1, c2 = st.columns(2)
    bind("lbscorer", f"jd_lb_scorer::{f.dataset}", scorers, default=scorers[0])
    bind("lbskill", f"jd_lb_skill::{f.dataset}", r.skills, default=r.skills[0])
    scorer = c1.selectbox("Scorer", scorers, key=f"jd_lb_scorer::{f.dataset}",
                          format_func=charts.scorer_name)  # fmt: skip
    skill = c2.selectbox("Skill", r.skills, key=f"jd_lb_skill::{f.dataset}",
                         format_func=lambda s: r.labels.get(s, s))  # fmt: skip
    s = cached(judge_length.length_scatter)(judge_length.ScatterQuery(f, scorer, skill))
    st.plotly_chart(charts.length_scatter(s), key="jd_lb_scatter", config=PNG)
    st.caption(
        "Each dot is a scored response (a random sample when there are many; scores jittered "
        "up and down so that equal scores do not hide each other). The line is the mean score "
        "per tenth of the responses by length, with a 95% CI over instances; for a judge, the "
        "humans' mean on the same responses is beside it."
    )


def self_preference(f: Filters) -> None:
    st.caption(
        "Does a judge score the models of its own family higher than the humans (or the other "
        "LLM judges) do? Per skill: the mean of judge − reference on its family's models minus "
        "the same on the other models, in points; 95% CI over instances. **Flagged** when the "
        "CI excludes 0, the size is at least a quarter point on a 1–5 scale (scaled to a "
        f"criterion's own range) and each side has at least {judge_self.MIN_INSTANCES} "
        "instances. A judge or model without a family is left out: set families below."
    )
    bind("spref", "jd_sp_ref", judge_self.REFERENCES, absent="humans")
    ref = st.segmented_control("Compared with", judge_self.REFERENCES, key="jd_sp_ref",
                               format_func=lambda v: judge_self.REFERENCE_LABELS[v])  # fmt: skip
    r = cached(judge_self.self_preference)(judge_self.SelfQuery(f))
    if r.empty is not None:
        empty_state(r.empty, key="jd_sp")
    for note in r.notes:
        st.caption(f":material/info: {plain(note)}")
    if not r.table.empty:
        st.plotly_chart(charts.self_bars(r, ref or "humans"), key="jd_sp_bars", config=PNG)
        st.dataframe(judge_self.people_table(r, ref or "humans"), hide_index=True,
                     key="jd_sp_table")  # fmt: skip
        downloads("Download self-preference", partial(judge_self.self_export, r),
                  f"self_preference_{f.dataset}", "jd_sp_dl")  # fmt: skip
    if not r.left_out.empty:
        st.markdown("**Judges not compared**")
        st.dataframe(r.left_out, hide_index=True, key="jd_sp_left_out")
    _families(f)


def _families(f: Filters) -> None:
    st.subheader("Families")
    st.caption(
        "The family of each LLM judge and each model (e.g. openai, anthropic, meta). Stored in "
        "the database and shared by every data set. A row with an empty family is unmapped. "
        "*Guess from names* fills the empty ones from the names (gpt → openai, claude → "
        "anthropic, llama → meta …); nothing is stored until you press *Save*."
    )
    guessed = st.session_state.get("jd_fam_guessed", False)
    table = cached(judge_family.editor_table)(f.dataset, guessed)
    edited = st.data_editor(
        table, key=f"jd_fam_editor::{f.dataset}::{guessed}", num_rows="dynamic", hide_index=True,
        column_config={
            "kind": st.column_config.SelectboxColumn("kind", options=judge_family.KINDS),
            "name": st.column_config.TextColumn("name"),
            "family": st.column_config.TextColumn("family"),
            "guess": st.column_config.TextColumn("guess from the name", disabled=True),
        },
    )  # fmt: skip
    row = st.container(horizontal=True)
    if row.button("Guess from names", key="jd_fam_guess", icon=":material/auto_fix_high:"):
        st.session_state["jd_fam_guessed"] = True
        st.rerun()
    if row.button("Save", key="jd_fam_save", type="primary", icon=":material/save:"):
        try:
            n = judge_family.set_families(store(), edited)
        except FinegrainError as e:
            show_error(e)
            return
        st.session_state["jd_fam_guessed"] = False
        st.session_state["jd_fam_saved"] = n
        st.rerun()
    if (n := st.session_state.pop("jd_fam_saved", None)) is not None:
        st.success(f"Saved {n} famil{'y' if n == 1 else 'ies'}.", icon=":material/check:")
