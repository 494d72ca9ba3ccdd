"""Another process holding a store file, as a CLI import or judging run (writer) or a reader
would: DuckDB allows one writer XOR many readers, and a conflict fails at once. Also a writable
copy of the demo store and a read that opens the file directly (not through Store)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from analysis.core.store import Store


def demo_copy(demo_db: Path, tmp_path: Path) -> Store:
    """A copy of the session's demo store that a test may write to."""
    path = tmp_path / "s.duckdb"
    shutil.copy(demo_db, path)
    return Store(path)


def query(store: Store, sql: str, params=()) -> list[tuple]:
    con = duckdb.connect(str(store.path), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


HOLD = """
import duckdb, sys, time
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print("holding", flush=True)
time.sleep(float(sys.argv[3]))
"""


def hold_store(path: Path, mode: str, seconds: float = 30) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(path), mode, str(seconds)],
                         stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert p.stdout.readline().strip() == "holding"
    return p
