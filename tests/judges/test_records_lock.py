"""The judging journal's lock (filelock, portable): a run's journal is locked by the process
writing it, another process sees it live and cannot take it, and it is free again once the run
closes it or dies; lock files do not pile up; ``judges.records`` needs no ``fcntl``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis.core.errors import StoreBusyError
from analysis.core.store import Store
from judges.records import (
    ORPHAN_LOCK_AGE_S,
    CallRecord,
    Journal,
    is_abandoned,
    journal_dir,
    recover,
)

REPO = Path(__file__).resolve().parents[2]

# Holds run r1's journal until a line arrives on stdin, then closes it (keeping the journal).
HOLDER = """
import sys
from analysis.core.store import Store
from judges.records import Journal
j = Journal(Store(sys.argv[1]), "r1")
print("held", flush=True)
sys.stdin.readline()
j.close(remove=False)
print("closed", flush=True)
"""

# What another process sees: is the journal live, and can it take the lock itself?
PROBE = """
import json, sys
from pathlib import Path
from analysis.core.errors import StoreBusyError
from analysis.core.store import Store
from judges.records import Journal, is_abandoned
store = Store(sys.argv[1])
out = {"abandoned": is_abandoned(Path(sys.argv[2]))}
try:
    Journal(store, "r1").close(remove=False)
    out["took"] = True
except StoreBusyError as e:
    out["took"], out["error"] = False, str(e)
print(json.dumps(out))
"""


def _python(code: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=REPO, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw,
    )  # fmt: skip


def _probe(store: Store, journal: Path) -> dict:
    proc = _python(PROBE, str(store.path), str(journal))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return json.loads(out)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "j.duckdb")  # the journal needs only the path, not the database


@pytest.mark.parametrize("ending", ["close", "sigkill"])
def test_another_process_cannot_take_a_held_journal_until_it_is_released(store, ending):
    holder = _python(HOLDER, str(store.path))
    try:
        assert holder.stdout.readline().strip() == "held", holder.stderr.read()
        journal = journal_dir(store) / "r1.jsonl"
        held = _probe(store, journal)
        assert held["abandoned"] is False and held["took"] is False
        assert "being written by another process" in held["error"]
        if ending == "close":
            holder.stdin.write("go\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "closed"
        else:  # a crash: the operating system drops the dead process's lock
            holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert _probe(store, journal) == {"abandoned": True, "took": True}


def test_a_journal_is_live_in_its_own_process_too(store):
    """The runner refuses a second run of a judge from the same process (the Re-judge page)."""
    journal = Journal(store, "r1")
    try:
        assert not is_abandoned(journal.path)
        with pytest.raises(StoreBusyError):
            Journal(store, "r1")
    finally:
        journal.close(remove=True)
    assert list(journal_dir(store).iterdir()) == []  # neither journal nor lock file is left


def test_a_kept_journal_is_recovered_and_leaves_no_lock_file(store):
    store.ensure()
    with store.write() as con:
        con.execute(
            "INSERT INTO runs (run_id, judge, dataset, source, status) "
            "VALUES ('r1', 'j', 'd', 'x', 'running')"
        )
    journal = Journal(store, "r1")
    journal.append(_record("r1"))
    journal.close(remove=False)  # as when the store stayed busy: the journal waits for recover
    assert sorted(p.name for p in journal_dir(store).iterdir()) == ["r1.jsonl", "r1.jsonl.lock"]
    assert recover(store) == 1
    assert list(journal_dir(store).iterdir()) == []
    with store.read() as con:
        assert con.execute("SELECT status, n_ok FROM runs").fetchall() == [("interrupted", 1)]


def test_an_old_lock_file_without_journal_is_swept_and_a_young_one_kept(store):
    folder = journal_dir(store)
    folder.mkdir(parents=True)
    old, young = folder / "gone.jsonl.lock", folder / "new.jsonl.lock"
    old.touch()
    young.touch()
    past = time.time() - ORPHAN_LOCK_AGE_S - 10
    os.utime(old, (past, past))
    assert recover(store) == 0
    assert [p.name for p in folder.iterdir()] == ["new.jsonl.lock"]  # a run about to start


def test_records_imports_and_locks_without_fcntl(tmp_path):
    """Windows has no fcntl: judges.records must import and lock without it. (Hiding fcntl
    gives filelock's soft lock, not the Windows lock it uses there: this checks the import and
    the lock's life cycle, not Windows' own locking.)"""
    code = f"""
import sys, warnings
sys.modules["fcntl"] = None  # importing fcntl now raises ImportError
warnings.simplefilter("ignore")  # filelock says it falls back to a soft lock here
from analysis.core.store import Store
from judges.records import Journal, is_abandoned, journal_dir
store = Store({str(tmp_path / "w.duckdb")!r})
j = Journal(store, "r1")
assert not is_abandoned(j.path)
j.close(remove=True)
assert list(journal_dir(store).iterdir()) == [], list(journal_dir(store).iterdir())
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def _record(run_id: str) -> CallRecord:
    return CallRecord(
        run_id, "d", "i1", "m", "j", "k", "{}", None, "ok", None, 1.0, 1, 1, {"s": 3.0}
    )
