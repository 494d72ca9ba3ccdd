"""What a person sees when a user's file names its models, judge, raters and criteria with
markup: in Debian chromium, every chart of every page shows each name verbatim, as the
characters typed (``<b>bold</b>`` is eight characters of text, not a bold word), and no element
is made from a name: no SVG link (plotly turns ``<a href>`` into one), no bold, italic or
underlined run of a name's inner text, no ``<img>`` or ``<script>``, no attribute pointing
anywhere (a heatmap's own picture aside). No dialog opens and no request goes to the hostile
link's host. Each check fails when ``analysis.charts.common.esc`` returns its input unescaped.

One server on one store (tests/hostile_store.py, written by the score importer), one browser
page reused for every deep link; each chart is waited for until plotly has drawn it."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from tests.hostile_store import CRITERIA, HREF_HOST, JUDGE, MODELS, NAMES, RATERS, hostile_store
from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser, settled

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

SHOTS = ARTIFACTS / "hostile-names"
# The words inside the names' tags: shown styled (bold, italic, underlined) or as a link's
# text, they would mean plotly read a name as markup.
INNER = {"bold", "link", "J", "h", "rater", "crit", "c", "R&amp;D", "R&D", "two"}

# Every chart's texts (titles, ticks, legends, subplot and axis titles, annotations, an open
# hover label) and every element inside it that only markup could have made.
READ = """(inner) => [...document.querySelectorAll('.stPlotlyChart')].map((c) => {
  const plot = c.querySelector('.js-plotly-plot');
  const texts = [...plot.querySelectorAll('svg text')].map((t) => t.textContent);
  const styled = [...plot.querySelectorAll('svg tspan[style]')].filter((t) => {
    const s = t.getAttribute('style');
    return /font-weight|font-style|text-decoration/.test(s) && inner.includes(t.textContent);
  }).map((t) => t.outerHTML);
  const made = [...plot.querySelectorAll('svg a, img, script, b, i, u, strong, em, iframe')]
    .map((e) => e.outerHTML.slice(0, 200));
  // a heatmap's cells are one <image> whose href is the picture's data: URL
  const target = (e) => e.getAttribute('href') || e.getAttribute('xlink:href') ||
                        e.getAttribute('src') || '';
  const linked = [...plot.querySelectorAll('[href], [*|href], [src], [onerror], [onclick]')]
    .filter((e) => !e.closest('.modebar') && !target(e).startsWith('data:image/'))
    .map((e) => e.outerHTML.slice(0, 200));
  const title = plot.querySelector('.gtitle');
  return {title: title ? title.textContent : '', texts, styled, made, linked};
})"""

# Inside hover labels: what only a name read as markup would have made.
HOVER_MARKUP = """(labels, inner) => labels.flatMap((l) => [
  ...l.querySelectorAll('a, img, script, [href], [*|href]'),
  ...[...l.querySelectorAll('tspan[style]')].filter((t) => inner.includes(t.textContent)),
].map((e) => e.outerHTML))"""

# Every chart mounted, each drawn by plotly at its container's width (plotly draws first at a
# default width, then at the container's) and not empty.
DRAWN = """(n) => {
  const charts = [...document.querySelectorAll('.stPlotlyChart')];
  return charts.length >= n && charts.every((c) => {
    const svg = c.querySelector('.js-plotly-plot .main-svg');
    if (!svg) return false;
    const w = svg.getBoundingClientRect().width, box = c.getBoundingClientRect().width;
    return Math.abs(w - box) <= 2 && svg.querySelectorAll('text').length > 0;
  });
}"""

# page, deep-link parameters, charts drawn, names each chart must show (one set per chart)
PAGES = {
    "overview": (
        "",
        {"judge": JUDGE},
        [set(MODELS), set(CRITERIA)],  # leaderboard's ticks, coverage's rows
    ),
    "radar": (
        "radar",
        {"judge": JUDGE, "radar": list(MODELS), "ca": MODELS[0], "cb": MODELS[1]},
        # legend and axes; the paired comparison's title, axis title, ticks
        [{*MODELS, *CRITERIA}, {MODELS[0], MODELS[1], *CRITERIA}],
    ),
    # Breakdowns draws only its open tab (``section``): each tab with a chart, one chart each
    "breakdowns": (  # the difficulty heatmap (title, rows)
        "breakdowns",
        {"judge": JUDGE, "model": MODELS[2]},
        [{MODELS[2], *CRITERIA}],
    ),
    "breakdowns-trends": (  # the lines (legend, subplot titles)
        "breakdowns",
        {"judge": JUDGE, "model": MODELS[2], "section": "Difficulty trends"},
        [{*MODELS, *CRITERIA}],
    ),
    "breakdowns-domain": (  # the domain heatmap (title, rows)
        "breakdowns",
        {"judge": JUDGE, "model": MODELS[2], "section": "By domain"},
        [{MODELS[2], *CRITERIA}],
    ),
    "agreement-judge": (
        "agreement",
        {"a": JUDGE, "b": "kind:human", "section": "Human ceiling"},  # the ceiling's tab open
        # bars (legend, ticks), confusion and scatter (axis titles), the humans' ceiling
        [{JUDGE, *CRITERIA}, {JUDGE}, {JUDGE}, {JUDGE, *CRITERIA}],
    ),
    "agreement-raters": (
        "agreement",
        {"a": RATERS[0], "b": RATERS[1]},
        [{RATERS[0], *CRITERIA}, {*RATERS}, {*RATERS}],
    ),
}


def flat(text: str) -> str:
    """Text without whitespace: plotly draws a wrapped label's lines as separate runs."""
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(url, page, what happened): the dialogs opened and requests made to the link's host."""
    db = hostile_store(tmp_path_factory.mktemp("hostile") / "hostile.duckdb")
    events: dict[str, list[str]] = {"dialogs": [], "requests": []}
    with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1400})

        def dialog(d) -> None:
            events["dialogs"].append(f"{d.type}: {d.message}")
            d.dismiss()

        page.on("dialog", dialog)
        page.on("request", lambda r: HREF_HOST in r.url and events["requests"].append(r.url))
        yield url, page, events
        browser.close()


