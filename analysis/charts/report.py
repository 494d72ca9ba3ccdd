"""The stakeholder report: one self-contained HTML file (``report(store, filters) -> bytes``).

Its numbers come from ``analysis.views.report_data`` (the pages' own view functions, on the same
filters) and every figure from the pages' own chart functions, so the report and the pages agree
to the last digit. plotly.js is inlined once; each figure is plotly's ``to_html`` fragment
without plotly.js or MathJax, so the figures stay interactive and nothing is fetched: no CDN,
no font, no MathJax, no map tiles or topojson (no figure has a map). The page layout and its
escaping are in ``report_page.py``; the sections with store text (provenance, exemplars) in
``report_sections.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from analysis.charts import agreement as agreement_charts
from analysis.charts import breakdowns as breakdown_charts
from analysis.charts import judges_board as board_charts
from analysis.charts import overview as overview_charts
from analysis.charts import radar as radar_charts
from analysis.charts.common import chart_config
from analysis.charts.report_page import contents, page, para, section, table, text
from analysis.charts.report_sections import exemplars_section, header, no_scores, provenance_section
from analysis.core.filters import Filters
from analysis.views import agreement_report, judge_board_report, overview, radar
from analysis.views.report_data import Progress, ReportData, Store, gather
from analysis.views.tables import STAT_DIGITS

STATISTIC = "alpha_ordinal"  # the Human-vs-judge page's default statistic
BOARD_STATISTIC = "spearman"  # the Judges page's leaderboard's default statistic
# plotly's config for every figure: the pages' toolbar (PNG download, no logo link), and no
# link or cloud button that would point outside the file.
CONFIG = {**chart_config("report"), "showSendToCloud": False, "typesetMath": False}


def report(
    store: Store,
    filters: Filters | None = None,
    judge: str | None = None,
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
) -> bytes:
    """The report of one view (the dataset, judge and sidebar filters; defaults as the app's)
    as UTF-8 HTML. ``progress(fraction, label)`` is called as it goes, ending at 1.0."""
    tick = progress or (lambda _f, _l: None)
    data = gather(store, filters, judge, progress=tick, now=now)
    tick(0.8, "Drawing the figures")
    html = render(data)
    tick(1.0, "Done")
    return html.encode("utf-8")


def today() -> datetime:
    """Now, in UTC: the report's date and its file name's."""
    return datetime.now(UTC)


def file_name(data_or_filters: ReportData | Filters, when: datetime) -> str:
    """``finegrain-report-<dataset>-<YYYY-MM-DD>.html``, the dataset's name made file-safe."""
    f = data_or_filters.filters if isinstance(data_or_filters, ReportData) else data_or_filters
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in f.dataset).strip("-.")
    return f"finegrain-report-{safe or 'dataset'}-{when:%Y-%m-%d}.html"


