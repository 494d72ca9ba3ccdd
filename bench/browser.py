"""Benchmark: what a person waits for in a real browser (Playwright + Debian chromium, never
``playwright install``) against a real Streamlit server, on the simulated demo and on a
generated 1M-score store.

    python bench/browser.py [--root DIR] [--repeat 3] [--stores demo,1m] [--pages overview,…]
                            [--scores 1000000] [--json OUT] [--demo DB --skip-startup]

Figures (seconds, median of REPEAT runs, each on a fresh server):

- start-up: a fresh server on an empty store; "server healthy" is the process start until
  /_stcore/health answers, "first request → Overview drawn" is the navigation until the Overview
  (the demo built on the way) is drawn. Goal: the latter ≤ 8 s.
- page, cold: the first visit of the page on a fresh server. The server has already answered
  one other page (a warm-up visit), so neither the server's start nor the app's own first run
  counts; the page's data and its module imports do.
- page, warm: the same page visited again (a new session; the server's caches are filled).
- widget, cold: from the change (just before the click or key that sets the new value) to the
  page drawn again, for a value not shown before on this server; warm: the same change after
  changing back.

"Drawn" is measured in the page (bench/browser_page.py): once the script run the action
started has finished, every plot and table on screen is drawn and nothing changed for a
moment; the time of the last change is the figure. Start-up also says when the first script
run started and ended (the rest is the browser loading the app, and drawing).

``--root DIR`` serves app.py from another checkout (e.g. /work/before) with this interpreter,
and builds the generated store with that checkout's own bench/pages.py (``generate``), so the
same script prints the before table. The 1M store holds ``--scores`` judge scores from
bench/pages.py plus two human scorers on every 10th instance (each the judge's score, moved by
one point half of the time), so "Human vs judge" has pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.browser_page import STEPS, Tab  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

# URL path → (menu title, plots the page draws at least on either store).
PAGES = {
    "overview": ("Overview", 2),
    "radar": ("Skill radar", 1),  # the paired comparison is a section, closed on arrival
    "breakdowns": ("Breakdowns", 1),  # only the open tab is drawn
    "agreement": ("Human vs judge", 3),
    "judges": ("Judges", 1),  # the open tab only: the leaderboard's heatmap
    "samples": ("Samples", 0),
    "annotate": ("Annotate", 0),
    "rejudge": ("Re-judge", 0),
}
# Main widgets: (page, name, kind, label, where, avoid). ``select`` picks another option (not
# the value of the widget labelled ``avoid``: A = B draws no chart) and back; ``multi`` adds the
# first option not yet picked and removes it again; ``search`` types a word and clears it.
WIDGETS = [
    ("overview", "sidebar judge", "select", "Judge", "sidebar", None),
    ("overview", "sidebar models", "multi", "Models", "sidebar", None),
    ("radar", "radar models", "multi", "Models on the radar", "main", None),
    ("breakdowns", "model", "select", "Model for the heatmaps and the source-task table", "main",
     None),
    ("agreement", "A", "select", "A (judge)", "main", "B (reference)"),
    ("agreement", "B", "select", "B (reference)", "main", "A (judge)"),
    ("samples", "search", "search", "Search", "main", None),
]  # fmt: skip


@dataclass
class Results:
    """Every run's seconds, by store → (kind, name) → 'cold'/'warm' → [s]."""

    startup: dict[str, list[float]] = field(
        default_factory=lambda: {"health": [], "first": [], "script start": [], "script end": []}
    )
    figures: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    plots: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, store: str, what: str, temp: str, seconds: float) -> None:
        self.figures.setdefault(store, {}).setdefault(what, {}).setdefault(temp, [])
        self.figures[store][what][temp].append(seconds)


class Server:
    """``python -m streamlit run app.py`` from ``root`` on ``db``, output to a file."""

    def __init__(self, root: Path, db: Path, log: Path) -> None:
        self.root, self.db, self.log_path = root, db, log
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "FINEGRAIN_DB": str(self.db), "HF_HUB_OFFLINE": "1"}
        env["PYTHONPATH"] = str(self.root)
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - closed in __exit__
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=self.root, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self._wait_healthy()
        self.health_s = time.perf_counter() - started
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"streamlit did not start; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ stores
def generate_store(root: Path, db: Path, scores: int) -> None:
    """``scores`` judge scores from ROOT's bench/pages.py, plus two humans on every 10th
    instance (the judge's score, moved by one point half of the time)."""
    code = f"""
import sys
sys.path.insert(0, {str(root)!r})
from pathlib import Path
from analysis.core.store import Store
from bench.pages import generate
store = Store(Path({str(db)!r}))
generate(store, {scores})
with store.write() as con:
    con.execute('''
INSERT INTO judges (judge, kind) VALUES ('bench-human-1', 'human'), ('bench-human-2', 'human');
INSERT INTO runs (run_id, judge, dataset, status) VALUES
    ('bench-human-1', 'bench-human-1', 'bench', 'complete'),
    ('bench-human-2', 'bench-human-2', 'bench', 'complete');
INSERT INTO scores (dataset, instance_id, model, judge, skill, score, run_id)
SELECT dataset, instance_id, model, h.judge, skill,
       CASE WHEN score IS NULL OR hash(instance_id, model, skill, h.judge) % 2 = 0 THEN score
            ELSE least(5, greatest(1, score + (hash(skill, model, h.judge) % 3)::INT - 1)) END,
       h.judge
FROM scores, (VALUES ('bench-human-1'), ('bench-human-2')) h(judge)
WHERE scores.judge = 'bench-judge' AND instance_id::INT % 10 = 0''')
    try:  # a checkout whose writers keep per-instance sums: keep them for these scores too
        from analysis.core import score_sums
    except ImportError:
        score_sums = None
    if score_sums is not None:
        score_sums.refresh(con, "SELECT dataset, judge, model, instance_id FROM scores "
                                "WHERE starts_with(judge, 'bench-human')")
"""
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)


