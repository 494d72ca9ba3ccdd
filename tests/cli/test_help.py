"""Help and --version are instant: they import none of the heavy libraries the commands use."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from analysis.cli.main import main, version

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "numpy", "scipy", "duckdb", "openai", "streamlit", "judges.runner", "tqdm")
COMMANDS = (
    "agreement", "batches", "demo", "export", "import-flask", "import-scores", "judge", "report",
    "serve", "verbosity",
)  # fmt: skip


def _imported_after(args: list[str]) -> tuple[list[str], str, int]:
    """Run the CLI on ``args`` in a fresh interpreter; the heavy modules it left imported."""
    code = (
        "import contextlib, io, json, sys\n"
        "from analysis.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main({args!r})\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps([heavy, out.getvalue(), rc]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.parametrize("args", [["--help"], ["judge", "--help"], ["--version"]])
def test_help_imports_no_heavy_module(args):
    heavy, out, rc = _imported_after(args)
    assert rc == 0 and out
    assert heavy == [], f"{' '.join(args)} imported {heavy}"


def test_top_level_help_lists_every_command_on_one_line():
    _, out, _ = _imported_after(["--help"])
    listed = out.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == list(COMMANDS)
    assert "``" not in out  # plain text, no reST


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_db_and_plain_help(command, capsys):
    assert main([command, "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # help wraps to the terminal's width
    assert "--db PATH" in out and "$FINEGRAIN_DB, else data/finegrain.duckdb in a checkout" in out
    assert "``" not in out


def test_version_is_the_projects(capsys):
    with open(REPO / "pyproject.toml", "rb") as f:
        expected = tomllib.load(f)["project"]["version"]
    assert version() == expected
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"finegrain {expected}"
    out = subprocess.run([sys.executable, "-m", "analysis", "--version"], cwd=REPO,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0 and out.stdout.strip() == f"finegrain {expected}"


def test_usage_errors_exit_2_without_a_traceback(capsys):
    assert main(["no-such-command"]) == 2
    assert main(["agreement", "--db", "x.duckdb"]) == 2  # --dataset is required
    err = capsys.readouterr().err
    assert "No such command" in err and "Missing option '--dataset'" in err
    assert "Traceback" not in err


def test_help_repeats_the_flask_url_of_the_importer():
    from analysis.cli.data import FLASK_URL
    from analysis.ingest.flask_source import DEFAULT_URL

    assert FLASK_URL == DEFAULT_URL
