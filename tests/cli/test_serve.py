"""``finegrain serve``: finds app.py (checkout or installed data files) and starts streamlit."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from analysis.cli.main import main
from analysis.cli.serve import ESSENTIAL, find_app, streamlit_command
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


# ------------------------------------------------ the settings: .streamlit/config.toml


def _config() -> dict:
    import tomllib

    return tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())


def test_the_served_settings_are_beside_app_py():
    c = _config()
    assert c["server"]["headless"] is True and c["server"]["showEmailPrompt"] is False
    assert c["server"]["address"] == "127.0.0.1"  # loopback unless --address says otherwise
    assert c["server"]["fileWatcherType"] == "none"
    assert c["browser"]["gatherUsageStats"] is False
    assert c["client"]["toolbarMode"] == "viewer" and c["client"]["showErrorDetails"] == "type"
    assert c["client"]["showSidebarNavigation"] is False  # never the list of source files
    theme = c["theme"]
    assert theme["base"] == "light"
    # Streamlit's bundled fonts only: no font face, no URL, nothing fetched from the network
    assert {theme["font"], theme["headingFont"], theme["codeFont"]} <= {"sans-serif", "monospace"}
    assert "fontFaces" not in theme and "http" not in (REPO / ".streamlit/config.toml").read_text()
    for key, value in ESSENTIAL.items():  # serve's fallback flags say what the file says
        section, name = key.split(".")
        assert str(c[section][name]).lower() == value


def test_the_settings_are_installed_beside_the_installed_app():
    import tomllib

    files = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    data = files["data-files"]
    assert data["share/finegrain"] == ["app.py"]
    assert data["share/finegrain/.streamlit"] == [".streamlit/config.toml"]


def test_without_the_file_the_essential_settings_are_flags(tmp_path):
    app = tmp_path / "app.py"
    app.write_text("")
    cmd = streamlit_command(app, None, "0.0.0.0", ("--server.headless=false",))
    flags = dict(zip(cmd[4:-1:2], cmd[5:-1:2], strict=False))
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.showEmailPrompt"] == "false"
    assert flags["--server.address"] == "0.0.0.0"  # what was given wins
    assert cmd.count("--server.address") == 1
    assert "--server.headless" not in cmd and "--server.headless=false" in cmd
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text("[server]\nheadless = true\n")
    assert streamlit_command(app, None, None, ()) == [sys.executable, "-m", "streamlit", "run",
                                                      str(app)]  # fmt: skip


def _serve_from(cwd: Path, argv: list[str], env: dict) -> tuple[str, str]:
    """Start serve in ``cwd`` (its own session, so that streamlit is ended with it), wait for
    its health answer on loopback, stop it; (the answer, everything it printed)."""
    port = free_port()
    cmd = [*argv, "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (answer := _health(port)) is None and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.25)
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        return answer or "", out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _desktop_env(tmp_path: Path) -> dict:
    """A desktop's environment: a display (Streamlit would then open a browser and ask for an
    e-mail address unless told headless), a home without a Streamlit config of its own."""
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "DISPLAY": ":0", "HOME": str(home), "PYTHONPATH": str(REPO),
            "BROWSER": "false", "HF_HUB_OFFLINE": "1"}  # fmt: skip


def _served_as_configured(answer: str, out: str) -> None:
    assert answer == "ok", out
    assert "URL: http://127.0.0.1:" in out  # bound to loopback only (no "Network URL")
    assert "Network URL" not in out and "External URL" not in out
    assert "Email" not in out and "usage statistics" not in out.lower()


def test_serve_from_another_directory_gets_the_settings(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    argv = [sys.executable, "-m", "analysis", "serve", "--db", str(tmp_path / "s.duckdb")]
    _served_as_configured(*_serve_from(elsewhere, argv, _desktop_env(tmp_path)))


def test_an_installed_dashboard_gets_the_settings(tmp_path):
    """app.py, pages/ and .streamlit/ laid out as pip installs them (share/finegrain), started
    by serve's own code from a third directory."""
    share = tmp_path / "env" / "share" / "finegrain"
    shutil.copytree(REPO / "pages", share / "pages", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "app.py", share / "app.py")
    (share / ".streamlit").mkdir()
    shutil.copy(REPO / ".streamlit" / "config.toml", share / ".streamlit" / "config.toml")
    code = ("import sys; from pathlib import Path; import analysis.cli.serve as s; "
            f"s.find_app = lambda: Path({str(share / 'app.py')!r}); "
            "from analysis.cli.main import main; sys.exit(main(sys.argv[1:]))")  # fmt: skip
    argv = [sys.executable, "-c", code, "serve", "--db", str(tmp_path / "s.duckdb")]
    _served_as_configured(*_serve_from(tmp_path, argv, _desktop_env(tmp_path)))