# ------------------------------------------------------------------ runs
def measure_startup(root: Path, work: Path, browser, results: Results) -> Path:
    """A fresh server on an empty store, its first request drawing the Overview. Returns the
    demo store it built (the pages are measured on a copy of it)."""
    db = work / f"startup-{len(results.startup['first'])}.duckdb"
    with Server(root, db, work / "server.log") as server:
        tab = Tab(browser)
        first = tab.visit(server.url + "/", PAGES["overview"][1])
        start, end = tab.page.evaluate("[window.__runStart, window.__runEnd]")
        tab.close()
    results.startup["health"].append(server.health_s)
    results.startup["first"].append(first)
    results.startup["script start"].append(start / 1000)
    results.startup["script end"].append(end / 1000)
    return db


def measure_page(root, work, browser, results, store, db, page) -> None:
    """One fresh server: a warm-up visit, then the page cold, warm, and its widgets."""
    copy = work / f"{store}-run.duckdb"
    shutil.copyfile(db, copy)
    title, expected = PAGES[page]
    with Server(root, copy, work / "server.log") as server:
        warmup = "rejudge" if page == "annotate" else "annotate"
        # One browser context: its HTTP cache holds Streamlit's scripts after the warm-up, as a
        # returning visitor's does; each visit is a new session (a new websocket).
        tab = Tab(browser)
        tab.visit(f"{server.url}/{warmup}", 0)
        path = "" if page == "overview" else page  # the default page's URL is the root
        results.add(store, f"page {title}", "cold", tab.visit(f"{server.url}/{path}", expected))
        results.plots.setdefault(store, {})[title] = tab.plots()
        results.add(store, f"page {title}", "warm", tab.visit(f"{server.url}/{path}", expected))
        for w_page, name, kind, label, where, avoid in WIDGETS:
            if w_page == page:
                to, back = STEPS[kind](tab.page, label, where, avoid)
                what = f"widget {title}: {name}"
                results.add(store, what, "cold", tab.change(to, expected))
                tab.change(back, expected)
                results.add(store, what, "warm", tab.change(to, expected))
                tab.change(back, expected)
        tab.close()
    copy.unlink()


def run(args: argparse.Namespace) -> Results:
    from playwright.sync_api import sync_playwright

    root = Path(args.root).resolve()
    results = Results()
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        work = Path(tmp)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stores: dict[str, Path] = {"demo": Path(args.demo)} if args.demo else {}
        for i in range(0 if args.skip_startup else args.repeat):
            demo = measure_startup(root, work, browser, results)
            su = {k: v[-1] for k, v in results.startup.items()}
            print(f"start-up {i + 1}: healthy {su['health']:.1f} s; after the first request: "
                  f"script run {su['script start']:.1f}-{su['script end']:.1f} s, Overview drawn "
                  f"{su['first']:.1f} s", file=sys.stderr)  # fmt: skip
            stores.setdefault("demo", demo)
        if "1m" in args.stores:
            stores["1m"] = work / "generated.duckdb"
            generate_store(root, stores["1m"], args.scores)
        for store in args.stores:
            for page in args.pages:
                for i in range(args.repeat):
                    measure_page(root, work, browser, results, store, stores[store], page)
                    print(f"{store} {page} run {i + 1} done", file=sys.stderr)
        browser.close()
    return results


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def table(results: Results, args: argparse.Namespace) -> str:
    s = results.startup
    lines = [f"root {Path(args.root).resolve()}; median of {args.repeat} runs, seconds", ""]
    if s["first"]:
        lines += [
            f"start-up on an empty store: server healthy {median(s['health']):.2f}; first "
            f"request → Overview drawn {median(s['first']):.2f} (goal ≤ 8); of which the browser "
            f"loads the app until its first script run starts {median(s['script start']):.2f}, "
            f"that run ends at {median(s['script end']):.2f}",
            "",
        ]
    lines.append(f"{'store':6} {'what':44} {'cold':>7} {'warm':>7} {'plots':>6}")
    for store, rows in results.figures.items():
        for what, temps in rows.items():
            plots = results.plots.get(store, {}).get(what.removeprefix("page "), "")
            lines.append(
                f"{store:6} {what:44} {median(temps.get('cold', [])):7.2f} "
                f"{median(temps.get('warm', [])):7.2f} {plots!s:>6}"
            )
    return "\n".join(lines)


def _names(text: str) -> list[str]:
    return [] if text == "none" else [n for n in text.split(",") if n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(REPO), help="checkout whose app.py is served")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stores", default="demo,1m", type=_names, help="demo,1m or none")
    ap.add_argument("--pages", default=",".join(PAGES), type=_names,
                    help=f"some of {','.join(PAGES)}, or none (start-up only)")  # fmt: skip
    ap.add_argument("--scores", type=int, default=1_000_000)
    ap.add_argument("--json", metavar="OUT", help="write every run's figures here")
    ap.add_argument("--demo", metavar="DB", help="a demo store to measure the pages on "
                    "(default: the one the start-up runs built)")  # fmt: skip
    ap.add_argument("--skip-startup", action="store_true", help="no start-up runs (needs --demo "
                    "when the demo store is measured)")  # fmt: skip
    args = ap.parse_args()
    results = run(args)
    print(table(results, args))
    if args.json:
        out = {
            "root": str(Path(args.root).resolve()),
            "repeat": args.repeat,
            "startup": results.startup,
            "figures": results.figures,
            "plots": results.plots,
        }
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
