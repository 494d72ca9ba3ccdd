"""The store's schema: the tables (schema.sql, the one file that defines them), their version,
and FLASK's taxonomy seeded into the ``skills`` table."""

from __future__ import annotations

from pathlib import Path

from analysis.core.taxonomy import SKILLS, Criterion

SCHEMA_FILE = Path(__file__).with_name("schema.sql")
# Bump when schema.sql gains a table: Store.ensure() then re-applies it (every statement is
# idempotent), so a store made by an older version gets the new tables on first use.
SCHEMA_VERSION = "3"  # 2: queue_items; 3: judgments.cache_key

READ_SCHEMA_VERSION = "SELECT value FROM meta WHERE key = 'schema_version'"
SET_SCHEMA_VERSION = "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)"
UPSERT_SKILL = """
INSERT OR REPLACE INTO skills
    (skill, label, ability, display_order, definition, rubric, scale_min, scale_max, custom)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def apply(con) -> None:
    """Tables, taxonomy, then the version row, inside the caller's transaction: a crash never
    leaves a "current" store without its taxonomy."""
    con.execute(SCHEMA_FILE.read_text())
    seed_taxonomy(con)
    con.execute(SET_SCHEMA_VERSION, [SCHEMA_VERSION])


def is_current(con) -> bool:
    row = con.execute(READ_SCHEMA_VERSION).fetchone()
    return row is not None and row[0] == SCHEMA_VERSION


def seed_taxonomy(con) -> None:
    """Write FLASK's 12 skills (idempotent; refreshes texts)."""
    for c in SKILLS.values():
        con.execute(UPSERT_SKILL, criterion_row(c))


def criterion_row(c: Criterion) -> list:
    """A criterion as the ``skills`` table's row, in UPSERT_SKILL's column order."""
    return [c.skill, c.label, c.ability, c.order, c.definition, list(c.rubric), c.scale_min,
            c.scale_max, c.custom]  # fmt: skip
