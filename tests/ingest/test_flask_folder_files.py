"""A FLASK folder holding something other than files: a FIFO, a link to /dev/zero, a folder, a
symlink loop, an oversized file. Each gets the one-paragraph error, quickly, from the real CLI
(in a subprocess with a time and memory limit: before the fix a FIFO hung and /dev/zero grew
without end), and the store is left as it was."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.core.store import Store
from analysis.ingest.file_checks import regular_file
from analysis.ingest.flask_source import import_flask
from tests.mini_flask import build_flask, query

REPO = Path(__file__).resolve().parents[2]
EVAL = "evaluation_set/flask_evaluation.jsonl"
OUT = "model_output/outputs/alpaca.jsonl"
REVIEW = "gpt_review/outputs/vicuna_review.jsonl"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(path: Path) -> None:
    path.mkdir()


def _loop(path: Path) -> None:
    other = path.with_name("other.link")
    other.symlink_to(path.name)
    path.symlink_to(other.name)


NOT_REGULAR = "not a regular file (a pipe, device or socket)"
CASES = [
    (EVAL, _fifo, NOT_REGULAR),
    (OUT, _fifo, NOT_REGULAR),
    (REVIEW, _fifo, NOT_REGULAR),
    (OUT, _dev_zero, NOT_REGULAR),
    (EVAL, _dev_zero, NOT_REGULAR),
    (OUT, _folder, "this is a folder, not a file"),
    (EVAL, _folder, "this is a folder, not a file"),
    (OUT, _loop, "a symbolic link that loops"),
    (EVAL, _loop, "a symbolic link that loops"),
]


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def _cli(folder: Path, db: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "analysis", "import-flask", str(folder), "--db", str(db)],
        cwd=REPO, capture_output=True, text=True, timeout=60, preexec_fn=_limits,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
    )  # fmt: skip


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """A store already holding a small FLASK, so "unchanged" means something."""
    root = tmp_path_factory.mktemp("seeded")
    store = Store(root / "seed.duckdb")
    import_flask(store, str(build_flask(root / "FLASK")))
    return store.path


@pytest.mark.parametrize(("rel", "make", "problem"), CASES)
def test_special_file_is_refused_cleanly(tmp_path, seeded, rel, make, problem):
    folder = build_flask(tmp_path / "FLASK", n=8)
    (folder / rel).unlink()
    make(folder / rel)
    db = tmp_path / "s.duckdb"
    db.write_bytes(seeded.read_bytes())
    before = query(Store(db), "SELECT count(*) FROM instances")
    out = _cli(folder, db)
    assert out.returncode != 0
    assert f"{folder}/{rel}: {problem}" in " ".join(out.stderr.split()), out.stderr[-2000:]
    assert "Traceback" not in out.stderr + out.stdout
    assert query(Store(db), "SELECT count(*) FROM instances") == before == [(6 + 2,)]


def test_oversized_file_is_refused_naming_the_limit(tmp_path):
    folder = build_flask(tmp_path / "FLASK")
    with (folder / OUT).open("a") as f:
        f.write("\n" * 100_000)  # blank lines: still a valid file, now the only large one
    out = _cli(folder, tmp_path / "s.duckdb", FINEGRAIN_MAX_FILE_MB="0.05")  # 52,428 bytes
    assert out.returncode != 0
    text = " ".join(out.stderr.split())
    size = (folder / OUT).stat().st_size
    expected = f"{folder}/{OUT}: {size:,} bytes is over the limit of 0.05 MB per file"
    assert expected in text, out.stderr[-2000:]
    assert "FINEGRAIN_MAX_FILE_MB" in text and "Traceback" not in out.stderr
    ok = _cli(folder, tmp_path / "t.duckdb", FINEGRAIN_MAX_FILE_MB="0.2")
    assert ok.returncode == 0, ok.stderr[-2000:]


@pytest.mark.parametrize(("size", "limit", "refused"), [(10, 10, False), (11, 10, True)])
def test_size_limit_boundary(tmp_path, size, limit, refused):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"x" * size)
    if refused:
        with pytest.raises(InputError, match="over the limit"):
            regular_file(path, "f.jsonl", limit)
    else:
        regular_file(path, "f.jsonl", limit)


def test_a_symlink_to_a_regular_file_is_still_read(tmp_path):
    folder = build_flask(tmp_path / "FLASK")
    real = tmp_path / "elsewhere.jsonl"
    (folder / OUT).rename(real)
    (folder / OUT).symlink_to(real)
    report = import_flask(Store(tmp_path / "s.duckdb"), str(folder))
    assert report.counts["responses"] == 6 * 2
