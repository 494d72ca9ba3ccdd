"""Every chart readable at 1280×800 and on a 390×844 phone, in Debian chromium: no title, tick
label, axis title, subplot title, radar axis label, legend or colour bar is cut by the chart's
edge, lies on another one, or lies under plotly's toolbar; heatmap numbers stay legible.

What is measured is what plotly drew: each text element's box from the SVG (its own box mapped
through its transform, so a slanted label is a slanted box, not the larger upright one around
it), the legend's and colour bar's boxes, the toolbar's box. Pages: Overview, Skill radar (12
skills overlaid, 4 abilities, 8 models as small multiples, the paired comparison opened by its
link), Breakdowns (each tab with a chart, opened by its link), Human vs judge, on the simulated
demo; and the radar, overview and breakdowns on a dataset of its own whose seven criteria have
long names. Each chart's screenshot goes to test-artifacts/chart-layout/."""

from __future__ import annotations

import itertools
import math
import shutil
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pytest

from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from tests.live_app import ARTIFACTS, StreamlitServer, launch_browser, settled

pytestmark = pytest.mark.browser
from playwright import sync_api  # noqa: E402

SHOTS = ARTIFACTS / "chart-layout"
VIEWPORTS = {"desktop": (1280, 800), "phone": (390, 844)}
TOLERANCE = 1.0  # px: boxes may touch
MIN_CELL_FONT = 9.0  # px: a heatmap's numbers (plotly sizes them to fit the narrowest cell)
MIN_FONT = 9.0  # px: every other text

LONG = [
    "Adherence to the requested output format",
    "Faithfulness to the provided source documents",
    "Helpfulness for a first-time user",
    "Absence of unsafe or harmful instructions",
    "Clarity and structure of the explanation",
    "Appropriate level of technical detail",
    "Correct use of domain terminology and units",
]

# Every text plotly drew, with the SVG corners of its box in page pixels; the legend's and
# colour bar's boxes; the toolbar's; the chart's own box (the first .main-svg).
MEASURE = """(plot) => {
  const corners = (el) => {
    const b = el.getBBox(), m = el.getScreenCTM();
    if (!m || b.width < 0.5 || b.height < 0.5) return null;
    const p = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
    return [p(b.x, b.y), p(b.x + b.width, b.y), p(b.x + b.width, b.y + b.height),
            p(b.x, b.y + b.height)];
  };
  const kind = (el) => {
    const g = el.parentElement, cls = (g && g.getAttribute('class')) || '';
    if (el.classList.contains('gtitle')) return 'title';
    if (el.closest('.colorbar')) return 'colorbar';
    if (el.closest('.legend')) return 'legend';
    if (el.closest('.heatmaplayer')) return 'cell';
    if (el.classList.contains('annotation-text')) return 'annotation';
    if (cls.endsWith('tick')) return cls;
    if (el.closest('[class^="g-"][class$="title"]')) return 'axis title';
    return 'text ' + cls;
  };
  const items = [], hidden = [];
  plot.querySelectorAll('.main-svg text').forEach((el) => {
    if (el.closest('.hoverlayer') || !el.textContent.trim()) return;
    const k = kind(el);
    if (k === 'legend' || k === 'colorbar') return;  // boxed as a whole below
    // plotly hides a tick label that would run past the chart's edge
    if (el.closest('[display="none"]') || getComputedStyle(el).display === 'none') {
      hidden.push(k + ' ' + JSON.stringify(el.textContent));
      return;
    }
    const c = corners(el);
    if (c) items.push({kind: k, text: el.textContent, corners: c,
                       font: parseFloat(getComputedStyle(el).fontSize)});
  });
  for (const [sel, k] of [['.legend', 'legend'], ['.colorbar', 'colorbar']]) {
    plot.querySelectorAll(sel).forEach((el) => {
      const c = corners(el);
      if (c) items.push({kind: k, text: el.textContent.slice(0, 60), corners: c, font: 99});
    });
  }
  const rect = (el) => { const r = el.getBoundingClientRect();
                         return [r.left, r.top, r.right, r.bottom]; };
  const mb = plot.querySelector('.modebar');
  const title = plot.querySelector('.gtitle');
  return {frame: rect(plot.querySelector('.main-svg')), items, hidden,
          modebar: mb ? rect(mb) : null, title: title ? title.textContent : ''};
}"""


def _axes(poly: np.ndarray) -> list[np.ndarray]:
    edges = np.roll(poly, -1, axis=0) - poly
    return [np.array([-e[1], e[0]]) / np.hypot(*e) for e in edges if np.hypot(*e) > 0]


def penetration(a: np.ndarray, b: np.ndarray) -> float:
    """How far two convex polygons overlap, px (≤ 0: apart), by separating axes."""
    depth = math.inf
    for axis in _axes(a) + _axes(b):
        pa, pb = a @ axis, b @ axis
        depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
    return depth


