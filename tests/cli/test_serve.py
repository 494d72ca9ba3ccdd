"""``finegrain serve``: finds app.py (checkout or installed data files) and starts streamlit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from analysis.cli.main import main
from analysis.cli.serve import find_app, streamlit_command
from tests.live_app import free_port

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


def _health(port: int) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read().decode()
    except OSError:
        return None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_serve_starts_the_dashboard_and_stops_with_it(tmp_path):
    port = free_port()
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
        # streamlit (in serve's process group) is gone too; the port itself may be reused at
        # once by another test worker, so it is not what is checked.
        deadline = time.monotonic() + 10
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_alive(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_user_install_is_found_too(tmp_path, monkeypatch):
    """pip install --user puts share/finegrain under the user's data folder, not sys.prefix."""
    import sysconfig

    user = tmp_path / "user"
    (user / "share" / "finegrain").mkdir(parents=True)
    (user / "share" / "finegrain" / "app.py").write_text("")
    real = sysconfig.get_path

    def get_path(name, scheme=None, *a, **k):
        if scheme and scheme.endswith("_user"):
            return str(user)
        return str(tmp_path / "env") if scheme is None else real(name, scheme, *a, **k)

    monkeypatch.setattr(sysconfig, "get_path", get_path)
    assert find_app(package_parent=tmp_path / "site-packages") == user / "share/finegrain/app.py"
