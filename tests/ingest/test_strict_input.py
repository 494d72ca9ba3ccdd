"""Strict input: ids kept exactly as written, numbers parsed strictly, hostile JSON lines (deep
nesting, lone surrogates) refused with the one-paragraph error, and clear messages for long
cells, long values, negative scales, Parquet decimals and a directory given as a file.

The crash cases run the real CLI in a subprocess (a SIGSEGV would otherwise kill pytest) and
check the exit status, that stderr is one paragraph without a traceback, and that the store did
not change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import click
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.cli.data import Scale
from analysis.core.errors import InputError
from analysis.core.store import Store
from analysis.ingest.flask_source import import_flask
from analysis.ingest.score_files import import_scores
from tests.mini_flask import build_flask, query, snapshot

REPO = Path(__file__).resolve().parents[2]
ROW = {"instance_id": 1, "model": "alpaca", "judge": "rater", "skill": "correctness", "score": 4}


def jl(*rows: dict | str) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A store that already holds one score, so "unchanged" means something."""
    s = Store(tmp_path / "s.duckdb")
    seed = tmp_path / "seed.jsonl"
    seed.write_text(jl(ROW))
    import_scores(s, seed, dataset="d")
    return s


def rejected(store: Store, path: Path, line: int | None, field: str | None, *texts: str,
             **options) -> InputError:  # fmt: skip
    before = snapshot(store)
    with pytest.raises(InputError) as info:
        import_scores(store, path, **options)
    e = info.value
    assert (e.file, e.line, e.field) == (str(path), line, field), e.message
    for text in texts:
        assert text in e.message, e.message
    assert snapshot(store) == before
    return e


# ------------------------------------------------------------------ ids as written

ID_CASES = [
    # file name, the id as written, the instance id stored
    ("int.jsonl", "1000000000000000000000000000000", "1" + "0" * 30),
    ("uint64.jsonl", "12345678901234567890", "12345678901234567890"),
    ("exp.jsonl", "1e30", "1" + "0" * 30),
    ("negative-exp.jsonl", "-12E+2", "-1200"),
    ("float.jsonl", "7.0", "7"),
    ("text.jsonl", '"0012"', "0012"),
    ("big.csv", "1000000000000000000000000000000", "1" + "0" * 30),
    ("zeros.csv", "0012", "0012"),
]  # fmt: skip


@pytest.mark.parametrize(("file", "written", "stored"), ID_CASES, ids=[c[0] for c in ID_CASES])
def test_ids_are_kept_as_written(empty_store, tmp_path, file, written, stored):
    path = tmp_path / file
    if file.endswith(".csv"):
        path.write_text(f"instance_id,model,skill,score\n{written},m,correctness,4\n")
    else:  # a second, ordinary id: a reader typing the column as double would round the first
        line = '{"instance_id": %s, "model": "m", "skill": "correctness", "score": 4}\n'
        path.write_text(line % written + line % "2")
    import_scores(empty_store, path, judge="j", dataset="d")
    ids = {r[0] for r in query(empty_store, "SELECT instance_id FROM scores")}
    assert ids == ({stored, "2"} if file.endswith(".jsonl") else {stored})


def test_an_id_with_a_fraction_is_refused(store, tmp_path):
    path = tmp_path / "ids.jsonl"
    path.write_text(jl(ROW, {**ROW, "instance_id": 1.5}))
    rejected(store, path, 2, "instance_id", "expected text or an integer id, got 1.5")


# ------------------------------------------------------------------ strict numbers

BAD_SCORES = ["1_0", "5_0", "inf", "-Infinity", "NaN5", "0x10", "\u0661\u0660", "1e400", "1,5"]


@pytest.mark.parametrize("score", BAD_SCORES)
def test_score_text_is_parsed_strictly(store, tmp_path, score):
    path = tmp_path / "scores.csv"
    path.write_text(f'instance_id,model,judge,skill,score\n1,alpaca,rater,helpfulness,"{score}"\n')
    rejected(store, path, 2, "score", "expected a number or N/A", scale=(0, 100))