def _open(page, url: str, path: str, params: dict, charts: int) -> list[dict]:
    page.goto(f"{url}/{path}?{urlencode(params, doseq=True)}")
    page.locator("[data-testid='stApp']").wait_for(timeout=120_000)
    settled(page)
    page.wait_for_function(DRAWN, arg=charts, polling=250, timeout=120_000)
    return page.evaluate(READ, sorted(INNER))


def _markup(name: str, chart: dict) -> list[str]:
    return [f"{name} {kind}: {el}" for kind in ("made", "styled", "linked") for el in chart[kind]]


@pytest.mark.parametrize("name", list(PAGES))
def test_names_show_verbatim_in_every_chart(site, name):
    url, page, events = site
    path, params, expected = PAGES[name]
    charts = _open(page, url, path, params, len(expected))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    assert len(charts) == len(expected), [c["title"] for c in charts]
    problems = []
    for i, (chart, names) in enumerate(zip(charts, expected, strict=True)):
        label = f"{name} chart {i} ({chart['title'][:40]!r})"
        shown = flat("".join(chart["texts"]))
        problems += [f"{label}: {n!r} not shown verbatim" for n in names if flat(n) not in shown]
        problems += _markup(label, chart)
    assert not problems, "\n".join(problems)
    assert not events["dialogs"] and not events["requests"], events


def test_captions_make_no_link_from_a_name(site):
    """Outside the charts too (captions, tables, the sidebar) no name becomes a link: the
    Overview's caption names the judge, whose name holds a bare URL."""
    url, page, _ = site
    _open(page, url, "", {"judge": JUDGE}, 2)
    assert page.locator(f"[href*='{HREF_HOST}']").count() == 0


def test_hover_labels_show_the_names_verbatim(site):
    """The leaderboard's hover label of each model (``<b>%{y}</b>``: the name inside our own
    bold), each shown verbatim, no element made from the name."""
    url, page, events = site
    _open(page, url, "", {"judge": JUDGE}, 2)
    chart = page.locator(".stPlotlyChart").first
    points = chart.locator(".scatterlayer .point")
    assert points.count() == len(MODELS)
    shown, made = [], []
    for i in range(len(MODELS)):
        points.nth(i).hover(force=True)
        label = chart.locator(".hoverlayer .hovertext")
        label.wait_for(timeout=30_000)
        shown.append(flat(label.text_content()))
        made += label.evaluate_all(HOVER_MARKUP, sorted(INNER))
        page.mouse.move(0, 0)  # away, so that the next point's label replaces this one
        label.wait_for(state="detached", timeout=30_000)
    assert sorted(m for m in MODELS if any(flat(m) in t for t in shown)) == sorted(MODELS), shown
    assert not made, made
    assert not events["dialogs"] and not events["requests"], events


def test_every_hostile_name_was_checked():
    """The page table covers every name the store holds (a new name needs a chart to show it)."""
    covered = set().union(*(s for _, _, charts in PAGES.values() for s in charts))
    assert covered == set(NAMES)
