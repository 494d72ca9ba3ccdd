"""Breakdowns: skill means by difficulty level, by domain, by source task, and FLASK-Hard
against the full set; n in every cell, empty cells left empty. One tab per section, and only
the open tab is computed and drawn (a switch reruns the page); the open tab is in the URL
(``section``), so a link or a reload opens the same one."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from analysis.charts import breakdowns as charts
from analysis.charts.common import chart_config
from analysis.views import breakdowns, guidance_data
from pages.common import bind, cached, downloads, empty_state, filters

PNG = chart_config("breakdowns")  # the toolbar's PNG download, at twice the resolution
SECTIONS = (
    "By difficulty",
    "Difficulty trends",
    "By domain",
    "By source task",
    "FLASK-Hard vs full",
)

f = filters()
st.title("Breakdowns")
st.caption(
    "Mean score per skill over non-N/A scores, split by difficulty, domain and source task. "
    "Each cell shows its mean and n (scores); hover for the 95% CI (instance as the unit). "
    "A cell without scores is left empty, never drawn as 0."
)
levels = cached(breakdowns.by_difficulty)(f) if f.judge else None
if levels is None or levels.empty:  # no scores (yet, or in this slice): say why
    empty_state(cached(guidance_data.scores)(f))
    st.stop()
models = sorted(set(levels["model"]))
bind("model", "bd_model", models)  # in the URL
model = st.selectbox("Model for the heatmaps and the source-task table", models, key="bd_model")


def _csv(data: Callable[[str], bytes], name: str) -> None:
    downloads(f"Download {name.replace('_', ' ')}", data, name, f"csv_{name}")


bind("section", "bd_section", SECTIONS, absent=SECTIONS[0])  # the open tab, in the URL
difficulty, trends, domain, task, hard = st.tabs(SECTIONS, key="bd_section", on_change="rerun")

if difficulty.open:
    with difficulty:
        st.caption(
            "Levels 1 (simple lifestyle knowledge) to 5 (expert level knowledge). Instances "
            "without a difficulty label get their own column."
        )
        st.plotly_chart(
            charts.difficulty_heatmap(levels, model), key="difficulty_heatmap", config=PNG
        )
        _csv(partial(breakdowns.table_csv, levels), "by_difficulty")

if trends.open:
    with trends:
        st.caption(
            "Every model's mean per skill at each difficulty level, with 95% CI bars. "
            "Instances without a difficulty label are left out here (no level to plot them at)."
        )
        st.plotly_chart(charts.difficulty_lines(levels), key="difficulty_lines", config=PNG)

if domain.open:
    with domain:
        st.caption(
            "FLASK's rule: an instance labelled with two domains counts toward both, so every "
            "skill score of that instance appears in each of its domains' cells (the cells' n "
            "add up to more than the model's scores)."
        )
        domains = cached(breakdowns.by_domain)(f)
        st.plotly_chart(charts.domain_heatmap(domains, model), key="domain_heatmap", config=PNG)
        _csv(partial(breakdowns.table_csv, domains), "by_domain")

if task.open:
    with task:
        st.caption("All skill scores of an instance pooled; click a column header to sort.")
        tasks = cached(breakdowns.by_source_task)(f)
        st.dataframe(breakdowns.task_table(tasks, model), hide_index=True, key="task_table")
        _csv(partial(breakdowns.table_csv, tasks), "by_source_task")

if hard.open:
    with hard:
        table = cached(breakdowns.hard_vs_full)(f)
        if table.empty:  # no FLASK-Hard instance at all, none in the slice, or none scored
            empty_state(cached(guidance_data.hard_instances)(f), key="hard")
        else:
            st.caption(
                "Per skill and model: mean on the FLASK-Hard instances against the mean on all "
                "instances (the other sidebar filters apply to both; the FLASK-Hard toggle is "
                "ignored here). Relative change = (hard − full) / full."
            )
            st.plotly_chart(charts.hard_chart(table), key="hard_chart", config=PNG)
            st.dataframe(breakdowns.hard_table(table), hide_index=True, key="hard_table")
            _csv(partial(breakdowns.hard_csv, table), "hard_vs_full")