def test_score_with_separator_in_jsonl_is_refused(store, tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text(jl({**ROW, "skill": "helpfulness"}, {**ROW, "score": "1_0", "model": "b"}))
    rejected(store, path, 2, "score", "'1_0'", scale=(0, 100))


GOOD_SCORES = [("3.5", 3.5), (" 4 ", 4.0), ("+2", 2.0), ("4.", 4.0), (".5", 0.5), ("2e1", 20.0),
               ("-0", 0.0), ("nan", None), ("N/A", None)]  # fmt: skip


@pytest.mark.parametrize(("text", "value"), GOOD_SCORES, ids=[g[0] for g in GOOD_SCORES])
def test_plain_decimals_are_accepted(empty_store, tmp_path, text, value):
    path = tmp_path / "scores.csv"
    path.write_text(f"instance_id,model,judge,skill,score\n1,a,j,helpfulness,{text}\n")
    import_scores(empty_store, path, dataset="d", scale=(0, 100))
    assert query(empty_store, "SELECT score FROM scores") == [(value,)]


# ------------------------------------------------------------------ hostile JSON lines


def deep_row(depth: int) -> str:
    head = json.dumps({**ROW, "model": "b"})[:-1]
    return head + ', "response": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [20_000, 100_000])
@pytest.mark.parametrize("lenient", [False, True])
def test_deeply_nested_line_is_one_paragraph_error(store, tmp_path, depth, lenient):
    path = tmp_path / "deep.jsonl"
    path.write_text(jl(ROW, deep_row(depth), {**ROW, "model": "c"}))
    before = snapshot(store)
    out = cli("import-scores", str(path), "--db", str(store.path), "--dataset", "d",
              *(["--lenient"] if lenient else []))  # fmt: skip
    assert "Traceback" not in out.stderr
    if lenient:  # the deep line is listed as skipped, the others are imported
        assert out.returncode == 0, out.stderr
        assert f"{path}, line 2, field 'response'" in out.stdout + out.stderr
        assert query(store, "SELECT DISTINCT model FROM scores ORDER BY 1") == [("alpaca",), ("c",)]
        return
    assert out.returncode == 2, (out.returncode, out.stderr[-500:])
    message = out.stderr.strip()
    assert f"{path}, line 2, field 'response': " in message
    assert "nested more than 100 levels deep" in message
    assert "\n\n" not in message and len(message) < 1000
    assert snapshot(store) == before


def test_deep_line_without_a_field_and_brackets_inside_text(store, tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(jl(ROW, "[" * 5000 + "]" * 5000))
    rejected(store, path, 2, None, "nested more than 100 levels deep")
    text = tmp_path / "text.jsonl"  # brackets inside a string are text, not nesting
    text.write_text(jl({**ROW, "model": "b", "response": "[{" * 20_000}))
    import_scores(store, text, dataset="d")
    assert query(store, "SELECT length(text) FROM responses WHERE model = 'b'") == [(40_000,)]


SURROGATES = [
    # id, the JSON text of the second line's extra part, field named
    ("high-in-model", '"model": "a\\ud800b"', "model"),
    ("low-in-response", '"model": "b", "response": "x\\udc00"', "response"),
    ("reversed-pair", '"model": "b", "rationale": "\\ude00\\ud83d"', "rationale"),
    ("in-a-key", '"model": "b", "\\ud83dnote": "x"', "\\ud83dnote"),
    ("in-a-list", '"model": "b", "domain": ["humanities", "\\udfff"]', "domain"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "part", "field"), SURROGATES, ids=[s[0] for s in SURROGATES])
def test_lone_surrogates_are_refused(store, tmp_path, case, part, field):
    path = tmp_path / "s.jsonl"
    second = json.dumps({k: v for k, v in ROW.items() if k != "model"})[:-1] + ", " + part + "}"
    path.write_text(jl(ROW, second))
    e = rejected(store, path, 2, field, "surrogate pair without its other half")
    assert e.message.encode("utf-8")  # printable: the message holds no surrogate itself


def test_lone_surrogate_through_the_cli(store, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(jl(ROW, json.dumps({**ROW, "model": "a\ud800b"})))
    before = snapshot(store)
    out = cli("import-scores", str(path), "--db", str(store.path), "--dataset", "d")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-800:]
    assert f"{path}, line 2, field 'model': " in out.stderr
    assert snapshot(store) == before


def test_a_complete_surrogate_pair_is_a_character(empty_store, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(jl({**ROW, "model": "smile \\ud83d\\ude00"}).replace("\\\\", "\\"))
    import_scores(empty_store, path, dataset="d")
    assert query(empty_store, "SELECT model FROM scores") == [("smile \U0001f600",)]


# ------------------------------------------------------------------ clear messages


@pytest.mark.parametrize("newline", ["", "\n"], ids=["one-line", "multi-line"])
def test_a_long_csv_cell_is_read(empty_store, tmp_path, newline):
    text = "a" * 100_000 + newline + "b" * (100_000 - len(newline))
    path = tmp_path / "long.csv"
    path.write_text(f'instance_id,model,judge,skill,score,response\n1,m,j,correctness,4,"{text}"\n')
    import_scores(empty_store, path, dataset="d")
    assert query(empty_store, "SELECT length(text) FROM responses") == [(200_000,)]


LONG = "v" * 100 + " " + "w" * 200_000
LONG_CASES = [
    # id, CSV text, line, field
    ("conflicting-instruction-of-long-id",
     f"instance_id,model,judge,skill,score,instruction\n{LONG},m,j,correctness,4,a\n"
     f"{LONG},m,j,factuality,4,b\n", 3, "instruction"),
    ("long-column-name", f"instance_id,model,judge,skill,{'c' * 200_000}\n1,m,j,correctness,4\n",
     1, "score"),
    ("long-score", f"instance_id,model,judge,skill,score\n1,m,j,correctness,{'9' * 200_000}x\n",
     2, "score"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "content", "line", "field"), LONG_CASES,
                         ids=[c[0] for c in LONG_CASES])  # fmt: skip
def test_long_values_are_shortened_in_messages(store, tmp_path, case, content, line, field):
    path = tmp_path / "long.csv"
    path.write_text(content)
    e = rejected(store, path, line, field)
    assert len(e.message) < 600, len(e.message)
    assert "\u2026" in e.message or "..." in e.message


SCALES = [("-5-5", (-5.0, 5.0)), ("-5..5", (-5.0, 5.0)), ("-5:5", (-5.0, 5.0)),
          ("-10--1", (-10.0, -1.0)), ("1-10", (1.0, 10.0)), ("0.5..2.5", (0.5, 2.5)),
          ("1e-3-1", (0.001, 1.0)), (" -5 .. 5 ", (-5.0, 5.0))]  # fmt: skip


@pytest.mark.parametrize(("text", "scale"), SCALES, ids=[s[0] for s in SCALES])
def test_scale_option_reads_negative_bounds(text, scale):
    assert Scale().convert(text, None, None) == scale


@pytest.mark.parametrize("text", ["5-1", "-5", "a-b", "1_0-20", "inf-5", "1--", "-5-5-5"])
def test_scale_option_refuses_what_is_not_a_scale(text):
    with pytest.raises(click.BadParameter):
        Scale().convert(text, None, None)


def test_negative_scale_through_the_cli(store, tmp_path):
    path = tmp_path / "delta.csv"
    path.write_text("instance_id,model,judge,skill,score\n1,m,j,delta,-3\n2,m,j,delta,5\n")
    out = cli("import-scores", str(path), "--db", str(store.path), "--dataset", "d",
              "--scale", "-5-5")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert query(store, "SELECT scale_min, scale_max FROM criteria WHERE skill = 'delta'") == [
        (-5.0, 5.0)
    ]
    assert query(store, "SELECT score FROM scores WHERE skill = 'delta' ORDER BY 1") == [
        (-3.0,), (5.0,)
    ]  # fmt: skip


def test_parquet_decimal_scores_and_ids(empty_store, tmp_path):
    path = tmp_path / "dec.parquet"
    table = pa.table({
        "instance_id": pa.array([Decimal(10**19 + 1), Decimal(2)], pa.decimal128(20, 0)),
        "model": ["m", "m"], "judge": ["j", "j"], "skill": ["correctness", "correctness"],
        "score": pa.array([Decimal("3.5"), Decimal("4.0")], pa.decimal128(3, 1)),
    })  # fmt: skip
    pq.write_table(table, path)
    import_scores(empty_store, path, dataset="d")
    assert query(empty_store, "SELECT instance_id, score FROM scores ORDER BY 2") == [
        (str(10**19 + 1), 3.5), ("2", 4.0)
    ]  # fmt: skip


def test_parquet_decimal_score_outside_scale_names_the_row(store, tmp_path):
    path = tmp_path / "dec.parquet"
    pq.write_table(
        pa.table(
            {
                "instance_id": ["1"],
                "model": ["m"],
                "judge": ["j"],
                "skill": ["correctness"],
                "score": pa.array([Decimal("7.5")], pa.decimal128(3, 1)),
            }
        ),
        path,
    )
    e = rejected(store, path, 1, "score", "7.5")
    assert e.message.startswith(f"{path}, row 1, field 'score': ")


def test_a_directory_is_named_as_one(store, tmp_path):
    folder = tmp_path / "scores.csv"
    folder.mkdir()
    rejected(store, folder, None, None, "is a directory")
    out = cli("import-scores", str(folder), "--db", str(store.path))
    assert out.returncode == 2 and "is a directory" in out.stderr, out.stderr


def test_a_fifo_is_refused_without_reading(store, tmp_path):
    fifo = tmp_path / "scores.jsonl"
    os.mkfifo(fifo)
    rejected(store, fifo, None, None, "not a regular file")


# ------------------------------------------------------------------ FLASK files share the guard

FLASK_LINES = [
    ("deep", lambda row: json.dumps(row)[:-1] + ', "x": ' + "[" * 20_000 + "]" * 20_000 + "}",
     "x", "nested more than 100 levels deep"),
    ("surrogate", lambda row: json.dumps({**row, "text": "a\ud800"}), "text",
     "surrogate pair without its other half"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "line", "field", "text"), FLASK_LINES,
                         ids=[c[0] for c in FLASK_LINES])  # fmt: skip
def test_flask_outputs_are_guarded_too(empty_store, tmp_path, case, line, field, text):
    root = build_flask(tmp_path / "FLASK")
    out = root / "model_output/outputs/alpaca.jsonl"
    rows = out.read_text().splitlines()
    rows[1] = line(json.loads(rows[1]))
    out.write_text("\n".join(rows) + "\n")
    with pytest.raises(InputError) as info:
        import_flask(empty_store, str(root))
    e = info.value
    assert (e.file, e.line, e.field) == (f"{root}/model_output/outputs/alpaca.jsonl", 2, field)
    assert text in e.message


def test_a_looping_link_and_a_device_are_refused(store, tmp_path):
    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    rejected(store, loop, None, None, "loops")
    zero = tmp_path / "zero.csv"
    zero.symlink_to("/dev/zero")
    rejected(store, zero, None, None, "not a regular file")
