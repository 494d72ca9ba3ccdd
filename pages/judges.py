"""Judges: can each LLM judge be trusted, on which skills, and how do the judges compare? Every
judge against the human labels at once, then the biases that make a judge untrustworthy. One tab
per section; only the open tab is computed and drawn, and the open tab is in the URL
(``section``). Each section's layout lives in its own module (pages/judges_*.py)."""

from __future__ import annotations

import streamlit as st

from pages import judges_bias, judges_board, judges_scores, judges_stability, judges_verbosity
from pages.common import bind, filters

# Fixed labels: the open tab is kept in the session (and the URL) by its label.
SECTIONS = {
    "Leaderboard": judges_board.draw,
    "Leniency": judges_scores.leniency,
    "Failures": judges_scores.failures,
    "Length bias": judges_bias.length_bias,
    "Self-preference": judges_bias.self_preference,
    "Stability": judges_stability.draw,
    "Verbosity": judges_verbosity.draw,
}

f = filters()
st.title("Judges")
st.caption(
    "Can a judge be trusted, on which skills, and how does it compare with the others? Every "
    "LLM judge of the dataset against the human labels, then the biases that make a judge "
    "untrustworthy. 95% CIs resample instances. The sidebar's filters apply; its Judge does not "
    "(every judge is shown)."
)
names = list(SECTIONS)
bind("section", "jd_section", names, absent=names[0])
for tab, draw in zip(
    st.tabs(names, key="jd_section", on_change="rerun"), SECTIONS.values(), strict=True
):
    if tab.open:
        with tab:
            draw(f)
