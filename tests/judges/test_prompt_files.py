"""Prompt and rubric files that are not what they should be: each is one ``InputError`` naming
the file and what is wrong, never a traceback. The tables below are shared with the Re-judge
page's test (tests/pages/test_rejudge_files.py) and the CLI's (tests/cli/test_judge_files.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from analysis.core.errors import InputError
from judges.prompts import PROMPT_FILE_LIMIT, load_flask_rubrics, load_template

FLASK_PROMPT = {
    "prompt_id": 2,
    "system_prompt": "You are a helpful reviewer.",
    "prompt_template": "{prompt1}\n[Instruction]\n{question}\n\n[Ground truth Answer]\n"
    "{sample_answer}\n\n[Response]\n{response}\n{skills}\n{prompt2}",
    "defaults": {"prompt1": "Judge.", "prompt2": "Score."},
}
GOOD_RUBRIC = [
    {"Skill": "Logical Robustness", "Criteria": "Is it sound?", "Scoring": {"1": "a", "2": "b"}}
]

Maker = Callable[[Path], str]  # writes into the store's folder, returns the name to type


def _write(name: str, content: bytes | str) -> Maker:
    def make(root: Path) -> str:
        data = content.encode() if isinstance(content, str) else content
        (root / name).write_bytes(data)
        return name

    return make


def _store_itself(root: Path) -> str:
    name = "finegrain.duckdb"
    if not (root / name).exists():  # the page's store is already there
        con = duckdb.connect(str(root / name))
        con.execute("CREATE TABLE t AS SELECT range AS i FROM range(1000)")
        con.close()
    return name


def _folder(name: str) -> Maker:
    def make(root: Path) -> str:
        (root / name).mkdir(exist_ok=True)
        return name

    return make


def _fifo(name: str) -> Maker:
    def make(root: Path) -> str:
        if not (root / name).exists():
            os.mkfifo(root / name)
        return name

    return make


def _link_to_zero(name: str) -> Maker:
    def make(root: Path) -> str:
        if not (root / name).is_symlink():
            (root / name).symlink_to("/dev/zero")
        return name

    return make


def _missing(name: str) -> Maker:
    return lambda root: name


def _picked(pick: str) -> Maker:
    def make(root: Path) -> str:
        (root / "prompt.jsonl").write_text(json.dumps(FLASK_PROMPT) + "\n")
        return f"prompt.jsonl#{pick}"

    return make


HUGE = b" " * (PROMPT_FILE_LIMIT + 1)

# (case, maker, what the message says) for a prompt file (--prompt file:NAME; the page's
# "…or a prompt file").
BAD_PROMPTS: list[tuple[str, Maker, str]] = [
    ("the store itself", _store_itself, "not UTF-8 text"),
    ("a directory", _folder("prompts.json"), "this is a folder"),
    ("a non-numeric pick", _picked("abc"), "'#abc' is not a prompt_id"),
    ("a pick that is absent", _picked("7"), "no prompt with prompt_id 7"),
    ("missing keys", _write("t.json", '{"version": "v", "system": "s"}'), "field 'user': missing"),
    (
        "a key of the wrong type",
        _write("t.json", '{"version": "v", "system": "s", "user": 3}'),
        "field 'user': expected text, got a int",
    ),
    ("a JSON list", _write("t.json", "[1, 2]"), "expected a JSON object"),
    ("a JSONL line that is a list", _write("p.jsonl", "[1]\n"), "line 1: expected a JSON object"),
    (
        "a JSONL prompt without its template",
        _write("p.jsonl", json.dumps({"prompt_id": 2, "system_prompt": "s"})),
        "line 1, field 'prompt_template': missing",
    ),
    (
        "a JSONL prompt with a stray field",
        _write("p.jsonl", json.dumps(FLASK_PROMPT | {"prompt_template": "{nope}"})),
        "field 'nope': missing",
    ),
    (
        "a rubric item with an unknown field",
        _write(
            "t.json",
            json.dumps({"version": "v", "system": "s", "user": "u", "rubric_item": "{colour}"}),
        ),
        "field 'rubric_item': not a valid template",
    ),
    ("not JSON", _write("t.json", "{version: v"), "line 1: not JSON"),
    ("nested too deeply", _write("t.json", "[" * 100_000), "nested too deeply"),
    ("an empty file", _write("t.json", ""), "the file is empty"),
    ("only blanks", _write("p.jsonl", "\n  \n"), "the file is empty"),
    ("a binary file", _write("t.json", b"\x00\x01\x02{}"), "a binary file (NUL bytes)"),
    ("invalid UTF-8", _write("t.json", b'{"version": "\xff"}'), "not UTF-8 text at byte 14"),
    ("a huge file", _write("t.json", HUGE), "over 2 MB"),
    ("a FIFO", _fifo("pipe.json"), "not a regular file"),
    ("a link to /dev/zero", _link_to_zero("zero.jsonl"), "not a regular file"),
    ("a name that does not exist", _missing("nowhere.json"), "file not found"),
]

# The same for a rubric file (--rubric NAME; the page's "Rubric file (optional)").
BAD_RUBRICS: list[tuple[str, Maker, str]] = [
    ("the store itself", _store_itself, "not UTF-8 text"),
    ("a directory", _folder("rubrics"), "this is a folder"),
    ("an object, not a list", _write("r.json", json.dumps(GOOD_RUBRIC[0])), "got an object"),
    ("an empty list", _write("r.json", "[]"), "got an empty list"),
    ("a list of lists", _write("r.json", "[[1]]"), "entry 1: expected an object, got a list"),
    (
        "missing Criteria",
        _write("r.json", json.dumps([{"Skill": "Logical Robustness", "Scoring": {"1": "a"}}])),
        "field 'Criteria': entry 1: expected text, got nothing",
    ),
    (
        "scores that are not numbers",
        _write("r.json", json.dumps([GOOD_RUBRIC[0] | {"Scoring": {"one": "a"}}])),
        "field 'Scoring': entry 1",
    ),
    (
        "an unknown skill",
        _write("r.json", json.dumps([GOOD_RUBRIC[0] | {"Skill": "Telepathy"}])),
        "entry 1: unknown FLASK skill 'Telepathy'",
    ),
    ("not JSON", _write("r.json", "[{"), "not JSON"),
    ("an empty file", _write("r.json", ""), "the file is empty"),
    ("a binary file", _write("r.json", b"[\x00]"), "a binary file"),
    ("invalid UTF-8", _write("r.json", b"[\xc3\x28]"), "not UTF-8 text at byte 2"),
    ("a huge file", _write("r.json", HUGE), "over 2 MB"),
    ("a FIFO", _fifo("pipe.json"), "not a regular file"),
    ("a link to /dev/zero", _link_to_zero("zero.json"), "not a regular file"),
    ("a name that does not exist", _missing("nowhere.json"), "file not found"),
]


def ids(table: list[tuple[str, Maker, str]]) -> list[str]:
    return [case for case, _, _ in table]


@pytest.mark.parametrize(("case", "make", "says"), BAD_PROMPTS, ids=ids(BAD_PROMPTS))
def test_a_bad_prompt_file_is_one_input_error_naming_it(tmp_path, case, make, says):
    name = make(tmp_path)
    with pytest.raises(InputError) as raised:
        load_template(f"file:{tmp_path / name}")
    message = raised.value.message
    assert says in message, message
    assert str(tmp_path / name.partition("#")[0]) in message  # the file is named


@pytest.mark.parametrize(("case", "make", "says"), BAD_RUBRICS, ids=ids(BAD_RUBRICS))
def test_a_bad_rubric_file_is_one_input_error_naming_it(tmp_path, case, make, says):
    name = make(tmp_path)
    with pytest.raises(InputError) as raised:
        load_flask_rubrics(tmp_path / name)
    message = raised.value.message
    assert says in message, message
    assert str(tmp_path / name) in message


def test_good_files_still_load(tmp_path):
    (tmp_path / "prompt.jsonl").write_text(json.dumps(FLASK_PROMPT) + "\n")
    t = load_template(f"file:{tmp_path / 'prompt.jsonl'}#2")
    assert t.version == "flask:prompt.jsonl#2" and t.system == "You are a helpful reviewer."
    assert t.user.endswith("Score keys: {keys}") and "{reference_block}" in t.user
    (tmp_path / "r.json").write_text(json.dumps(GOOD_RUBRIC))
    rubric = load_flask_rubrics(tmp_path / "r.json")["robustness"]
    assert (rubric.levels, rubric.scale_min, rubric.scale_max) == (("a", "b"), 1, 2)
    # A file exactly at the cap is still read (the cap is "over", not "at").
    at_cap = '{"version": "v", "system": "s", "user": "u"}'.ljust(PROMPT_FILE_LIMIT)
    (tmp_path / "t.json").write_text(at_cap)
    assert load_template(f"file:{tmp_path / 't.json'}").user == "u"
