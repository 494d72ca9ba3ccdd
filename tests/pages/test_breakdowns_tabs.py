"""The Breakdowns page's tabs through AppTest on the simulated demo: only the open tab's view
function runs (calls counted), a link with ``section`` opens that tab, a tab change writes the
URL, and an unknown section falls back to the first tab with a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.views import breakdowns

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
PAGE = "pages/breakdowns.py"
VIEWS = ("by_difficulty", "by_domain", "by_source_task", "hard_vs_full")


@pytest.fixture
def db(app_db: Path) -> Path:
    return app_db


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every run of a Breakdowns view function (a cache hit does not call it)."""
    seen: list[str] = []

    def counter(name: str):
        real = getattr(breakdowns, name)

        def counted(*args, **kwargs):
            seen.append(name)
            return real(*args, **kwargs)

        counted.__qualname__ = f"counted_{name}"  # pages.common.cached keys by qualname
        return counted

    for name in VIEWS:
        monkeypatch.setattr(breakdowns, name, counter(name))
    return seen


def _open(params: dict | None = None, **state) -> AppTest:
    """A new session on the Breakdowns page with this URL and session state."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update(params or {})
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    at.switch_page(PAGE)
    return _ok(at.run())


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    return at


def _titles(at: AppTest) -> list[str]:
    out = []
    for el in at.get("plotly_chart"):
        title = json.loads(el.proto.spec)["layout"].get("title", {}).get("text", "")
        out.append(title.replace("<br>", " "))
    return out


def _tables(at: AppTest) -> list[set[str]]:
    return [set(df.value.columns) for df in at.dataframe]


def _notes(at: AppTest) -> str:
    return " ".join(i.value for i in at.info).replace("\\", "")  # markdown escapes


def test_only_the_open_tab_is_computed(db, calls):
    """The first visit computes the levels (the first tab, which also lists the models) and
    nothing else; each tab opened computes its own view once, and the rest come from the cache."""
    at = _open(bd_model="gpt4")
    assert calls == ["by_difficulty"]
    assert _titles(at) == ["gpt4: mean per skill × difficulty"]
    at.session_state["bd_section"] = "Difficulty trends"  # the same data, another chart
    _ok(at.run())
    assert calls == ["by_difficulty"]
    assert _titles(at) == ["Mean score vs difficulty level per skill (95% CI bars)"]
    at.session_state["bd_section"] = "By domain"
    _ok(at.run())
    assert calls == ["by_difficulty", "by_domain"]
    assert len(_titles(at)) == 1 and _titles(at)[0].startswith("gpt4: mean per skill × domain")
    at.session_state["bd_section"] = "By source task"
    _ok(at.run())
    assert calls == ["by_difficulty", "by_domain", "by_source_task"]
    assert _titles(at) == [] and any("Source task" in cols for cols in _tables(at))
    at.session_state["bd_section"] = "FLASK-Hard vs full"
    _ok(at.run())
    assert calls == list(VIEWS)
    assert _titles(at) == ["FLASK-Hard vs full set: relative change of the mean"]
    at.session_state["bd_section"] = "By domain"  # back to a tab seen before: all cached
    _ok(at.run())
    assert calls == list(VIEWS)


@pytest.mark.parametrize(
    ("section", "view", "title"),
    [
        ("Difficulty trends", None, "Mean score vs difficulty level per skill (95% CI bars)"),
        ("By domain", "by_domain", "vicuna_13b: mean per skill × domain"),
        ("FLASK-Hard vs full", "hard_vs_full", "FLASK-Hard vs full set: relative change"),
    ],
)
def test_a_link_opens_its_tab(db, calls, section, view, title):
    at = _open({"section": section, "model": "vicuna_13b"})
    assert at.session_state["bd_section"] == section
    assert calls == ["by_difficulty"] + ([view] if view else [])
    (shown,) = _titles(at)
    assert shown.startswith(title)
    assert at.query_params["section"] == section  # kept in the URL (a reload opens it again)
    assert at.query_params["model"] == "vicuna_13b"
    assert not _notes(at)


def test_a_tab_change_writes_the_url_and_the_first_tab_leaves_it_out(db):
    at = _open()
    assert "section" not in at.query_params  # the first tab is what its absence stands for
    at.session_state["bd_section"] = "By source task"
    _ok(at.run())
    assert at.query_params["section"] == "By source task"
    reload = _open(dict(at.query_params))  # a reload of that URL: the same tab
    assert reload.session_state["bd_section"] == "By source task"
    assert any("Source task" in cols for cols in _tables(reload))
    at.session_state["bd_section"] = "By difficulty"
    _ok(at.run())
    assert "section" not in at.query_params


def test_an_unknown_section_falls_back_with_a_note(db, calls):
    at = _open({"section": "By planet"})
    assert at.session_state["bd_section"] == "By difficulty"
    assert calls == ["by_difficulty"]
    assert len(_titles(at)) == 1 and "× difficulty" in _titles(at)[0]
    note = _notes(at)
    assert "The link's section 'By planet' is not available here" in note
    assert "showing 'By difficulty' instead" in note
    assert "section" not in at.query_params  # the fallback is the first tab: left out
