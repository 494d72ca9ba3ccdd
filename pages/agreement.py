"""Human vs judge: how far a judge agrees with human labels (or any scorer with another), per
skill, with the human–human ceiling, confusion, scatter, slices and the worst disagreements."""

from __future__ import annotations

import streamlit as st

from analysis.charts import agreement as agreement_charts
from analysis.core.errors import FinegrainError
from analysis.stats.agreement import LABELS, STATISTICS
from analysis.views import agreement, agreement_report, queues, scorers
from pages.common import cached, filters, no_data, plain, show_error, store

f = filters()
st.title("Human vs judge")
st.caption(
    "Agreement between two scorers on the items both scored (instance × model × skill). "
    "A scorer is a judge, a human annotator, or a group (the mean of all humans or all LLM "
    "judges per item). 95% CIs come from 1,000 bootstrap resamples of instances. The sidebar's "
    "filters apply; its Judge does not (choose A and B here)."
)

choices = cached(scorers.scorer_choices)(f.dataset)
if choices.default_a is None or choices.default_b is None:
    st.info(
        "This dataset needs at least two scorers to compare. Import human labels with "
        "`python -m analysis import-scores FILE --kind human`, or annotate on the Annotate page.",
        icon=":material/info:",
    )
    st.stop()

ds = f.dataset
c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 2])
a = c1.selectbox(
    "A (judge)",
    choices.options,
    index=choices.options.index(choices.default_a),
    format_func=lambda o: choices.labels.get(o, o),
    key=f"agr_a::{ds}",
)
b = c2.selectbox(
    "B (reference)",
    choices.options,
    index=choices.options.index(choices.default_b),
    format_func=lambda o: choices.labels.get(o, o),
    key=f"agr_b::{ds}",
)
level = c3.selectbox(
    "Correlation level",
    agreement.LEVELS,
    key="agr_level",
    help="pooled: over all aligned items; instance: across the models' responses within each "
    "instance, averaged over instances (instances where a side is constant are skipped); "
    "system: over the per-model means. MAE, agreement, κ and α are always over items.",
)
skill = c4.selectbox(
    "Skill", [None, *choices.skills], format_func=scorers.skill_label, key=f"agr_skill::{ds}"
)
by = c5.selectbox("Slice by", agreement.SLICE_FIELDS, key="agr_by")
if a == b:
    st.warning("Choose two different scorers for A and B.", icon=":material/compare_arrows:")
    st.stop()

q = agreement.AgreementQuery(f, a, b, level, skill, by)
r = cached(agreement.agreement)(q)
if r.pairs.empty:
    no_data(f"{plain(a)} and {plain(b)} have no aligned scores in this slice.")
    st.stop()
for note in r.notes:
    st.caption(f":material/info: {plain(note)}")

focus = skill or agreement.OVERALL
statistic = st.segmented_control(
    "Statistic",
    STATISTICS,
    default="alpha_ordinal",
    format_func=lambda s: LABELS[s],
    key="agr_stat",
)
st.plotly_chart(agreement_charts.agreement_bars(r, statistic or "alpha_ordinal"), key="agr_bars")
st.caption(
    "Grey bars: Krippendorff's α among all human raters of the skill (the ceiling a judge can "
    "be expected to reach); shown for the α statistics when 2+ humans rated the slice."
)
st.dataframe(agreement_report.wide_table(r.stats), hide_index=True, key="agr_table")
with st.expander("Exact figures (long format)"):
    st.dataframe(r.stats, hide_index=True, key="agr_exact")
    st.download_button(
        "Download statistics (CSV)",
        agreement_report.stats_csv(r),
        file_name=f"agreement_{ds}.csv",
        mime="text/csv",
    )

left, right = st.columns(2)
left.plotly_chart(agreement_charts.confusion_heatmap(r, focus), key="agr_confusion")
right.plotly_chart(agreement_charts.agreement_scatter(r, focus), key="agr_scatter")

st.subheader(f"By {by} (pooled)")
st.dataframe(
    agreement_report.wide_table(agreement.for_skill(r.slices, focus), "slice"),
    hide_index=True,
    key="agr_slices",
)

cols = st.columns(2)
with cols[0]:
    st.subheader("Human–human ceiling")
    if r.ceiling.empty:
        st.caption("Needs two or more human raters on the same items in this slice.")
    else:
        st.dataframe(agreement_report.wide_table(r.ceiling), hide_index=True, key="agr_ceiling")
with cols[1]:
    st.subheader("Rank stability")
    st.caption("Kendall τ-b between the model rankings A and B produce (per-model means).")
    st.dataframe(agreement_report.wide_table(r.ranks), hide_index=True, key="agr_ranks")

st.subheader("Worst disagreements")
st.caption("Items ranked by |A − B|; open one to read the instruction, response and rationales.")
st.dataframe(
    agreement.worst(r, focus),
    hide_index=True,
    key="agr_worst",
    column_order=["link", "abs_diff", "a", "b", "skill", "model", "instance_id", "difficulty"],
    column_config={
        "link": st.column_config.LinkColumn("sample", display_text="open"),
        "abs_diff": st.column_config.NumberColumn("|A − B|", format="%.2f"),
        "a": st.column_config.NumberColumn("A", format="%.2f"),
        "b": st.column_config.NumberColumn("B", format="%.2f"),
    },
)
n_queue = st.number_input("How many of the worst", 1, 200, 20, key="agr_queue_n")
if st.button("Add them to the re-judge queue", icon=":material/playlist_add:", key="agr_queue"):
    keys = agreement.worst_keys(r, focus, int(n_queue))
    try:
        added = queues.add(store(), queues.REJUDGE, ds, keys)
    except FinegrainError as e:
        show_error(e)
    else:
        st.success(f"{added} responses added to the re-judge queue (see the Re-judge page).")
st.download_button(
    "Download the disagreement list (CSV)",
    agreement_report.disagreements_csv(r),
    file_name=f"disagreements_{ds}.csv",
    mime="text/csv",
    key="agr_dl_pairs",
)
with st.expander("Items per skill (aligned, N/A on one side, scored by one side only)"):
    st.dataframe(r.counts, hide_index=True, key="agr_counts")
