"""Skill radar: models side by side per skill (or ability) with CIs and n, the FLASK paper's
published scores as an overlay, and a paired comparison of two models in a section computed
only when open (its state in the URL: ``compare``)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import streamlit as st

from analysis.charts import radar as radar_charts
from analysis.charts.common import chart_config
from analysis.views import guidance_data, overview, radar
from analysis.views.state import ALWAYS
from pages.common import bind, cached, downloads, empty_state, filters, plain, url_has_link

PNG = chart_config("radar")  # the toolbar's PNG download, at twice the resolution
AXIS_KINDS = {"skill": "12 skills", "ability": "4 abilities"}

f = filters()
st.title("Skill radar")
st.caption(
    "Mean score per skill for each model, over non-N/A scores. Whiskers: 95% CI with the "
    "instance as the unit (cluster-robust t-interval; it matches an instance bootstrap); n under "
    "each axis = the scores behind it. A dataset with its own criteria shows them as the axes, "
    "on their own scale."
)
ranking = cached(radar.model_ranking)(f, cached(overview.filter_options)(f.dataset).models)
if not ranking.ranked:  # no model has scores from this judge here (or no judge): say why
    empty_state(cached(guidance_data.scores)(f))
    st.stop()
left, mid, right = st.columns([3, 2, 2])
# keyed by the sidebar's selection: a new selection starts from its own default
models_key = f"radar_models::{f.dataset}::{','.join(f.models)}"
bind("radar", models_key, ranking.options, default=ranking.defaults(radar_charts.MAX_OVERLAID),
     absent=ALWAYS)  # fmt: skip
picked = left.multiselect(
    "Models on the radar",
    ranking.options,
    format_func=ranking.label,
    key=models_key,
    help="Up to 4 models share one radar; more are drawn as small multiples, one per model. "
    "By default the 4 best by Overall (the mean of the judge's scores in this slice); models "
    "the judge has not scored here are listed last, marked, and never picked by default.",
)
bind("axes", "radar_axes", AXIS_KINDS, default="skill", absent="skill")
kind = mid.segmented_control("Axes", list(AXIS_KINDS), format_func=AXIS_KINDS.get, key="radar_axes")
by = kind or "skill"
subset = radar.published_subset(f)
bind("published", "radar_published", default=False, absent=False)
show_pub = right.toggle(
    "Published scores (FLASK paper)",
    value=False,
    key="radar_published",
    disabled=subset is None or by != "skill",
    help="GPT-4-judged per-skill means from Ye et al. (ICLR 2024), Table 9 (full set) or "
    "Table 10 (FLASK-Hard), drawn dashed. Only on FLASK data and for the 12 skills.",
)
if not picked:
    st.info("Pick at least one model to draw the radar.", icon=":material/info:")
    st.stop()

data = cached(radar.radar_data)(replace(f, models=tuple(picked)), by)
if data.empty:  # every picked model lacks this judge's scores here
    empty_state(guidance_data.unscored_models(f, tuple(picked), ranking.ranked))
    st.stop()

chart_col, table_col = (
    st.columns([3, 2])
    if len(picked) <= radar_charts.MAX_OVERLAID
    else (st.container(), st.container())
)
chart_col.plotly_chart(
    radar_charts.radar_chart(data, show_published=show_pub), key="radar_chart", config=PNG
)
if show_pub and data.published_subset:
    table = "Table 10 (FLASK-Hard)" if data.published_subset == "hard" else "Table 9 (full set)"
    chart_col.caption(
        f"Dashed: published means, {table} of the FLASK paper, GPT-4 judge, whole set; the "
        "sidebar's domain, difficulty and task filters do not apply to them."
    )
with table_col:
    st.markdown(f"**Mean, 95% CI, n and N/A per {by} × model** · judge {plain(f.judge)}")
    st.dataframe(radar.display_table(data, by), hide_index=True, key="radar_table", height=420)
    downloads("Download", partial(radar.table_csv, data, by), "radar", "radar_csv")

# The paired comparison (a bootstrap and an exact test per axis) is computed only while its
# section is open; open or closed is in the URL (compare). A link that names the two models
# (ca, cb) opens it.
bind("compare", "radar_compare", default=url_has_link("ca") or url_has_link("cb"), absent=False)
section = st.expander(
    "Compare two models", key="radar_compare", on_change="rerun", icon=":material/compare_arrows:"
)
if not section.open:
    st.stop()
with section:
    if len(picked) < 2:
        st.info("Pick two or more models above to compare them.", icon=":material/info:")
        st.stop()
    ca, cb = st.columns(2)
    ordered = ranking.order(picked)  # best first
    # By default the top two (B: the next best that shares scored instances with A, if not)
    top, partner = cached(radar.compare_defaults)(f, tuple(ordered))
    bind("ca", "radar_a", ordered, default=top)
    a = ca.selectbox("Model A", ordered, key="radar_a", format_func=ranking.label)
    others = [m for m in ordered if m != a]
    bind("cb", "radar_b", others, default=partner if a == top and partner in others else others[0])
    b = cb.selectbox("Model B", others, key="radar_b", format_func=ranking.label)
    st.caption(
        "A − B per axis over the instances both models scored (paired): 95% CI from 1,000 "
        "paired bootstrap resamples of instances; p from the exact sign-flip test (every swap of "
        "A and B within instances) when 2–16 instances are shared, else from the bootstrap; none "
        "from one instance. p-values Holm-corrected over the axes tested; filled markers are "
        f"significant at 0.05 after correction. {radar.FEW_MARK} (crossed marker): CI from fewer "
        "than 5 instances."
    )
    diff = cached(radar.compare)(f, a, b, by)
    if diff.empty:
        empty_state(cached(guidance_data.compare_overlap)(f, a, b), key="compare")
        st.stop()
    st.plotly_chart(radar_charts.compare_chart(diff, a, b), key="compare_chart", config=PNG)
    st.dataframe(radar.compare_table(diff), hide_index=True, key="compare_table")
    downloads("Download", partial(radar.compare_csv, diff), f"compare_{a}_{b}", "compare_csv")
