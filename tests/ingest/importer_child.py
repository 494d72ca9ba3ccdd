"""Child process of tests/ingest/test_importer_properties.py: runs the real CLI on many inputs.

Reads a JSON list of jobs on stdin, ``{"base": store, "work": folder, "argv": [...]}``, and for
each copies ``base`` to a fresh store in ``work``, runs ``analysis.cli.main.main`` (what
``python -m analysis`` runs) with ``--db`` pointing there, and prints one JSON line per job: exit
status, stdout, stderr, a traceback if one escaped, and the store's fingerprint (before and
after) and scores after.
A traceback escaping ``main`` is exactly what ``python -m analysis`` would print; the parent sets
the memory limit and the time limit, so a crash, MemoryError or hang ends this process and the
parent reports the job it was on (the last line printed names the jobs done).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import sys
import traceback
from pathlib import Path

import duckdb

TABLES_SQL = (
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_type = 'BASE TABLE' ORDER BY table_name"
)


def fingerprint(db: Path) -> dict[str, list]:
    """table → [row count, sha256 of its sorted rows]: read with duckdb directly, not the Store."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for (table,) in con.execute(TABLES_SQL).fetchall():
            rows = con.execute(f'SELECT * FROM "{table}"').fetchall()
            text = "\n".join(sorted(repr(r) for r in rows))
            out[table] = [
                len(rows),
                hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest(),
            ]
        return out
    finally:
        con.close()


def stored_scores(db: Path) -> list[list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT dataset, instance_id, model, judge, skill, score FROM scores "
            "WHERE NOT superseded"
        ).fetchall()
        return [
            [*(v.encode("utf-8", "backslashreplace").decode() for v in r[:5]), r[5]] for r in rows
        ]
    finally:
        con.close()


def run_job(job: dict) -> dict:
    from analysis.cli.main import main
    from analysis.core.store import Store

    store = Path(job["work"]) / "store.duckdb"
    shutil.copy(job["base"], store)
    # The copy is brought to this code's schema first: an upgrade on opening is not the import.
    Store(store).ensure()
    before = fingerprint(store)
    out, err = io.StringIO(), io.StringIO()
    crash = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([job["argv"][0], "--db", str(store), *job["argv"][1:]])
        except BaseException:  # noqa: BLE001 - what `python -m analysis` would show as a traceback
            code, crash = 1, traceback.format_exc()
    return {
        "code": code,
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "crash": crash,
        "before": before,
        "fingerprint": fingerprint(store),
        "scores": stored_scores(store),
    }


def main() -> None:
    jobs = json.loads(sys.stdin.read())
    for job in jobs:
        print(json.dumps(run_job(job), ensure_ascii=True), flush=True)


if __name__ == "__main__":
    main()
