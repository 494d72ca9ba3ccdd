"""The README's screenshots (docs/*.png), taken again in one command.

    python bench/screenshots.py [--out docs] [--width 1280] [--height 800] [--only radar,…]

A fresh simulated demo in a temporary store, the dashboard on loopback with the repository's
.streamlit/config.toml (the theme), Debian chromium through Playwright (never `playwright
install`). Each page is laid out at WIDTH × HEIGHT (a 1280 × 800 laptop by default), then the
window is stretched to the page's full height, so that the picture holds the whole page at that
width (Streamlit scrolls inside its main block: a "full page" screenshot would hold one
screen). The Re-judge picture is of a finished run: three responses queued on Samples and
judged again by the loopback OpenAI-compatible server of the tests (no network, no key).

Prints each file written with its size; a page that fails is reported and the others are
still taken (exit status 1 then). Needs requirements-dev.txt (Playwright; the tests' fixture
modules) and Debian chromium, like the browser tests.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from analysis.core.store import Store  # noqa: E402
from analysis.ingest.demo import build_and_write_demo  # noqa: E402
from tests.live_app import StreamlitServer, click_row, launch_browser, settled  # noqa: E402
from tests.openai_server import OpenAIServer  # noqa: E402

CHARTS_DRAWN = """(n) => {
  const charts = document.querySelectorAll('.stPlotlyChart');
  return charts.length >= n && [...charts].every((c) => c.querySelector('.main-svg'));
}"""


def _charts(page, at_least: int) -> None:
    settled(page)
    page.wait_for_function(CHARTS_DRAWN, arg=at_least, timeout=180_000)


def _overview(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="Leaderboard").wait_for(timeout=180_000)
    _charts(page, 2)


def _page_with_charts(path: str, heading: str, at_least: int) -> Callable:
    def shoot(page, url: str) -> None:
        page.goto(f"{url}/{path}")
        page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=180_000)
        _charts(page, at_least)

    return shoot


def _rejudge(page, url: str) -> None:
    """Queue three responses on Samples, judge them again, wait for before/after."""
    page.goto(f"{url}/samples")
    page.get_by_text("responses match").first.wait_for(timeout=180_000)
    settled(page)
    for row in range(3):
        click_row(page, row)
        page.get_by_text(f"{row + 1} selected").wait_for(timeout=60_000)
    page.get_by_role("button", name="Add to re-judge queue").click()
    settled(page)
    page.get_by_role("link", name="Re-judge").click()
    page.get_by_text("3 responses selected").wait_for(timeout=60_000)
    model = page.get_by_label("Model", exact=True)
    model.fill("judge-test")
    model.press("Enter")
    settled(page)
    page.get_by_role("button", name="Run").click()
    page.get_by_role("heading", name="Before and after, per sample and skill").wait_for(
        timeout=180_000
    )
    settled(page)
    page.locator("[data-testid='stDataFrame']").first.wait_for(timeout=60_000)


SHOTS: dict[str, Callable] = {
    "overview": _overview,
    "radar": _page_with_charts("radar", "Skill radar", 2),
    "breakdowns": _page_with_charts("breakdowns", "Breakdowns", 4),
    "agreement": _page_with_charts("agreement", "Human vs judge", 3),
    "rejudge": _rejudge,
}


def _whole_page(page, path: Path, width: int, height: int) -> None:
    """Stretch the window to the main block's full height, then take the picture."""
    full = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m ? m.scrollHeight : document.body.scrollHeight; }"
    )
    page.set_viewport_size({"width": width, "height": max(height, int(full))})
    page.wait_for_timeout(1000)  # Streamlit and plotly settle at the new size
    settled(page)
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": width, "height": height})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs", help="folder [docs]")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=800)
    ap.add_argument("--only", default=",".join(SHOTS), help="comma-separated: " + ", ".join(SHOTS))
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(names) - set(SHOTS))
    if unknown:
        ap.error(f"unknown screenshot(s) {', '.join(unknown)}; known: {', '.join(SHOTS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright import sync_api

    failed = []
    with tempfile.TemporaryDirectory() as tmp, OpenAIServer(latency=0.05) as judge:
        db = Path(tmp) / "demo.duckdb"
        build_and_write_demo(Store(db))
        os.environ["OPENAI_BASE_URL"] = judge.base_url  # the Re-judge form's default server
        with StreamlitServer(db) as url, sync_api.sync_playwright() as p:
            browser = launch_browser(p)
            for name in names:
                page = browser.new_page(viewport={"width": args.width, "height": args.height})
                try:
                    SHOTS[name](page, url)
                    path = args.out / f"{name}.png"
                    _whole_page(page, path, args.width, args.height)
                    print(f"{path}  {path.stat().st_size / 1024:.0f} KiB")
                except Exception:  # reported; the other pictures are still taken
                    failed.append(name)
                    traceback.print_exc()
                    print(f"{name}: FAILED (above)", file=sys.stderr)
                finally:
                    page.close()
            browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
