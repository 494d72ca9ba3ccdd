"""An old (v3) store upgrades in place: every row kept, custom criteria attached to the datasets
that use them, in one transaction, idempotent.

The v3 store is built here from the v3 schema file as it was released (tests/data/schema_v3.sql,
a copy of analysis/core/schema.sql at d4e4059), with raw SQL, so the test does not depend on
today's writer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from analysis.core import schema
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.core.taxonomy import SKILLS
from analysis.ingest.score_files import import_scores
from analysis.views import radar
from tests.mini_flask import query

REPO = Path(__file__).resolve().parents[2]
V3_SCHEMA = REPO / "tests" / "data" / "schema_v3.sql"
V3_TABLES = (
    "datasets", "instances", "responses", "judges", "runs", "judgments", "scores", "queue_items",
)  # fmt: skip

# v3: one global row per custom criterion. coherence (1-3) is used by two datasets' scores,
# passed (0-1) only by alpha's instance skill lists (annotated before any score), unused by none.
CUSTOM = [
    ("coherence", "Coherence", None, 100, "Hangs together.", ["loose", "mostly", "tight"], 1, 3),
    ("passed", "Passed", None, 101, "Meets the bar.", ["no", "yes"], 0, 1),
    ("unused", "Unused", None, 102, "Nobody scored it.", [], 1, 10),
]
DATASETS = [("alpha", "Alpha"), ("beta", "Beta"), ("gold", "Gold")]
INSTANCES = [  # dataset, instance_id, skills
    ("alpha", "a1", ["coherence", "passed"]),
    ("alpha", "a2", ["coherence", "passed"]),
    ("beta", "b1", ["coherence"]),
    ("gold", "g1", ["correctness", "readability"]),
]
SCORES = [  # dataset, instance, model, judge, skill, score, superseded
    ("alpha", "a1", "m1", "h", "coherence", 3.0, False),
    ("alpha", "a1", "m1", "h", "coherence", 1.0, True),  # history, kept
    ("alpha", "a2", "m1", "h", "coherence", 2.0, False),
    ("alpha", "a1", "m2", "h", "coherence", None, False),  # N/A
    ("alpha", "a2", "m2", "h", "coherence", 1.0, False),
    ("alpha", "a1", "m1", "j", "coherence", 2.0, False),
    ("alpha", "a2", "m1", "j", "coherence", 2.0, False),
    ("alpha", "a2", "m2", "j", "coherence", 1.0, False),
    ("beta", "b1", "m1", "h", "coherence", 2.5, False),
    ("gold", "g1", "m1", "j", "correctness", 4.0, False),
    ("gold", "g1", "m1", "j", "readability", 5.0, False),
]


def build_v3_store(path: Path) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute(V3_SCHEMA.read_text())
        insert_skill = "INSERT INTO skills VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        for i, c in enumerate(SKILLS.values()):
            con.execute(insert_skill, [c.skill, c.label, c.ability, i, c.definition,
                                       list(c.rubric), 1, 5, False])  # fmt: skip
        for row in CUSTOM:
            con.execute(insert_skill, [*row, True])
        con.execute("INSERT INTO meta VALUES ('schema_version', '3')")
        for d, title in DATASETS:
            con.execute("INSERT INTO datasets (dataset, title, source) VALUES (?, ?, 'v3')",
                        [d, title])  # fmt: skip
        for d, i, skills in INSTANCES:
            con.execute("INSERT INTO instances (dataset, instance_id, instruction, domains, "
                        "skills) VALUES (?, ?, 'Say something.', [], ?)",
                        [d, i, skills])  # fmt: skip
            for m in ("m1", "m2"):
                con.execute("INSERT INTO responses VALUES (?, ?, ?, 'text', 4)", [d, i, m])
        con.execute("INSERT INTO judges VALUES ('h', 'human', 'import', NULL, NULL, '{}'), "
                    "('j', 'llm', 'openai', 'gpt', 'flask-v1', '{}')")  # fmt: skip
        for d, _ in DATASETS:
            for judge in ("h", "j"):
                con.execute("INSERT INTO runs (run_id, judge, dataset, status) "
                            "VALUES (?, ?, ?, 'complete')", [f"{judge}-{d}", judge, d])  # fmt: skip
        for d, i, m, judge, skill, score, superseded in SCORES:
            (jid,) = con.execute(
                "INSERT INTO judgments (run_id, dataset, instance_id, model, judge, raw_output, "
                "parse_status, cache_key) VALUES (?, ?, ?, ?, ?, 'raw', 'ok', 'k') "
                "RETURNING judgment_id", [f"{judge}-{d}", d, i, m, judge]).fetchone()  # fmt: skip
            run = f"{judge}-{d}"
            con.execute("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [d, i, m, judge, skill, score, jid, run, superseded])  # fmt: skip
        con.execute("INSERT INTO queue_items (queue, dataset, instance_id, model) "
                    "VALUES ('annotate', 'alpha', 'a1', 'm1')")  # fmt: skip
    finally:
        con.close()


def rows(store: Store, tables=V3_TABLES) -> dict[str, list]:
    """Every row of the tables, read with a plain DuckDB connection: Store.read() would
    upgrade an old store first."""
    con = duckdb.connect(str(store.path), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    finally:
        con.close()


@pytest.fixture
def v3(tmp_path) -> Store:
    path = tmp_path / "v3.duckdb"
    build_v3_store(path)
    return Store(path)


def test_v3_store_upgrades_in_place_keeping_every_row(v3):
    before = rows(v3)
    v3.ensure()
    assert query(v3, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (schema.SCHEMA_VERSION,)]  # fmt: skip
    assert schema.SCHEMA_VERSION == "7"
    after = rows(v3)
    # v7 adds the (empty) tables of batch runs.
    assert query(v3, "SELECT (SELECT count(*) FROM batches), (SELECT count(*) FROM batch_requests)"
                 ) == [(0, 0)]  # fmt: skip
    # v6 adds runs.repeat_number: NULL on every run written before (none was a repeat).
    assert query(v3, "SELECT count(*) FROM runs WHERE repeat_number IS NOT NULL") == [(0,)]
    after["runs"] = query(v3, "SELECT * EXCLUDE (repeat_number) FROM runs ORDER BY ALL")
    assert after == before  # every score (history and N/A too), judgment, queue item ...
    # Each custom criterion is attached to every dataset that uses it, texts and scale copied.
    assert query(v3, "SELECT * FROM criteria ORDER BY ALL") == [
        ("alpha", "coherence", "Coherence", None, 100, "Hangs together.",
         ["loose", "mostly", "tight"], 1.0, 3.0),
        ("alpha", "passed", "Passed", None, 101, "Meets the bar.", ["no", "yes"], 0.0, 1.0),
        ("beta", "coherence", "Coherence", None, 100, "Hangs together.",
         ["loose", "mostly", "tight"], 1.0, 3.0),
    ]  # fmt: skip
    # `skills` is the shared taxonomy again; a criterion no dataset used stays, unread.
    assert query(v3, "SELECT skill FROM skills WHERE custom") == [("unused",)]
    assert query(v3, "SELECT count(*) FROM skills WHERE NOT custom") == [(12,)]
    # What the pages read: per dataset, its own criteria, else FLASK's skills.
    resolved = "SELECT skill, scale_min, scale_max, custom FROM dataset_skills WHERE dataset = ?"
    alpha = {r[0]: r[1:] for r in query(v3, resolved, ["alpha"])}
    assert alpha["coherence"] == (1.0, 3.0, True) and alpha["passed"] == (0.0, 1.0, True)
    assert alpha["correctness"] == (1.0, 5.0, False) and "unused" not in alpha
    gold = {r[0] for r in query(v3, resolved, ["gold"])}
    assert gold == set(SKILLS)


def test_upgraded_store_reads_right_and_takes_a_new_scale_for_the_same_name(v3, tmp_path):
    v3.ensure()
    data = radar.radar_data(v3, Filters("alpha", "h"))
    t = data.table.set_index(["model", "axis"])
    # m1: current scores 3 and 2 (the superseded 1 is history); m2: N/A and 1.
    assert t.loc[("m1", "coherence"), ["mean", "n", "scale_min", "scale_max"]].tolist() == [
        2.5, 2, 1.0, 3.0]  # fmt: skip
    assert t.loc[("m2", "coherence"), ["mean", "n", "n_na"]].tolist() == [1.0, 1, 1]
    # Another dataset may now score "coherence" on 1-5; alpha keeps its 1-3.
    path = tmp_path / "gamma.csv"
    path.write_text("instance_id,model,skill,score,scale_min,scale_max\n"
                    "c1,m1,coherence,5,1,5\nc2,m1,coherence,4,1,5\n")  # fmt: skip
    import_scores(v3, path, judge="h", dataset="gamma")
    gamma = radar.radar_data(v3, Filters("gamma", "h")).table
    assert gamma[["mean", "scale_min", "scale_max"]].values.tolist() == [[4.5, 1.0, 5.0]]
    again = radar.radar_data(v3, Filters("alpha", "h")).table
    assert set(zip(again["scale_min"], again["scale_max"], strict=True)) == {(1.0, 3.0)}
    # The judgment sequence carried over: new ids follow the old ones.
    assert query(v3, "SELECT count(DISTINCT judgment_id), count(*) FROM judgments") == [(13, 13)]


def test_upgrade_is_idempotent(v3):
    v3.ensure()
    tables = (*V3_TABLES, "criteria", "skills", "meta")
    once = rows(v3, tables)
    with v3.write() as con:  # what a second upgrade would do: nothing
        schema.apply(con)
    assert rows(v3, tables) == once


def test_a_failed_upgrade_leaves_the_v3_store_as_it_was(v3, monkeypatch):
    before = rows(v3, (*V3_TABLES, "skills", "meta"))

    def crash(con) -> None:
        raise RuntimeError("power cut")

    monkeypatch.setattr(schema, "seed_taxonomy", crash)  # after the schema script ran
    with pytest.raises(RuntimeError, match="power cut"):
        v3.ensure()
    assert rows(v3, (*V3_TABLES, "skills", "meta")) == before  # custom rows still in skills
    with pytest.raises(duckdb.CatalogException):
        rows(v3, ("criteria",))
    monkeypatch.undo()
    v3.ensure()  # and the next try upgrades it
    assert query(v3, "SELECT count(*) FROM criteria") == [(3,)]


def test_a_read_only_command_upgrades_an_old_store_first(v3, tmp_path):
    """The agreement CLI on a v3 store (no import, no page ran ensure() before)."""
    assert rows(v3, ("meta",)) == {"meta": [("schema_version", "3")]}
    out = subprocess.run(
        [sys.executable, "-m", "analysis", "agreement", "--db", str(v3.path), "--dataset",
         "alpha", "--a", "j", "--b", "h", "--json", "--n-boot", "20"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "coherence" in out.stdout
    assert query(v3, "SELECT value FROM meta WHERE key = 'schema_version'") == [("7",)]
    data = radar.radar_data(Store(v3.path), Filters("beta", "h")).table
    assert data[["axis", "mean", "scale_min", "scale_max"]].values.tolist() == [
        ["coherence", 2.5, 1.0, 3.0]]  # fmt: skip
