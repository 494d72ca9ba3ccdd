"""A disk that fills during an import: the CLI says so in one paragraph (exit status 2, no
traceback) and the store afterwards holds exactly the rows it held before.

The full disk is real where it can be: the import runs in a child process whose file-size limit
(RLIMIT_FSIZE) sits just above the store's size, so DuckDB's writes past it fail with EFBIG (the
child ignores SIGXFSZ, as a process on a full disk gets ENOSPC rather than a signal). As root, a
small tmpfs gives the real ENOSPC as well.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from analysis.cli.main import main
from analysis.core.errors import StoreError
from analysis.core.store import Store, disk_full

REPO = Path(__file__).resolve().parents[2]
ROOM = 64 * 1024  # bytes the store may grow before the "disk" is full


def checksums(db: Path) -> dict[str, tuple[int, str]]:
    """Every table's row count and a digest of its rows in a fixed order (computed here in
    Python, not by the store)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "ORDER BY table_name").fetchall()]  # fmt: skip
        out = {}
        for t in tables:
            rows = sorted(repr(r) for r in con.execute(f'SELECT * FROM "{t}"').fetchall())
            out[t] = (len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest())
        return out
    finally:
        con.close()


def _limited(limit: int):
    def start() -> None:  # runs in the child before exec; both settings survive the exec
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return start


def cli_with_room(db: Path, *args: str) -> subprocess.CompletedProcess:
    """``finegrain ARGS --db DB`` in a child that may write only ``ROOM`` bytes past the store's
    current size into any file."""
    limit = db.stat().st_size + ROOM
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args, "--db", str(db)],
        cwd=REPO, capture_output=True, text=True, timeout=300, preexec_fn=_limited(limit),
    )  # fmt: skip


def _assert_disk_full_message(proc: subprocess.CompletedProcess, db: Path) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    # After the progress bars (stderr), the last lines are the message: one paragraph.
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    first = errors[0]
    assert first.startswith(f"error: Disk full: The disk holding the store {db} is full"), first
    assert "the store is unchanged" in first


@pytest.fixture
def demo(demo_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, path)
    return path


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A small store (a few scores) that the FLASK import would make many times bigger."""
    return _small_store(tmp_path / "small.duckdb", tmp_path)


def _small_store(db: Path, tmp_path: Path) -> Path:
    labels = tmp_path / "labels.csv"
    labels.write_text("instance_id,model,skill,score\n1,m,correctness,4\n2,m,correctness,N/A\n")
    assert main(["import-scores", str(labels), "--db", str(db), "--dataset", "tiny",
                 "--judge", "me", "--kind", "human"]) == 0  # fmt: skip
    return db


def _big_score_file(path: Path, rows: int = 60_000) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["instance_id", "model", "skill", "score", "judge"])
        for i in range(rows):
            w.writerow([i, f"model-{i % 7}", "correctness", 1 + i % 5, f"judge-{i % 3}"])
    return path


def test_import_scores_on_a_full_disk_leaves_the_store_as_it_was(demo, tmp_path):
    before = checksums(demo)
    scores = _big_score_file(tmp_path / "big.csv")
    proc = cli_with_room(demo, "import-scores", str(scores), "--dataset", "big")
    _assert_disk_full_message(proc, demo)
    assert checksums(demo) == before
    # With room again, the same import succeeds: the failed one left nothing in the way.
    ok = subprocess.run([sys.executable, "-m", "analysis", "import-scores", str(scores),
                         "--dataset", "big", "--db", str(demo)],
                        cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    with Store(demo).read() as con:
        assert con.execute("SELECT count(*) FROM scores WHERE dataset = 'big'").fetchone() == (
            60_000,
        )


def test_import_flask_on_a_full_disk_leaves_the_store_as_it_was(small, flask_dir):
    before = checksums(small)
    assert before["scores"][0] == 2
    proc = cli_with_room(small, "import-flask", str(flask_dir))
    _assert_disk_full_message(proc, small)
    assert checksums(small) == before


def test_a_real_full_tmpfs(tmp_path, flask_dir):
    """ENOSPC from a real filesystem: a 3 MB tmpfs (root only: mount needs it)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)],
                       check=True, capture_output=True, timeout=30)  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot mount a tmpfs here (not root?): {e}")
    try:
        db = _small_store(mnt / "store.duckdb", tmp_path)
        before = checksums(db)
        proc = subprocess.run([sys.executable, "-m", "analysis", "import-flask", str(flask_dir),
                               "--db", str(db)],
                              cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
        _assert_disk_full_message(proc, db)
        assert "No space left on device" in proc.stderr
        assert checksums(db) == before
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EDQUOT, "Disk quota exceeded"),
        OSError(errno.EFBIG, "File too large"),
        duckdb.IOException('Could not write file "x.duckdb": No space left on device'),
        duckdb.TransactionException(
            'TransactionContext Error: Failed to commit: Could not write file "x": File too large'
        ),
    ],
    ids=["ENOSPC", "EDQUOT", "EFBIG", "IOException", "failed commit"],
)
def test_an_error_inside_a_write_is_the_one_message_and_rolls_back(tmp_path, error):
    """An injected error where the writes go (judging runs and annotations write the same
    way): the transaction is rolled back and the message says so."""
    store = Store(tmp_path / "s.duckdb")
    store.ensure()
    before = checksums(store.path)
    with pytest.raises(StoreError, match="is full") as raised, store.write() as con:
        con.execute("CREATE TABLE half_written AS SELECT 1 AS x")
        raise error
    assert raised.value.__cause__ is error and raised.value.title == "Disk full"
    assert "the store is unchanged" in raised.value.message
    assert checksums(store.path) == before


def test_other_errors_are_left_as_they_are(tmp_path):
    assert disk_full(tmp_path, OSError(errno.EACCES, "Permission denied")) is None
    assert disk_full(tmp_path, duckdb.CatalogException("Table x does not exist")) is None
    assert disk_full(tmp_path, ValueError("No space left on device")) is None  # not an I/O error
