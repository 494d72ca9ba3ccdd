"""Another process holding a store file, as a CLI import or judging run (writer) or a reader
would: DuckDB allows one writer XOR many readers, and a conflict fails at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
