"""Golden contents of the simulated demo store (issue 14: the start-up work must not change the
demo by a single byte).

Run it with the code *before* a change to (re)write ``demo.json`` beside this file:

    cd /work/before && /work/main/.venv/bin/python \\
        /work/main/tests/data/golden/make_demo.py --root /work/before

``--root`` is the repository whose ``analysis`` package builds the demo (default: the one this
file is in). tests/ingest/test_demo_golden.py imports ``checksums`` from here and compares the
current code's store with the stored figures exactly.

Per table that ``build_and_write_demo`` fills (the demo is seeded, so every row is
deterministic): the row count and a SHA-256 over its rows in a canonical order (``ORDER BY
ALL``; every value as ``repr``, floats exactly). Left out are what a build cannot repeat: the
wall-clock columns (``TIMESTAMP``: imported, started, created) and the surrogate keys a
sequence hands out (``judgment_id``, ``seq``); a score's judgment is compared through the
judgment's natural key instead (run, instance, model).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SURROGATE = {"judgment_id", "seq"}
BOOKKEEPING = {"meta"}  # the schema's version, not the demo's content
# A score's judgment by its natural key: judgment ids depend on the order rows were inserted.
SCORES = """
SELECT s.* EXCLUDE (judgment_id), j.run_id AS j_run, j.instance_id AS j_instance,
       j.model AS j_model
FROM scores s LEFT JOIN judgments j USING (judgment_id)
"""


# Columns added after these golden values were written (schema 6: runs.repeat_number): left
# out of the checksums, and each must be NULL in the stores they describe (checked below).
LATER = {"runs": ("repeat_number",)}


def _columns(con, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
        [table],
    ).fetchall()
    later = LATER.get(table, ())
    for c in (c for c, _ in rows if c in later):
        filled = con.execute(f'SELECT count(*) FROM "{table}" WHERE "{c}" IS NOT NULL').fetchall()
        assert filled == [(0,)], f"{table}.{c} is set on {filled[0][0]} rows: not what was golden"
    return [
        f'"{c}"'
        for c, t in rows
        if c not in SURROGATE and c not in later and not t.startswith("TIMESTAMP")
    ]


def table_checksums(con, tables: list[str], roots: tuple[Path, ...] = ()) -> dict[str, dict]:
    """``{table: {"rows": n, "sha256": hex}}`` for each of ``tables`` in the open store, each
    of ``roots`` (temporary folders an import recorded) written as ``<root>``."""
    out = {}
    for table in tables:
        if table == "scores":
            cols = ", ".join(_columns(con, "scores"))
            sql = f"SELECT {cols}, j_run, j_instance, j_model FROM ({SCORES})"
        else:
            sql = f'SELECT {", ".join(_columns(con, table))} FROM "{table}"'
        digest, n = hashlib.sha256(), 0
        for row in con.execute(f"{sql} ORDER BY ALL").fetchall():
            text = repr(row)
            for root in roots:
                text = text.replace(str(root), "<root>")
            digest.update(text.encode() + b"\n")
            n += 1
        out[table] = {"rows": n, "sha256": digest.hexdigest()}
    return out


def demo_tables(con) -> list[str]:
    """The base tables holding rows after a demo build (the schema's own seeded skills too),
    but its bookkeeping."""
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()]  # fmt: skip
    filled = [t for t in names if con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]]
    return [t for t in filled if t not in BOOKKEEPING]


def checksums(db: Path, tables: list[str] | None = None) -> dict[str, dict[str, object]]:
    """The checksums of a store the demo was built in (``tables``: those to compare)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return table_checksums(con, tables or demo_tables(con))
    finally:
        con.close()


def build(db: Path) -> None:
    from analysis.core.store import Store
    from analysis.ingest.demo import build_and_write_demo

    build_and_write_demo(Store(db))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(HERE.parents[2]))
    ap.add_argument("--out", default=str(HERE / "demo.json"))
    root = Path(ap.parse_args().root).resolve()
    sys.path.insert(0, str(root))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.duckdb"
        build(db)
        figures = checksums(db)
    out = Path(ap.parse_args().out)
    out.write_text(json.dumps({"root": str(root), "tables": figures}, indent=1) + "\n")
    counts = ", ".join(f"{table} {v['rows']}" for table, v in figures.items())
    print(f"wrote {out}: {counts}")


if __name__ == "__main__":
    main()
