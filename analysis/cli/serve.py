"""``serve``: the dashboard, as ``streamlit run app.py`` would start it from a checkout.

Its settings (headless, loopback only, no usage statistics, no file watcher, the theme) are in
``.streamlit/config.toml`` beside app.py, which Streamlit reads whatever the working directory,
and which ``pip install`` puts beside the installed app.py. Should that file be missing (an app
folder copied without it), the settings a served dashboard must never lack are passed as
flags instead; a flag given to serve wins over both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import click

from analysis.cli.common import db_option

# What a dashboard started by serve must be without .streamlit/config.toml: no prompt or browser
# (it may run under a service manager), reachable from this machine only, no usage statistics.
ESSENTIAL = {
    "server.headless": "true",
    "server.showEmailPrompt": "false",
    "server.address": "127.0.0.1",
    "browser.gatherUsageStats": "false",
    "client.showSidebarNavigation": "false",
}

# analysis/cli/serve.py → the folder holding the analysis package (a checkout, or the source of
# an editable install), where app.py and pages/ sit beside it.
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def find_app(package_parent: Path = PACKAGE_PARENT, data_root: Path | None = None) -> Path | None:
    """app.py beside the analysis package, else where ``pip install .`` puts it
    (``share/finegrain`` under the environment's data folder, with pages/); None if neither."""
    roots = [data_root] if data_root is not None else _data_roots()
    for app in [package_parent / "app.py", *(r / "share" / "finegrain" / "app.py" for r in roots)]:
        if app.is_file():
            return app
    return None


def _data_roots() -> list[Path]:
    """The environment's data folder, then the user's (``pip install --user`` puts data there)."""
    roots = [Path(sysconfig.get_path("data"))]
    user = f"{os.name}_user"
    if user in sysconfig.get_scheme_names():
        roots.append(Path(sysconfig.get_path("data", user)))
    return roots


def config_file(app: Path) -> Path:
    """The Streamlit settings Streamlit reads for ``app`` (whatever the working directory)."""
    return app.parent / ".streamlit" / "config.toml"


def streamlit_command(
    app: Path, port: int | None, address: str | None, extra: Sequence[str]
) -> list[str]:
    """``python -m streamlit run``: only what was given is passed, so the defaults are those of
    ``streamlit run app.py`` with .streamlit/config.toml beside app.py; without that file,
    ``ESSENTIAL``'s settings, except those given."""
    options = [*(["--server.port", str(port)] if port else [])]
    options += ["--server.address", address] if address else []
    given = {
        a.split("=", 1)[0].removeprefix("--") for a in [*options, *extra] if a.startswith("--")
    }
    if not config_file(app).is_file():
        for key, value in ESSENTIAL.items():
            options += [] if key in given else [f"--{key}", value]
    return [sys.executable, "-m", "streamlit", "run", *options, *extra, str(app)]


@click.command(
    short_help="Start the dashboard (streamlit run app.py).",
    context_settings={"ignore_unknown_options": True},
)
@db_option
@click.option(
    "--port", type=click.IntRange(1, 65535), metavar="N", help="port  [default: streamlit's, 8501]"
)
@click.option("--address", metavar="A", help="address to listen on  [default: streamlit's]")
@click.argument("streamlit_args", nargs=-1, type=click.UNPROCESSED, metavar="[STREAMLIT ARGS]")
def serve(db: str | None, port: int | None, address: str | None, streamlit_args: tuple) -> int:
    """Start the dashboard on the store --db. Other arguments go to streamlit run, for example
    --server.headless true. Returns streamlit's exit status."""
    from analysis.core.errors import FinegrainError

    app = find_app()
    if app is None:
        raise FinegrainError(
            f"app.py is neither beside the analysis package ({PACKAGE_PARENT}) nor in "
            f"{Path(sysconfig.get_path('data')) / 'share' / 'finegrain'}: run from a checkout, "
            "or install Finegrain with pip install . (which puts the dashboard there).",
            title="Dashboard not found",
        )
    env = dict(os.environ)
    db = db or env.get("FINEGRAIN_DB")
    if db:
        env["FINEGRAIN_DB"] = str(Path(db).resolve())  # streamlit runs in app.py's folder
    command = streamlit_command(app, port, address, streamlit_args)
    # The cwd is app.py's folder: the project-level and the script-level .streamlit/config.toml
    # are then one file (a user's ~/.streamlit/config.toml still applies beneath it).
    return _wait(subprocess.Popen(command, cwd=app.parent, env=env))


def _wait(proc: subprocess.Popen) -> int:
    """Streamlit's exit status. A SIGTERM to this process stops streamlit too (else it would be
    left running); Ctrl-C reaches both from the terminal, so streamlit is given time to stop."""
    try:
        previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    except ValueError:  # not the main thread: no handler, nothing to restore
        previous = None
    try:
        return proc.wait()
    except KeyboardInterrupt:
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            return proc.wait()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
