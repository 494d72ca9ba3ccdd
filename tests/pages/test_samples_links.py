"""Samples links that name only half a response: an instance without a model opens the first
model (by name) that answered it and says so; a model alone, or an instance nobody answered,
opens nothing and says why. Never a silent drop."""

from __future__ import annotations

import duckdb
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.views.sample_detail import link_target
from tests.pages.test_url_state import notes, open_app, url
from tests.samples_fixtures import write_mini


def _shown(at: AppTest) -> list[str]:
    """The model of each response text shown ("Response of <model> to <instance>. …")."""
    return [t.value.split(".")[0] for t in at.text if t.value.startswith("Response of")]


def _notes(at: AppTest) -> str:
    return notes(at).replace("\\", "")  # markdown escapes dropped


def test_an_instance_without_a_model_opens_the_first_model_that_answered(app_db):
    write_mini(Store(app_db))
    at = open_app("samples", params={"dataset": "mini", "instance": "3"})
    # mini's models are alpha, beta and gamma: alpha comes first by name.
    assert _shown(at) == ["Response of alpha to 3"]
    assert "The link names instance '3' but no model: showing alpha's response" in _notes(at)
    assert (url(at)["instance"], url(at)["model"]) == ("3", "alpha")  # the URL now says which


def test_a_model_without_an_answer_is_passed_over(app_db):
    write_mini(Store(app_db))
    con = duckdb.connect(str(app_db))
    con.execute("UPDATE responses SET text = NULL WHERE dataset = 'mini' AND instance_id = '3' "
                "AND model = 'alpha'")  # fmt: skip
    con.close()
    at = open_app("samples", params={"dataset": "mini", "instance": "3"})
    assert _shown(at) == ["Response of beta to 3"]
    assert "showing beta's response" in _notes(at)


def test_an_instance_nobody_answered_and_a_model_alone_say_why(app_db):
    write_mini(Store(app_db))
    at = open_app("samples", params={"dataset": "mini", "instance": "999"})
    assert "instance '999' but no model, and no model answered it in dataset 'mini'" in _notes(at)
    assert _shown(at) == []
    assert "instance" not in url(at)
    at = open_app("samples", params={"dataset": "mini", "model": "beta"})
    assert "The link names model 'beta' but no instance: pick a row." in _notes(at)
    assert "Select a row to read it here." in notes(at)


def test_link_target_directly(app_db):
    store = Store(app_db)
    write_mini(store)
    assert link_target(store, "mini", "3", "gamma").shown == ("3", "gamma")  # as named
    assert link_target(store, "mini", "3", "gamma").note is None
    assert link_target(store, "mini", "3", None).shown == ("3", "alpha")
    long = "x" * 100
    note = link_target(store, "mini", long, None).note
    assert note is not None and "x" * 39 + "…" in note and "x" * 40 not in note
