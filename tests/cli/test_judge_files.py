"""``finegrain judge --prompt file:… / --rubric …`` with files that are not what they should be:
the one-paragraph error, exit status 2, no traceback, and no call to the server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.cli.main import main
from tests.judges.test_prompt_files import BAD_PROMPTS, BAD_RUBRICS, ids
from tests.openai_server import OpenAIServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo(demo_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store" / "demo.duckdb"
    path.parent.mkdir()
    shutil.copy(demo_db, path)
    return path


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def _args(db: Path, base_url: str, *extra: str) -> list[str]:
    return ["judge", "--db", str(db), "--backend", "openai", "--model", "judge-test",
            "--base-url", base_url, "--dataset", "demo", "--limit", "2", *extra]  # fmt: skip


def _one_paragraph(err: str, file: Path, says: str) -> None:
    assert "Traceback" not in err, err
    first = err.splitlines()[0]
    assert first.startswith("error: Bad input: ") and str(file) in first and says in first, err


@pytest.mark.parametrize(("case", "make", "says"), BAD_PROMPTS, ids=ids(BAD_PROMPTS))
def test_a_bad_prompt_file_exits_2_with_one_paragraph(demo, server, capsys, case, make, says):
    name = make(demo.parent)
    before = server.count()
    code = main(_args(demo, server.base_url, "--prompt", f"file:{demo.parent / name}"))
    assert code == 2
    _one_paragraph(capsys.readouterr().err, demo.parent / name.partition("#")[0], says)
    assert server.count() == before  # nothing was asked


@pytest.mark.parametrize(("case", "make", "says"), BAD_RUBRICS, ids=ids(BAD_RUBRICS))
def test_a_bad_rubric_file_exits_2_with_one_paragraph(demo, server, capsys, case, make, says):
    name = make(demo.parent)
    before = server.count()
    code = main(_args(demo, server.base_url, "--rubric", str(demo.parent / name)))
    assert code == 2
    _one_paragraph(capsys.readouterr().err, demo.parent / name, says)
    assert server.count() == before


@pytest.mark.parametrize("flag", ["--prompt", "--rubric"])
def test_the_real_command_line_prints_no_traceback(demo, server, flag):
    """The installed entry point in its own process: what a user sees in a terminal."""
    folder = demo.parent / "a-folder.json"
    folder.mkdir()
    value = f"file:{folder}" if flag == "--prompt" else str(folder)
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", *_args(demo, server.base_url, flag, value)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    _one_paragraph(proc.stderr, folder, "this is a folder")
    assert "Nothing was written to the store." in proc.stderr


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("fifo", "not a regular file"),
        ("folder", "this is a folder"),
        ("zero", "not a regular file"),
    ],
)
def test_a_judge_file_that_is_not_a_file_exits_2(demo, server, capsys, kind, says):
    """``--config`` names the operator's judge file: a FIFO would block forever, /dev/zero
    would never end."""
    path = demo.parent / "judge.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    code = main(["judge", "--db", str(demo), "--config", str(path), "--dataset", "demo"])
    assert code == 2
    _one_paragraph(capsys.readouterr().err, path, says)