class Figures:
    """Each figure as plotly's HTML fragment, numbered in the order drawn (ids stay unique)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, fig: go.Figure, name: str, caption: str | None = None) -> str:
        self.count += 1
        frag = pio.to_html(
            fig, full_html=False, include_plotlyjs=False, include_mathjax=False,
            config=CONFIG, div_id=f"fig-{self.count}-{name}",
        )  # fmt: skip
        cap = para(caption, "caption") if caption else ""
        return f'<div class="figure" data-figure="{name}">{frag}{cap}</div>'


def render(data: ReportData) -> str:
    """The whole HTML page of ``data``."""
    fig = Figures()
    parts = [
        ("provenance", "Provenance", provenance_section(data)),
        ("leaderboard", "Leaderboard", _leaderboard(data, fig)),
        ("radar", "Skill radar", _radar(data, fig)),
        ("breakdowns", "Difficulty and domain", _heatmaps(data, fig)),
        ("hard", "FLASK-Hard vs full", _hard(data, fig)),
        ("agreement", "Human vs judge", _agreement(data, fig)),
        ("judges", "Judges against the humans", _judges(data, fig)),
        ("exemplars", "Exemplar responses", exemplars_section(data)),
    ]
    body = header(data) + contents([(a, t) for a, t, _ in parts])
    body += "".join(section(a, t, b, new_page=i > 0) for i, (a, t, b) in enumerate(parts))
    title = f"Finegrain report: {data.provenance.dataset.get('title') or data.filters.dataset}"
    return page(title, body, get_plotlyjs())


def _judge_line(data: ReportData) -> str:
    return f"Judge: {data.filters.judge}." if data.filters.judge else ""


def _leaderboard(data: ReportData, fig: Figures) -> str:
    board = data.leaderboard
    if board.empty:
        return para(no_scores(data, "no leaderboard"), "note")
    group = overview.OVERALL if overview.OVERALL in set(board["group"]) else overview.OVERALL_01
    caption = (
        f"{_judge_line(data)} Mean over non-N/A skill scores; 95% CI from 1,000 bootstrap "
        "resamples of instances (not rows); n = scores behind each mean. Equal means share a "
        "rank; the rank's 95% interval re-ranks the models in every resample. "
        f"{overview.FEW_MARK}: CI from fewer than 5 instances."
    )
    chart = fig(overview_charts.leaderboard_chart(board, group), "leaderboard")
    return para(caption, "caption") + chart + table(overview.leaderboard_table(board))


def _radar(data: ReportData, fig: Figures) -> str:
    if data.radar is None or data.radar.empty:
        return para(no_scores(data, "no radar"), "note")
    which = (
        "the models chosen"
        if data.filters.models
        else "the best models by Overall (up to 4, the radar page's default)"
    )
    caption = (
        f"{_judge_line(data)} Mean score per skill of {which}, with 95% CI whiskers (instance "
        "as the unit) and n per axis."
    )
    chart = fig(radar_charts.radar_chart(data.radar), "radar")
    return para(caption, "caption") + chart + table(radar.display_table(data.radar, "skill"))


def _heatmaps(data: ReportData, fig: Figures) -> str:
    if data.by_difficulty.empty:
        return para(no_scores(data, "no breakdowns"), "note")
    out = [
        para(
            "Mean per skill by difficulty level and by domain for each model of the radar; "
            "each cell shows its mean and n, hover for the 95% CI. An instance with two "
            "domains counts toward both (FLASK's rule). Empty cells have no scores.",
            "caption",
        )
    ]
    for model in data.focus_models:
        if model not in set(data.by_difficulty["model"]):
            continue
        out.append(f"<h3>{text(model)}</h3>")
        out.append(
            fig(breakdown_charts.difficulty_heatmap(data.by_difficulty, model), "difficulty")
        )
        if not data.by_domain.empty:
            out.append(fig(breakdown_charts.domain_heatmap(data.by_domain, model), "domain"))
    return "".join(out)


def _hard(data: ReportData, fig: Figures) -> str:
    if data.hard_vs_full.empty:
        return para(
            "No FLASK-Hard instance with scores in this dataset and view: no comparison.", "note"
        )
    caption = (
        "Per skill and model: the mean on the FLASK-Hard instances against the mean on all "
        "instances (the other filters apply to both; the FLASK-Hard toggle is ignored here). "
        "Relative change = (hard − full) / full, in each cell; hover for both means and "
        "their n (the table with CIs: the Breakdowns page and its CSV)."
    )
    chart = fig(breakdown_charts.hard_chart(data.hard_vs_full), "hard")
    return para(caption, "caption") + chart


def _agreement(data: ReportData, fig: Figures) -> str:
    r = data.agreement
    if r is None:
        return para(data.notes.get("agreement", "No human-vs-judge comparison."), "note")
    out = [
        para(
            f"The judge ({r.a.spec}) against the mean of the human raters per item, on the "
            "items both scored, per skill then all skills pooled; correlations pooled over "
            "items; 95% CIs from 1,000 bootstrap resamples of instances.",
            "caption",
        ),
        fig(agreement_charts.agreement_bars(r, STATISTIC), "agreement"),
        table(agreement_report.people_wide(r, r.stats)),
    ]
    out += [para(n, "note") for n in r.notes]
    out.append("<h3>Human ceiling (leave-one-out)</h3>")
    if r.ceiling.empty or "human_ceiling" not in set(r.ceiling["figure"]):
        out.append(para("Needs two or more human raters who scored the same items.", "note"))
        return "".join(out)
    out += [
        para(
            "Each human held out in turn against the mean of the other humans (the ceiling, "
            "grey), and the judge against that same mean on the same items (blue): both face "
            "the same reference, so the two can be compared.",
            "caption",
        ),
        fig(agreement_charts.ceiling_bars(r, STATISTIC), "ceiling"),
        table(agreement_report.ceiling_table(r, STATISTIC)),
    ]
    return "".join(out)


def _judges(data: ReportData, fig: Figures) -> str:
    """The Judges page's leaderboard: its figure and its table, for its default statistic."""
    board = data.judge_board
    if board is None:
        return para(data.notes.get("judge_board", "No judges' leaderboard."), "note")
    caption = (
        "Each LLM judge against the human raters' mean score per item, per skill and all "
        "skills pooled, Spearman ρ pooled over items, 95% CIs from 1,000 bootstrap resamples "
        "of instances (as on the Judges page); below, the human ceiling (leave-one-out)."
    )
    out = [
        para(caption, "caption"),
        fig(board_charts.board_heatmap(board, BOARD_STATISTIC), "judges"),
        *(para(n, "note") for n in judge_board_report.notes(board)),
        table(judge_board_report.board_table(board, BOARD_STATISTIC), digits=STAT_DIGITS),
    ]
    return "".join(out)
