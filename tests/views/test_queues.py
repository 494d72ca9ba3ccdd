"""Queues persisted in the store: order, de-duplication, per dataset and name, bad input that
changes nothing, and a store made by the previous schema getting the table on first use."""

from __future__ import annotations

import duckdb
import pytest

from analysis.core.errors import InputError, NotFoundError
from analysis.core.schema import SCHEMA_VERSION
from analysis.core.store import Store
from analysis.views import queues
from tests.samples_fixtures import DATASET, write_mini


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "q.duckdb")
    write_mini(s)
    return s


def keys(store, queue=queues.REJUDGE, dataset=DATASET):
    return [i.key for i in queues.items(store, queue, dataset)]


def test_add_keeps_order_and_skips_duplicates(store):
    assert queues.add(store, queues.REJUDGE, DATASET, [("5", "beta"), ("1", "alpha")]) == 2
    assert queues.add(store, queues.REJUDGE, DATASET, [("1", "alpha"), ("2", "gamma")]) == 1
    assert keys(store) == [("5", "beta"), ("1", "alpha"), ("2", "gamma")]
    item = queues.items(store, queues.REJUDGE, DATASET)[0]
    assert (item.queue, item.dataset, item.added_at is not None) == (queues.REJUDGE, DATASET, True)
    # queues are separate by name and by dataset
    assert keys(store, queues.ANNOTATE) == [] and keys(store, dataset="other") == []
    assert queues.counts(store, DATASET) == {queues.REJUDGE: 3, queues.ANNOTATE: 0}
    table = queues.table(store, queues.REJUDGE, DATASET)
    assert table["position"].tolist() == [1, 2, 3] and table["model"].tolist()[0] == "beta"


def test_remove_and_clear(store):
    queues.add(store, queues.ANNOTATE, DATASET, [("1", "alpha"), ("2", "beta"), ("3", "gamma")])
    queues.add(store, queues.REJUDGE, DATASET, [("2", "beta")])
    assert queues.remove(store, queues.ANNOTATE, DATASET, [("2", "beta"), ("9", "nope")]) == 1
    assert keys(store, queues.ANNOTATE) == [("1", "alpha"), ("3", "gamma")]
    assert keys(store) == [("2", "beta")]  # the other queue is untouched
    assert queues.clear(store, queues.ANNOTATE, DATASET) == 2
    assert keys(store, queues.ANNOTATE) == [] and keys(store) == [("2", "beta")]


def test_unknown_response_adds_nothing_and_names_it(store):
    queues.add(store, queues.REJUDGE, DATASET, [("1", "alpha")])
    with pytest.raises(NotFoundError, match=r"999 / alpha.*nothing was added"):
        queues.add(store, queues.REJUDGE, DATASET, [("2", "alpha"), ("999", "alpha")])
    assert keys(store) == [("1", "alpha")]


@pytest.mark.parametrize(
    "queue, items, message",
    [
        ("Re-Judge!", [("1", "alpha")], "not a queue name"),
        ("", [("1", "alpha")], "not a queue name"),
        (queues.REJUDGE, [("1",)], "not an \\(instance_id, model\\) pair"),
        (queues.REJUDGE, [(1, "alpha")], "must be text"),
    ],
)
def test_bad_input_is_named(store, queue, items, message):
    with pytest.raises(InputError, match=message):
        queues.add(store, queue, DATASET, items)
    assert keys(store) == []


def test_queue_survives_a_new_store_object_and_process(store):
    queues.add(store, queues.ANNOTATE, DATASET, [("4", "gamma")])
    with duckdb.connect(str(store.path), read_only=True) as con:
        rows = con.execute("SELECT queue, dataset, instance_id, model FROM queue_items").fetchall()
    assert rows == [(queues.ANNOTATE, DATASET, "4", "gamma")]
    assert keys(Store(store.path), queues.ANNOTATE) == [("4", "gamma")]


def test_store_from_the_previous_schema_gets_the_queue_table(store):
    # Make the file look like one written by schema version 1 (no queue table).
    with store.write() as con:
        con.execute("DROP TABLE queue_items")
        con.execute("DROP SEQUENCE queue_seq")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        n_scores = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    assert queues.add(store, queues.REJUDGE, DATASET, [("1", "alpha")]) == 1
    assert keys(store) == [("1", "alpha")]
    with store.read() as con:
        assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == n_scores
        version = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    assert version == (SCHEMA_VERSION,)
