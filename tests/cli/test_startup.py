"""The command line imports only what a command needs (issue 14): printing help and importing a
score file never import scipy (1.6 s of a 5 s command, before), plotly or streamlit.

Structural, not timed: each command runs in a fresh ``python -X importtime -m analysis`` and the
modules it imported are read from that report (every import, even one undone later, is in it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from analysis.core.store import Store

REPO = Path(__file__).resolve().parents[2]
NEVER = ("scipy", "plotly", "streamlit")  # the heaviest, and none of these commands' business
HELP = [["--help"], ["--version"], *([c, "--help"] for c in
        ("agreement", "demo", "import-flask", "import-scores", "judge", "serve"))]  # fmt: skip


def imported(*args: str) -> tuple[set[str], subprocess.CompletedProcess]:
    """The top-level packages ``python -m analysis ARGS`` imported, and the finished process."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "analysis", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":  # the report's header line
                names.add(name)
    return names, done


def _top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


@pytest.mark.parametrize("args", HELP, ids=lambda a: " ".join(a))
def test_help_imports_no_heavy_package(args):
    names, done = imported(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "analysis.cli.main" in names  # the report is read right: the CLI itself is listed
    assert not _top(names) & {*NEVER, "pandas", "numpy", "duckdb"}, sorted(_top(names))


def test_import_scores_imports_no_scipy_plotly_or_streamlit(tmp_path):
    db = tmp_path / "s.duckdb"
    scores = tmp_path / "labels.csv"
    scores.write_text("instance_id,model,skill,score\n1,m1,correctness,4\n2,m1,correctness,2\n")
    names, done = imported("import-scores", str(scores), "--db", str(db), "--dataset", "d",
                           "--judge", "me", "--kind", "human")  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"pandas", "duckdb"} <= _top(names)  # it did import the file
    assert not _top(names) & set(NEVER), sorted(_top(names) & set(NEVER))
    with Store(db).read() as con:
        stored = con.execute("SELECT instance_id, score FROM latest_scores ORDER BY 1").fetchall()
    assert stored == [("1", 4.0), ("2", 2.0)]


def test_usage_error_imports_nothing_heavy():
    names, done = imported("agreement", "--db", "x.duckdb")  # --dataset is missing
    assert done.returncode == 2 and "Missing option '--dataset'" in done.stderr
    assert not _top(names) & {*NEVER, "pandas", "numpy", "duckdb"}


def test_app_start_imports_no_scipy_until_the_demo_is_built():
    """The modules app.py imports on every server start leave scipy out: only building the
    demo (an empty store) and the statistics pages need it."""
    code = (
        "import sys\n"
        "import analysis.views.overview, analysis.views.state, analysis.views.tables\n"
        "import analysis.views.source_tasks, analysis.ingest.demo\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "[]"
