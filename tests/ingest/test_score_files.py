"""The long-format score importer on real DuckDB files: formats, N/A, custom scales, history."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.cli.main import main
from analysis.core.errors import InputError
from analysis.core.filters import Filters
from analysis.core.store import Store
from analysis.ingest.flask_source import import_flask
from analysis.ingest.score_files import import_scores, parse_score_file
from analysis.views import radar
from tests.mini_flask import build_flask, counts, query, snapshot

# One table, written as CSV, JSONL and Parquet. Scores: real-valued, N/A in several spellings,
# per-row judge and kind; skills in FLASK's spellings (Title-Case, lower-case, short id).
ROWS = [
    # instance_id, model, judge, kind, skill, score, rationale
    ("q1", "m1", "ann", "human", "Logical Correctness", "4.5", "mean of two annotators"),
    ("q1", "m1", "ann", "human", "readability", "N/A", ""),
    ("q1", "m2", "ann", "human", "correctness", "3", ""),
    ("q2", "m1", "ann", "human", "factuality", "", ""),
    ("q1", "m1", "judge-x", "llm", "correctness", "4.25", "expected score"),
    ("q1", "m2", "judge-x", "llm", "Correctness", "NA", "could not tell"),
    ("q2", "m1", "judge-x", "", "factuality", "1", ""),
]
COLS = ["instance_id", "model", "judge", "kind", "skill", "score", "rationale"]
EXPECTED = {  # (instance, model, judge, skill) → score
    ("q1", "m1", "ann", "correctness"): 4.5,
    ("q1", "m1", "ann", "readability"): None,
    ("q1", "m2", "ann", "correctness"): 3.0,
    ("q2", "m1", "ann", "factuality"): None,
    ("q1", "m1", "judge-x", "correctness"): 4.25,
    ("q1", "m2", "judge-x", "correctness"): None,
    ("q2", "m1", "judge-x", "factuality"): 1.0,
}


def write_csv(path: Path, header: list[str], rows: list[tuple], newline: str = "\n") -> Path:
    """CSV by hand (no quoting needed in these rows) so line numbers are obvious."""
    lines = [",".join(header)] + [",".join(str(c) for c in r) for r in rows]
    path.write_bytes((newline.join(lines) + newline).encode("utf-8"))
    return path


def json_value(cell: str) -> object:
    """The JSONL form of a CSV cell: numbers as numbers, blanks as null, "N/A" kept."""
    if cell == "":
        return None
    try:
        return float(cell) if "." in cell else int(cell)
    except ValueError:
        return cell


def write_format(tmp_path: Path, fmt: str, stem: str = "scores") -> Path:
    if fmt == "csv":
        return write_csv(tmp_path / f"{stem}.csv", COLS, ROWS)
    if fmt == "jsonl":
        path = tmp_path / f"{stem}.jsonl"
        path.write_text("".join(json.dumps({c: json_value(v) for c, v in zip(COLS, r, strict=True)})
                                + "\n" for r in ROWS))  # fmt: skip
        return path
    frame = pd.DataFrame(ROWS, columns=COLS)
    frame["score"] = [json_value(s) if s not in ("N/A", "NA") else None for s in frame["score"]]
    frame["score"] = frame["score"].astype(float)
    path = tmp_path / f"{stem}.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path


def latest(store: Store, dataset: str | None = None) -> dict[tuple, float | None]:
    sql = "SELECT instance_id, model, judge, skill, score FROM latest_scores"
    rows = query(
        store, sql + (" WHERE dataset = ?" if dataset else ""), [dataset] if dataset else []
    )
    return {r[:4]: r[4] for r in rows}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_each_format_imports_the_same_scores(tmp_path, fmt):
    store = Store(tmp_path / "s.duckdb")
    report = import_scores(store, write_format(tmp_path, fmt))
    assert latest(store, "scores") == EXPECTED
    assert report.counts["scores"] == 7 and report.counts["N/A scores"] == 3
    assert dict(query(store, "SELECT judge, kind FROM judges")) == {"ann": "human",
                                                                      "judge-x": "llm"}  # fmt: skip
    # One judgment per (instance, model, judge), the first non-empty rationale kept.
    judgments = query(store, "SELECT instance_id, model, judge, rationale, parse_status "
                      "FROM judgments ORDER BY ALL")  # fmt: skip
    assert judgments == [
        ("q1", "m1", "ann", "mean of two annotators", "ok"),
        ("q1", "m1", "judge-x", "expected score", "ok"),
        ("q1", "m2", "ann", None, "ok"),
        ("q1", "m2", "judge-x", "could not tell", "ok"),
        ("q2", "m1", "ann", None, "ok"),
        ("q2", "m1", "judge-x", None, "ok"),
    ]
    # Every score row points at its judgment; one run per (judge, dataset).
    assert query(store, "SELECT count(*) FROM scores WHERE judgment_id IS NULL") == [(0,)]
    assert query(store, "SELECT judge, dataset, status, n_items FROM runs ORDER BY judge") == [
        ("ann", "scores", "complete", 3), ("judge-x", "scores", "complete", 3)]  # fmt: skip
    # The dataset is named after the file; instances list the skills scored for them.
    assert query(store, "SELECT dataset, title FROM datasets") == [("scores", "scores")]
    assert query(store, "SELECT instance_id, skills FROM instances ORDER BY 1") == [
        ("q1", ["correctness", "readability"]), ("q2", ["factuality"])]  # fmt: skip


def test_formats_agree_row_for_row(tmp_path):
    results = []
    for fmt in ("csv", "jsonl", "parquet"):
        store = Store(tmp_path / f"{fmt}.duckdb")
        import_scores(store, write_format(tmp_path, fmt, stem="same"))
        results.append(query(store, "SELECT dataset, instance_id, model, judge, skill, score "
                             "FROM scores ORDER BY ALL"))  # fmt: skip
    assert results[0] == results[1] == results[2]


def test_custom_criteria_with_their_own_scales(tmp_path):
    path = write_csv(tmp_path / "bench.csv", ["instance_id", "model", "skill", "score",
                                              "scale_min", "scale_max"], [
        ("a", "m1", "fluency", "2.5", "1", "3"),
        ("a", "m1", "passed", "0", "0", "1"),
        ("b", "m1", "passed", "1", "", ""),  # declared once for the criterion is enough
        ("b", "m1", "fluency", "3", "1", "3"),
        ("a", "m2", "overall", "9.5", "", ""),  # overall: from --scale 1-10
        ("b", "m2", "overall", "1", "", ""),
        ("b", "m2", "readability", "5", "1", "5"),  # a FLASK skill may state its 1-5 scale
    ])  # fmt: skip
    store = Store(tmp_path / "s.duckdb")
    report = import_scores(store, path, judge="bench-judge", kind="llm", scale=(1, 10))
    # Criteria belong to the dataset (named after the file): rows of `criteria`, not `skills`.
    skills = query(store, "SELECT dataset, skill, scale_min, scale_max, ability, label "
                   "FROM criteria ORDER BY skill")  # fmt: skip
    assert skills == [("bench", "fluency", 1.0, 3.0, None, "fluency"),
                      ("bench", "overall", 1.0, 10.0, None, "overall"),
                      ("bench", "passed", 0.0, 1.0, None, "passed")]  # fmt: skip
    assert query(store, "SELECT count(*) FROM skills") == [(12,)]  # FLASK's, shared
    assert latest(store) == {
        ("a", "m1", "bench-judge", "fluency"): 2.5, ("a", "m1", "bench-judge", "passed"): 0.0,
        ("b", "m1", "bench-judge", "passed"): 1.0, ("b", "m1", "bench-judge", "fluency"): 3.0,
        ("a", "m2", "bench-judge", "overall"): 9.5, ("b", "m2", "bench-judge", "overall"): 1.0,
        ("b", "m2", "bench-judge", "readability"): 5.0,
    }  # fmt: skip
    assert any("new custom criterion 'overall', scale 1-10 (from --scale)" in n
               for n in report.notes)  # fmt: skip
    # A later file may use the criteria without restating their scales: the store has them.
    later = write_csv(tmp_path / "later.csv", ["instance_id", "model", "skill", "score"],
                      [("c", "m1", "fluency", "1.5"), ("c", "m1", "overall", "10")])  # fmt: skip
    import_scores(store, later, judge="bench-judge", dataset="bench")
    assert latest(store, "bench")[("c", "m1", "bench-judge", "overall")] == 10.0
    assert query(store, "SELECT count(*) FROM criteria") == [(3,)]


def test_reimporting_the_same_file_changes_nothing(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    path = write_format(tmp_path, "csv")
    import_scores(store, path)
    before = snapshot(store)
    report = import_scores(store, path)
    assert report.already_imported_runs == 2
    assert snapshot(store) == before
    assert counts(store)["scores"] == 7


def test_a_new_file_for_the_same_judge_supersedes_and_keeps_history(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    cols = ["instance_id", "model", "skill", "score"]
    first = write_csv(tmp_path / "v1.csv", cols, [("q1", "m1", "correctness", "2"),
                                                  ("q1", "m1", "readability", "3"),
                                                  ("q2", "m1", "factuality", "4")])  # fmt: skip
    second = write_csv(tmp_path / "v2.csv", cols, [("q1", "m1", "correctness", "5"),
                                                   ("q1", "m1", "readability", "N/A")])  # fmt: skip
    import_scores(store, first, judge="rater", kind="human", dataset="study")
    import_scores(store, second, judge="rater", kind="human", dataset="study")
    assert latest(store, "study") == {
        ("q1", "m1", "rater", "correctness"): 5.0,
        ("q1", "m1", "rater", "readability"): None,
        ("q2", "m1", "rater", "factuality"): 4.0,  # not in v2: v1's score stays current
    }
    history = query(store, "SELECT skill, score, superseded FROM scores WHERE instance_id = 'q1'"
                     " ORDER BY skill, superseded DESC")  # fmt: skip
    assert history == [("correctness", 2.0, True), ("correctness", 5.0, False),
                       ("readability", 3.0, True), ("readability", None, False)]  # fmt: skip
    assert query(store, "SELECT count(*) FROM runs WHERE judge = 'rater'") == [(2,)]


@pytest.fixture
def mini_flask_store(tmp_path) -> Store:
    store = Store(tmp_path / "flask.duckdb")
    import_flask(store, str(build_flask(tmp_path / "FLASK")))
    return store


def test_human_scores_on_flask_instances_keep_the_instruction(tmp_path, mini_flask_store):
    store = mini_flask_store
    sql = (
        "SELECT instance_id, instruction, reference, difficulty, domains, skills, flask_hard "
        "FROM instances WHERE dataset = 'flask' ORDER BY 1"
    )
    before = query(store, sql)
    title = query(store, "SELECT title, source FROM datasets WHERE dataset = 'flask'")
    path = write_csv(tmp_path / "humans.csv", ["instance_id", "model", "judge", "skill", "score"], [
        ("1", "alpaca", "rater-1", "Factuality", "4"),
        ("1", "alpaca", "rater-2", "Factuality", "5"),
        ("2", "vicuna", "rater-1", "Logical Robustness", "2"),
    ])  # fmt: skip
    report = import_scores(store, path, kind="human", dataset="flask")
    assert (
        query(store, sql) == before
    )  # nothing blanked, nothing added (these skills were already listed)
    assert query(store, "SELECT title, source FROM datasets WHERE dataset = 'flask'") == title
    assert report.counts["instances"] == 2
    assert query(store, "SELECT judge, kind FROM judges ORDER BY 1") == [
        ("gpt-4 (FLASK review)", "llm"), ("rater-1", "human"), ("rater-2", "human")]  # fmt: skip
    # The GPT-4 review scores of the same instances are untouched (another judge).
    assert query(store, "SELECT count(*) FROM latest_scores WHERE judge = 'gpt-4 (FLASK review)'"
                 ) == [(36,)]  # fmt: skip


def test_human_scores_on_the_real_flask_set(tmp_path, flask_store):
    """The same on the real benchmark: instructions of real instances survive a score import."""
    sql = "SELECT instruction, reference, skills FROM instances WHERE dataset='flask' AND "
    sql += "instance_id = ?"
    before = query(flask_store, sql, ["17"])
    skill = before[0][2][0]
    path = write_csv(tmp_path / "h.csv", ["instance_id", "model", "skill", "score", "kind"],
                     [("17", "gpt4", skill, "4", "human")])  # fmt: skip
    import_scores(flask_store, path, judge="annotator", dataset="flask")
    assert query(flask_store, sql, ["17"]) == before
    assert query(flask_store, "SELECT score FROM latest_scores WHERE judge='annotator'") == [(4.0,)]


def test_instances_and_responses_come_with_the_scores(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"instance_id": 7, "model": "m1", "judge": "j", "skill": "completeness", "score": 3,
         "instruction": "List three primes.", "reference": "2, 3, 5", "response": "2, 3, 5",
         "domain": ["Math", "coding"], "difficulty": "major level knowledge",
         "source_task": "GSM8K"},
        {"instance_id": 7, "model": "m1", "judge": "j", "skill": "conciseness", "score": 5,
         "instruction": "List three primes.", "domain": "Math; Coding", "difficulty": 4},
        {"instance_id": 8, "model": "m2", "judge": "j", "skill": "harmlessness", "score": None,
         "instruction": "Say hi.", "response": "Hi!", "difficulty": -1},
    ]) + "\n")  # fmt: skip
    store = Store(tmp_path / "s.duckdb")
    import_scores(store, path, dataset="primes")
    assert query(store, "SELECT instance_id, instruction, reference, source_task, difficulty, "
                 "domains, skills, flask_hard FROM instances ORDER BY 1") == [
        ("7", "List three primes.", "2, 3, 5", "GSM8K", 4, ["Math", "Coding"],
         ["completeness", "conciseness"], False),
        ("8", "Say hi.", None, None, None, [], ["harmlessness"], False),
    ]  # fmt: skip
    assert query(store, "SELECT instance_id, model, text, length FROM responses ORDER BY 1") == [
        ("7", "m1", "2, 3, 5", 7), ("8", "m2", "Hi!", 3)]  # fmt: skip


def test_lenient_mode_lists_every_skipped_row(tmp_path):
    path = write_csv(tmp_path / "mixed.csv", ["instance_id", "model", "judge", "skill", "score"], [
        ("q1", "m1", "j", "correctness", "4"),      # line 2: ok
        ("q1", "m1", "j", "readability", "great"),  # line 3: not a number
        ("q2", "m1", "j", "corectness", "3"),       # line 4: unknown skill
        ("q3", "m1", "j", "factuality", "7"),       # line 5: outside 1-5
        ("", "m1", "j", "factuality", "2"),         # line 6: no instance id
        ("q4", "m1", "j", "factuality", "2.5"),     # line 7: ok
        ("q1", "m1", "j", "correctness", "1"),      # line 8: conflicts with line 2
    ])  # fmt: skip
    store = Store(tmp_path / "s.duckdb")
    report = import_scores(store, path, lenient=True)
    skipped = [(s.line, s.field) for s in report.skipped]
    assert skipped == [(3, "score"), (4, "skill"), (5, "score"), (6, "instance_id"),
                       (8, "score")]  # fmt: skip
    assert all(s.file == str(path) for s in report.skipped)
    assert "did you mean 'correctness'" in report.skipped[1].problem
    assert "line 2" in report.skipped[4].problem
    assert latest(store) == {("q1", "m1", "j", "correctness"): 4.0,
                             ("q4", "m1", "j", "factuality"): 2.5}  # fmt: skip
    text = "\n".join(report.lines())
    assert "skipped 5 bad row(s)" in text and f"{path}, line 5, field 'score'" in text


def test_lenient_jsonl_skips_unreadable_lines(tmp_path):
    path = tmp_path / "s.jsonl"
    good = {"instance_id": 1, "model": "m", "judge": "j", "skill": "factuality", "score": 3}
    path.write_text(json.dumps(good) + "\n" + '{"instance_id": 2, "model": "m", "ju\n'
                    + json.dumps({**good, "instance_id": 3}) + "\n[1, 2]\n")  # fmt: skip
    report = import_scores(Store(tmp_path / "s.duckdb"), path, lenient=True)
    assert [(s.line, s.field) for s in report.skipped] == [(2, None), (4, None)]
    assert report.counts["scores"] == 2


def test_parquet_rows_are_named_rows(tmp_path):
    frame = pd.DataFrame({"instance_id": ["a", "b"], "model": ["m", "m"],
                          "skill": ["factuality"] * 2, "score": ["3", "lots"]})  # fmt: skip
    path = tmp_path / "p.parquet"
    frame.to_parquet(path)
    report = import_scores(Store(tmp_path / "s.duckdb"), path, judge="j", lenient=True)
    assert str(report.skipped[0]).startswith(f"{path}, row 2, field 'score'")


def test_quoted_line_breaks_keep_physical_line_numbers(tmp_path):
    path = tmp_path / "multi.csv"
    path.write_text('instance_id,model,judge,skill,score,instruction\n'
                    'a,m,j,factuality,3,"two\nlines"\n'
                    'b,m,j,factuality,4,plain\n'
                    'c,m,j,factuality,9,plain\n')  # fmt: skip
    with pytest.raises(InputError) as e:
        import_scores(Store(tmp_path / "s.duckdb"), path)
    assert (e.value.line, e.value.field) == (5, "score")
    batch = parse_score_file(path, lenient=True)
    assert batch.instances["instruction"].tolist() == ["two\nlines", "plain"]


def test_the_cli_imports_and_reports(tmp_path, capsys):
    db = tmp_path / "cli.duckdb"
    path = write_csv(tmp_path / "cli.csv", ["instance_id", "model", "skill", "score"],
                     [("x", "m", "helpfulness", "8.5"), ("y", "m", "helpfulness", "")])  # fmt: skip
    code = main(["import-scores", str(path), "--judge", "j", "--kind", "human",
                 "--scale", "1-10", "--db", str(db)])  # fmt: skip
    assert code == 0
    assert "scores: 2" in capsys.readouterr().out
    assert latest(Store(db)) == {("x", "m", "j", "helpfulness"): 8.5,
                                 ("y", "m", "j", "helpfulness"): None}  # fmt: skip
    bad = write_csv(tmp_path / "bad.csv", ["instance_id", "model", "skill", "score"],
                    [("x", "m", "helpfulness", "11")])  # fmt: skip
    assert main(["import-scores", str(bad), "--judge", "j", "--dataset", "cli",
                 "--db", str(db)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert f"{bad}, line 2, field 'score'" in err and "1-10" in err


def test_parse_is_pure_and_scores_are_floats(tmp_path):
    batch = parse_score_file(write_format(tmp_path, "jsonl"))
    assert batch.mode == "merge" and len(batch.runs) == 2
    values = [v for v in batch.scores["score"]]
    assert sum(math.isnan(v) for v in values) == 3
    assert {r.run_id for r in batch.runs} == set(batch.scores["run_id"])


# --------------------------------------------------------------------- --out-of-scale

REPO = Path(__file__).resolve().parents[2]
OOS_COLS = ["instance_id", "model", "judge", "skill", "score", "scale_min", "scale_max"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def _oos_rows() -> tuple[list[tuple], list[int]]:
    """8 instances x 2 models x (readability, FLASK 1-5; clarity, own 1-3), judge "rater".
    12 responses have one score outside its scale (-1 or 0: "not rated"), the other one not;
    returns the rows and the positions of the out-of-scale ones."""
    rows, bad = [], []
    for i in range(8):
        for m in ("m1", "m2"):
            k = 2 * i + (m == "m2")
            read = 1 + (i + k) % 5
            clar = 1 + (3 * i + k) % 3
            if k < 12 and k % 2 == 0:
                read = -1
            elif k < 12:
                clar = 0
            for skill, v, lo, hi in (("readability", read, "", ""), ("clarity", clar, 1, 3)):
                if (skill == "readability" and v == -1) or (skill == "clarity" and v == 0):
                    bad.append(len(rows))
                rows.append((f"q{i}", m, "rater", skill, v, lo, hi))
    return rows, bad


def test_out_of_scale_na_keeps_the_rest_identical(tmp_path):
    rows, bad = _oos_rows()
    full = write_csv(tmp_path / "full.csv", OOS_COLS, rows)
    kept = [r for p, r in enumerate(rows) if p not in bad]
    cut = write_csv(tmp_path / "cut.csv", OOS_COLS, kept)
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    out = cli("import-scores", str(full), "--dataset", "d", "--out-of-scale", "na", "--db", str(a))
    assert out.returncode == 0, out.stderr
    assert cli("import-scores", str(cut), "--dataset", "d", "--db", str(b)).returncode == 0
    # The report: how many, then the first 10 in file order (line = position + 2).
    assert "scores outside their scale stored as N/A (--out-of-scale na): 12; the first 10:" in (
        out.stdout
    )
    for p in bad[:10]:
        v, skill, scale = rows[p][4], rows[p][3], "1-5" if rows[p][3] == "readability" else "1-3"
        line = f"{full}, line {p + 2}, field 'score': {v} is outside the scale {scale} of '{skill}'"
        assert f"{line}: stored as N/A" in out.stdout
    assert f"line {bad[10] + 2}," not in out.stdout
    assert "N/A scores: 12" in out.stdout and "scores: 32" in out.stdout
    # Every other value equals the import of the file without those rows; they are N/A.
    na = {rows[p][:2] + ("rater", rows[p][3]) for p in bad}
    got_a, got_b = latest(Store(a)), latest(Store(b))
    assert {k: v for k, v in got_a.items() if k not in na} == got_b
    assert {k: got_a[k] for k in na} == dict.fromkeys(na)
    # (An instance lists its skills in the order the file first names them: compare as sets.)
    tables = {t: f"SELECT * FROM {t} ORDER BY ALL" for t in ("responses", "judges", "criteria")} | {
        "instances": "SELECT * REPLACE (list_sort(skills) AS skills) FROM instances ORDER BY ALL"
    }
    for sql in tables.values():
        assert query(Store(a), sql) == query(Store(b), sql)
    judged = "SELECT dataset, instance_id, model, judge FROM judgments ORDER BY ALL"
    assert query(Store(a), judged) == query(Store(b), judged)
    # N/A is not a score: the means and their n are those of the file without the rows.
    cells = radar.radar_data(Store(a), Filters("d", "rater")).table
    ref = radar.radar_data(Store(b), Filters("d", "rater")).table
    assert cells[["model", "axis", "mean", "n"]].equals(ref[["model", "axis", "mean", "n"]])
    assert cells["n_na"].sum() == 12 and ref["n_na"].sum() == 0


def test_out_of_scale_error_and_lenient_through_the_cli(tmp_path):
    rows, bad = _oos_rows()
    full = write_csv(tmp_path / "full.csv", OOS_COLS, rows)
    db = tmp_path / "s.duckdb"
    seed = write_csv(tmp_path / "seed.csv", OOS_COLS, [("q0", "m1", "rater", "clarity", 2, 1, 3)])
    assert cli("import-scores", str(seed), "--dataset", "d", "--db", str(db)).returncode == 0
    before = snapshot(Store(db))
    out = cli("import-scores", str(full), "--dataset", "d", "--db", str(db))  # default: error
    assert out.returncode == 2 and "Traceback" not in out.stderr
    first = f"{full}, line {bad[0] + 2}, field 'score': score -1 is outside the scale 1-5 of "
    assert first + "'readability'" in out.stderr and "--out-of-scale na" in out.stderr
    assert snapshot(Store(db)) == before
    # --lenient: every skipped row is printed, not only a count.
    out = cli("import-scores", str(full), "--dataset", "d", "--lenient", "--db", str(db))
    assert out.returncode == 0, out.stderr
    assert "skipped 12 bad row(s) (--lenient):" in out.stdout
    for p in bad:
        assert f"{full}, line {p + 2}, field 'score': score {rows[p][4]} is outside" in out.stdout
    assert query(Store(db), "SELECT count(*) FROM latest_scores") == [(32 - 12,)]


def test_out_of_scale_na_with_lenient_and_parquet_rows(tmp_path):
    frame = pd.DataFrame({
        "instance_id": ["a", "b", "c", "d"], "model": ["m"] * 4,
        "skill": ["factuality", "factuality", "factuality", "factuality"],
        "score": ["-1", "lots", "4", "0"],
    })  # fmt: skip
    path = tmp_path / "p.parquet"
    frame.to_parquet(path)
    report = import_scores(Store(tmp_path / "s.duckdb"), path, judge="j", lenient=True,
                           out_of_scale="na")  # fmt: skip
    assert [str(r) for r in report.as_na] == [
        f"{path}, row 1, field 'score': -1 is outside the scale 1-5 of 'factuality': stored as N/A",
        f"{path}, row 4, field 'score': 0 is outside the scale 1-5 of 'factuality': stored as N/A",
    ]  # fmt: skip
    assert report.n_as_na == 2 and [(s.line, s.field) for s in report.skipped] == [(2, "score")]
    assert latest(Store(tmp_path / "s.duckdb")) == {
        ("a", "m", "j", "factuality"): None, ("c", "m", "j", "factuality"): 4.0,
        ("d", "m", "j", "factuality"): None,
    }  # fmt: skip
    text = "\n".join(report.lines())
    assert "stored as N/A (--out-of-scale na): 2:" in text and "skipped 1 bad row(s)" in text
    with pytest.raises(InputError, match="expected error or na"):
        parse_score_file(path, judge="j", out_of_scale="drop")
