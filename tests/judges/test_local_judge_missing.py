"""Without torch and transformers (the local-judge extra) the transformers backend says how to
install them: one FinegrainError paragraph, exit 2 in the CLI, never a traceback. torch is
hidden through ``sys.modules``, so these run whether it is installed or not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import MissingExtraError
from analysis.core.store import Store
from analysis.ingest.score_files import import_scores
from judges import backends
from judges.config import JudgeConfig

REPO = Path(__file__).resolve().parents[2]
INSTALL = "pip install -r requirements-local-judge.txt"
EXTRA = 'pip install "finegrain[local-judge]"'

# The CLI as a user runs it, in an interpreter where importing torch/transformers fails.
CLI_WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # `import torch` now raises ImportError, as when not installed
sys.modules["transformers"] = None
from analysis.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def tiny_db(tmp_path: Path) -> Path:
    """Two responses to one instruction: enough for a plan with calls to make."""
    rows = [
        dict(instance_id="q0", model=m, skill="correctness", judge="h", kind="human", score=3,
             instruction="what is 1 + 1", response=f"{m} says 2", reference="2")
        for m in ("m1", "m2")
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "t.csv", index=False)
    import_scores(Store(tmp_path / "tiny.duckdb"), tmp_path / "t.csv", dataset="tiny")
    return tmp_path / "tiny.duckdb"


def _judge(db: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = ["judge", "--backend", "transformers", "--model", "x", "--dataset", "tiny",
            "--db", str(db), "--device", "cpu", *extra]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", CLI_WITHOUT_TORCH, *argv],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_cli_run_without_torch_names_the_install_command(tiny_db):
    done = _judge(tiny_db)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "error: Optional packages missing:" in done.stderr
    assert INSTALL in done.stderr and EXTRA in done.stderr
    with Store(tiny_db).read() as con:  # refused before the run started: nothing written
        assert con.execute("SELECT count(*) FROM runs WHERE judge LIKE 'x (%'").fetchone() == (0,)


def test_cli_estimate_without_torch_needs_no_backend(tiny_db):
    """Estimating builds prompts only: it works without the extra."""
    done = _judge(tiny_db, "--estimate-only")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Judge x" in done.stdout


def test_backend_raises_the_projects_error_from_the_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingExtraError) as info:
        backends.create(JudgeConfig("transformers", "x"))
    assert isinstance(info.value.__cause__, ImportError)  # raised from it, for a debugger
    message = info.value.message
    assert INSTALL in message and EXTRA in message and "\n" not in message  # one paragraph


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_missing_optional_module_skips_locally_and_fails_under_ci(monkeypatch, ci):
    """The rule test_local_judge.py relies on (tests/conftest.py ``require_modules``)."""
    from tests.conftest import require_modules

    monkeypatch.setenv("CI", ci)
    monkeypatch.setitem(sys.modules, "torch", None)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match=f"torch not installed: {INSTALL}"):
        require_modules("torch", fix=INSTALL)
