"""The judge/model → family mapping (schema 6, analysis/views/judge_family.py): stored and read
back, a v5 store upgraded in place, bad rows refused with a message naming row and field and
nothing written, one transaction (a failure half way leaves the old mapping), the demo panel's
rows, and the guesses offered from names."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from analysis.core import schema
from analysis.core.errors import InputError
from analysis.core.store import Store
from analysis.views import judge_family as jf
from tests.store_fixtures import demo_copy, query

ROWS = [
    {"kind": "judge", "name": "gpt-4 (simulated)", "family": "openai"},
    {"kind": "model", "name": "claude_v1", "family": "anthropic"},
    {"kind": "model", "name": "gpt4", "family": "openai"},
]


def _stored(store: Store) -> list[tuple]:
    return query(store, "SELECT kind, name, family FROM families ORDER BY ALL")


def test_set_and_read_back(empty_store):
    assert jf.families(empty_store).empty
    assert jf.set_families(empty_store, ROWS) == 3
    got = jf.families(empty_store)
    assert list(got.columns) == ["kind", "name", "family"]
    assert got.values.tolist() == [[r["kind"], r["name"], r["family"]] for r in ROWS]
    assert jf.family_of(empty_store) == {
        "judge": {"gpt-4 (simulated)": "openai"},
        "model": {"claude_v1": "anthropic", "gpt4": "openai"},
    }
    # Saving replaces the whole mapping; a row without a family leaves the name unmapped,
    # a wholly empty row (the editor's new line) is ignored, names are normalised (NFC, trim).
    jf.set_families(empty_store, pd.DataFrame([
        {"kind": "model", "name": " gpt4 ", "family": "openai "},
        {"kind": "model", "name": "claude_v1", "family": ""},
        {"kind": None, "name": None, "family": None},
        {"kind": "judge", "name": "Cafe\u0301", "family": "x"},
    ]))  # fmt: skip
    assert _stored(empty_store) == [("judge", "Café", "x"), ("model", "gpt4", "openai")]


@pytest.mark.parametrize(
    ("row", "line", "field", "words"),
    [
        ({"kind": "judges", "name": "a", "family": "f"}, 2, "kind", "'judge' or 'model'"),
        ({"kind": "model", "name": "", "family": "f"}, 2, "name", "cannot be empty"),
        ({"kind": "model", "name": "a\u200bb", "family": "f"}, 2, "name", "U+200B"),
        ({"kind": "judge", "name": "kind:human", "family": "f"}, 2, "name", "reserved"),
        ({"kind": "model", "name": "m", "family": "f\u202e"}, 2, "family", "U+202E"),
        ({"kind": "model", "name": "gpt4", "family": "meta"}, 2, "family", "two families"),
    ],
)
def test_bad_rows_are_refused_and_nothing_changes(empty_store, row, line, field, words):
    jf.set_families(empty_store, ROWS)
    before = _stored(empty_store)
    bad = [{"kind": "model", "name": "gpt4", "family": "openai"}, row]
    with pytest.raises(InputError) as e:
        jf.set_families(empty_store, bad)
    assert (e.value.file, e.value.line, e.value.field) == ("family mapping", line, field)
    assert words in e.value.message
    if field == "name" and row["kind"] == "model":
        assert "model name" in e.value.message
    assert _stored(empty_store) == before


def test_a_failure_half_way_keeps_the_old_mapping(empty_store, monkeypatch):
    jf.set_families(empty_store, ROWS)
    # The old rows are deleted first; the insert then fails inside the same transaction.
    monkeypatch.setattr(jf, "UPSERT_FAMILY", "INSERT INTO no_such_table VALUES (?, ?, ?)")
    with pytest.raises(duckdb.CatalogException):
        jf.set_families(empty_store, [{"kind": "model", "name": "x", "family": "y"}])
    assert _stored(empty_store) == sorted((r["kind"], r["name"], r["family"]) for r in ROWS)


def test_write_families_inside_a_callers_transaction_keeps_other_names(empty_store):
    jf.set_families(empty_store, ROWS)
    with empty_store.write() as con:
        rows = [{"kind": "model", "name": "gpt4", "family": "oai"},
                {"kind": "model", "name": "bard", "family": "google"}]  # fmt: skip
        assert jf.write_families(con, rows) == 2
    assert _stored(empty_store) == [
        ("judge", "gpt-4 (simulated)", "openai"), ("model", "bard", "google"),
        ("model", "claude_v1", "anthropic"), ("model", "gpt4", "oai"),
    ]  # fmt: skip
    with pytest.raises(InputError), empty_store.write() as con:  # the caller's rollback
        con.execute("DELETE FROM families")
        jf.write_families(con, [{"kind": "robot", "name": "x", "family": "y"}])
    assert len(_stored(empty_store)) == 4


def test_a_v5_store_upgrades_in_place(demo_db, tmp_path):
    store = demo_copy(demo_db, tmp_path)
    with store.write() as con:  # the v5 store: no families table, version 5
        con.execute("DROP TABLE families")
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    counts = "SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM judgments)"
    before = query(store, counts)
    with pytest.raises(duckdb.CatalogException):
        query(store, "SELECT * FROM families")
    fresh = Store(store.path)
    assert jf.families(fresh).empty  # a read upgrades the older store first
    assert query(fresh, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (schema.SCHEMA_VERSION,)]  # fmt: skip
    assert schema.SCHEMA_VERSION == "7"
    assert query(fresh, counts) == before
    jf.set_families(fresh, ROWS)
    fresh.ensure()  # idempotent: the mapping stays
    assert len(_stored(fresh)) == 3


def test_the_demo_panel_stores_its_families(demo_db):
    got = jf.family_of(Store(demo_db))
    assert got["judge"] == {"gpt-4 (simulated)": "openai", "claude-judge (simulated)": "anthropic"}
    assert got["model"] == {"gpt4": "openai", "chatgpt": "openai", "claude_v1": "anthropic"}


def test_guesses_from_names_fill_only_empty_families(demo_db):
    assert jf.guess_family("gpt-4 (simulated)") == "openai"
    assert jf.guess_family("llama2_chat_70b") == "meta"
    assert jf.guess_family("vicuna_13b") == "lmsys"
    assert jf.guess_family("bard") == jf.guess_family("palm2") == "google"
    assert jf.guess_family("gpt4all-j") == "nomic"  # the more specific name first
    assert jf.guess_family("optimus-prime") is None  # a short fragment must be a whole word
    assert jf.guess_family("verbose-judge (simulated)") is None
    table = jf.editor_table(Store(demo_db), "demo")
    # Stored rows first, then every unmapped LLM judge and model of the dataset.
    assert set(table.loc[table["family"] == "", "name"]) == {
        "lenient-judge (simulated)", "verbose-judge (simulated)", "bard", "llama2_chat_70b",
        "tulu_65b", "vicuna_13b", "wizardlm_13b",
    }  # fmt: skip
    guessed = jf.editor_table(Store(demo_db), "demo", guessed=True).set_index("name")["family"]
    assert guessed["llama2_chat_70b"] == "meta" and guessed["claude_v1"] == "anthropic"
    assert guessed["verbose-judge (simulated)"] == ""  # no guess: still unmapped
