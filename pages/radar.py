"""Skill radar: models side by side per skill (or ability) with CIs and n, the FLASK paper's
published scores as an overlay, and a paired comparison of two models."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from analysis.charts import radar as radar_charts
from analysis.views import overview, radar
from pages.common import cached, filters, no_data, plain

PNG = {"toImageButtonOptions": {"format": "png", "scale": 2}}
AXIS_KINDS = {"12 skills": "skill", "4 abilities": "ability"}

f = filters()
st.title("Skill radar")
st.caption(
    "Mean score per skill for each model, over non-N/A scores. Whiskers: 95% CI with the "
    "instance as the unit (cluster-robust t-interval; it matches an instance bootstrap); n under "
    "each axis = the scores behind it. A dataset with its own criteria shows them as the axes, "
    "on their own scale."
)
if not f.judge:
    no_data("This dataset has no scores yet.")
    st.stop()

choices = radar.model_choices(cached(overview.filter_options)(f.dataset).models, f)
left, mid, right = st.columns([3, 2, 2])
picked = left.multiselect(
    "Models on the radar",
    choices,
    default=choices[: radar_charts.MAX_OVERLAID],
    # keyed by the sidebar's selection: a new selection starts from its own default
    key=f"radar_models::{f.dataset}::{','.join(f.models)}",
    help="Up to 4 models share one radar; more are drawn as small multiples, one per model.",
)
kind = mid.segmented_control("Axes", list(AXIS_KINDS), default="12 skills", key="radar_axes")
by = AXIS_KINDS[kind or "12 skills"]
subset = radar.published_subset(f)
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
if data.empty:
    no_data()
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
    shown = radar.display_table(data)
    st.dataframe(shown, hide_index=True, key="radar_table", height=420)
    st.download_button(
        "Download CSV",
        shown.to_csv(index=False),
        file_name="radar.csv",
        mime="text/csv",
        key="radar_csv",
        icon=":material/download:",
    )

st.subheader("Compare two models")
if len(picked) < 2:
    st.info("Pick two or more models above to compare them.", icon=":material/info:")
    st.stop()
ca, cb = st.columns(2)
a = ca.selectbox("Model A", picked, index=0, key="radar_a")
b = cb.selectbox("Model B", [m for m in picked if m != a], index=0, key="radar_b")
st.caption(
    "A − B per axis over the instances both models scored (paired): 95% CI from 1,000 paired "
    "bootstrap resamples of instances; p-values Holm-corrected over the axes shown; filled "
    "markers are significant at 0.05 after correction."
)
diff = cached(radar.compare)(f, a, b, by)
if diff.empty:
    no_data("These two models share no scored instances in this selection.")
    st.stop()
st.plotly_chart(radar_charts.compare_chart(diff, a, b), key="compare_chart", config=PNG)
st.dataframe(diff, hide_index=True, key="compare_table")
st.download_button(
    "Download CSV",
    diff.to_csv(index=False),
    file_name=f"compare_{a}_{b}.csv",
    mime="text/csv",
    key="compare_csv",
    icon=":material/download:",
)
