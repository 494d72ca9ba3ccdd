"""The quick paths of the FLASK import (issue 14) give what the careful ones give.

``iter_jsonl`` hands each line to json's C scanner and sends every line that is not simply one
object to ``parse_line``: the objects must equal ``json.loads`` (the independent reference) for
every kind of line, and the errors must be ``parse_line``'s. ``read_model_outputs`` checks whole
columns and reads a failing file again row by row: the first bad line in file order is the one
named, whichever kind of problem comes first.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from analysis.core.errors import InputError
from analysis.ingest.flask_files import read_model_outputs
from analysis.ingest.jsonl import MAX_DEPTH, deep_lines, iter_jsonl, parse_line

GOOD_LINES = [
    '{"a": 1, "b": "x"}',
    '  {"a": 1}',  # whitespace before the value
    '{"a": 1}   ',  # and after
    '{"a": 1}\r',  # a CRLF file's line
    '{"a": 1}\t \r',
    '{"a": "\\ud83d\\ude00 smile"}',  # a surrogate pair (an emoji as JSON writes it)
    '{"a": NaN, "b": Infinity, "c": -Infinity}',  # json.loads takes them; later checks refuse
    '{"a": 123456789012345678901234567890}',
    '{"a": 1.5, "b": 1e400, "c": -0.0}',
    '{"a": 1, "a": 2}',  # a repeated key: the last wins, as in json.loads
    '{"nested": ' + "[" * 40 + "1" + "]" * 40 + "}",
    '{"text": "{[{[ brackets in a string ]}]}"}',
    '{"u": "\\u00e9\\u4e2d\\n\\t\\"q\\""}',
]
BAD_LINES = [
    '{"a": 1} {"b": 2}',  # extra data
    '{"a": 1},',
    "[1, 2]",  # not an object
    '"text"',
    "{'a': 1}",
    '{"a": 1',  # cut short
    '{"a": "\\ud800 alone"}',  # a lone surrogate
    '{"a": "\\udc00"}',
    "\ufeff" + '{"a": 1}',  # a BOM in the middle of a file
    '{"a": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}",  # too deep
    '{"a": ' + "[" * 5000 + "]" * 5000 + "}",  # past the recursion limit
    '{"a": 1_0}',
    '{"a": "raw\tcontrol"}',
]


def _file(tmp_path: Path, lines: list[str], name: str = "f.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes("\n".join(lines).encode("utf-8") + b"\n")
    return path


@pytest.mark.parametrize("exact", [False, True])
def test_good_lines_give_what_json_loads_gives(tmp_path, exact):
    path = _file(tmp_path, ["", *GOOD_LINES, "   ", "\u00a0"])  # blank lines are skipped
    got = list(iter_jsonl(path, exact=exact))
    kw = {"parse_float": Decimal} if exact else {}
    want = [(no, json.loads(line, **kw)) for no, line in enumerate(GOOD_LINES, 2)]
    assert [no for no, _ in got] == [no for no, _ in want]
    for (_, a), (_, b) in zip(got, want, strict=True):
        assert json.dumps(a, default=str) == json.dumps(b, default=str)  # NaN == NaN as text
        assert repr(a) == repr(b)


@pytest.mark.parametrize("bad", BAD_LINES)
def test_bad_line_gives_the_careful_paths_error(tmp_path, bad):
    lines = ['{"ok": 1}', bad, '{"ok": 2}']
    path = _file(tmp_path, lines)
    with pytest.raises(InputError) as raised:
        list(iter_jsonl(path, "f.jsonl"))
    deep = deep_lines(("\n".join(lines) + "\n").encode("utf-8"))
    with pytest.raises(InputError) as careful:
        parse_line(bad, 2, "f.jsonl", deep=deep)
    assert raised.value.line == 2
    assert str(raised.value) == str(careful.value)


def test_lenient_reading_skips_exactly_the_bad_lines(tmp_path):
    lines = [GOOD_LINES[0], *BAD_LINES, GOOD_LINES[4]]
    skipped: list[int] = []
    got = list(iter_jsonl(_file(tmp_path, lines), on_error=lambda e: skipped.append(e.line)))
    assert [no for no, _ in got] == [1, len(lines)]
    assert skipped == list(range(2, len(BAD_LINES) + 2))


def test_deep_lines_matches_a_character_scan():
    shallow = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"  # 100 levels
    deep = '{"k": "v", "b": ' + "{" * (MAX_DEPTH + 1) + "}" * (MAX_DEPTH + 1) + "}"
    quoted = '{"s": "' + "[" * (MAX_DEPTH + 50) + '"}'  # brackets in a string do not nest
    data = "\n".join([shallow, deep, quoted, deep]).encode()
    assert deep_lines(data) == {2: "b", 4: "b"}


def _outputs(tmp_path: Path, rows: list[str]) -> Path:
    return _file(tmp_path, rows, "model.jsonl")


KNOWN = {str(i): () for i in range(1, 6)}


def test_model_outputs_fast_and_row_by_row_agree(tmp_path):
    rows = [json.dumps({"question_id": i, "text": f"t{i}", "extra": [i]}) for i in (3, 1, 2)]
    assert list(read_model_outputs(_outputs(tmp_path, rows), "m", KNOWN).items()) == [
        ("3", "t3"), ("1", "t1"), ("2", "t2")
    ]  # fmt: skip
    # the same id twice with the same text is one response (read row by row)
    rows.append(json.dumps({"question_id": 1, "text": "t1"}))
    assert read_model_outputs(_outputs(tmp_path, rows), "m", KNOWN) == {
        "3": "t3", "1": "t1", "2": "t2"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("rows", "line", "field", "words"),
    [
        (['{"question_id": 1, "text": "a"}', '{"question_id": true, "text": "b"}'], 2,
         "question_id", "positive integer"),
        (['{"question_id": 1, "text": "a"}', '{"question_id": 0, "text": "b"}'], 2,
         "question_id", "positive integer"),
        (['{"question_id": 2.0, "text": "a"}'], 1, "question_id", "positive integer"),
        (['{"question_id": 1}'], 1, "text", "response text"),
        (['{"text": "a"}'], 1, "question_id", "missing"),
        (['{"question_id": 9, "text": "a"}'], 1, "question_id", "not in the evaluation set"),
        (['{"question_id": 1, "text": "a"}', '{"question_id": 1, "text": "b"}'], 2,
         "question_id", "twice with different text"),
        # a bad row before a line that is not JSON: the row is the first error, as before
        (['{"question_id": 1, "text": 5}', "not json"], 1, "text", "response text"),
        (['{"question_id": 1, "text": "a"}', "not json"], 2, None, "not valid JSON"),
    ],
)  # fmt: skip
def test_model_outputs_errors_name_the_first_bad_line(tmp_path, rows, line, field, words):
    with pytest.raises(InputError) as raised:
        read_model_outputs(_outputs(tmp_path, rows), "m", KNOWN)
    assert (raised.value.line, raised.value.field) == (line, field)
    assert words in str(raised.value)
