"""Human vs judge: how far a judge agrees with human labels (or any scorer with another), per
skill, with the human–human ceiling, confusion, scatter, slices and the worst disagreements."""

from __future__ import annotations

from functools import partial

import streamlit as st

from analysis.charts import agreement as agreement_charts
from analysis.charts.common import chart_config
from analysis.core.errors import FinegrainError
from analysis.stats.agreement import LABELS, STATISTICS
from analysis.views import agreement, agreement_report, guidance_work, queues, scorers
from pages.common import bind, cached, downloads, empty_state, filters, plain, show_error, store

PNG = chart_config("agreement")  # the toolbar's PNG download, at twice the resolution
# The sections below the charts, as tabs computed only when open (fixed labels: the open tab
# is kept in the session by its label).
SECTIONS = ["Slices (pooled)", "Human ceiling", "Rank stability"]

f = filters()
st.title("Human vs judge")
st.caption(
    "Agreement between two scorers on the items both scored (instance × model × skill). "
    "A scorer is a judge, a human annotator, or a group (the mean of all humans or all LLM "
    "judges per item). 95% CIs come from 1,000 bootstrap resamples of instances. The sidebar's "
    "filters apply; its Judge does not (choose A and B here)."
)

choices = cached(scorers.scorer_choices)(f.dataset)
gap = cached(guidance_work.scorers_gap)(f)  # a missing scorer (stops), or no humans (a note)
if gap is not None:
    empty_state(gap, key="scorers")
if choices.default_a is None or choices.default_b is None:
    st.stop()

ds = f.dataset
c1, c2, c3, c4, c5 = st.columns([3, 3, 2, 2, 2])
# Every pick is in the URL (analysis.views.state): a, b, level, skill, by, stat.
bind("a", f"agr_a::{ds}", choices.options, default=choices.default_a)
bind("b", f"agr_b::{ds}", choices.options, default=choices.default_b)
bind("level", "agr_level", agreement.LEVELS, absent=agreement.LEVELS[0])
bind("skill", f"agr_skill::{ds}", [None, *choices.skills])
bind("by", "agr_by", agreement.SLICE_FIELDS, absent=agreement.SLICE_FIELDS[0])
a = c1.selectbox(
    "A (judge)", choices.options, format_func=lambda o: choices.labels.get(o, o), key=f"agr_a::{ds}"
)
b = c2.selectbox(
    "B (reference)",
    choices.options,
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
    "Skill", [None, *choices.skills], format_func=choices.skill_label, key=f"agr_skill::{ds}"
)
by = c5.selectbox("Slice by", agreement.SLICE_FIELDS, key="agr_by")
if a == b:
    st.warning("Choose two different scorers for A and B.", icon=":material/compare_arrows:")
    st.stop()

q = agreement.AgreementQuery(f, a, b, level, skill, by)
# Each section is computed when it is on screen (one cached call each); the values are those
# of the full computation, which the CLI prints.
r = cached(agreement.agreement)(q, sections=("stats",))
if r.pairs.empty:
    empty_state(cached(guidance_work.aligned_items)(q), key="aligned")
    st.stop()
for note in r.notes:
    st.caption(f":material/info: {plain(note)}")

focus = skill  # None: all criteria
bind("stat", "agr_stat", STATISTICS, default="alpha_ordinal", absent="alpha_ordinal")
statistic = st.segmented_control(
    "Statistic", STATISTICS, format_func=lambda s: LABELS[s], key="agr_stat"
)
stat = statistic or "alpha_ordinal"
st.plotly_chart(agreement_charts.agreement_bars(r, stat), key="agr_bars", config=PNG)
st.caption(
    "A against B per skill, then all criteria pooled. When B is the mean of several humans it "
    "is steadier than any one human, so these bars cannot be set beside agreement between "
    "single humans: the fair comparison is in *Human ceiling* below."
)
st.dataframe(agreement_report.people_wide(r, r.stats), hide_index=True, key="agr_table")
with st.expander("Exact figures (long format)"):
    st.dataframe(agreement_report.exact_table(r), hide_index=True, key="agr_exact")
    downloads(
        "Download statistics", partial(agreement_report.stats_csv, r), f"agreement_{ds}",
        "agr_dl_stats",
    )  # fmt: skip

left, right = st.columns(2)
left.plotly_chart(agreement_charts.confusion_heatmap(r, focus), key="agr_confusion", config=PNG)
right.plotly_chart(agreement_charts.agreement_scatter(r, focus), key="agr_scatter", config=PNG)

bind("section", "agr_section", SECTIONS, absent=SECTIONS[0])
sliced, ceiling, ranks = st.tabs(SECTIONS, key="agr_section", on_change="rerun")
if sliced.open:
    rs = cached(agreement.agreement)(q, sections=("slices_shown",))
    sliced.subheader(f"By {by} (pooled)")
    sliced.dataframe(
        agreement_report.people_wide(rs, rs.slices, "slice"), hide_index=True, key="agr_slices"
    )

if ceiling.open:
    rc = cached(agreement.agreement)(q, sections=("ceiling",))
    ceiling.subheader("Human ceiling (leave-one-out)")
    ceiling.caption(
        "Does A agree with the humans as well as a human does? Each human is held out in turn "
        "and compared with the mean of the **other** humans on the items they scored: that is "
        "the human ceiling (grey). A is compared with that same mean of the other humans on the "
        "same items (blue). Both face the same reference, so the two can be compared; the "
        "difference has a paired 95% CI. The held-out pairs of all humans are pooled (an item "
        "counts once per human who scored it); statistics over items, whatever the correlation "
        "level above. Last column: Krippendorff's α among the individual humans, the panel's "
        "own reliability."
    )
    if rc.ceiling.empty:
        for note in rc.notes[len(r.notes) :]:  # why there is none
            ceiling.caption(f":material/info: {plain(note)}")
        ceiling.caption(
            "Needs two or more human raters, other than A, who scored the same items as A in "
            "this slice."
        )
    else:
        ceiling.plotly_chart(
            agreement_charts.ceiling_bars(rc, stat), key="agr_ceiling_bars", config=PNG
        )
        ceiling.dataframe(
            agreement_report.ceiling_table(rc, stat), hide_index=True, key="agr_ceiling"
        )
        with ceiling.expander("Every ceiling figure (long format)"):
            st.dataframe(
                agreement_report.ceiling_long(rc), hide_index=True, key="agr_ceiling_exact"
            )
            downloads(
                "Download the human ceiling", partial(agreement_report.ceiling_csv, rc),
                f"human_ceiling_{ds}", "agr_dl_ceiling",
            )  # fmt: skip

if ranks.open:
    rr = cached(agreement.agreement)(q, sections=("ranks",))
    ranks.subheader("Rank stability")
    ranks.caption("Kendall τ-b between the model rankings A and B produce (per-model means).")
    ranks.dataframe(agreement_report.people_wide(rr, rr.ranks), hide_index=True, key="agr_ranks")

st.subheader("Worst disagreements")
st.caption("Items ranked by |A − B|; open one to read the instruction, response and rationales.")
st.dataframe(
    agreement_report.worst_table(r, focus),
    hide_index=True,
    key="agr_worst",
    column_config={"Sample": st.column_config.LinkColumn("Sample", display_text="open")},
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
downloads(
    "Download the disagreement list", partial(agreement_report.disagreements_csv, r),
    f"disagreements_{ds}", "agr_dl_pairs",
)  # fmt: skip
with st.expander("Items per skill (aligned, N/A on one side, scored by one side only)"):
    st.dataframe(agreement_report.counts_table(r), hide_index=True, key="agr_counts")
