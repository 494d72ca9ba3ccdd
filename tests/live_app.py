"""A real Streamlit server and Debian chromium driven by Playwright (never `playwright install`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import IO

from tests.conftest import REPO, require

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """``with StreamlitServer(db) as url:`` runs app.py headless on loopback.

    The port comes from ``free_port``, which frees it again before streamlit binds it: under
    pytest-xdist another worker can take it in between, so a server that exits at start is
    retried on a new port. Its output goes to a temporary file, not a pipe nobody reads (a full
    pipe would block the server), and a start failure shows its tail."""

    ATTEMPTS = 3

    def __init__(self, db: Path) -> None:
        self.db = db
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log: IO[bytes] | None = None

    def __enter__(self) -> str:
        for _ in range(self.ATTEMPTS):
            url = self._start()
            if self._healthy(url):
                return url
            if self.proc is not None and self.proc.poll() is None:
                break  # running but never healthy: a new port would not help
        tail = self._log_tail()
        self.__exit__()
        raise RuntimeError(f"streamlit did not become healthy within 60 s:\n{tail}")

    def _start(self) -> str:
        self.__exit__()  # a previous attempt's process and log, if any
        self.port = free_port()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        env = {**os.environ, "FINEGRAIN_DB": str(self.db), "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        return f"http://127.0.0.1:{self.port}"

    def _healthy(self, url: str) -> bool:
        """Healthy, and served by our process (not by whoever took the port instead)."""
        assert self.proc is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return self.proc.poll() is None
            except OSError:
                time.sleep(0.2)
        return False

    def _log_tail(self, chars: int = 4000) -> str:
        if self.log is None:
            return ""
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-chars:]

    def __exit__(self, *exc) -> None:
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self.log:
            self.log.close()
            self.log = None


def launch_browser(playwright):
    require(CHROMIUM, "Debian chromium (apt-get install -y chromium)")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


ROW_PX = 35  # glide data grid: header and rows are 35 px high


def click_row(page, row: int) -> None:
    """Tick a row's selection checkbox (the grid is a canvas: click by position)."""
    box = page.locator("[data-testid='stDataFrame']").first.bounding_box()
    page.mouse.click(box["x"] + 16, box["y"] + ROW_PX + ROW_PX // 2 + ROW_PX * row)


def settled(page) -> None:
    """Wait until the script run that the last action started has finished."""
    page.wait_for_timeout(300)  # the run starts a moment after the click
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        timeout=60_000
    )
