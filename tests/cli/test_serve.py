"""``finegrain serve``: finds app.py (checkout or installed data files) and starts streamlit."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from analysis.cli.main import main
from analysis.cli.serve import find_app, streamlit_command

REPO = Path(__file__).resolve().parents[2]


def test_app_is_found_in_the_checkout_first():
    assert find_app() == REPO / "app.py"


def test_installed_app_is_found_under_share_finegrain(tmp_path):
    site = tmp_path / "site-packages"  # a non-editable install: no app.py beside the package
    site.mkdir()
    installed = tmp_path / "env" / "share" / "finegrain" / "app.py"
    installed.parent.mkdir(parents=True)
    installed.write_text("")
    assert find_app(site, tmp_path / "env") == installed
    assert find_app(site, tmp_path / "elsewhere") is None


def test_missing_app_is_one_paragraph_and_exit_2(monkeypatch, tmp_path, capsys):
    import analysis.cli.serve as serve

    monkeypatch.setattr(serve, "find_app", lambda: None)
    assert main(["serve", "--db", str(tmp_path / "x.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Dashboard not found: app.py is neither")
    assert "Traceback" not in err


def test_only_given_options_reach_streamlit():
    app = REPO / "app.py"
    assert streamlit_command(app, None, None, ()) == [
        sys.executable, "-m", "streamlit", "run", str(app)
    ]  # fmt: skip
    cmd = streamlit_command(app, 8600, "0.0.0.0", ("--server.headless", "true"))
    assert cmd[4:] == ["--server.port", "8600", "--server.address", "0.0.0.0",
                       "--server.headless", "true", str(app)]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _health(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read().decode()
    except OSError:
        return None


def test_serve_starts_the_dashboard_and_stops_with_it(tmp_path):
    port = _free_port()
    db = tmp_path / "served.duckdb"
    cmd = [sys.executable, "-m", "analysis", "serve", "--port", str(port), "--db", str(db),
           "--server.headless", "true", "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]  # fmt: skip
    # Its own session, so that the cleanup below can end streamlit too whatever happens.
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (answer := _health(port)) is None and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.25)
        assert answer == "ok"
        proc.terminate()  # serve passes SIGTERM on to streamlit and returns its status
        proc.wait(timeout=30)
        assert _health(port) is None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
