"""The URL contract's pure logic: parsing and writing parameters, which value a widget shows
(a link's, its own, the last one, the default), and which parameters a link just brought."""

from __future__ import annotations

import pytest

from analysis.views.state import (
    ALWAYS,
    GLOBAL_PARAMS,
    MISSING,
    PAGE_PARAMS,
    Param,
    decode,
    encode,
    param,
    pending,
    resolve,
)

TEXT = Param("judge", "judge")
FLAG = Param("hard", "FLASK-Hard setting", bool)
LEVELS = Param("levels", "difficulty level", int, multi=True)
MODELS = Param("models", "model", multi=True)


def test_every_parameter_is_declared_once_per_page():
    names = [p.name for p in GLOBAL_PARAMS]
    assert len(names) == len(set(names))
    for page, params in PAGE_PARAMS.items():
        own = [p.name for p in params]
        assert len(own) == len(set(own)) and not set(own) & set(names), page
    assert param("limit", "rejudge").kind is int
    with pytest.raises(KeyError):
        param("limit", "radar")


def test_decode_and_encode():
    assert decode(TEXT, ["a", "b"]) == ("b", [])  # a repeated single value: the last one
    assert decode(FLAG, ["1"]) == (True, []) and decode(FLAG, ["off"]) == (False, [])
    assert decode(FLAG, ["maybe"]) == (MISSING, ["maybe"])
    assert decode(LEVELS, ["5", "x", "4", "5"]) == ([5, 4], ["x"])  # order kept, no repeats
    assert decode(MODELS, [""]) == ([], [])  # an explicitly empty list
    assert encode(TEXT, None) == [] and encode(TEXT, "gpt-4") == ["gpt-4"]
    assert encode(FLAG, False, absent=False) == [] and encode(FLAG, True, absent=False) == ["1"]
    assert encode(LEVELS, [4, 5]) == ["4", "5"] and encode(LEVELS, []) == []
    assert encode(MODELS, [], absent=ALWAYS) == [""]  # empty is not "the default" here
    assert encode(MODELS, ["b", "a"], absent=["a", "b"]) == []  # equal to what absence means
    assert encode(MODELS, [], absent=["a", "b"]) == [""]


def test_resolve_prefers_a_link_then_the_widget_then_the_last_value_then_the_default():
    opts = ["x", "y", "z"]
    r = resolve(TEXT, link=["y"], current="x", kept="z", default="x", options=opts)
    assert (r.value, r.store, r.note) == ("y", True, None)
    r = resolve(TEXT, link=None, current="x", kept="z", default="y", options=opts)
    assert (r.value, r.store) == ("x", False)  # the visitor's value: nothing to write
    r = resolve(TEXT, link=None, current=None, kept="z", default="y", options=opts)
    assert (r.value, r.store) == ("z", True)  # a stale value (None, gone) is replaced
    r = resolve(TEXT, link=None, current="gone", kept="gone", default="y", options=opts)
    assert (r.value, r.store) == ("y", True)
    r = resolve(TEXT, link=None, default="nope", options=opts)
    assert r.value == "x"  # a default the widget cannot show: its first option
    assert resolve(TEXT, link=None, default=None, options=[]).value is None


def test_a_links_unknown_values_fall_back_with_a_note():
    r = resolve(TEXT, link=["nobody"], current="x", default="y", options=["x", "y"])
    assert r.value == "x" and r.note == (
        "The link's judge 'nobody' is not available here: showing 'x' instead."
    )
    r = resolve(MODELS, link=["a", "q", "b"], default=[], options=["a", "b"])
    assert r.value == ["a", "b"]
    assert r.note == "The link's model 'q' is not available here: left out."
    r = resolve(MODELS, link=["q", "w"], current=["b"], options=["a", "b"])
    assert r.value == ["b"] and "models 'q', 'w' are not available" in r.note
    r = resolve(LEVELS, link=["high"], default=[], options=[1, 2, 5])
    assert r.value == [] and "'high'" in r.note
    r = resolve(Param("limit", "limit", int), link=["9999"], default=50,
                valid=lambda n: 1 <= n <= 5000)  # fmt: skip
    assert r.value == 50 and "'9999'" in r.note
    assert resolve(FLAG, link=["1"], default=False, valid=lambda v: not v).value is False


def test_a_stale_list_keeps_what_the_widget_still_offers():
    r = resolve(MODELS, link=None, current=["a", "gone"], default=[], options=["a", "b"])
    assert (r.value, r.store, r.note) == (["a"], True, None)


def test_pending_is_what_a_link_brought():
    url = {"dataset": ["flask"], "judge": ["j"], "radar": ["a", "b"]}
    assert pending(url, None) == url  # a session's first run: the whole link
    written = {"dataset": ["flask"], "judge": ["j"], "radar": ["a"]}
    assert pending(url, written) == {"radar": ["a", "b"]}
    assert pending({}, written) == {}  # a page switch dropped the URL: nothing new


def test_a_notes_fallback_reads_as_a_person_would_say_it():
    r = resolve(FLAG, link=["maybe"], default=False)
    assert r.value is False and r.note == (
        "The link's FLASK-Hard setting 'maybe' is not available here: showing off instead."
    )
    name = Param("annotator", "annotator")
    r = resolve(name, link=["x" * 100], default="", valid=lambda v: len(v) <= 60)
    # a long value is quoted up to 40 characters; an empty fallback is "left empty"
    assert r.value == "" and r.note == (
        f"The link's annotator '{'x' * 39}…' is not available here: left empty."
    )
    r = resolve(TEXT, link=["nobody"], default=None, options=[])
    assert r.value is None and r.note.endswith("showing the default instead.")
