"""The store: schema on first use, transactions, and clear messages when another process holds
the file (DuckDB: one writer XOR many readers)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis.core.errors import StoreBusyError
from analysis.core.store import Store
from tests.store_fixtures import hold_store

REPO = Path(__file__).resolve().parents[2]


def test_schema_created_once_and_taxonomy_seeded(tmp_path):
    store = Store(tmp_path / "a.duckdb")
    store.ensure()
    store.ensure()
    with store.read() as con:
        skills = con.execute("SELECT skill FROM skills ORDER BY display_order").fetchall()
    assert [s for (s,) in skills][:3] == ["robustness", "correctness", "efficiency"]
    assert len(skills) == 12


def test_write_is_one_transaction(empty_store):
    with pytest.raises(RuntimeError), empty_store.write() as con:
        con.execute("INSERT INTO datasets (dataset, title, source) VALUES ('x', 'x', 'x')")
        raise RuntimeError("boom")
    with empty_store.read() as con:
        assert con.execute("SELECT count(*) FROM datasets").fetchone() == (0,)


def test_reader_gets_clear_message_while_a_writer_holds_the_file(empty_store):
    holder = hold_store(empty_store.path, "rw")
    try:
        store = Store(empty_store.path, busy_timeout=0.3)
        t = time.monotonic()
        with pytest.raises(StoreBusyError) as err, store.read():
            pass
        assert time.monotonic() - t < 5
        assert f"process {holder.pid}" in err.value.message
        assert "writing it right now" in err.value.message
    finally:
        holder.kill()
        holder.wait()


def test_cli_write_says_who_holds_the_file(empty_store, tmp_path):
    holder = hold_store(empty_store.path, "ro")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "analysis", "demo", "--db", str(empty_store.path)],
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert f"held by process {holder.pid}" in out.stderr
    assert "one writer or many readers" in out.stderr


def test_writer_waits_for_a_short_reader(empty_store):
    holder = hold_store(empty_store.path, "ro", seconds=0.5)
    try:
        with Store(empty_store.path, busy_timeout=10).write() as con:
            con.execute("INSERT INTO meta VALUES ('k', 'v')")
    finally:
        holder.wait()
    with empty_store.read() as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'k'").fetchone() == ("v",)


def test_version_changes_on_write(empty_store):
    before = empty_store.version()
    time.sleep(0.01)
    with empty_store.write() as con:
        con.execute("INSERT INTO meta VALUES ('k2', 'v')")
    assert empty_store.version() != before


def test_a_write_waits_for_a_read_in_the_same_process(tmp_path):
    """A page reading while the judging thread writes (same process, other mode) is retried,
    not an error: DuckDB refuses a second configuration of an open file."""
    import threading

    from analysis.core.store import Store

    store = Store(tmp_path / "p.duckdb", busy_timeout=10)
    store.ensure()
    stop, errors = threading.Event(), []

    def reader() -> None:
        while not stop.is_set():
            try:
                with store.read() as con:
                    con.execute("SELECT count(*) FROM scores").fetchone()
            except Exception as e:  # noqa: BLE001 - the test collects them
                errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(20):
            with store.write() as con:
                con.execute("INSERT INTO meta VALUES (?, 'v')", [f"k{i}"])
    finally:
        stop.set()
        t.join()
    assert errors == []
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM meta WHERE key LIKE 'k%'").fetchone()[0] == 20


def test_default_store_path_checkout_env_and_installed(tmp_path, monkeypatch):
    from analysis.core import store as store_mod

    monkeypatch.delenv("FINEGRAIN_DB", raising=False)
    assert store_mod.default_db_path() == REPO / "data" / "finegrain.duckdb"  # this checkout
    monkeypatch.setenv("FINEGRAIN_DB", str(tmp_path / "x.duckdb"))
    assert store_mod.default_db_path() == tmp_path / "x.duckdb"
    # Installed (no app.py beside the package): the user's data folder, never site-packages.
    monkeypatch.delenv("FINEGRAIN_DB")
    monkeypatch.setattr(store_mod, "REPO_ROOT", tmp_path / "site-packages")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert store_mod.default_db_path() == tmp_path / "share" / "finegrain" / "finegrain.duckdb"