def problems(chart: dict) -> list[str]:
    """What a person would see wrong in one chart: cut, overlapping, under the toolbar, tiny."""
    left, top, right, bottom = chart["frame"]
    items = [{**it, "poly": np.array(it["corners"], float)} for it in chart["items"]]
    out = [f"hidden for want of room: {h}" for h in chart["hidden"]]
    for it in items:
        xs, ys = it["poly"][:, 0], it["poly"][:, 1]
        if (xs.min() < left - TOLERANCE or xs.max() > right + TOLERANCE
                or ys.min() < top - TOLERANCE or ys.max() > bottom + TOLERANCE):  # fmt: skip
            out.append(f"cut by the chart's edge: {it['kind']} {it['text']!r}")
        floor = MIN_CELL_FONT if it["kind"] == "cell" else MIN_FONT
        if it["font"] < floor:
            out.append(f"{it['font']:g} px text: {it['kind']} {it['text']!r}")
    for a, b in itertools.combinations(items, 2):
        if penetration(a["poly"], b["poly"]) > TOLERANCE:
            out.append(f"overlap: {a['kind']} {a['text']!r} / {b['kind']} {b['text']!r}")
    if chart["modebar"]:
        ml, mt, mr, mb = chart["modebar"]
        bar = np.array([[ml, mt], [mr, mt], [mr, mb], [ml, mb]], float)
        for it in items:
            if penetration(bar, it["poly"]) > TOLERANCE:
                out.append(f"under the toolbar: {it['kind']} {it['text']!r}")
    return out


def test_penetration_by_hand():
    """The geometry the checks stand on, on boxes whose overlap is known."""
    sq = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    assert penetration(sq, sq + [8, 0]) == pytest.approx(2)
    assert penetration(sq, sq + [12, 3]) == pytest.approx(-2)
    # Two parallel labels slanted 45°, 16 px apart along x: 16·sin 45° = 11.3 px between
    # their long sides; 10 px high boxes are apart, though their upright boxes overlap.
    c, s = math.cos(math.radians(-45)), math.sin(math.radians(-45))
    label = np.array([[0, 0], [60, 0], [60, 10], [0, 10]], float) @ np.array([[c, s], [-s, c]])
    assert penetration(label, label + [16, 0]) < 0
    assert penetration(label, label + [12, 0]) > 0  # 8.5 px apart: 1.5 px overlap


# ---------------------------------------------------------------------------- the stores


def _long_labels_store(path: Path) -> Path:
    """Seven criteria with long names on 1-5, four models, 16 instances in four domains and
    three difficulty levels; scores from a seeded generator (the layout is what is tested)."""
    rng = np.random.default_rng(7)
    domains = ["Math", "Coding", "Health", "History"]
    rows = ["instance_id,model,judge,skill,score,scale_min,scale_max,difficulty,domain"]
    for i, model, crit in itertools.product(range(16), ["alpha", "beta", "gamma", "delta"], LONG):
        score = int(rng.integers(1, 6))
        rows.append(f'{i},{model},lab,"{crit}",{score},1,5,{i % 3 + 1},{domains[i % 4]}')
    csv = path.parent / "long.csv"
    csv.write_text("\n".join(rows) + "\n")
    import_scores(Store(path), csv, dataset="long")
    return path


@pytest.fixture(scope="module")
def demo_url(demo_db, tmp_path_factory):
    db = tmp_path_factory.mktemp("layout-demo") / "demo.duckdb"
    shutil.copy(demo_db, db)
    with StreamlitServer(db) as url:
        yield url


@pytest.fixture(scope="module")
def long_url(tmp_path_factory):
    db = _long_labels_store(tmp_path_factory.mktemp("layout-long") / "long.duckdb")
    with StreamlitServer(db) as url:  # its only dataset: the one every page opens
        yield url


# ---------------------------------------------------------------------------- the pages


# True once at least n charts are drawn, each at its container's width (plotly first draws at
# its own default width, then relays out to the container's), and no chart's size changed
# since the previous poll: what is measured is the final layout, not one mid-relayout.
LAID_OUT = """(n) => {
  const charts = [...document.querySelectorAll('.stPlotlyChart')];
  const sizes = charts.map((c) => {
    const svg = c.querySelector('.js-plotly-plot .main-svg');
    if (!svg) return null;
    const s = svg.getBoundingClientRect(), box = c.getBoundingClientRect();
    return Math.abs(s.width - box.width) <= 2 ? [Math.round(s.width), Math.round(s.height)] : null;
  });
  const key = JSON.stringify(sizes);
  const steady = window.__chartSizes === key;
  window.__chartSizes = key;
  return charts.length >= n && sizes.every((s) => s) && steady;
}"""


