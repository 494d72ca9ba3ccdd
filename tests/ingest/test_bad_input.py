"""Bad input gets a clear error that names file, line and field, and changes nothing.

Every case runs against a store that already holds data (a small FLASK folder and a score file),
and compares every row of every table before and after the rejected import.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.core.store import Store
from analysis.ingest.flask_source import import_flask
from analysis.ingest.score_files import import_scores
from tests.mini_flask import build_flask, eval_row, query, review_row, snapshot

H = "instance_id,model,judge,skill,score\n"
OK = "1,alpaca,rater,correctness,4\n"
GOOD = {"instance_id": 1, "model": "alpaca", "judge": "rater", "skill": "correctness", "score": 4}
EVAL = "evaluation_set/flask_evaluation.jsonl"
HARD = "evaluation_set/flask_hard_evaluation.jsonl"
OUT = "model_output/outputs/alpaca.jsonl"
REVIEW = "gpt_review/outputs/alpaca_review.jsonl"


def jl(*rows: dict | str) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


@pytest.fixture(scope="module")
def seeded_db(tmp_path_factory) -> Path:
    """FLASK (6 instances, 2 models, GPT-4 reviews), plus human scores on a custom 0-1 scale."""
    root = tmp_path_factory.mktemp("seed")
    store = Store(root / "seed.duckdb")
    import_flask(store, str(build_flask(root / "FLASK")))
    seed = root / "humans.csv"
    seed.write_text(
        "instance_id,model,judge,kind,skill,score,scale_min,scale_max\n"
        "1,alpaca,rater,human,passed,1,0,1\n2,alpaca,rater,human,factuality,4,,\n"
    )
    import_scores(store, seed, dataset="flask")
    assert query(store, "SELECT count(*) FROM scores")[0][0] == 36 + 2
    return store.path


@pytest.fixture
def store(seeded_db: Path, tmp_path: Path) -> Store:
    path = tmp_path / "store.duckdb"
    shutil.copy(seeded_db, path)
    return Store(path)


def assert_rejected(store: Store, call: Callable[[], object], file: Path | str,
                    line: int | None, field: str | None, *texts: str,
                    unit: str = "line") -> InputError:  # fmt: skip
    """The call raises an InputError naming file, line and field; the store is unchanged."""
    before = snapshot(store)
    with pytest.raises(InputError) as info:
        call()
    e = info.value
    assert (e.file, e.line, e.field) == (str(file), line, field), e.message
    where = str(file) + (f", {unit} {line}" if line is not None else "")
    where += f", field '{field}'" if field else ""
    assert e.message.startswith(where + ": "), e.message
    for text in texts:
        assert text in e.message
    assert snapshot(store) == before
    return e


# --------------------------------------------------------------------- score files

SCORE_CASES = [
    # id, file name, content, import options, line, field, texts in the message
    ("score-not-a-number", "s.csv", H + OK + "1,alpaca,rater,readability,excellent\n", {},
     3, "score", ["'excellent'", "expected a number or N/A"]),
    ("score-outside-flask-scale", "s.csv", H + OK + "2,alpaca,rater,Logical Correctness,6\n",
     {}, 3, "score", ["score 6 is outside the scale 1-5 of 'correctness'"]),
    ("score-outside-custom-scale", "s.csv",
     "instance_id,model,judge,skill,score,scale_min,scale_max\n1,alpaca,r,ok,1.5,0,1\n", {},
     2, "score", ["outside the scale 0-1 of 'ok'"]),
    ("score-outside-cli-scale", "s.csv", H + "1,alpaca,r,helpfulness,11\n",
     {"scale": (1, 10)}, 2, "score", ["outside the scale 1-10"]),
    ("unknown-skill", "s.csv", H + OK + OK.replace("correctness", "corectness"), {},
     3, "skill", ["unknown skill 'corectness'", "did you mean 'correctness'", "--scale"]),
    ("conflicting-duplicate-score", "s.csv",
     H + OK + "2,alpaca,rater,readability,3\n1,alpaca,rater,Logical Correctness,2\n", {},
     4, "score", ["is 2 here but 4 on line 2"]),
    ("conflicting-instruction", "s.csv",
     "instance_id,model,judge,skill,score,instruction\n"
     "7,alpaca,r,correctness,4,Add 2 and 2\n7,alpaca,r,readability,4,Add 3 and 3\n", {},
     3, "instruction", ["instruction of instance '7'", "'Add 3 and 3' here",
                        "'Add 2 and 2' on line 2"]),
    ("conflicting-response", "s.csv",
     "instance_id,model,judge,skill,score,response\n"
     "7,alpaca,r,correctness,4,four\n7,alpaca,r,readability,4,five\n", {},
     3, "response", ["response of model 'alpaca' to instance '7'", "line 2"]),
    ("bom-in-the-middle", "s.csv", H + OK + "\ufeff" + H + OK, {},
     3, "instance_id", ["byte-order mark (U+FEFF) in the middle of the file"]),
    ("non-utf8-bytes", "s.csv", (H + OK).encode() + b"2,alpaca,rater,caf\xe9,3\n", {},
     3, None, ["byte 0xe9", "not UTF-8"]),
    ("empty-file", "s.csv", "", {}, None, None, ["the file is empty"]),
    ("blank-lines-only", "s.csv", "\n\r\n\n", {}, None, None, ["the file is empty"]),
    ("header-only", "s.csv", H, {}, 1, None, ["a header but no rows"]),
    ("missing-score-column", "s.csv", "instance_id,model,judge,skill\n1,alpaca,r,correctness\n",
     {}, 1, "score", ["missing required column 'score'", "instance_id, model, judge, skill"]),
    ("missing-judge-column", "s.csv", "instance_id,model,skill,score\n1,alpaca,correctness,4\n",
     {}, 1, "judge", ["missing required column 'judge'", "--judge"]),
    ("row-with-too-few-cells", "s.csv", H + OK + "2,alpaca,rater,correctness\n", {},
     3, None, ["has 4 cells, the header has 5", "'score'"]),
    ("missing-instance-id", "s.csv", H + ",alpaca,rater,correctness,4\n", {},
     2, "instance_id", ["missing"]),
    ("invalid-kind", "s.csv", "instance_id,model,judge,skill,score,kind\n"
     "1,alpaca,r2,correctness,4,robot\n", {}, 2, "kind", ["'robot'", "human or llm"]),
    ("judge-with-two-kinds", "s.csv", "instance_id,model,judge,skill,score,kind\n"
     "1,alpaca,r2,correctness,4,human\n2,alpaca,r2,correctness,4,llm\n", {},
     3, "kind", ["kind of judge 'r2' is 'llm' here but 'human' on line 2"]),
    ("kind-contradicts-the-store", "s.csv", H + OK, {"kind": "llm"},
     2, "kind", ["judge 'rater' is already in the store as human"]),
    ("scale-min-not-below-max", "s.csv", "instance_id,model,judge,skill,score,scale_min,"
     "scale_max\n1,alpaca,r,grade,3,3,3\n", {}, 2, "scale_min", ["3 must be below"]),
    ("half-a-scale", "s.csv", "instance_id,model,judge,skill,score,scale_min,scale_max\n"
     "1,alpaca,r,grade,3,1,\n", {}, 2, "scale_max", ["give both"]),
    ("fractional-scale", "s.csv", "instance_id,model,judge,skill,score,scale_min,scale_max\n"
     "1,alpaca,r,grade,3,0.5,4\n", {}, 2, "scale_min", ["whole numbers"]),
    ("flask-skill-on-another-scale", "s.csv", "instance_id,model,judge,skill,score,scale_min,"
     "scale_max\n1,alpaca,r,correctness,7,1,10\n", {}, 2, "scale_min",
     ["dataset 'flask' already scores 'correctness' as FLASK's skill (1-5)", "declares 1-10"]),
    ("criterion-with-two-scales", "s.csv", "instance_id,model,judge,skill,score,scale_min,"
     "scale_max\n1,alpaca,r,grade,3,1,5\n2,alpaca,r,grade,3,1,10\n", {}, 3, "scale_min",
     ["scale of criterion 'grade' is 1-10 here but 1-5 on line 2"]),
    ("criterion-exists-on-another-scale", "s.csv", H + "3,alpaca,r,passed,3\n",
     {"scale": (1, 5)}, 2, "skill", ["'passed' of dataset 'flask' already exists with scale 0-1"]),
    ("unknown-difficulty", "s.csv", "instance_id,model,judge,skill,score,difficulty\n"
     "1,alpaca,r,correctness,4,3\n2,alpaca,r,correctness,4,rocket science\n", {},
     3, "difficulty", ["unknown difficulty 'rocket science'", "expert level knowledge"]),
    ("unknown-domain", "s.csv", "instance_id,model,judge,skill,score,domain\n"
     "1,alpaca,r,correctness,4,Math; Mathz\n", {}, 2, "domain",
     ["unknown domain 'Mathz'", "did you mean 'Math'"]),
    ("quoted-line-break-then-error", "s.csv", H.replace("\n", ",instruction\n")
     + '1,alpaca,r,correctness,4,"line one\nline two"\n2,alpaca,r,correctness,x,plain\n', {},
     4, "score", ["'x'"]),
    ("unknown-file-type", "s.txt", H + OK, {}, None, None, ["unknown file type '.txt'"]),
    ("blank-lines-and-crlf-keep-line-numbers", "s.csv",
     (H + OK + "\n  \n" + "2,alpaca,rater,readability,0\n").replace("\n", "\r\n"), {},
     5, "score", ["score 0 is outside"]),
    ("blank-line-then-error", "s.csv", H + OK + "\n" + "2,alpaca,rater,readability,7\n", {},
     4, "score", ["score 7 is outside"]),
    ("old-mac-line-ends", "s.csv", (H + OK + "2,alpaca,rater,readability,x\n").replace("\n", "\r"),
     {}, 3, "score", ["'x'"]),
    ("semicolon-separated", "s.csv", H.replace(",", ";") + OK.replace(",", ";"), {},
     1, "instance_id", ["another separator"]),
    # JSONL
    ("truncated-json-line", "s.jsonl", jl(GOOD, '{"instance_id": 2, "model": "alp'), {},
     2, None, ["not valid JSON", "one complete JSON object"]),
    ("instance-id-a-list", "s.jsonl", jl(GOOD, {**GOOD, "instance_id": [1, 2]}), {},
     2, "instance_id", ["expected text or an integer id, got a list [1, 2]"]),
    ("score-a-boolean", "s.jsonl", jl({**GOOD, "score": True}), {},
     1, "score", ["got a boolean"]),
    ("score-an-object", "s.jsonl", jl(GOOD, {**GOOD, "instance_id": 2, "score": {"v": 3}}), {},
     2, "score", ["got an object"]),
    ("instruction-a-number", "s.jsonl", jl({**GOOD, "instruction": 12}), {},
     1, "instruction", ["expected text, got 12"]),
    ("domain-a-number", "s.jsonl", jl({**GOOD, "domain": 5}), {},
     1, "domain", ["expected domain names"]),
    ("key-missing-on-one-line", "s.jsonl",
     jl(GOOD, {k: v for k, v in GOOD.items() if k != "model"}), {}, 2, "model", ["missing"]),
    ("json-bom-in-the-middle", "s.jsonl", jl(GOOD) + "\ufeff" + jl({**GOOD, "instance_id": 2}),
     {}, 2, None, ["BOM in the middle"]),
    ("json-line-not-an-object", "s.jsonl", jl(GOOD, "[1, 2]"), {},
     2, None, ["expected a JSON object, got list"]),
    ("empty-jsonl", "s.jsonl", "\n", {}, None, None, ["the file is empty"]),
    ("json-non-utf8", "s.ndjson", jl(GOOD).encode() + b'{"x": "\xff"}\n', {},
     2, None, ["not UTF-8"]),
    # Options
    ("invalid-kind-option", "s.csv", H + OK, {"kind": "robot"}, None, "kind", ["'robot'"]),
    ("inverted-scale-option", "s.csv", H + OK, {"scale": (5, 1)}, None, "scale",
     ["minimum 5 must be below its maximum 1"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "name", "content", "options", "line", "field", "texts"),
                         SCORE_CASES, ids=[c[0] for c in SCORE_CASES])  # fmt: skip
def test_bad_score_file(store, tmp_path, case, name, content, options, line, field, texts):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    options = {"dataset": "flask", **options}
    assert_rejected(store, lambda: import_scores(store, path, **options), path, line, field,
                    *texts)  # fmt: skip


PARQUET_CASES = [
    ("parquet-score-not-a-number", {"score": ["3", "excellent"]}, 2, "score", ["'excellent'"]),
    ("parquet-id-a-float", {"instance_id": [1.0, 2.5]}, 2, "instance_id", ["2.5"]),
    ("parquet-missing-column", {"score": None}, None, "score", ["missing required column"]),
]


@pytest.mark.parametrize(("case", "change", "line", "field", "texts"), PARQUET_CASES,
                         ids=[c[0] for c in PARQUET_CASES])  # fmt: skip
def test_bad_parquet_file_names_the_row(store, tmp_path, case, change, line, field, texts):
    frame = pd.DataFrame({"instance_id": ["1", "2"], "model": ["alpaca"] * 2,
                          "judge": ["rater"] * 2, "skill": ["correctness"] * 2,
                          "score": [4.0, 3.0]})  # fmt: skip
    for col, values in change.items():
        if values is None:
            frame = frame.drop(columns=col)
        else:
            frame[col] = values
    path = tmp_path / "s.parquet"
    frame.to_parquet(path)
    assert_rejected(store, lambda: import_scores(store, path), path, line, field, *texts,
                    unit="row")  # fmt: skip


def test_a_file_that_is_not_parquet(store, tmp_path):
    path = tmp_path / "s.parquet"
    path.write_text(H + OK)
    assert_rejected(store, lambda: import_scores(store, path), path, None, None,
                    "not a readable Parquet file")  # fmt: skip


# --------------------------------------------------------------------- FLASK folders


def set_line(path: Path, no: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[no - 1] = text
    path.write_text("\n".join(lines), encoding="utf-8")


def set_row(path: Path, no: int, **changes: object) -> None:
    row = json.loads(path.read_text(encoding="utf-8").split("\n")[no - 1])
    set_line(path, no, json.dumps({**row, **changes}))


FLASK_CASES = [
    # id, change to the folder, file, line, field, texts
    ("truncated-json-line", lambda r: set_line(r / EVAL, 3, json.dumps(eval_row(3))[:40]),
     EVAL, 3, None, ["not valid JSON"]),
    ("id-not-an-integer", lambda r: set_row(r / EVAL, 2, idx="two"),
     EVAL, 2, "idx", ["expected a positive integer id, got 'two'"]),
    ("instruction-not-text", lambda r: set_row(r / EVAL, 2, instruction=["a", "b"]),
     EVAL, 2, "instruction", ["expected non-empty text"]),
    ("skills-not-a-list", lambda r: set_row(r / EVAL, 5, skill=5),
     EVAL, 5, "skill", ["expected a list of names, got 5"]),
    ("unknown-skill", lambda r: set_row(r / EVAL, 4, skill=["Logical Corectness", "Readability"]),
     EVAL, 4, "skill", ["unknown skill 'Logical Corectness'", "did you mean 'correctness'"]),
    ("duplicate-id-other-content",
     lambda r: (r / EVAL).open("a").write(json.dumps({**eval_row(1), "answer": "x"}) + "\n"),
     EVAL, 7, "idx", ["id 1 already appears on line 1 with different content"]),
    ("bom-in-the-middle", lambda r: set_line(r / HARD, 2, "\ufeff" + json.dumps(eval_row(2))),
     HARD, 2, None, ["BOM in the middle"]),
    ("non-utf8-bytes", lambda r: (r / OUT).write_bytes((r / OUT).read_bytes()
                                                       + b'{"question_id": 1, "text": "\xc3("}\n'),
     OUT, 7, None, ["not UTF-8"]),
    ("empty-evaluation-set", lambda r: (r / EVAL).write_text(""),
     EVAL, None, None, ["the file is empty"]),
    ("unknown-difficulty", lambda r: set_row(r / EVAL, 6, difficulty="rocket science"),
     EVAL, 6, "difficulty", ["unknown difficulty 'rocket science'"]),
    ("unknown-domain", lambda r: set_row(r / EVAL, 1, domain=["Math", "Astrology"]),
     EVAL, 1, "domain", ["unknown domain 'Astrology'"]),
    ("output-id-not-in-evaluation-set", lambda r: set_row(r / OUT, 3, question_id=99),
     OUT, 3, "question_id", ["id 99 is not in the evaluation set"]),
    ("output-text-not-text", lambda r: set_row(r / OUT, 2, text=None),
     OUT, 2, "text", ["expected the response text"]),
    ("output-id-twice-other-text",
     lambda r: (r / OUT).open("a").write(json.dumps({"question_id": 1, "text": "other"}) + "\n"),
     OUT, 7, "question_id", ["appears twice with different text"]),
    ("review-score-not-a-dict", lambda r: set_row(r / REVIEW, 2, score=[4, 5, 3]),
     REVIEW, 2, "score", ["expected a dict, got [4, 5, 3]"]),
    ("review-score-missing",
     lambda r: set_line(r / REVIEW, 4, json.dumps({k: v for k, v in review_row(4, "alpaca", {})
                                                   .items() if k != "score"})),
     REVIEW, 4, "score", ["missing"]),
    ("review-text-missing", lambda r: set_row(r / REVIEW, 1, review=None),
     REVIEW, 1, "review", ["expected the judge's text"]),
    ("review-id-not-in-evaluation-set", lambda r: set_row(r / REVIEW, 5, question_id=1234),
     REVIEW, 5, "question_id", ["id 1234 is not in the evaluation set"]),
    ("missing-flask-hard-file", lambda r: (r / HARD).unlink(),
     HARD, None, None, ["file not found"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "change", "rel", "line", "field", "texts"), FLASK_CASES,
                         ids=[c[0] for c in FLASK_CASES])  # fmt: skip
def test_bad_flask_folder(store, tmp_path, case, change, rel, line, field, texts):
    root = build_flask(tmp_path / "FLASK")
    change(root)
    assert_rejected(store, lambda: import_flask(store, str(root)), f"{root}/{rel}", line, field,
                    *texts)  # fmt: skip


# --------------------------------------------------------------------- what is not an error


def _content(store: Store) -> dict[str, list]:
    """What an import means, without what depends on the file bytes (run ids, timestamps)."""
    sql = {
        "instances": "SELECT * FROM instances",
        "responses": "SELECT * FROM responses",
        "scores": "SELECT dataset, instance_id, model, judge, skill, score, superseded "
                  "FROM scores",
        "judgments": "SELECT dataset, instance_id, model, judge, raw_output, rationale, "
                     "parse_status, error, prompt_tokens FROM judgments",
        "judges": "SELECT * FROM judges",
        "skills": "SELECT * FROM skills",
    }  # fmt: skip
    with store.read() as con:
        return {k: con.execute(q + " ORDER BY ALL").fetchall() for k, q in sql.items()}


def _bom_crlf(path: Path) -> None:
    data = path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + data)


def test_flask_folder_with_bom_and_crlf_imports_like_the_clean_one(tmp_path):
    clean = build_flask(tmp_path / "clean")
    dirty = build_flask(tmp_path / "dirty")
    for path in dirty.rglob("*.jsonl"):
        _bom_crlf(path)
    assert (dirty / EVAL).read_bytes().startswith(b"\xef\xbb\xbf")
    a, b = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    report_a, report_b = import_flask(a, str(clean)), import_flask(b, str(dirty))
    assert _content(a) == _content(b)
    assert report_a.counts == report_b.counts
    assert query(b, "SELECT count(*) FROM scores") == [(36,)]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_score_file_with_bom_and_crlf_imports_like_the_clean_one(tmp_path, fmt):
    if fmt == "csv":
        text = ("instance_id,model,judge,skill,score,rationale,instruction\n"
                '1,alpaca,r,correctness,4.5,"fine, mostly",Add\n'
                "1,alpaca,r,readability,N/A,,Add\n2,vicuna,r,factuality,,,\n")  # fmt: skip
    else:
        text = jl({**GOOD, "score": 4.5, "rationale": "fine, mostly", "instruction": "Add"},
                  {**GOOD, "skill": "readability", "score": "N/A"},
                  {**GOOD, "instance_id": 2, "model": "vicuna", "skill": "factuality",
                   "score": None})  # fmt: skip
    clean, dirty = tmp_path / f"clean.{fmt}", tmp_path / f"dirty.{fmt}"
    clean.write_text(text)
    dirty.write_text(text)
    _bom_crlf(dirty)
    a, b = Store(tmp_path / "a.duckdb"), Store(tmp_path / "b.duckdb")
    import_scores(a, clean, dataset="d")
    import_scores(b, dirty, dataset="d")
    assert _content(a) == _content(b)
    assert query(b, "SELECT instance_id, skill, score FROM scores ORDER BY ALL") == [
        ("1", "correctness", 4.5),
        ("1", "readability", None),
        ("2", "factuality", None),
    ]
    assert query(b, "SELECT rationale FROM judgments WHERE instance_id = '1'") == [
        ("fine, mostly",)]  # fmt: skip


def test_an_empty_review_score_is_a_counted_parse_failure(tmp_path):
    root = build_flask(tmp_path / "FLASK")
    set_line(root / REVIEW, 3, json.dumps(review_row(3, "alpaca", {})))
    set_line(root / REVIEW, 5, json.dumps(review_row(5, "alpaca", {"readability": 9})))
    store = Store(tmp_path / "s.duckdb")
    report = import_flask(store, str(root))
    assert report.parse_failures == 2
    failed = query(store, "SELECT instance_id, parse_status, error, raw_output IS NOT NULL "
                   "FROM judgments WHERE parse_status <> 'ok' ORDER BY 1")  # fmt: skip
    assert [(r[0], r[1], r[3]) for r in failed] == [("3", "failed", True), ("5", "failed", True)]
    assert "could not be parsed" in failed[0][2] and "outside 1-5" in failed[1][2]
    # No score is invented for them; the other 10 judgments of 3 skills each are kept.
    assert query(store, "SELECT count(*) FROM scores WHERE instance_id IN ('3', '5') "
                 "AND model = 'alpaca'") == [(0,)]  # fmt: skip
    assert query(store, "SELECT count(*) FROM scores") == [(30,)]
