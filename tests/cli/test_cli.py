"""The command line: one-paragraph errors with exit status 2, summaries on success."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from analysis.core.store import Store

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_demo_then_import_scores_and_bad_file(tmp_path):
    db = str(tmp_path / "c.duckdb")
    out = cli("demo", "--db", db, "--seed", "7")
    assert out.returncode == 0, out.stderr
    assert "seed 7" in out.stdout
    good = tmp_path / "labels.csv"
    good.write_text("instance_id,model,skill,score\n1,gpt4,correctness,4\n1,gpt4,factuality,N/A\n")
    out = cli("import-scores", str(good), "--db", db, "--dataset", "demo", "--judge", "me",
              "--kind", "human")  # fmt: skip
    assert out.returncode == 0, out.stderr
    with Store(db).read() as con:
        rows = con.execute("SELECT skill, score FROM latest_scores WHERE judge = 'me' "
                           "ORDER BY skill").fetchall()  # fmt: skip
        kind = con.execute("SELECT kind FROM judges WHERE judge = 'me'").fetchone()
    assert rows == [("correctness", 4.0), ("factuality", None)] and kind == ("human",)
    bad = tmp_path / "bad.csv"
    bad.write_text("instance_id,model,skill,score\n1,gpt4,correctnes,4\n")
    out = cli("import-scores", str(bad), "--db", db, "--judge", "me")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "bad.csv, line 2, field 'skill'" in out.stderr and "did you mean" in out.stderr
    assert "Nothing was written" in out.stderr


def test_import_flask_missing_folder_is_one_paragraph(tmp_path):
    out = cli("import-flask", str(tmp_path / "nowhere"), "--db", str(tmp_path / "x.duckdb"))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "flask_evaluation.jsonl" in out.stderr and "laid out like" in out.stderr


def test_bad_scale_option_is_rejected():
    out = cli("import-scores", "x.csv", "--scale", "10-1")
    assert out.returncode == 2 and "minimum must be below" in out.stderr


def test_ctrl_c_says_what_was_kept_and_exits_130(monkeypatch, tmp_path, capsys):
    import analysis.cli.data as data
    from analysis.cli.main import main

    def interrupted(db):
        raise KeyboardInterrupt

    monkeypatch.setattr(data, "open_store", interrupted)
    assert main(["demo", "--db", str(tmp_path / "x.duckdb")]) == 130
    err = capsys.readouterr().err.lstrip()  # click ends the ^C line first
    assert err.startswith("interrupted: an unfinished import wrote nothing")
    assert "Traceback" not in err
