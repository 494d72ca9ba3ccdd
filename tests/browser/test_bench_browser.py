"""bench/browser.py still drives the app as a person does: it finds the Overview's charts and
the sidebar's Judge and Models widgets, changes them and sees the page drawn again, and writes
every figure to its JSON (what it reports is checked, not how fast: no timed test)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, require
from tests.live_app import CHROMIUM

pytestmark = pytest.mark.browser


def test_bench_measures_the_overview_and_its_sidebar_widgets(demo_db: Path, tmp_path: Path):
    require(CHROMIUM, "Debian chromium (apt-get install -y chromium)")
    db = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, db)
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, "bench/browser.py", "--repeat", "1", "--stores", "demo", "--pages",
         "overview", "--demo", str(db), "--skip-startup", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(out.read_text())
    rows = figures["figures"]["demo"]
    assert set(rows) == {
        "page Overview",
        "widget Overview: sidebar judge",
        "widget Overview: sidebar models",
    }
    for what, temps in rows.items():
        assert set(temps) == {"cold", "warm"}, what
        for seconds in (*temps["cold"], *temps["warm"]):
            assert math.isfinite(seconds) and seconds > 0, (what, seconds)
    assert figures["plots"]["demo"]["Overview"] == 2  # leaderboard and coverage, both drawn
    assert figures["startup"]["first"] == []  # --skip-startup: no start-up run
    assert "page Overview" in done.stdout and "widget Overview: sidebar judge" in done.stdout