def _charts_drawn(page, at_least: int) -> None:
    """The run finished and every chart of it is drawn, laid out at its container's width."""
    settled(page)
    page.wait_for_function(LAID_OUT, arg=at_least, polling=250, timeout=120_000)


def _check(page, name: str, at_least: int) -> list[str]:
    """Measure every chart on the page, save its screenshot; the problems found."""
    _charts_drawn(page, at_least)
    SHOTS.mkdir(parents=True, exist_ok=True)
    found = []
    charts = page.locator(".stPlotlyChart").all()
    assert len(charts) >= at_least, f"{name}: {len(charts)} charts, expected {at_least}+"
    for i, chart in enumerate(charts):
        chart.scroll_into_view_if_needed()
        chart.screenshot(path=str(SHOTS / f"{name}-{i}.png"))
        measured = chart.locator(".js-plotly-plot").evaluate(MEASURE)
        assert measured["items"], f"{name} chart {i}: no text measured"
        found += [f"{name} chart {i} ({measured['title'][:50]!r}): {p}"
                  for p in problems(measured)]  # fmt: skip
    return found


def _offsite(page) -> list[str]:
    """Every request the page makes beyond loopback (fonts, usage statistics): to be none."""
    seen: list[str] = []

    def record(request) -> None:
        if request.url.startswith("http") and "//127.0.0.1" not in request.url:
            seen.append(request.url)

    page.on("request", record)
    return seen


def _open(page, url: str, path: str) -> None:
    page.goto(f"{url}/{path}")
    page.locator("[data-testid='stApp']").wait_for(timeout=120_000)


# Breakdowns draws only its open tab: each tab with a chart opened by its link (``section``),
# one chart each. The long-names dataset has no FLASK-Hard instance (that tab draws none).
# The radar's comparison is a section, closed on arrival: the radar alone, then with it open.
def _tabs(*names: str) -> tuple[tuple[str, int], ...]:
    return tuple((f"breakdowns?{urlencode({'section': n})}", 1) for n in names)


LONG_BREAKDOWNS = _tabs("By difficulty", "Difficulty trends", "By domain")
DEMO_BREAKDOWNS = (*LONG_BREAKDOWNS, *_tabs("FLASK-Hard vs full"))
COMPARED = "radar?compare=1"
RADAR = (("radar", 1), (COMPARED, 2))


def _name(path: str) -> str:
    """A screenshot's name for a page path and the section its link opens."""
    page, _, query = path.partition("?")
    opened = [v.lower().replace(" ", "-") for k, v in parse_qsl(query) if k == "section"]
    opened += ["compare" for k, v in parse_qsl(query) if k == "compare" and v == "1"]
    return "-".join([page or "overview", *opened])


def _pick_all_models(page) -> None:
    """Put every model on the radar, as a person does: open the box, "Select all"."""
    box = page.locator("[data-testid='stMultiSelect']").filter(has_text="Models on the radar")
    box.locator("input").click()
    page.get_by_role("option", name="Select all").click()
    page.keyboard.press("Escape")


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_demo_charts_fit_and_keep_apart(demo_url, device):
    width, height = VIEWPORTS[device]
    found = []
    with sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": width, "height": height})
        offsite = _offsite(page)
        for path, at_least in (("", 2), *RADAR, *DEMO_BREAKDOWNS, ("agreement", 3)):
            _open(page, demo_url, path)
            found += _check(page, f"{device}-demo-{_name(path)}", at_least)
        _open(page, demo_url, COMPARED)
        _charts_drawn(page, 2)
        page.get_by_role("radio", name="4 abilities").click()
        found += _check(page, f"{device}-demo-radar-abilities", 2)
        page.get_by_role("radio", name="12 skills").click()
        _pick_all_models(page)
        found += _check(page, f"{device}-demo-radar-small-multiples", 2)
        assert page.locator(".stPlotlyChart").first.locator(".polarlayer > g").count() == 8
        browser.close()
    assert not found, "\n".join(found)
    assert not offsite  # the theme's fonts are bundled; nothing leaves the machine


@pytest.mark.parametrize("device", list(VIEWPORTS))
def test_long_criterion_names_fit(long_url, device):
    width, height = VIEWPORTS[device]
    found = []
    with sync_api.sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_page(viewport={"width": width, "height": height})
        for path, at_least in (*RADAR, ("", 2), *LONG_BREAKDOWNS):
            _open(page, long_url, path)
            found += _check(page, f"{device}-long-{_name(path)}", at_least)
        _open(page, long_url, "radar")
        _charts_drawn(page, 1)
        ticks = page.locator(".stPlotlyChart").first.locator(".angularaxistick text")
        assert ticks.count() == len(LONG)  # one label per criterion, each measured above
        browser.close()
    assert not found, "\n".join(found)
