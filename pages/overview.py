"""Overview: datasets and provenance, leaderboard with CIs, coverage, and loading real FLASK."""

from __future__ import annotations

import streamlit as st

from analysis.charts import overview as charts
from analysis.charts import report
from analysis.charts.common import chart_config
from analysis.core.errors import FinegrainError
from analysis.core.taxonomy import ABILITIES
from analysis.ingest.flask_source import DEFAULT_URL, import_flask
from analysis.views import guidance_data, overview
from pages.common import bind, cached, empty_state, filters, plain, show_error, store

PNG = chart_config("overview")  # the toolbar's PNG download, at twice the resolution

f = filters()
st.title("Overview")
st.caption(
    "Skill-level evaluation following FLASK (Ye et al., ICLR 2024): each instruction needs 3 "
    "of 12 skills; each response gets a 1–5 score (or N/A) per skill."
)

sets = cached(overview.datasets)()
simulated, _ = overview.simulated_info(sets, f.dataset)


def _load_flask(source: str) -> None:
    bar = st.progress(0.0, text="Starting…")

    def progress(done: int, total: int, label: str) -> None:
        bar.progress(min(done / max(total, 1), 1.0), text=label)

    try:
        # The visitor is not trusted: limits, no private addresses, one generic fetch message.
        report = import_flask(store(), source.strip(), progress=progress, trusted=False)
    except FinegrainError as e:
        bar.empty()
        show_error(e)
        return
    bar.progress(1.0, text="Done")  # cached results are keyed by the file's mtime: no clear
    # The sidebar's dataset widget already exists in this run: app.py applies this next run.
    st.session_state["next_dataset"] = "flask"
    st.success("FLASK imported.\n\n" + "\n".join(f"- {plain(line)}" for line in report.lines()))
    st.button("Show FLASK", type="primary")  # any click reruns; the sidebar then selects it


if simulated or "flask" not in set(sets["dataset"]):
    with st.container(border=True):
        st.markdown(
            "**Load the real FLASK benchmark** (1,740 instructions, 15 models' "
            "responses; GPT-4 reviews when the source has them)."
        )
        source = st.text_input(
            "Source: base URL or local folder", value=DEFAULT_URL, key="flask_source"
        )
        st.caption("From a terminal: `python -m analysis import-flask [SOURCE]`")
        if st.button("Load FLASK", type="primary", icon=":material/download:"):
            _load_flask(source)

st.subheader("Datasets")
st.dataframe(
    overview.datasets_table(sets),
    hide_index=True,
    key="datasets_table",
    column_config={"Description": st.column_config.TextColumn(width="large")},
)

st.subheader("Leaderboard")
board = cached(overview.leaderboard)(f) if f.judge else None
if board is None or board.empty:  # no scores (yet, or in this slice): say why; Coverage follows
    empty_state(cached(guidance_data.scores)(f), key="leaderboard")
else:
    st.caption(
        f"Judge **{plain(f.judge or '')}**. Mean over non-N/A skill scores; 95% CI from 1,000 "
        "bootstrap resamples of instances (not rows); n = scores behind each mean. Overall pools "
        "all skills (rescaled to 0–1 when the criteria's scales differ). Equal means share a rank "
        "(1, 2, 2, 4); the rank's 95% interval re-ranks the models in every resample. "
        f"{overview.FEW_MARK} (open marker): CI from fewer than 5 instances, no CI from one."
    )
    present = set(board["group"])
    groups = [g for g in (overview.OVERALL, overview.OVERALL_01, *ABILITIES) if g in present]
    groups += sorted(present - set(groups))
    bind("rank", "lb_group", groups, default=groups[0], absent=groups[0])  # in the URL
    group = st.segmented_control("Rank by", groups, key="lb_group")
    st.plotly_chart(
        charts.leaderboard_chart(board, group or groups[0]), key="leaderboard_chart", config=PNG
    )
    st.dataframe(overview.leaderboard_table(board), hide_index=True, key="leaderboard_table")

st.subheader("Coverage")
st.caption(
    "What the dataset asks for, from its instances alone (no scores needed): the sidebar's "
    "domain, difficulty, source-task and FLASK-Hard filters apply; its judge and models do not."
)
cov = cached(overview.coverage)(f)
if cov.empty:
    empty_state(cached(guidance_data.instances)(f), key="coverage")
else:
    st.plotly_chart(charts.coverage_heatmap(cov), key="coverage_chart", config=PNG)


st.subheader("Report")
st.caption(
    "One HTML file of this view (the sidebar's dataset, judge and filters) to share: "
    "provenance, leaderboard, radar, breakdowns, human vs judge and exemplar responses. It "
    "opens offline in any browser, its charts stay interactive, and Print to PDF gives clean "
    "pages."
)
if st.button("Download the report (HTML)", key="report_make", icon=":material/description:"):
    bar = st.progress(0.0, text="Starting…")
    try:
        html = report.report(store(), f, progress=lambda x, label: bar.progress(x, text=label))
    except FinegrainError as e:
        show_error(e)
    else:
        st.download_button(
            "Save the report",
            html,
            file_name=report.file_name(f, report.today()),
            mime="text/html",
            key="report_html",
            on_click="ignore",  # a rerun would drop the file just made
            icon=":material/download:",
            type="primary",
        )
    finally:
        bar.empty()
