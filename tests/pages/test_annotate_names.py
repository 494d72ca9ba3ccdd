"""The Annotate page and the name rule (analysis/core/names.py): a reserved or look-alike name
is refused on the page before any form shows; an NFD name resumes the NFC annotator's work."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis.core.store import Store
from analysis.views import annotate as annotation
from analysis.views import queues
from analysis.views.annotate import Answer
from tests.samples_fixtures import DATASET, write_mini

APP = str(Path(__file__).resolve().parents[2] / "app.py")
NFC = "Jos\u00e9"
NFD = unicodedata.normalize("NFD", NFC)


@pytest.fixture
def mini(tmp_path, monkeypatch):
    path = tmp_path / "mini.duckdb"
    monkeypatch.setenv("FINEGRAIN_DB", str(path))
    write_mini(Store(path))
    queues.add(Store(path), queues.ANNOTATE, DATASET, [("3", "beta"), ("4", "alpha")])
    st.cache_data.clear()
    yield Store(path)
    st.cache_data.clear()


def annotate_page(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["annotator"] = name
    at.run()
    at.switch_page("pages/annotate.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.parametrize(
    ("name", "says"),
    [("kind:llm", "is reserved"), ("KIND:human", "is reserved"), ("bo\u200bb", "ZERO WIDTH SPACE")],
)
def test_a_reserved_or_invisible_name_is_refused_on_the_page(mini, name, says):
    at = annotate_page(name)
    assert len(at.error) == 1 and says in at.error[0].value
    assert not at.get("progress") and not at.radio  # no form: nothing can be saved


def test_an_nfd_name_resumes_the_nfc_annotators_work(mini):
    scores = {"robustness": 4, "correctness": None, "efficiency": 2}
    annotation.save_answer(mini, Answer(NFC, DATASET, "3", "beta", scores))
    at = annotate_page(NFD)
    assert not at.error, [e.value for e in at.error]
    assert "1 of 2 answered" in at.get("progress")[0].proto.text
