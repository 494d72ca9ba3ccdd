"""``finegrain report``: one HTML file of the chosen view, a progress bar on stderr, and bad
input as one paragraph with exit status 2 and no file written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report_fixtures import DATASET, JUDGE, Parsed, figures, hostile_report_store

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", "report", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("report_cli") / "store.duckdb"
    hostile_report_store(path)
    return str(path)


def test_writes_the_report_of_the_filters(db, tmp_path):
    out = tmp_path / "r.html"
    run = cli("--db", db, "--out", str(out), "--dataset", DATASET, "--judge", JUDGE,
              "--models", "m1, m3", "--domains", "Math,Coding", "--levels", "1,2")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert f"Report written to {out}" in run.stdout
    assert "100/100" in run.stderr and "Done" in run.stderr  # the progress bar ran to the end
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    text = " ".join(Parsed(html).texts)  # the filters applied, listed
    for shown in ("m1, m3", "Math, Coding", "1 · simple lifestyle knowledge"):
        assert shown in text, shown
    (board,) = figures(html)["leaderboard"]
    assert sorted(board["data"][0]["y"]) == ["m1", "m3"]  # only the models asked for


def test_defaults_need_no_options_but_out(tmp_path, demo_db):
    db = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, db)
    out = tmp_path / "demo.html"
    run = cli("--db", str(db), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert "SIMULATED DATA" in " ".join(Parsed(out.read_text(encoding="utf-8")).texts)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--dataset", "nope"), "--dataset: unknown dataset 'nope' in this store; available:"),
        (("--judge", "nobody"), "--judge: unknown judge 'nobody' in dataset 'hostile'"),
        (("--models", "m1,m9"), "--models: unknown model 'm9' in dataset 'hostile'; available:"),
        (("--levels", "1,7"), "--levels: '7' is not a difficulty level 1-5"),
        (("--levels", "x"), "--levels: 'x' is not a difficulty level 1-5"),
        (("--hard",), "--hard: dataset 'hostile' has no FLASK-Hard instance"),
    ],
)
def test_bad_input_is_one_paragraph_and_writes_nothing(db, tmp_path, args, said):
    out = tmp_path / "r.html"
    run = cli("--db", db, "--out", str(out), *args)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert f"error: Bad input: {said}" in run.stderr
    assert not out.exists()


def test_bad_out_and_missing_store(db, tmp_path):
    run = cli("--db", db, "--out", str(tmp_path / "no" / "such" / "r.html"))
    assert run.returncode == 2 and "is not a file in an existing folder" in run.stderr
    run = cli("--db", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "r.html"))
    assert run.returncode == 2 and "no store at" in run.stderr
    assert not (tmp_path / "none.duckdb").exists()  # reading created nothing
    run = cli("--db", db)
    assert run.returncode == 2 and "--out" in run.stderr
