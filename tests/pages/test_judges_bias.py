"""The Judges page's Length bias and Self-preference sections through AppTest on the demo: the
charts (bars with CIs, flags and FLASK's published marker; the score-vs-length scatter; the
self-preference bars) and tables hold the view's numbers; picks in session state change them;
the family mapping is guessed from names and saved through the page, and a bad row shows an
error and changes nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.demo_panel import CLAUDE, VERBOSE
from analysis.views import judge_length as jl
from analysis.views import judge_self as js
from tests.app_fixtures import judges_page
from tests.store_fixtures import query

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
FLAG = "⚑"


def _page(section: str, state: dict | None = None) -> AppTest:
    return judges_page(section, state)


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _values(arr) -> list:
    """A plotly array (a list, or numpy's typed-array JSON: dtype + base64 bytes)."""
    if isinstance(arr, dict):
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"]).tolist()
    return list(arr)


def _table(at: AppTest, column: str):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError([list(d.value.columns) for d in at.dataframe])


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_length_bias_draws_the_views_numbers_and_flags_the_verbose_judge(app_db, method):
    at = _page("Length bias", {"jd_lb_method": method})
    view = jl.length_bias(Store(app_db), jl.LengthQuery(Filters("demo"), method))
    expected = view.table[view.table["level"] == "instance"]
    bars, scatter = _figures(at)
    traces = {t["name"]: t for t in bars["data"]}
    verbose = traces[VERBOSE]
    want = expected[expected["scorer"] == VERBOSE]
    assert _values(verbose["y"]) == pytest.approx(want["r"].tolist())
    assert _values(verbose["text"]) == [FLAG if f else "" for f in want["flagged"]]
    assert want["flagged"].sum() >= 11  # (Pearson: every skill; tests/views/test_judge_length)
    assert set(_values(traces[CLAUDE]["text"])) == {""}
    assert "Humans (mean)" in traces
    published = traces["FLASK, Table 5 (model level)"]
    assert published["marker"]["symbol"] == "diamond" and len(_values(published["y"])) == 12
    table = _table(at, "excess over humans")
    assert len(table) == len(expected)
    shown = table[table["Scorer"] == VERBOSE]
    assert (shown["flagged"] == "⚑ flagged").tolist() == want["flagged"].tolist()
    assert shown["r"].iloc[0] == f"{want['r'].iloc[0]:.3f} [{want['ci_low'].iloc[0]:.3f}, " \
        f"{want['ci_high'].iloc[0]:.3f}]"  # fmt: skip
    # The scatter: the first judge's first skill by default, its deciles beside the humans'.
    names = [t["name"] for t in scatter["data"]]
    assert any(n.startswith("items (sample of") for n in names)
    assert sum("mean per decile" in n for n in names) == 2


def test_length_bias_pooled_level_and_a_chosen_scatter(app_db):
    at = _page("Length bias", {"jd_lb_level": "pooled", "jd_lb_scorer::demo": VERBOSE,
                               "jd_lb_skill::demo": "completeness"})  # fmt: skip
    bars, scatter = _figures(at)
    assert "pooled level" in bars["layout"]["title"]["text"].replace("<br>", " ")
    scat = jl.length_scatter(Store(app_db), jl.ScatterQuery(Filters("demo"), VERBOSE,
                                                            "completeness"))  # fmt: skip
    deciles = [t for t in scatter["data"] if t["name"].startswith("verbose")]
    mine = scat.bins[scat.bins["scorer"] == VERBOSE]
    assert _values(deciles[0]["y"]) == pytest.approx(mine["mean"].tolist())
    assert "Completeness" in scatter["layout"]["title"]["text"]


def test_self_preference_flags_claude_and_lists_the_judges_without_family(app_db):
    at = _page("Self-preference")
    view = js.self_preference(Store(app_db), js.SelfQuery(Filters("demo")))
    (fig,) = _figures(at)
    traces = {t["name"]: t for t in fig["data"]}
    claude = traces[f"{CLAUDE} (anthropic)"]
    want = view.table[(view.table["judge"] == CLAUDE) & (view.table["reference"] == "humans")]
    assert _values(claude["y"]) == pytest.approx(want["self_pref"].tolist())
    assert FLAG in _values(claude["text"])
    assert set(_values(traces["gpt-4 (simulated) (openai)"]["text"])) == {""}
    table = _table(at, "Self-preference")
    assert (table.loc[table["Judge"] == CLAUDE, "flagged"] == "⚑ flagged").sum() >= 8
    left = _table(at, "reason")
    assert set(left["judge"]) == {"lenient-judge (simulated)", VERBOSE}
    # Against the other judges instead.
    other = _page("Self-preference", {"jd_sp_ref": "judges"})
    (fig,) = _figures(other)
    assert "other LLM judges" in fig["layout"]["title"]["text"].replace("<br>", " ")


def test_guess_from_names_then_save_stores_the_families(app_db):
    at = _page("Self-preference")
    editor = _table(at, "guess")
    assert editor.set_index("name").loc["llama2_chat_70b", "family"] == ""
    at.button(key="jd_fam_guess").click()
    at.run()
    proposed = _table(at, "guess").set_index("name")["family"]
    assert proposed["llama2_chat_70b"] == "meta" and proposed["vicuna_13b"] == "lmsys"
    stored = Store(app_db)
    assert query(stored, "SELECT count(*) FROM families") == [(5,)]  # nothing saved yet
    at.button(key="jd_fam_save").click()
    at.run()
    assert not at.exception and not at.error
    assert [s.value for s in at.success] == ["Saved 10 families."]
    got = dict(query(stored, "SELECT name, family FROM families WHERE kind = 'model'"))
    assert got["llama2_chat_70b"] == "meta" and got["bard"] == "google"
    assert got["claude_v1"] == "anthropic"  # the stored rows kept


def test_saving_a_bad_row_shows_the_error_and_changes_nothing(app_db):
    # A row no form would write (an invisible character), put in by another tool.
    con = duckdb.connect(str(app_db))
    con.execute("INSERT INTO families VALUES ('model', 'vicuna\u200b', 'lmsys')")
    con.close()
    before = query(Store(app_db), "SELECT * FROM families ORDER BY ALL")
    at = _page("Self-preference")
    at.button(key="jd_fam_save").click()
    at.run()
    assert not at.exception
    (error,) = at.error
    shown = error.value.replace("\\", "")  # markdown escapes (pages.common.plain)
    assert "family mapping, line 6, field 'name'" in shown and "U+200B" in shown
    assert query(Store(app_db), "SELECT * FROM families ORDER BY ALL") == before
