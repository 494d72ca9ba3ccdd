"""The Re-judge page with prompt and rubric files that are not what they should be: each shows
the one error box naming the file and what is wrong, no exception, and asks no server."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.judges.test_prompt_files import BAD_PROMPTS, BAD_RUBRICS, Maker
from tests.openai_server import OpenAIServer

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


def _outside_link(root: Path) -> str:
    """A link in the store's folder to a good-looking file outside it."""
    target = root.parent / "outside.json"
    target.write_text('{"version": "v", "system": "s", "user": "u"}')
    link = root / "inside.json"
    if not link.is_symlink():
        link.symlink_to(target)
    return "inside.json"


def _dot_dot(root: Path) -> str:
    (root.parent / "up.json").write_text("[]")
    return f"../{root.name}/../up.json"


# Names a visitor may not use at all, whatever the file holds.
OUTSIDE: list[tuple[str, Maker, str]] = [
    ("a link out of the store folder", _outside_link, "files named on this page must be in"),
    ("a path with ..", _dot_dot, "files named on this page must be in"),
    ("an absolute path elsewhere", lambda root: "/etc/hostname", "must be in"),
]


@pytest.fixture
def page(app_db: Path):
    """The page over two responses of the sidebar's slice, with a judge that would ask the
    loopback server: it must never be asked."""
    with OpenAIServer() as srv:
        at = AppTest.from_file(APP, default_timeout=180)
        state = {
            "rj_source::demo": "filters",
            "rj_limit": 2,
            "rj_model": "judge-test",
            "rj_base_url": srv.base_url,
        }
        for k, v in state.items():
            at.session_state[k] = v
        at.run()
        at.switch_page("pages/rejudge.py")
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert "2 calls to make" in " ".join(m.value for m in at.markdown)  # a good form
        yield at, app_db.parent, app_db.name
        assert srv.count() == 0


# Where the page says more than the loader: it refuses the store by name, and a link to
# /dev/zero leads out of the store's folder before it is ever opened.
ON_THE_PAGE = {
    "the store itself": "this is the store itself, not a prompt or rubric file",
    "a link to /dev/zero": "files named on this page must be in",
}


def _errors(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]  # markdown escapes dropped


def _check(at: AppTest, key: str, table, root: Path, store_name: str) -> None:
    wrong = []
    for case, make, says in table:
        name = store_name if case == "the store itself" else make(root)
        st.cache_data.clear()
        at.text_input(key=key).input(name).run()
        errors = _errors(at)
        says = ON_THE_PAGE.get(case, says)
        shown = " ".join(errors)
        if at.exception or len(errors) != 1 or says not in shown or "Bad input" not in shown:
            wrong.append((case, [e.message for e in at.exception], errors))
        if not at.exception and "calls to make" in " ".join(m.value for m in at.markdown):
            wrong.append((case, "an estimate was shown", errors))
    assert not wrong, "\n".join(map(repr, wrong))


def test_a_bad_prompt_file_shows_one_error_naming_it(page):
    at, root, store_name = page
    _check(at, "rj_prompt_file", BAD_PROMPTS + OUTSIDE, root, store_name)


def test_a_bad_rubric_file_shows_one_error_naming_it(page):
    at, root, store_name = page
    _check(at, "rj_rubric", BAD_RUBRICS + OUTSIDE, root, store_name)


def test_the_error_names_the_file(page):
    at, root, _ = page
    (root / "empty.json").write_text("")
    at.text_input(key="rj_rubric").input("empty.json").run()
    assert f"{(root / 'empty.json').resolve()}: the file is empty" in _errors(at)[0]
    at.text_input(key="rj_rubric").input("").run()  # cleared: the store's rubric again
    assert not at.error and not at.exception
    assert "2 calls to make" in " ".join(m.value for m in at.markdown)
