"""The store's schema: the tables (schema.sql, the one file that defines them), their version,
and FLASK's taxonomy seeded into the ``skills`` table (the shared one; a dataset's own criteria
are rows of ``criteria``, written by the batch writer)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analysis.core.taxonomy import SKILLS, Criterion

SCHEMA_FILE = Path(__file__).with_name("schema.sql")
# Bump when schema.sql changes: Store.ensure() then re-applies it in one transaction (every
# statement is idempotent), so a store made by an older version upgrades in place on first use.
# 2: queue_items; 3: judgments.cache_key; 4: criteria per dataset (the `criteria` table, the
# `dataset_skills` view; a v3 store's custom criteria move to the datasets that use them);
# 5: score_sums (per model × instance sums the writes maintain; a v4 store's are filled in);
# 6: families (judge and model → family, for the Judges page's self-preference);
# 7: batches and batch_requests (judging through the OpenAI Batch API).
SCHEMA_VERSION = "7"

READ_SCHEMA_VERSION = "SELECT value FROM meta WHERE key = 'schema_version'"
SET_SCHEMA_VERSION = "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)"
UPSERT_SKILL = """
INSERT OR REPLACE INTO skills
    (skill, label, ability, display_order, definition, rubric, scale_min, scale_max, custom)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def apply(con) -> None:
    """Tables (and the upgrade of an older store's rows), taxonomy, then the version row, inside
    the caller's transaction: a crash leaves the store as it was, never half upgraded and never
    "current" without its taxonomy."""
    con.execute(SCHEMA_FILE.read_text())
    seed_taxonomy(con)
    con.execute(SET_SCHEMA_VERSION, [SCHEMA_VERSION])


def _version_row(con) -> tuple | None:
    # Read whole: DuckDB refuses other work on a connection whose last result is unread
    # (``fetchone`` leaves it open), and the caller's next statement may be a relation.
    rows = con.execute(READ_SCHEMA_VERSION).fetchall()
    return rows[0] if rows else None


def is_current(con) -> bool:
    row = _version_row(con)
    return row is not None and row[0] == SCHEMA_VERSION


def is_older(con) -> bool:
    """A Finegrain store written by an older version, to upgrade before it is read. False for
    a current store and for a file that is no Finegrain store (no version row to trust)."""
    try:
        row = _version_row(con)
    except duckdb.Error:
        return False
    return row is not None and str(row[0]).isdigit() and int(row[0]) < int(SCHEMA_VERSION)


def seed_taxonomy(con) -> None:
    """Write FLASK's 12 skills (idempotent; refreshes texts)."""
    for c in SKILLS.values():
        con.execute(UPSERT_SKILL, criterion_row(c))


def criterion_row(c: Criterion) -> list:
    """A shared skill as the ``skills`` table's row, in UPSERT_SKILL's column order."""
    return [c.skill, c.label, c.ability, c.order, c.definition, list(c.rubric), c.scale_min,
            c.scale_max, c.custom]  # fmt: skip


def own_criterion_row(c: Criterion) -> list:
    """A dataset's own criterion as the ``criteria`` table's row (INSERT_CRITERION's order)."""
    return [c.dataset, c.skill, c.label, c.ability, c.order, c.definition, list(c.rubric),
            c.scale_min, c.scale_max]  # fmt: skip
